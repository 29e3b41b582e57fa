/*
 * Argument checking of cblas_sgemm and sgemm_: every invalid argument of each
 * interface and layout, the order of the checks, checks before quick returns,
 * and the valid boundary of every leading dimension. The program defines its
 * own cblas_xerbla and xerbla_, which the library must call through their
 * global symbols; they record what they receive. As from the reference CBLAS,
 * cblas_sgemm's invalid layout and transposes reach cblas_xerbla, its invalid
 * dimensions xerbla_ (the Fortran SGEMM's numbers, CBLAS_CallFromC set).
 */
#include "refblas.h"
#include "testutil.h"
#include "tiledblas.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Large enough for every call below: dimensions and leading dimensions are small. */
#define BUFFER_SIZE 4096
#define BAD_LAYOUT_ZERO 0
#define BAD_LAYOUT 103
#define BAD_TRANS_LOW 110
#define BAD_TRANS_HIGH 114

static struct {
    int cblas_calls, f77_calls;
    int info;
    char routine[32];
    size_t routine_len;   /* as passed to xerbla_ */
    int row_major_strg;   /* RowMajorStrg while the handler ran */
    int call_from_c;      /* CBLAS_CallFromC while the handler ran */
    char message[256];    /* cblas_xerbla's form, formatted */
} seen;

static void reset_seen(void)
{
    memset(&seen, 0, sizeof seen);
    seen.info = -1;
}

void cblas_xerbla(int info, const char *routine, const char *form, ...)
{
    seen.cblas_calls++;
    seen.info = info;
    snprintf(seen.routine, sizeof seen.routine, "%s", routine);
    seen.row_major_strg = RowMajorStrg;
    seen.call_from_c = CBLAS_CallFromC;
    va_list args;
    va_start(args, form);
    vsnprintf(seen.message, sizeof seen.message, form, args);
    va_end(args);
}

/* Not declared by tiledblas.h on purpose: programs choose their own prototype. */
void xerbla_(const char *srname, const int *info, size_t len);
void xerbla_(const char *srname, const int *info, size_t len)
{
    seen.f77_calls++;
    seen.info = *info;
    seen.routine_len = len;
    size_t copied = len < sizeof seen.routine - 1 ? len : sizeof seen.routine - 1;
    memcpy(seen.routine, srname, copied); /* not NUL-terminated */
    seen.routine[copied] = '\0';
    seen.row_major_strg = RowMajorStrg;
    seen.call_from_c = CBLAS_CallFromC;
}

/* What a reference cblas_xerbla does for ?gemm under RowMajorStrg. */
static int reference_row_major_position(int info)
{
    switch (info) {
    case 4: return 5;
    case 5: return 4;
    case 9: return 11;
    case 11: return 9;
    default: return info;
    }
}

static tb_tally tally;
static float buffer_a[BUFFER_SIZE], buffer_b[BUFFER_SIZE], buffer_c[BUFFER_SIZE];

static int check(int condition, const char *label, const char *what)
{
    if (!condition)
        fprintf(stderr, "FAIL %s: %s\n", label, what);
    return condition;
}

/* Each handler was called as often as expected, and RowMajorStrg and CBLAS_CallFromC are 0 again. */
static int check_handler_calls(const char *label, int cblas_calls, int f77_calls)
{
    char detail[128];
    snprintf(detail, sizeof detail,
             "cblas_xerbla called %d times, xerbla_ %d times; expected %d and %d",
             seen.cblas_calls, seen.f77_calls, cblas_calls, f77_calls);
    int ok = check(seen.cblas_calls == cblas_calls && seen.f77_calls == f77_calls, label, detail);
    ok &= check(RowMajorStrg == 0, label, "RowMajorStrg not 0 after the call");
    ok &= check(CBLAS_CallFromC == 0, label, "CBLAS_CallFromC not 0 after the call");
    return ok;
}

/* An invalid call must leave C alone: a copy taken before it, compared after it. */
typedef struct c_snapshot {
    float values[BUFFER_SIZE];
} c_snapshot;

/* Before an invalid call: C saved, nothing seen yet. */
static void start_invalid_call(c_snapshot *snapshot)
{
    memcpy(snapshot->values, buffer_c, sizeof snapshot->values);
    reset_seen();
}

static int check_c_unchanged(const c_snapshot *snapshot, const char *label)
{
    return check(memcmp(snapshot->values, buffer_c, sizeof snapshot->values) == 0, label,
                 "C was modified");
}

typedef struct gemm_dims {
    int m, n, k, lda, ldb, ldc;
} gemm_dims;

