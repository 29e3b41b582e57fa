/*
 * A simulated CUDA runtime and driver (fake_cuda.c), built as a library named
 * libcuda.so.1 so that the library's host code finds it where it looks for the
 * driver. "Device" memory is host memory; an allocation registry checks every
 * copy and every kernel launch against the allocations alive (a range outside
 * them aborts the test), and the Nth fallible call can be made to fail.
 * Streams run synchronously; an error deferred by the injection is reported by
 * the next synchronisation of the thread that queued the failed work. There
 * is one device unless the test asks for more: memory, streams and events
 * belong to the device current on the thread that made them, a copy or launch
 * touching another device's memory or stream aborts, and a lost context is
 * lost on its device alone.
 */
#ifndef TB_FAKE_CUDA_H
#define TB_FAKE_CUDA_H

#include <stddef.h>

#include <cuda_runtime_api.h>

typedef enum {
    FAKE_NONE,      /* nothing fails */
    FAKE_PLAIN,     /* the Nth fallible call fails with a per-call error, without effect */
    FAKE_STICKY,    /* the Nth and every later call fail: the context is lost */
    FAKE_DEFERRED,  /* the Nth call takes effect (a copy's destination gets NaN); the thread's next
                       synchronisation reports out of memory */
    FAKE_OOM,       /* the Nth allocating call (memory, streams, events) is out of memory */
    FAKE_UNLOADING, /* from the Nth call on, the runtime is shutting down with the process */
    FAKE_MODES
} fake_mode;

typedef enum { FAKE_DEVICE, FAKE_PINNED, FAKE_MANAGED, FAKE_REGISTERED, FAKE_KINDS } fake_kind;

#define FAKE_MAX_DEVICES 8

const char *fake_mode_name(fake_mode mode);

/* A fresh runtime: one device, no allocation, no error, no context current on the calling thread; each
 * device reports `free_bytes` free. */
void fake_reset(size_t free_bytes);
/* The devices the runtime reports, up to FAKE_MAX_DEVICES. */
void fake_set_devices(int count);
/* From now on count fallible calls (only those named `only`, when given) and fail the nth in `mode`. */
void fake_inject(fake_mode mode, long nth, const char *only);
/* The same, counting only calls made with `device` current (-1: any). */
void fake_inject_on(int device, fake_mode mode, long nth, const char *only);
/* Calls counted since fake_inject: fallible ones, and those of them that allocate. */
long fake_sites(void);
long fake_alloc_sites(void);
/* The runtime's teardown at exit: from now on every call fails as unloading, and the contexts are gone
 * with the memory they held (device, managed and pinned allocations no longer readable or writable). */
void fake_teardown(void);
/* Whether the injected fault fired. */
int fake_fired(void);
/* Kernels launched with `device` current since the reset. */
long fake_launches(int device);
/* Calls since the reset that wait for the whole device: cudaDeviceSynchronize, cudaFree, cudaFreeHost. */
long fake_device_waits(void);
/* Since the reset: events recorded on the legacy default stream; waits of a stream for an event that
 * another thread recorded last (a call waiting for a mark not its own). */
long fake_legacy_records(void);
long fake_foreign_waits(void);
/* The calling thread's next kernel launch waits, before it runs, until fake_release_held(), and
 * with it any work on or wait for its stream from other threads. */
void fake_hold_next_launch(void);
/* The calling thread's next event record on the legacy default stream waits until fake_release_held(),
 * as one can inside the driver behind other threads' pageable copies; nothing else waits with it. */
void fake_hold_next_mark(void);
void fake_release_held(void);
/* The launches and records waiting so. */
int fake_held(void);

/* Memory the test owns, outside the counting, on the calling thread's current device. */
void *fake_alloc(fake_kind kind, size_t bytes);
void fake_register(void *p, size_t bytes);
/* Live allocations the library made (not the test's) of a kind; live streams and events. */
int fake_library_allocations(fake_kind kind);
/* The most device memory (cudaMalloc, cudaMallocAsync) the library held at once since the reset, in bytes. */
size_t fake_library_device_peak(void);
int fake_streams(void);
int fake_events(void);

/* The simulated kernels (fake_kernels.c): the tensor-core rung offered from CUDA's start on (off by
 * default); launches of a kernel so far. */
void fake_set_tensor_rung(int offered);
long fake_kernel_launches(int kernel); /* a tb_kernel_id */
/* For the simulated kernels: a launch site (counted, may fail) and the range checks of a launch. */
cudaError_t fake_launch(cudaStream_t stream);
void fake_check_device(const void *p, size_t bytes, const char *what);

#endif /* TB_FAKE_CUDA_H */
