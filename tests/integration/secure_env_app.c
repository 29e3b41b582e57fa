/*
 * A small SGEMM through tiledblas, reporting whether the process runs in
 * secure-execution mode (AT_SECURE: setuid, setgid or file capabilities) and
 * which CPU BLAS the library took. expect_secure_env.sh runs it setuid.
 *
 * Usage: secure_env_app   (exits 1 when the product is wrong)
 */
#include <tiledblas.h>

#include <stdio.h>
#include <sys/auxv.h>

#define N 64

int main(void)
{
    static float a[N * N], b[N * N], c[N * N];
    for (int i = 0; i < N * N; i++)
        a[i] = 1.0f, b[i] = 2.0f, c[i] = -1.0f;
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, a, N, b, N, 0.0f, c, N);
    int wrong = 0;
    for (int i = 0; i < N * N; i++)
        wrong += c[i] != 2.0f * N;
    printf("secure: %lu\n", getauxval(AT_SECURE));
    printf("cpu backend: %s\n", tiledblas_cpu_backend());
    printf("secure_env_app: %s\n", wrong ? "wrong product" : "all 1 products OK");
    return wrong != 0;
}
