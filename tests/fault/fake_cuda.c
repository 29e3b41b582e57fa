/*
 * The simulated CUDA runtime and driver (fake_cuda.h): every cuda* and cu*
 * function the library's host code calls, on host memory, with the
 * allocation registry that checks each copy and launch, and the fault
 * injection. One lock serialises it all; streams run synchronously. Each
 * device has a primary context; a thread's current context names its
 * current device (none current: device 0), which tags the memory, streams
 * and events made under it, and which every copy and launch must match.
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fake_cuda.h"

typedef struct {
    char *base;
    size_t bytes;
    fake_kind kind;
    int library; /* made through the runtime, not by the test */
    int device;  /* current when it was made */
} allocation;

typedef struct handle {
    int live;
    int device;           /* current when it was made */
    const void *recorder; /* an event's: the thread that recorded it last (its thread_tag) */
} handle;

/* The calling thread, as an address unique to it. */
static _Thread_local char thread_tag;

/* A device's primary context, the only kind the fake has. */
struct CUctx_st {
    int device;
};
static struct CUctx_st primary[FAKE_MAX_DEVICES] = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}};
_Static_assert(FAKE_MAX_DEVICES == 8, "one primary context per device");

static struct {
    pthread_mutex_t lock;
    allocation *allocations;
    int count, capacity;
    int streams, events;
    size_t free_bytes;
    fake_mode mode;
    long nth, sites, alloc_sites;
    char only[32];
    int fired;
    int devices, only_device; /* the devices reported; the one whose calls are counted (-1: all) */
    cudaError_t sticky[FAKE_MAX_DEVICES], last; /* a lost context is lost on its device alone */
    long launches[FAKE_MAX_DEVICES];
    long device_waits;   /* calls that wait for the whole device (fake_device_waits) */
    long legacy_records; /* events recorded on the legacy default stream (fake_legacy_records) */
    long foreign_waits;  /* waits for an event another thread recorded last (fake_foreign_waits) */
    int unloading;
    size_t device_bytes, device_peak; /* the library's live device memory, and its most since the reset */
} fake = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Simulated memory comes from mmap, never the brk heap, which the library knows holds no device memory. */
static void *map(size_t bytes)
{
    void *p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void unmap(void *p, size_t bytes)
{
    munmap(p, bytes ? bytes : 1);
}

/* A deferred error, reported by the next synchronisation of the thread that queued the work: the
 * library's streams belong to one call at a time, so the thread stands for the streams. */
static _Thread_local cudaError_t pending;

/* The calling thread's current context, and the device it names. */
static _Thread_local CUcontext current_context;

static int current_device(void)
{
    return current_context ? current_context->device : 0;
}

static const char *const kind_names[FAKE_KINDS] = {"device", "pinned", "managed", "registered"};

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    fputs("fake CUDA: ", stderr);
    vfprintf(stderr, fmt, args);
    fputc('\n', stderr);
    va_end(args);
    abort();
}

const char *fake_mode_name(fake_mode mode)
{
    static const char *const names[FAKE_MODES] = {"none", "plain", "sticky", "deferred", "oom", "unloading"};
    return mode < FAKE_MODES ? names[mode] : "?";
}

void fake_reset(size_t free_bytes)
{
    pthread_mutex_lock(&fake.lock);
    for (int i = 0; i < fake.count; i++)
        if (fake.allocations[i].kind != FAKE_REGISTERED)
            unmap(fake.allocations[i].base, fake.allocations[i].bytes);
    fake.count = 0;
    fake.streams = fake.events = 0;
    fake.free_bytes = free_bytes;
    fake.mode = FAKE_NONE;
    fake.nth = fake.sites = fake.alloc_sites = 0;
    fake.only[0] = '\0';
    fake.fired = 0;
    fake.devices = 1;
    fake.only_device = -1;
    for (int d = 0; d < FAKE_MAX_DEVICES; d++) {
        fake.sticky[d] = cudaSuccess;
        fake.launches[d] = 0;
    }
    fake.device_waits = fake.legacy_records = fake.foreign_waits = 0;
    fake.last = pending = cudaSuccess;
    current_context = NULL;
    fake.unloading = 0;
    fake.device_bytes = fake.device_peak = 0;
    pthread_mutex_unlock(&fake.lock);
}

