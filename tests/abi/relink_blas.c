/*
 * A program as a BLAS user writes it: levels 1-3 in the four precisions
 * through CBLAS and the Fortran interface, and LAPACK's sgesv_ and dgesvd_,
 * with its own prototypes and no tiledblas header. Built once linked to
 * tiledblas alone and once to OpenBLAS; relink.sh compares the two outputs.
 *
 * Each result is one line. Lines starting "exact" print every value with %a:
 * they must be identical in both builds (the routine runs in OpenBLAS either
 * way). Lines starting "sgemm" are SGEMM results, which tiledblas computes
 * itself: each value is printed as "value:bound", the bound being
 * 2 (K + 2) eps (|alpha| |op(A)| |op(B)| + |beta| |C|)_ij, within which the
 * two builds must agree.
 */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

enum { ROW_MAJOR = 101, COL_MAJOR = 102 };
enum { NO_TRANS = 111, TRANS = 112, CONJ_TRANS = 113 };
enum { UPPER = 121, LOWER = 122 };
enum { NON_UNIT = 131 };
enum { LEFT = 141, RIGHT = 142 };

/* CBLAS, LP64, as every cblas.h declares it (enumerations passed as int). */
void cblas_saxpy(int n, float alpha, const float *x, int incx, float *y, int incy);
void cblas_daxpy(int n, double alpha, const double *x, int incx, double *y, int incy);
void cblas_caxpy(int n, const void *alpha, const void *x, int incx, void *y, int incy);
void cblas_zaxpy(int n, const void *alpha, const void *x, int incx, void *y, int incy);
float cblas_sdot(int n, const float *x, int incx, const float *y, int incy);
double cblas_ddot(int n, const double *x, int incx, const double *y, int incy);
void cblas_cdotu_sub(int n, const void *x, int incx, const void *y, int incy, void *dot);
void cblas_zdotc_sub(int n, const void *x, int incx, const void *y, int incy, void *dot);
float cblas_snrm2(int n, const float *x, int incx);
double cblas_dnrm2(int n, const double *x, int incx);
float cblas_scnrm2(int n, const void *x, int incx);
double cblas_dznrm2(int n, const void *x, int incx);
size_t cblas_isamax(int n, const float *x, int incx);
size_t cblas_idamax(int n, const double *x, int incx);
size_t cblas_icamax(int n, const void *x, int incx);
size_t cblas_izamax(int n, const void *x, int incx);
void cblas_sgemv(int layout, int trans, int m, int n, float alpha, const float *a, int lda,
                 const float *x, int incx, float beta, float *y, int incy);
void cblas_dgemv(int layout, int trans, int m, int n, double alpha, const double *a, int lda,
                 const double *x, int incx, double beta, double *y, int incy);
void cblas_cgemv(int layout, int trans, int m, int n, const void *alpha, const void *a, int lda,
                 const void *x, int incx, const void *beta, void *y, int incy);
void cblas_zgemv(int layout, int trans, int m, int n, const void *alpha, const void *a, int lda,
                 const void *x, int incx, const void *beta, void *y, int incy);
void cblas_sger(int layout, int m, int n, float alpha, const float *x, int incx, const float *y,
                int incy, float *a, int lda);
void cblas_dger(int layout, int m, int n, double alpha, const double *x, int incx, const double *y,
                int incy, double *a, int lda);
void cblas_cgeru(int layout, int m, int n, const void *alpha, const void *x, int incx, const void *y,
                 int incy, void *a, int lda);
void cblas_zgerc(int layout, int m, int n, const void *alpha, const void *x, int incx, const void *y,
                 int incy, void *a, int lda);
void cblas_sgemm(int layout, int transa, int transb, int m, int n, int k, float alpha, const float *a,
                 int lda, const float *b, int ldb, float beta, float *c, int ldc);
void cblas_dgemm(int layout, int transa, int transb, int m, int n, int k, double alpha, const double *a,
                 int lda, const double *b, int ldb, double beta, double *c, int ldc);
void cblas_cgemm(int layout, int transa, int transb, int m, int n, int k, const void *alpha, const void *a,
                 int lda, const void *b, int ldb, const void *beta, void *c, int ldc);
