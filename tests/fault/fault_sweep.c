/*
 * Fault injection over the library's GPU paths, on the simulated runtime
 * (fake_cuda.h): for each configuration (path, operand memory, layout,
 * transposes, beta) the fault-free call counts its fallible CUDA calls, then
 * each of them in turn is failed in each mode, in a forked child with a fresh
 * library. Each fault must leave C equal to the reference within the bound
 * (or, for device operands after the context is lost, C untouched and one
 * warning), at most one warning, the GPU usable after a fault that did not
 * lose the context (a later call on device pointers computes), no allocation
 * beyond what the library keeps, and, at shutdown, no CPU work and no
 * warning for the call in flight, while a call an exit handler makes after
 * it computes C on the CPU BLAS.
 *
 *   fault_sweep [--stride S]   every configuration, every Sth site
 *   fault_sweep --case NAME    one scenario: half-registered,
 *                              deferred-oom-managed, unloading-in-flight,
 *                              device-cap (TILEDBLAS_DEVICE_MB holds),
 *                              no-device-wait (device calls under a cap),
 *                              device-lanes[-capped] (two device calls at once),
 *                              marks-hold-no-lane (calls held marking the
 *                              application's work leave the lanes free),
 *                              own-marks (each call waits for its own mark),
 *                              exit-in-flight (main returns under calls),
 *                              reason-race (the GPU's reason read as it is
 *                              written; a race TSan reports), or
 *                              registry (the checks themselves catch bad ranges),
 *                              many-threads (48 threads' calls at once finish),
 *                              two-devices (memory of a second device)
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/call.h"
#include "fake_cuda.h"
#include "fault_call.h"
#include "refblas.h"
#include "tiledblas.h"

static const char *const memory_names[] = {"host", "pinned", "device", "managed", "half-registered"};
static const char *const path_names[] = {"staged", "pipelined", "row-blocks", "pageable"};

static const config configs[] = {
    {STAGED, HOST, HOST, HOST, COL, N, N, 33, 35, 37, 0.0f, 0, 1},
    {STAGED, HOST, HOST, HOST, ROW, T, N, 40, 24, 20, 0.5f, 0, 1},
    {STAGED, HOST, HOST, HOST, COL, N, T, 30, 28, 18, -1.0f, 1, 1},
    {STAGED, PINNED, PINNED, PINNED, COL, N, T, 25, 31, 17, 0.5f, 0, 1},
    {STAGED, PINNED, HOST, PINNED, ROW, N, N, 26, 22, 19, 0.0f, 0, 1},
    {STAGED, HALF_REGISTERED, HOST, HALF_REGISTERED, COL, T, N, 29, 27, 21, 0.5f, 0, 1},
    {PAGEABLE, HOST, HOST, HOST, COL, T, T, 27, 23, 20, 0.5f, 0, 1},
    {PAGEABLE, HOST, PINNED, HOST, ROW, N, T, 21, 26, 9, 0.0f, 0, 1},
    {STAGED, DEVICE, DEVICE, DEVICE, COL, N, N, 24, 20, 18, 0.5f, 0, 1},
    {STAGED, DEVICE, DEVICE, DEVICE, ROW, T, N, 22, 19, 12, 0.0f, 1, 1},
    {STAGED, MANAGED, MANAGED, MANAGED, COL, N, T, 20, 23, 17, 0.5f, 0, 1},
    {STAGED, HOST, HOST, MANAGED, COL, N, N, 24, 21, 16, 0.5f, 0, 1},
    {STAGED, DEVICE, HOST, DEVICE, COL, T, T, 18, 20, 22, 1.0f, 0, 1},
    {PIPELINED, HOST, HOST, HOST, COL, N, N, 40, 300, 24, 0.5f, 0, 1},
    {PIPELINED, PINNED, PINNED, PINNED, ROW, N, T, 260, 36, 20, 0.0f, 0, 1},
    {PIPELINED, HOST, HOST, HOST, ROW, T, T, 270, 33, 10, 0.5f, 1, 1},
    {ROW_BLOCKS, HOST, HOST, HOST, COL, T, N, 300, 260, 8, 0.5f, 0, 1},
    {ROW_BLOCKS, PINNED, HOST, HALF_REGISTERED, ROW, N, N, 260, 300, 6, 0.0f, 0, 1},
    {STAGED, HOST, HOST, HOST, COL, N, T, 36, 30, 20, 0.5f, 0, 2},
    {PIPELINED, HOST, PINNED, HOST, COL, T, N, 30, 280, 18, 0.0f, 1, 2},
    {STAGED, DEVICE, DEVICE, DEVICE, COL, N, T, 26, 22, 15, 0.5f, 0, 2},
};
#define CONFIGS (int)(sizeof configs / sizeof configs[0])

/* The device's free memory the fake reports: a device budget that cuts row blocks, else plenty. */
size_t free_bytes_for(path p)
{
    const size_t reserve = (size_t)256 << 20; /* the library leaves 1/64 of the 16 GB device */
    return p == ROW_BLOCKS ? reserve + 100000 * sizeof(float) : (size_t)8 << 30;
}

