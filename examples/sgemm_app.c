/*
 * An ordinary program written for OpenBLAS, built against OpenBLAS only and
 * unaware of tiledblas: LD_PRELOAD=libtiledblas.so moves its SGEMMs to the GPU.
 * It multiplies a few random matrices through cblas_sgemm and the Fortran
 * sgemm_, checks sampled elements in double precision and times each call.
 *
 * Usage: sgemm_app [size]   (default 2048; exits 1 on a mismatch)
 */
#include <cblas.h>
#include <f77blas.h>

#include <stdio.h>
#include <stdlib.h>

#include "product_check.h"

#define PROGRAM "sgemm_app"
#define PRODUCT_COUNT 4
#define FORTRAN_PRODUCT 3 /* the last one goes through sgemm_ */

static CBLAS_TRANSPOSE cblas_trans(int trans)
{
    return trans ? CblasTrans : CblasNoTrans;
}

static double run_cblas(ex_product *p)
{
    double start = ex_seconds();
    cblas_sgemm(p->row_major ? CblasRowMajor : CblasColMajor, cblas_trans(p->trans_a),
                cblas_trans(p->trans_b), p->m, p->n, p->k, p->alpha, p->a, p->lda, p->b,
                p->ldb, p->beta, p->c, p->ldc);
    return ex_seconds() - start;
}

/* The Fortran interface: column-major, everything by reference. */
static double run_fortran(ex_product *p)
{
    char trans_a = p->trans_a ? 'T' : 'N', trans_b = p->trans_b ? 'T' : 'N';
    double start = ex_seconds();
    sgemm_(&trans_a, &trans_b, &p->m, &p->n, &p->k, &p->alpha, p->a, &p->lda, p->b, &p->ldb,
           &p->beta, p->c, &p->ldc);
    return ex_seconds() - start;
}

int main(int argc, char **argv)
{
    int size = argc > 1 ? atoi(argv[1]) : 2048;
    if (size < 8) {
        fprintf(stderr, "usage: %s [size >= 8]\n", argv[0]);
        return 2;
    }

    ex_product products[PRODUCT_COUNT];
    ex_product_init(&products[0], "cblas RowMajor NN", 1, 0, 0, size, size, size, 1.0f, 0.0f, 1);
    ex_product_init(&products[1], "cblas ColMajor TN", 0, 1, 0, size, size / 2 + 3, size / 3 + 5,
                    0.5f, 2.0f, 2);
    ex_product_init(&products[2], "cblas RowMajor NT", 1, 0, 1, 8, 8, 8, 1.0f, 1.0f, 3);
    ex_product_init(&products[3], "sgemm_ TT", 0, 1, 1, size / 4 + 1, size / 4 + 7, size / 2 + 1,
                    -1.0f, 0.5f, 4);

    int ok = 0;
    for (int i = 0; i < PRODUCT_COUNT; i++) {
        double seconds = i == FORTRAN_PRODUCT ? run_fortran(&products[i]) : run_cblas(&products[i]);
        ok += ex_product_report(&products[i], PROGRAM, seconds);
        ex_product_free(&products[i]);
    }
    if (ok != PRODUCT_COUNT) {
        printf(PROGRAM ": %d of %d products MISMATCH\n", PRODUCT_COUNT - ok, PRODUCT_COUNT);
        return 1;
    }
    printf(PROGRAM ": all %d products OK\n", PRODUCT_COUNT);
    return 0;
}
