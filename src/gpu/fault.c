/*
 * Sorting CUDA statuses (fault.h). Sticky errors, those the CUDA runtime's
 * documentation says leave the process in an inconsistent state, with those
 * that mean the device or its driver is gone (and an unknown error), leave
 * the context unusable: every later call returns them, and the process must
 * start again to use the GPU. Other errors concern the call that returned them. The runtime unloading (the process is
 * exiting, its destructors run while calls are in flight) is neither: the
 * call should end without more work. The exiting thread itself is told
 * apart: its calls from later exit handlers stay off the GPU.
 *
 * CUDA's teardown does not wait for other threads: it destroys the contexts,
 * and with them the device memory and pinned host buffers that calls in
 * flight are still reading and writing. So the GPU path's exit handler, which
 * runs before that teardown, first closes the GPU path to other threads and
 * waits for their calls in flight to end.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>

#include "core/call.h" /* tb_seconds_now */
#include "gpu/fault.h"
#include "gpu/lanes.h"

/* The longest the exit waits for other threads' calls in flight: past it, CUDA's teardown meets them. */
#define DRAIN_SECONDS 30

static atomic_int shutting_down;
static _Thread_local int exiting_here;
static atomic_int closed;    /* the exit began: other threads' calls stay off the GPU */
static atomic_int in_flight; /* calls between tb_fault_enter and tb_fault_leave, all threads */
static _Thread_local int entered_here;

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

int tb_fault_enter(void)
{
    /* Counted before the check, as the exit closes before it counts: one of the two sees the other. */
    atomic_fetch_add(&in_flight, 1);
    if (tb_fault_closed()) {
        atomic_fetch_sub(&in_flight, 1);
        return 0;
    }
    entered_here++;
    return 1;
}

int tb_fault_closed(void)
{
    return atomic_load(&closed) && !exiting_here;
}

void tb_fault_leave(void)
{
    entered_here--;
    atomic_fetch_sub(&in_flight, 1);
}

/* The exit handler: the exiting thread is marked, the GPU path closed to the others (calls waiting for a
 * lane give up), and their calls in flight waited for; a call of this thread's own, say from a signal
 * handler that exits, is not. */
static void close_at_exit(void)
{
    exiting_here = 1;
    atomic_store(&closed, 1);
    tb_lanes_close();
    const double deadline = tb_seconds_now() + DRAIN_SECONDS;
    const struct timespec pause = {0, 1000 * 1000};
    while (atomic_load(&in_flight) > entered_here && tb_seconds_now() < deadline)
        nanosleep(&pause, NULL);
}

/* A forked child has only the forking thread: its parent's other calls in flight are not its own, nor is
 * an exit its parent began. */
static void after_fork_in_child(void)
{
    atomic_store(&in_flight, entered_here);
    atomic_store(&closed, 0);
}

__attribute__((constructor)) static void register_fork_handler(void)
{
    pthread_atfork(NULL, NULL, after_fork_in_child);
}

void tb_fault_watch_exit(void)
{
    atexit(close_at_exit);
}

int tb_fault_exiting_here(void)
{
    return exiting_here;
}
