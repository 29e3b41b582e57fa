/*
 * Sorting CUDA statuses (fault.h). Sticky errors, those the CUDA runtime's
 * documentation says leave the process in an inconsistent state, with those
 * that mean the device or its driver is gone (and an unknown error), leave
 * the context unusable: every later call returns them, and the process must
 * start again to use the GPU. Other errors concern the call that returned them. The runtime unloading (the process is
 * exiting, its destructors run while calls are in flight) is neither: the
 * call should end without more work. The exiting thread itself is told
 * apart: its calls from later exit handlers stay off the GPU.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>

#include "gpu/fault.h"

static atomic_int shutting_down;
static _Thread_local int exiting_here;

static int is_sticky(cudaError_t status)
{
    switch (status) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
    case cudaErrorPriorLaunchFailure:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
    case cudaErrorNvlinkUncorrectable:
    case cudaErrorContained:
    case cudaErrorTensorMemoryLeak:
    case cudaErrorMpsClientTerminated:
    case cudaErrorExternalDevice:
    case cudaErrorContextIsDestroyed:
    case cudaErrorDevicesUnavailable:
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorUnknown:
        return 1;
    default:
        return 0;
    }
}

/* Without this status, the context: whether it still answers. */
static tb_fault probe_context(void)
{
    cudaGetLastError(); /* a per-call error is cleared; a sticky one stays and shows below */
    size_t free_bytes, total;
    const cudaError_t probe = cudaMemGetInfo(&free_bytes, &total);
    if (probe == cudaSuccess)
        return TB_FAULT_CALL;
    if (probe == cudaErrorCudartUnloading)
        return TB_FAULT_SHUTDOWN;
    return probe == cudaErrorMemoryAllocation ? TB_FAULT_CALL : TB_FAULT_CONTEXT;
}

tb_fault tb_fault_of(cudaError_t status)
{
    tb_fault fault;
    if (status == cudaSuccess)
        return TB_FAULT_NONE;
    if (status == cudaErrorCudartUnloading) /* the driver's CUDA_ERROR_DEINITIALIZED has the same number */
        fault = TB_FAULT_SHUTDOWN;
    else if (is_sticky(status))
        fault = TB_FAULT_CONTEXT;
    else if ((fault = probe_context()) == TB_FAULT_CALL && status == cudaErrorMemoryAllocation)
        fault = TB_FAULT_NO_MEMORY;
    if (fault == TB_FAULT_SHUTDOWN)
        atomic_store(&shutting_down, 1);
    return fault;
}

int tb_fault_shutting_down(void)
{
    return atomic_load(&shutting_down);
}

static void mark_exiting_thread(void)
{
    exiting_here = 1;
}

void tb_fault_watch_exit(void)
{
    atexit(mark_exiting_thread);
}

int tb_fault_exiting_here(void)
{
    return exiting_here;
}
