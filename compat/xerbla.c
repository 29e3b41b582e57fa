/*
 * Default error handlers. Both print one line and return (OpenBLAS's
 * behaviour, not the reference's exit). The library always calls them through
 * their global symbols, so a program's own definitions take their place.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "tiledblas.h"

int RowMajorStrg = 0;

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

void cblas_xerbla(int info, const char *routine, const char *form, ...)
{
    (void)form;
    const int is_sgemm = strcmp(routine, "cblas_sgemm") == 0;
    /* Row-major calls report the swapped column-major numbers; map them back. */
    if (RowMajorStrg && strstr(routine, "gemm")) {
        if (info == 4 || info == 5)
            info = 9 - info;
        else if (info == 9 || info == 11)
            info = 20 - info;
    }
    if (is_sgemm)
        fprintf(stderr, "tiledblas: parameter %d (%s) to %s was invalid\n", info,
                arg_name(cblas_sgemm_args, sizeof cblas_sgemm_args / sizeof *cblas_sgemm_args, info),
                routine);
    else
        fprintf(stderr, "tiledblas: parameter %d to %s was invalid\n", info, routine);
}

void xerbla_(const char *srname, const int *info, size_t srname_len)
{
    /* Fortran strings are blank-padded, not NUL-terminated. */
    size_t len = strnlen(srname, srname_len < 32 ? srname_len : 32);
    while (len > 0 && srname[len - 1] == ' ')
        len--;
    if (len == 5 && strncmp(srname, "SGEMM", 5) == 0)
        fprintf(stderr, "tiledblas: parameter %d (%s) to SGEMM was invalid\n", *info,
                arg_name(f77_sgemm_args, sizeof f77_sgemm_args / sizeof *f77_sgemm_args, *info));
    else
        fprintf(stderr, "tiledblas: parameter %d to %.*s was invalid\n", *info, (int)len, srname);
}