void set_environment(path p)
{
    setenv("TILEDBLAS_DEVICE", "gpu", 1);
    setenv("TILEDBLAS_COPY_THREADS", "2", 1);
    setenv("TILEDBLAS_GPU_MIN_FLOPS", "0", 1); /* every operand is asked about, however small the call */
    unsetenv("TILEDBLAS_VERBOSE");
    setenv("TILEDBLAS_PIPELINE_MIN_FLOPS", p == PIPELINED || p == ROW_BLOCKS ? "0" : "4e9", 1);
    setenv("TILEDBLAS_PINNED_MB", p == PAGEABLE ? "0" : p == ROW_BLOCKS ? "1" : "64", 1);
}

/* --- operands --- */

/* rows x cols as the layout stores it, with a leading dimension 3 past the least. */
static operand make(memory where, int layout, int rows, int cols)
{
    const int inner = layout == ROW ? cols : rows, outer = layout == ROW ? rows : cols;
    operand op = {NULL, (size_t)(inner + 3) * (size_t)(outer > 0 ? outer : 1), inner + 3, where};
    const size_t bytes = op.count * sizeof(float);
    switch (where) {
    case PINNED:
        op.data = fake_alloc(FAKE_PINNED, bytes);
        break;
    case DEVICE:
        op.data = fake_alloc(FAKE_DEVICE, bytes);
        break;
    case MANAGED:
        op.data = fake_alloc(FAKE_MANAGED, bytes);
        break;
    default:
        op.data = malloc(bytes);
        if (where == HALF_REGISTERED) /* the first half registered with CUDA, the rest pageable */
            fake_register(op.data, bytes / 2);
        break;
    }
    if (!op.data) {
        fprintf(stderr, "out of memory\n");
        _exit(2);
    }
    return op;
}

static void fill(operand *op, unsigned *seed)
{
    for (size_t i = 0; i < op->count; i++) {
        *seed = *seed * 1103515245u + 12345u;
        op->data[i] = (float)((*seed >> 8) % 2001) / 1000.0f - 1.0f;
    }
}

/* --- one call and its check --- */

/* A B + beta C by the reference, into `out`. */
static void ref_product(const gemm *g, float *out, const float *a, const float *b, float beta, const float *c)
{
    const config *f = &g->cfg;
    memcpy(out, c, g->c.count * sizeof(float));
    tb_ref_cblas_sgemm()(f->layout, f->trans_a, f->trans_b, f->m, f->n, f->k, 1.0f, a, g->a.ld, b, g->b.ld, beta,
                         out, g->c.ld);
}

static float *copy_of(const operand *op)
{
    float *copy = malloc(op->count * sizeof(float));
    memcpy(copy, op->data, op->count * sizeof(float));
    return copy;
}