void cblas_zgemm(int layout, int transa, int transb, int m, int n, int k, const void *alpha, const void *a,
                 int lda, const void *b, int ldb, const void *beta, void *c, int ldc);
void cblas_strsm(int layout, int side, int uplo, int trans, int diag, int m, int n, float alpha,
                 const float *a, int lda, float *b, int ldb);
void cblas_dtrsm(int layout, int side, int uplo, int trans, int diag, int m, int n, double alpha,
                 const double *a, int lda, double *b, int ldb);
void cblas_ctrsm(int layout, int side, int uplo, int trans, int diag, int m, int n, const void *alpha,
                 const void *a, int lda, void *b, int ldb);
void cblas_ztrsm(int layout, int side, int uplo, int trans, int diag, int m, int n, const void *alpha,
                 const void *a, int lda, void *b, int ldb);
void cblas_ssyrk(int layout, int uplo, int trans, int n, int k, float alpha, const float *a, int lda,
                 float beta, float *c, int ldc);
void cblas_dsyrk(int layout, int uplo, int trans, int n, int k, double alpha, const double *a, int lda,
                 double beta, double *c, int ldc);
void cblas_csyrk(int layout, int uplo, int trans, int n, int k, const void *alpha, const void *a, int lda,
                 const void *beta, void *c, int ldc);
void cblas_zsyrk(int layout, int uplo, int trans, int n, int k, const void *alpha, const void *a, int lda,
                 const void *beta, void *c, int ldc);

/* Fortran 77 BLAS and LAPACK (gfortran's convention: hidden string lengths last). */
void saxpy_(const int *n, const float *alpha, const float *x, const int *incx, float *y, const int *incy);
void zaxpy_(const int *n, const double *alpha, const double *x, const int *incx, double *y, const int *incy);
double ddot_(const int *n, const double *x, const int *incx, const double *y, const int *incy);
float snrm2_(const int *n, const float *x, const int *incx);
int icamax_(const int *n, const float *x, const int *incx);
void dgemv_(const char *trans, const int *m, const int *n, const double *alpha, const double *a,
            const int *lda, const double *x, const int *incx, const double *beta, double *y,
            const int *incy, size_t trans_len);
void cgemv_(const char *trans, const int *m, const int *n, const float *alpha, const float *a,
            const int *lda, const float *x, const int *incx, const float *beta, float *y,
            const int *incy, size_t trans_len);
void sger_(const int *m, const int *n, const float *alpha, const float *x, const int *incx,
           const float *y, const int *incy, float *a, const int *lda);
void sgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
            const float *alpha, const float *a, const int *lda, const float *b, const int *ldb,
            const float *beta, float *c, const int *ldc, size_t transa_len, size_t transb_len);
void dgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
            const double *alpha, const double *a, const int *lda, const double *b, const int *ldb,
            const double *beta, double *c, const int *ldc, size_t transa_len, size_t transb_len);
void ztrsm_(const char *side, const char *uplo, const char *trans, const char *diag, const int *m,
            const int *n, const double *alpha, const double *a, const int *lda, double *b, const int *ldb,
            size_t side_len, size_t uplo_len, size_t trans_len, size_t diag_len);
void ssyrk_(const char *uplo, const char *trans, const int *n, const int *k, const float *alpha,
            const float *a, const int *lda, const float *beta, float *c, const int *ldc, size_t uplo_len,
            size_t trans_len);
void sgesv_(const int *n, const int *nrhs, float *a, const int *lda, int *ipiv, float *b, const int *ldb,
            int *info);
void dgesvd_(const char *jobu, const char *jobvt, const int *m, const int *n, double *a, const int *lda,
             double *s, double *u, const int *ldu, double *vt, const int *ldvt, double *work,
             const int *lwork, int *info, size_t jobu_len, size_t jobvt_len);

/* Operands large enough for every call below (at most 40 x 40, complex). */
#define N_MAX 40
#define STORE (2 * N_MAX * N_MAX)

static unsigned long long state = 20240611ULL;

/* Uniform in [-1, 1), the same sequence in both builds. */
static double next_uniform(void)
{
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(state >> 11) / (double)(1ULL << 52) * 2.0 - 1.0;
}

static void fill_s(float *x, int n)
{
    for (int i = 0; i < n; i++)
        x[i] = (float)next_uniform();
}

