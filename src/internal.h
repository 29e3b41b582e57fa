/* Internal interfaces of libtiledblas: the framework between the ABI layer (compat/) and the kernels. */
#ifndef TILEDBLAS_INTERNAL_H
#define TILEDBLAS_INTERNAL_H

#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "tiledblas.h"
#include "tiny_path.h"

/*
 * One SGEMM normalised to column-major: C = alpha*op(A)*op(B) + beta*C with
 * C m x n. op(A)(i,p) = trans_a ? a[p + i*lda] : a[i + p*lda], likewise for B.
 * Arguments are already validated.
 */
typedef struct tb_call {
    int trans_a, trans_b;
    int m, n, k;
    float alpha, beta;
    const float *a;
    int lda;
    const float *b;
    int ldb;
    float *c;
    int ldc;
} tb_call;

/* The monotonic clock, in seconds. */
static inline double tb_seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Floats an operand packed on the device takes: each starts 256-byte aligned, as cudaMalloc's own
 * allocations do, for the kernels' 128-bit loads. */
static inline int64_t tb_packed_floats(int64_t floats)
{
    return (floats + 63) / 64 * 64;
}

/* Rows i0.. (rows of them) and columns j0.. (cols of them) of the call's C, with their operands. */
static inline tb_call tb_call_block(const tb_call *call, int64_t i0, int64_t rows, int64_t j0, int64_t cols)
{
    tb_call block = *call;
    block.m = (int)rows;
    block.n = (int)cols;
    block.a += call->trans_a ? i0 * call->lda : i0;
    block.b += call->trans_b ? j0 : j0 * call->ldb;
    block.c += i0 + j0 * call->ldc;
    return block;
}

/* How the application made the call, for the per-call trace; the rest follows from the tb_call. */
typedef struct tb_origin {
    const char *api; /* "cblas" or "f77" */
    int row_major;   /* the tb_call is its column-major transpose: A and B swapped with their
                        transposes and leading dimensions, M and N too */
} tb_origin;

/* The framework: quick returns, path choice, GPU with CPU fallback, accounting. */
TB_TINY_PATH void tb_sgemm(const tb_call *call, const tb_origin *origin);

/* --- configuration (src/config.c), read once from the environment --- */
typedef struct tb_config {
    atomic_int device;    /* tiledblas_device; tiledblas_set_device changes it while other threads call */
    int verbose;          /* 0 silent, 1 summary at exit, 2 one line per call, 3 and the pipeline's stages */
    int kernel;           /* tb_kernel_id */
    double gpu_min_flops; /* auto: smaller 2*m*n*k stay on the CPU without consulting the cost model */
    double pipeline_min_flops; /* host operands: smallest 2*m*n*k that is pipelined */
    int pinned_mb;        /* cap on pinned staging memory */
    int device_mb;        /* cap on the device memory the GPU path uses; 0: what is free */
    int copy_threads;     /* host copy threads; 0: tb_usable_cpus() (at most 16) */
} tb_config;
TB_TINY_PATH const tb_config *tb_config_get(void);
/* Sets the path for calls on host memory (config->device); returns the previous one. */
tiledblas_device tb_config_set_device(tiledblas_device device);

/* --- auto mode's cost model (src/cost_model.c) --- */
/* Auto mode's path for a call on host memory above the GPU floor, and why. */
typedef struct tb_auto_choice {
    int use_gpu;
    const char *reason;       /* for the per-call trace */
    int measure_class;        /* >= 0: near the crossover; pass the call's time to tb_auto_measured */
    int trial;                /* the path was taken to be measured */
    double predicted_seconds[2]; /* of each path, CPU and GPU (crossover.h's TB_PATH_*) */
} tb_auto_choice;
tb_auto_choice tb_auto_choose(const tb_call *call);
/* The call chosen, started at `started` (tb_seconds_now), has ended; gpu_failed: on the GPU, failed, and
 * finished by the CPU. */
