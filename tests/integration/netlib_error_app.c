/*
 * A program linked to the reference BLAS and CBLAS (netlib), which makes two
 * invalid row-major calls of routines other than sgemm, then says "returned".
 * The reference reports each through its xerbla_ and cblas_xerbla protocol
 * (and exits at the first); preloaded, tiledblas's handlers come first and
 * must hand each report on to the reference's unchanged (preload_netlib_errors.sh).
 * Prototypes are declared here: the reference's cblas.h may not be installed.
 */
#include <stdio.h>

enum { ROW_MAJOR = 101, NO_TRANS = 111, LEFT = 141, UPPER = 121 };

void cblas_ssymm(int layout, int side, int uplo, int m, int n, float alpha, const float *a, int lda,
                 const float *b, int ldb, float beta, float *c, int ldc);
void cblas_dgemm(int layout, int trans_a, int trans_b, int m, int n, int k, double alpha, const double *a,
                 int lda, const double *b, int ldb, double beta, double *c, int ldc);

int main(void)
{
    float a[16] = {0}, b[16] = {0}, c[16] = {0};
    double da[16] = {0}, db[16] = {0}, dc[16] = {0};
    /* N < 0: the real parameter 5. */
    cblas_ssymm(ROW_MAJOR, LEFT, UPPER, 4, -1, 1.0f, a, 4, b, 4, 0.0f, c, 4);
    /* lda 3 < K 4: the real parameter 9. */
    cblas_dgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, 4, 4, 4, 1.0, da, 3, db, 4, 0.0, dc, 4);
    printf("returned\n");
    return 0;
}