void gemm_make(gemm *g, const config *cfg, unsigned seed)
{
    g->cfg = *cfg;
    const int ta = cfg->trans_a == T, tb = cfg->trans_b == T;
    g->a = make(cfg->a, cfg->layout, ta ? cfg->k : cfg->m, ta ? cfg->m : cfg->k);
    g->b = make(cfg->b, cfg->layout, tb ? cfg->n : cfg->k, tb ? cfg->k : cfg->n);
    g->c = make(cfg->c, cfg->layout, cfg->m, cfg->n);
    fill(&g->a, &seed);
    fill(&g->b, &seed);
    fill(&g->c, &seed);
    g->c0 = copy_of(&g->c);
    g->want = malloc(g->c.count * sizeof(float));
    g->bound = malloc(g->c.count * sizeof(float));
    /* The reference on host copies; the bound from |A| |B| + |beta| |C0|. */
    float *a = copy_of(&g->a), *b = copy_of(&g->b), *c = copy_of(&g->c);
    ref_product(g, g->want, a, b, cfg->beta, cfg->beta == 0.0f ? g->c0 : c);
    for (size_t i = 0; i < g->a.count; i++)
        a[i] = fabsf(a[i]);
    for (size_t i = 0; i < g->b.count; i++)
        b[i] = fabsf(b[i]);
    for (size_t i = 0; i < g->c.count; i++)
        c[i] = fabsf(c[i]);
    ref_product(g, g->bound, a, b, fabsf(cfg->beta), c);
    const float scale = 2.0f * (float)(cfg->k + 2) * FLT_EPSILON;
    for (size_t i = 0; i < g->c.count; i++)
        g->bound[i] *= scale;
    free(a), free(b), free(c);
}

/* Through cblas_sgemm, or sgemm_ for the calls from two threads (column-major): the CBLAS entry
 * writes the error protocol's globals, which the Fortran one leaves alone. */
void gemm_run(const gemm *g, float *c)
{
    const config *f = &g->cfg;
    if (f->threads == 2) {
        const char ta = f->trans_a == T ? 'T' : 'N', tb = f->trans_b == T ? 'T' : 'N';
        const float alpha = 1.0f;
        sgemm_(&ta, &tb, &f->m, &f->n, &f->k, &alpha, g->a.data, &g->a.ld, g->b.data, &g->b.ld, &f->beta, c,
               &g->c.ld);
        return;
    }
    cblas_sgemm(f->layout, f->trans_a, f->trans_b, f->m, f->n, f->k, 1.0f, g->a.data, g->a.ld, g->b.data, g->b.ld,
                f->beta, c, g->c.ld);
}

/* Whether element i of C's storage is inside the matrix (else padding). */
static int in_view(const gemm *g, size_t i)
{
    const int inner = (int)(i % (size_t)g->c.ld);
    return inner < (g->cfg.layout == ROW ? g->cfg.n : g->cfg.m);
}

/* 1: C is the reference within the bound, padding untouched; 0: untouched entirely; -1: neither. */
int gemm_verdict(const gemm *g)
{
    int right = 1, untouched = 1;
    for (size_t i = 0; i < g->c.count; i++) {
        const float got = g->c.data[i];
        untouched &= memcmp(&got, &g->c0[i], sizeof got) == 0;
        if (in_view(g, i))
            right &= fabsf(got - g->want[i]) <= g->bound[i];
        else
            right &= memcmp(&got, &g->c0[i], sizeof got) == 0;
    }
    return right ? 1 : untouched ? 0 : -1;
}

/* --- the child: one configuration under one fault --- */

static int cpu_calls;
void __real_tb_cpu_sgemm(const tb_call *call);
/* Every call the library hands to the CPU BLAS passes here (linked with --wrap). */
void __wrap_tb_cpu_sgemm(const tb_call *call)
{
    __atomic_add_fetch(&cpu_calls, 1, __ATOMIC_RELAXED);
    __real_tb_cpu_sgemm(call);
}

int fault_cpu_calls(void)
{
    return __atomic_load_n(&cpu_calls, __ATOMIC_RELAXED);
}

typedef struct {
    long sites, alloc_sites;
    int fired, result, warnings, cpu_calls;
    int unwritten; /* calls whose C was left untouched (of two with threads = 2) */
    int after_result, after_warnings; /* the call after the fault: on device pointers, or an exit handler's */
    int kept_device, kept_pinned, streams, events;
    size_t device_peak; /* the most device memory the library held at once */
} outcome;

