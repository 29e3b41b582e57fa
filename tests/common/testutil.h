/*
 * Shared test machinery: a seeded generator, matrices stored with padding and
 * guard zones full of a sentinel NaN, the call under test (tiledblas's
 * cblas_sgemm), a pass/fail tally and the element-wise SGEMM error check
 *     |C - C_ref| <= (TB_BOUND_FACTOR * (K + 2) * FLT_EPSILON + tensor)
 *                    * (|alpha| * (|op(A)| |op(B)|)_ij + |beta| * |C0_ij|),
 * tensor = TB_TENSOR_SPLIT_ERROR where the tensor-core rung may compute
 * (TILEDBLAS_KERNEL=tf32x3, or the math set to tensor), else 0.
 * Layout and transpose values are the CBLAS ones (101/102, 111/112/113).
 */
#ifndef TB_TESTUTIL_H
#define TB_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TB_ROW_MAJOR 101
#define TB_COL_MAJOR 102
#define TB_NO_TRANS 111
#define TB_TRANS 112
#define TB_CONJ_TRANS 113

/* Every layout and transpose, in the order the tests loop over them. */
extern const int tb_layouts[2];
extern const int tb_transposes[3];

/* Sentinel elements placed before and after every stored block. */
#define TB_GUARD 16
#define TB_BOUND_FACTOR 2.0
/*
 * What 3xTF32 adds to an FP32 SGEMM's error, relative to |a||b| per product: the
 * dropped a_lo*b_lo and the rounding of the two lo parts, each under 2^-22, and the
 * truncating sums of the tensor cores within one 32-deep slice (12 steps of about
 * 2^-23): under 4 * 2^-20 in all.
 */
#define TB_TENSOR_SPLIT_ERROR 0x1p-18

/* splitmix64: small, fast, good enough for test data. */
typedef struct tb_rng {
    uint64_t state;
} tb_rng;

void tb_rng_seed(tb_rng *rng, uint64_t seed);
uint64_t tb_rng_next(tb_rng *rng);
float tb_rng_uniform(tb_rng *rng); /* in [-1, 1) */
int tb_rng_below(tb_rng *rng, int bound); /* in [0, bound) */

/* A quiet NaN with a payload no arithmetic produces; compared bitwise. */
float tb_sentinel(void);
int tb_is_sentinel(float x);

/* A matrix as stored in memory: rows x cols elements at data, leading dimension ld. */
typedef struct tb_matrix {
    int rows, cols, ld;
    int row_major;
    size_t count; /* elements of the stored block, data[0 .. count) */
    float *base;  /* allocation: TB_GUARD + count + TB_GUARD elements */
    float *data;  /* base + TB_GUARD */
} tb_matrix;

/* Allocates with every element, guards included, set to the sentinel. Exits on OOM. */
void tb_matrix_alloc(tb_matrix *m, int rows, int cols, int ld, int row_major);
void tb_matrix_free(tb_matrix *m);
/* Allocates dst as a bitwise copy of src, padding and guards included. */
void tb_matrix_clone(tb_matrix *dst, const tb_matrix *src);
size_t tb_matrix_index(const tb_matrix *m, int i, int j);
size_t tb_matrix_alloc_count(const tb_matrix *m); /* elements from base, guards included */
void tb_matrix_fill_random(tb_matrix *m, tb_rng *rng);
void tb_matrix_fill_view(tb_matrix *m, float value);
/* dst (allocated like src) gets |src| in the view and 0 elsewhere. */
void tb_matrix_abs(tb_matrix *dst, const tb_matrix *src);
/* Elements outside the view (padding and guards) that are not the sentinel. */
size_t tb_matrix_padding_errors(const tb_matrix *m);
int tb_matrix_same_bits(const tb_matrix *a, const tb_matrix *b);