void fake_teardown(void)
{
    pthread_mutex_lock(&fake.lock);
    fake.unloading = 1;
    for (int i = 0; i < fake.count; i++)
        if (fake.allocations[i].kind != FAKE_REGISTERED)
            mprotect(fake.allocations[i].base, fake.allocations[i].bytes ? fake.allocations[i].bytes : 1, PROT_NONE);
    pthread_mutex_unlock(&fake.lock);
}

void fake_set_devices(int count)
{
    if (count < 1 || count > FAKE_MAX_DEVICES)
        die("fake_set_devices: %d devices (1 to %d)", count, FAKE_MAX_DEVICES);
    pthread_mutex_lock(&fake.lock);
    fake.devices = count;
    pthread_mutex_unlock(&fake.lock);
}

void fake_inject(fake_mode mode, long nth, const char *only)
{
    fake_inject_on(-1, mode, nth, only);
}

void fake_inject_on(int device, fake_mode mode, long nth, const char *only)
{
    pthread_mutex_lock(&fake.lock);
    fake.only_device = device;
    fake.mode = mode;
    fake.nth = nth;
    fake.sites = fake.alloc_sites = 0;
    snprintf(fake.only, sizeof fake.only, "%s", only ? only : "");
    fake.fired = 0;
    pthread_mutex_unlock(&fake.lock);
}

/* A counter of the fake's, read under its lock. */
static long counter(const long *value)
{
    pthread_mutex_lock(&fake.lock);
    const long read = *value;
    pthread_mutex_unlock(&fake.lock);
    return read;
}

long fake_sites(void)
{
    return counter(&fake.sites);
}

long fake_alloc_sites(void)
{
    return counter(&fake.alloc_sites);
}

int fake_fired(void)
{
    pthread_mutex_lock(&fake.lock);
    const int fired = fake.fired;
    pthread_mutex_unlock(&fake.lock);
    return fired;
}

long fake_launches(int device)
{
    pthread_mutex_lock(&fake.lock);
    const long launches = device >= 0 && device < FAKE_MAX_DEVICES ? fake.launches[device] : 0;
    pthread_mutex_unlock(&fake.lock);
    return launches;
}

long fake_device_waits(void)
{
    return counter(&fake.device_waits);
}

long fake_legacy_records(void)
{
    return counter(&fake.legacy_records);
}

long fake_foreign_waits(void)
{
    return counter(&fake.foreign_waits);
}

/* --- the registry (under fake.lock) --- */

static void add_allocation(void *base, size_t bytes, fake_kind kind, int library)
{
    if (fake.count == fake.capacity) {
        fake.capacity = fake.capacity ? 2 * fake.capacity : 16;
        fake.allocations = realloc(fake.allocations, (size_t)fake.capacity * sizeof *fake.allocations);
        if (!fake.allocations)
            die("out of host memory");
    }
    fake.allocations[fake.count++] = (allocation){base, bytes, kind, library, current_device()};
    if (library && kind == FAKE_DEVICE && (fake.device_bytes += bytes) > fake.device_peak)
        fake.device_peak = fake.device_bytes;
}

static allocation *find(const void *p)
{
    const char *c = p;
    for (int i = 0; i < fake.count; i++)
        if (c >= fake.allocations[i].base && c < fake.allocations[i].base + fake.allocations[i].bytes)
            return &fake.allocations[i];
    return NULL;
}

/* Removes the allocation starting at p, of one of the kinds in `kinds` (bits); 0 if there is none. */
static int remove_allocation(const void *p, unsigned kinds, int *kind, size_t *bytes)
{
    for (int i = 0; i < fake.count; i++)
        if (fake.allocations[i].base == p && (kinds >> fake.allocations[i].kind & 1)) {
            *kind = fake.allocations[i].kind;
            *bytes = fake.allocations[i].bytes;
            if (fake.allocations[i].library && *kind == FAKE_DEVICE)
                fake.device_bytes -= *bytes;
            fake.allocations[i] = fake.allocations[--fake.count];
            return 1;
        }
    return 0;
}

static int device_side(const allocation *a)
{
    return a && (a->kind == FAKE_DEVICE || a->kind == FAKE_MANAGED);
}

/* A range the GPU reads or writes: inside one live device or managed allocation and, device memory, of
 * the current device (managed memory any device reaches), else the test aborts. */
