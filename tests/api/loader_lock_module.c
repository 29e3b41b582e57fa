/*
 * A library whose constructor makes an SGEMM call, as a module may at load
 * time, while the dynamic loader holds its lock (test_loader_lock). Linked to
 * loader_lock_blas, whose flag it sets first.
 */
#include <stdatomic.h>
#include <stddef.h>

extern atomic_int loader_lock_begun;
float loader_lock_result[4];

void sgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k, const float *alpha,
            const float *a, const int *lda, const float *b, const int *ldb, const float *beta, float *c,
            const int *ldc, size_t transa_len, size_t transb_len);

__attribute__((constructor)) static void multiply_at_load(void)
{
    atomic_store(&loader_lock_begun, 1);
    const int two = 2;
    const float one = 1.0f, zero = 0.0f, a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
    sgemm_("N", "N", &two, &two, &two, &one, a, &two, b, &two, &zero, loader_lock_result, &two, 1, 1);
}