static void fill_d(double *x, int n)
{
    for (int i = 0; i < n; i++)
        x[i] = next_uniform();
}

static void print_s(const char *name, const float *x, int n)
{
    printf("exact %s:", name);
    for (int i = 0; i < n; i++)
        printf(" %a", (double)x[i]);
    printf("\n");
}

static void print_d(const char *name, const double *x, int n)
{
    printf("exact %s:", name);
    for (int i = 0; i < n; i++)
        printf(" %a", x[i]);
    printf("\n");
}

static void print_index(const char *name, long index)
{
    printf("exact %s: %ld\n", name, index);
}

/*
 * An SGEMM result in column-major storage (ldc = m): each element with its bound,
 * from the operands as element accessors of op(A) (m x k) and op(B) (k x n).
 */
typedef struct sgemm_case {
    int m, n, k;
    float alpha, beta;
    const float *a, *b, *c_before;
    int a_row_stride, a_col_stride, b_row_stride, b_col_stride; /* of op(A), op(B) */
} sgemm_case;

static void print_sgemm(const char *name, const sgemm_case *sc, const float *c, int c_row_stride,
                        int c_col_stride)
{
    printf("sgemm %s:", name);
    for (int j = 0; j < sc->n; j++)
        for (int i = 0; i < sc->m; i++) {
            double magnitude = 0.0;
            for (int p = 0; p < sc->k; p++)
                magnitude += fabs((double)sc->a[i * sc->a_row_stride + p * sc->a_col_stride]) *
                             fabs((double)sc->b[p * sc->b_row_stride + j * sc->b_col_stride]);
            const size_t at = (size_t)i * c_row_stride + (size_t)j * c_col_stride;
            magnitude = fabs((double)sc->alpha) * magnitude + fabs((double)sc->beta) * fabs((double)sc->c_before[at]);
            const double bound = 2.0 * (sc->k + 2) * FLT_EPSILON * magnitude;
            printf(" %.9g:%.9g", (double)c[at], bound);
        }
    printf("\n");
}

static void level1(void)
{
    enum { N = 37 };
    float sx[STORE], sy[STORE];
    double dx[STORE], dy[STORE];
    float cx[STORE], cy[STORE];
    double zx[STORE], zy[STORE];
    fill_s(sx, 2 * N);
    fill_s(sy, 2 * N);
    fill_d(dx, 2 * N);
    fill_d(dy, 2 * N);
    fill_s(cx, 2 * N);
    fill_s(cy, 2 * N);
    fill_d(zx, 2 * N);
    fill_d(zy, 2 * N);
    const int n = N, one = 1, two = 2;

    cblas_saxpy(N, 0.75f, sx, 1, sy, 1);
    print_s("cblas_saxpy", sy, N);
    saxpy_(&n, &(float){-1.25f}, sx, &two, sy, &one);
    print_s("saxpy_", sy, N);
    cblas_daxpy(N, -0.5, dx, 2, dy, 1);
    print_d("cblas_daxpy", dy, N);
    const float calpha[2] = {0.5f, -0.25f};
    cblas_caxpy(N, calpha, cx, 1, cy, 1);
    print_s("cblas_caxpy", cy, 2 * N);
    const double zalpha[2] = {-0.75, 0.5};
    cblas_zaxpy(N, zalpha, zx, 1, zy, 1);
    print_d("cblas_zaxpy", zy, 2 * N);
    zaxpy_(&n, zalpha, zy, &one, zx, &one);
    print_d("zaxpy_", zx, 2 * N);

    float sdot = cblas_sdot(N, sx, 1, sy, 1);
    print_s("cblas_sdot", &sdot, 1);
    double ddot = cblas_ddot(N, dx, 1, dy, 1);
    print_d("cblas_ddot", &ddot, 1);
    ddot = ddot_(&n, dx, &two, dy, &one);
    print_d("ddot_", &ddot, 1);
    float cdot[2];
    cblas_cdotu_sub(N, cx, 1, cy, 1, cdot);
    print_s("cblas_cdotu_sub", cdot, 2);
    double zdot[2];
    cblas_zdotc_sub(N, zx, 1, zy, 1, zdot);
    print_d("cblas_zdotc_sub", zdot, 2);

    float snrm = cblas_snrm2(N, sx, 1);
    print_s("cblas_snrm2", &snrm, 1);
    snrm = snrm2_(&n, sy, &two);
    print_s("snrm2_", &snrm, 1);
    double dnrm = cblas_dnrm2(N, dx, 1);
    print_d("cblas_dnrm2", &dnrm, 1);
    snrm = cblas_scnrm2(N, cx, 1);
    print_s("cblas_scnrm2", &snrm, 1);
    dnrm = cblas_dznrm2(N, zx, 1);
    print_d("cblas_dznrm2", &dnrm, 1);

    print_index("cblas_isamax", (long)cblas_isamax(N, sx, 1));
    print_index("cblas_idamax", (long)cblas_idamax(N, dx, 1));
    print_index("cblas_icamax", (long)cblas_icamax(N, cx, 1));
    print_index("cblas_izamax", (long)cblas_izamax(N, zx, 1));
    print_index("icamax_", icamax_(&n, cy, &one));
}

