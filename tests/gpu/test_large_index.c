/*
 * 64-bit indexing on the GPU: A is 70000 x 32768 (2.3e9 elements, 9.2 GB), so
 * element offsets pass 2^31. Run with NoTrans A (lda = M) and Trans A
 * (lda = K) on the same buffer; sampled rows of C are compared with a
 * double-precision dot product, every element of C is range-checked, and the
 * padding of C must stay untouched.
 *
 * All inputs are small integers and every partial sum stays below 2^24, so
 * float arithmetic is exact in any summation order: the sampled elements must
 * equal the double-precision result exactly, which catches a wrong index
 * that a rounding-error bound at K = 32768 could not.
 *
 * Exits 77 (skipped) without a usable GPU or without enough host memory.
 */
#include "testutil.h"
#include "tiledblas.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define ROWS 70000          /* M */
#define COLS 3              /* N */
#define DEPTH 32768         /* K */
#define MAX_ABS_INPUT 2     /* inputs are integers in [-2, 2] */
#define EDGE_ROWS 10        /* sampled at each end of C */
#define RANDOM_ROWS 280
#define HOST_MARGIN_BYTES (4.0 * 1024 * 1024 * 1024)

static float input_value(uint64_t bits)
{
    return (float)((int)(bits % (2 * MAX_ABS_INPUT + 1)) - MAX_ABS_INPUT);
}

/* 16 values per random word: filling 2.3e9 elements must stay quick. */
static void fill_integers(float *x, size_t count, tb_rng *rng)
{
    size_t i = 0;
    while (i < count) {
        uint64_t word = tb_rng_next(rng);
        for (int part = 0; part < 16 && i < count; part++, word >>= 4)
            x[i++] = input_value(word & 15u);
    }
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int run_case(const float *a, int trans_a, const tb_matrix *b, const tb_matrix *c0,
                    float alpha, float beta, tb_rng *rng)
{
    const int lda = trans_a ? DEPTH : ROWS;
    const char *name = trans_a ? "Trans A" : "NoTrans A";
    tb_matrix c;
    tb_start_c(&c, c0, beta);

    double start = seconds_now();
    cblas_sgemm(CblasColMajor, trans_a ? CblasTrans : CblasNoTrans, CblasNoTrans, ROWS, COLS,
                DEPTH, alpha, a, lda, b->data, b->ld, beta, c.data, c.ld);
    printf("%s: %dx%dx%d lda=%d in %.3f s\n", name, ROWS, COLS, DEPTH, lda, seconds_now() - start);

    int failures = 0;
    /* Every element: an integer no larger than the largest possible result. */
    const double limit = fabs(alpha) * DEPTH * MAX_ABS_INPUT * MAX_ABS_INPUT +
                         fabs(beta) * MAX_ABS_INPUT;
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++) {
            float v = c.data[tb_matrix_index(&c, i, j)];
            if (!(isfinite(v) && v == floorf(v) && fabs(v) <= limit) && failures++ < 5)
                fprintf(stderr, "FAIL %s: C(%d,%d) = %g is impossible\n", name, i, j, (double)v);
        }

    for (int s = 0; s < 2 * EDGE_ROWS + RANDOM_ROWS; s++) {
        int i = s < EDGE_ROWS ? s
              : s < 2 * EDGE_ROWS ? ROWS - 2 * EDGE_ROWS + s
              : tb_rng_below(rng, ROWS);
        double dot[COLS] = {0.0};
        for (int p = 0; p < DEPTH; p++) {
            size_t at = trans_a ? (size_t)i * DEPTH + (size_t)p : (size_t)p * ROWS + (size_t)i;
            for (int j = 0; j < COLS; j++)
                dot[j] += (double)a[at] * (double)b->data[tb_matrix_index(b, p, j)];
        }
        for (int j = 0; j < COLS; j++) {
            size_t at = tb_matrix_index(&c, i, j);
            double expected = (double)alpha * dot[j] +
                              (beta == 0.0f ? 0.0 : (double)beta * (double)c0->data[at]);
            if ((double)c.data[at] != expected && failures++ < 10)
                fprintf(stderr, "FAIL %s: C(%d,%d) = %.9g, expected exactly %.9g\n", name, i, j,
                        (double)c.data[at], expected);
        }
    }
    size_t padding = tb_matrix_padding_errors(&c);
    if (padding > 0) {
        fprintf(stderr, "FAIL %s: %zu elements of C outside the view changed\n", name, padding);
        failures++;
    }
    printf("%s: %s\n", name, failures == 0 ? "OK" : "FAILED");
    tb_matrix_free(&c);
    return failures;
}

int main(void)
{
    if (!tiledblas_gpu_available()) {
        printf("SKIP: no usable GPU\n");
        return 77;
    }
    const size_t a_count = (size_t)ROWS * DEPTH;
    const double needed = (double)a_count * sizeof(float) + HOST_MARGIN_BYTES;
    const double physical = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    if (physical < needed) {
        printf("SKIP: needs %.1f GB of host memory, the machine has %.1f GB\n", needed / 1e9,
               physical / 1e9);
        return 77;
    }
    float *a = malloc(a_count * sizeof *a);
    if (a == NULL) {
        printf("SKIP: cannot allocate %.1f GB for A\n", (double)a_count * sizeof *a / 1e9);
        return 77;
    }

    tb_rng rng;
    tb_rng_seed(&rng, 31);
    fill_integers(a, a_count, &rng);
    tb_matrix b, c0;
    tb_matrix_alloc(&b, DEPTH, COLS, DEPTH, 0);
    tb_matrix_alloc(&c0, ROWS, COLS, ROWS + 1, 0); /* a padding row to watch */
    for (int j = 0; j < COLS; j++) {
        for (int p = 0; p < DEPTH; p++)
            b.data[tb_matrix_index(&b, p, j)] = input_value(tb_rng_next(&rng));
        for (int i = 0; i < ROWS; i++)
            c0.data[tb_matrix_index(&c0, i, j)] = input_value(tb_rng_next(&rng));
    }

    tb_tally tally = {0, 0};
    tb_tally_record(&tally, run_case(a, 0, &b, &c0, 1.0f, 0.0f, &rng) == 0, "NoTrans A");
    /* alpha 2 and beta -1 keep every result an exact integer. */
    tb_tally_record(&tally, run_case(a, 1, &b, &c0, 2.0f, -1.0f, &rng) == 0, "Trans A");

    tb_matrix_free(&b);
    tb_matrix_free(&c0);
    free(a);
    return tb_tally_report(&tally);
}
