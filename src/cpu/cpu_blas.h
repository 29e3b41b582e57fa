/* The CPU path: whichever BLAS the process would have used without us (cpu_blas.c). */
#ifndef TILEDBLAS_CPU_CPU_BLAS_H
#define TILEDBLAS_CPU_CPU_BLAS_H

#include "core/call.h"
#include "tiledblas.h"

typedef void (*tb_cblas_sgemm_fn)(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int m,
                                  int n, int k, float alpha, const float *a, int lda, const float *b, int ldb,
                                  float beta, float *c, int ldc);

/* Runs the call on the CPU BLAS, found on first use. */
TB_TINY_PATH void tb_cpu_sgemm(const tb_call *call);
const char *tb_cpu_backend_name(void);
/* The backend's name, or NULL while no call has needed it (nothing is loaded to answer). */
const char *tb_cpu_backend_if_resolved(void);
/* The backend's own cblas_sgemm, which cannot come back to us (OpenBLAS); else NULL. */
tb_cblas_sgemm_fn tb_cpu_backend_cblas(void);
/* C = beta*C on host memory, reference rules (beta == 0 writes zeros without reading). */
void tb_scale_c_host(const tb_call *call);

#endif /* TILEDBLAS_CPU_CPU_BLAS_H */
