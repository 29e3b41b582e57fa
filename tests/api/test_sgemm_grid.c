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

#include <cuda_runtime_api.h>
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
    /* C too small to fill the GPU, K long: split-K, the last slice ragged */
    {100, 70, 3000, 2}, {33, 129, 2049, 2},
    /* K past 4096 on a small C: split across blocks in slices within best.c's 4096-product chains */
    {70, 45, 9000, 2},
    /* pipelined: five panels of 256 columns, the last one in halves; K in two slices */
    {67, 1280, 600, 1},
    /* pipelined with K and M tiny: one slice of the first panels outgrows a slot's panels */
    {1, 4194304, 2, 1},
};

static const float scalar_values[] = {0.0f, 1.0f, -1.0f, 0.7f, 1.3f};
#define SCALAR_COUNT (sizeof scalar_values / sizeof scalar_values[0])

/* Large shapes run a few alpha/beta pairs only, to keep the CPU reference affordable. */
static const scalars large_subset[] = {{1.0f, 0.0f}, {0.7f, 1.3f}, {-1.0f, -1.0f}};

static tb_tally tally;

/* Runs one case on prepared operands and checks it against the reference. */
static void run_grid_case(const tb_gemm_case *gc, const tb_gemm_operands *ops)
{
    char label[256];
    tb_case_describe(gc, label, sizeof label);
    tb_tally_record(&tally, tb_run_case(gc, ops, label) == 0, label);
}

static int max_of(int a, int b, int c)
{
    int ab = a > b ? a : b;
    return ab > c ? ab : c;
}

/* "WHAT: N cases, M failed" for the cases since `before`. */
static void print_progress(const char *what, const tb_tally *before)
{
    const int failed = tally.failed - before->failed;
    printf("%s: %d cases, %d failed\n", what, tally.passed - before->passed + failed, failed);
    fflush(stdout);
}

