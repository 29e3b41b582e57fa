/* Warnings, the per-call trace (TILEDBLAS_VERBOSE=2) and the totals the exit summary prints (>= 1). */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include "core/report.h"

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

/* Read without the lock: at exit, in a child forked while another thread held it, it stays held. */
tb_totals tb_report_totals(void)
{
    return (tb_totals){{totals.calls[0], totals.calls[1]}, {totals.gflop[0], totals.gflop[1]}};
}
