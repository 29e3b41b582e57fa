/*
 * The 64-bit-integer names of the whole ABI, relinked: cblas_sdot64_,
 * isamax_64_ and LAPACK's sgesv_64_, called with int64_t integers, reach the
 * ILP64 CPU BLAS (libopenblas64.so.0, whose routines have the plain names)
 * and give the right answers; a count whose low 32 bits say 1 and whose sign
 * bit is set must be read whole (negative: isamax_64_ answers 0).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tiledblas.h"

float cblas_sdot64_(int64_t n, const float *x, int64_t incx, const float *y, int64_t incy);
int64_t isamax_64_(const int64_t *n, const float *x, const int64_t *incx);
void sgesv_64_(const int64_t *n, const int64_t *nrhs, float *a, const int64_t *lda, int64_t *ipiv, float *b,
               const int64_t *ldb, int64_t *info);

int main(void)
{
    if (!strstr(tiledblas_cpu_backend_ilp64(), "openblas64")) {
        fprintf(stderr, "SKIP: no libopenblas64.so.0 (ILP64 CPU BLAS: %s)\n", tiledblas_cpu_backend_ilp64());
        return 77;
    }
    int failures = 0;
    const float x[4] = {1, -7, 3, 2}, y[4] = {1, 1, 1, 1};
    if (cblas_sdot64_(4, x, 1, y, 1) != -1.0f) {
        fprintf(stderr, "FAIL: cblas_sdot64_ = %g, expected -1\n", (double)cblas_sdot64_(4, x, 1, y, 1));
        failures++;
    }
    const int64_t four = 4, one = 1;
    if (isamax_64_(&four, x, &one) != 2) {
        fprintf(stderr, "FAIL: isamax_64_ = %lld, expected 2\n", (long long)isamax_64_(&four, x, &one));
        failures++;
    }
    const int64_t negative_when_whole = (int64_t)(UINT64_C(0x8000000000000001));
    if (isamax_64_(&negative_when_whole, x, &one) != 0) {
        fprintf(stderr, "FAIL: isamax_64_ read a 64-bit count as 32 bits\n");
        failures++;
    }
    float a[4] = {2, 0, 0, 4}, b[2] = {2, 8};
    int64_t n = 2, nrhs = 1, ipiv[2], info = -99;
    sgesv_64_(&n, &nrhs, a, &n, ipiv, b, &n, &info);
    if (info != 0 || b[0] != 1.0f || b[1] != 2.0f) {
        fprintf(stderr, "FAIL: sgesv_64_ info %lld, x = %g %g; expected 0, 1 2\n", (long long)info, (double)b[0],
                (double)b[1]);
        failures++;
    }
    if (failures)
        return 1;
    printf("ok: ILP64 forwarders on %s\n", tiledblas_cpu_backend_ilp64());
    return 0;
}