static void check_device(const void *p, size_t bytes, const char *what)
{
    if (!bytes)
        return;
    const allocation *a = find(p);
    if (!device_side(a) || (const char *)p + bytes > a->base + a->bytes)
        die("%s: [%p, +%zu bytes) is not inside a live device or managed allocation (%s)", what, p, bytes,
            a ? kind_names[a->kind] : "no allocation there");
    if (a->kind == FAKE_DEVICE && a->device != current_device())
        die("%s: [%p, +%zu bytes) is memory of device %d, used with device %d current", what, p, bytes, a->device,
            current_device());
}

/* A range on the host: never device memory; a range that starts in pinned or registered memory and
 * runs past it is refused with invalid value, as the driver does. */
static cudaError_t check_host(const void *p, size_t bytes, const char *what)
{
    if (!bytes)
        return cudaSuccess;
    const allocation *a = find(p);
    if (a && a->kind == FAKE_DEVICE)
        die("%s: host side [%p, +%zu bytes) is device memory", what, p, bytes);
    if (a && (const char *)p + bytes > a->base + a->bytes)
        return cudaErrorInvalidValue;
    return cudaSuccess;
}

void fake_check_device(const void *p, size_t bytes, const char *what)
{
    pthread_mutex_lock(&fake.lock);
    check_device(p, bytes, what);
    pthread_mutex_unlock(&fake.lock);
}

void *fake_alloc(fake_kind kind, size_t bytes)
{
    void *p = map(bytes);
    if (!p)
        die("out of host memory");
    pthread_mutex_lock(&fake.lock);
    add_allocation(p, bytes, kind, 0);
    pthread_mutex_unlock(&fake.lock);
    return p;
}

void fake_register(void *p, size_t bytes)
{
    pthread_mutex_lock(&fake.lock);
    add_allocation(p, bytes, FAKE_REGISTERED, 0);
    pthread_mutex_unlock(&fake.lock);
}

int fake_library_allocations(fake_kind kind)
{
    int live = 0;
    pthread_mutex_lock(&fake.lock);
    for (int i = 0; i < fake.count; i++)
        live += fake.allocations[i].library && fake.allocations[i].kind == kind;
    pthread_mutex_unlock(&fake.lock);
    return live;
}

size_t fake_library_device_peak(void)
{
    pthread_mutex_lock(&fake.lock);
    const size_t peak = fake.device_peak;
    pthread_mutex_unlock(&fake.lock);
    return peak;
}

int fake_streams(void)
{
    pthread_mutex_lock(&fake.lock);
    const int live = fake.streams;
    pthread_mutex_unlock(&fake.lock);
    return live;
}

int fake_events(void)
{
    pthread_mutex_lock(&fake.lock);
    const int live = fake.events;
    pthread_mutex_unlock(&fake.lock);
    return live;
}

/* --- fallible calls (under fake.lock) --- */

/*
 * A fallible call: counted, and failed when it is the injected one; after a
 * sticky error or once unloading, every call fails. *spoil: the call is the
 * deferred fault, which takes effect wrongly (a copy delivers NaN).
 */
static cudaError_t enter(const char *name, int allocating, int *spoil)
{
    const int device = current_device();
    if (spoil)
        *spoil = 0;
    if (fake.sticky[device] != cudaSuccess)
        return fake.last = fake.sticky[device];
    if (fake.unloading)
        return fake.last = cudaErrorCudartUnloading;
    if ((fake.only[0] && strcmp(fake.only, name) != 0) || (fake.only_device >= 0 && device != fake.only_device))
        return cudaSuccess;
    fake.sites++;
    fake.alloc_sites += allocating;
    const long index = fake.mode == FAKE_OOM ? (allocating ? fake.alloc_sites : 0) : fake.sites;
    if (fake.mode == FAKE_NONE || fake.fired || index != fake.nth)
        return cudaSuccess;
    fake.fired = 1;
    switch (fake.mode) {
    case FAKE_PLAIN:
        return fake.last = cudaErrorInvalidValue;
    case FAKE_STICKY:
        return fake.last = fake.sticky[device] = cudaErrorIllegalAddress;
    case FAKE_DEFERRED:
        pending = cudaErrorMemoryAllocation;
        if (spoil)
            *spoil = 1;
        return cudaSuccess;
    case FAKE_OOM:
        return fake.last = cudaErrorMemoryAllocation;
    case FAKE_UNLOADING:
        fake.unloading = 1;
        return fake.last = cudaErrorCudartUnloading;
    default:
        return cudaSuccess;
    }
}

