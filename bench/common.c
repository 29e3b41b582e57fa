/* The cases, the inputs, the timing loop and the results table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

/* Wall time one entry may take: slow calls get fewer reps, but at least 3. */
#define BENCH_BUDGET_MS 2000.0
#define BENCH_MIN_REPS 3

/* Leading dimension of a packed rows x cols matrix. */
static int64_t packed_ld(int row_major, int64_t rows, int64_t cols)
{
    return row_major ? cols : rows;
}

bench_case bench_case_make(const bench_opts *o, bench_shape s, const char *trans)
{
    bench_case c = {0};
    c.row_major = o->row_major;
    c.trans_a = trans[0] == 'T';
    c.trans_b = trans[1] == 'T';
    c.m = s.m;
    c.n = s.n;
    c.k = s.k;
    /* A is stored M x K (K x M when transposed), B K x N (N x K), C M x N. */
    c.lda = c.trans_a ? packed_ld(c.row_major, c.k, c.m) : packed_ld(c.row_major, c.m, c.k);
    c.ldb = c.trans_b ? packed_ld(c.row_major, c.n, c.k) : packed_ld(c.row_major, c.k, c.n);
    c.ldc = packed_ld(c.row_major, c.m, c.n);
    c.beta = o->beta;
    snprintf(c.shape, sizeof c.shape, "%lldx%lldx%lld", (long long)s.m, (long long)s.n,
             (long long)s.k);
    snprintf(c.op, sizeof c.op, "%s %s", c.row_major ? "row" : "col", trans);
    return c;
}

/*
 * The column-major problem the library runs for this call: a row-major
 * C = op(A) op(B) is the column-major C^T = op(B)^T op(A)^T, so m and n swap
 * and so do the operands (with their own transposes).
 */
tb_gemm_args bench_colmajor(const bench_case *c, const float *a, const float *b, float *cc)
{
    tb_gemm_args g = {0};
    g.k = c->k;
    g.alpha = 1.0f;
    g.beta = c->beta;
    g.c = cc;
    g.ldc = c->ldc;
    if (c->row_major) {
        g.m = c->n;
        g.n = c->m;
        g.trans_a = c->trans_b;
        g.a = b;
        g.lda = c->ldb;
        g.trans_b = c->trans_a;
        g.b = a;
        g.ldb = c->lda;
    } else {
        g.m = c->m;
        g.n = c->n;
        g.trans_a = c->trans_a;
        g.a = a;
        g.lda = c->lda;
        g.trans_b = c->trans_b;
        g.b = b;
        g.ldb = c->ldb;
    }
    return g;
}

double bench_gflops(const bench_case *c, double ms)
{
    return 2.0 * (double)c->m * (double)c->n * (double)c->k / (ms * 1e6);
}

uint64_t bench_hash(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Uniform in (-1, 1) and never 0, so no term of a product is lost unseen. */
void bench_fill(float *x, size_t n, uint64_t seed)
{
    const double scale = 16777216.0; /* 2^24 */
    for (size_t i = 0; i < n; i++) {
        uint64_t u = bench_hash(seed * 0x100000001b3ull + i) >> 40; /* 24 bits */
        /* (2u + 1 - 2^24) / 2^24: an odd numerator, exact in float. */
        x[i] = (float)((2.0 * (double)u + 1.0 - scale) / scale);
    }
}

double bench_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/*
 * Times `run` after the caller's warm-up: the first sample decides how many
 * follow, so an entry stays within BENCH_BUDGET_MS unless BENCH_MIN_REPS
 * samples alone take longer. Returns the number of samples, or -1.
 */
int bench_time(bench_timed_fn run, void *ctx, int max_reps, double *median_ms)
{
    double *t = bench_xmalloc(sizeof *t * (size_t)max_reps);
    int reps = max_reps;
    t[0] = run(ctx);
    if (t[0] < 0.0) {
        free(t);
        return -1;
    }
    reps = bench_reps_within_budget(t[0], max_reps);
    for (int i = 1; i < reps; i++) {
        t[i] = run(ctx);
        if (t[i] < 0.0) {
            free(t);
            return -1;
        }
    }
    *median_ms = bench_median(t, reps);
    free(t);
    return reps;
}

int bench_reps_within_budget(double first_ms, int max_reps)
{
    if (first_ms * max_reps <= BENCH_BUDGET_MS)
        return max_reps;
    const int reps = (int)(BENCH_BUDGET_MS / first_ms);
    return reps < BENCH_MIN_REPS ? (BENCH_MIN_REPS < max_reps ? BENCH_MIN_REPS : max_reps) : reps;
}

double bench_median(double *t, int count)
{
    qsort(t, (size_t)count, sizeof *t, cmp_double);
    return count % 2 ? t[count / 2] : 0.5 * (t[count / 2 - 1] + t[count / 2]);
}

bench_row *bench_table_add(bench_table *t, const bench_case *c, const char *variant)
{
    if (t->len == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 32;
        t->rows = realloc(t->rows, t->cap * sizeof *t->rows);
        if (!t->rows) {
            fprintf(stderr, "tiledblas-bench: out of memory\n");
            exit(1);
        }
    }
    bench_row *r = &t->rows[t->len++];
    memset(r, 0, sizeof *r);
    r->error = r->error_median = -1.0; /* not checked (yet) */
    snprintf(r->shape, sizeof r->shape, "%s", c->shape);
    snprintf(r->op, sizeof r->op, "%s", c->op);
    snprintf(r->variant, sizeof r->variant, "%s", variant);
    return r;
}

void *bench_xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "tiledblas-bench: out of memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}
