/* Shared by the CBLAS and Fortran entry points. */
#ifndef TILEDBLAS_COMPAT_H
#define TILEDBLAS_COMPAT_H

#include <stddef.h>

#include "core/call.h"
#include "tiledblas.h"

/* Fortran transpose character: 0 'N', 1 'T' or 'C' (real data), -1 invalid. Case-insensitive. */
TB_TINY_PATH int tb_parse_trans(char trans);

/*
 * The reference SGEMM argument checks, in its order, on a column-major call.
 * Returns 0 or the Fortran parameter number: M 3, N 4, K 5, LDA 8, LDB 10, LDC 13
 * (the transpose flags, 1 and 2, are checked by the caller).
 */
TB_TINY_PATH int tb_sgemm_dims_error(int trans_a, int trans_b, int m, int n, int k, int lda, int ldb, int ldc);

/* The Fortran error handler (not in the public header: programs define their own freely). */
TILEDBLAS_API void xerbla_(const char *srname, const int *info, size_t srname_len);

#endif /* TILEDBLAS_COMPAT_H */
