/*
 * The library's own error handlers (this program defines none): each invalid
 * call prints one line to stderr and returns. check_default_xerbla.sh compares
 * the complete output; this program checks that C stays untouched and that
 * the calls return, then prints "done". Last, it reports errors as a reference
 * CBLAS routine does (into whose program the library may be preloaded): its
 * Fortran part calls xerbla_ with CBLAS_CallFromC and RowMajorStrg set.
 */
#include "tiledblas.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Not declared by tiledblas.h: programs choose their own prototype. */
void xerbla_(const char *srname, const int *info, size_t len);

int main(void)
{
    float a[64], b[64], c[64], c_before[64];
    for (int i = 0; i < 64; i++) {
        a[i] = (float)i;
        b[i] = (float)(64 - i);
        c[i] = (float)(2 * i + 1);
    }
    memcpy(c_before, c, sizeof c);

    /* Row-major M < 0: reported as the swapped call's 5, printed as the real parameter 4. */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, -1, 4, 4, 1.0f, a, 4, b, 4, 0.0f, c, 4);
    /* Fortran M < 0: parameter 3. */
    const char no_trans = 'N';
    const int m = -1, n = 4, k = 4, ld = 4;
    const float alpha = 1.0f, beta = 0.0f;
    sgemm_(&no_trans, &no_trans, &m, &n, &k, &alpha, a, &ld, b, &ld, &beta, c, &ld);

    /* Row-major cblas_ssymm with N < 0: SSYMM's M (3), printed as the real parameter 5. */
    RowMajorStrg = 1;
    CBLAS_CallFromC = 1;
    const int ssymm_m = 3;
    xerbla_("SSYMM ", &ssymm_m, 6);
    /* Row-major cblas_dgemm with lda too small: DGEMM's LDB (10), printed as the real parameter 9. */
    const int dgemm_ldb = 10;
    xerbla_("DGEMM ", &dgemm_ldb, 6);
    /* cblas_zher2k is not of the her2 family, whose 6 and 8 swap: ZHER2K's 5 is printed as 6. */
    const int zher2k_alpha = 5;
    xerbla_("ZHER2K", &zher2k_alpha, 6);
    CBLAS_CallFromC = 0;
    RowMajorStrg = 0;

    if (memcmp(c, c_before, sizeof c) != 0) {
        printf("C was modified\n");
        return 1;
    }
    if (RowMajorStrg != 0) {
        printf("RowMajorStrg is %d after the calls\n", RowMajorStrg);
        return 1;
    }
    printf("done\n");
    return 0;
}
