/* Warnings, the per-call trace (TILEDBLAS_VERBOSE=2) and the exit summary (>= 1). */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

static struct {
    pthread_mutex_t lock;
    unsigned long calls[2]; /* [0] cpu, [1] gpu */
    double gflop[2];
} totals = {.lock = PTHREAD_MUTEX_INITIALIZER};

void tb_warn(const char *fmt, ...)
{
    char line[512];
    va_list args;
    va_start(args, fmt);
    vsnprintf(line, sizeof line, fmt, args);
    va_end(args);
    /* One fprintf so that lines from concurrent threads do not interleave. */
    fprintf(stderr, "tiledblas: warning: %s\n", line);
}

void tb_account_call(const tb_call *call, const tb_origin *origin, int on_gpu, const char *reason, double start,
                     int verbose)
{
    const double gflop = 2e-9 * call->m * call->n * call->k;
    pthread_mutex_lock(&totals.lock);
    totals.calls[on_gpu]++;
    totals.gflop[on_gpu] += gflop;
    pthread_mutex_unlock(&totals.lock);
    if (verbose < 2)
        return;
    const double seconds = tb_seconds_now() - start;
    const int swapped = origin->row_major;
    const int trans_a = swapped ? call->trans_b : call->trans_a, trans_b = swapped ? call->trans_a : call->trans_b;
    /* ConjTrans shows as 'T' (real data). */
    fprintf(stderr,
            "tiledblas: sgemm api=%s layout=%s trans=%c%c M=%d N=%d K=%d path=%s reason=%s "
            "time=%.3fms %.2f GFLOP/s\n",
            origin->api, swapped ? "row" : "col", trans_a ? 'T' : 'N', trans_b ? 'T' : 'N',
            swapped ? call->n : call->m, swapped ? call->m : call->n, call->k, on_gpu ? "gpu" : "cpu", reason,
            seconds * 1e3, seconds > 0 ? gflop / seconds : 0.0);
}

static void print_crossover_class(const char *text)
{
    fprintf(stderr, "tiledblas: near the crossover: %s\n", text);
}

__attribute__((destructor)) static void print_summary(void)
{
    if (tb_config_get()->verbose < 1)
        return;
    /* The backend is named only once a call has resolved it: exit must not load a BLAS. */
    const char *backend = tb_cpu_backend_if_resolved();
    char costs[256];
    const int measured = tb_cost_model_describe(costs, sizeof costs);
    fprintf(stderr, "tiledblas: summary: gpu %lu calls %.3f GFLOP, cpu %lu calls %.3f GFLOP%s%s%s%s\n",
            totals.calls[1], totals.gflop[1], totals.calls[0], totals.gflop[0],
            backend ? ", cpu backend " : "", backend ? backend : "", measured ? ", cost model: " : "",
            measured ? costs : "");
    if (measured)
        tb_auto_describe_classes(print_crossover_class);
}
