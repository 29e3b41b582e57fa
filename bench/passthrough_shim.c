/*
 * A pass-through cblas_sgemm, built as passthrough/libtiledblas.so.0 for
 * tiny_calls: OpenBLAS's ($OPENBLAS_LIB, else libopenblas.so.0) behind one
 * call through a pointer, what no library in between can beat.
 */
#include <dlfcn.h>
#include <stdlib.h>

#include "tiledblas.h"

typedef void (*cblas_sgemm_fn)(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int m, int n,
                               int k, float alpha, const float *a, int lda, const float *b, int ldb, float beta,
                               float *c, int ldc);

static cblas_sgemm_fn openblas_sgemm;

__attribute__((constructor)) static void find_openblas(void)
{
    const char *path = getenv("OPENBLAS_LIB");
    void *openblas = dlopen(path && *path ? path : "libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (openblas)
        openblas_sgemm = (cblas_sgemm_fn)dlsym(openblas, "cblas_sgemm");
    if (!openblas_sgemm)
        abort();
}

void cblas_sgemm(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int m, int n, int k,
                 float alpha, const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc)
{
    openblas_sgemm(layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
