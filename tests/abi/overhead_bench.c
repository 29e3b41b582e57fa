/*
 * Per-call time of two tiny calls, for overheads.sh, which builds this program
 * linked to tiledblas alone and to OpenBLAS: cblas_sdot on 16 elements (a
 * routine tiledblas forwards to the CPU BLAS) and cblas_sgemm 16 x 16 x 16
 * (tiledblas's own, kept on the CPU BLAS by its tiny-call gate), each as the
 * program's calls bind and straight to OpenBLAS's own entry points (in the
 * libopenblas.so.0 loaded, whoever loaded it), in turns batch by batch. A
 * shared machine's CPU may run at half speed in one process and at full speed
 * in the next, but hardly changes between batches a few milliseconds apart:
 * the two figures of a line compare.
 * Prints "sdot16 NS DIRECT_NS" and "sgemm16 NS DIRECT_NS": the median over
 * batches of the mean time of one call within a batch, in nanoseconds.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { ROW_MAJOR = 101, NO_TRANS = 111 };

typedef float sdot_fn(int n, const float *x, int incx, const float *y, int incy);
typedef void sgemm_fn(int layout, int transa, int transb, int m, int n, int k, float alpha, const float *a, int lda,
                      const float *b, int ldb, float beta, float *c, int ldc);
sdot_fn cblas_sdot;
sgemm_fn cblas_sgemm;

#define BATCHES 101
#define N 16

/* malloc'd, as most programs' operands are: the case tiledblas's tiny-call gate sends straight to the
 * CPU BLAS (operands elsewhere take its general path, which costs more). */
static float *a, *b, *c;
static volatile float sink;
static sdot_fn *sdot_now;
static sgemm_fn *sgemm_now;

/* OpenBLAS's own cblas_sdot and cblas_sgemm, from the libopenblas.so.0 that -lopenblas links and that
 * tiledblas loads first: 1 when it is loaded and has both. */
static int find_openblas(void **entries)
{
    void *handle = dlopen("libopenblas.so.0", RTLD_LAZY | RTLD_NOLOAD);
    if (!handle)
        return 0;
    entries[0] = dlsym(handle, "cblas_sdot");
    entries[1] = dlsym(handle, "cblas_sgemm");
    dlclose(handle);
    return entries[0] && entries[1];
}

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
        sum += sdot_now(N, a, 1, b, 1);
    sink = sum;
}

static void sgemm_batch(int calls)
{
    for (int i = 0; i < calls; i++)
        sgemm_now(ROW_MAJOR, NO_TRANS, NO_TRANS, N, N, N, 1.0f, a, N, b, N, 0.0f, c, N);
    sink = c[0];
}

/* Seconds of one batch of `calls` through `how` (0: as the program binds, 1: OpenBLAS's own). */
static double timed(void (*batch)(int), int calls, void *const *openblas, int how)
{
    sdot_now = how ? (sdot_fn *)openblas[0] : cblas_sdot;
    sgemm_now = how ? (sgemm_fn *)openblas[1] : cblas_sgemm;
    const double start = now();
    batch(calls);
    return now() - start;
}

/* Medians over BATCHES of the time per call, both ways in turns, after a batch of each to warm up. */
static void medians_ns(void (*batch)(int), int calls, void *const *openblas, double *bound, double *direct)
{
    double per_call[2][BATCHES];
    for (int how = 0; how < 2; how++)
        timed(batch, calls, openblas, how);
    for (int i = 0; i < BATCHES; i++) {
        /* Each goes first in every other round, so that neither always follows the other. */
        const int first = i % 2;
        per_call[first][i] = timed(batch, calls, openblas, first) / calls * 1e9;
        per_call[1 - first][i] = timed(batch, calls, openblas, 1 - first) / calls * 1e9;
    }
    for (int how = 0; how < 2; how++)
        qsort(per_call[how], BATCHES, sizeof per_call[how][0], by_value);
    *bound = per_call[0][BATCHES / 2];
    *direct = per_call[1][BATCHES / 2];
}

int main(void)
{
    void *openblas[2] = {NULL, NULL};
    /* Linked to tiledblas alone, OpenBLAS is loaded by the first call that needs a CPU BLAS. */
    if (!find_openblas(openblas)) {
        sink = cblas_sdot(1, &(float){1.0f}, 1, &(float){1.0f}, 1);
        if (!find_openblas(openblas)) {
            fprintf(stderr, "libopenblas.so.0 is not loaded\n");
            return 1;
        }
    }
    a = malloc(sizeof(float) * N * N);
    b = malloc(sizeof(float) * N * N);
    c = malloc(sizeof(float) * N * N);
    if (!a || !b || !c)
        return 1;
    for (int i = 0; i < N * N; i++) {
        a[i] = (float)(i % 7) * 0.25f - 0.75f;
        b[i] = (float)(i % 5) * 0.5f - 1.0f;
    }
    double bound, direct;
    medians_ns(sdot_batch, 2000, openblas, &bound, &direct);
    printf("sdot16 %.1f %.1f\n", bound, direct);
    medians_ns(sgemm_batch, 200, openblas, &bound, &direct);
    printf("sgemm16 %.1f %.1f\n", bound, direct);
    return 0;
}
