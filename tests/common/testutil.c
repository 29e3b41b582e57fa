#include "testutil.h"

#include "refblas.h"
#include "tiledblas.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SENTINEL_BITS 0x7fc5a5a5u
#define MAX_REPORTS 5

const int tb_layouts[2] = {TB_ROW_MAJOR, TB_COL_MAJOR};
const int tb_transposes[3] = {TB_NO_TRANS, TB_TRANS, TB_CONJ_TRANS};

void tb_rng_seed(tb_rng *rng, uint64_t seed)
{
    rng->state = seed;
}

uint64_t tb_rng_next(tb_rng *rng)
{
    uint64_t z = (rng->state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

float tb_rng_uniform(tb_rng *rng)
{
    /* 24 random bits: every value is exact in float. */
    return (float)(tb_rng_next(rng) >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

int tb_rng_below(tb_rng *rng, int bound)
{
    return (int)(tb_rng_next(rng) % (uint64_t)bound);
}

float tb_sentinel(void)
{
    const uint32_t bits = SENTINEL_BITS;
    float x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

int tb_is_sentinel(float x)
{
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    return bits == SENTINEL_BITS;
}

static int inner_extent(const tb_matrix *m)
{
    return m->row_major ? m->cols : m->rows;
}

static int outer_extent(const tb_matrix *m)
{
    return m->row_major ? m->rows : m->cols;
}

void tb_matrix_alloc(tb_matrix *m, int rows, int cols, int ld, int row_major)
{
    m->rows = rows;
    m->cols = cols;
    m->ld = ld;
    m->row_major = row_major;
    if (rows < 0 || cols < 0 || ld < 1 || ld < inner_extent(m)) {
        fprintf(stderr, "test bug: matrix %dx%d with ld %d\n", rows, cols, ld);
        exit(EXIT_FAILURE);
    }
    m->count = (size_t)ld * (size_t)outer_extent(m);
    size_t total = tb_matrix_alloc_count(m);
    m->base = malloc(total * sizeof *m->base);
    if (m->base == NULL) {
        fprintf(stderr, "out of memory allocating %zu floats\n", total);
        exit(EXIT_FAILURE);
    }
    m->data = m->base + TB_GUARD;
    const float sentinel = tb_sentinel();
    for (size_t i = 0; i < total; i++)
        m->base[i] = sentinel;
}

void tb_matrix_free(tb_matrix *m)
{
    free(m->base);
    m->base = m->data = NULL;
}

void tb_matrix_clone(tb_matrix *dst, const tb_matrix *src)
{
    tb_matrix_alloc(dst, src->rows, src->cols, src->ld, src->row_major);
    memcpy(dst->base, src->base, tb_matrix_alloc_count(src) * sizeof *src->base);
}

size_t tb_matrix_index(const tb_matrix *m, int i, int j)
{
    return m->row_major ? (size_t)i * (size_t)m->ld + (size_t)j
                        : (size_t)j * (size_t)m->ld + (size_t)i;
}

size_t tb_matrix_alloc_count(const tb_matrix *m)
{
    return m->count + 2 * (size_t)TB_GUARD;
}

void tb_matrix_fill_random(tb_matrix *m, tb_rng *rng)
{
    for (int i = 0; i < m->rows; i++)
        for (int j = 0; j < m->cols; j++)
            m->data[tb_matrix_index(m, i, j)] = tb_rng_uniform(rng);
}

void tb_matrix_fill_view(tb_matrix *m, float value)
{
    for (int i = 0; i < m->rows; i++)
        for (int j = 0; j < m->cols; j++)
            m->data[tb_matrix_index(m, i, j)] = value;
}

void tb_matrix_abs(tb_matrix *dst, const tb_matrix *src)
{
    tb_matrix_alloc(dst, src->rows, src->cols, src->ld, src->row_major);
    memset(dst->base, 0, tb_matrix_alloc_count(dst) * sizeof *dst->base);
    for (int i = 0; i < src->rows; i++)
        for (int j = 0; j < src->cols; j++) {
            size_t at = tb_matrix_index(src, i, j);
            dst->data[at] = fabsf(src->data[at]);
        }
}

size_t tb_matrix_padding_errors(const tb_matrix *m)
{
    size_t errors = 0;
    for (size_t i = 0; i < TB_GUARD; i++) {
        errors += !tb_is_sentinel(m->base[i]);
        errors += !tb_is_sentinel(m->data[m->count + i]);
    }
    const size_t inner = (size_t)inner_extent(m);
    for (size_t p = 0; p < m->count; p++)
        if (p % (size_t)m->ld >= inner)
            errors += !tb_is_sentinel(m->data[p]);
    return errors;
}

int tb_matrix_same_bits(const tb_matrix *a, const tb_matrix *b)
{
    return a->count == b->count &&
           memcmp(a->base, b->base, tb_matrix_alloc_count(a) * sizeof *a->base) == 0;
}

int tb_min_ld(int layout, int rows, int cols)
{
    int inner = layout == TB_ROW_MAJOR ? cols : rows;
    return inner > 1 ? inner : 1;
}

const char *tb_layout_name(int layout)
{
    return layout == TB_ROW_MAJOR ? "RowMajor" : layout == TB_COL_MAJOR ? "ColMajor" : "BadLayout";
}

const char *tb_trans_name(int trans)
{
    switch (trans) {
    case TB_NO_TRANS: return "N";
    case TB_TRANS: return "T";
    case TB_CONJ_TRANS: return "C";
    default: return "?";
    }
}

/* Stored dimensions of an operand whose op() is rows x cols. */
static void stored_dims(int trans, int op_rows, int op_cols, int *rows, int *cols)
{
    int transposed = trans != TB_NO_TRANS;
    *rows = transposed ? op_cols : op_rows;
    *cols = transposed ? op_rows : op_cols;
}

void tb_case_set_ld(tb_gemm_case *gc, int pad_a, int pad_b, int pad_c)
{
    int rows, cols;
    stored_dims(gc->trans_a, gc->m, gc->k, &rows, &cols);
    gc->lda = tb_min_ld(gc->layout, rows, cols) + pad_a;
    stored_dims(gc->trans_b, gc->k, gc->n, &rows, &cols);
    gc->ldb = tb_min_ld(gc->layout, rows, cols) + pad_b;
    gc->ldc = tb_min_ld(gc->layout, gc->m, gc->n) + pad_c;
}

void tb_case_describe(const tb_gemm_case *gc, char *buf, size_t size)
{
    snprintf(buf, size, "%s %s %s m=%d n=%d k=%d lda=%d ldb=%d ldc=%d alpha=%g beta=%g",
             tb_layout_name(gc->layout), tb_trans_name(gc->trans_a),
             tb_trans_name(gc->trans_b), gc->m, gc->n, gc->k, gc->lda, gc->ldb,
             gc->ldc, (double)gc->alpha, (double)gc->beta);
}

void tb_case_label(const tb_gemm_case *gc, const char *what, char *buf, size_t size)
{
    char desc[256];
    tb_case_describe(gc, desc, sizeof desc);
    snprintf(buf, size, "%s: %s", what, desc);
}

void tb_operands_make(tb_gemm_operands *ops, const tb_gemm_case *gc, tb_rng *rng)
{
    const int row_major = gc->layout == TB_ROW_MAJOR;
    int rows, cols;

    stored_dims(gc->trans_a, gc->m, gc->k, &rows, &cols);
    tb_matrix_alloc(&ops->a, rows, cols, gc->lda, row_major);
    stored_dims(gc->trans_b, gc->k, gc->n, &rows, &cols);
    tb_matrix_alloc(&ops->b, rows, cols, gc->ldb, row_major);
    tb_matrix_alloc(&ops->c0, gc->m, gc->n, gc->ldc, row_major);
    tb_matrix_fill_random(&ops->a, rng);
    tb_matrix_fill_random(&ops->b, rng);
    tb_matrix_fill_random(&ops->c0, rng);
    tb_matrix_clone(&ops->a_orig, &ops->a);
    tb_matrix_clone(&ops->b_orig, &ops->b);

    tb_matrix abs_a, abs_b;
    tb_matrix_abs(&abs_a, &ops->a);
    tb_matrix_abs(&abs_b, &ops->b);
    tb_matrix_alloc(&ops->abs_ab, gc->m, gc->n, gc->ldc, row_major);
    tb_ref_cblas_sgemm()(gc->layout, gc->trans_a, gc->trans_b, gc->m, gc->n, gc->k,
                         1.0f, abs_a.data, gc->lda, abs_b.data, gc->ldb, 0.0f,
                         ops->abs_ab.data, gc->ldc);
    tb_matrix_free(&abs_a);
    tb_matrix_free(&abs_b);
}

void tb_operands_free(tb_gemm_operands *ops)
{
    tb_matrix_free(&ops->a);
    tb_matrix_free(&ops->b);
    tb_matrix_free(&ops->c0);
    tb_matrix_free(&ops->a_orig);
    tb_matrix_free(&ops->b_orig);
    tb_matrix_free(&ops->abs_ab);
}

void tb_run_reference(const tb_gemm_case *gc, const tb_gemm_operands *ops, tb_matrix *ref)
{
    tb_matrix_clone(ref, &ops->c0);
    tb_ref_cblas_sgemm()(gc->layout, gc->trans_a, gc->trans_b, gc->m, gc->n, gc->k,
                         gc->alpha, ops->a.data, gc->lda, ops->b.data, gc->ldb,
                         gc->beta, ref->data, gc->ldc);
}

size_t tb_check_case(const tb_gemm_case *gc, const tb_gemm_operands *ops,
                     const tb_matrix *got, const tb_matrix *ref, const char *label)
{
    const char *kernel = getenv("TILEDBLAS_KERNEL");
    const double tensor = (kernel && strcmp(kernel, "tf32x3") == 0) || tiledblas_get_math() == TILEDBLAS_MATH_TENSOR
                              ? TB_TENSOR_SPLIT_ERROR
                              : 0.0;
    const double scale = TB_BOUND_FACTOR * (gc->k + 2.0) * FLT_EPSILON + tensor;
    const double abs_alpha = fabs((double)gc->alpha), abs_beta = fabs((double)gc->beta);
    size_t problems = 0;

    for (int i = 0; i < gc->m; i++)
        for (int j = 0; j < gc->n; j++) {
            size_t at = tb_matrix_index(got, i, j);
            float value = got->data[at], expected = ref->data[at];
            double bound = 0.0;
            int ok;
            if (isnan(expected)) {
                ok = isnan(value);
            } else if (isinf(expected)) {
                ok = value == expected;
            } else {
                /* beta == 0 must not read C: its term is absent, not 0 * C0. */
                double c_term = gc->beta == 0.0f ? 0.0 : abs_beta * fabs((double)ops->c0.data[at]);
                bound = scale * (abs_alpha * ops->abs_ab.data[at] + c_term);
                ok = isfinite(value) && fabs((double)value - (double)expected) <= bound;
            }
            if (!ok && problems++ < MAX_REPORTS)
                fprintf(stderr, "FAIL %s: C(%d,%d) = %.9g, reference %.9g, bound %.3g\n",
                        label, i, j, (double)value, (double)expected, bound);
        }

    size_t padding = tb_matrix_padding_errors(got);
    if (padding > 0) {
        fprintf(stderr, "FAIL %s: %zu elements of C outside the view changed\n", label, padding);
        problems += padding;
    }
    if (!tb_matrix_same_bits(&ops->a, &ops->a_orig)) {
        fprintf(stderr, "FAIL %s: A was modified\n", label);
        problems++;
    }
    if (!tb_matrix_same_bits(&ops->b, &ops->b_orig)) {
        fprintf(stderr, "FAIL %s: B was modified\n", label);
        problems++;
    }
    return problems;
}

void tb_call_tiledblas(const tb_gemm_case *gc, const float *a, const float *b, float *c)
{
    cblas_sgemm((CBLAS_LAYOUT)gc->layout, (CBLAS_TRANSPOSE)gc->trans_a,
                (CBLAS_TRANSPOSE)gc->trans_b, gc->m, gc->n, gc->k, gc->alpha, a, gc->lda, b,
                gc->ldb, gc->beta, c, gc->ldc);
}

void tb_start_c(tb_matrix *c, const tb_matrix *c0, float beta)
{
    tb_matrix_clone(c, c0);
    if (beta == 0.0f)
        tb_matrix_fill_view(c, NAN);
}

size_t tb_run_and_check(const tb_gemm_case *gc, const tb_gemm_operands *ops, tb_matrix *got,
                        const char *label)
{
    tb_matrix ref;
    tb_call_tiledblas(gc, ops->a.data, ops->b.data, got->data);
    tb_run_reference(gc, ops, &ref);
    size_t problems = tb_check_case(gc, ops, got, &ref, label);
    tb_matrix_free(&ref);
    return problems;
}

size_t tb_run_case(const tb_gemm_case *gc, const tb_gemm_operands *ops, const char *label)
{
    tb_matrix got;
    tb_start_c(&got, &ops->c0, gc->beta);
    size_t problems = tb_run_and_check(gc, ops, &got, label);
    tb_matrix_free(&got);
    return problems;
}

void tb_tally_record(tb_tally *tally, int ok, const char *label)
{
    if (ok) {
        tally->passed++;
    } else {
        tally->failed++;
        fprintf(stderr, "  in case: %s\n", label);
    }
}

void tb_tally_random_case(tb_tally *tally, const tb_gemm_case *gc, const char *what, tb_rng *rng)
{
    char label[300];
    tb_case_label(gc, what, label, sizeof label);
    tb_gemm_operands ops;
    tb_operands_make(&ops, gc, rng);
    tb_tally_record(tally, tb_run_case(gc, &ops, label) == 0, label);
    tb_operands_free(&ops);
}

int tb_tally_report(const tb_tally *tally)
{
    printf("%d passed, %d failed\n", tally->passed, tally->failed);
    return tally->failed == 0 ? 0 : 1;
}

void tb_skip_if_forced_gpu_missing(void)
{
    const char *device = getenv("TILEDBLAS_DEVICE");
    if (device != NULL && strcmp(device, "gpu") == 0 && !tiledblas_gpu_available()) {
        printf("SKIP: TILEDBLAS_DEVICE=gpu but no usable GPU\n");
        exit(77);
    }
}

pid_t tb_fork_child(unsigned seconds)
{
    fflush(NULL);
    const pid_t child = fork();
    if (child < 0) {
        perror("fork");
        exit(1);
    }
    if (child == 0)
        alarm(seconds);
    return child;
}
