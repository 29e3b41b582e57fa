/*
 * Default error handlers and the reference CBLAS error protocol. Both
 * handlers print one line and return (OpenBLAS's behaviour, not the
 * reference's exit). The library always calls them through their global
 * symbols, so a program's own definitions take their place.
 *
 * As in the reference, a CBLAS routine's argument errors found by its Fortran
 * part (for cblas_sgemm: M, N, K and the leading dimensions) go to xerbla_
 * with CBLAS_CallFromC set, and xerbla_ hands them on to cblas_xerbla one
 * argument later (the layout comes first). A program with its own xerbla_
 * therefore sees them as the Fortran routine's. Preloaded into a program
 * linked with the reference CBLAS, these symbols take the place of its own,
 * so they speak its protocol for every routine, not only sgemm.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "compat.h"
#include "tiledblas.h"

int RowMajorStrg = 0;
int CBLAS_CallFromC = 0;

static const char *const cblas_sgemm_args[] = {
    "", "Layout", "TransA", "TransB", "M", "N", "K", "alpha", "A", "lda", "B", "ldb", "beta", "C", "ldc",
};
static const char *const f77_sgemm_args[] = {
    "", "TRANSA", "TRANSB", "M", "N", "K", "ALPHA", "A", "LDA", "B", "LDB", "BETA", "C", "LDC",
};

static const char *arg_name(const char *const *names, size_t count, int info)
{
    return info > 0 && (size_t)info < count ? names[info] : "?";
}

/*
 * A row-major call runs as a column-major one with some arguments swapped and
 * reports their numbers there; the reference maps them back per routine family
 * (the first family the name contains), as here.
 */
static const struct {
    const char *family, *except; /* names containing `except` are not of the family */
    int swap[2][2];              /* pairs of numbers to exchange; {0, 0}: none */
} row_major_swaps[] = {
    {"gemm", NULL, {{4, 5}, {9, 11}}}, {"symm", NULL, {{4, 5}, {0, 0}}}, {"hemm", NULL, {{4, 5}, {0, 0}}},
    {"trmm", NULL, {{6, 7}, {0, 0}}},  {"trsm", NULL, {{6, 7}, {0, 0}}}, {"gemv", NULL, {{3, 4}, {0, 0}}},
    {"gbmv", NULL, {{3, 4}, {5, 6}}},  {"ger", NULL, {{2, 3}, {6, 8}}},  {"her2", "her2k", {{6, 8}, {0, 0}}},
    {"hpr2", NULL, {{6, 8}, {0, 0}}},
};

static int row_major_position(int info, const char *routine)
{
    for (size_t f = 0; f < sizeof row_major_swaps / sizeof *row_major_swaps; f++) {
        if (!strstr(routine, row_major_swaps[f].family) ||
            (row_major_swaps[f].except && strstr(routine, row_major_swaps[f].except)))
            continue;
        for (int p = 0; p < 2; p++) {
            const int *pair = row_major_swaps[f].swap[p];
            if (info == pair[0] || info == pair[1])
                return info == pair[0] ? pair[1] : pair[0];
        }
        return info;
    }
    return info;
}

void cblas_xerbla(int info, const char *routine, const char *form, ...)
{
    (void)form;
    if (RowMajorStrg)
        info = row_major_position(info, routine);
    if (strcmp(routine, "cblas_sgemm") == 0)
        fprintf(stderr, "tiledblas: parameter %d (%s) to %s was invalid\n", info,
                arg_name(cblas_sgemm_args, sizeof cblas_sgemm_args / sizeof *cblas_sgemm_args, info),
                routine);
    else
        fprintf(stderr, "tiledblas: parameter %d to %s was invalid\n", info, routine);
}

void xerbla_(const char *srname, const int *info, size_t srname_len)
{
    /* Fortran strings are blank-padded, not NUL-terminated. */
    size_t len = strnlen(srname, srname_len < 24 ? srname_len : 24);
    while (len > 0 && srname[len - 1] == ' ')
        len--;
    if (CBLAS_CallFromC) {
        char routine[32] = "cblas_";
        for (size_t i = 0; i < len; i++)
            routine[6 + i] = (char)tolower((unsigned char)srname[i]);
        cblas_xerbla(*info + 1, routine, "");
    } else if (len == 5 && strncmp(srname, "SGEMM", 5) == 0) {
        fprintf(stderr, "tiledblas: parameter %d (%s) to SGEMM was invalid\n", *info,
                arg_name(f77_sgemm_args, sizeof f77_sgemm_args / sizeof *f77_sgemm_args, *info));
    } else {
        fprintf(stderr, "tiledblas: parameter %d to %.*s was invalid\n", *info, (int)len, srname);
    }
}
