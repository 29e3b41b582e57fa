/*
 * Every SGEMM name of compat/abi, relinked: the LP64 and ILP64 CBLAS and
 * Fortran names and their scipy_ forms give the product of a 20^3 call within
 * the K-scaled FP32 bound; an ILP64 call whose leading dimensions exceed
 * INT_MAX (and whose operands are still tiny: M x 1 times 1 x 1) runs
 * untruncated on the ILP64 CPU BLAS, libopenblas64.so.0, which
 * tiledblas_cpu_backend_ilp64 names.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tiledblas.h"

#define CBLAS_ARGS(I)                                                                                             \
    CBLAS_LAYOUT, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, I, I, I, float, const float *, I, const float *, I, float,  \
        float *, I
#define F77_ARGS(I)                                                                                               \
    const char *, const char *, const I *, const I *, const I *, const float *, const float *, const I *,        \
        const float *, const I *, const float *, float *, const I *
void scipy_cblas_sgemm(CBLAS_ARGS(int));
void scipy_cblas_sgemm64_(CBLAS_ARGS(int64_t));
void scipy_sgemm_(F77_ARGS(int));
void scipy_sgemm_64_(F77_ARGS(int64_t));

enum { N = 20 };
static float a[N * N], b[N * N], c[N * N];
static double expected[N * N], bound[N * N];
static int failures;

static void check(const char *name)
{
    int wrong = 0;
    for (int i = 0; i < N * N; i++)
        wrong += !(fabs(c[i] - expected[i]) <= bound[i]);
    if (wrong) {
        fprintf(stderr, "FAIL %s: %d of %d elements wrong\n", name, wrong, N * N);
        failures++;
    }
    memset(c, 0, sizeof c);
}

int main(void)
{
    for (int i = 0; i < N * N; i++) {
        a[i] = (float)((i * 7 % 13) - 6) / 4.0f;
        b[i] = (float)((i * 5 % 11) - 5) / 4.0f;
    }
    for (int j = 0; j < N; j++)
        for (int i = 0; i < N; i++) {
            double sum = 0.0, scale = 0.0;
            for (int p = 0; p < N; p++) {
                sum += (double)a[i + p * N] * b[p + j * N];
                scale += fabs((double)a[i + p * N] * b[p + j * N]);
            }
            expected[i + j * N] = sum;
            bound[i + j * N] = 2.0 * N * 0x1p-24 * scale;
        }
    const int n = N;
    const int64_t n64 = N;
    const float one = 1.0f, zero = 0.0f;
    const CBLAS_LAYOUT col = CblasColMajor;
    const CBLAS_TRANSPOSE no = CblasNoTrans;
    cblas_sgemm(col, no, no, N, N, N, 1.0f, a, N, b, N, 0.0f, c, N), check("cblas_sgemm");
    scipy_cblas_sgemm(col, no, no, N, N, N, 1.0f, a, N, b, N, 0.0f, c, N), check("scipy_cblas_sgemm");
    cblas_sgemm64_(col, no, no, N, N, N, 1.0f, a, N, b, N, 0.0f, c, N), check("cblas_sgemm64_");
    cblas_sgemm_64(col, no, no, N, N, N, 1.0f, a, N, b, N, 0.0f, c, N), check("cblas_sgemm_64");
    scipy_cblas_sgemm64_(col, no, no, N, N, N, 1.0f, a, N, b, N, 0.0f, c, N), check("scipy_cblas_sgemm64_");
    sgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n), check("sgemm_");
    scipy_sgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n), check("scipy_sgemm_");
    sgemm_64_("N", "N", &n64, &n64, &n64, &one, a, &n64, b, &n64, &zero, c, &n64), check("sgemm_64_");
    scipy_sgemm_64_("N", "N", &n64, &n64, &n64, &one, a, &n64, b, &n64, &zero, c, &n64), check("scipy_sgemm_64_");

    const char *ilp64 = tiledblas_cpu_backend_ilp64();
    if (!strstr(ilp64, "openblas64")) {
        fprintf(stderr, "%s: ILP64 CPU BLAS '%s', not libopenblas64.so.0: the large call is not tried\n",
                failures ? "FAIL" : "SKIP", ilp64);
        return failures ? 1 : 77;
    }
    /* C(i, 0) = 2 * A(i, 0) * B(0, 0), leading dimensions past INT_MAX: only their first columns are touched. */
    const int64_t m = 3, huge = (int64_t)INT32_MAX + 5, unit = 1;
    const float two = 2.0f, a3[3] = {1.0f, -2.0f, 3.5f}, b1[1] = {4.0f};
    float c3[3] = {0};
    sgemm_64_("N", "N", &m, &unit, &unit, &two, a3, &huge, b1, &huge, &zero, c3, &huge);
    for (int i = 0; i < 3; i++)
        if (c3[i] != 8.0f * a3[i]) {
            fprintf(stderr, "FAIL sgemm_64_ with leading dimensions past INT_MAX: C(%d) = %g, expected %g\n", i,
                    (double)c3[i], 8.0 * a3[i]);
            failures++;
        }
    memset(c3, 0, sizeof c3);
    cblas_sgemm64_(col, no, no, m, unit, unit, 2.0f, a3, huge, b1, huge, 0.0f, c3, huge);
    for (int i = 0; i < 3; i++)
        if (c3[i] != 8.0f * a3[i]) {
            fprintf(stderr, "FAIL cblas_sgemm64_ with leading dimensions past INT_MAX: C(%d) = %g\n", i,
                    (double)c3[i]);
            failures++;
        }
    if (failures)
        return 1;
    printf("ok: 9 SGEMM names; ILP64 CPU BLAS %s\n", ilp64);
    return 0;
}