int count_warnings_with(FILE *log, long *offset, const char *text, int *with_text)
{
    fflush(stderr);
    fseek(log, *offset, SEEK_SET);
    char line[1024];
    int warnings = 0;
    if (with_text)
        *with_text = 0;
    while (fgets(line, sizeof line, log)) {
        const int warning = strstr(line, "tiledblas: warning") != NULL;
        warnings += warning;
        if (with_text)
            *with_text += warning && strstr(line, text) != NULL;
        if (getenv("FAULT_SHOW_WARNINGS"))
            fputs(line, stdout);
    }
    *offset = ftell(log);
    return warnings;
}

static int count_warnings(FILE *log, long *offset)
{
    return count_warnings_with(log, offset, NULL, NULL);
}

static const config after_call = {STAGED, DEVICE, DEVICE, DEVICE, COL, N, N, 20, 24, 16, 0.0f, 0, 1};

static void *run_beside(void *g)
{
    gemm_run(g, ((gemm *)g)->c.data);
    return NULL;
}

/* The call, from a second thread too when the configuration says so; the worse verdict. */
static int run_and_judge(gemm *g, gemm *beside, int *unwritten)
{
    pthread_t thread;
    const int two = g->cfg.threads == 2 && pthread_create(&thread, NULL, run_beside, beside) == 0;
    gemm_run(g, g->c.data);
    const int first = gemm_verdict(g);
    if (!two) {
        *unwritten = first == 0;
        return first;
    }
    pthread_join(thread, NULL);
    const int second = gemm_verdict(beside);
    *unwritten = (first == 0) + (second == 0);
    return first < second ? first : second;
}

/* Where the child's outcome goes (the pipe to the parent). */
static int outcome_fd = -1;

/* After a shutdown fault the child exits; this handler, registered before CUDA started, runs after
 * CUDA's own teardown and makes the later call, as an application's exit handler would. */
static struct {
    outcome out;
    gemm g;
    FILE *log;
    long offset;
} at_exit;

static void call_at_exit(void)
{
    memcpy(at_exit.g.c.data, at_exit.g.c0, at_exit.g.c.count * sizeof(float));
    gemm_run(&at_exit.g, at_exit.g.c.data);
    at_exit.out.after_result = gemm_verdict(&at_exit.g);
    at_exit.out.after_warnings = count_warnings(at_exit.log, &at_exit.offset);
    /* Ended here as the other children end: what the library keeps for the process's life is not freed,
     * and LeakSanitizer would take it for leaks. */
    _exit(write(outcome_fd, &at_exit.out, sizeof at_exit.out) == (ssize_t)sizeof at_exit.out ? 0 : 3);
}

static outcome child(const config *cfg, fake_mode mode, long nth, const char *only)
{
    outcome out = {0};
    FILE *log = tmpfile();
    long offset = 0;
    if (!log || dup2(fileno(log), STDERR_FILENO) < 0)
        _exit(2);
    set_environment(cfg->path);
    fake_reset(free_bytes_for(cfg->path));
    if (mode == FAKE_UNLOADING)
        atexit(call_at_exit);
    gemm g, beside, later;
    gemm_make(&g, cfg, 12345u);
    gemm_make(&beside, cfg, 54321u);
    gemm_make(&later, &after_call, 777u);
    if (cfg->warm) {
        float *scratch = copy_of(&g.c);
        gemm_run(&g, g.c.data);
        memcpy(g.c.data, scratch, g.c.count * sizeof(float));
        free(scratch);
    }
    /* CUDA starts before the faults: a fault in its start-up disables the GPU for good, by design. */
    if (!tiledblas_gpu_available())
        _exit(4);
    count_warnings(log, &offset);
    cpu_calls = 0;
    fake_inject(mode, nth, only);
    out.result = run_and_judge(&g, &beside, &out.unwritten);
    out.sites = fake_sites();
    out.alloc_sites = fake_alloc_sites();
    out.fired = fake_fired();
    out.warnings = count_warnings(log, &offset);
    out.cpu_calls = cpu_calls;
    if (mode == FAKE_UNLOADING) { /* the runtime stays unloading while the process exits */
        at_exit.out = out;
        at_exit.g = g;
        at_exit.log = log;
        at_exit.offset = offset;
        exit(0);
    }
    fake_inject(FAKE_NONE, 0, NULL);
    gemm_run(&later, later.c.data);
    out.after_result = gemm_verdict(&later);
    out.after_warnings = count_warnings(log, &offset);
    out.device_peak = fake_library_device_peak();
    out.kept_device = fake_library_allocations(FAKE_DEVICE) + fake_library_allocations(FAKE_MANAGED);
    out.kept_pinned = fake_library_allocations(FAKE_PINNED) + fake_library_allocations(FAKE_REGISTERED);
    out.streams = fake_streams();
    out.events = fake_events();
    return out;
}

