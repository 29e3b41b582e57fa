/*
 * The framework of every SGEMM: reference quick returns, the choice between
 * GPU and CPU, the CPU fallback when the GPU fails, and accounting.
 */
#include <stdatomic.h>

#include "core/config.h"
#include "core/report.h"
#include "cpu/cpu_blas.h"
#include "dispatch/cost_model.h"
#include "dispatch/host_ranges.h"
#include "dispatch/residency.h"
#include "dispatch/sgemm.h"
#include "dispatch/small_call.h"
#include "dispatch/tiny_gate.h"
#include "gpu/gpu.h"

/*
 * The common tiny call: silent, not forced to the GPU, below the GPU floor,
 * reading and writing memory certainly on the host. The general path below
 * would send it to the CPU BLAS too, but its frame and branches take a third
 * of our time on a call a fast CPU BLAS does in ~130 ns (16^3).
 */
static int straight_to_cpu(const tb_config *config, const tb_call *call)
{
    if (config->verbose > 0 || !tb_small_call(call->m, call->n, call->k, call->alpha, config->gpu_min_flops,
                                              atomic_load_explicit(&config->device, memory_order_relaxed)))
        return 0;
    tb_certain_host host;
    tb_certain_host_ranges(&host);
    return tb_is_certain_host(&host, call->a, tb_span_a(call)) &&
           tb_is_certain_host(&host, call->b, tb_span_b(call)) && tb_is_certain_host(&host, call->c, tb_span_c(call));
}

/*
 * The call on the GPU, what it left finished on the CPU where C allows: 1 when C is complete (*on_gpu says
 * where, *reason why the CPU took part), 0 when the call ends here, unreported.
 */
static int run_on_gpu(const tb_call *call, const tb_residency *where, unsigned resident, int after_exit,
                      int *on_gpu, int *tensor, const char **reason)
{
    tb_gpu_progress done;
    const tb_gpu_status status = resident && where->device != tb_gpu_device()
                                     ? tb_gpu_sgemm_on(where->device, call, resident, &done)
                                     : tb_gpu_sgemm(call, resident, where->pinned, &done);
    *on_gpu = status == TB_GPU_OK;
    *tensor = done.tensor;
    /* CUDA shut down under the call of a thread the exiting one races, or the exit refused it a lane: the
     * call ends here, neither computed on the CPU (whose BLAS the exit may be tearing down) nor reported. */
    if (status == TB_GPU_SHUTDOWN && !after_exit)
        return 0;
    /* What the GPU left is done on the CPU only where C holds nothing it cannot account for, and the
     * CPU can read every operand: managed ones while the context lives. */
    if (!*on_gpu && (done.c_unknown || (resident && !(where->cpu_readable && status != TB_GPU_FAILED &&
                                                      status != TB_GPU_SHUTDOWN)))) {
        tb_warn("SGEMM on device-resident operands failed on the GPU (%s); C %s",
                status == TB_GPU_FAILED     ? tb_gpu_refusal(where->device)
                : status == TB_GPU_SHUTDOWN ? "CUDA is shutting down with the process"
                                            : "the GPU stays in use",
                done.c_unknown || done.c_written ? "may hold part of the product" : "was not updated");
        return 0;
    }
    if (!*on_gpu) {
        *reason = status == TB_GPU_NO_MEMORY ? "too-large" : "cuda-error";
        /* What the GPU finished is final; the CPU takes the rest of its row block and the rows below. */
        const int64_t block_end = done.rows_done + done.block_rows;
        const tb_call rest_of_block =
            tb_call_block(call, done.rows_done, done.block_rows, done.cols_done, call->n - done.cols_done);
        const tb_call rows_below = tb_call_block(call, block_end, call->m - block_end, 0, call->n);
        if (rest_of_block.m > 0 && rest_of_block.n > 0)
            tb_cpu_sgemm(&rest_of_block);
        if (rows_below.m > 0)
            tb_cpu_sgemm(&rows_below);
    }
    return 1;
}

