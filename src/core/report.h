/* Warnings, and the accounting behind the per-call trace and the exit summary. */
#ifndef TILEDBLAS_CORE_REPORT_H
#define TILEDBLAS_CORE_REPORT_H

#include <stdatomic.h>

#include "core/call.h"
#include "core/config.h"

/* One line on stderr, "tiledblas: warning: ...". */
void tb_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints a warning the first time the enclosing call site is reached. */
#define TB_WARN_ONCE(...)                                       \
    do {                                                        \
        static atomic_flag tb_warned_ = ATOMIC_FLAG_INIT;       \
        if (!atomic_flag_test_and_set(&tb_warned_))             \
            tb_warn(__VA_ARGS__);                               \
    } while (0)

/*
 * Accounts the call and, at TILEDBLAS_VERBOSE=2, prints its trace line (start: the clock then;
 * tensor: the GPU computed it on the tensor cores, else in FP32).
 */
void tb_account_call(const tb_call *call, const tb_origin *origin, int on_gpu, int tensor, const char *reason,
                     double start, int verbose);
/* tb_account_call at TILEDBLAS_VERBOSE >= 1; inline, so that a silent call pays one comparison. */
static inline void tb_report_call(const tb_config *config, const tb_call *call, const tb_origin *origin, int on_gpu,
                                  int tensor, const char *reason, double start)
{
    if (config->verbose > 0)
        tb_account_call(call, origin, on_gpu, tensor, reason, start, config->verbose);
}

/* The calls this process accounted so far (a forked child: since the fork) and their GFLOP, per path:
 * [0] CPU, [1] GPU. */
typedef struct {
    unsigned long calls[2];
    double gflop[2];
} tb_totals;
tb_totals tb_report_totals(void);

#endif /* TILEDBLAS_CORE_REPORT_H */
