/*
 * Differential fuzz of cblas_sgemm and sgemm_ against OpenBLAS (reached
 * through its own dlopen handle). Every call is random: layout, transposes
 * (ConjTrans and invalid values included), sizes 0-300 skewed to the small,
 * leading dimensions with padding, alpha and beta among 0, 1, -1, NaN, +-Inf
 * and random values, NaN and Inf planted in A, B and C and in the padding,
 * each operand on the brk heap, in an mmap'ed block that ends at a guard page
 * (an overread faults), on the stack or in a static array.
 *
 * Checks of a valid call: A, B and every element of C outside its view keep
 * their bits; C's view equals the reference's bit for bit (any NaN equal to
 * any NaN) with --compare bits, or, with --compare bound, lies within
 *     |C - C_ref| <= 2 (K + 2) eps (|alpha| (|op(A)| |op(B)|)_ij + |beta| |C0_ij|)
 * with NaN and Inf at exactly the reference's positions. Each result is within
 * gamma(K + 2) ~ (K + 2) eps/2 of the exact one (K products summed, then alpha
 * and beta applied), so two of them differ by at most (K + 2) eps times the
 * bracket; the factor 2 (TB_BOUND_FACTOR) covers the bracket's own rounding.
 * alpha = +-Inf is left to the bits comparison: whether Inf times a sum of
 * mixed signs gives NaN or Inf depends on where an implementation applies alpha.
 * Checks of an invalid call: C, A and B untouched, and exactly one report to
 * the program's own handler with the reference's parameter number: cblas_xerbla
 * for cblas_sgemm's layout (1) and transposes (2, 3), xerbla_ for the Fortran
 * SGEMM's numbers (of the swapped call for a row-major one).
 *
 *   test_fuzz_sgemm --calls N --compare bits|bound [--expect-backend NAME]
 * TB_FUZZ_SEED (default 1234567) and TB_FUZZ_CALLS override the seed and the
 * number of calls. With TILEDBLAS_DEVICE=gpu and no usable GPU it exits 77.
 */
#include "refblas.h"
#include "testutil.h"
#include "tiledblas.h"

#include <float.h>
#include <malloc.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_SEED 1234567u
#define MAX_DIM 300
#define MAX_PAD 17
#define MAX_TOTAL (2 * TB_GUARD + (MAX_DIM + MAX_PAD) * MAX_DIM)
#define MAX_REPORTS 10

enum placement { ON_HEAP, ON_MMAP, ON_STACK, ON_STATIC, PLACEMENTS };
static const char *const placement_names[PLACEMENTS] = {"heap", "mmap", "stack", "static"};
enum role { ROLE_A, ROLE_B, ROLE_C, ROLES };
enum entry { ENTRY_CBLAS, ENTRY_F77 };
enum handler { NO_REPORT, TO_CBLAS_XERBLA, TO_XERBLA };

/* One call as the program makes it; for sgemm_, the transposes as characters. */
typedef struct fuzz_call {
    int entry;
    int layout, trans_a, trans_b; /* CBLAS values, any int for cblas_sgemm */
    char char_a, char_b;          /* sgemm_'s */
    int m, n, k, lda, ldb, ldc;
    float alpha, beta;
} fuzz_call;

/* An operand in memory: guard, the stored span (last element at data[span - 1]), guard. */
typedef struct operand {
    int placement;
    int rows, cols, ld, row_major; /* as stored */
    size_t span, total;             /* total: from base, guards included */
    float *base, *data;
    void *map;                      /* the mmap'ed block, guard page included */
    size_t map_bytes;
} operand;

static float static_area[ROLES][MAX_TOTAL];

/* What the program's handlers received. */
static struct {
    int cblas_calls, f77_calls, info;
} seen;

void cblas_xerbla(int info, const char *routine, const char *form, ...)
{
    (void)routine;
    (void)form;
    seen.cblas_calls++;
    seen.info = info;
}

/* Not declared by tiledblas.h on purpose: programs choose their own prototype. */
void xerbla_(const char *srname, const int *info, size_t len);
void xerbla_(const char *srname, const int *info, size_t len)
{
    (void)srname;
    (void)len;
    seen.f77_calls++;
    seen.info = *info;
}

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double uniform01(tb_rng *rng)
{
    return (double)(tb_rng_next(rng) >> 11) * 0x1p-53;
}

