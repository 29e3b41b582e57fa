/*
 * cblas_sgemm against OpenBLAS over a grid of layouts, transposes, shapes,
 * leading dimensions and alpha/beta, element-wise within a K-scaled bound,
 * with NaN planted wherever the reference semantics forbid a read, plus
 * NaN/Inf propagation spot checks.
 *
 * Options: --max-dim N (skip shapes with a larger dimension), --seed N,
 *          --expect-backend TEXT (tiledblas_cpu_backend() must contain TEXT).
 * With TILEDBLAS_DEVICE=gpu and no usable GPU it exits 77 (skipped).
 */
#include "refblas.h"
#include "testutil.h"
#include "tiledblas.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct shape {
    int m, n, k;
    int subset; /* 0: every alpha/beta pair; else the first `subset` of large_subset */
} shape;

typedef struct scalars {
    float alpha, beta;
} scalars;

static const shape grid_shapes[] = {
    {0, 0, 0, 0}, {1, 1, 1, 0}, {2, 2, 2, 0}, {3, 3, 3, 0}, {7, 7, 7, 0},
    {16, 16, 16, 0}, {17, 17, 17, 0}, {31, 31, 31, 0}, {33, 33, 33, 0},
    {64, 64, 64, 0}, {65, 65, 65, 0}, {127, 127, 127, 0}, {129, 129, 129, 0},
    {255, 255, 255, 0}, {1000, 1000, 1000, 3}, {1023, 1025, 513, 2},
    /* vectors in disguise, rank one, empty results and empty sums */
    {1, 300, 200, 0}, {300, 1, 200, 0}, {200, 300, 1, 0},
    {0, 5, 7, 0}, {5, 0, 7, 0}, {5, 7, 0, 0},
    /* mixed, no dimension a multiple of a tile */
    {45, 17, 130, 0}, {130, 45, 17, 0}, {17, 130, 45, 0}, {63, 97, 300, 0},
    {300, 66, 9, 0}, {2, 129, 3, 0},
};

static const float scalar_values[] = {0.0f, 1.0f, -1.0f, 0.7f, 1.3f};
#define SCALAR_COUNT (sizeof scalar_values / sizeof scalar_values[0])

/* Large shapes run a few alpha/beta pairs only, to keep the CPU reference affordable. */
static const scalars large_subset[] = {{1.0f, 0.0f}, {0.7f, 1.3f}, {-1.0f, -1.0f}};

static const int layouts[] = {TB_ROW_MAJOR, TB_COL_MAJOR};
static const int transposes[] = {TB_NO_TRANS, TB_TRANS, TB_CONJ_TRANS};

static int passed, failed;

static void record(size_t problems, const char *label)
{
    if (problems == 0) {
        passed++;
    } else {
        failed++;
        fprintf(stderr, "  in case: %s\n", label);
    }
}

static void call_tiledblas(const tb_gemm_case *gc, const float *a, const float *b, float *c)
{
    cblas_sgemm((CBLAS_LAYOUT)gc->layout, (CBLAS_TRANSPOSE)gc->trans_a,
                (CBLAS_TRANSPOSE)gc->trans_b, gc->m, gc->n, gc->k, gc->alpha, a,
                gc->lda, b, gc->ldb, gc->beta, c, gc->ldc);
}

/* Runs one case on prepared operands and checks it against the reference. */
static void run_grid_case(const tb_gemm_case *gc, const tb_gemm_operands *ops)
{
    char label[256];
    tb_case_describe(gc, label, sizeof label);

    tb_matrix got, ref;
    tb_matrix_clone(&got, &ops->c0);
    if (gc->beta == 0.0f)
        tb_matrix_fill_view(&got, NAN); /* must be overwritten unread */
    call_tiledblas(gc, ops->a.data, ops->b.data, got.data);
    tb_run_reference(gc, ops, &ref);
    record(tb_check_case(gc, ops, &got, &ref, label), label);
    tb_matrix_free(&got);
    tb_matrix_free(&ref);
}