/* max(1, rows of the stored operand): the smallest valid leading dimension. */
int tb_min_ld(int layout, int rows, int cols);
const char *tb_layout_name(int layout);
const char *tb_trans_name(int trans);

/* One SGEMM call: C = alpha * op(A) * op(B) + beta * C. */
typedef struct tb_gemm_case {
    int layout, trans_a, trans_b;
    int m, n, k;
    int lda, ldb, ldc;
    float alpha, beta;
} tb_gemm_case;

/* Sets lda, ldb, ldc to their minimums plus the given padding. */
void tb_case_set_ld(tb_gemm_case *gc, int pad_a, int pad_b, int pad_c);
/* "RowMajor T N m=.. n=.. k=.. lda=.. ldb=.. ldc=.. alpha=.. beta=.." */
void tb_case_describe(const tb_gemm_case *gc, char *buf, size_t size);
/* "WHAT: " and the description above. */
void tb_case_label(const tb_gemm_case *gc, const char *what, char *buf, size_t size);

/* Random inputs for a case and what the checks need; alpha and beta may change later. */
typedef struct tb_gemm_operands {
    tb_matrix a, b, c0;           /* c0: the initial C, finite everywhere in its view */
    tb_matrix a_orig, b_orig;     /* pristine copies, to prove A and B stay unmodified */
    tb_matrix abs_ab;             /* |op(A)| |op(B)| from the reference, stored like C */
} tb_gemm_operands;

void tb_operands_make(tb_gemm_operands *ops, const tb_gemm_case *gc, tb_rng *rng);
void tb_operands_free(tb_gemm_operands *ops);

/* ref (allocated here) = the reference applied to a copy of c0. */
void tb_run_reference(const tb_gemm_case *gc, const tb_gemm_operands *ops, tb_matrix *ref);

/*
 * Number of problems in `got` (the C after the call under test): view elements
 * outside the bound (NaN and Inf must match the reference exactly), padding or
 * guards changed, A or B modified. Prints the first few with `label`.
 */
size_t tb_check_case(const tb_gemm_case *gc, const tb_gemm_operands *ops,
                     const tb_matrix *got, const tb_matrix *ref, const char *label);

/* tiledblas's cblas_sgemm on the case, with A, B and C at the given addresses. */
void tb_call_tiledblas(const tb_gemm_case *gc, const float *a, const float *b, float *c);

/* c (allocated here) = c0, but all NaN in the view if beta == 0: C must be written unread. */
void tb_start_c(tb_matrix *c, const tb_matrix *c0, float beta);

/* Calls tiledblas with C = got, then tb_check_case against the reference. */
size_t tb_run_and_check(const tb_gemm_case *gc, const tb_gemm_operands *ops, tb_matrix *got,
                        const char *label);
/* The same with C started by tb_start_c: one whole case on host memory. */
size_t tb_run_case(const tb_gemm_case *gc, const tb_gemm_operands *ops, const char *label);

/* Cases passed and failed. */
typedef struct tb_tally {
    int passed, failed;
} tb_tally;

/* Counts a case; a failed one also prints its label, after the check's own messages. */
void tb_tally_record(tb_tally *tally, int ok, const char *label);
/* One whole case on random operands from rng (tb_run_case), counted, labelled "WHAT: ...". */
void tb_tally_random_case(tb_tally *tally, const tb_gemm_case *gc, const char *what, tb_rng *rng);
/* Prints "N passed, M failed"; returns the exit status, 0 when nothing failed. */
int tb_tally_report(const tb_tally *tally);

/* TILEDBLAS_DEVICE=gpu without a usable GPU makes the run meaningless: exits 77 (skipped). */
void tb_skip_if_forced_gpu_missing(void);

/* fork() with stdio flushed first (exits 1 if it fails); the child is killed by SIGALRM after
 * `seconds`, so that a hung child is a failure, not a stuck test run. */
pid_t tb_fork_child(unsigned seconds);

#endif /* TB_TESTUTIL_H */