/* Runs the child in a fresh process (the library's state, the GPU disabled included, dies with it). */
static int run(const config *cfg, fake_mode mode, long nth, const char *only, outcome *out)
{
    int channel[2];
    if (pipe(channel) != 0)
        return -1;
    fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) {
        close(channel[0]);
        alarm(60); /* a hang ends as a failure */
        outcome_fd = channel[1];
        const outcome result = child(cfg, mode, nth, only);
        _exit(write(outcome_fd, &result, sizeof result) == (ssize_t)sizeof result ? 0 : 3);
    }
    close(channel[1]);
    ssize_t got;
    do
        got = read(channel[0], out, sizeof *out);
    while (got < 0 && errno == EINTR);
    close(channel[0]);
    int status;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status))
        return WTERMSIG(status) == SIGALRM ? -2 : -3;
    return got == (ssize_t)sizeof *out && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* --- verdicts --- */



static int host_only(const config *cfg)
{
    return cfg->a != DEVICE && cfg->a != MANAGED && cfg->b != DEVICE && cfg->b != MANAGED && cfg->c != DEVICE &&
           cfg->c != MANAGED;
}

/* Device or managed operands: once the context is lost, neither the GPU nor the CPU may read them. */
static int in_gpu_memory(const config *cfg)
{
    return !host_only(cfg);
}

/* TILEDBLAS_DEVICE_MB in bytes where a scenario sets it, else 0. */
static size_t device_cap;

/* What is wrong with an outcome, or NULL. */
static const char *judge(const config *cfg, fake_mode mode, int ran, const outcome *o)
{
    if (ran == -2)
        return "hang";
    if (ran != 0)
        return "crash or abort";
    if (mode == FAKE_UNLOADING)
        return o->cpu_calls             ? "CPU work at shutdown"
               : o->warnings            ? "warning at shutdown"
               : o->after_result < 0    ? "exit handler's call wrong"
               : o->after_result == 0   ? "exit handler's call silently unwritten"
               : o->after_warnings      ? "exit handler's call warned"
                                        : NULL;
    const int lost = mode == FAKE_STICKY && o->fired;
    if (o->result < 0 || (o->result == 0 && !(lost && in_gpu_memory(cfg))))
        return o->result < 0 ? "wrong result" : "C silently unwritten";
    if (o->result == 0 && o->warnings < o->unwritten)
        return "C unwritten without a warning";
    if (o->warnings > cfg->threads)
        return "more than one warning a call";
    if (mode == FAKE_NONE && o->warnings)
        return "a warning without a fault";
    if (o->after_result < 0 || (o->after_result == 0 && !lost))
        return o->after_result < 0 ? "later device call wrong" : "later device call unwritten, GPU lost";
    if (o->after_result == 0 && o->after_warnings != 1)
        return "later device call unwritten without exactly one warning";
    if (o->after_result == 1 && o->after_warnings)
        return "later device call warned";
    /* Kept between calls: per lane a workspace, a copy of C and pinned staging; per lane's paths their
     * streams and events. */
    if (!lost && (o->kept_device > 4 || o->kept_pinned > 2 || o->streams > 12 || o->events > 64))
        return "allocations beyond what the library keeps";
    if (device_cap && o->device_peak > device_cap)
        return "device memory beyond TILEDBLAS_DEVICE_MB";
    return NULL;
}

static void describe(const config *cfg, char *text, size_t size)
{
    snprintf(text, size, "%s %s/%s/%s %s %c%c %dx%dx%d beta=%g%s%s", path_names[cfg->path], memory_names[cfg->a],
             memory_names[cfg->b], memory_names[cfg->c], cfg->layout == ROW ? "row" : "col",
             cfg->trans_a == T ? 'T' : 'N', cfg->trans_b == T ? 'T' : 'N', cfg->m, cfg->n, cfg->k, cfg->beta,
             cfg->warm ? " warm" : "", cfg->threads == 2 ? " 2 threads" : "");
}

