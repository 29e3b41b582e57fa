/*
 * Fortran 77 SGEMM under every name of compat/abi (sgemm_, sgemm_64_,
 * scipy_sgemm_, ...); the names differ only in their integer width and CPU
 * target. gfortran's hidden string lengths follow the arguments and are not
 * needed.
 */
#include "abi_tables.h"
#include "compat.h"
#include "dispatch/tiny_gate.h"
#include "sgemm_handoff.h"
#include "tiledblas.h"

/* The checks and the hand-off of every call the tiny gate does not let through, for every Fortran name. */
static void checked_sgemm(int convention, int ilp64, const char *api, char transa, char transb, int64_t m, int64_t n,
                          int64_t k, float alpha, const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
                          float *c, int64_t ldc)
{
    const int trans_a = tb_parse_trans(transa), trans_b = tb_parse_trans(transb);
    const int info = trans_a < 0 ? 1
                   : trans_b < 0 ? 2
                   : tb_sgemm_dims_error(trans_a, trans_b, m, n, k, lda, ldb, ldc);
    if (info) {
        tb_report_f77(ilp64, 0, 0, info);
        return;
    }
    const tb_origin origin = {api, 0};
    tb_sgemm_handoff(tb_cpu_target_of(convention), &origin, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta,
                     c, ldc);
}

/*
 * The tiny gate is the plain LP64 name's (convention 0), whose CPU BLAS is
 * that convention's; every other call jumps to the name's checked path, which
 * has the entry point's own signature so that the jump needs no frame.
 */
#define F77_INT_0 int
#define F77_INT_1 int64_t
#define F77_SGEMM_PARAMS(I)                                                                                      \
    const char *transa, const char *transb, const I *m, const I *n, const I *k, const float *alpha,            \
        const float *a, const I *lda, const float *b, const I *ldb, const float *beta, float *c, const I *ldc
#define F77_SGEMM_fortran(convention, name, ilp64)                                                               \
    static __attribute__((noinline)) void name##_checked(F77_SGEMM_PARAMS(F77_INT_##ilp64))                      \
    {                                                                                                            \
        checked_sgemm(convention, ilp64, convention == 0 ? "f77" : #name, *transa, *transb, *m, *n, *k, *alpha,  \
                      a, *lda, b, *ldb, *beta, c, *ldc);                                                         \
    }                                                                                                            \
    TB_TINY_PATH __attribute__((visibility("default"))) void name(F77_SGEMM_PARAMS(F77_INT_##ilp64))             \
    {                                                                                                            \
        if (convention == 0 && tiny_goes_straight(*transa, *transb, *m, *n, *k, *alpha, a, *lda, b, *ldb, c, *ldc, \
                                                  *beta))                                                        \
            return;                                                                                              \
        name##_checked(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);                            \
    }
#define F77_SGEMM_cblas(convention, name, ilp64)
#define F77_SGEMM(convention, interface, name, ilp64) F77_SGEMM_##interface(convention, name, ilp64)

/* Runs the call on the tiny path and returns 1 where the gate lets it through. */
static inline int tiny_goes_straight(char transa, char transb, int m, int n, int k, float alpha, const float *a,
                                     int lda, const float *b, int ldb, float *c, int ldc, float beta)
{
    const int trans_a = tb_parse_trans(transa), trans_b = tb_parse_trans(transb);
    if (!(trans_a >= 0 && trans_b >= 0 &&
          tb_tiny_goes_straight(0, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, c, ldc)))
        return 0;
    tb_tiny.cpu_cblas(CblasColMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n,
                      k, alpha, a, lda, b, ldb, beta, c, ldc);
    return 1;
}

TB_OWN_SGEMM(F77_SGEMM)