/* 0 and 1 often, else log-uniform in 1..MAX_DIM: most calls small, some 300 wide. */
static int random_dim(tb_rng *rng)
{
    switch (tb_rng_below(rng, 10)) {
    case 0: return 0;
    case 1: return 1;
    default: return (int)exp(uniform01(rng) * log(MAX_DIM + 1.0));
    }
}

static int random_pad(tb_rng *rng)
{
    return tb_rng_below(rng, 2) ? 0 : 1 + tb_rng_below(rng, MAX_PAD);
}

/* 0, 1, -1, NaN, +-Inf (not with `finite_or_nan`) or a random value in [-2, 2). */
static float special_or_random(tb_rng *rng, int finite_or_nan)
{
    switch (tb_rng_below(rng, 8)) {
    case 0: return 0.0f;
    case 1: return 1.0f;
    case 2: return -1.0f;
    case 3: return NAN;
    case 4: if (!finite_or_nan) return INFINITY; break;
    case 5: if (!finite_or_nan) return -INFINITY; break;
    default: break;
    }
    return 2.0f * tb_rng_uniform(rng);
}

static float random_non_finite(tb_rng *rng)
{
    const float values[3] = {NAN, INFINITY, -INFINITY};
    return values[tb_rng_below(rng, 3)];
}

static int is_cblas_trans(int t)
{
    return t == TB_NO_TRANS || t == TB_TRANS || t == TB_CONJ_TRANS;
}

/* Whether c is one of the characters in `set` (never the terminator). */
static int char_in(char c, const char *set)
{
    return c != '\0' && strchr(set, c) != NULL;
}

static int max1(int x)
{
    return x > 1 ? x : 1;
}

/* The Fortran SGEMM's checks, in its order: its parameter number, 0 when valid. */
static int fortran_info(int valid_a, int valid_b, int no_trans_a, int no_trans_b, int m, int n, int k,
                        int lda, int ldb, int ldc)
{
    const int rows_a = no_trans_a ? m : k, rows_b = no_trans_b ? k : n;
    if (!valid_a) return 1;
    if (!valid_b) return 2;
    if (m < 0) return 3;
    if (n < 0) return 4;
    if (k < 0) return 5;
    if (lda < max1(rows_a)) return 8;
    if (ldb < max1(rows_b)) return 10;
    if (ldc < max1(m)) return 13;
    return 0;
}

/* The reference implementation's report for the call: which handler, which number. */
static int expected_report(const fuzz_call *fc, int *info)
{
    if (fc->entry == ENTRY_F77) {
        *info = fortran_info(char_in(fc->char_a, "NnTtCc"), char_in(fc->char_b, "NnTtCc"), char_in(fc->char_a, "Nn"),
                             char_in(fc->char_b, "Nn"), fc->m, fc->n, fc->k, fc->lda, fc->ldb, fc->ldc);
        return *info ? TO_XERBLA : NO_REPORT;
    }
    if (fc->layout != TB_ROW_MAJOR && fc->layout != TB_COL_MAJOR)
        return *info = 1, TO_CBLAS_XERBLA;
    if (!is_cblas_trans(fc->trans_a))
        return *info = 2, TO_CBLAS_XERBLA;
    if (!is_cblas_trans(fc->trans_b))
        return *info = 3, TO_CBLAS_XERBLA;
    const int nt_a = fc->trans_a == TB_NO_TRANS, nt_b = fc->trans_b == TB_NO_TRANS;
    /* A row-major call is the column-major call of C^T = op(B)^T op(A)^T. */
    *info = fc->layout == TB_COL_MAJOR
                ? fortran_info(1, 1, nt_a, nt_b, fc->m, fc->n, fc->k, fc->lda, fc->ldb, fc->ldc)
                : fortran_info(1, 1, nt_b, nt_a, fc->n, fc->m, fc->k, fc->ldb, fc->lda, fc->ldc);
    return *info ? TO_XERBLA : NO_REPORT;
}

/* The CBLAS transpose a call means (an invalid one read as NoTrans, for storage only). */
static int cblas_trans_of(const fuzz_call *fc, int role)
{
    if (fc->entry == ENTRY_F77) {
        const char c = role == ROLE_A ? fc->char_a : fc->char_b;
        return char_in(c, "Tt") ? TB_TRANS : char_in(c, "Cc") ? TB_CONJ_TRANS : TB_NO_TRANS;
    }
    const int t = role == ROLE_A ? fc->trans_a : fc->trans_b;
    return is_cblas_trans(t) ? t : TB_NO_TRANS;
}

