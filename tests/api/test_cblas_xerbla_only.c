/*
 * A program that defines cblas_xerbla and no xerbla_, as the reference CBLAS
 * tester does: cblas_sgemm's invalid dimensions go through the library's own
 * xerbla_, which must pass them on with the CBLAS number (one more than
 * SGEMM's), while a Fortran sgemm_ error must not reach cblas_xerbla at all.
 */
#include "tiledblas.h"

#include <stdio.h>
#include <string.h>

static struct {
    int calls, info, row_major_strg;
    char routine[32];
} seen;

void cblas_xerbla(int info, const char *routine, const char *form, ...)
{
    (void)form;
    seen.calls++;
    seen.info = info;
    seen.row_major_strg = RowMajorStrg;
    snprintf(seen.routine, sizeof seen.routine, "%s", routine);
}

static int failures;

static void expect(const char *label, int calls, int info, const char *routine, int row_major)
{
    if (seen.calls != calls || (calls && (seen.info != info || strcmp(seen.routine, routine) != 0 ||
                                          seen.row_major_strg != row_major))) {
        fprintf(stderr, "FAIL %s: %d calls, info %d, routine '%s', RowMajorStrg %d; expected %d, %d, '%s', %d\n",
                label, seen.calls, seen.info, seen.routine, seen.row_major_strg, calls, info, routine, row_major);
        failures++;
    }
    memset(&seen, 0, sizeof seen);
}

int main(void)
{
    float a[64] = {0}, b[64] = {0}, c[64] = {0};

    /* Reported as the swapped column-major call's numbers, with RowMajorStrg set. */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 4, 4, 4, 1.0f, a, 3, b, 4, 0.0f, c, 4);
    expect("row-major lda", 1, 11, "cblas_sgemm", 1);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, -1, 4, 4, 1.0f, a, 4, b, 4, 0.0f, c, 4);
    expect("row-major M", 1, 5, "cblas_sgemm", 1);
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 4, 4, 4, 1.0f, a, 4, b, 4, 0.0f, c, 3);
    expect("column-major ldc", 1, 14, "cblas_sgemm", 0);
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 4, 4, -2, 1.0f, a, 4, b, 4, 0.0f, c, 4);
    expect("column-major K", 1, 6, "cblas_sgemm", 0);
    cblas_sgemm(CblasColMajor, (CBLAS_TRANSPOSE)110, CblasNoTrans, 4, 4, 4, 1.0f, a, 4, b, 4, 0.0f, c, 4);
    expect("TransA", 1, 2, "cblas_sgemm", 0);

    /* The library's xerbla_ prints this one (stderr) and must not pass it on. */
    const char no_trans = 'N';
    const int m = 4, n = 4, k = 4, ld = 4, bad_ld = 3;
    const float alpha = 1.0f, beta = 0.0f;
    sgemm_(&no_trans, &no_trans, &m, &n, &k, &alpha, a, &bad_ld, b, &ld, &beta, c, &ld);
    expect("sgemm_ LDA", 0, 0, "", 0);

    if (RowMajorStrg != 0 || CBLAS_CallFromC != 0) {
        fprintf(stderr, "FAIL: RowMajorStrg %d, CBLAS_CallFromC %d after the calls\n", RowMajorStrg,
                CBLAS_CallFromC);
        failures++;
    }
    printf("%d failed\n", failures);
    return failures != 0;
}