static int max_of(int a, int b, int c)
{
    int ab = a > b ? a : b;
    return ab > c ? ab : c;
}

static void run_shape(const shape *s, tb_rng *rng)
{
    const int large = s->subset > 0;
    const int failed_before = failed, cases_before = passed + failed;

    for (int li = 0; li < 2; li++)
        for (int ai = 0; ai < 3; ai++)
            for (int bi = 0; bi < 3; bi++)
                for (int padded = 0; padded < 2; padded++) {
                    /* Large shapes alternate exact and padded over the combinations. */
                    if (large && padded != (li + ai + bi) % 2)
                        continue;
                    tb_gemm_case gc = {
                        .layout = layouts[li], .trans_a = transposes[ai],
                        .trans_b = transposes[bi], .m = s->m, .n = s->n, .k = s->k,
                    };
                    /* Different pads per operand: no accidental agreement between lds. */
                    tb_case_set_ld(&gc, padded ? 3 : 0, padded ? 1 : 0, padded ? 5 : 0);
                    tb_gemm_operands ops;
                    tb_operands_make(&ops, &gc, rng);
                    if (large) {
                        for (int si = 0; si < s->subset; si++) {
                            gc.alpha = large_subset[si].alpha;
                            gc.beta = large_subset[si].beta;
                            run_grid_case(&gc, &ops);
                        }
                    } else {
                        for (size_t x = 0; x < SCALAR_COUNT; x++)
                            for (size_t y = 0; y < SCALAR_COUNT; y++) {
                                gc.alpha = scalar_values[x];
                                gc.beta = scalar_values[y];
                                run_grid_case(&gc, &ops);
                            }
                    }
                    tb_operands_free(&ops);
                }
    printf("shape %dx%dx%d: %d cases, %d failed\n", s->m, s->n, s->k,
           passed + failed - cases_before, failed - failed_before);
    fflush(stdout);
}

/* Index in stored A (or B) of op()(i, p). */
static size_t op_index(const tb_matrix *stored, int trans, int i, int p)
{
    return trans == TB_NO_TRANS ? tb_matrix_index(stored, i, p) : tb_matrix_index(stored, p, i);
}

/* After planting values in A, B or C0: the pristine copies must match again. */
static void refresh_originals(tb_gemm_operands *ops)
{
    tb_matrix_free(&ops->a_orig);
    tb_matrix_free(&ops->b_orig);
    tb_matrix_clone(&ops->a_orig, &ops->a);
    tb_matrix_clone(&ops->b_orig, &ops->b);
}

/* Runs the case, checks it against the reference; `got` is left for extra checks. */
static size_t run_and_check(const tb_gemm_case *gc, const tb_gemm_operands *ops,
                            tb_matrix *got, const char *label)
{
    tb_matrix ref;
    call_tiledblas(gc, ops->a.data, ops->b.data, got->data);
    tb_run_reference(gc, ops, &ref);
    size_t problems = tb_check_case(gc, ops, got, &ref, label);
    tb_matrix_free(&ref);
    return problems;
}

static size_t expect_nan(float value, const char *label, int i, int j)
{
    if (isnan(value))
        return 0;
    fprintf(stderr, "FAIL %s: C(%d,%d) = %g, expected NaN\n", label, i, j, (double)value);
    return 1;
}

static size_t expect_finite(float value, const char *label, int i, int j)
{
    if (isfinite(value))
        return 0;
    fprintf(stderr, "FAIL %s: C(%d,%d) = %g, expected a finite value\n", label, i, j, (double)value);
    return 1;
}

