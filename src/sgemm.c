/*
 * The framework of every SGEMM: reference quick returns, the choice between
 * GPU and CPU, the CPU fallback when the GPU fails, and accounting.
 */
#include <stdatomic.h>
#include <time.h>

#include "internal.h"

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static unsigned resident_operands(const tb_call *call, int reads_ab)
{
    if (!tb_process_has_cuda())
        return 0;
    unsigned mask = 0;
    if (reads_ab && tb_gpu_mem_kind(call->a) == TB_MEM_DEVICE)
        mask |= TB_RESIDENT_A;
    if (reads_ab && tb_gpu_mem_kind(call->b) == TB_MEM_DEVICE)
        mask |= TB_RESIDENT_B;
    if (tb_gpu_mem_kind(call->c) == TB_MEM_DEVICE)
        mask |= TB_RESIDENT_C;
    return mask;
}

/*
 * Auto mode on host operands: NULL when the GPU should win, else why not.
 * Small calls lose to launch and setup costs; skinny ones (few flops per byte
 * that must cross the bus) lose to the copies.
 */
static const char *cpu_wins(const tb_call *call, const tb_config *config)
{
    const double m = call->m, n = call->n, k = call->k;
    const double flops = 2.0 * m * n * k;
    const double bytes = 4.0 * (m * k + k * n + m * n * (call->beta != 0.0f ? 2.0 : 1.0));
    if (flops < config->gpu_min_flops)
        return "small";
    if (flops < config->gpu_min_intensity * bytes)
        return "skinny";
    return NULL;
}

void tb_sgemm(const tb_call *call, const tb_origin *origin)
{
    const double start = seconds_now();
    const tb_config *config = tb_config_get();
    if (call->m == 0 || call->n == 0) {
        tb_report_call(origin, 0, "empty", 0.0);
        return;
    }
    /* Reference rule: alpha == 0 or K == 0 only scales C; A and B are not read. */
    const int reads_ab = call->alpha != 0.0f && call->k > 0;
    const unsigned resident = resident_operands(call, reads_ab);

    const char *reason;
    int use_gpu;
    if (resident) {
        /* The CPU BLAS cannot read device memory: these always run on the GPU. */
        use_gpu = 1;
        reason = "device-pointers";
    } else if (!reads_ab) {
        tb_scale_c_host(call);
        tb_report_call(origin, 0, "scale-only", seconds_now() - start);
        return;
    } else if (config->device == TB_DEVICE_CPU) {
        use_gpu = 0;
        reason = "forced";
    } else if (config->device == TB_DEVICE_GPU) {
        use_gpu = tb_gpu_usable();
        reason = use_gpu ? "forced" : "no-gpu";
        if (!use_gpu)
            TB_WARN_ONCE("TILEDBLAS_DEVICE=gpu but no usable GPU (%s); using the CPU BLAS",
                         tb_gpu_unusable_reason());
    } else if ((reason = cpu_wins(call, config))) {
        use_gpu = 0;
    } else {
        use_gpu = tb_gpu_usable();
        reason = use_gpu ? "large" : "no-gpu";
    }

    tb_call rest = *call; /* what the CPU still has to compute */
    if (use_gpu) {
        int done_cols = 0;
        const tb_gpu_status status = tb_gpu_sgemm(call, resident, config->kernel, &done_cols);
        if (status == TB_GPU_OK) {
            tb_report_call(origin, 1, reason, seconds_now() - start);
            return;
        }
        if (resident) {
            tb_warn("SGEMM on device-resident operands failed on the GPU; C was not updated");
            return;
        }
        reason = status == TB_GPU_NO_MEMORY ? "too-large" : "cuda-error";
        /* Columns the GPU finished are final; the CPU takes the others. */
        rest.n -= done_cols;
        rest.b += call->trans_b ? done_cols : (int64_t)done_cols * call->ldb;
        rest.c += (int64_t)done_cols * call->ldc;
    }
    if (rest.n > 0)
        tb_cpu_sgemm(&rest);
    tb_report_call(origin, 0, reason, seconds_now() - start);
}
