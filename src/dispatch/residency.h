/* Where a call's operands live: host, pinned, managed or device memory (residency.c). */
#ifndef TILEDBLAS_DISPATCH_RESIDENCY_H
#define TILEDBLAS_DISPATCH_RESIDENCY_H

#include <stddef.h>

#include "core/call.h"

/* Operands in device or managed memory, which the GPU path uses in place, and pinned ones. */
typedef struct {
    unsigned mask;    /* TB_RESIDENT_* bits */
    unsigned pinned;  /* TB_RESIDENT_* bits of operands in pinned host memory */
    int cpu_readable; /* all managed (or none resident): the CPU BLAS can still read them */
    int device;       /* their device; -1 none, -2 several */
} tb_residency;

/* The bytes each operand spans as stored. */
static inline size_t tb_span_a(const tb_call *call)
{
    return call->trans_a ? tb_span_bytes(call->k, call->m, call->lda) : tb_span_bytes(call->m, call->k, call->lda);
}

static inline size_t tb_span_b(const tb_call *call)
{
    return call->trans_b ? tb_span_bytes(call->n, call->k, call->ldb) : tb_span_bytes(call->k, call->n, call->ldb);
}

static inline size_t tb_span_c(const tb_call *call)
{
    return tb_span_bytes(call->m, call->n, call->ldc);
}

/*
 * reads_ab: A and B are read (else only C is asked about). below_floor: the
 * call is below the GPU floor, so whether its operands are pinned cannot
 * matter, and those in memory certainly on the host (host_ranges.h) need no
 * question to the driver (about 0.3 us each, as much as a whole 16^3 SGEMM on
 * the CPU).
 */
tb_residency tb_find_residency(const tb_call *call, int reads_ab, int below_floor);

#endif /* TILEDBLAS_DISPATCH_RESIDENCY_H */
