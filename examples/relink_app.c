/*
 * A program built against tiledblas itself (include tiledblas.h, link
 * -ltiledblas): the same cblas_sgemm calls, plus what the library reports
 * about itself.
 *
 * Usage: relink_app [size]   (default 1024; exits 1 on a mismatch)
 */
#include <tiledblas.h>

#include <stdio.h>
#include <stdlib.h>

#include "product_check.h"

#define PROGRAM "relink_app"
#define PRODUCT_COUNT 3

static CBLAS_TRANSPOSE cblas_trans(int trans)
{
    return trans ? CblasTrans : CblasNoTrans;
}

int main(int argc, char **argv)
{
    int size = argc > 1 ? atoi(argv[1]) : 1024;
    if (size < 8) {
        fprintf(stderr, "usage: %s [size >= 8]\n", argv[0]);
        return 2;
    }
    printf(PROGRAM ": tiledblas %s, GPU available: %s\n", tiledblas_version(),
           tiledblas_gpu_available() ? "yes" : "no");

    ex_product products[PRODUCT_COUNT];
    ex_product_init(&products[0], "RowMajor NN", 1, 0, 0, size, size, size, 1.0f, 0.0f, 1);
    ex_product_init(&products[1], "ColMajor TT", 0, 1, 1, size / 2 + 1, size + 3, size / 4 + 5,
                    0.7f, -1.0f, 2);
    ex_product_init(&products[2], "ColMajor NT", 0, 0, 1, 5, 7, 3, 1.0f, 1.0f, 3);

    int ok = 0;
    for (int i = 0; i < PRODUCT_COUNT; i++) {
        ex_product *p = &products[i];
        double start = ex_seconds();
        cblas_sgemm(p->row_major ? CblasRowMajor : CblasColMajor, cblas_trans(p->trans_a),
                    cblas_trans(p->trans_b), p->m, p->n, p->k, p->alpha, p->a, p->lda, p->b,
                    p->ldb, p->beta, p->c, p->ldc);
        ok += ex_product_report(p, PROGRAM, ex_seconds() - start);
        ex_product_free(p);
    }
    printf(PROGRAM ": CPU backend: %s\n", tiledblas_cpu_backend());
    if (ok != PRODUCT_COUNT) {
        printf(PROGRAM ": %d of %d products MISMATCH\n", PRODUCT_COUNT - ok, PRODUCT_COUNT);
        return 1;
    }
    printf(PROGRAM ": all %d products OK\n", PRODUCT_COUNT);
    return 0;
}