/* One dimension of a valid call made invalid: set to -1, or to one below its minimum. */
typedef struct invalid_dim {
    size_t field; /* offsetof(gemm_dims, ...) */
    int below_min;
} invalid_dim;

#define NEGATIVE(field) {offsetof(gemm_dims, field), 0}
#define BELOW_MIN(field) {offsetof(gemm_dims, field), 1}

static gemm_dims with_invalid(gemm_dims dims, invalid_dim bad)
{
    int *field = (int *)((char *)&dims + bad.field);
    *field = bad.below_min ? *field - 1 : -1;
    return dims;
}

typedef struct cblas_args {
    int layout, trans_a, trans_b;
    gemm_dims dims;
    float alpha;
} cblas_args;

static void describe_cblas(const cblas_args *args, char *buf, size_t size)
{
    const gemm_dims *d = &args->dims;
    snprintf(buf, size, "cblas layout=%d transa=%d transb=%d m=%d n=%d k=%d lda=%d ldb=%d ldc=%d alpha=%g",
             args->layout, args->trans_a, args->trans_b, d->m, d->n, d->k, d->lda, d->ldb,
             d->ldc, (double)args->alpha);
}

/*
 * The call must report `reported` (the CBLAS number; for a row-major call
 * that of the swapped column-major call) exactly once, which maps to the real
 * argument `position`, and leave C alone: the layout and transposes (1-3) to
 * cblas_xerbla, a dimension to xerbla_ as SGEMM's number, one less.
 */
static void expect_cblas_error(const cblas_args *args, int reported, int position)
{
    char label[256], detail[512];
    describe_cblas(args, label, sizeof label);
    const gemm_dims *d = &args->dims;
    c_snapshot before;
    start_invalid_call(&before);

    cblas_sgemm((CBLAS_LAYOUT)args->layout, (CBLAS_TRANSPOSE)args->trans_a,
                (CBLAS_TRANSPOSE)args->trans_b, d->m, d->n, d->k, args->alpha, buffer_a, d->lda,
                buffer_b, d->ldb, 0.5f, buffer_c, d->ldc);

    const int row_major = args->layout == TB_ROW_MAJOR;
    const int dimension = reported > 3;
    const int cblas_info = dimension ? seen.info + 1 : seen.info;
    const int mapped = row_major ? reference_row_major_position(cblas_info) : cblas_info;
    int ok = check_handler_calls(label, !dimension, dimension);
    snprintf(detail, sizeof detail, "info %d, expected %d (message: %s)", seen.info,
             dimension ? reported - 1 : reported, seen.message);
    ok &= check(cblas_info == reported, label, detail);
    snprintf(detail, sizeof detail, "info %d maps to position %d, expected %d", cblas_info,
             mapped, position);
    ok &= check(mapped == position, label, detail);
    const char *routine = dimension ? "SGEMM " : "cblas_sgemm";
    snprintf(detail, sizeof detail, "routine '%s', expected '%s'", seen.routine, routine);
    ok &= check(strcmp(seen.routine, routine) == 0 && (!dimension || seen.routine_len == 6), label, detail);
    snprintf(detail, sizeof detail, "CBLAS_CallFromC was %d in the handler, expected %d",
             seen.call_from_c, dimension);
    ok &= check(seen.call_from_c == dimension, label, detail);
    snprintf(detail, sizeof detail, "RowMajorStrg was %d in the handler, expected %d",
             seen.row_major_strg, row_major);
    ok &= check(seen.row_major_strg == row_major, label, detail);
    ok &= check_c_unchanged(&before, label);
    tb_tally_record(&tally, ok, label);
}

/* A valid call (every ld at its minimum plus `pad`): no handler call, right result. */
static void expect_valid_gemm(const tb_gemm_case *gc, int f77, char trans_a, char trans_b,
                              tb_rng *rng)
{
    char what[64], label[300];
    snprintf(what, sizeof what, "valid %s call '%c' '%c'", f77 ? "sgemm_" : "cblas", trans_a,
             trans_b);
    tb_case_label(gc, what, label, sizeof label);
    tb_gemm_operands ops;
    tb_operands_make(&ops, gc, rng);
    tb_matrix got, ref;
    tb_matrix_clone(&got, &ops.c0);
    reset_seen();
    if (f77)
        sgemm_(&trans_a, &trans_b, &gc->m, &gc->n, &gc->k, &gc->alpha, ops.a.data, &gc->lda,
               ops.b.data, &gc->ldb, &gc->beta, got.data, &gc->ldc);
    else
        tb_call_tiledblas(gc, ops.a.data, ops.b.data, got.data);
    tb_run_reference(gc, &ops, &ref);
    int ok = check_handler_calls(label, 0, 0);
    ok &= check(tb_check_case(gc, &ops, &got, &ref, label) == 0, label, "wrong result");
    tb_tally_record(&tally, ok, label);
    tb_matrix_free(&got);
    tb_matrix_free(&ref);
    tb_operands_free(&ops);
}