/* NaN at op(A)(row, p): the whole row of C is NaN, the rest finite. */
static void check_nan_in_a(tb_gemm_case gc, tb_rng *rng)
{
    char label[300], desc[256];
    tb_case_describe(&gc, desc, sizeof desc);
    snprintf(label, sizeof label, "NaN in A: %s", desc);
    const int row = 4, depth = 2;

    tb_gemm_operands ops;
    tb_operands_make(&ops, &gc, rng);
    ops.a.data[op_index(&ops.a, gc.trans_a, row, depth)] = NAN;
    refresh_originals(&ops);
    tb_matrix got;
    tb_matrix_clone(&got, &ops.c0);
    size_t problems = run_and_check(&gc, &ops, &got, label);
    for (int i = 0; i < gc.m; i++)
        for (int j = 0; j < gc.n; j++) {
            float value = got.data[tb_matrix_index(&got, i, j)];
            problems += i == row ? expect_nan(value, label, i, j) : expect_finite(value, label, i, j);
        }
    record(problems, label);
    tb_matrix_free(&got);
    tb_operands_free(&ops);
}

/* NaN at op(B)(p, col): the whole column of C is NaN, the rest finite. */
static void check_nan_in_b(tb_gemm_case gc, tb_rng *rng)
{
    char label[300], desc[256];
    tb_case_describe(&gc, desc, sizeof desc);
    snprintf(label, sizeof label, "NaN in B: %s", desc);
    const int col = 3, depth = 1;

    tb_gemm_operands ops;
    tb_operands_make(&ops, &gc, rng);
    ops.b.data[op_index(&ops.b, gc.trans_b, depth, col)] = NAN;
    refresh_originals(&ops);
    tb_matrix got;
    tb_matrix_clone(&got, &ops.c0);
    size_t problems = run_and_check(&gc, &ops, &got, label);
    for (int i = 0; i < gc.m; i++)
        for (int j = 0; j < gc.n; j++) {
            float value = got.data[tb_matrix_index(&got, i, j)];
            problems += j == col ? expect_nan(value, label, i, j) : expect_finite(value, label, i, j);
        }
    record(problems, label);
    tb_matrix_free(&got);
    tb_operands_free(&ops);
}

/* +Inf at op(A)(row, p): C(row, j) is Inf with the sign of alpha * op(B)(p, j). */
static void check_inf_in_a(tb_gemm_case gc, tb_rng *rng)
{
    char label[300], desc[256];
    tb_case_describe(&gc, desc, sizeof desc);
    snprintf(label, sizeof label, "Inf in A: %s", desc);
    const int row = 1, depth = 3;

    tb_gemm_operands ops;
    tb_operands_make(&ops, &gc, rng);
    ops.a.data[op_index(&ops.a, gc.trans_a, row, depth)] = INFINITY;
    refresh_originals(&ops);
    tb_matrix got;
    tb_matrix_clone(&got, &ops.c0);
    size_t problems = run_and_check(&gc, &ops, &got, label);
    for (int j = 0; j < gc.n; j++) {
        float b = ops.b.data[op_index(&ops.b, gc.trans_b, depth, j)];
        float value = got.data[tb_matrix_index(&got, row, j)];
        if (b == 0.0f) {
            problems += expect_nan(value, label, row, j); /* Inf * 0 */
        } else if (!isinf(value) || signbit(value) != signbit(gc.alpha * b)) {
            fprintf(stderr, "FAIL %s: C(%d,%d) = %g, expected %sInf\n", label, row, j,
                    (double)value, signbit(gc.alpha * b) ? "-" : "+");
            problems++;
        }
    }
    record(problems, label);
    tb_matrix_free(&got);
    tb_operands_free(&ops);
}

/* Inf in C with beta != 0 stays Inf (sign of beta) and touches nothing else. */
static void check_inf_in_c(tb_gemm_case gc, tb_rng *rng)
{
    char label[300], desc[256];
    tb_case_describe(&gc, desc, sizeof desc);
    snprintf(label, sizeof label, "Inf in C: %s", desc);
    const int row = 2, col = 5;

    tb_gemm_operands ops;
    tb_operands_make(&ops, &gc, rng);
    ops.c0.data[tb_matrix_index(&ops.c0, row, col)] = -INFINITY;
    tb_matrix got;
    tb_matrix_clone(&got, &ops.c0);
    size_t problems = run_and_check(&gc, &ops, &got, label);
    for (int i = 0; i < gc.m; i++)
        for (int j = 0; j < gc.n; j++) {
            float value = got.data[tb_matrix_index(&got, i, j)];
            if (i != row || j != col) {
                problems += expect_finite(value, label, i, j);
            } else if (!isinf(value) || signbit(value) == signbit(gc.beta)) {
                fprintf(stderr, "FAIL %s: C(%d,%d) = %g, expected -beta * Inf\n", label, i, j,
                        (double)value);
                problems++;
            }
        }
    record(problems, label);
    tb_matrix_free(&got);
    tb_operands_free(&ops);
}

