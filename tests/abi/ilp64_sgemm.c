/*
 * The ILP64 SGEMM names of a program linked to tiledblas: cblas_sgemm64_
 * (OpenBLAS, Julia), cblas_sgemm_64 (reference CBLAS, MKL) and sgemm_64_,
 * with int64_t dimensions and leading dimensions.
 *
 * Valid calls (shapes, both layouts, every transpose, the alpha and beta
 * rules, quick returns) are compared with the reference: cblas_sgemm of
 * Debian's libopenblas64.so.0, which keeps the plain names for its 64-bit
 * interface, dlopen'ed in a local scope (with alpha = 0, beta C as the
 * reference BLAS defines it); element-wise within
 * 2 (K + 2) eps (|alpha| |op(A)| |op(B)| + |beta| |C|)_ij, NaN where it has NaN.
 *
 * Invalid calls must reach an error handler once, with the reference
 * parameter number, and leave C untouched. The program defines the handlers
 * (cblas_xerbla, xerbla_, xerbla_64_) and accepts the report in any of them,
 * read through the reference protocol: a CBLAS dimension reported to a
 * Fortran handler under CBLAS_CallFromC is SGEMM's number, one less, and a
 * row-major report under RowMajorStrg names the swapped column-major call's
 * argument. Dimensions above INT_MAX must not be truncated: M = 2^32 + 1 with
 * lda = 2 reports lda, where a truncated M (1) would make the call valid.
 *
 * Exit status: 0 when every check passes, 1 otherwise, 77 without
 * libopenblas64.so.0.
 */
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ROW_MAJOR = 101, COL_MAJOR = 102 };
enum { NO_TRANS = 111, TRANS = 112, CONJ_TRANS = 113 };

typedef void cblas_sgemm_ilp64(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k,
                               float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
                               float beta, float *c, int64_t ldc);
cblas_sgemm_ilp64 cblas_sgemm64_, cblas_sgemm_64;
void sgemm_64_(const char *transa, const char *transb, const int64_t *m, const int64_t *n, const int64_t *k,
               const float *alpha, const float *a, const int64_t *lda, const float *b, const int64_t *ldb,
               const float *beta, float *c, const int64_t *ldc, size_t transa_len, size_t transb_len);

/* The reference CBLAS protocol's globals, defined by the library. */
extern int RowMajorStrg, CBLAS_CallFromC;

static cblas_sgemm_ilp64 *reference;

/* ---- error handlers: each records what reached it ---- */

static struct {
    int calls;
    const char *handler;
    int64_t info;
    char routine[32];
    int row_major, from_c;
} seen;

static void record(const char *handler, int64_t info, const char *routine, size_t len)
{
    seen.calls++;
    seen.handler = handler;
    seen.info = info;
    size_t copied = len < sizeof seen.routine - 1 ? len : sizeof seen.routine - 1;
    memcpy(seen.routine, routine, copied);
    seen.routine[copied] = '\0';
    seen.row_major = RowMajorStrg;
    seen.from_c = CBLAS_CallFromC;
}

void cblas_xerbla(int info, const char *routine, const char *form, ...);
void cblas_xerbla(int info, const char *routine, const char *form, ...)
{
    (void)form;
    record("cblas_xerbla", info, routine, strlen(routine));
}

void xerbla_(const char *routine, const int *info, size_t len);
void xerbla_(const char *routine, const int *info, size_t len)
{
    record("xerbla_", *info, routine, len);
}

void xerbla_64_(const char *routine, const int64_t *info, size_t len);
void xerbla_64_(const char *routine, const int64_t *info, size_t len)
{
    record("xerbla_64_", *info, routine, len);
}

/* ---- the calls under test ---- */

typedef enum { CBLAS64_, CBLAS_64, F77_64 } entry;
static const char *const entry_names[] = {"cblas_sgemm64_", "cblas_sgemm_64", "sgemm_64_"};

typedef struct gemm {
    int layout, trans_a, trans_b;
    int64_t m, n, k, lda, ldb, ldc;
    float alpha, beta;
} gemm;

static char trans_char(int trans)
{
    return trans == NO_TRANS ? 'N' : trans == TRANS ? 'T' : trans == CONJ_TRANS ? 'C' : 'X';
}