/* A synchronisation: reports an error deferred since the last one. */
static cudaError_t synchronise(const char *name)
{
    cudaError_t status = enter(name, 0, NULL);
    if (status == cudaSuccess && pending != cudaSuccess) {
        status = fake.last = pending;
        pending = cudaSuccess;
    }
    return status;
}

/* A call that cannot fail but with a lost context or at shutdown. */
static cudaError_t quiet(void)
{
    const cudaError_t sticky = fake.sticky[current_device()];
    return sticky != cudaSuccess ? sticky : fake.unloading ? cudaErrorCudartUnloading : cudaSuccess;
}

#define LOCKED(expr)                                    \
    do {                                                \
        pthread_mutex_lock(&fake.lock);                 \
        const cudaError_t locked_status_ = (expr);      \
        pthread_mutex_unlock(&fake.lock);               \
        return locked_status_;                          \
    } while (0)

/* The default streams: 0, the legacy one and the calling thread's, each of the current device. */
static int is_default_stream(cudaStream_t stream)
{
    return stream == NULL || stream == cudaStreamLegacy || stream == cudaStreamPerThread;
}

static void check_stream(cudaStream_t stream, const char *what)
{
    if (!is_default_stream(stream) && !((handle *)stream)->live)
        die("%s: stream %p was destroyed", what, (void *)stream);
}

/* Launches and records held by fake_hold_next_launch and fake_hold_next_mark, outside fake.lock: other
 * threads' calls go on meanwhile. */
enum { HOLD_NONE, HOLD_LAUNCH, HOLD_MARK };
#define HELD_LAUNCHES 8
static struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int held, released;
    int blocking[HELD_LAUNCHES];           /* slots of held launches, */
    cudaStream_t streams[HELD_LAUNCHES]; /* whose streams' work waits, as on a GPU */
} holding = {.lock = PTHREAD_MUTEX_INITIALIZER, .changed = PTHREAD_COND_INITIALIZER};
static _Thread_local int hold_next;

/* Under holding.lock: whether a held launch blocks `stream`. */
static int blocked(cudaStream_t stream)
{
    for (int i = 0; i < HELD_LAUNCHES; i++)
        if (holding.blocking[i] && holding.streams[i] == stream)
            return 1;
    return 0;
}

/* Work queued on, or a wait for, the stream of a held launch waits for its release. Called under
 * fake.lock, which the release does not take. */
static void wait_for_held(cudaStream_t stream)
{
    pthread_mutex_lock(&holding.lock);
    while (!holding.released && blocked(stream))
        pthread_cond_wait(&holding.changed, &holding.lock);
    pthread_mutex_unlock(&holding.lock);
}

/* Outside fake.lock: where the calling thread's next `what` is held, it waits for the release; a held
 * launch blocks the work on its stream meanwhile. */
static void hold_if_asked(int what, cudaStream_t stream)
{
    if (hold_next != what)
        return;
    hold_next = HOLD_NONE;
    pthread_mutex_lock(&holding.lock);
    holding.held++;
    int slot = -1;
    for (int i = 0; what == HOLD_LAUNCH && slot < 0 && i < HELD_LAUNCHES; i++)
        if (!holding.blocking[i])
            slot = i;
    if (what == HOLD_LAUNCH && slot < 0)
        die("more than %d launches held at once", HELD_LAUNCHES);
    if (slot >= 0) {
        holding.blocking[slot] = 1;
        holding.streams[slot] = stream;
    }
    pthread_cond_broadcast(&holding.changed);
    while (!holding.released)
        pthread_cond_wait(&holding.changed, &holding.lock);
    if (slot >= 0)
        holding.blocking[slot] = 0;
    holding.held--;
    pthread_mutex_unlock(&holding.lock);
}

/* A stream work is queued on: live, and of the current device (a default stream always is). */
static void check_stream_here(cudaStream_t stream, const char *what)
{
    check_stream(stream, what);
    wait_for_held(stream);
    if (!is_default_stream(stream) && ((handle *)stream)->device != current_device())
        die("%s: stream %p of device %d used with device %d current", what, (void *)stream,
            ((handle *)stream)->device, current_device());
}

static void check_event(cudaEvent_t event, const char *what)
{
    if (!event || !((handle *)event)->live)
        die("%s: event %p is not a live event", what, (void *)event);
}


