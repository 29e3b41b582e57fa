#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "product_check.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define SAMPLES 256

static unsigned next_random(unsigned *state)
{
    *state = *state * 1664525u + 1013904223u;
    return *state >> 8;
}

static float random_value(unsigned *state)
{
    return (float)next_random(state) / (float)(1u << 24) * 2.0f - 1.0f; /* [-1, 1) */
}

static float *random_matrix(size_t count, unsigned *state)
{
    float *x = malloc((count > 0 ? count : 1) * sizeof *x);
    if (x == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(EXIT_FAILURE);
    }
    for (size_t i = 0; i < count; i++)
        x[i] = random_value(state);
    return x;
}

/* Leading dimension of a dense rows x cols matrix in the product's layout. */
static int dense_ld(int row_major, int rows, int cols)
{
    int ld = row_major ? cols : rows;
    return ld > 1 ? ld : 1;
}

/* Element (i, j) of a stored matrix, or of its transpose when trans is set. */
static double element(const float *x, int ld, int row_major, int trans, int i, int j)
{
    if (trans) {
        int t = i;
        i = j;
        j = t;
    }
    return row_major ? x[(size_t)i * ld + j] : x[(size_t)j * ld + i];
}

void ex_product_init(ex_product *p, const char *name, int row_major, int trans_a, int trans_b,
                     int m, int n, int k, float alpha, float beta, unsigned seed)
{
    *p = (ex_product){.name = name, .row_major = row_major, .trans_a = trans_a,
                      .trans_b = trans_b, .m = m, .n = n, .k = k, .alpha = alpha, .beta = beta};
    /* Stored shapes: op(A) is m x k, op(B) is k x n. */
    p->lda = trans_a ? dense_ld(row_major, k, m) : dense_ld(row_major, m, k);
    p->ldb = trans_b ? dense_ld(row_major, n, k) : dense_ld(row_major, k, n);
    p->ldc = dense_ld(row_major, m, n);
    p->a = random_matrix((size_t)m * k, &seed);
    p->b = random_matrix((size_t)k * n, &seed);
    p->c0 = random_matrix((size_t)m * n, &seed);
    p->c = malloc(((size_t)m * n > 0 ? (size_t)m * n : 1) * sizeof *p->c);
    if (p->c == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(EXIT_FAILURE);
    }
    for (size_t i = 0; i < (size_t)m * n; i++)
        p->c[i] = p->c0[i];
}

void ex_product_free(ex_product *p)
{
    free(p->a);
    free(p->b);
    free(p->c);
    free(p->c0);
}

int ex_product_report(const ex_product *p, const char *program, double seconds)
{
    unsigned state = 12345u;
    int bad = 0;
    for (int s = 0; s < SAMPLES && p->m > 0 && p->n > 0; s++) {
        /* The four corners first, then random elements. */
        int i = s < 4 ? (s & 1 ? p->m - 1 : 0) : (int)(next_random(&state) % (unsigned)p->m);
        int j = s < 4 ? (s & 2 ? p->n - 1 : 0) : (int)(next_random(&state) % (unsigned)p->n);
        double sum = 0.0, abs_sum = 0.0;
        for (int q = 0; q < p->k; q++) {
            double term = element(p->a, p->lda, p->row_major, p->trans_a, i, q) *
                          element(p->b, p->ldb, p->row_major, p->trans_b, q, j);
            sum += term;
            abs_sum += fabs(term);
        }
        double c0 = element(p->c0, p->ldc, p->row_major, 0, i, j);
        double expected = p->alpha * sum + p->beta * c0;
        double bound = 2.0 * (p->k + 2) * FLT_EPSILON *
                       (fabs(p->alpha) * abs_sum + fabs(p->beta) * fabs(c0));
        double got = element(p->c, p->ldc, p->row_major, 0, i, j);
        if (!(fabs(got - expected) <= bound) && bad++ < 3)
            fprintf(stderr, "%s: %s: C(%d,%d) = %.9g, expected %.9g (bound %.3g)\n", program,
                    p->name, i, j, got, expected, bound);
    }
    double gflops = seconds > 0 ? 2.0 * p->m * p->n * p->k / seconds * 1e-9 : 0.0;
    printf("%s: %s %dx%dx%d: %.3f ms, %.1f GFLOP/s, %s\n", program, p->name, p->m, p->n, p->k,
           seconds * 1e3, gflops, bad == 0 ? "OK" : "MISMATCH");
    return bad == 0;
}

double ex_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
