/*
 * CBLAS sgemm with the reference CBLAS's checks and error protocol. A
 * row-major call is the column-major call C^T = op(B)^T * op(A)^T; as in the
 * reference, its errors are reported with the numbers of that swapped call
 * while RowMajorStrg is 1, and cblas_xerbla maps them back. The layout and
 * transposes go to cblas_xerbla; the dimensions, checked as the Fortran SGEMM
 * checks them, to xerbla_ with CBLAS_CallFromC set (xerbla.c).
 */
#include "compat.h"
#include "dispatch/sgemm.h"
#include "dispatch/tiny_gate.h"
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

/* Every call but the tiny ones the gate lets through; its own frame, so theirs is none. */
static __attribute__((noinline)) void checked_sgemm(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE TransA,
                                                    CBLAS_TRANSPOSE TransB, int M, int N, int K, float alpha,
                                                    const float *A, int lda, const float *B, int ldb, float beta,
                                                    float *C, int ldc)
{
    const int row_major = layout == CblasRowMajor;
    RowMajorStrg = 0;
    if (!row_major && layout != CblasColMajor) {
        cblas_xerbla(1, "cblas_sgemm", "Illegal layout setting, %d\n", (int)layout);
        return;
    }
    RowMajorStrg = row_major;
    const int trans_a = trans_flag(TransA), trans_b = trans_flag(TransB);
    if (trans_a < 0) {
        cblas_xerbla(2, "cblas_sgemm", "Illegal TransA setting, %d\n", (int)TransA);
        RowMajorStrg = 0;
        return;
    }
    if (trans_b < 0) {
        cblas_xerbla(3, "cblas_sgemm", "Illegal TransB setting, %d\n", (int)TransB);
        RowMajorStrg = 0;
        return;
    }

    tb_call call = {.k = K, .alpha = alpha, .beta = beta, .c = C, .ldc = ldc};
    if (row_major) {
        call.trans_a = trans_b, call.trans_b = trans_a;
        call.m = N, call.n = M;
        call.a = B, call.lda = ldb, call.b = A, call.ldb = lda;
    } else {
        call.trans_a = trans_a, call.trans_b = trans_b;
        call.m = M, call.n = N;
        call.a = A, call.lda = lda, call.b = B, call.ldb = ldb;
    }
    const int info = tb_sgemm_dims_error(call.trans_a, call.trans_b, call.m, call.n, call.k,
                                         call.lda, call.ldb, call.ldc);
    if (info) {
        CBLAS_CallFromC = 1;
        xerbla_("SGEMM ", &info, 6);
        CBLAS_CallFromC = 0;
        RowMajorStrg = 0;
        return;
    }
    const tb_origin origin = {"cblas", row_major};
    tb_sgemm(&call, &origin);
    RowMajorStrg = 0;
}

/* Both calls take the caller's arguments as they are: jumps, with no frame of ours. */
TB_TINY_PATH void cblas_sgemm(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE TransA, CBLAS_TRANSPOSE TransB, int M,
                              int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                              float beta, float *C, int ldc)
{
    const int row_major = layout == CblasRowMajor;
    const int trans_a = trans_flag(TransA), trans_b = trans_flag(TransB);
    if ((row_major || layout == CblasColMajor) && trans_a >= 0 && trans_b >= 0 &&
        tb_tiny_goes_straight(row_major, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, C, ldc))
        tb_tiny.cpu_cblas(layout, TransA, TransB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    else
        checked_sgemm(layout, TransA, TransB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}
