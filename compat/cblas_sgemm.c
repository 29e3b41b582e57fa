/*
 * CBLAS sgemm under every name of compat/abi (cblas_sgemm, cblas_sgemm64_,
 * scipy_cblas_sgemm, ...), with the reference CBLAS's checks and error
 * protocol; the names differ only in their integer width and CPU target. A
 * row-major call is the column-major call C^T = op(B)^T * op(A)^T; as in the
 * reference, its errors are reported with the numbers of that swapped call
 * while RowMajorStrg is 1, and cblas_xerbla maps them back. The layout and
 * transposes go to cblas_xerbla; the dimensions, checked as the Fortran SGEMM
 * checks them, to xerbla_ (xerbla_64_ for 64-bit names) with CBLAS_CallFromC
 * set (xerbla.c).
 */
#include "abi_tables.h"
#include "compat.h"
#include "dispatch/tiny_gate.h"
#include "sgemm_handoff.h"
#include "tiledblas.h"

static int trans_flag(CBLAS_TRANSPOSE trans)
{
    switch (trans) {
    case CblasNoTrans:
        return 0;
    case CblasTrans:
    case CblasConjTrans: /* real data */
        return 1;
    default:
        return -1;
    }
}

/* The checks and the hand-off of every call the tiny gate does not let through, for every CBLAS name. */
static void checked_sgemm(int convention, int ilp64, const char *api, CBLAS_LAYOUT layout, CBLAS_TRANSPOSE TransA,
                          CBLAS_TRANSPOSE TransB, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                          int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc)
{
    const int row_major = layout == CblasRowMajor;
    if (!row_major && layout != CblasColMajor) {
        tb_report_cblas(0, 1, "cblas_sgemm", "Illegal layout setting, %d\n", (int)layout);
        return;
    }
    const int trans_a = trans_flag(TransA), trans_b = trans_flag(TransB);
    if (trans_a < 0) {
        tb_report_cblas(row_major, 2, "cblas_sgemm", "Illegal TransA setting, %d\n", (int)TransA);
        return;
    }
    if (trans_b < 0) {
        tb_report_cblas(row_major, 3, "cblas_sgemm", "Illegal TransB setting, %d\n", (int)TransB);
        return;
    }
    /* Column-major: row-major swaps the operands, their transposes and M with N. */
    const int ta = row_major ? trans_b : trans_a, tb = row_major ? trans_a : trans_b;
    const int64_t m = row_major ? N : M, n = row_major ? M : N;
    const float *a = row_major ? B : A, *b = row_major ? A : B;
    const int64_t a_ld = row_major ? ldb : lda, b_ld = row_major ? lda : ldb;
    const int info = tb_sgemm_dims_error(ta, tb, m, n, K, a_ld, b_ld, ldc);
    if (info) {
        tb_report_f77(ilp64, 1, row_major, info);
        return;
    }
    const tb_origin origin = {api, row_major};
    tb_sgemm_handoff(tb_cpu_target_of(convention), &origin, ta, tb, m, n, K, alpha, a, a_ld, b, b_ld, beta, C, ldc);
}

/*
 * Each name's entry point takes the caller's arguments as they are and jumps
 * on, with no frame of its own: to the CPU BLAS for a call the tiny gate lets
 * through (the plain LP64 name, convention 0, only: the gate's CPU BLAS is
 * that convention's), else to its checked path, which has the entry point's
 * own signature so that the jump needs no frame either.
 */
#define CBLAS_INT_0 int
#define CBLAS_INT_1 int64_t
#define CBLAS_SGEMM_PARAMS(I)                                                                                    \
    CBLAS_LAYOUT layout, CBLAS_TRANSPOSE TransA, CBLAS_TRANSPOSE TransB, I M, I N, I K, float alpha,           \
        const float *A, I lda, const float *B, I ldb, float beta, float *C, I ldc
#define CBLAS_SGEMM_cblas(convention, name, ilp64)                                                               \
    static __attribute__((noinline)) void name##_checked(CBLAS_SGEMM_PARAMS(CBLAS_INT_##ilp64))                  \
    {                                                                                                            \
        checked_sgemm(convention, ilp64, convention == 0 ? "cblas" : #name, layout, TransA, TransB, M, N, K,     \
                      alpha, A, lda, B, ldb, beta, C, ldc);                                                      \
    }                                                                                                            \
    TB_TINY_PATH __attribute__((visibility("default"))) void name(CBLAS_SGEMM_PARAMS(CBLAS_INT_##ilp64))         \
    {                                                                                                            \
        if (convention == 0 && tiny_goes_straight(layout, TransA, TransB, M, N, K, alpha, A, lda, B, ldb, C, ldc)) \
            tb_tiny.cpu_cblas(layout, TransA, TransB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);             \
        else                                                                                                     \
            name##_checked(layout, TransA, TransB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);                \
    }
#define CBLAS_SGEMM_fortran(convention, name, ilp64)
#define CBLAS_SGEMM(convention, interface, name, ilp64) CBLAS_SGEMM_##interface(convention, name, ilp64)

static inline int tiny_goes_straight(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE TransA, CBLAS_TRANSPOSE TransB, int M,
                                     int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                                     const float *C, int ldc)
{
    const int row_major = layout == CblasRowMajor;
    const int trans_a = trans_flag(TransA), trans_b = trans_flag(TransB);
    return (row_major || layout == CblasColMajor) && trans_a >= 0 && trans_b >= 0 &&
           tb_tiny_goes_straight(row_major, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, C, ldc);
}

TB_OWN_SGEMM(CBLAS_SGEMM)
