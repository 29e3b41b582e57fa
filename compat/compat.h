/* Shared by the CBLAS and Fortran entry points. */
#ifndef TILEDBLAS_COMPAT_H
#define TILEDBLAS_COMPAT_H

#include <stddef.h>
#include <stdint.h>

#include "core/call.h"
#include "tiledblas.h"

/* Fortran transpose character: 0 'N', 1 'T' or 'C' (real data), -1 invalid. Case-insensitive. */
TB_TINY_PATH int tb_parse_trans(char trans);

/*
 * The reference SGEMM argument checks, in its order, on a column-major call.
 * Returns 0 or the Fortran parameter number: M 3, N 4, K 5, LDA 8, LDB 10, LDC 13
 * (the transpose flags, 1 and 2, are checked by the caller).
 */
int tb_sgemm_dims_error(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                        int64_t ldc);

/*
 * Argument errors, reported under one lock: the reference CBLAS protocol's
 * globals (RowMajorStrg, CBLAS_CallFromC) are set only here, for the
 * handler's time, and restored after.
 *   tb_report_cblas: cblas_xerbla(info, routine, form, value), RowMajorStrg = row_major;
 *   tb_report_f77:   xerbla_ (xerbla_64_ where ilp64) with the Fortran SGEMM's number,
 *                    from_cblas: CBLAS_CallFromC = 1 and RowMajorStrg = row_major.
 */
void tb_report_cblas(int row_major, int info, const char *routine, const char *form, int value);
void tb_report_f77(int ilp64, int from_cblas, int row_major, int info);

/* The Fortran error handlers (not in the public header: programs define their own freely). */
TILEDBLAS_API void xerbla_(const char *srname, const int *info, size_t srname_len);
TILEDBLAS_API void xerbla_64_(const char *srname, const int64_t *info, size_t srname_len);

#endif /* TILEDBLAS_COMPAT_H */