/* C must be exactly beta * C0: the product term is absent, not computed. */
static size_t expect_scaled_c0(const tb_gemm_case *gc, const tb_gemm_operands *ops,
                               const tb_matrix *got, const char *label)
{
    size_t problems = 0;
    for (int i = 0; i < gc->m; i++)
        for (int j = 0; j < gc->n; j++) {
            size_t at = tb_matrix_index(got, i, j);
            float expected = gc->beta == 0.0f ? 0.0f : gc->beta * ops->c0.data[at];
            if (!(got->data[at] == expected) && problems++ < 5)
                fprintf(stderr, "FAIL %s: C(%d,%d) = %g, expected beta*C0 = %g\n", label, i, j,
                        (double)got->data[at], (double)expected);
        }
    return problems;
}

/* alpha == 0: A and B are not read, so NaN there must not reach C. */
static void check_alpha_zero_ignores_ab(tb_gemm_case gc, float beta, tb_rng *rng)
{
    gc.alpha = 0.0f;
    gc.beta = beta;
    char label[300], desc[256];
    tb_case_describe(&gc, desc, sizeof desc);
    snprintf(label, sizeof label, "alpha=0 with NaN A and B: %s", desc);

    tb_gemm_operands ops;
    tb_operands_make(&ops, &gc, rng);
    tb_matrix_fill_view(&ops.a, NAN);
    tb_matrix_fill_view(&ops.b, NAN);
    refresh_originals(&ops);
    tb_matrix got;
    tb_matrix_clone(&got, &ops.c0);
    if (beta == 0.0f)
        tb_matrix_fill_view(&got, NAN);
    size_t problems = run_and_check(&gc, &ops, &got, label);
    problems += expect_scaled_c0(&gc, &ops, &got, label);
    record(problems, label);
    tb_matrix_free(&got);
    tb_operands_free(&ops);
}

/* K == 0: the sum is empty; A and B (only guards, all NaN) are not read. */
static void check_k_zero_ignores_ab(tb_gemm_case gc, float beta, tb_rng *rng)
{
    gc.k = 0;
    gc.beta = beta;
    tb_case_set_ld(&gc, 1, 2, 0);
    char label[300], desc[256];
    tb_case_describe(&gc, desc, sizeof desc);
    snprintf(label, sizeof label, "K=0: %s", desc);

    tb_gemm_operands ops;
    tb_operands_make(&ops, &gc, rng);
    tb_matrix got;
    tb_matrix_clone(&got, &ops.c0);
    if (beta == 0.0f)
        tb_matrix_fill_view(&got, NAN);
    size_t problems = run_and_check(&gc, &ops, &got, label);
    problems += expect_scaled_c0(&gc, &ops, &got, label);
    record(problems, label);
    tb_matrix_free(&got);
    tb_operands_free(&ops);
}

/* beta == 0: C is not read, so NaN and Inf already there must not survive. */
static void check_beta_zero_ignores_c(tb_gemm_case gc, tb_rng *rng)
{
    gc.beta = 0.0f;
    char label[300], desc[256];
    tb_case_describe(&gc, desc, sizeof desc);
    snprintf(label, sizeof label, "beta=0 with NaN/Inf in C: %s", desc);
    static const float poison[] = {NAN, INFINITY, -INFINITY};

    tb_gemm_operands ops;
    tb_operands_make(&ops, &gc, rng);
    tb_matrix got;
    tb_matrix_clone(&got, &ops.c0);
    for (int i = 0; i < gc.m; i++)
        for (int j = 0; j < gc.n; j++)
            got.data[tb_matrix_index(&got, i, j)] = poison[(i + j) % 3];
    record(run_and_check(&gc, &ops, &got, label), label);
    tb_matrix_free(&got);
    tb_operands_free(&ops);
}

