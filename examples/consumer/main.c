/*
 * A minimal program built against an installed tiledblas, through CMake's
 * find_package(tiledblas) or through pkg-config. It multiplies two small
 * matrices and compares the result with its own loop.
 */
#include <tiledblas.h>

#include <float.h>
#include <math.h>
#include <stdio.h>

#define M 17
#define N 13
#define K 9

int main(void)
{
    float a[M * K], b[K * N], c[M * N];
    for (int i = 0; i < M * K; i++)
        a[i] = (float)(i % 7) - 3.0f;
    for (int i = 0; i < K * N; i++)
        b[i] = (float)(i % 5) * 0.5f - 1.0f;

    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, a, K, b, N, 0.0f, c, N);

    int bad = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double expected = 0.0, scale = 0.0;
            for (int p = 0; p < K; p++) {
                expected += (double)a[i * K + p] * b[p * N + j];
                scale += fabs((double)a[i * K + p] * b[p * N + j]);
            }
            bad += !(fabs(c[i * N + j] - expected) <= 2.0 * (K + 2) * FLT_EPSILON * scale);
        }
    printf("consumer: tiledblas %s, GPU available: %s\n", tiledblas_version(),
           tiledblas_gpu_available() ? "yes" : "no");
    printf("consumer: %s\n", bad == 0 ? "OK" : "MISMATCH");
    return bad == 0 ? 0 : 1;
}
