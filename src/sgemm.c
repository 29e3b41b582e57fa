/*
 * The framework of every SGEMM: reference quick returns, the choice between
 * GPU and CPU, the CPU fallback when the GPU fails, and accounting.
 */
#include <stdatomic.h>

#include "internal.h"

/* Operands in device or managed memory, which the GPU path uses in place, and pinned ones. */
typedef struct {
    unsigned mask;    /* TB_RESIDENT_* bits */
    unsigned pinned;  /* TB_RESIDENT_* bits of operands in pinned host memory */
    int cpu_readable; /* all managed (or none resident): the CPU BLAS can still read them */
    int device;       /* their device; -1 none, -2 several */
} residency;

static size_t span_a(const tb_call *call)
{
    return call->trans_a ? tb_span_bytes(call->k, call->m, call->lda) : tb_span_bytes(call->m, call->k, call->lda);
}

static size_t span_b(const tb_call *call)
{
    return call->trans_b ? tb_span_bytes(call->n, call->k, call->ldb) : tb_span_bytes(call->k, call->n, call->ldb);
}

static size_t span_c(const tb_call *call)
{
    return tb_span_bytes(call->m, call->n, call->ldc);
}

static int is_small(const tb_config *config, const tb_call *call)
{
    return tb_below_gpu_floor(call->m, call->n, call->k, config->gpu_min_flops);
}

/*
 * small: the call is below the GPU floor, so whether its operands are pinned
 * cannot matter, and those in memory certainly on the host (host_ranges.c)
 * need no question to the driver (about 0.3 us each, as much as a whole 16^3
 * SGEMM on the CPU).
 */
static residency find_residency(const tb_call *call, int reads_ab, int small)
{
    residency where = {0, 0, 1, -1};
    const float *operands[3] = {reads_ab ? call->a : NULL, reads_ab ? call->b : NULL, call->c};
    const unsigned bits[3] = {TB_RESIDENT_A, TB_RESIDENT_B, TB_RESIDENT_C};
    const size_t spans[3] = {span_a(call), span_b(call), span_c(call)};
    tb_certain_host host;
    if (small)
        tb_certain_host_ranges(&host);
    for (int i = 0; i < 3; i++) {
        if (!operands[i] || (small && tb_is_certain_host(&host, operands[i], spans[i])))
            continue;
        if (!tb_process_has_cuda()) /* asked only now: it walks the loaded objects */
            return where;
        int device = -1;
        const tb_mem_kind kind = tb_gpu_mem_kind(operands[i], &device);
        if (kind == TB_MEM_PINNED)
            where.pinned |= bits[i];
        if (kind == TB_MEM_HOST || kind == TB_MEM_PINNED)
            continue;
        where.mask |= bits[i];
        where.cpu_readable &= kind == TB_MEM_MANAGED;
        where.device = where.device == -1 || where.device == device ? device : -2;
    }
    return where;
}

/*
 * The common tiny call: silent, not forced to the GPU, below the GPU floor,
 * reading and writing memory certainly on the host. The general path below
 * would send it to the CPU BLAS too, but its frame and branches take a third
 * of our time on a call a fast CPU BLAS does in ~130 ns (16^3).
 */
static int straight_to_cpu(const tb_config *config, const tb_call *call)
{
    if (config->verbose > 0 || call->m == 0 || call->n == 0 || call->k == 0 || call->alpha == 0.0f ||
        !is_small(config, call) ||
        atomic_load_explicit(&config->device, memory_order_relaxed) == TILEDBLAS_DEVICE_GPU)
        return 0;
    tb_certain_host host;
    tb_certain_host_ranges(&host);
    return tb_is_certain_host(&host, call->a, span_a(call)) && tb_is_certain_host(&host, call->b, span_b(call)) &&
           tb_is_certain_host(&host, call->c, span_c(call));
}

