/*
 * A CPU BLAS a user might name in TILEDBLAS_CPU_BLAS to run code with a
 * setuid program's privileges: loading it creates the file $TB_HOSTILE_MARKER,
 * and its sgemm_ writes a wrong C. expect_secure_env.sh checks that the
 * library never loads it in secure-execution mode.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((constructor)) static void loaded(void)
{
    const char *marker = getenv("TB_HOSTILE_MARKER");
    FILE *file = marker ? fopen(marker, "w") : NULL;
    if (file)
        fclose(file);
}

void sgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k, const float *alpha,
            const float *a, const int *lda, const float *b, const int *ldb, const float *beta, float *c,
            const int *ldc)
{
    (void)transa, (void)transb, (void)k, (void)alpha, (void)a, (void)lda, (void)b, (void)ldb, (void)beta;
    for (int j = 0; j < *n; j++)
        for (int i = 0; i < *m; i++)
            c[i + (size_t)j * *ldc] = 0.0f;
}