/* Each single invalid dimension or leading dimension, every layout and transpose pair. */
static void check_cblas_each_argument(tb_rng *rng)
{
    /* What cblas_sgemm reports for each layout, and the real argument. */
    static const struct {
        invalid_dim bad;
        int reported_col_major, reported_row_major, position;
    } cases[] = {
        {NEGATIVE(m), 4, 5, 4},
        {NEGATIVE(n), 5, 4, 5},
        {NEGATIVE(k), 6, 6, 6},
        {BELOW_MIN(lda), 9, 11, 9},
        {BELOW_MIN(ldb), 11, 9, 11},
        {BELOW_MIN(ldc), 14, 14, 14},
        {NEGATIVE(lda), 9, 11, 9},
    };
    static const int layouts[] = {TB_COL_MAJOR, TB_ROW_MAJOR};
    for (int li = 0; li < 2; li++)
        for (int ai = 0; ai < 3; ai++)
            for (int bi = 0; bi < 3; bi++) {
                const int row_major = layouts[li] == TB_ROW_MAJOR;
                /* Distinct sizes, so every minimum leading dimension differs. */
                tb_gemm_case gc = {.layout = layouts[li], .trans_a = tb_transposes[ai],
                                   .trans_b = tb_transposes[bi], .m = 5, .n = 7, .k = 3,
                                   .alpha = 1.5f, .beta = 0.5f};
                tb_case_set_ld(&gc, 0, 0, 0);
                expect_valid_gemm(&gc, 0, '-', '-', rng);

                const gemm_dims valid = {gc.m, gc.n, gc.k, gc.lda, gc.ldb, gc.ldc};
                for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                    const cblas_args args = {gc.layout, gc.trans_a, gc.trans_b,
                                             with_invalid(valid, cases[i].bad), gc.alpha};
                    expect_cblas_error(&args, row_major ? cases[i].reported_row_major
                                                        : cases[i].reported_col_major,
                                       cases[i].position);
                }
            }
}
/* Layout and transpose values, and which of several errors is reported. */
static void check_cblas_order(void)
{
    const int C = TB_COL_MAJOR, R = TB_ROW_MAJOR, N = TB_NO_TRANS, T = TB_TRANS;
    /* Column-major 5x7x3 NN: lda 5, ldb 3, ldc 5. Row-major: lda 3, ldb 7, ldc 7. */
    const struct {
        cblas_args args;
        int reported, position;
    } cases[] = {
        {{BAD_LAYOUT_ZERO, N, N, {5, 7, 3, 5, 3, 5}, 1.0f}, 1, 1},
        {{BAD_LAYOUT, N, N, {5, 7, 3, 5, 3, 5}, 1.0f}, 1, 1},
        {{BAD_LAYOUT, BAD_TRANS_LOW, N, {-1, 7, 3, 5, 3, 5}, 1.0f}, 1, 1},
        {{C, BAD_TRANS_LOW, N, {5, 7, 3, 5, 3, 5}, 1.0f}, 2, 2},
        {{C, BAD_TRANS_HIGH, N, {5, 7, 3, 5, 3, 5}, 1.0f}, 2, 2},
        {{C, N, BAD_TRANS_LOW, {5, 7, 3, 5, 3, 5}, 1.0f}, 3, 3},
        {{C, N, BAD_TRANS_HIGH, {5, 7, 3, 5, 3, 5}, 1.0f}, 3, 3},
        {{C, BAD_TRANS_HIGH, BAD_TRANS_LOW, {5, 7, 3, 5, 3, 5}, 1.0f}, 2, 2},
        {{C, BAD_TRANS_LOW, N, {-1, -1, -1, 0, 0, 0}, 1.0f}, 2, 2},
        {{C, N, BAD_TRANS_HIGH, {-1, 7, 3, 5, 3, 5}, 1.0f}, 3, 3},
        {{C, N, N, {-1, -1, 3, 5, 3, 5}, 1.0f}, 4, 4},
        {{C, N, N, {-1, 7, 3, 0, 3, 5}, 1.0f}, 4, 4},
        {{C, N, N, {5, -1, -1, 5, 3, 5}, 1.0f}, 5, 5},
        {{C, N, N, {5, 7, -1, 4, 3, 5}, 1.0f}, 6, 6},
        {{C, N, N, {5, 7, 3, 4, 2, 5}, 1.0f}, 9, 9},
        {{C, N, N, {5, 7, 3, 5, 2, 4}, 1.0f}, 11, 11},
        {{C, T, T, {5, 7, 3, 2, 6, 4}, 1.0f}, 9, 9},
        {{R, BAD_TRANS_LOW, N, {5, 7, 3, 3, 7, 7}, 1.0f}, 2, 2},
        {{R, N, BAD_TRANS_HIGH, {5, 7, 3, 3, 7, 7}, 1.0f}, 3, 3},
        {{R, BAD_TRANS_HIGH, BAD_TRANS_LOW, {5, 7, 3, 3, 7, 7}, 1.0f}, 2, 2},
        {{R, N, BAD_TRANS_LOW, {-1, -1, 3, 3, 7, 7}, 1.0f}, 3, 3},
        /* row-major: the swapped call checks N before M, ldb before lda */
        {{R, N, N, {-1, -1, 3, 3, 7, 7}, 1.0f}, 4, 5},
        {{R, N, N, {-1, 7, -1, 3, 7, 7}, 1.0f}, 5, 4},
        {{R, N, N, {5, 7, -1, 3, 6, 7}, 1.0f}, 6, 6},
        {{R, N, N, {5, 7, 3, 2, 6, 7}, 1.0f}, 9, 11},
        {{R, N, N, {5, 7, 3, 2, 7, 6}, 1.0f}, 11, 9},
        {{R, N, N, {-1, 7, 3, 3, 6, 7}, 1.0f}, 5, 4},
        {{R, T, T, {5, 7, 3, 4, 2, 6}, 1.0f}, 9, 11},
        /* checked before any quick return: M, N or K zero, alpha zero */
        {{C, BAD_TRANS_LOW, N, {0, 7, 3, 1, 3, 1}, 1.0f}, 2, 2},
        {{C, N, BAD_TRANS_HIGH, {0, 0, 0, 1, 1, 1}, 1.0f}, 3, 3},
        {{C, N, N, {0, 7, 3, 0, 3, 1}, 1.0f}, 9, 9},
        {{C, N, N, {0, 7, 3, 1, 3, 0}, 1.0f}, 14, 14},
        {{C, N, T, {5, 0, 3, 5, 0, 5}, 1.0f}, 11, 11},
        {{C, N, N, {5, 7, 0, 5, 0, 5}, 1.0f}, 11, 11},
        {{C, T, N, {5, 7, 0, 0, 1, 5}, 1.0f}, 9, 9},
        {{C, N, N, {5, 7, 3, 5, 3, 4}, 0.0f}, 14, 14},
        {{R, N, N, {5, 7, 0, 0, 7, 7}, 1.0f}, 11, 9},
        {{R, N, N, {5, 0, 3, 3, 1, 0}, 1.0f}, 14, 14},
        {{R, N, N, {0, 0, 0, 1, 1, 0}, 0.0f}, 14, 14},
        {{R, BAD_TRANS_HIGH, N, {0, 0, 0, 1, 1, 1}, 0.0f}, 2, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_cblas_error(&cases[i].args, cases[i].reported, cases[i].position);
}

typedef struct f77_args {
    char trans_a, trans_b;
    gemm_dims dims;
} f77_args;

static void expect_f77_error(const f77_args *args, int info)
{
    char label[256], detail[512];
    const gemm_dims *d = &args->dims;
    snprintf(label, sizeof label, "sgemm_ transa='%c' transb='%c' m=%d n=%d k=%d lda=%d ldb=%d ldc=%d",
             args->trans_a, args->trans_b, d->m, d->n, d->k, d->lda, d->ldb, d->ldc);
    const float alpha = 1.5f, beta = 0.5f;
    c_snapshot before;
    start_invalid_call(&before);

    sgemm_(&args->trans_a, &args->trans_b, &d->m, &d->n, &d->k, &alpha, buffer_a, &d->lda,
           buffer_b, &d->ldb, &beta, buffer_c, &d->ldc);

    int ok = check_handler_calls(label, 0, 1);
    snprintf(detail, sizeof detail, "info %d, expected %d", seen.info, info);
    ok &= check(seen.info == info, label, detail);
    snprintf(detail, sizeof detail, "routine '%s' (length %zu), expected 'SGEMM ' (6)",
             seen.routine, seen.routine_len);
    ok &= check(seen.routine_len == 6 && strcmp(seen.routine, "SGEMM ") == 0, label, detail);
    ok &= check(seen.row_major_strg == 0, label, "RowMajorStrg set during a Fortran call");
    ok &= check(seen.call_from_c == 0, label, "CBLAS_CallFromC set during a Fortran call");
    ok &= check_c_unchanged(&before, label);
    tb_tally_record(&tally, ok, label);
}

static int trans_from_char(char c)
{
    switch (c) {
    case 'N': case 'n': return TB_NO_TRANS;
    case 'T': case 't': return TB_TRANS;
    default: return TB_CONJ_TRANS;
    }
}

static void check_f77_each_argument(tb_rng *rng)
{
    static const struct {
        invalid_dim bad;
        int info;
    } cases[] = {
        {NEGATIVE(m), 3}, {NEGATIVE(n), 4}, {NEGATIVE(k), 5},
        {BELOW_MIN(lda), 8}, {BELOW_MIN(ldb), 10}, {BELOW_MIN(ldc), 13},
    };
    static const char trans_chars[] = "NTCntc";
    for (int ai = 0; trans_chars[ai] != '\0'; ai++)
        for (int bi = 0; trans_chars[bi] != '\0'; bi++) {
            const char ta = trans_chars[ai], tb = trans_chars[bi];
            tb_gemm_case gc = {.layout = TB_COL_MAJOR, .trans_a = trans_from_char(ta),
                               .trans_b = trans_from_char(tb), .m = 5, .n = 7, .k = 3,
                               .alpha = 1.5f, .beta = 0.5f};
            tb_case_set_ld(&gc, 0, 0, 0);
            expect_valid_gemm(&gc, 1, ta, tb, rng);

            const gemm_dims valid = {gc.m, gc.n, gc.k, gc.lda, gc.ldb, gc.ldc};
            for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                const f77_args args = {ta, tb, with_invalid(valid, cases[i].bad)};
                expect_f77_error(&args, cases[i].info);
            }
        }
}

static void check_f77_order(void)
{
    /* 5x7x3 'N' 'N': LDA 5, LDB 3, LDC 5. */
    const struct {
        f77_args args;
        int info;
    } cases[] = {
        {{'X', 'N', {5, 7, 3, 5, 3, 5}}, 1},
        {{'x', 'N', {5, 7, 3, 5, 3, 5}}, 1},
        {{'A', 'N', {5, 7, 3, 5, 3, 5}}, 1},
        {{' ', 'N', {5, 7, 3, 5, 3, 5}}, 1},
        {{'N', 'Y', {5, 7, 3, 5, 3, 5}}, 2},
        {{'N', 'y', {5, 7, 3, 5, 3, 5}}, 2},
        {{'X', 'Y', {5, 7, 3, 5, 3, 5}}, 1},
        {{'X', 'N', {-1, -1, -1, 0, 0, 0}}, 1},
        {{'T', 'Z', {-1, 7, 3, 3, 3, 5}}, 2},
        {{'N', 'N', {-1, -1, 3, 5, 3, 5}}, 3},
        {{'N', 'N', {-1, 7, 3, 0, 3, 5}}, 3},
        {{'N', 'N', {5, -1, -1, 5, 3, 5}}, 4},
        {{'N', 'N', {5, 7, -1, 4, 3, 5}}, 5},
        {{'N', 'N', {5, 7, 3, 4, 2, 5}}, 8},
        {{'N', 'N', {5, 7, 3, 5, 2, 4}}, 10},
        {{'t', 'c', {5, 7, 3, 2, 7, 5}}, 8},
        {{'t', 'c', {5, 7, 3, 3, 6, 5}}, 10},
        /* checked before any quick return */
        {{'Q', 'N', {0, 7, 3, 1, 3, 1}}, 1},
        {{'N', 'Q', {0, 0, 0, 1, 1, 1}}, 2},
        {{'N', 'N', {0, 7, 3, 0, 3, 1}}, 8},
        {{'N', 'N', {0, 0, 0, 1, 1, 0}}, 13},
        {{'N', 'N', {5, 7, 0, 5, 0, 5}}, 10},
        {{'N', 'T', {5, 0, 3, 5, 0, 5}}, 10},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_f77_error(&cases[i].args, cases[i].info);
}

int main(void)
{
    tb_ref_cblas_sgemm(); /* fail early if the reference is missing */
    tb_rng rng;
    tb_rng_seed(&rng, 7);
    for (int i = 0; i < BUFFER_SIZE; i++) {
        buffer_a[i] = tb_rng_uniform(&rng);
        buffer_b[i] = tb_rng_uniform(&rng);
        buffer_c[i] = tb_rng_uniform(&rng);
    }

    check_cblas_each_argument(&rng);
    check_cblas_order();
    check_f77_each_argument(&rng);
    check_f77_order();

    return tb_tally_report(&tally);
}