void tb_auto_measured(const tb_auto_choice *choice, double started, int gpu_failed);
/* Calls line() with each class of calls near the crossover that auto mode measured. */
void tb_auto_describe_classes(void (*line)(const char *text));
/* The measured constants as text; 0 (and nothing written) before the first measurement. */
int tb_cost_model_describe(char *text, size_t size);

/* --- CPU backend (src/cpu_backend.c) --- */
TB_TINY_PATH void tb_cpu_sgemm(const tb_call *call);
const char *tb_cpu_backend_name(void);
/* The backend's name, or NULL while no call has needed it (nothing is loaded to answer). */
const char *tb_cpu_backend_if_resolved(void);
/* The backend's own cblas_sgemm, which cannot come back to us (OpenBLAS); else NULL. */
tb_cblas_sgemm_fn tb_cpu_backend_cblas(void);
/* C = beta*C on host memory, reference rules (beta == 0 writes zeros without reading). */
void tb_scale_c_host(const tb_call *call);

/* --- GPU backend (src/gpu_backend.c) --- */
typedef enum {
    TB_GPU_OK = 0,
    TB_GPU_NO_MEMORY, /* this call does not fit; the GPU stays usable */
    TB_GPU_FAILED     /* any other CUDA error; the GPU is disabled for the process */
} tb_gpu_status;
typedef enum {
    TB_MEM_HOST = 0, /* ordinary (pageable) host memory */
    TB_MEM_PINNED,   /* host memory pinned or registered with CUDA: the copy engines reach it directly */
    TB_MEM_MANAGED,  /* managed: the GPU uses it in place, the CPU can read it too */
    TB_MEM_DEVICE    /* device memory: only the GPU can read it */
} tb_mem_kind;
/* Which operands already live on the device (or are managed), or are pinned: bits of a mask. */
enum { TB_RESIDENT_A = 1, TB_RESIDENT_B = 2, TB_RESIDENT_C = 4 };

int tb_gpu_usable(void);         /* initialises CUDA on first use */
const char *tb_gpu_unusable_reason(void);
/* Whether the CUDA driver is loaded: without it no pointer can be a device pointer. */
int tb_process_has_cuda(void);
/* --- host memory known without the driver (src/host_ranges.c) --- */
/* For the calling thread, now: the brk heap, then (found only when needed) its stack above the
 * current frame and the program's segments. */
typedef struct {
    tb_host_range heap, stack;
    const tb_host_range *program;
    int program_segments;
    int beyond_heap_known; /* stack and program are filled in */
} tb_certain_host;
TB_TINY_PATH void tb_certain_host_ranges(tb_certain_host *where);
/* Where the brk heap starts, where its end is __curbrk (tiny_path.h); else 0. */
uintptr_t tb_heap_start_by_break_in_place(void);
/* Whether [p, p + bytes) lies in the stack or program ranges, which it fills in on first need. */
TB_TINY_PATH int tb_is_certain_host_beyond_heap(tb_certain_host *where, uintptr_t at, size_t bytes);
/*
 * Whether [p, p + bytes) is ordinary host memory by those ranges alone (a few
 * nanoseconds against ~0.3 us for the driver's answer). It may still be
 * registered (pinned): use it only where that cannot matter.
 */
static inline int tb_is_certain_host(tb_certain_host *where, const void *p, size_t bytes)
{
    const uintptr_t at = (uintptr_t)p;
    if (tb_range_holds(&where->heap, at, bytes))
        return 1;
    return tb_is_certain_host_beyond_heap(where, at, bytes);
}
/* Where p lives and, unless host memory, on which device (ask only when tb_process_has_cuda()). */
tb_mem_kind tb_gpu_mem_kind(const void *p, int *device);
/* The device the GPU path runs on (valid once tb_gpu_usable()). */
int tb_gpu_device(void);
/*
 * What of C is final after a GPU path stopped: rows [0, rows_done) wholly, and
 * rows [rows_done, rows_done + block_rows) in columns [0, cols_done). Nothing
 * else has been written.
 */
