/* The framework every SGEMM entry point hands its checked call to (sgemm.c). */
#ifndef TILEDBLAS_DISPATCH_SGEMM_H
#define TILEDBLAS_DISPATCH_SGEMM_H

#include "core/call.h"

/* Reference quick returns, the choice between GPU and CPU, the CPU fallback, accounting. */
TB_TINY_PATH void tb_sgemm(const tb_call *call, const tb_origin *origin);

#endif /* TILEDBLAS_DISPATCH_SGEMM_H */