static void level2(void)
{
    enum { M = 23, N = 17 };
    float sa[STORE], sx[STORE], sy[STORE];
    double da[STORE], dx[STORE], dy[STORE];
    float ca[STORE], cx[STORE], cy[STORE];
    double za[STORE], zx[STORE], zy[STORE];
    fill_s(sa, M * N);
    fill_s(sx, M);
    fill_s(sy, M);
    fill_d(da, M * N);
    fill_d(dx, M);
    fill_d(dy, M);
    fill_s(ca, 2 * M * N);
    fill_s(cx, 2 * M);
    fill_s(cy, 2 * M);
    fill_d(za, 2 * M * N);
    fill_d(zx, 2 * M);
    fill_d(zy, 2 * M);
    const int m = M, n = N, one = 1;

    cblas_sgemv(COL_MAJOR, NO_TRANS, M, N, 1.5f, sa, M, sx, 1, 0.5f, sy, 1);
    print_s("cblas_sgemv", sy, M);
    cblas_dgemv(ROW_MAJOR, TRANS, M, N, -0.5, da, N, dx, 1, 2.0, dy, 1);
    print_d("cblas_dgemv", dy, N);
    dgemv_("N", &m, &n, &(double){0.25}, da, &m, dx, &one, &(double){1.0}, dy, &one, 1);
    print_d("dgemv_", dy, M);
    const float calpha[2] = {1.0f, 0.5f}, cbeta[2] = {0.0f, -1.0f};
    cblas_cgemv(COL_MAJOR, CONJ_TRANS, M, N, calpha, ca, M, cx, 1, cbeta, cy, 1);
    print_s("cblas_cgemv", cy, 2 * N);
    cgemv_("T", &m, &n, calpha, ca, &m, cx, &one, cbeta, cy, &one, 1);
    print_s("cgemv_", cy, 2 * N);
    const double zalpha[2] = {-0.5, 0.25}, zbeta[2] = {1.5, 0.0};
    cblas_zgemv(ROW_MAJOR, NO_TRANS, M, N, zalpha, za, N, zx, 1, zbeta, zy, 1);
    print_d("cblas_zgemv", zy, 2 * M);

    cblas_sger(ROW_MAJOR, M, N, 0.5f, sx, 1, sy, 1, sa, N);
    print_s("cblas_sger", sa, M * N);
    sger_(&m, &n, &(float){-2.0f}, sy, &one, sx, &one, sa, &m);
    print_s("sger_", sa, M * N);
    cblas_dger(COL_MAJOR, M, N, 1.25, dx, 1, dy, 1, da, M);
    print_d("cblas_dger", da, M * N);
    cblas_cgeru(COL_MAJOR, M, N, calpha, cx, 1, cy, 1, ca, M);
    print_s("cblas_cgeru", ca, 2 * M * N);
    cblas_zgerc(ROW_MAJOR, M, N, zalpha, zx, 1, zy, 1, za, N);
    print_d("cblas_zgerc", za, 2 * M * N);
}

/* A well-conditioned triangular matrix: unit-sized diagonal, small off-diagonal entries. */
static void triangular_s(float *a, int n, int complex_parts)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++)
            for (int part = 0; part < complex_parts; part++) {
                float *x = &a[(j * n + i) * complex_parts + part];
                *x = i == j && part == 0 ? 2.0f + *x : *x / (float)n;
            }
}

