/*
 * One SGEMM as the framework sees it, whatever entry point it came through:
 * normalised to column-major, arguments already checked.
 */
#ifndef TILEDBLAS_CORE_CALL_H
#define TILEDBLAS_CORE_CALL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/*
 * Marks the functions a tiny call on host memory passes through, from the
 * entry points to the CPU BLAS: the linker puts them together (.text.hot), so
 * that such a call touches few code pages, not one per source file.
 */
#define TB_TINY_PATH __attribute__((hot))

struct tb_cpu_target;

/*
 * C = alpha*op(A)*op(B) + beta*C with C m x n, column-major.
 * op(A)(i,p) = trans_a ? a[p + i*lda] : a[i + p*lda], likewise for B.
 * cpu: the CPU SGEMM of the entry point's naming convention (cpu/cpu_blas.h),
 * which runs the call, or a part of it, on the CPU; NULL: the plain LP64 one.
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
    struct tb_cpu_target *cpu;
} tb_call;

/* How the application made the call, for the per-call trace; the rest follows from the tb_call. */
typedef struct tb_origin {
    const char *api; /* "cblas" or "f77" for the plain LP64 names; else the name called */
    int row_major;   /* the tb_call is its column-major transpose: A and B swapped with their
                        transposes and leading dimensions, M and N too */
} tb_origin;

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

/* Bytes from the first element of a column-major rows x cols operand (cols >= 1) to past its last. */
static inline size_t tb_span_bytes(int64_t rows, int64_t cols, int64_t ld)
{
    return (size_t)((cols - 1) * ld + rows) * sizeof(float);
}

/* The monotonic clock, in seconds. */
static inline double tb_seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#endif /* TILEDBLAS_CORE_CALL_H */