static void hold_next_one(int what)
{
    pthread_mutex_lock(&holding.lock);
    holding.released = 0;
    pthread_mutex_unlock(&holding.lock);
    hold_next = what;
}

void fake_hold_next_launch(void)
{
    hold_next_one(HOLD_LAUNCH);
}

void fake_hold_next_mark(void)
{
    hold_next_one(HOLD_MARK);
}

void fake_release_held(void)
{
    pthread_mutex_lock(&holding.lock);
    holding.released = 1;
    pthread_cond_broadcast(&holding.changed);
    pthread_mutex_unlock(&holding.lock);
}

int fake_held(void)
{
    pthread_mutex_lock(&holding.lock);
    const int held = holding.held;
    pthread_mutex_unlock(&holding.lock);
    return held;
}

cudaError_t fake_launch(cudaStream_t stream)
{
    hold_if_asked(HOLD_LAUNCH, stream);
    pthread_mutex_lock(&fake.lock);
    check_stream_here(stream, "launch");
    const cudaError_t status = enter("launch", 0, NULL);
    if (status == cudaSuccess)
        fake.launches[current_device()]++;
    pthread_mutex_unlock(&fake.lock);
    return status;
}

/* --- the runtime --- */

static cudaError_t get_device_count(int *count)
{
    const cudaError_t status = enter("cudaGetDeviceCount", 0, NULL);
    *count = status == cudaSuccess ? fake.devices : 0;
    return status;
}
cudaError_t cudaGetDeviceCount(int *count)
{
    LOCKED(get_device_count(count));
}

static cudaError_t get_device(int *device)
{
    const cudaError_t status = enter("cudaGetDevice", 0, NULL);
    if (status == cudaSuccess)
        *device = current_device();
    return status;
}
cudaError_t cudaGetDevice(int *device)
{
    LOCKED(get_device(device));
}

/* Makes the device's primary context current; asked of that device, so its lost context answers. */
static cudaError_t set_device(int device)
{
    if (device < 0 || device >= fake.devices)
        return fake.last = cudaErrorInvalidDevice;
    const CUcontext before = current_context;
    current_context = &primary[device];
    const cudaError_t status = enter("cudaSetDevice", 0, NULL);
    if (status != cudaSuccess)
        current_context = before;
    return status;
}
cudaError_t cudaSetDevice(int device)
{
    LOCKED(set_device(device));
}

static cudaError_t device_attribute(int *value, enum cudaDeviceAttr attribute, int device)
{
    const cudaError_t status = enter("cudaDeviceGetAttribute", 0, NULL);
    if (status == cudaSuccess && (device < 0 || device >= fake.devices))
        return fake.last = cudaErrorInvalidDevice;
    if (status == cudaSuccess)
        *value = attribute == cudaDevAttrMaxPitch ? 2147483647 : attribute == cudaDevAttrMultiProcessorCount ? 132 : 1;
    return status;
}
cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attribute, int device)
{
    LOCKED(device_attribute(value, attribute, device));
}

static cudaError_t mem_get_info(size_t *free_bytes, size_t *total)
{
    const cudaError_t status = enter("cudaMemGetInfo", 0, NULL);
    if (status == cudaSuccess) {
        *free_bytes = fake.free_bytes;
        *total = (size_t)16 << 30;
    }
    return status;
}
cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
    LOCKED(mem_get_info(free_bytes, total));
}

static cudaError_t create_handle(void **out, int *live, const char *name)
{
    const cudaError_t status = enter(name, 1, NULL);
    if (status != cudaSuccess)
        return status;
    handle *h = malloc(sizeof *h);
    if (!h)
        return fake.last = cudaErrorMemoryAllocation;
    h->live = 1;
    h->device = current_device();
    h->recorder = NULL;
    ++*live;
    *out = h;
    return cudaSuccess;
}

/* Handles stay allocated, marked dead, so that a use after destruction is caught. */
static cudaError_t destroy_handle(void *h, int *live, const char *what)
{
    if (!h || !((handle *)h)->live)
        die("%s: %p is not live", what, h);
    ((handle *)h)->live = 0;
    --*live;
    return quiet();
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned flags)
{
    (void)flags;
    LOCKED(create_handle((void **)stream, &fake.streams, "cudaStreamCreateWithFlags"));
}
cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    LOCKED(destroy_handle(stream, &fake.streams, "cudaStreamDestroy"));
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned flags)
{
    (void)flags;
    LOCKED(create_handle((void **)event, &fake.events, "cudaEventCreateWithFlags"));
}
cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    LOCKED(create_handle((void **)event, &fake.events, "cudaEventCreate"));
}
cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    LOCKED(destroy_handle(event, &fake.events, "cudaEventDestroy"));
}