/* Every other call; not inlined, so that the tiny call's path does not set up this one's frame. */
static __attribute__((noinline)) void sgemm_general(const tb_config *config, const tb_call *call,
                                                    const tb_origin *origin)
{
    const double start = config->verbose >= 2 ? tb_seconds_now() : 0.0;
    if (call->m == 0 || call->n == 0) {
        tb_report_call(config, call, origin, 0, 0, "empty", start);
        return;
    }
    /* Reference rule: alpha == 0 or K == 0 only scales C; A and B are not read. */
    const int reads_ab = call->alpha != 0.0f && call->k > 0;
    const int below_floor = tb_below_gpu_floor(call->m, call->n, call->k, config->gpu_min_flops);
    const tb_residency where = tb_find_residency(call, reads_ab, below_floor);
    /* A call the exiting thread makes from an exit handler run after the GPU path's own (one registered
     * before CUDA started, a static destructor) finds CUDA shut down or about to be: on host memory it
     * runs on the CPU BLAS, on GPU memory (managed included, which may be gone) once shutdown was seen
     * it is refused. */
    const int after_exit = tb_fault_exiting_here();
    const int cuda_gone = after_exit && tb_fault_shutting_down();
    const int in_place = where.mask && !cuda_gone && tb_gpu_usable() && tb_gpu_device_usable(where.device);
    if (where.mask && !in_place && (cuda_gone || !where.cpu_readable)) {
        tb_warn("operands in device memory that the GPU path cannot use (%s); C was not updated",
                cuda_gone ? "CUDA is shutting down with the process" : tb_gpu_refusal(where.device));
        return;
    }
    /* Managed memory the GPU path cannot use in place is read by the CPU like host memory. */
    const unsigned resident = in_place ? where.mask : 0;

    const char *reason;
    int use_gpu;
    tiledblas_device device;
    tb_auto_choice choice = {.measure_class = -1};
    if (resident) {
        /* The CPU BLAS cannot read device memory: these always run on the GPU. */
        use_gpu = 1;
        reason = "device-pointers";
    } else if (!reads_ab) {
        tb_scale_c_host(call);
        tb_report_call(config, call, origin, 0, 0, "scale-only", start);
        return;
    } else if (after_exit) {
        use_gpu = 0;
        reason = "exiting";
    } else if ((device = atomic_load(&config->device)) == TILEDBLAS_DEVICE_CPU) {
        use_gpu = 0;
        reason = "forced";
    } else if (device == TILEDBLAS_DEVICE_GPU) {
        use_gpu = tb_gpu_usable();
        reason = use_gpu ? "forced" : "no-gpu";
        if (!use_gpu)
            TB_WARN_ONCE("the GPU path is forced (TILEDBLAS_DEVICE=gpu or tiledblas_set_device) but no GPU "
                         "is usable (%s); using the CPU BLAS",
                         tb_gpu_unusable_reason());
    } else if (tb_small_call(call->m, call->n, call->k, call->alpha, config->gpu_min_flops, device)) {
        use_gpu = 0; /* never pays for the GPU: no model, and CUDA is not started */
        reason = "small";
    } else {
        choice = tb_auto_choose(call);
        use_gpu = choice.use_gpu;
        reason = choice.reason;
    }
    const double measure_start = choice.measure_class >= 0 ? tb_seconds_now() : 0.0;

    int on_gpu = 0, tensor = 0;
    if (use_gpu) {
        /* Counted from here to the end of any fallback, which may read managed memory: the exit waits for
         * it before CUDA's teardown. Refused, the process is exiting and the call ends, as below. */
        if (!tb_fault_enter())
            return;
        const int finished = run_on_gpu(call, &where, resident, after_exit, &on_gpu, &tensor, &reason);
        tb_fault_leave();
        if (!finished)
            return;
    } else {
        tb_cpu_sgemm(call);
    }
    /* A failed GPU call counts against the GPU, fallback included: its class turns away. */
    if (choice.measure_class >= 0)
        tb_auto_measured(&choice, measure_start, use_gpu && !on_gpu);
    tb_report_call(config, call, origin, on_gpu, tensor, reason, start);
}

void tb_sgemm(const tb_call *call, const tb_origin *origin)
{
    const tb_config *config = tb_config_get();
    if (straight_to_cpu(config, call)) {
        tb_cpu_sgemm(call);
        if (!atomic_load_explicit(&tb_tiny.open, memory_order_relaxed))
            tb_tiny_gate_open(config);
    } else {
        sgemm_general(config, call, origin);
    }
}