/* sgemm_64_ takes column-major operands only; a row-major case never reaches it. */
static void call(entry e, const gemm *g, const float *a, const float *b, float *c)
{
    if (e == F77_64) {
        const char ta = trans_char(g->trans_a), tb = trans_char(g->trans_b);
        sgemm_64_(&ta, &tb, &g->m, &g->n, &g->k, &g->alpha, a, &g->lda, b, &g->ldb, &g->beta, c, &g->ldc, 1, 1);
    } else {
        cblas_sgemm_ilp64 *f = e == CBLAS64_ ? cblas_sgemm64_ : cblas_sgemm_64;
        f(g->layout, g->trans_a, g->trans_b, g->m, g->n, g->k, g->alpha, a, g->lda, b, g->ldb, g->beta, c, g->ldc);
    }
}

static int failures, checks;

static void describe(const gemm *g, entry e, char *buf, size_t size)
{
    snprintf(buf, size, "%s %s %c%c m=%lld n=%lld k=%lld lda=%lld ldb=%lld ldc=%lld alpha=%g beta=%g",
             entry_names[e], g->layout == ROW_MAJOR ? "row" : g->layout == COL_MAJOR ? "col" : "bad-layout",
             trans_char(g->trans_a), trans_char(g->trans_b), (long long)g->m, (long long)g->n, (long long)g->k,
             (long long)g->lda, (long long)g->ldb, (long long)g->ldc, (double)g->alpha, (double)g->beta);
}

static void verdict(int ok, const char *label, const char *detail)
{
    checks++;
    if (!ok) {
        failures++;
        printf("FAIL %s: %s\n", label, detail);
    }
}

/* ---- valid calls against the reference ---- */

static unsigned long long state = 64ULL;

static float next_value(void)
{
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (float)((double)(state >> 11) / (double)(1ULL << 52) * 2.0 - 1.0);
}

/* Element (i, j) of op(X) for a matrix stored with leading dimension ld in the call's layout. */
static float op_element(const gemm *g, const float *x, int trans, int64_t ld, int64_t i, int64_t j)
{
    const int64_t r = trans == NO_TRANS ? i : j, s = trans == NO_TRANS ? j : i;
    return g->layout == COL_MAJOR ? x[r + s * ld] : x[r * ld + s];
}

static int64_t c_index(const gemm *g, int64_t i, int64_t j)
{
    return g->layout == COL_MAJOR ? i + j * g->ldc : i * g->ldc + j;
}

