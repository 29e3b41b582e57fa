/*
 * The cost of a tiny call through libtiledblas: the same cblas_sgemm (row-major
 * NN, N^3, on malloc'd memory) through the library this program is linked to
 * and through OpenBLAS alone ($OPENBLAS_LIB, dlopen'ed), in alternating phases
 * of a few milliseconds, so that both see the same state of the host. Each
 * phase gives a time per call; the medians over the phases are compared.
 *
 *     tiny_calls [N [PHASE_MS [PHASES]]]      (defaults 16, 2, 100)
 *
 * The host's state changes from process to process, so compare libraries over
 * many processes, in turns. Running it with LD_LIBRARY_PATH at the
 * pass-through shim (passthrough/libtiledblas.so.0, bench/passthrough_shim.c)
 * gives the least any library in between can cost.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tiledblas.h"

typedef void (*cblas_sgemm_fn)(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int m, int n,
                               int k, float alpha, const float *a, int lda, const float *b, int ldb, float beta,
                               float *c, int ldc);

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int by_value(const void *x, const void *y)
{
    const double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Calls `sgemm` for `phase` seconds; nanoseconds per call. */
static double time_phase(cblas_sgemm_fn sgemm, int n, const float *a, const float *b, float *c, double phase)
{
    const double start = seconds_now();
    double now;
    long calls = 0;
    do {
        sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        calls++;
    } while ((now = seconds_now()) - start < phase);
    return (now - start) / (double)calls * 1e9;
}

int main(int argc, char **argv)
{
    const int n = argc > 1 ? atoi(argv[1]) : 16, phases = argc > 3 ? atoi(argv[3]) : 100;
    const double phase = (argc > 2 ? atof(argv[2]) : 2.0) * 1e-3;
    const char *path = getenv("OPENBLAS_LIB");
    void *openblas = dlopen(path && *path ? path : "libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    const cblas_sgemm_fn alone = openblas ? (cblas_sgemm_fn)dlsym(openblas, "cblas_sgemm") : NULL;
    if (n < 1 || phases < 1 || phase <= 0.0 || !alone) {
        fprintf(stderr, "usage: tiny_calls [N [PHASE_MS [PHASES]]], with OpenBLAS at $OPENBLAS_LIB (%s)\n",
                alone ? "found" : dlerror());
        return 2;
    }
    float *a = malloc(sizeof(float) * n * n), *b = malloc(sizeof(float) * n * n), *c = malloc(sizeof(float) * n * n);
    double *through = malloc(sizeof(double) * phases), *direct = malloc(sizeof(double) * phases);
    for (long i = 0; i < (long)n * n; i++)
        a[i] = 1.0f / (float)(i % 97 + 1), b[i] = 1.0f, c[i] = 0.0f;
    for (int p = 0; p < phases; p++) {
        through[p] = time_phase(cblas_sgemm, n, a, b, c, phase);
        direct[p] = time_phase(alone, n, a, b, c, phase);
        printf("phase %d: through the library %.1f ns, OpenBLAS alone %.1f ns\n", p, through[p], direct[p]);
    }
    qsort(through, phases, sizeof(double), by_value);
    qsort(direct, phases, sizeof(double), by_value);
    printf("n=%d phase %.0f ms x %d: median through the library %.1f ns, OpenBLAS alone %.1f ns, ratio %.3f\n", n,
           phase * 1e3, phases, through[phases / 2], direct[phases / 2], direct[phases / 2] / through[phases / 2]);
    free(a), free(b), free(c), free(through), free(direct);
    return 0;
}