static void triangular_d(double *a, int n, int complex_parts)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++)
            for (int part = 0; part < complex_parts; part++) {
                double *x = &a[(j * n + i) * complex_parts + part];
                *x = i == j && part == 0 ? 2.0 + *x : *x / n;
            }
}

static void level3_sgemm(void)
{
    enum { M = 29, N = 31, K = 37 };
    float a[STORE], b[STORE], c[STORE], before[STORE];
    fill_s(a, M * K);
    fill_s(b, K * N);
    fill_s(c, M * N);
    memcpy(before, c, sizeof before);

    /* Column-major, A (m x k, lda = m), B^T stored n x k (ldb = n). */
    cblas_sgemm(COL_MAJOR, NO_TRANS, TRANS, M, N, K, 0.75f, a, M, b, N, -0.5f, c, M);
    const sgemm_case col = {M, N, K, 0.75f, -0.5f, a, b, before, 1, M, N, 1};
    print_sgemm("cblas_sgemm col NT", &col, c, 1, M);

    /* Row-major, op(A) = A^T with A stored k x m (lda = m), B stored k x n (ldb = n). */
    memcpy(c, before, sizeof before);
    cblas_sgemm(ROW_MAJOR, TRANS, NO_TRANS, M, N, K, 1.0f, a, M, b, N, 1.0f, c, N);
    const sgemm_case row = {M, N, K, 1.0f, 1.0f, a, b, before, 1, M, N, 1};
    print_sgemm("cblas_sgemm row TN", &row, c, N, 1);

    /* Fortran, beta = 0: C is written without being read. */
    memcpy(c, before, sizeof before);
    const int m = M, n = N, k = K;
    const float alpha = -1.5f, beta = 0.0f;
    sgemm_("N", "N", &m, &n, &k, &alpha, a, &m, b, &k, &beta, c, &m, 1, 1);
    const sgemm_case f77 = {M, N, K, alpha, beta, a, b, before, 1, M, 1, K};
    print_sgemm("sgemm_ NN", &f77, c, 1, M);
}

