/*
 * Two simulated devices (fault_call.h). A call on memory of the device the
 * GPU path did not start on runs on that device and puts the calling
 * thread's current device and context back; host operands and memory of the
 * first device still run on the first; operands in device memory of both
 * devices are refused, C untouched, with one warning; a fault on the second
 * device leaves the first in use and, once it loses the second's context,
 * has calls on that device's memory refused, C never wrong without a warning
 * saying so; threads calling on both devices at once get C right. The
 * runtime aborts any copy or launch that touches memory or a stream of a
 * device other than the current one. Each scenario runs in a fresh process:
 * the GPU path starts once per process.
 */
#include <cuda.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_cuda.h"
#include "fault_call.h"

#define SCENARIO_SECONDS 60
#define CALLER_THREADS 8
#define CALLS_PER_THREAD 12

/* Where an operand lives: host memory, or device or managed memory made with `device` current. */
typedef struct {
    memory kind;
    int device;
} place;

static const place host = {HOST, 0}, device0 = {DEVICE, 0}, device1 = {DEVICE, 1}, managed0 = {MANAGED, 0},
                   managed1 = {MANAGED, 1};

/* Shapes, layouts and scalars of the calls; the column-major ones with threads = 2 go through sgemm_
 * (gemm_run), the others through cblas_sgemm. */
static const config shapes[] = {
    {STAGED, HOST, HOST, HOST, COL, N, N, 24, 20, 18, 0.5f, 0, 2},
    {STAGED, HOST, HOST, HOST, ROW, T, N, 22, 19, 12, 0.0f, 0, 1},
    {STAGED, HOST, HOST, HOST, COL, N, T, 17, 23, 9, -1.0f, 0, 1},
    {STAGED, HOST, HOST, HOST, COL, T, T, 30, 11, 21, 0.0f, 0, 2},
};
#define SHAPES (int)(sizeof shapes / sizeof shapes[0])

/* stderr of the scenario's process, where the library's warnings go. */
static FILE *warning_log;
static long warning_offset;

static void set_up_failed(const char *what, cudaError_t status)
{
    printf("FAIL: setting up: %s: %s\n", what, cudaGetErrorString(status));
    _exit(2);
}

static void set_device(int device)
{
    const cudaError_t status = cudaSetDevice(device);
    if (status != cudaSuccess)
        set_up_failed("cudaSetDevice", status);
}

/* The operand moved into memory of `where`, made as the application would, with its device current; the
 * calling thread's context as it was after. */
static void put(operand *op, place where)
{
    if (where.kind == HOST)
        return;
    CUcontext application;
    cuCtxGetCurrent(&application);
    set_device(where.device);
    const size_t bytes = op->count * sizeof(float);
    void *copy = NULL;
    cudaError_t status =
        where.kind == DEVICE ? cudaMalloc(&copy, bytes) : cudaMallocManaged(&copy, bytes, cudaMemAttachGlobal);
    if (status == cudaSuccess)
        status = cudaMemcpyAsync(copy, op->data, bytes, cudaMemcpyHostToDevice, NULL);
    if (status != cudaSuccess)
        set_up_failed("an operand in device memory", status);
    free(op->data);
    op->data = copy;
    op->where = where.kind;
    cuCtxSetCurrent(application);
}

/* The fault injected into one call: the nth fallible CUDA call made with `device` current fails in `mode`. */
typedef struct {
    int device;
    fake_mode mode;
    long nth;
} fault;

/* What one call did. */
typedef struct {
    int verdict;        /* gemm_verdict */
    long launches[2];   /* kernels launched on each device during the call */
    int cpu_calls, warnings;
    int named_warnings;   /* warnings that contain the text the call looked for */
    int partial_warnings; /* warnings that say C may hold part of the product */
    int state_kept;     /* the thread's current context and device as before the call */
    int fired;          /* the injected fault fired */
} observed;

/* A call's operands, made before it runs (their memory kept: the registry checks against it to the end). */
static gemm prepare(int shape, const place where[3], unsigned seed)
{
    gemm g;
    gemm_make(&g, &shapes[shape % SHAPES], seed);
    put(&g.a, where[0]);
    put(&g.b, where[1]);
    put(&g.c, where[2]);
    return g;
}

