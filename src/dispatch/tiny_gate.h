/*
 * The tiny call's gate, which the entry points (compat/) pass first: a tiny
 * call with all three operands on the brk heap goes from our entry point
 * straight to the CPU BLAS's cblas_sgemm with the caller's own arguments.
 * A 16^3 call takes 120-600 ns in OpenBLAS, and the framework's general
 * checks cost 10-15 ns of it; this gate costs a few: its cache line, the
 * configured device and the program break.
 */
#ifndef TILEDBLAS_DISPATCH_TINY_GATE_H
#define TILEDBLAS_DISPATCH_TINY_GATE_H

#include <stdatomic.h>
#include <stdint.h>

#include "core/call.h"
#include "core/config.h"
#include "cpu/cpu_blas.h"
#include "dispatch/host_ranges.h"
#include "dispatch/small_call.h"

/*
 * What the straight path needs, published once (tb_tiny_gate_open) after the
 * first tiny call has found it all: silent, a CPU BLAS with its own
 * cblas_sgemm, and glibc's program break readable in place.
 */
typedef struct {
    _Alignas(64) atomic_int open; /* the fields below are final; the gate has a cache line of its own */
    double gpu_min_flops;         /* smaller calls stay on the CPU in auto mode */
    uintptr_t heap_start;         /* the brk heap runs from here to the program break */
    const atomic_int *device;     /* the configured tiledblas_device, which tiledblas_set_device changes */
    tb_cblas_sgemm_fn cpu_cblas;  /* the CPU BLAS's cblas_sgemm, which cannot come back to us */
} tb_tiny_gate;
extern tb_tiny_gate tb_tiny __attribute__((visibility("hidden")));

/* Opens the gate where it can be, once; the framework calls it after its first tiny call. */
void tb_tiny_gate_open(const tb_config *config);

/* Whether a stored operand, inner x outer with leading dimension ld, is valid and inside the heap. */
static inline int tb_tiny_in_heap(const tb_host_range *heap, const float *p, int inner, int outer, int ld)
{
    return ld >= inner && tb_range_holds(heap, (uintptr_t)p, tb_span_bytes(inner, outer, ld));
}

/*
 * Whether a call with these (already valid) layout and transposes, row_major
 * and trans_* 0 or 1, goes straight to tb_tiny.cpu_cblas: a small call
 * (small_call.h) with valid leading dimensions (else the general path
 * reports the error) and all three operands on the brk heap, which holds no
 * device or managed memory.
 */
static inline int tb_tiny_goes_straight(int row_major, int trans_a, int trans_b, int m, int n, int k, float alpha,
                                        const float *a, int lda, const float *b, int ldb, const float *c, int ldc)
{
    if (!atomic_load_explicit(&tb_tiny.open, memory_order_acquire) ||
        !tb_small_call(m, n, k, alpha, tb_tiny.gpu_min_flops,
                       atomic_load_explicit(tb_tiny.device, memory_order_relaxed)))
        return 0;
    const tb_host_range heap = {tb_tiny.heap_start, (uintptr_t)__atomic_load_n(&__curbrk, __ATOMIC_RELAXED)};
    /* A row-major operand is stored as its transpose: rows of op(A) are inner unless exactly one applies. */
    const int a_rows_inner = row_major == trans_a, b_rows_inner = row_major == trans_b;
    return tb_tiny_in_heap(&heap, a, a_rows_inner ? m : k, a_rows_inner ? k : m, lda) &&
           tb_tiny_in_heap(&heap, b, b_rows_inner ? k : n, b_rows_inner ? n : k, ldb) &&
           tb_tiny_in_heap(&heap, c, row_major ? n : m, row_major ? m : n, ldc);
}

#endif /* TILEDBLAS_DISPATCH_TINY_GATE_H */
