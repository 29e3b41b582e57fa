/*
 * The tiny call's path, shared by the framework and the ABI layer without the
 * rest of internal.h: TB_TINY_PATH, the address ranges, spans and GPU floor
 * that the framework's checks use too, and the gate through which a tiny call
 * on the brk heap goes from our entry point straight to the CPU BLAS's
 * cblas_sgemm with the caller's own arguments.
 */
#ifndef TILEDBLAS_TINY_PATH_H
#define TILEDBLAS_TINY_PATH_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "tiledblas.h"

/*
 * Marks the functions a tiny call on host memory passes through, from the
 * entry points to the CPU BLAS: the linker puts them together (.text.hot), so
 * that such a call touches few code pages, not one per source file.
 */
#define TB_TINY_PATH __attribute__((hot))

/* An address range, [start, end). */
typedef struct {
    uintptr_t start, end;
} tb_host_range;
/* Whether [at, at + bytes) lies inside r. */
static inline int tb_range_holds(const tb_host_range *r, uintptr_t at, size_t bytes)
{
    return at >= r->start && at < r->end && bytes <= r->end - at;
}

/* Bytes from the first element of a column-major rows x cols operand (cols >= 1) to past its last. */
static inline size_t tb_span_bytes(int64_t rows, int64_t cols, int64_t ld)
{
    return (size_t)((cols - 1) * ld + rows) * sizeof(float);
}

/* Whether an M x N x K product is below the GPU floor (TILEDBLAS_GPU_MIN_FLOPS). */
static inline int tb_below_gpu_floor(int m, int n, int k, double gpu_min_flops)
{
    return 2.0 * m * n * k < gpu_min_flops;
}

typedef void (*tb_cblas_sgemm_fn)(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int m,
                                  int n, int k, float alpha, const float *a, int lda, const float *b, int ldb,
                                  float beta, float *c, int ldc);

/*
 * What the straight path needs, published once (sgemm.c) after the first tiny
 * call has found it all: silent, a CPU BLAS with its own cblas_sgemm, and
 * glibc's program break readable in place. A 16^3 call takes 120-600 ns in
 * OpenBLAS, and the framework's general checks cost 10-15 ns of it; this gate
 * costs a few: its cache line, the configured device and the break.
 */
typedef struct {
    _Alignas(64) atomic_int open; /* the fields below are final; the gate has a cache line of its own */
    double gpu_min_flops;         /* smaller calls stay on the CPU in auto mode */
    uintptr_t heap_start;         /* the brk heap runs from here to the program break */
    const atomic_int *device;     /* the configured tiledblas_device, which tiledblas_set_device changes */
    tb_cblas_sgemm_fn cpu_cblas;  /* the CPU BLAS's cblas_sgemm, which cannot come back to us */
} tb_tiny_gate;
extern tb_tiny_gate tb_tiny __attribute__((visibility("hidden")));

/* glibc's program break (host_ranges.c); the gate opens only where it is the break. */
extern void *__curbrk __attribute__((weak));

/* Whether a stored operand, inner x outer with leading dimension ld, is valid and inside the heap. */
static inline int tb_tiny_in_heap(const tb_host_range *heap, const float *p, int inner, int outer, int ld)
{
    return ld >= inner && tb_range_holds(heap, (uintptr_t)p, tb_span_bytes(inner, outer, ld));
}

/*
 * Whether a call with these (already valid) layout and transposes, row_major
 * and trans_* 0 or 1, goes straight to tb_tiny.cpu_cblas: positive
 * dimensions, valid leading dimensions (else the general path reports the
 * error), alpha != 0 (else A and B must not be read), below the GPU floor, not
 * forced to the GPU, and all three operands on the brk heap, which holds no
 * device or managed memory.
 */
static inline int tb_tiny_goes_straight(int row_major, int trans_a, int trans_b, int m, int n, int k, float alpha,
                                        const float *a, int lda, const float *b, int ldb, const float *c, int ldc)
{
    if (!atomic_load_explicit(&tb_tiny.open, memory_order_acquire) || m <= 0 || n <= 0 || k <= 0 ||
        alpha == 0.0f || !tb_below_gpu_floor(m, n, k, tb_tiny.gpu_min_flops) ||
        atomic_load_explicit(tb_tiny.device, memory_order_relaxed) == TILEDBLAS_DEVICE_GPU)
        return 0;
    const tb_host_range heap = {tb_tiny.heap_start, (uintptr_t)__atomic_load_n(&__curbrk, __ATOMIC_RELAXED)};
    /* A row-major operand is stored as its transpose: rows of op(A) are inner unless exactly one applies. */
    const int a_rows_inner = row_major == trans_a, b_rows_inner = row_major == trans_b;
    return tb_tiny_in_heap(&heap, a, a_rows_inner ? m : k, a_rows_inner ? k : m, lda) &&
           tb_tiny_in_heap(&heap, b, b_rows_inner ? k : n, b_rows_inner ? n : k, ldb) &&
           tb_tiny_in_heap(&heap, c, row_major ? n : m, row_major ? m : n, ldc);
}

#endif /* TILEDBLAS_TINY_PATH_H */