/* The call with the fault injected (NULL: none); `text`: what to look for in its warnings. */
static observed run(gemm *g, const fault *injected, const char *text)
{
    CUcontext context_before = NULL, context_after = NULL;
    int device_before = -1, device_after = -2;
    cuCtxGetCurrent(&context_before);
    cudaGetDevice(&device_before);
    if (warning_log)
        count_warnings_with(warning_log, &warning_offset, "", NULL);
    const long launches[2] = {fake_launches(0), fake_launches(1)};
    const int cpu_calls = fault_cpu_calls();
    if (injected)
        fake_inject_on(injected->device, injected->mode, injected->nth, NULL);
    gemm_run(g, g->c.data);
    observed o = {.verdict = gemm_verdict(g),
                  .launches = {fake_launches(0) - launches[0], fake_launches(1) - launches[1]},
                  .cpu_calls = fault_cpu_calls() - cpu_calls,
                  .fired = fake_fired()};
    if (injected)
        fake_inject(FAKE_NONE, 0, NULL);
    if (warning_log) {
        const long start = warning_offset;
        count_warnings_with(warning_log, &warning_offset, "may hold part of the product", &o.partial_warnings);
        warning_offset = start;
        o.warnings = count_warnings_with(warning_log, &warning_offset, text, &o.named_warnings);
    }
    cuCtxGetCurrent(&context_after);
    cudaGetDevice(&device_after);
    o.state_kept = context_after == context_before && device_after == device_before;
    return o;
}

static observed call(int shape, const place where[3], unsigned seed)
{
    gemm g = prepare(shape, where, seed);
    return run(&g, NULL, "");
}

static int report(const char *label, const char *expected, const observed *o)
{
    printf("FAIL: %s: expected %s; C %s, kernels on devices 0/1: %ld/%ld, %d CPU calls, %d warnings, "
           "current device and context %s\n",
           label, expected, o->verdict == 1 ? "right" : o->verdict == 0 ? "untouched" : "wrong", o->launches[0],
           o->launches[1], o->cpu_calls, o->warnings, o->state_kept ? "kept" : "changed");
    return 1;
}

/* Computed on the GPU of `device` alone, C right, silently, the thread's device and context kept. */
static int expect_on(int device, const char *label, observed o)
{
    const int right = o.verdict == 1 && o.launches[device] > 0 && o.launches[1 - device] == 0 && !o.cpu_calls &&
                      !o.warnings && o.state_kept;
    return right ? 0 : report(label, device ? "computed on device 1" : "computed on device 0", &o);
}

/* Refused: nothing launched or handed to the CPU BLAS, C untouched, one warning, device and context kept. */
static int expect_refused(const char *label, observed o)
{
    const int right = o.verdict == 0 && !o.launches[0] && !o.launches[1] && !o.cpu_calls && o.warnings == 1 &&
                      o.state_kept;
    return right ? 0 : report(label, "refused with one warning, C untouched", &o);
}

static const place all_host[3] = {host, host, host}, all_device0[3] = {device0, device0, device0},
                   all_device1[3] = {device1, device1, device1};

/* (a) The GPU path starts on device 0 with a call on host operands; then, with device `application` current,
 * calls on each device's memory run there and host operands on device 0. */
static int started_on_host(int application)
{
    set_device(0);
    int failures = expect_on(0, "host operands, the first call", call(0, all_host, 1));
    set_device(application);
    failures += expect_on(1, "device 1 memory", call(1, all_device1, 2));
    failures += expect_on(0, "device 0 memory", call(2, all_device0, 3));
    failures += expect_on(0, "host operands", call(3, all_host, 4));
    failures += expect_on(1, "device 1 memory again", call(0, all_device1, 5));
    return failures;
}

static int started_on_host_device0_current(void)
{
    return started_on_host(0);
}

static int started_on_host_device1_current(void)
{
    return started_on_host(1);
}

/* (b) The first call is on memory of device 1 while device 0 is current: the GPU path starts on device 0
 * and runs that call on device 1. */
static int started_on_other_device(void)
{
    set_device(0);
    int failures = expect_on(1, "device 1 memory, the first call", call(1, all_device1, 6));
    failures += expect_on(0, "host operands", call(0, all_host, 7));
    failures += expect_on(0, "device 0 memory", call(3, all_device0, 8));
    failures += expect_on(1, "device 1 memory again", call(2, all_device1, 9));
    return failures;
}

/* The mirror: device 1 current at the first call, so the GPU path starts there and device 0 is the other. */
static int started_on_device1(void)
{
    set_device(1);
    int failures = expect_on(1, "device 1 memory, the first call", call(1, all_device1, 10));
    failures += expect_on(0, "device 0 memory", call(0, all_device0, 11));
    failures += expect_on(1, "host operands", call(2, all_host, 12));
    set_device(0);
    failures += expect_on(0, "device 0 memory, device 0 current", call(3, all_device0, 13));
    return failures;
}