static long faults, wrong, failures;

static void check(const config *cfg, fake_mode mode, long nth, const char *only)
{
    outcome o;
    const int ran = run(cfg, mode, nth, only, &o);
    faults += ran == 0 ? o.fired : 1;
    const char *problem = judge(cfg, mode, ran, &o);
    if (!problem)
        return;
    failures++;
    wrong += ran == 0 && o.result < 0;
    char text[160];
    describe(cfg, text, sizeof text);
    printf("FAIL %s: %s fault at %s call %ld: %s (result %d, %d warnings; later call %d, %d warnings; "
           "%d CPU calls)\n",
           text, fake_mode_name(mode), only ? only : "fallible", nth, problem, o.result, o.warnings,
           o.after_result, o.after_warnings, o.cpu_calls);
}

static int sweep(long stride)
{
    long sites_total = 0, configurations = 0, runs = 0;
    for (int i = 0; i < CONFIGS; i++) {
        const config *cfg = &configs[i];
        outcome clean;
        const int ran = run(cfg, FAKE_NONE, 0, NULL, &clean);
        char text[160];
        describe(cfg, text, sizeof text);
        if (judge(cfg, FAKE_NONE, ran, &clean)) {
            check(cfg, FAKE_NONE, 0, NULL);
            continue;
        }
        configurations++;
        sites_total += clean.sites;
        for (fake_mode mode = FAKE_PLAIN; mode < FAKE_MODES; mode++) {
            if (mode == FAKE_UNLOADING && !host_only(cfg))
                continue;
            const long sites = mode == FAKE_OOM ? clean.alloc_sites : clean.sites;
            for (long nth = 1 + i % stride; nth <= sites; nth += stride, runs++)
                check(cfg, mode, nth, NULL);
        }
        printf("%-60s %3ld fallible calls, %2ld allocating\n", text, clean.sites, clean.alloc_sites);
    }
    printf("fault sweep: %ld sites over %ld configurations x %d modes (every %ld): %ld runs, %ld faults injected, "
           "%ld wrong results, %ld failures\n",
           sites_total, configurations, FAKE_MODES - 1, stride, runs, faults, wrong, failures);
    return failures == 0 && faults > 0 ? 0 : 1;
}

/* --- the scenarios of single defects --- */

/*
 * Calls on device operands with beta != 0 under TILEDBLAS_DEVICE_MB, which copy C before the kernel:
 * once the GPU has started, a call must not wait for the whole device (cudaFree,
 * cudaDeviceSynchronize), which would wait for the application's work on its other streams too.
 */
static int no_device_wait(void)
{
    const config cfg = {STAGED, DEVICE, DEVICE, DEVICE, COL, N, N, 64, 48, 40, 0.5f, 0, 1};
    setenv("TILEDBLAS_DEVICE_MB", "64", 1);
    set_environment(cfg.path);
    fake_reset(free_bytes_for(cfg.path));
    gemm g;
    gemm_make(&g, &cfg, 4242u);
    int bad = 0;
    long waits = 0;
    /* The first call starts the GPU; the next two are counted. */
    for (int i = 0; i < 3; i++) {
        memcpy(g.c.data, g.c0, g.c.count * sizeof(float));
        const long before = fake_device_waits();
        gemm_run(&g, g.c.data);
        waits += i ? fake_device_waits() - before : 0;
        if (gemm_verdict(&g) != 1) {
            printf("FAIL no-device-wait: call %d: C wrong\n", i + 1);
            bad = 1;
        }
    }
    if (waits) {
        printf("FAIL no-device-wait: two calls waited for the whole device %ld times\n", waits);
        bad = 1;
    }
    return bad;
}