static int call_layout(const fuzz_call *fc)
{
    return fc->entry == ENTRY_F77 || fc->layout != TB_ROW_MAJOR ? TB_COL_MAJOR : TB_ROW_MAJOR;
}

/* Stored shape of each operand; negative sizes and too small leading dimensions stored as the smallest valid. */
static void operand_shape(const fuzz_call *fc, int role, operand *op)
{
    const int m = fc->m > 0 ? fc->m : 0, n = fc->n > 0 ? fc->n : 0, k = fc->k > 0 ? fc->k : 0;
    int rows = m, cols = n, ld = fc->ldc;
    if (role != ROLE_C) {
        const int op_rows = role == ROLE_A ? m : k, op_cols = role == ROLE_A ? k : n;
        const int transposed = cblas_trans_of(fc, role) != TB_NO_TRANS;
        rows = transposed ? op_cols : op_rows;
        cols = transposed ? op_rows : op_cols;
        ld = role == ROLE_A ? fc->lda : fc->ldb;
    }
    op->row_major = call_layout(fc) == TB_ROW_MAJOR;
    op->rows = rows;
    op->cols = cols;
    const int inner = op->row_major ? cols : rows, outer = op->row_major ? rows : cols;
    op->ld = ld >= max1(inner) ? ld : max1(inner);
    op->span = outer > 0 && inner > 0 ? (size_t)op->ld * (size_t)(outer - 1) + (size_t)inner : 0;
}

static size_t view_index(const operand *op, int i, int j)
{
    return op->row_major ? (size_t)i * (size_t)op->ld + (size_t)j : (size_t)j * (size_t)op->ld + (size_t)i;
}