/* (c) Operands in device memory of both devices are refused (route: no device reaches them all, the CPU
 * cannot read them); with host memory beside one device's they run there; managed memory of both devices,
 * which the CPU reads, runs as host memory on the first device. */
static int mixed(void)
{
    set_device(0);
    const place split_ab[3] = {device0, device1, device0}, split_c[3] = {device1, host, device0},
                host_beside[3] = {device1, host, device1}, managed_both[3] = {managed0, managed1, host},
                managed_other[3] = {host, managed1, host};
    int failures = expect_on(0, "host operands, the first call", call(0, all_host, 14));
    failures += expect_refused("A on device 0, B on device 1", call(1, split_ab, 15));
    failures += expect_refused("A on device 1, C on device 0", call(2, split_c, 16));
    failures += expect_on(1, "A and C on device 1, B on the host", call(3, host_beside, 17));
    failures += expect_on(0, "managed A on device 0, managed B on device 1", call(0, managed_both, 18));
    failures += expect_on(1, "managed B on device 1", call(1, managed_other, 19));
    return failures;
}

/* (d) One fault on device 1 in a call on its memory (shape and placement by device1_variant): the call ends
 * with C right, or untouched with a warning, or, where a kernel may have written a C nothing can compute
 * again, with a warning saying so; a managed C with beta == 0, which the CPU reads, is right after any
 * fault that leaves the context. Device 0 stays in use; device 1 too unless its context was lost, after
 * which calls on its memory are refused. -1: the fault did not fire (nth is past the call's last site). */
enum { DEVICE1_VARIANTS = 3 };
static const char *const variant_names[DEVICE1_VARIANTS] = {"all on device 1", "A and C on device 1",
                                                            "managed C on device 1, beta 0"};
static fault device1_fault;
static int device1_variant;

static int fault_on_device1(void)
{
    static const place operand_sets[DEVICE1_VARIANTS][3] = {
        {device1, device1, device1}, {device1, host, device1}, {host, host, managed1}};
    static const int variant_shapes[DEVICE1_VARIANTS] = {0, 1, 1}; /* beta 0.5, beta 0, beta 0 */
    set_device(0);
    int failures = expect_on(0, "host operands, the first call", call(0, all_host, 20));
    /* Device 1's memory for the call after the fault is made before it: a lost context makes none. */
    gemm faulted = prepare(variant_shapes[device1_variant], operand_sets[device1_variant], 21),
         later = prepare(0, all_device1, 24);
    const int lost = device1_fault.mode == FAKE_STICKY;
    const observed o =
        run(&faulted, &device1_fault, lost ? "(device 1 failed: " : "may hold part of the product");
    if (!o.fired)
        return failures ? failures : -1;
    /* After a lost context the one warning says why; C is wrong only with the warning that says so. A
     * managed C with beta == 0 is computed again on the CPU after any fault that leaves the context. */
    const int warned = o.warnings == 1 && (!lost || o.named_warnings == 1);
    const int managed_c = device1_variant == 2;
    const int right = o.launches[0] == 0 && o.state_kept &&
                      (managed_c && !lost ? o.verdict == 1
                                          : !o.cpu_calls && (o.verdict == 1 || (o.verdict == 0 && warned) ||
                                                             (o.verdict < 0 && warned && o.partial_warnings == 1)));
    if (!right)
        failures += report("the call with the fault on device 1",
                           managed_c && !lost ? "C right (the CPU computes a managed C again)"
                           : lost             ? "C right, or one warning naming device 1's failure (and, with C "
                                                "wrong, saying C may hold part of the product)"
                                              : "C right, untouched with one warning, or wrong with a warning saying so",
                           &o);
    failures += expect_on(0, "device 0 memory after the fault", call(2, all_device0, 22));
    failures += expect_on(0, "host operands after the fault", call(3, all_host, 23));
    if (lost)
        failures += expect_refused("device 1 memory after its context was lost", run(&later, NULL, ""));
    else
        failures += expect_on(1, "device 1 memory after the fault", run(&later, NULL, ""));
    if (!tiledblas_gpu_available()) {
        printf("FAIL: the GPU was disabled by a fault on device 1\n");
        failures++;
    }
    return failures;
}

/* (e) Threads at once, each with its own current device, on memory of device 0, device 1, the host, and
 * device 1 beside the host. */
static atomic_int threads_failed;