static void expect_valid(entry e, const gemm *g, int nan_in_a, int nan_in_c)
{
    char label[256], detail[256];
    describe(g, e, label, sizeof label);
    /* Stored operands: A is r_a x c_a, B is r_b x c_b, before any transpose. */
    const int64_t r_a = g->trans_a == NO_TRANS ? g->m : g->k, c_a = g->trans_a == NO_TRANS ? g->k : g->m;
    const int64_t r_b = g->trans_b == NO_TRANS ? g->k : g->n, c_b = g->trans_b == NO_TRANS ? g->n : g->k;
    const int col = g->layout == COL_MAJOR;
    const int64_t rows_c = col ? g->n : g->m; /* lines of C in storage, ldc apart */
    const size_t size_a = (size_t)(g->lda * (col ? c_a : r_a)) + 1;
    const size_t size_b = (size_t)(g->ldb * (col ? c_b : r_b)) + 1;
    const size_t size_c = (size_t)(g->ldc * rows_c) + 1;
    float *a = malloc(size_a * sizeof *a), *b = malloc(size_b * sizeof *b);
    float *c0 = malloc(size_c * sizeof *c0), *c = malloc(size_c * sizeof *c), *ref = malloc(size_c * sizeof *ref);
    if (!a || !b || !c0 || !c || !ref) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < size_a; i++)
        a[i] = nan_in_a ? NAN : next_value();
    for (size_t i = 0; i < size_b; i++)
        b[i] = next_value();
    for (size_t i = 0; i < size_c; i++)
        c0[i] = nan_in_c ? NAN : next_value();
    memcpy(c, c0, size_c * sizeof *c);
    memcpy(ref, c0, size_c * sizeof *c);

    memset(&seen, 0, sizeof seen);
    call(e, g, a, b, c);
    reference(g->layout, g->trans_a, g->trans_b, g->m, g->n, g->k, g->alpha, a, g->lda, b, g->ldb, g->beta, ref,
              g->ldc);
    /* With alpha = 0 the reference BLAS reads neither operand: C = beta C. Some OpenBLAS kernels
     * (0.3.21 on SkylakeX cores) multiply A B by 0 instead and let a NaN of A through, so here the
     * expected C follows the rule itself. */
    for (int64_t i = 0; i < g->m && g->alpha == 0.0f; i++)
        for (int64_t j = 0; j < g->n; j++)
            ref[c_index(g, i, j)] = g->beta == 0.0f ? 0.0f : g->beta * c0[c_index(g, i, j)];
    snprintf(detail, sizeof detail, "%s called for a valid call", seen.handler ? seen.handler : "");
    verdict(seen.calls == 0, label, detail);

    int bad = 0;
    for (int64_t i = 0; i < g->m && !bad; i++)
        for (int64_t j = 0; j < g->n && !bad; j++) {
            /* alpha = 0 reads no operand, beta = 0 not C: their terms are 0, not NaN. */
            double magnitude = 0.0;
            for (int64_t p = 0; p < g->k && g->alpha != 0.0f; p++)
                magnitude += fabs((double)op_element(g, a, g->trans_a, g->lda, i, p)) *
                             fabs((double)op_element(g, b, g->trans_b, g->ldb, p, j));
            const int64_t at = c_index(g, i, j);
            magnitude *= fabs((double)g->alpha);
            if (g->beta != 0.0f)
                magnitude += fabs((double)g->beta) * fabs((double)c0[at]);
            const double bound = 2.0 * (double)(g->k + 2) * FLT_EPSILON * magnitude;
            const int same = isnan(ref[at]) ? isnan(c[at]) : fabs((double)c[at] - (double)ref[at]) <= bound;
            if (!same) {
                snprintf(detail, sizeof detail, "C(%lld,%lld) = %.9g, reference %.9g, bound %.3g", (long long)i,
                         (long long)j, (double)c[at], (double)ref[at], bound);
                bad = 1;
            }
        }
    /* Outside the m x n result, within the leading dimension: untouched. */
    for (int64_t r = 0; r < rows_c && !bad; r++)
        for (int64_t s = col ? g->m : g->n; s < g->ldc && !bad; s++)
            if (memcmp(&c[r * g->ldc + s], &c0[r * g->ldc + s], sizeof *c) != 0) {
                snprintf(detail, sizeof detail, "written outside the result at %lld", (long long)(r * g->ldc + s));
                bad = 1;
            }
    verdict(!bad, label, detail);
    free(a);
    free(b);
    free(c0);
    free(c);
    free(ref);
}

