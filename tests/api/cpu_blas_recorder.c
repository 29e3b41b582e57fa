/*
 * A CPU BLAS for tests (TILEDBLAS_CPU_BLAS): OpenBLAS ($OPENBLAS_LIB, else
 * libopenblas.so.0) behind entry points that record how they were called.
 * It exports openblas_get_config, so tiledblas calls its cblas_sgemm, as it
 * would OpenBLAS's; test_tiny_gate reads the record through recorder_last. For
 * single-threaded tests: the record is not locked.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "cpu_blas_recorder.h"

typedef void (*cblas_sgemm_fn)(int layout, int trans_a, int trans_b, int m, int n, int k, float alpha,
                               const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc);
typedef void (*f77_sgemm_fn)(const char *transa, const char *transb, const int *m, const int *n, const int *k,
                             const float *alpha, const float *a, const int *lda, const float *b, const int *ldb,
                             const float *beta, float *c, const int *ldc, size_t transa_len, size_t transb_len);

typedef int (*isamax_fn)(const int *n, const float *x, const int *incx);

static recorder_call last;
static isamax_fn openblas_isamax;
static cblas_sgemm_fn openblas_cblas;
static f77_sgemm_fn openblas_f77;

static void load_openblas(void)
{
    if (openblas_cblas)
        return;
    const char *path = getenv("OPENBLAS_LIB");
    void *handle = dlopen(path && *path ? path : "libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    openblas_cblas = handle ? (cblas_sgemm_fn)dlsym(handle, "cblas_sgemm") : NULL;
    openblas_f77 = handle ? (f77_sgemm_fn)dlsym(handle, "sgemm_") : NULL;
    openblas_isamax = handle ? (isamax_fn)dlsym(handle, "isamax_") : NULL;
    if (!openblas_cblas || !openblas_f77 || !openblas_isamax) {
        fprintf(stderr, "cpu_blas_recorder: OpenBLAS not found: %s\n", dlerror());
        exit(1);
    }
}

recorder_call recorder_last(void)
{
    return last;
}

/* OpenBLAS's, unrecorded: tiledblas reads the integer width of a CPU BLAS through it. */
int isamax_(const int *n, const float *x, const int *incx)
{
    load_openblas();
    return openblas_isamax(n, x, incx);
}

char *openblas_get_config(void)
{
    return "cpu_blas_recorder";
}

void cblas_sgemm(int layout, int trans_a, int trans_b, int m, int n, int k, float alpha, const float *a, int lda,
                 const float *b, int ldb, float beta, float *c, int ldc)
{
    load_openblas();
    last = (recorder_call){last.calls + 1, layout, trans_a, trans_b, m, n, k, a, b, c};
    openblas_cblas(layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void sgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k, const float *alpha,
            const float *a, const int *lda, const float *b, const int *ldb, const float *beta, float *c,
            const int *ldc, size_t transa_len, size_t transb_len)
{
    load_openblas();
    last = (recorder_call){last.calls + 1, 0, *transa, *transb, *m, *n, *k, a, b, c};
    openblas_f77(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, transa_len, transb_len);
}
