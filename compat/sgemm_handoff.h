/*
 * A checked, column-major SGEMM from any of its names, with 64-bit integers:
 * to the framework (tb_sgemm) with the name's CPU target, or, where a
 * dimension or leading dimension exceeds what the GPU path takes (INT_MAX;
 * only an ILP64 name can pass one), straight to that CPU target, untruncated.
 */
#ifndef TILEDBLAS_COMPAT_SGEMM_HANDOFF_H
#define TILEDBLAS_COMPAT_SGEMM_HANDOFF_H

#include <stdint.h>

#include "core/call.h"
#include "cpu/cpu_blas.h"

void tb_sgemm_handoff(tb_cpu_target *cpu, const tb_origin *origin, int trans_a, int trans_b, int64_t m, int64_t n,
                      int64_t k, float alpha, const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
                      float *c, int64_t ldc);

#endif /* TILEDBLAS_COMPAT_SGEMM_HANDOFF_H */