static cudaError_t stream_sync(cudaStream_t stream, const char *name)
{
    check_stream(stream, name);
    wait_for_held(stream);
    return synchronise(name);
}
cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    LOCKED(stream_sync(stream, "cudaStreamSynchronize"));
}
cudaError_t cudaStreamQuery(cudaStream_t stream)
{
    LOCKED(stream_sync(stream, "cudaStreamQuery"));
}
static cudaError_t device_synchronise(void)
{
    fake.device_waits++;
    return synchronise("cudaDeviceSynchronize");
}
cudaError_t cudaDeviceSynchronize(void)
{
    LOCKED(device_synchronise());
}

static cudaError_t event_sync(cudaEvent_t event, const char *name)
{
    check_event(event, name);
    return synchronise(name);
}
cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    LOCKED(event_sync(event, "cudaEventSynchronize"));
}
cudaError_t cudaEventQuery(cudaEvent_t event)
{
    LOCKED(event_sync(event, "cudaEventQuery"));
}

static cudaError_t event_record(cudaEvent_t event, cudaStream_t stream)
{
    check_event(event, "cudaEventRecord");
    check_stream_here(stream, "cudaEventRecord");
    if (((handle *)event)->device != current_device())
        die("cudaEventRecord: event %p of device %d recorded with device %d current", (void *)event,
            ((handle *)event)->device, current_device());
    const cudaError_t status = enter("cudaEventRecord", 0, NULL);
    if (status == cudaSuccess) {
        ((handle *)event)->recorder = &thread_tag;
        fake.legacy_records += stream == cudaStreamLegacy;
    }
    return status;
}
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    if (stream == cudaStreamLegacy)
        hold_if_asked(HOLD_MARK, stream);
    LOCKED(event_record(event, stream));
}

static cudaError_t stream_wait_event(cudaStream_t stream, cudaEvent_t event)
{
    check_event(event, "cudaStreamWaitEvent");
    check_stream(stream, "cudaStreamWaitEvent");
    const cudaError_t status = enter("cudaStreamWaitEvent", 0, NULL);
    const void *recorder = ((handle *)event)->recorder;
    fake.foreign_waits += status == cudaSuccess && recorder && recorder != &thread_tag;
    return status;
}
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags)
{
    (void)flags;
    LOCKED(stream_wait_event(stream, event));
}

static cudaError_t elapsed(float *ms, cudaEvent_t start, cudaEvent_t stop)
{
    check_event(start, "cudaEventElapsedTime");
    check_event(stop, "cudaEventElapsedTime");
    const cudaError_t status = enter("cudaEventElapsedTime", 0, NULL);
    if (status == cudaSuccess)
        *ms = 1.0f;
    return status;
}
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t stop)
{
    LOCKED(elapsed(ms, start, stop));
}

cudaError_t cudaGetLastError(void)
{
    pthread_mutex_lock(&fake.lock);
    const cudaError_t last = fake.last;
    fake.last = quiet();
    pthread_mutex_unlock(&fake.lock);
    return last;
}

const char *cudaGetErrorString(cudaError_t status)
{
    switch (status) {
    case cudaSuccess:
        return "no error";
    case cudaErrorInvalidValue:
        return "invalid argument";
    case cudaErrorMemoryAllocation:
        return "out of memory";
    case cudaErrorCudartUnloading:
        return "driver shutting down";
    case cudaErrorIllegalAddress:
        return "an illegal memory access was encountered";
    default:
        return "unknown error";
    }
}

/* --- memory --- */