static void run_special_value_checks(tb_rng *rng)
{
    static const int trans_pairs[][2] = {
        {TB_NO_TRANS, TB_NO_TRANS}, {TB_TRANS, TB_CONJ_TRANS}, {TB_CONJ_TRANS, TB_TRANS},
        {TB_NO_TRANS, TB_TRANS},
    };
    const int failed_before = failed, cases_before = passed + failed;

    for (int li = 0; li < 2; li++)
        for (size_t t = 0; t < sizeof trans_pairs / sizeof trans_pairs[0]; t++) {
            tb_gemm_case gc = {
                .layout = layouts[li], .trans_a = trans_pairs[t][0],
                .trans_b = trans_pairs[t][1], .m = 9, .n = 7, .k = 5,
                .alpha = 0.7f, .beta = 1.3f,
            };
            tb_case_set_ld(&gc, 2, 1, 3);
            check_nan_in_a(gc, rng);
            check_nan_in_b(gc, rng);
            check_inf_in_a(gc, rng);
            gc.alpha = -1.3f;
            check_inf_in_a(gc, rng);
            check_inf_in_c(gc, rng);
            check_alpha_zero_ignores_ab(gc, 0.7f, rng);
            check_alpha_zero_ignores_ab(gc, 0.0f, rng);
            check_k_zero_ignores_ab(gc, -1.3f, rng);
            check_k_zero_ignores_ab(gc, 0.0f, rng);
            check_beta_zero_ignores_c(gc, rng);
        }
    printf("special values: %d cases, %d failed\n", passed + failed - cases_before,
           failed - failed_before);
}

static int parse_int_option(const char *name, const char *value, long *out)
{
    char *end;
    if (value == NULL) {
        fprintf(stderr, "%s needs a value\n", name);
        return 0;
    }
    *out = strtol(value, &end, 10);
    if (*end != '\0' || *out < 0) {
        fprintf(stderr, "%s: invalid value '%s'\n", name, value);
        return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    long max_dim = -1, seed = 20240601;
    const char *expect_backend = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--max-dim") == 0) {
            if (!parse_int_option(argv[i], argv[i + 1], &max_dim))
                return 2;
            i++;
        } else if (strcmp(argv[i], "--seed") == 0) {
            if (!parse_int_option(argv[i], argv[i + 1], &seed))
                return 2;
            i++;
        } else if (strcmp(argv[i], "--expect-backend") == 0 && i + 1 < argc) {
            expect_backend = argv[++i];
        } else {
            fprintf(stderr, "usage: %s [--max-dim N] [--seed N] [--expect-backend TEXT]\n", argv[0]);
            return 2;
        }
    }

    if (tb_env_forces_gpu() && !tiledblas_gpu_available()) {
        printf("SKIP: TILEDBLAS_DEVICE=gpu but no usable GPU\n");
        return 77;
    }
    tb_ref_cblas_sgemm(); /* fail early if the reference is missing */
    printf("tiledblas %s, GPU available: %d, seed %ld\n", tiledblas_version(),
           tiledblas_gpu_available(), seed);

    tb_rng rng;
    tb_rng_seed(&rng, (uint64_t)seed);
    const size_t shape_count = sizeof grid_shapes / sizeof grid_shapes[0];
    for (size_t s = 0; s < shape_count; s++) {
        const shape *sh = &grid_shapes[s];
        if (max_dim >= 0 && max_of(sh->m, sh->n, sh->k) > max_dim)
            continue;
        run_shape(sh, &rng);
    }
    run_special_value_checks(&rng);

    const char *backend = tiledblas_cpu_backend();
    printf("CPU backend: %s\n", backend);
    if (expect_backend != NULL && strstr(backend, expect_backend) == NULL) {
        fprintf(stderr, "FAIL: CPU backend '%s' does not contain '%s'\n", backend, expect_backend);
        failed++;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