static void *call_both(void *arg)
{
    const int index = (int)(size_t)arg;
    static const place beside_host[3] = {host, device1, device1};
    const place *const placements[4] = {all_device0, all_device1, all_host, beside_host};
    static const int devices[4] = {0, 1, 0, 1};
    set_device(index % 2);
    for (int i = 0; i < CALLS_PER_THREAD; i++) {
        const int which = (index + i) % 4;
        const observed o = call(index + i, placements[which], (unsigned)(100 * index + i));
        /* Other threads' kernels count too: only this call's own device can be asked for; no call uses the
         * CPU BLAS. */
        if (o.verdict != 1 || !o.launches[devices[which]] || o.cpu_calls || !o.state_kept) {
            char label[64];
            snprintf(label, sizeof label, "thread %d, call %d", index, i);
            report(label, "C right on the GPU, current device and context kept", &o);
            atomic_fetch_add(&threads_failed, 1);
        }
    }
    return NULL;
}

static int threads_on_both(void)
{
    set_device(0);
    int failures = expect_on(0, "host operands, the first call", call(0, all_host, 30));
    warning_log = NULL; /* the threads' warnings are not told apart */
    pthread_t threads[CALLER_THREADS];
    for (size_t t = 0; t < CALLER_THREADS; t++)
        if (pthread_create(&threads[t], NULL, call_both, (void *)t) != 0)
            _exit(5);
    for (int t = 0; t < CALLER_THREADS; t++)
        pthread_join(threads[t], NULL);
    return failures + atomic_load(&threads_failed);
}

/* What a scenario's process came to. */
enum { SCENARIO_PASSED, SCENARIO_FAILED, SCENARIO_CRASHED, SCENARIO_NOT_FIRED };

/* The runtime's own complaint (a copy or launch on the wrong device, say) from the scenario's stderr. */
static void print_runtime_complaint(FILE *log)
{
    char line[1024];
    rewind(log);
    while (fgets(line, sizeof line, log))
        if (strncmp(line, "fake CUDA: ", 11) == 0)
            printf("  %s", line);
}

/* Runs a scenario in a fresh process with two devices, its warnings counted. */
static int in_child(int (*scenario)(void), const char *name)
{
    FILE *log = tmpfile();
    if (!log)
        return SCENARIO_CRASHED;
    fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) {
        alarm(SCENARIO_SECONDS);
        warning_log = log;
        if (dup2(fileno(log), STDERR_FILENO) < 0)
            _exit(2);
        set_environment(STAGED);
        fake_reset(free_bytes_for(STAGED));
        fake_set_devices(2);
        const int failures = scenario();
        fflush(stdout);
        _exit(failures < 0 ? 10 : failures > 0 ? 1 : 0);
    }
    int status;
    waitpid(pid, &status, 0);
    int result = SCENARIO_FAILED;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 10)
        result = SCENARIO_NOT_FIRED;
    else if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        result = SCENARIO_PASSED;
    else if (WIFSIGNALED(status)) {
        printf("FAIL: %s: %s\n", name, WTERMSIG(status) == SIGALRM ? "hang" : "crash or abort");
        print_runtime_complaint(log);
        result = SCENARIO_CRASHED;
    } else {
        printf("FAIL: %s\n", name);
    }
    fclose(log);
    return result;
}

int fault_two_devices(void)
{
    static const struct {
        int (*run)(void);
        const char *name;
    } scenarios[] = {{started_on_host_device0_current, "started on host operands, device 0 current"},
                     {started_on_host_device1_current, "started on host operands, device 1 current"},
                     {started_on_other_device, "started on memory of device 1"},
                     {started_on_device1, "started with device 1 current"},
                     {mixed, "operands of both devices"},
                     {threads_on_both, "threads on both devices"}};
    int failures = 0;
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++)
        failures += in_child(scenarios[i].run, scenarios[i].name) != SCENARIO_PASSED;

    static const fake_mode modes[] = {FAKE_PLAIN, FAKE_STICKY, FAKE_OOM, FAKE_DEFERRED};
    long faults = 0;
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++)
        for (device1_variant = 0; device1_variant < DEVICE1_VARIANTS; device1_variant++)
            /* Up to the call's last site, or the first crash (the sites after it would crash alike). */
            for (long nth = 1;; nth++) {
                device1_fault = (fault){1, modes[m], nth};
                char name[96];
                snprintf(name, sizeof name, "%s fault at device 1's call %ld, operands %s", fake_mode_name(modes[m]),
                         nth, variant_names[device1_variant]);
                const int result = in_child(fault_on_device1, name);
                if (result == SCENARIO_NOT_FIRED)
                    break;
                failures += result != SCENARIO_PASSED;
                faults++;
                if (result == SCENARIO_CRASHED)
                    break;
            }
    printf("two devices: %ld faults injected on device 1\n", faults);
    return failures + (faults == 0);
}