static void valid_calls(void)
{
    static const int64_t shapes[][3] = {{1, 1, 1}, {7, 5, 3}, {33, 17, 65}, {64, 64, 64}, {100, 3, 250}, {2, 90, 1}};
    static const float scalars[][2] = {{1.0f, 0.0f}, {0.5f, -1.5f}, {-2.0f, 1.0f}};
    static const int transposes[] = {NO_TRANS, TRANS, CONJ_TRANS};
    for (int e = CBLAS64_; e <= F77_64; e++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int layout = ROW_MAJOR; layout <= COL_MAJOR; layout++) {
                if (e == F77_64 && layout == ROW_MAJOR)
                    continue;
                for (int ta = 0; ta < 3; ta++)
                    for (int tb = 0; tb < 3; tb++) {
                        const float *sc = scalars[(s + (size_t)ta + (size_t)tb) % 3];
                        gemm g = {layout, transposes[ta], transposes[tb], shapes[s][0], shapes[s][1], shapes[s][2],
                                  0, 0, 0, sc[0], sc[1]};
                        const int col = layout == COL_MAJOR;
                        /* Leading dimensions at their minimum, plus 3 on every other shape. */
                        const int64_t pad = s % 2 ? 3 : 0;
                        g.lda = ((col == (g.trans_a == NO_TRANS)) ? g.m : g.k) + pad;
                        g.ldb = ((col == (g.trans_b == NO_TRANS)) ? g.k : g.n) + pad;
                        g.ldc = (col ? g.m : g.n) + pad;
                        expect_valid((entry)e, &g, 0, 0);
                    }
            }
    /* The rules: alpha = 0 reads neither A nor B (NaN there does not leak); beta = 0
     * does not read C; K = 0 scales C by beta; M = 0 or N = 0 returns at once. */
    for (int e = CBLAS64_; e <= F77_64; e++) {
        gemm g = {COL_MAJOR, NO_TRANS, NO_TRANS, 9, 7, 5, 9, 5, 9, 0.0f, 2.0f};
        expect_valid((entry)e, &g, 1, 0);
        g = (gemm){COL_MAJOR, TRANS, NO_TRANS, 9, 7, 5, 5, 5, 9, 1.5f, 0.0f};
        expect_valid((entry)e, &g, 0, 1);
        g = (gemm){COL_MAJOR, NO_TRANS, NO_TRANS, 9, 7, 0, 9, 1, 9, 1.0f, -0.5f};
        expect_valid((entry)e, &g, 0, 0);
        g = (gemm){COL_MAJOR, NO_TRANS, NO_TRANS, 0, 7, 5, 1, 5, 1, 1.0f, 3.0f};
        expect_valid((entry)e, &g, 0, 0);
        g = (gemm){COL_MAJOR, NO_TRANS, NO_TRANS, 9, 0, 5, 9, 5, 9, 1.0f, 3.0f};
        expect_valid((entry)e, &g, 0, 0);
    }
}

/* ---- invalid calls ---- */

/* What a reference cblas_xerbla does for ?gemm under RowMajorStrg. */
static int64_t row_major_position(int64_t info)
{
    switch (info) {
    case 4: return 5;
    case 5: return 4;
    case 9: return 11;
    case 11: return 9;
    default: return info;
    }
}

#define SMALL 64

/* The call must report `position` (of the entry's own argument list) once, C untouched. */
static void expect_error(entry e, const gemm *g, int64_t position)
{
    char label[256], detail[256];
    describe(g, e, label, sizeof label);
    float a[SMALL], b[SMALL], c[SMALL], before[SMALL];
    for (int i = 0; i < SMALL; i++) {
        a[i] = next_value();
        b[i] = next_value();
        c[i] = before[i] = next_value();
    }
    memset(&seen, 0, sizeof seen);
    call(e, g, a, b, c);

    int64_t reported = seen.info;
    if (e != F77_64) {
        if (seen.from_c && strcmp(seen.handler, "cblas_xerbla") != 0)
            reported += 1; /* SGEMM's number of a CBLAS dimension */
        if (seen.row_major)
            reported = row_major_position(reported);
    }
    snprintf(detail, sizeof detail, "%d handler calls, expected 1", seen.calls);
    verdict(seen.calls == 1, label, detail);
    if (seen.calls == 1) {
        snprintf(detail, sizeof detail, "%s received %lld (%s, RowMajorStrg %d, CBLAS_CallFromC %d): parameter "
                 "%lld, expected %lld", seen.handler, (long long)seen.info, seen.routine, seen.row_major,
                 seen.from_c, (long long)reported, (long long)position);
        verdict(reported == position, label, detail);
        char lower[32];
        for (size_t i = 0; i < sizeof lower; i++)
            lower[i] = (char)(seen.routine[i] >= 'A' && seen.routine[i] <= 'Z' ? seen.routine[i] + 32 : seen.routine[i]);
        snprintf(detail, sizeof detail, "routine '%s' is not SGEMM", seen.routine);
        verdict(strstr(lower, "sgemm") != NULL, label, detail);
    }
    verdict(memcmp(c, before, sizeof c) == 0, label, "C was modified");
}

