/*
 * A product larger than the GPU's memory: op(A) alone exceeds the device (or
 * the --device-bytes given, with TILEDBLAS_DEVICE_MB capping the library to
 * match), so the pipeline must cut C into row blocks, sending B once per block.
 * Run with TILEDBLAS_DEVICE=gpu and TILEDBLAS_VERBOSE=2: the call's trace must
 * say it ran on the GPU, not on the CPU after running out of memory.
 *
 * Inputs are integers in [-2, 2] computed from each element's index, so any
 * summation order gives the exact result and the reference needs no memory:
 * every element of C must be an integer in range (C is poisoned with NaN when
 * beta = 0), and sampled rows must equal the FP64 result exactly. Both
 * NoTrans and Trans A run on the same buffer.
 *
 * Exits 77 (skipped) without a usable GPU or without enough host memory.
 */
#include "testutil.h"
#include "tiledblas.h"

#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define COLS 256    /* N: two panels of the pipeline */
#define DEPTH 8192  /* K */
#define SAMPLED_ROWS 64
#define THREADS 16
#define HOST_MARGIN_BYTES (8.0 * 1024 * 1024 * 1024)

static float value_at(uint64_t index, uint64_t salt)
{
    uint64_t z = index * 0x9E3779B97F4A7C15ull + salt;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (float)((int)((z ^ (z >> 31)) % 5) - 2);
}

typedef struct {
    float *x;
    size_t begin, end;
    uint64_t salt;
} fill_job;

static void *fill_part(void *arg)
{
    fill_job *job = arg;
    for (size_t i = job->begin; i < job->end; i++)
        job->x[i] = value_at(i, job->salt);
    return NULL;
}

