/*
 * Error reports while other threads make valid calls. One thread makes
 * invalid row-major cblas_sgemm calls (lda too small, reported by the
 * reference protocol as the swapped call's LDB, 10, through xerbla_ with
 * RowMajorStrg and CBLAS_CallFromC set); the others make valid column-major
 * calls, empty ones that pass the entry point's checks and tiny ones. The
 * program's own xerbla_ records what it reads; every report must read
 * RowMajorStrg 1, CBLAS_CallFromC 1 and 10. A library that writes the
 * protocol's globals on every call, not only while reporting, is caught
 * within a few seconds.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tiledblas.h"

enum { VALID_THREADS = 2 };
static const double SECONDS = 2.0;

static atomic_int stop;
static long reports, wrong;
static int last_info, last_row_major, last_from_c;

void xerbla_(const char *srname, const int *info, size_t len);
void xerbla_(const char *srname, const int *info, size_t len)
{
    (void)srname, (void)len;
    reports++;
    last_info = *info, last_row_major = RowMajorStrg, last_from_c = CBLAS_CallFromC;
    if (*info != 10 || RowMajorStrg != 1 || CBLAS_CallFromC != 1)
        wrong++;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *valid_calls(void *arg)
{
    (void)arg;
    float *a = calloc(64, sizeof(float)), *b = calloc(64, sizeof(float)), *c = calloc(64, sizeof(float));
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 0, 4, 4, 1.0f, a, 4, b, 4, 0.0f, c, 4);
        cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1.0f, a, 2, b, 2, 0.0f, c, 2);
    }
    free(a), free(b), free(c);
    return NULL;
}

int main(void)
{
    pthread_t threads[VALID_THREADS];
    for (int i = 0; i < VALID_THREADS; i++)
        pthread_create(&threads[i], NULL, valid_calls, NULL);
    float a[16] = {0}, b[16] = {0}, c[16] = {0};
    const double end = now() + SECONDS;
    long calls = 0;
    while ((calls & 1023) || now() < end) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 4, 4, 4, 1.0f, a, 1, b, 4, 0.0f, c, 4);
        calls++;
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < VALID_THREADS; i++)
        pthread_join(threads[i], NULL);
    if (reports != calls || wrong) {
        fprintf(stderr, "FAIL: %ld invalid calls, %ld reports, %ld read wrong (last: info %d, RowMajorStrg %d, "
                        "CBLAS_CallFromC %d)\n", calls, reports, wrong, last_info, last_row_major, last_from_c);
        return 1;
    }
    printf("ok: %ld reports beside valid calls in %d threads, all right\n", calls, VALID_THREADS);
    return 0;
}
