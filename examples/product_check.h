/*
 * Support shared by the example programs: random operands for one SGEMM,
 * a double-precision check of sampled elements of the result, and a timer.
 * Deliberately independent of any BLAS header, so one copy serves the
 * program built against OpenBLAS and the one built against tiledblas.
 */
#ifndef EXAMPLE_PRODUCT_CHECK_H
#define EXAMPLE_PRODUCT_CHECK_H

/* C = alpha * op(A) * op(B) + beta * C, operands stored densely (ld = stored extent). */
typedef struct ex_product {
    const char *name;
    int row_major, trans_a, trans_b; /* trans: 0 as stored, 1 transposed */
    int m, n, k;
    float alpha, beta;
    float *a, *b, *c, *c0; /* c0: C before the call */
    int lda, ldb, ldc;
} ex_product;

/* Allocates and fills the operands; exits on allocation failure. */
void ex_product_init(ex_product *p, const char *name, int row_major, int trans_a, int trans_b,
                     int m, int n, int k, float alpha, float beta, unsigned seed);
void ex_product_free(ex_product *p);

/*
 * Checks sampled elements of p->c against a double-precision computation,
 * within 2 * (K + 2) * FLT_EPSILON * (|alpha| (|op(A)| |op(B)|)_ij + |beta| |C0_ij|),
 * prints "<program>: <name> MxNxK: <ms> ms, <GFLOP/s> GFLOP/s, OK|MISMATCH" and
 * returns 1 when every sample is within bound.
 */
int ex_product_report(const ex_product *p, const char *program, double seconds);

/* Monotonic wall clock in seconds. */
double ex_seconds(void);

#endif /* EXAMPLE_PRODUCT_CHECK_H */