static void level3(void)
{
    enum { M = 19, N = 13, K = 11 };
    double da[STORE], db[STORE], dc[STORE];
    float ca[STORE], cb[STORE], cc[STORE];
    double za[STORE], zb[STORE], zc[STORE];
    float sa[STORE], sb[STORE], sc[STORE];
    fill_d(da, M * K);
    fill_d(db, K * N);
    fill_d(dc, M * N);
    fill_s(ca, 2 * M * K);
    fill_s(cb, 2 * K * N);
    fill_s(cc, 2 * M * N);
    fill_d(za, 2 * M * K);
    fill_d(zb, 2 * K * N);
    fill_d(zc, 2 * M * N);
    const int m = M, n = N, k = K;

    cblas_dgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, M, N, K, 1.25, da, K, db, N, -1.0, dc, N);
    print_d("cblas_dgemm", dc, M * N);
    dgemm_("T", "N", &n, &n, &m, &(double){0.5}, dc, &m, dc, &m, &(double){0.0}, db, &n, 1, 1);
    print_d("dgemm_", db, N * N);
    const float calpha[2] = {0.5f, 1.0f}, cbeta[2] = {-1.0f, 0.25f};
    cblas_cgemm(COL_MAJOR, CONJ_TRANS, NO_TRANS, M, N, K, calpha, ca, K, cb, K, cbeta, cc, M);
    print_s("cblas_cgemm", cc, 2 * M * N);
    const double zalpha[2] = {-0.25, 0.75}, zbeta[2] = {1.0, 0.0};
    cblas_zgemm(ROW_MAJOR, NO_TRANS, TRANS, M, N, K, zalpha, za, K, zb, K, zbeta, zc, N);
    print_d("cblas_zgemm", zc, 2 * M * N);

    /* Triangular solves: A (m x m) triangular, B m x n. */
    fill_s(sa, M * M);
    triangular_s(sa, M, 1);
    fill_s(sb, M * N);
    cblas_strsm(COL_MAJOR, LEFT, LOWER, NO_TRANS, NON_UNIT, M, N, 2.0f, sa, M, sb, M);
    print_s("cblas_strsm", sb, M * N);
    fill_d(da, N * N);
    triangular_d(da, N, 1);
    fill_d(db, M * N);
    cblas_dtrsm(ROW_MAJOR, RIGHT, UPPER, TRANS, NON_UNIT, M, N, -1.0, da, N, db, N);
    print_d("cblas_dtrsm", db, M * N);
    fill_s(ca, 2 * M * M);
    triangular_s(ca, M, 2);
    fill_s(cb, 2 * M * N);
    cblas_ctrsm(COL_MAJOR, LEFT, UPPER, CONJ_TRANS, NON_UNIT, M, N, calpha, ca, M, cb, M);
    print_s("cblas_ctrsm", cb, 2 * M * N);
    fill_d(za, 2 * N * N);
    triangular_d(za, N, 2);
    fill_d(zb, 2 * M * N);
    cblas_ztrsm(COL_MAJOR, RIGHT, LOWER, NO_TRANS, NON_UNIT, M, N, zalpha, za, N, zb, M);
    print_d("cblas_ztrsm", zb, 2 * M * N);
    fill_d(za, 2 * M * M);
    triangular_d(za, M, 2);
    ztrsm_("L", "U", "N", "N", &m, &n, zalpha, za, &m, zb, &m, 1, 1, 1, 1);
    print_d("ztrsm_", zb, 2 * M * N);

    /* Rank-k updates: C (n x n) from A (n x k). */
    fill_s(sa, N * K);
    fill_s(sc, N * N);
    cblas_ssyrk(COL_MAJOR, UPPER, NO_TRANS, N, K, 1.5f, sa, N, 0.5f, sc, N);
    print_s("cblas_ssyrk", sc, N * N);
    ssyrk_("L", "T", &n, &k, &(float){-1.0f}, sa, &k, &(float){1.0f}, sc, &n, 1, 1);
    print_s("ssyrk_", sc, N * N);
    fill_d(da, N * K);
    fill_d(dc, N * N);
    cblas_dsyrk(ROW_MAJOR, LOWER, TRANS, N, K, -0.5, da, N, 2.0, dc, N);
    print_d("cblas_dsyrk", dc, N * N);
    fill_s(ca, 2 * N * K);
    fill_s(cc, 2 * N * N);
    cblas_csyrk(COL_MAJOR, LOWER, NO_TRANS, N, K, calpha, ca, N, cbeta, cc, N);
    print_s("cblas_csyrk", cc, 2 * N * N);
    fill_d(za, 2 * N * K);
    fill_d(zc, 2 * N * N);
    cblas_zsyrk(ROW_MAJOR, UPPER, NO_TRANS, N, K, zalpha, za, K, zbeta, zc, N);
    print_d("cblas_zsyrk", zc, 2 * N * N);
}

static void lapack(void)
{
    /* sgesv_: A X = B, A diagonally dominant, three right-hand sides. */
    enum { N = 24, NRHS = 3, M = 30 };
    float a[N * N], b[N * NRHS];
    fill_s(a, N * N);
    for (int i = 0; i < N; i++)
        a[i * N + i] += (float)N;
    fill_s(b, N * NRHS);
    const int n = N, nrhs = NRHS;
    int ipiv[N], info = -1;
    sgesv_(&n, &nrhs, a, &n, ipiv, b, &n, &info);
    printf("exact sgesv_ info: %d\n", info);
    print_s("sgesv_ X", b, N * NRHS);
    print_s("sgesv_ LU", a, N * N);

    /* dgesvd_: singular values and both sets of singular vectors of a 30 x 24 matrix. */
    static double d[M * N], s[N], u[M * M], vt[N * N], work[4096];
    fill_d(d, M * N);
    const int m = M, lwork = (int)(sizeof work / sizeof work[0]);
    info = -1;
    dgesvd_("A", "A", &m, &n, d, &m, s, u, &m, vt, &n, work, &lwork, &info, 1, 1);
    printf("exact dgesvd_ info: %d\n", info);
    print_d("dgesvd_ S", s, N);
    print_d("dgesvd_ U", u, M * M);
    print_d("dgesvd_ VT", vt, N * N);
}

int main(void)
{
    level1();
    level2();
    level3_sgemm();
    level3();
    lapack();
    return 0;
}