/* mmap'ed so that the span's last element is the last before a PROT_NONE page. */
static void place_mmap(operand *op)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t bytes = (TB_GUARD + op->span) * sizeof(float);
    const size_t data_pages = (bytes + page - 1) / page;
    op->map_bytes = (data_pages + 1) * page;
    op->map = mmap(NULL, op->map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (op->map == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    char *guard_page = (char *)op->map + data_pages * page;
    if (mprotect(guard_page, page, PROT_NONE) != 0) {
        perror("mprotect");
        exit(1);
    }
    op->total = TB_GUARD + op->span;
    op->base = (float *)guard_page - op->total;
}

/* Fills the stored block: random view, planted NaN/Inf, padding and guards of one value. */
static void fill_operand(operand *op, tb_rng *rng)
{
    const float padding = tb_rng_below(rng, 3) ? tb_sentinel() : random_non_finite(rng);
    for (size_t i = 0; i < op->total; i++)
        op->base[i] = padding;
    for (int i = 0; i < op->rows; i++)
        for (int j = 0; j < op->cols; j++)
            op->data[view_index(op, i, j)] = tb_rng_uniform(rng);
    if (op->rows > 0 && op->cols > 0 && tb_rng_below(rng, 4) == 0)
        for (int planted = 1 + tb_rng_below(rng, 3); planted > 0; planted--)
            op->data[view_index(op, tb_rng_below(rng, op->rows), tb_rng_below(rng, op->cols))] =
                random_non_finite(rng);
}

/* A heap copy of `count` elements. */
static float *copy_of(const float *block, size_t count)
{
    float *copy = malloc((count ? count : 1) * sizeof *copy);
    if (copy == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    memcpy(copy, block, count * sizeof *copy);
    return copy;
}

static int same_value(float got, float expected)
{
    return (isnan(got) && isnan(expected)) || memcmp(&got, &expected, sizeof got) == 0;
}

typedef struct fuzz_config {
    int bits;                 /* compare bits, else within the bound */
    long calls;
    unsigned long long seed;
} fuzz_config;

typedef struct fuzz_stats {
    long valid, invalid, failed, placed[PLACEMENTS];
} fuzz_stats;

static void describe(const fuzz_call *fc, const operand ops[ROLES], char *buf, size_t size)
{
    if (fc->entry == ENTRY_F77)
        snprintf(buf, size, "sgemm_ '%c' '%c'", fc->char_a, fc->char_b);
    else
        snprintf(buf, size, "cblas_sgemm layout=%d transa=%d transb=%d", fc->layout, fc->trans_a, fc->trans_b);
    const size_t used = strlen(buf);
    snprintf(buf + used, size - used, " m=%d n=%d k=%d lda=%d ldb=%d ldc=%d alpha=%g beta=%g A:%s B:%s C:%s",
             fc->m, fc->n, fc->k, fc->lda, fc->ldb, fc->ldc, (double)fc->alpha, (double)fc->beta,
             placement_names[ops[ROLE_A].placement], placement_names[ops[ROLE_B].placement],
             placement_names[ops[ROLE_C].placement]);
}

static void call_tiledblas(const fuzz_call *fc, const operand ops[ROLES])
{
    if (fc->entry == ENTRY_F77)
        sgemm_(&fc->char_a, &fc->char_b, &fc->m, &fc->n, &fc->k, &fc->alpha, ops[ROLE_A].data, &fc->lda,
               ops[ROLE_B].data, &fc->ldb, &fc->beta, ops[ROLE_C].data, &fc->ldc);
    else
        cblas_sgemm((CBLAS_LAYOUT)fc->layout, (CBLAS_TRANSPOSE)fc->trans_a, (CBLAS_TRANSPOSE)fc->trans_b, fc->m,
                    fc->n, fc->k, fc->alpha, ops[ROLE_A].data, fc->lda, ops[ROLE_B].data, fc->ldb, fc->beta,
                    ops[ROLE_C].data, fc->ldc);
}

/* OpenBLAS on the given copies of the blocks (data at TB_GUARD). */
static void call_reference(const fuzz_call *fc, float alpha, const float *a, const float *b, float beta, float *c)
{
    tb_ref_cblas_sgemm()(call_layout(fc), cblas_trans_of(fc, ROLE_A), cblas_trans_of(fc, ROLE_B), fc->m, fc->n,
                         fc->k, alpha, a + TB_GUARD, fc->lda, b + TB_GUARD, fc->ldb, beta, c + TB_GUARD, fc->ldc);
}

/*
 * The reference BLAS's rule where op(A) op(B) takes no part (alpha = 0 or
 * K = 0): C = beta C, beta = 0 writing zeros and beta = 1 leaving C as it is,
 * A and B never read. OpenBLAS does not follow it in every version (0.3.26
 * multiplies NaN and Inf of A and B by a zero alpha into C), so the expected C
 * is made here.
 */
static void scale_by_beta(float beta, const operand *c_op, float *ref)
{
    for (int i = 0; i < c_op->rows; i++)
        for (int j = 0; j < c_op->cols; j++) {
            float *x = &ref[TB_GUARD + view_index(c_op, i, j)];
            *x = beta == 0.0f ? 0.0f : beta == 1.0f ? *x : beta * *x;
        }
}

/* A copy of the block with |x| in the view and 0 elsewhere. */
static float *abs_block(const operand *op, const float *block)
{
    float *abs = calloc(op->total ? op->total : 1, sizeof *abs);
    if (abs == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    for (int i = 0; i < op->rows; i++)
        for (int j = 0; j < op->cols; j++) {
            const size_t at = TB_GUARD + view_index(op, i, j);
            abs[at] = fabsf(block[at]);
        }
    return abs;
}

/* Problems in C's view against the reference, the first few printed. */
static long check_view(const fuzz_config *config, const fuzz_call *fc, const operand ops[ROLES],
                       float *const blocks[ROLES], const float *ref, const char *label)
{
    float *abs_ab = NULL;
    const int alpha_term = fc->alpha != 0.0f && fc->k > 0, beta_term = fc->beta != 0.0f;
    if (!config->bits && alpha_term) {
        float *abs_a = abs_block(&ops[ROLE_A], blocks[ROLE_A]), *abs_b = abs_block(&ops[ROLE_B], blocks[ROLE_B]);
        abs_ab = calloc(ops[ROLE_C].total, sizeof *abs_ab);
        if (abs_ab == NULL) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        }
        call_reference(fc, 1.0f, abs_a, abs_b, 0.0f, abs_ab);
        free(abs_a);
        free(abs_b);
    }
    const double scale = TB_BOUND_FACTOR * (fc->k + 2.0) * FLT_EPSILON;
    const operand *c = &ops[ROLE_C];
    long problems = 0;
    for (int i = 0; i < c->rows; i++)
        for (int j = 0; j < c->cols; j++) {
            const size_t at = view_index(c, i, j);
            const float got = c->data[at], expected = ref[TB_GUARD + at];
            double bound = 0.0;
            int ok;
            if (config->bits || !isfinite(expected)) {
                ok = config->bits ? same_value(got, expected)
                                  : isnan(expected) ? isnan(got) : got == expected;
            } else {
                if (alpha_term)
                    bound += fabs((double)fc->alpha) * abs_ab[TB_GUARD + at];
                if (beta_term)
                    bound += fabs((double)fc->beta) * fabs((double)blocks[ROLE_C][TB_GUARD + at]);
                bound *= scale;
                ok = isfinite(got) && fabs((double)got - (double)expected) <= bound;
            }
            if (!ok && problems++ < 3)
                fprintf(stderr, "FAIL %s: C(%d,%d) = %.9g, reference %.9g, bound %.3g\n", label, i, j,
                        (double)got, (double)expected, bound);
        }
    free(abs_ab);
    return problems;
}

/* Elements of the block outside C's view (A, B: anywhere) whose bits changed. */
static long changed_outside_view(const operand *op, const float *before, int is_c)
{
    long changed = 0;
    for (size_t p = 0; p < op->total; p++) {
        const ptrdiff_t in_span = (ptrdiff_t)p - TB_GUARD;
        int in_view = 0;
        if (is_c && in_span >= 0 && (size_t)in_span < op->span) {
            const int inner = op->row_major ? op->cols : op->rows;
            in_view = (size_t)in_span % (size_t)op->ld < (size_t)inner;
        }
        if (!in_view && memcmp(&op->base[p], &before[p], sizeof(float)) != 0)
            changed++;
    }
    return changed;
}

/* The call on operands already placed: runs it, checks it, returns whether it passed. */
static int run_placed(const fuzz_config *config, const fuzz_call *fc, operand ops[ROLES], tb_rng *rng,
                      const char *label)
{
    float *before[ROLES];
    for (int r = 0; r < ROLES; r++) {
        ops[r].data = ops[r].base + TB_GUARD;
        fill_operand(&ops[r], rng);
        before[r] = copy_of(ops[r].base, ops[r].total);
    }
    int info = 0;
    const int handler = expected_report(fc, &info);
    memset(&seen, 0, sizeof seen);
    call_tiledblas(fc, ops);

    int ok = 1;
    if (handler != NO_REPORT) {
        const int cblas_calls = handler == TO_CBLAS_XERBLA, f77_calls = handler == TO_XERBLA;
        if (seen.cblas_calls != cblas_calls || seen.f77_calls != f77_calls || seen.info != info) {
            fprintf(stderr, "FAIL %s: cblas_xerbla called %d times, xerbla_ %d times, info %d; expected %s with %d\n",
                    label, seen.cblas_calls, seen.f77_calls, seen.info,
                    handler == TO_XERBLA ? "xerbla_" : "cblas_xerbla", info);
            ok = 0;
        }
        if (memcmp(ops[ROLE_C].base, before[ROLE_C], ops[ROLE_C].total * sizeof(float)) != 0) {
            fprintf(stderr, "FAIL %s: invalid call modified C\n", label);
            ok = 0;
        }
    } else {
        if (seen.cblas_calls || seen.f77_calls) {
            fprintf(stderr, "FAIL %s: valid call reported info %d\n", label, seen.info);
            ok = 0;
        }
        float *ref = copy_of(before[ROLE_C], ops[ROLE_C].total);
        if (fc->m > 0 && fc->n > 0 && (fc->alpha == 0.0f || fc->k == 0))
            scale_by_beta(fc->beta, &ops[ROLE_C], ref);
        else if (fc->m > 0 && fc->n > 0)
            call_reference(fc, fc->alpha, before[ROLE_A], before[ROLE_B], fc->beta, ref);
        ok &= check_view(config, fc, ops, before, ref, label) == 0;
        free(ref);
        const long padding = changed_outside_view(&ops[ROLE_C], before[ROLE_C], 1);
        if (padding) {
            fprintf(stderr, "FAIL %s: %ld elements of C outside its view changed\n", label, padding);
            ok = 0;
        }
    }
    for (int r = ROLE_A; r <= ROLE_B; r++)
        if (changed_outside_view(&ops[r], before[r], 0)) {
            fprintf(stderr, "FAIL %s: %s was modified\n", label, r == ROLE_A ? "A" : "B");
            ok = 0;
        }
    for (int r = 0; r < ROLES; r++)
        free(before[r]);
    return ok;
}

/* Places the operands on the stack that are meant to be there, in this frame, and runs the call. */
static int run_with_stack(const fuzz_config *config, const fuzz_call *fc, operand ops[ROLES], tb_rng *rng,
                          const char *label)
{
    size_t stack_total = 1;
    for (int r = 0; r < ROLES; r++)
        if (ops[r].placement == ON_STACK)
            stack_total += ops[r].total;
    float stack_area[stack_total];
    size_t used = 0;
    for (int r = 0; r < ROLES; r++)
        if (ops[r].placement == ON_STACK) {
            ops[r].base = stack_area + used;
            used += ops[r].total;
        }
    return run_placed(config, fc, ops, rng, label);
}

static int run_call(const fuzz_config *config, const fuzz_call *fc, tb_rng *rng, fuzz_stats *stats)
{
    operand ops[ROLES];
    for (int r = 0; r < ROLES; r++) {
        memset(&ops[r], 0, sizeof ops[r]);
        operand_shape(fc, r, &ops[r]);
        ops[r].placement = tb_rng_below(rng, PLACEMENTS);
        ops[r].total = 2 * TB_GUARD + ops[r].span;
        stats->placed[ops[r].placement]++;
        switch (ops[r].placement) {
        case ON_HEAP: ops[r].base = malloc(ops[r].total * sizeof(float)); break;
        case ON_MMAP: place_mmap(&ops[r]); break;
        case ON_STATIC: ops[r].base = static_area[r]; break;
        default: break;
        }
        if (ops[r].placement == ON_HEAP && ops[r].base == NULL) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        }
    }
    char label[512];
    describe(fc, ops, label, sizeof label);
    const int ok = run_with_stack(config, fc, ops, rng, label);
    for (int r = 0; r < ROLES; r++) {
        if (ops[r].placement == ON_HEAP)
            free(ops[r].base);
        if (ops[r].placement == ON_MMAP)
            munmap(ops[r].map, ops[r].map_bytes);
    }
    return ok;
}

/* A random call; one in eight has one or two invalid arguments. */
static void random_call(tb_rng *rng, int finite_alpha, fuzz_call *fc)
{
    memset(fc, 0, sizeof *fc);
    fc->entry = tb_rng_below(rng, 4) == 0 ? ENTRY_F77 : ENTRY_CBLAS;
    fc->layout = fc->entry == ENTRY_F77 ? TB_COL_MAJOR : tb_layouts[tb_rng_below(rng, 2)];
    fc->trans_a = tb_transposes[tb_rng_below(rng, 3)];
    fc->trans_b = tb_transposes[tb_rng_below(rng, 3)];
    const char *const chars = "NnTtCc";
    fc->char_a = chars[tb_rng_below(rng, 6)];
    fc->char_b = chars[tb_rng_below(rng, 6)];
    fc->m = random_dim(rng);
    fc->n = random_dim(rng);
    fc->k = random_dim(rng);
    fc->alpha = special_or_random(rng, finite_alpha);
    fc->beta = special_or_random(rng, 0);

    /* Leading dimensions: the smallest valid plus padding. */
    const int no_trans_a = cblas_trans_of(fc, ROLE_A) == TB_NO_TRANS;
    const int no_trans_b = cblas_trans_of(fc, ROLE_B) == TB_NO_TRANS;
    const int row_major = call_layout(fc) == TB_ROW_MAJOR;
    const int a_rows = no_trans_a ? fc->m : fc->k, a_cols = no_trans_a ? fc->k : fc->m;
    const int b_rows = no_trans_b ? fc->k : fc->n, b_cols = no_trans_b ? fc->n : fc->k;
    fc->lda = max1(row_major ? a_cols : a_rows) + random_pad(rng);
    fc->ldb = max1(row_major ? b_cols : b_rows) + random_pad(rng);
    fc->ldc = max1(row_major ? fc->n : fc->m) + random_pad(rng);

    if (tb_rng_below(rng, 8) != 0)
        return;
    for (int faults = 1 + tb_rng_below(rng, 2); faults > 0; faults--)
        switch (tb_rng_below(rng, 9)) {
        case 0: fc->layout = tb_rng_below(rng, 2) ? 0 : 103; break;
        case 1: fc->trans_a = 110 + 4 * tb_rng_below(rng, 2), fc->char_a = 'X'; break;
        case 2: fc->trans_b = 110 + 4 * tb_rng_below(rng, 2), fc->char_b = '\0'; break;
        case 3: fc->m = -1 - tb_rng_below(rng, 3); break;
        case 4: fc->n = -1 - tb_rng_below(rng, 3); break;
        case 5: fc->k = -1 - tb_rng_below(rng, 3); break;
        case 6: fc->lda = tb_rng_below(rng, 2) ? 0 : fc->lda - MAX_PAD - 2; break;
        case 7: fc->ldb = tb_rng_below(rng, 2) ? 0 : fc->ldb - MAX_PAD - 2; break;
        default: fc->ldc = tb_rng_below(rng, 2) ? 0 : fc->ldc - MAX_PAD - 2; break;
        }
}

static long env_or(const char *name, long fallback)
{
    const char *text = getenv(name);
    if (text == NULL || text[0] == '\0')
        return fallback;
    char *end;
    const long long value = strtoll(text, &end, 0);
    if (*end != '\0' || value < 0) {
        fprintf(stderr, "%s=%s: expected a whole number\n", name, text);
        exit(2);
    }
    return (long)value;
}

static void usage(void)
{
    fprintf(stderr, "usage: test_fuzz_sgemm --calls N --compare bits|bound [--expect-backend NAME]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    fuzz_config config = {.bits = -1, .calls = -1};
    const char *expect_backend = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--calls") == 0)
            config.calls = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--compare") == 0)
            config.bits = strcmp(argv[i + 1], "bits") == 0 ? 1 : strcmp(argv[i + 1], "bound") == 0 ? 0 : -1;
        else if (strcmp(argv[i], "--expect-backend") == 0)
            expect_backend = argv[i + 1];
        else
            usage();
    }
    if (argc % 2 == 0 || config.bits < 0 || config.calls < 0)
        usage();
    config.calls = env_or("TB_FUZZ_CALLS", config.calls);
    config.seed = (unsigned long long)env_or("TB_FUZZ_SEED", DEFAULT_SEED);
    tb_skip_if_forced_gpu_missing();
    if (expect_backend != NULL && strstr(tiledblas_cpu_backend(), expect_backend) == NULL) {
        fprintf(stderr, "FAIL: CPU BLAS is %s, expected %s\n", tiledblas_cpu_backend(), expect_backend);
        return 1;
    }
    /* Every heap operand on the brk heap, however large. */
    mallopt(M_MMAP_THRESHOLD, 64 << 20);

    tb_rng rng;
    tb_rng_seed(&rng, config.seed);
    fuzz_stats stats = {0};
    const double start = seconds_now();
    for (long i = 0; i < config.calls; i++) {
        fuzz_call fc;
        random_call(&rng, config.bits == 0, &fc);
        int info;
        *(expected_report(&fc, &info) == NO_REPORT ? &stats.valid : &stats.invalid) += 1;
        if (!run_call(&config, &fc, &rng, &stats) && stats.failed++ < MAX_REPORTS)
            fprintf(stderr, "  call %ld of seed %llu\n", i, config.seed);
    }
    const double elapsed = seconds_now() - start;
    printf("%ld calls fuzzed (%ld valid, %ld invalid; operands on heap %ld, mmap %ld, stack %ld, static %ld), "
           "seed %llu, compared %s, CPU BLAS %s, in %.1f s: %ld failed\n",
           config.calls, stats.valid, stats.invalid, stats.placed[ON_HEAP], stats.placed[ON_MMAP],
           stats.placed[ON_STACK], stats.placed[ON_STATIC], config.seed,
           config.bits ? "bit for bit" : "within the bound", tiledblas_cpu_backend(), elapsed, stats.failed);
    printf("%s\n", stats.failed == 0 ? "PASS" : "FAIL");
    return stats.failed == 0 ? 0 : 1;
}