static void invalid_calls(void)
{
    const int64_t big = ((int64_t)1 << 32) + 1, half = (int64_t)1 << 31;
    for (int e = CBLAS64_; e <= CBLAS_64; e++) {
        /* CBLAS positions: 1 layout, 2-3 transposes, 4-6 M N K, 9 lda, 11 ldb, 14 ldc. */
        gemm ok = {COL_MAJOR, NO_TRANS, NO_TRANS, 4, 3, 2, 4, 2, 4, 1.0f, 0.0f};
        gemm g = ok;
        g.layout = 103;
        expect_error((entry)e, &g, 1);
        g = ok, g.trans_a = 110;
        expect_error((entry)e, &g, 2);
        g = ok, g.trans_b = 114;
        expect_error((entry)e, &g, 3);
        g = ok, g.m = -1;
        expect_error((entry)e, &g, 4);
        g = ok, g.n = -1;
        expect_error((entry)e, &g, 5);
        g = ok, g.k = -1;
        expect_error((entry)e, &g, 6);
        g = ok, g.lda = 3;
        expect_error((entry)e, &g, 9);
        g = ok, g.ldb = 1;
        expect_error((entry)e, &g, 11);
        g = ok, g.ldc = 3;
        expect_error((entry)e, &g, 14);
        g = (gemm){ROW_MAJOR, NO_TRANS, NO_TRANS, 4, 3, 2, 2, 3, 2, 1.0f, 0.0f}; /* ldc < N */
        expect_error((entry)e, &g, 14);
        g = (gemm){ROW_MAJOR, NO_TRANS, NO_TRANS, 4, 3, 2, 1, 3, 3, 1.0f, 0.0f}; /* lda < K */
        expect_error((entry)e, &g, 9);
        /* Above INT_MAX: a truncated M (1, or negative) would make lda valid, or report M. */
        g = (gemm){COL_MAJOR, NO_TRANS, NO_TRANS, big, 1, 1, 2, 1, big, 1.0f, 0.0f};
        expect_error((entry)e, &g, 9);
        g = (gemm){COL_MAJOR, NO_TRANS, NO_TRANS, half, 1, 1, 2, 1, half, 1.0f, 0.0f};
        expect_error((entry)e, &g, 9);
        g = (gemm){COL_MAJOR, NO_TRANS, NO_TRANS, 2, 1, big + 2, 2, 4, 2, 1.0f, 0.0f}; /* ldb < K */
        expect_error((entry)e, &g, 11);
    }
    /* Fortran positions: 1-2 transposes, 3-5 M N K, 8 lda, 10 ldb, 13 ldc. */
    gemm ok = {COL_MAJOR, NO_TRANS, NO_TRANS, 4, 3, 2, 4, 2, 4, 1.0f, 0.0f};
    gemm g = ok;
    g.trans_a = 0;
    expect_error(F77_64, &g, 1);
    g = ok, g.trans_b = 0;
    expect_error(F77_64, &g, 2);
    g = ok, g.m = -1;
    expect_error(F77_64, &g, 3);
    g = ok, g.n = -1;
    expect_error(F77_64, &g, 4);
    g = ok, g.k = -1;
    expect_error(F77_64, &g, 5);
    g = ok, g.lda = 3;
    expect_error(F77_64, &g, 8);
    g = ok, g.ldb = 1;
    expect_error(F77_64, &g, 10);
    g = ok, g.ldc = 3;
    expect_error(F77_64, &g, 13);
    g = (gemm){COL_MAJOR, NO_TRANS, NO_TRANS, big, 1, 1, 2, 1, big, 1.0f, 0.0f};
    expect_error(F77_64, &g, 8);
    g = (gemm){COL_MAJOR, NO_TRANS, NO_TRANS, half, 1, 1, 2, 1, half, 1.0f, 0.0f};
    expect_error(F77_64, &g, 8);
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "libopenblas64.so.0";
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        printf("SKIP: no ILP64 reference BLAS (%s; Debian: libopenblas64-0-pthread)\n", dlerror());
        return 77;
    }
    reference = (cblas_sgemm_ilp64 *)dlsym(handle, "cblas_sgemm");
    if (!reference) {
        printf("SKIP: %s has no cblas_sgemm\n", path);
        return 77;
    }
    valid_calls();
    invalid_calls();
    if (failures) {
        printf("ilp64_sgemm: %d of %d checks failed\n", failures, checks);
        return 1;
    }
    printf("ilp64_sgemm: all %d checks passed\n", checks);
    return 0;
}