/* x[i] = value_at(i, salt), on THREADS threads: A takes ~90 GB on the H100. */
static void fill(float *x, size_t count, uint64_t salt)
{
    pthread_t threads[THREADS];
    fill_job jobs[THREADS];
    for (int t = 0; t < THREADS; t++) {
        jobs[t] = (fill_job){x, count * t / THREADS, count * (t + 1) / THREADS, salt};
        if (pthread_create(&threads[t], NULL, fill_part, &jobs[t]) != 0)
            fill_part(&jobs[t]), threads[t] = 0;
    }
    for (int t = 0; t < THREADS; t++)
        if (threads[t])
            pthread_join(threads[t], NULL);
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Runs the call with stderr captured; 1 when its trace line says path=gpu. */
static int call_on_gpu(int trans_a, int m, const float *a, const float *b, float beta, float *c)
{
    char path[] = "/tmp/tiledblas-ooc-XXXXXX";
    const int capture = mkstemp(path);
    const int saved = dup(2);
    if (capture < 0 || saved < 0) {
        fprintf(stderr, "FAIL: cannot capture stderr\n");
        return 0;
    }
    unlink(path);
    fflush(stderr);
    dup2(capture, 2);
    cblas_sgemm(CblasColMajor, trans_a ? CblasTrans : CblasNoTrans, CblasNoTrans, m, COLS, DEPTH,
                1.0f, a, trans_a ? DEPTH : m, b, DEPTH, beta, c, m);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char text[4096] = "";
    const ssize_t got = pread(capture, text, sizeof text - 1, 0);
    close(capture);
    text[got > 0 ? got : 0] = '\0';
    fputs(text, stdout);
    return strstr(text, "tiledblas: sgemm ") && strstr(text, " path=gpu ");
}

static int run_case(int trans_a, int m, const float *a, const float *b, float beta)
{
    const char *name = trans_a ? "Trans A" : "NoTrans A";
    const size_t c_count = (size_t)m * COLS;
    float *c = malloc(c_count * sizeof *c);
    if (!c) {
        fprintf(stderr, "FAIL %s: cannot allocate C\n", name);
        return 1;
    }
    /* C0(i,j) is value_at(i + j*m, 3); with beta = 0, NaN that must all be overwritten. */
    if (beta == 0.0f)
        for (size_t i = 0; i < c_count; i++)
            c[i] = NAN;
    else
        fill(c, c_count, 3);

    const double start = seconds_now();
    int failures = !call_on_gpu(trans_a, m, a, b, beta, c);
    printf("%s: %dx%dx%d in %.1f s\n", name, m, COLS, DEPTH, seconds_now() - start);
    if (failures)
        fprintf(stderr, "FAIL %s: the call did not run on the GPU\n", name);

    const double limit = (double)DEPTH * 4 + fabs(beta) * 2;
    for (size_t i = 0; i < c_count; i++)
        if (!(isfinite(c[i]) && c[i] == floorf(c[i]) && fabs(c[i]) <= limit) && failures++ < 5)
            fprintf(stderr, "FAIL %s: C[%zu] = %g is impossible\n", name, i, (double)c[i]);

    tb_rng rng;
    tb_rng_seed(&rng, 7);
    for (int s = 0; s < SAMPLED_ROWS; s++) {
        /* The first and last rows, then random ones. */
        const int i = s == 0 ? 0 : s == 1 ? m - 1 : tb_rng_below(&rng, m);
        for (int j = 0; j < COLS; j++) {
            double dot = 0.0;
            for (int p = 0; p < DEPTH; p++) {
                const uint64_t at = trans_a ? (uint64_t)i * DEPTH + p : (uint64_t)p * m + i;
                dot += (double)value_at(at, 1) * (double)value_at((uint64_t)p + (uint64_t)j * DEPTH, 2);
            }
            const size_t at = (size_t)i + (size_t)j * m;
            const double expected = dot + (beta == 0.0f ? 0.0 : beta * (double)value_at(at, 3));
            if ((double)c[at] != expected && failures++ < 10)
                fprintf(stderr, "FAIL %s: C(%d,%d) = %.9g, expected exactly %.9g\n", name, i, j,
                        (double)c[at], expected);
        }
    }
    printf("%s: %s\n", name, failures == 0 ? "OK" : "FAILED");
    free(c);
    return failures;
}

int main(int argc, char **argv)
{
    if (!tiledblas_gpu_available()) {
        printf("SKIP: no usable GPU\n");
        return 77;
    }
    size_t free_bytes = 0, device_bytes = 0;
    if (argc == 3 && strcmp(argv[1], "--device-bytes") == 0) {
        device_bytes = strtoull(argv[2], NULL, 10);
    } else if (argc != 1 || cudaMemGetInfo(&free_bytes, &device_bytes) != cudaSuccess) {
        fprintf(stderr, "usage: %s [--device-bytes N]\n", argv[0]);
        return 2;
    }
    /* op(A) alone 2% larger than the device, rows a multiple of 128. */
    const int m = (int)(((double)device_bytes * 1.02 / (DEPTH * sizeof(float)) + 127) / 128) * 128;
    const size_t a_count = (size_t)m * DEPTH;
    const double needed = (double)(a_count + (size_t)m * COLS) * sizeof(float) + HOST_MARGIN_BYTES;
    const double physical = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    printf("device %.1f GB; A is %d x %d (%.1f GB), B %d x %d, C %d x %d\n", device_bytes / 1e9, m,
           DEPTH, a_count * sizeof(float) / 1e9, DEPTH, COLS, m, COLS);
    if (physical < needed) {
        printf("SKIP: needs %.1f GB of host memory, the machine has %.1f GB\n", needed / 1e9,
               physical / 1e9);
        return 77;
    }
    float *a = malloc(a_count * sizeof *a), *b = malloc((size_t)DEPTH * COLS * sizeof *b);
    if (!a || !b) {
        printf("SKIP: cannot allocate %.1f GB for A\n", a_count * sizeof *a / 1e9);
        return 77;
    }
    const double start = seconds_now();
    fill(a, a_count, 1);
    fill(b, (size_t)DEPTH * COLS, 2);
    printf("inputs filled in %.1f s\n", seconds_now() - start);

    tb_tally tally = {0, 0};
    tb_tally_record(&tally, run_case(0, m, a, b, 0.0f) == 0, "NoTrans A, beta 0");
    tb_tally_record(&tally, run_case(1, m, a, b, -1.0f) == 0, "Trans A, beta -1");
    free(a);
    free(b);
    return tb_tally_report(&tally);
}