static int scenario(const char *name)
{
    if (strcmp(name, "half-registered") == 0) {
        /* A host buffer whose first half is registered, then a call on device pointers. */
        const config cfg = {STAGED, HALF_REGISTERED, HOST, HOST, COL, N, N, 64, 48, 40, 0.5f, 0, 1};
        check(&cfg, FAKE_NONE, 0, NULL);
    } else if (strcmp(name, "deferred-oom-managed") == 0) {
        /* Out of memory reported at the synchronisation after the kernel, on managed C, beta != 0. */
        const config cfg = {STAGED, HOST, HOST, MANAGED, COL, N, N, 60, 40, 30, 0.5f, 0, 1};
        check(&cfg, FAKE_DEFERRED, 1, "launch");
    } else if (strcmp(name, "device-cap") == 0) {
        /* Under TILEDBLAS_DEVICE_MB, a C in device or managed memory with beta != 0, copied before the
         * kernel: the copy and the workspace for A and B (960 kB) together would pass the 1 MB cap. In
         * the last, the workspace alone (1.25 MB) does not fit: nothing is launched, C stays as given,
         * and the CPU BLAS computes the call. */
        const config cfgs[] = {{STAGED, HOST, HOST, DEVICE, COL, N, N, 300, 300, 400, 0.5f, 0, 1},
                               {STAGED, HOST, HOST, MANAGED, ROW, T, N, 300, 300, 400, -1.0f, 0, 1},
                               {STAGED, HOST, HOST, MANAGED, COL, N, N, 400, 300, 400, 0.5f, 0, 1}};
        setenv("TILEDBLAS_DEVICE_MB", "1", 1);
        device_cap = (size_t)1 << 20;
        for (int i = 0; i < 3; i++)
            check(&cfgs[i], FAKE_NONE, 0, NULL);
    } else if (strcmp(name, "device-lanes") == 0 || strcmp(name, "device-lanes-capped") == 0) {
        failures += fault_device_lanes(strcmp(name, "device-lanes-capped") == 0);
    } else if (strcmp(name, "marks-hold-no-lane") == 0) {
        failures += fault_marks_hold_no_lane();
    } else if (strcmp(name, "own-marks") == 0) {
        failures += fault_own_marks();
    } else if (strcmp(name, "no-device-wait") == 0) {
        failures += no_device_wait();
    } else if (strcmp(name, "exit-in-flight") == 0) {
        failures += fault_exit_in_flight();
    } else if (strcmp(name, "fork-in-flight") == 0) {
        failures += fault_fork_in_flight();
    } else if (strcmp(name, "exit-lane-wait") == 0) {
        failures += fault_exit_lane_wait();
    } else if (strcmp(name, "many-threads") == 0) {
        failures += fault_many_threads();
    } else if (strcmp(name, "tensor-launches") == 0) {
        failures += fault_tensor_launches();
    } else if (strcmp(name, "two-devices") == 0) {
        failures += fault_two_devices();
    } else if (strcmp(name, "reason-race") == 0) {
        failures += fault_reason_while_disabled();
    } else if (strcmp(name, "registry") == 0) {
        failures += fault_registry_checks();
    } else if (strcmp(name, "unloading-in-flight") == 0) {
        /* The runtime starts shutting down at the kernel of a call on host operands, on each path. */
        const config cfgs[] = {{STAGED, HOST, HOST, HOST, COL, N, N, 64, 48, 40, 0.5f, 0, 1},
                               {PIPELINED, HOST, HOST, HOST, COL, N, N, 40, 300, 24, 0.5f, 0, 1},
                               {PAGEABLE, HOST, HOST, HOST, ROW, T, N, 50, 30, 20, 0.0f, 0, 1}};
        for (int i = 0; i < 3; i++)
            check(&cfgs[i], FAKE_UNLOADING, 1, "launch");
    } else {
        fprintf(stderr, "unknown case %s\n", name);
        return 2;
    }
    printf("%s: %s\n", name, failures ? "FAILED" : "passed");
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    setenv("OPENBLAS_NUM_THREADS", "1", 1);
    tb_ref_cblas_sgemm(); /* loaded once, before the children fork */
    if (argc == 3 && strcmp(argv[1], "--case") == 0)
        return scenario(argv[2]);

    const long stride = argc == 3 && strcmp(argv[1], "--stride") == 0 ? atol(argv[2]) : 1;
    if (stride < 1 || (argc != 1 && argc != 3)) {
        fprintf(stderr, "usage: %s [--stride S | --case NAME]\n", argv[0]);
        return 2;
    }
    return sweep(stride);
}