typedef struct tb_gpu_progress {
    int64_t rows_done, block_rows, cols_done;
} tb_gpu_progress;
/* Runs the call with kernel `kernel`; operands named in `resident` are used in place, those
 * named in `pinned` are copied to and from without staging. */
tb_gpu_status tb_gpu_sgemm(const tb_call *call, unsigned resident, unsigned pinned, int kernel,
                           tb_gpu_progress *progress);
/* Copies a strided column-major block on `stream` (2D copies where the pitches allow). */
cudaError_t tb_gpu_copy_block(float *dst, int64_t dst_ld, const float *src, int64_t src_ld, int64_t rows,
                              int64_t cols, enum cudaMemcpyKind kind, cudaStream_t stream);
/* Floats of device memory the GPU path may hold at most (free memory and TILEDBLAS_DEVICE_MB). */
size_t tb_gpu_memory_budget(void);
/* Whether the workspace may grow to `floats` (cheap while it is already that large). */
int tb_gpu_device_fits(size_t floats);
/* Times kernel `kernel` on an n^3 problem in the workspace (CUDA events). */
tb_gpu_status tb_gpu_time_kernel(int kernel, int n, double *seconds);
/* The lane's device workspace, grown to at least `floats`. */
cudaError_t tb_gpu_workspace(size_t floats, float **workspace);
/* The lane's pinned staging for the host-operand paths, grown to at least `floats`. */
cudaError_t tb_gpu_pinned(size_t floats, float **pinned);
/* Floats of pinned staging allowed: the lane's share of TILEDBLAS_PINNED_MB. */
size_t tb_gpu_pinned_budget(void);
/* Lanes of GPU resources (workspace, pinned staging, the staged and pipelined paths' streams and events)
 * that calls hold in turn; the calling thread's, while it holds one. */
#define TB_GPU_LANES 2
int tb_gpu_lane(void);
/* Taking turns on the lanes (src/gpu_lanes.c): the first, either (the first when free), or both at once. */
typedef enum { TB_FIRST_LANE, TB_EITHER_LANE, TB_BOTH_LANES } tb_lane_choice;
/* The lane taken (0 for both), waiting until the choice can be had. */
int tb_lane_take(tb_lane_choice choice);
void tb_lane_give(int lane, tb_lane_choice choice);
/* In a forked child, where no thread holds a lane. */
void tb_lanes_after_fork(void);
/* Destroy a stream or event if made, and forget it: after a failed creation, a retry leaks nothing. */
static inline void tb_destroy_stream(cudaStream_t *stream)
{
    if (*stream)
        cudaStreamDestroy(*stream);
    *stream = NULL;
}
static inline void tb_destroy_event(cudaEvent_t *event)
{
    if (*event)
        cudaEventDestroy(*event);
    *event = NULL;
}

/* --- staged GPU path for host operands (src/gpu_staged.c), on either lane --- */
/* The pinned staging a staged call takes, in floats. */
int64_t tb_staged_pinned_floats(const tb_call *call);
int tb_staged_fits(const tb_call *call, int kernel);
cudaError_t tb_staged_sgemm(const tb_call *call, unsigned pinned, int kernel, tb_gpu_progress *progress);

/* --- pipelined GPU path for large calls on host operands (src/gpu_pipeline.c), on either lane --- */
/* How one call is cut: row blocks of C (op(A)'s block resident), each in panels of columns. */
typedef struct tb_pipeline_plan {
    int64_t rows, width;
} tb_pipeline_plan;
/* Whether the call can be pipelined within the memory budgets, and how. */
int tb_pipeline_plan_for(const tb_call *call, int kernel, tb_pipeline_plan *plan);
/* Whether the plan is the one unlimited budgets give: one row block, the widest panels. */
int tb_pipeline_plan_is_unlimited(const tb_call *call, const tb_pipeline_plan *plan);
/* The least pinned staging that plan needs, in floats (0: the call cannot be pipelined, N < 256). */
int64_t tb_pipeline_unlimited_pinned_floats(const tb_call *call);
cudaError_t tb_pipeline_sgemm(const tb_call *call, unsigned pinned, int kernel, const tb_pipeline_plan *plan,
                              tb_gpu_progress *progress);

