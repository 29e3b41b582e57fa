/* Warnings, the per-call trace (TILEDBLAS_VERBOSE=2) and the totals the exit summary prints (>= 1). */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

#include "core/report.h"

/*
 * Lock-free, so that a child forked while another thread was accounting a
 * call can account its own: a lock held at the fork would stay held there.
 * The totals are the process's own: a forked child starts from none.
 */
static struct {
    atomic_ulong calls[2]; /* [0] cpu, [1] gpu */
    _Atomic double gflop[2];
} totals;
static pthread_once_t fork_handler_once = PTHREAD_ONCE_INIT;

static void clear_in_child(void)
{
    for (int i = 0; i < 2; i++) {
        atomic_store(&totals.calls[i], 0);
        atomic_store(&totals.gflop[i], 0.0);
    }
}

/* Registered with the first call accounted: until then the totals are empty anyway. */
static void register_fork_handler(void)
{
    pthread_atfork(NULL, NULL, clear_in_child);
}

static void add(_Atomic double *sum, double x)
{
    double old = atomic_load_explicit(sum, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(sum, &old, old + x, memory_order_relaxed, memory_order_relaxed))
        ;
}

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

void tb_account_call(const tb_call *call, const tb_origin *origin, int on_gpu, int tensor, const char *reason,
                     double start, int verbose)
{
    const double gflop = 2e-9 * call->m * call->n * call->k;
    pthread_once(&fork_handler_once, register_fork_handler);
    atomic_fetch_add_explicit(&totals.calls[on_gpu], 1, memory_order_relaxed);
    add(&totals.gflop[on_gpu], gflop);
    if (verbose < 2)
        return;
    const double seconds = tb_seconds_now() - start;
    const int swapped = origin->row_major;
    const int trans_a = swapped ? call->trans_b : call->trans_a, trans_b = swapped ? call->trans_a : call->trans_b;
    /* ConjTrans shows as 'T' (real data). */
    fprintf(stderr,
            "tiledblas: sgemm api=%s layout=%s trans=%c%c M=%d N=%d K=%d path=%s reason=%s math=%s "
            "time=%.3fms %.2f GFLOP/s\n",
            origin->api, swapped ? "row" : "col", trans_a ? 'T' : 'N', trans_b ? 'T' : 'N',
            swapped ? call->n : call->m, swapped ? call->m : call->n, call->k, on_gpu ? "gpu" : "cpu", reason,
            on_gpu && tensor ? "tensor" : "fp32", seconds * 1e3, seconds > 0 ? gflop / seconds : 0.0);
}

tb_totals tb_report_totals(void)
{
    return (tb_totals){{atomic_load(&totals.calls[0]), atomic_load(&totals.calls[1])},
                       {atomic_load(&totals.gflop[0]), atomic_load(&totals.gflop[1])}};
}