/* Every other call; not inlined, so that the tiny call's path does not set up this one's frame. */
static __attribute__((noinline)) void sgemm_general(const tb_config *config, const tb_call *call,
                                                    const tb_origin *origin)
{
    const double start = config->verbose >= 2 ? tb_seconds_now() : 0.0;
    if (call->m == 0 || call->n == 0) {
        tb_report_call(config, call, origin, 0, "empty", start);
        return;
    }
    /* Reference rule: alpha == 0 or K == 0 only scales C; A and B are not read. */
    const int reads_ab = call->alpha != 0.0f && call->k > 0;
    const int small = is_small(config, call);
    const residency where = find_residency(call, reads_ab, small);
    const int in_place = where.mask && tb_gpu_usable() && where.device == tb_gpu_device();
    if (where.mask && !in_place && !where.cpu_readable) {
        tb_warn("operands in device memory that the GPU path cannot use (%s); C was not updated",
                !tb_gpu_usable() ? tb_gpu_unusable_reason() : "memory of another device");
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
        tb_report_call(config, call, origin, 0, "scale-only", start);
        return;
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
    } else if (small) {
        use_gpu = 0; /* tiny calls never pay for the GPU: no model, and CUDA is not started */
        reason = "small";
    } else {
        choice = tb_auto_choose(call);
        use_gpu = choice.use_gpu;
        reason = choice.reason;
    }
    const double measure_start = choice.measure_class >= 0 ? tb_seconds_now() : 0.0;

    int on_gpu = 0;
    if (use_gpu) {
        tb_gpu_progress done;
        const tb_gpu_status status = tb_gpu_sgemm(call, resident, where.pinned, config->kernel, &done);
        on_gpu = status == TB_GPU_OK;
        /* Out of memory comes from the fit check or the workspace allocation, before C is written: where
         * every operand in GPU memory is managed, the CPU BLAS can read them and does the call. */
        if (!on_gpu && resident && !(status == TB_GPU_NO_MEMORY && where.cpu_readable)) {
            tb_warn("SGEMM on device-resident operands failed on the GPU; C may be incomplete");
            return;
        }
        if (!on_gpu) {
            reason = status == TB_GPU_NO_MEMORY ? "too-large" : "cuda-error";
            /* What the GPU finished is final; the CPU takes the rest of its row block and the rows below. */
            const int64_t block_end = done.rows_done + done.block_rows;
            const tb_call rest_of_block = tb_call_block(call, done.rows_done, done.block_rows, done.cols_done,
                                                        call->n - done.cols_done);
            const tb_call rows_below = tb_call_block(call, block_end, call->m - block_end, 0, call->n);
            if (rest_of_block.m > 0 && rest_of_block.n > 0)
                tb_cpu_sgemm(&rest_of_block);
            if (rows_below.m > 0)
                tb_cpu_sgemm(&rows_below);
        }
    } else {
        tb_cpu_sgemm(call);
    }
    /* A failed GPU call counts against the GPU, fallback included: its class turns away. */
    if (choice.measure_class >= 0)
        tb_auto_measured(&choice, measure_start, use_gpu && !on_gpu);
    tb_report_call(config, call, origin, on_gpu, reason, start);
}

tb_tiny_gate tb_tiny;

/* Opens the gate (tiny_path.h) where it can be, once: everything it needs is final by now. */
static __attribute__((noinline)) void open_tiny_gate(const tb_config *config)
{
    static atomic_flag tried = ATOMIC_FLAG_INIT;
    if (atomic_flag_test_and_set(&tried))
        return;
    tb_tiny.gpu_min_flops = config->gpu_min_flops;
    tb_tiny.heap_start = tb_heap_start_by_break_in_place();
    tb_tiny.device = &config->device;
    tb_tiny.cpu_cblas = tb_cpu_backend_cblas();
    if (config->verbose == 0 && tb_tiny.heap_start && tb_tiny.cpu_cblas)
        atomic_store_explicit(&tb_tiny.open, 1, memory_order_release);
}

void tb_sgemm(const tb_call *call, const tb_origin *origin)
{
    const tb_config *config = tb_config_get();
    if (straight_to_cpu(config, call)) {
        tb_cpu_sgemm(call);
        if (!atomic_load_explicit(&tb_tiny.open, memory_order_relaxed))
            open_tiny_gate(config);
    } else {
        sgemm_general(config, call, origin);
    }
}