/* --- parallel host copies (src/host_copy.c) --- */
/* Copies smaller than this are made by the calling thread alone (waking the pool costs more). */
#define TB_HOST_COPY_POOL_MIN_BYTES (512u << 10)
/* Threads the pool copies with, the caller included: TILEDBLAS_COPY_THREADS, else tb_usable_cpus(); at
 * most 16. The pool takes this many when it starts (at its first job). */
int tb_host_copy_threads(void);
void tb_host_copy(float *dst, int64_t dst_ld, const float *src, int64_t src_ld, int64_t rows,
                  int64_t cols);
/* dst = src + beta * dst, element-wise (the host side of C = alpha*op(A)*op(B) + beta*C). */
void tb_host_combine(float *dst, int64_t dst_ld, const float *src, int64_t src_ld, int64_t rows,
                     int64_t cols, float beta);
/* Around a call that hands the pool several jobs in a row (1 before, 0 after): its threads are woken
 * at once and spin between the jobs instead of sleeping. */
void tb_host_copy_burst(int begin);

/* --- CPUs (src/cpu_count.c) --- */
/* CPUs threads started by the calling thread can keep busy: its affinity mask, capped by a CFS quota. */
int tb_usable_cpus(void);
/* CPUs a quota allows, rounded up, from cgroup v2's cpu.max text ("200000 100000"; "max 100000": none)
 * or v1's quota and period joined by a space (a quota of -1: none); 0 for none or unreadable text. */
int tb_cpus_from_quota(const char *text);

/* --- reporting (src/report.c) --- */
void tb_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* --- TILEDBLAS_VERBOSE=3: the stages of a pipelined call on one clock (src/pipeline_trace.c) --- */
void tb_trace_pipeline_begin(cudaStream_t stream);
/* A GPU stage about to be enqueued on `stream` (what: e.g. "kernel panel", then its index); its id for
 * tb_trace_gpu_end (-1: not traced), which is due whether or not the enqueue succeeded. */
int tb_trace_gpu_begin(cudaStream_t stream, const char *what, int64_t panel);
void tb_trace_gpu_end(int id, cudaStream_t stream);
/* A host stage: tb_trace_host_end(tb_trace_host_begin(), ...) around it. */
double tb_trace_host_begin(void);
void tb_trace_host_end(double begin, const char *what, int64_t panel);
/* Once the call's work is done: prints the stages by start time. */
void tb_trace_pipeline_end(void);
/* Accounts the call and, at TILEDBLAS_VERBOSE=2, prints its trace line (start: the clock then). */
void tb_account_call(const tb_call *call, const tb_origin *origin, int on_gpu, const char *reason, double start,
                     int verbose);
/* tb_account_call at TILEDBLAS_VERBOSE >= 1; inline, so that a silent call pays one comparison. */
static inline void tb_report_call(const tb_config *config, const tb_call *call, const tb_origin *origin, int on_gpu,
                                  const char *reason, double start)
{
    if (config->verbose > 0)
        tb_account_call(call, origin, on_gpu, reason, start, config->verbose);
}

/* Prints a warning the first time the enclosing call site is reached. */
#define TB_WARN_ONCE(...)                                       \
    do {                                                        \
        static atomic_flag tb_warned_ = ATOMIC_FLAG_INIT;       \
        if (!atomic_flag_test_and_set(&tb_warned_))             \
            tb_warn(__VA_ARGS__);                               \
    } while (0)

/* The Fortran error handler (not in the public header: programs define their own freely). */
TILEDBLAS_API void xerbla_(const char *srname, const int *info, size_t srname_len);

#endif /* TILEDBLAS_INTERNAL_H */
