/*
 * Per-call time of two tiny calls, for overheads.sh, which builds this program
 * linked to tiledblas alone and to OpenBLAS: cblas_sdot on 16 elements (a
 * routine tiledblas forwards to the CPU BLAS) and cblas_sgemm 16 x 16 x 16
 * (tiledblas's own, kept on the CPU BLAS by its tiny-call gate).
 * Prints "sdot16 NS" and "sgemm16 NS": the median over batches of the mean
 * time of one call within a batch, in nanoseconds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { ROW_MAJOR = 101, NO_TRANS = 111 };

float cblas_sdot(int n, const float *x, int incx, const float *y, int incy);
void cblas_sgemm(int layout, int transa, int transb, int m, int n, int k, float alpha, const float *a, int lda,
                 const float *b, int ldb, float beta, float *c, int ldc);

#define BATCHES 101
#define N 16

/* malloc'd, as most programs' operands are: the case tiledblas's tiny-call gate sends straight to the
 * CPU BLAS (operands elsewhere take its general path, which costs more). */
static float *a, *b, *c;
static volatile float sink;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int by_value(const void *x, const void *y)
{
    const double u = *(const double *)x, v = *(const double *)y;
    return (u > v) - (u < v);
}

static void sdot_batch(int calls)
{
    float sum = 0.0f;
    for (int i = 0; i < calls; i++)
        sum += cblas_sdot(N, a, 1, b, 1);
    sink = sum;
}

static void sgemm_batch(int calls)
{
    for (int i = 0; i < calls; i++)
        cblas_sgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, N, N, N, 1.0f, a, N, b, N, 0.0f, c, N);
    sink = c[0];
}

/* Median over BATCHES of the time per call of a batch of `calls`, after one batch to warm up. */
static double median_ns(void (*batch)(int), int calls)
{
    double per_call[BATCHES];
    batch(calls);
    for (int i = 0; i < BATCHES; i++) {
        const double start = now();
        batch(calls);
        per_call[i] = (now() - start) / calls * 1e9;
    }
    qsort(per_call, BATCHES, sizeof per_call[0], by_value);
    return per_call[BATCHES / 2];
}

int main(void)
{
    a = malloc(sizeof(float) * N * N);
    b = malloc(sizeof(float) * N * N);
    c = malloc(sizeof(float) * N * N);
    if (!a || !b || !c)
        return 1;
    for (int i = 0; i < N * N; i++) {
        a[i] = (float)(i % 7) * 0.25f - 0.75f;
        b[i] = (float)(i % 5) * 0.5f - 1.0f;
    }
    printf("sdot16 %.1f\n", median_ns(sdot_batch, 2000));
    printf("sgemm16 %.1f\n", median_ns(sgemm_batch, 200));
    return 0;
}
