/*
 * A CPU BLAS for test_loader_lock (TILEDBLAS_CPU_BLAS): isamax_ answers as a
 * 32-bit BLAS does, but the first time only once a library constructor has
 * begun an SGEMM call (loader_lock_begun, set by loader_lock_module.c) or
 * after a second; sgemm_ is the plain loop and counts its calls.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <stdatomic.h>
#include <stddef.h>
#include <time.h>

atomic_int loader_lock_begun, loader_lock_probing, loader_lock_calls;

int isamax_(const int *n, const float *x, const int *incx);
void sgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k, const float *alpha,
            const float *a, const int *lda, const float *b, const int *ldb, const float *beta, float *c,
            const int *ldc, size_t transa_len, size_t transb_len);

int isamax_(const int *n, const float *x, const int *incx)
{
    (void)x, (void)incx;
    atomic_store(&loader_lock_probing, 1);
    const struct timespec pause = {0, 1000000};
    for (int waited = 0; waited < 1000 && !atomic_load(&loader_lock_begun); waited++)
        nanosleep(&pause, NULL);
    return *n == 1 ? 1 : 0;
}

/* Column-major, no transposes: all the test asks. */
void sgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k, const float *alpha,
            const float *a, const int *lda, const float *b, const int *ldb, const float *beta, float *c,
            const int *ldc, size_t transa_len, size_t transb_len)
{
    (void)transa, (void)transb, (void)transa_len, (void)transb_len;
    atomic_fetch_add(&loader_lock_calls, 1);
    for (int j = 0; j < *n; j++)
        for (int i = 0; i < *m; i++) {
            float sum = 0.0f;
            for (int p = 0; p < *k; p++)
                sum += a[i + p * *lda] * b[p + j * *ldb];
            c[i + j * *ldc] = *alpha * sum + *beta * c[i + j * *ldc];
        }
}