static cudaError_t allocate(void **p, size_t size, fake_kind kind, const char *name)
{
    const cudaError_t status = enter(name, 1, NULL);
    if (status != cudaSuccess)
        return status;
    *p = map(size);
    if (!*p)
        return fake.last = cudaErrorMemoryAllocation;
    add_allocation(*p, size, kind, 1);
    return cudaSuccess;
}
cudaError_t cudaMalloc(void **p, size_t size)
{
    LOCKED(allocate(p, size, FAKE_DEVICE, "cudaMalloc"));
}
/* Stream-ordered allocation: the fake's streams run synchronously, so at once. */
static cudaError_t allocate_async(void **p, size_t size, cudaStream_t stream)
{
    check_stream_here(stream, "cudaMallocAsync");
    return allocate(p, size, FAKE_DEVICE, "cudaMallocAsync");
}
cudaError_t cudaMallocAsync(void **p, size_t size, cudaStream_t stream)
{
    LOCKED(allocate_async(p, size, stream));
}
cudaError_t cudaHostAlloc(void **p, size_t size, unsigned flags)
{
    (void)flags;
    LOCKED(allocate(p, size, FAKE_PINNED, "cudaHostAlloc"));
}
cudaError_t cudaMallocManaged(void **p, size_t size, unsigned flags)
{
    (void)flags;
    LOCKED(allocate(p, size, FAKE_MANAGED, "cudaMallocManaged"));
}

/* cudaFree and cudaFreeHost wait for the whole device first; cudaFreeAsync does not. */
static cudaError_t release(void *p, unsigned kinds, const char *what)
{
    int kind;
    size_t bytes;
    if (!p)
        return quiet();
    fake.device_waits += strcmp(what, "cudaFreeAsync") != 0;
    if (!remove_allocation(p, kinds, &kind, &bytes))
        die("%s: %p is not the start of a live allocation of its kind", what, p);
    unmap(p, bytes);
    return quiet();
}
cudaError_t cudaFree(void *p)
{
    LOCKED(release(p, 1u << FAKE_DEVICE | 1u << FAKE_MANAGED, "cudaFree"));
}
static cudaError_t release_async(void *p, cudaStream_t stream)
{
    check_stream_here(stream, "cudaFreeAsync");
    return release(p, 1u << FAKE_DEVICE, "cudaFreeAsync");
}
cudaError_t cudaFreeAsync(void *p, cudaStream_t stream)
{
    LOCKED(release_async(p, stream));
}
cudaError_t cudaFreeHost(void *p)
{
    LOCKED(release(p, 1u << FAKE_PINNED, "cudaFreeHost"));
}

static cudaError_t host_register(void *p, size_t size)
{
    const cudaError_t status = enter("cudaHostRegister", 1, NULL);
    if (status == cudaSuccess)
        add_allocation(p, size, FAKE_REGISTERED, 1);
    return status;
}
cudaError_t cudaHostRegister(void *p, size_t size, unsigned flags)
{
    (void)flags;
    LOCKED(host_register(p, size));
}

static cudaError_t host_unregister(void *p)
{
    int kind;
    size_t bytes;
    if (!remove_allocation(p, 1u << FAKE_REGISTERED, &kind, &bytes))
        die("cudaHostUnregister: %p was not registered", p);
    return quiet();
}
cudaError_t cudaHostUnregister(void *p)
{
    LOCKED(host_unregister(p));
}

/* The checks of one side of a copy by its direction: the device side inside a device allocation. */
static cudaError_t check_copy(void *dst, const void *src, size_t dst_span, size_t src_span, enum cudaMemcpyKind kind,
                              const char *name)
{
    const int dst_device = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice ||
                           (kind == cudaMemcpyDefault && device_side(find(dst)));
    const int src_device = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice ||
                           (kind == cudaMemcpyDefault && device_side(find(src)));
    cudaError_t status = cudaSuccess;
    if (dst_device)
        check_device(dst, dst_span, name);
    else
        status = check_host(dst, dst_span, name);
    if (src_device)
        check_device(src, src_span, name);
    else if (status == cudaSuccess)
        status = check_host(src, src_span, name);
    return status != cudaSuccess ? (fake.last = status) : status;
}

static void fill_nan(char *dst, size_t bytes)
{
    const float nan = NAN;
    for (size_t i = 0; i + sizeof nan <= bytes; i += sizeof nan)
        memcpy(dst + i, &nan, sizeof nan);
}

