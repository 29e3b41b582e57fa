/* What a CUDA status means for the GPU path: retry, fall back, give the GPU up, or stop (fault.c). */
#ifndef TILEDBLAS_GPU_FAULT_H
#define TILEDBLAS_GPU_FAULT_H

#include <cuda_runtime_api.h>

typedef enum {
    TB_FAULT_NONE = 0,
    TB_FAULT_NO_MEMORY, /* the call did not fit; later ones may */
    TB_FAULT_CALL,      /* this call failed, the context still works: another path may succeed */
    TB_FAULT_CONTEXT,   /* the context is lost (a sticky error): nothing more runs on this GPU */
    TB_FAULT_SHUTDOWN   /* CUDA is being torn down with the process */
} tb_fault;

/*
 * The fault behind `status`, asked in the call's context: a status that does
 * not say whether the context survived is followed by a probe of it, and a
 * per-call error is cleared so that a later launch check does not take it
 * for its own. Once shutdown has been seen, it is remembered.
 */
tb_fault tb_fault_of(cudaError_t status);
/* Whether CUDA was seen shutting down: the process is exiting. */
int tb_fault_shutting_down(void);

#endif /* TILEDBLAS_GPU_FAULT_H */
