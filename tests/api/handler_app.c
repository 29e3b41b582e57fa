/*
 * Calls LAPACK's dgesv_ with N = -1; the error handler it reaches is the one
 * in xerbla_handler_lib, a library the program links before LAPACK
 * (preload_handler.sh), or, linked to tiledblas alone, whichever tiledblas
 * gives it. Prints "returned" if the handler returns.
 */
#include <stdio.h>

void dgesv_(const int *n, const int *nrhs, double *a, const int *lda, int *ipiv, double *b, const int *ldb,
            int *info);

int main(void)
{
    double a[4] = {1, 0, 0, 1}, b[2] = {1, 1};
    int n = -1, nrhs = 1, lda = 2, ldb = 2, ipiv[2], info = 0;
    dgesv_(&n, &nrhs, a, &lda, ipiv, b, &ldb, &info);
    printf("returned, info %d\n", info);
    return 0;
}
