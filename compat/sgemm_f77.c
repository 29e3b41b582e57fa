/* Fortran 77 SGEMM. gfortran's hidden string lengths follow the arguments and are not needed. */
#include "compat.h"
#include "dispatch/sgemm.h"
#include "dispatch/tiny_gate.h"
#include "tiledblas.h"

TB_TINY_PATH void sgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
                         const float *alpha, const float *a, const int *lda, const float *b, const int *ldb,
                         const float *beta, float *c, const int *ldc)
{
    const int trans_a = tb_parse_trans(*transa), trans_b = tb_parse_trans(*transb);
    if (trans_a >= 0 && trans_b >= 0 &&
        tb_tiny_goes_straight(0, trans_a, trans_b, *m, *n, *k, *alpha, a, *lda, b, *ldb, c, *ldc)) {
        tb_tiny.cpu_cblas(CblasColMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
                          *m, *n, *k, *alpha, a, *lda, b, *ldb, *beta, c, *ldc);
        return;
    }
    int info = trans_a < 0 ? 1
             : trans_b < 0 ? 2
             : tb_sgemm_dims_error(trans_a, trans_b, *m, *n, *k, *lda, *ldb, *ldc);
    if (info) {
        xerbla_("SGEMM ", &info, 6);
        return;
    }
    const tb_call call = {
        .trans_a = trans_a, .trans_b = trans_b, .m = *m, .n = *n, .k = *k,
        .alpha = *alpha, .beta = *beta,
        .a = a, .lda = *lda, .b = b, .ldb = *ldb, .c = c, .ldc = *ldc,
    };
    const tb_origin origin = {"f77", 0};
    tb_sgemm(&call, &origin);
}