static void run_shape(const shape *s, tb_rng *rng)
{
    const int large = s->subset > 0;
    const tb_tally before = tally;

    for (int li = 0; li < 2; li++)
        for (int ai = 0; ai < 3; ai++)
            for (int bi = 0; bi < 3; bi++)
                for (int padded = 0; padded < 2; padded++) {
                    /* Large shapes alternate exact and padded over the combinations. */
                    if (large && padded != (li + ai + bi) % 2)
                        continue;
                    tb_gemm_case gc = {
                        .layout = tb_layouts[li], .trans_a = tb_transposes[ai],
                        .trans_b = tb_transposes[bi], .m = s->m, .n = s->n, .k = s->k,
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
    char what[64];
    snprintf(what, sizeof what, "shape %dx%dx%d", s->m, s->n, s->k);
    print_progress(what, &before);
}

/* Index in stored A (or B) of op()(i, p). */
static size_t op_index(const tb_matrix *stored, int trans, int i, int p)
{
    return trans == TB_NO_TRANS ? tb_matrix_index(stored, i, p) : tb_matrix_index(stored, p, i);
}

/* A special-value case: random operands in which the caller plants values, and C after the call. */
typedef struct special_case {
    tb_gemm_case gc;
    tb_gemm_operands ops;
    tb_matrix got;
    char label[300];
} special_case;

/* C starts as C0 (all NaN if beta == 0); values planted in C0 must go into C as well. */
static special_case special_begin(const tb_gemm_case *gc, const char *what, tb_rng *rng)
{
    special_case sc = {.gc = *gc};
    tb_case_label(gc, what, sc.label, sizeof sc.label);
    tb_operands_make(&sc.ops, gc, rng);
    tb_start_c(&sc.got, &sc.ops.c0, gc->beta);
    return sc;
}

/* After planting: the pristine copies of A and B must match again. */
static size_t special_run(special_case *sc)
{
    tb_matrix_free(&sc->ops.a_orig);
    tb_matrix_free(&sc->ops.b_orig);
    tb_matrix_clone(&sc->ops.a_orig, &sc->ops.a);
    tb_matrix_clone(&sc->ops.b_orig, &sc->ops.b);
    return tb_run_and_check(&sc->gc, &sc->ops, &sc->got, sc->label);
}

static void special_end(special_case *sc, size_t problems)
{
    tb_tally_record(&tally, problems == 0, sc->label);
    tb_matrix_free(&sc->got);
    tb_operands_free(&sc->ops);
}

/* 0 if ok; else reports C(i, j), which should have been `expected`, and counts 1. */
static size_t expect(int ok, float value, const char *expected, const char *label, int i, int j)
{
    if (ok)
        return 0;
    fprintf(stderr, "FAIL %s: C(%d,%d) = %g, expected %s\n", label, i, j, (double)value, expected);
    return 1;
}

/* Row nan_row and column nan_col of C are NaN (-1: none), the rest finite. */
static size_t expect_nan_lines(const special_case *sc, int nan_row, int nan_col)
{
    size_t problems = 0;
    for (int i = 0; i < sc->gc.m; i++)
        for (int j = 0; j < sc->gc.n; j++) {
            float value = sc->got.data[tb_matrix_index(&sc->got, i, j)];
            problems += i == nan_row || j == nan_col
                            ? expect(isnan(value), value, "NaN", sc->label, i, j)
                            : expect(isfinite(value), value, "a finite value", sc->label, i, j);
        }
    return problems;
}

/* NaN at op(A)(row, p): the whole row of C is NaN, the rest finite. */
static void check_nan_in_a(const tb_gemm_case *gc, tb_rng *rng)
{
    const int row = 4, depth = 2;
    special_case sc = special_begin(gc, "NaN in A", rng);
    sc.ops.a.data[op_index(&sc.ops.a, gc->trans_a, row, depth)] = NAN;
    size_t problems = special_run(&sc);
    special_end(&sc, problems + expect_nan_lines(&sc, row, -1));
}

/* NaN at op(B)(p, col): the whole column of C is NaN, the rest finite. */
static void check_nan_in_b(const tb_gemm_case *gc, tb_rng *rng)
{
    const int col = 3, depth = 1;
    special_case sc = special_begin(gc, "NaN in B", rng);
    sc.ops.b.data[op_index(&sc.ops.b, gc->trans_b, depth, col)] = NAN;
    size_t problems = special_run(&sc);
    special_end(&sc, problems + expect_nan_lines(&sc, -1, col));
}

/* +Inf at op(A)(row, p): C(row, j) is Inf with the sign of alpha * op(B)(p, j). */
static void check_inf_in_a(const tb_gemm_case *gc, tb_rng *rng)
{
    const int row = 1, depth = 3;
    special_case sc = special_begin(gc, "Inf in A", rng);
    sc.ops.a.data[op_index(&sc.ops.a, gc->trans_a, row, depth)] = INFINITY;
    size_t problems = special_run(&sc);
    for (int j = 0; j < gc->n; j++) {
        float b = sc.ops.b.data[op_index(&sc.ops.b, gc->trans_b, depth, j)];
        float value = sc.got.data[tb_matrix_index(&sc.got, row, j)];
        if (b == 0.0f)
            problems += expect(isnan(value), value, "NaN", sc.label, row, j); /* Inf * 0 */
        else
            problems += expect(isinf(value) && signbit(value) == signbit(gc->alpha * b), value,
                               signbit(gc->alpha * b) ? "-Inf" : "+Inf", sc.label, row, j);
    }
    special_end(&sc, problems);
}

/*
 * Over a deep K (which the tensor rung splits across blocks): +Inf at op(A)(1, 3), as check_inf_in_a;
 * in row 2, +Inf near the end of K and -Inf near its start, in different splits: C(2, j) is Inf where
 * the two infinite products have one sign, NaN where they cancel or one meets a zero.
 */
static void check_infs_across_k(const tb_gemm_case *gc, tb_rng *rng)
{
    const int near = 5, far = gc->k - 3;
    special_case sc = special_begin(gc, "Inf in A across K", rng);
    sc.ops.a.data[op_index(&sc.ops.a, gc->trans_a, 1, 3)] = INFINITY;
    sc.ops.a.data[op_index(&sc.ops.a, gc->trans_a, 2, far)] = INFINITY;
    sc.ops.a.data[op_index(&sc.ops.a, gc->trans_a, 2, near)] = -INFINITY;
    size_t problems = special_run(&sc);
    for (int j = 0; j < gc->n; j++) {
        const float b = sc.ops.b.data[op_index(&sc.ops.b, gc->trans_b, 3, j)];
        const float one = sc.got.data[tb_matrix_index(&sc.got, 1, j)];
        if (b == 0.0f)
            problems += expect(isnan(one), one, "NaN", sc.label, 1, j);
        else
            problems += expect(isinf(one) && signbit(one) == signbit(gc->alpha * b), one,
                               signbit(gc->alpha * b) ? "-Inf" : "+Inf", sc.label, 1, j);
        const float b_far = sc.ops.b.data[op_index(&sc.ops.b, gc->trans_b, far, j)];
        const float b_near = sc.ops.b.data[op_index(&sc.ops.b, gc->trans_b, near, j)];
        const float two = sc.got.data[tb_matrix_index(&sc.got, 2, j)];
        if (b_far == 0.0f || b_near == 0.0f || signbit(gc->alpha * b_far) != signbit(-gc->alpha * b_near))
            problems += expect(isnan(two), two, "NaN", sc.label, 2, j);
        else
            problems += expect(isinf(two) && signbit(two) == signbit(gc->alpha * b_far), two,
                               signbit(gc->alpha * b_far) ? "-Inf" : "+Inf", sc.label, 2, j);
    }
    special_end(&sc, problems);
}

/* Inf in C with beta != 0 stays Inf (sign of beta) and touches nothing else. */
static void check_inf_in_c(const tb_gemm_case *gc, tb_rng *rng)
{
    const int row = 2, col = 5;
    special_case sc = special_begin(gc, "Inf in C", rng);
    const size_t at = tb_matrix_index(&sc.got, row, col);
    sc.ops.c0.data[at] = sc.got.data[at] = -INFINITY;
    size_t problems = special_run(&sc);
    for (int i = 0; i < gc->m; i++)
        for (int j = 0; j < gc->n; j++) {
            float value = sc.got.data[tb_matrix_index(&sc.got, i, j)];
            if (i != row || j != col)
                problems += expect(isfinite(value), value, "a finite value", sc.label, i, j);
            else
                problems += expect(isinf(value) && signbit(value) != signbit(gc->beta), value,
                                   "-beta * Inf", sc.label, i, j);
        }
    special_end(&sc, problems);
}

/* C must be exactly beta * C0: the product term is absent, not computed. */
static size_t expect_scaled_c0(const special_case *sc)
{
    size_t problems = 0;
    for (int i = 0; i < sc->gc.m; i++)
        for (int j = 0; j < sc->gc.n; j++) {
            size_t at = tb_matrix_index(&sc->got, i, j);
            float expected = sc->gc.beta == 0.0f ? 0.0f : sc->gc.beta * sc->ops.c0.data[at];
            if (!(sc->got.data[at] == expected) && problems++ < 5)
                fprintf(stderr, "FAIL %s: C(%d,%d) = %g, expected beta*C0 = %g\n", sc->label, i,
                        j, (double)sc->got.data[at], (double)expected);
        }
    return problems;
}

/*
 * alpha == 0 or K == 0: the result is exactly beta*C0, so no reference BLAS is
 * consulted (some OpenBLAS kernels compute 0*NaN there); padding stays untouched.
 */
static size_t special_run_exact(special_case *sc)
{
    tb_call_tiledblas(&sc->gc, sc->ops.a.data, sc->ops.b.data, sc->got.data);
    return tb_matrix_padding_errors(&sc->got) + expect_scaled_c0(sc);
}

/* alpha == 0: A and B are not read, so NaN there must not reach C. */
static void check_alpha_zero_ignores_ab(tb_gemm_case gc, float beta, tb_rng *rng)
{
    gc.alpha = 0.0f;
    gc.beta = beta;
    special_case sc = special_begin(&gc, "alpha=0 with NaN A and B", rng);
    tb_matrix_fill_view(&sc.ops.a, NAN);
    tb_matrix_fill_view(&sc.ops.b, NAN);
    special_end(&sc, special_run_exact(&sc));
}

/* K == 0: the sum is empty; A and B (only guards, all NaN) are not read. */
static void check_k_zero_ignores_ab(tb_gemm_case gc, float beta, tb_rng *rng)
{
    gc.k = 0;
    gc.beta = beta;
    tb_case_set_ld(&gc, 1, 2, 0);
    special_case sc = special_begin(&gc, "K=0", rng);
    special_end(&sc, special_run_exact(&sc));
}

/* beta == 0: C is not read, so NaN and Inf already there must not survive. */
static void check_beta_zero_ignores_c(tb_gemm_case gc, tb_rng *rng)
{
    gc.beta = 0.0f;
    static const float poison[] = {NAN, INFINITY, -INFINITY};
    special_case sc = special_begin(&gc, "beta=0 with NaN/Inf in C", rng);
    for (int i = 0; i < gc.m; i++)
        for (int j = 0; j < gc.n; j++)
            sc.got.data[tb_matrix_index(&sc.got, i, j)] = poison[(i + j) % 3];
    special_end(&sc, special_run(&sc));
}

static void run_special_value_checks(tb_rng *rng)
{
    static const int trans_pairs[][2] = {
        {TB_NO_TRANS, TB_NO_TRANS}, {TB_TRANS, TB_CONJ_TRANS}, {TB_CONJ_TRANS, TB_TRANS},
        {TB_NO_TRANS, TB_TRANS},
    };
    const tb_tally before = tally;

    for (int li = 0; li < 2; li++)
        for (size_t t = 0; t < sizeof trans_pairs / sizeof trans_pairs[0]; t++) {
            tb_gemm_case gc = {
                .layout = tb_layouts[li], .trans_a = trans_pairs[t][0],
                .trans_b = trans_pairs[t][1], .m = 9, .n = 7, .k = 5,
                .alpha = 0.7f, .beta = 1.3f,
            };
            tb_case_set_ld(&gc, 2, 1, 3);
            check_nan_in_a(&gc, rng);
            check_nan_in_b(&gc, rng);
            check_inf_in_a(&gc, rng);
            gc.alpha = -1.3f;
            check_inf_in_a(&gc, rng);
            check_inf_in_c(&gc, rng);
            check_alpha_zero_ignores_ab(gc, 0.7f, rng);
            check_alpha_zero_ignores_ab(gc, 0.0f, rng);
            check_k_zero_ignores_ab(gc, -1.3f, rng);
            check_k_zero_ignores_ab(gc, 0.0f, rng);
            check_beta_zero_ignores_c(gc, rng);
            tb_gemm_case deep = gc;
            deep.k = 2000;
            tb_case_set_ld(&deep, 2, 1, 3);
            check_infs_across_k(&deep, rng);
        }
    print_progress("special values", &before);
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

/* TILEDBLAS_KERNEL=tf32x3 names a rung that runs on compute capability 9.0 only: elsewhere it has nothing
 * to test (the library runs best, with a warning). */
static void skip_tensor_rung_elsewhere(void)
{
    const char *kernel = getenv("TILEDBLAS_KERNEL");
    if (kernel == NULL || strcmp(kernel, "tf32x3") != 0)
        return;
    int device = 0, major = 0, minor = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess || major != 9 ||
        minor != 0) {
        printf("SKIP: the tensor-core rung needs a GPU of compute capability 9.0\n");
        exit(77);
    }
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

    tb_skip_if_forced_gpu_missing();
    skip_tensor_rung_elsewhere();
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
        tally.failed++;
    }
    return tb_tally_report(&tally);
}