static cudaError_t copy_2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                           enum cudaMemcpyKind kind, cudaStream_t stream, const char *name)
{
    check_stream_here(stream, name);
    int spoil;
    cudaError_t status = enter(name, 0, &spoil);
    if (status != cudaSuccess)
        return status;
    if (width > dpitch || width > spitch)
        return fake.last = cudaErrorInvalidPitchValue;
    if (!width || !height)
        return cudaSuccess;
    if ((status = check_copy(dst, src, dpitch * (height - 1) + width, spitch * (height - 1) + width, kind, name)) !=
        cudaSuccess)
        return status;
    for (size_t row = 0; row < height; row++) {
        char *to = (char *)dst + row * dpitch;
        if (spoil)
            fill_nan(to, width);
        else
            memmove(to, (const char *)src + row * spitch, width);
    }
    return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    LOCKED(copy_2d(dst, count, src, count, count, 1, kind, stream, "cudaMemcpyAsync"));
}
cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                              enum cudaMemcpyKind kind, cudaStream_t stream)
{
    LOCKED(copy_2d(dst, dpitch, src, spitch, width, height, kind, stream, "cudaMemcpy2DAsync"));
}

static cudaError_t memset_async(void *p, int value, size_t count, cudaStream_t stream)
{
    check_stream_here(stream, "cudaMemsetAsync");
    int spoil;
    const cudaError_t status = enter("cudaMemsetAsync", 0, &spoil);
    if (status != cudaSuccess)
        return status;
    check_device(p, count, "cudaMemsetAsync");
    if (spoil)
        fill_nan(p, count);
    else
        memset(p, value, count);
    return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void *p, int value, size_t count, cudaStream_t stream)
{
    LOCKED(memset_async(p, value, count, stream));
}

static cudaError_t pointer_attributes(struct cudaPointerAttributes *attributes, const void *p)
{
    const cudaError_t status = enter("cudaPointerGetAttributes", 0, NULL);
    if (status != cudaSuccess)
        return status;
    const allocation *a = find(p);
    memset(attributes, 0, sizeof *attributes);
    attributes->type = !a                           ? cudaMemoryTypeUnregistered
                       : a->kind == FAKE_DEVICE      ? cudaMemoryTypeDevice
                       : a->kind == FAKE_MANAGED     ? cudaMemoryTypeManaged
                                                     : cudaMemoryTypeHost;
    attributes->device = a ? a->device : -2;
    attributes->devicePointer = a ? (void *)p : NULL;
    attributes->hostPointer = a && a->kind != FAKE_DEVICE ? (void *)p : NULL;
    return cudaSuccess;
}
cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attributes, const void *p)
{
    LOCKED(pointer_attributes(attributes, p));
}

/* --- the driver: pointer queries answer from the registry; a thread's current context --- */

static void one_attribute(CUpointer_attribute attribute, void *data, const allocation *a)
{
    switch (attribute) {
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *(unsigned *)data = !a ? 0u : a->kind == FAKE_DEVICE || a->kind == FAKE_MANAGED ? CU_MEMORYTYPE_DEVICE
                                                                                         : CU_MEMORYTYPE_HOST;
        break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
        *(unsigned *)data = a && a->kind == FAKE_MANAGED;
        break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        *(int *)data = a ? a->device : -2;
        break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        *(CUdeviceptr *)data = a ? (CUdeviceptr)(uintptr_t)a->base : 0;
        break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
        *(size_t *)data = a ? a->bytes : 0;
        break;
    default:
        die("cuPointerGetAttributes: attribute %d is not simulated", (int)attribute);
    }
}

CUresult cuPointerGetAttributes(unsigned count, CUpointer_attribute *attributes, void **data, CUdeviceptr ptr)
{
    pthread_mutex_lock(&fake.lock);
    const int unloading = fake.unloading;
    const allocation *a = find((const void *)(uintptr_t)ptr);
    for (unsigned i = 0; i < count && !unloading; i++)
        one_attribute(attributes[i], data[i], a);
    pthread_mutex_unlock(&fake.lock);
    return unloading ? CUDA_ERROR_DEINITIALIZED : CUDA_SUCCESS;
}

CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
    return cuPointerGetAttributes(1, &attribute, &data, ptr);
}

CUresult cuCtxGetCurrent(CUcontext *context)
{
    *context = current_context;
    return CUDA_SUCCESS;
}

/* The fake's contexts are the devices' primary ones. */
CUresult cuCtxSetCurrent(CUcontext context)
{
    pthread_mutex_lock(&fake.lock);
    const int devices = fake.devices;
    pthread_mutex_unlock(&fake.lock);
    if (context && (context < primary || context >= primary + devices))
        die("cuCtxSetCurrent: %p is not a device's primary context", (void *)context);
    current_context = context;
    return CUDA_SUCCESS;
}
