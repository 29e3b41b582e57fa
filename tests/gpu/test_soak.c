/*
 * Soak on the GPU: many threads (TB_SOAK_THREADS, 64) call SGEMM for
 * TB_SOAK_SECONDS (120) on a mix of shapes from 16^3 to 4096^3, every layout
 * and transpose, padded leading dimensions, with A, B and C in pageable host,
 * pinned host, device or managed memory. Every result is checked on the CPU in
 * double precision, cheaply enough for 4096^3: 32 random elements of C against
 * their dot products, and every row sum and column sum of C against
 * op(A) (op(B) e) and (e^T op(A)) op(B), each within the sum of the element
 * bounds 2 (K + 2) eps (|alpha| (|op(A)| |op(B)|)_ij + |beta| |C0_ij|).
 *
 * Memory: the program allocates all its buffers first; then the device's free
 * memory and the pinned host memory are read before the first call, after the
 * first half of the soak (the library's caches at their steady state) and after
 * the second. No leak means the second half takes no device memory (free after
 * >= free halfway - SLACK), the library holds no more than its budget
 * TILEDBLAS_DEVICE_MB (+ SLACK) at the end, and the pinned memory does not grow
 * in the second half by more than SLACK. Pinned host memory is counted as what
 * the process maps from the NVIDIA device files (/dev/nvidiactl, /dev/nvidia0,
 * ...: pinned buffers and the driver's own mappings; managed memory comes from
 * /dev/nvidia-uvm and is left out); should the program's own pinned buffers not
 * show there, the resident set stands in, with the managed buffers (which
 * migrate in and out of it) added to the slack.
 *
 * Throughput: one thread runs calls of the mix (unchecked) for a while; then
 * the same calls run on one thread and shared by all threads, twice each in
 * turns; the many's faster FLOP/s must be at least the one's faster; how busy
 * the CPUs were and where the threads' time went are printed beside.
 * TB_SOAK_KIND (pageable, pinned, device or managed) puts every operand in
 * memory of that one kind; TB_SOAK_SCHEDULE (spin, yield or blocking) sets how
 * CUDA waits in the process, as an application may. Exits 77 without a usable
 * GPU.
 *
 * Every PROGRESS_SECONDS a line on stderr tells the phase, the calls done and
 * how many threads are copying, in the library, checking or waiting for a big
 * slot, so that a stall shows where it is.
 */
#include "testutil.h"
#include "tiledblas.h"

#include <cuda_runtime_api.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 256
#define SMALL_DIM 1024
#define BIG_DIM 4096
#define MIN_DIM 16
#define MAX_PAD 16
#define BIG_SLOTS 8
#define SAMPLES 32
#define SLACK_MB 256.0
/* One call in BIG_ONE_IN may have dimensions up to BIG_DIM; the others stay within SMALL_DIM. */
#define BIG_ONE_IN 16
#define PROGRESS_SECONDS 10

enum kind { PAGEABLE, PINNED, DEVICE, MANAGED, KINDS };
static const char *const kind_names[KINDS] = {"pageable", "pinned", "device", "managed"};
/* TB_SOAK_KIND: every call on memory of this kind (a name above), -1 for the mix of all. */
static int only_kind = -1;

#define CUDA_CHECK(call)                                                                          \
    do {                                                                                          \
        const cudaError_t status_ = (call);                                                       \
        if (status_ != cudaSuccess) {                                                             \
            fprintf(stderr, "FAIL: %s: %s (%s:%d)\n", #call, cudaGetErrorString(status_), __FILE__, \
                    __LINE__);                                                                    \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)

/*
 * Buffers for one call at a time: host copies of A, B and C0 (what the checks
 * read; the pageable call's A and B), the result read back, and A, B, C in
 * each kind of memory, all holding the same A, B.
 */
typedef struct slot {
    size_t capacity; /* elements of each buffer */
    float *a, *b, *c0, *result;
    float *op[KINDS][3];
} slot;

typedef struct call_spec {
    int layout, trans_a, trans_b, m, n, k, lda, ldb, ldc, kind;
    float alpha, beta;
} call_spec;

static slot small_slots[MAX_THREADS], big_slots[BIG_SLOTS];
static pthread_mutex_t big_lock = PTHREAD_MUTEX_INITIALIZER;
static int big_free[BIG_SLOTS];
static sem_t big_available;

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void add_double(_Atomic double *total, double x)
{
    double old = atomic_load(total);
    while (!atomic_compare_exchange_weak(total, &old, old + x))
        ;
}

/* What the threads are doing, for the progress lines, and the time they spent at it, for the throughput's. */
enum step { WAITING, COPYING, CALLING, CHECKING, STEPS };
static const char *const step_names[STEPS] = {"waiting for a big slot", "copying", "in the library", "checking"};
static atomic_int threads_at[STEPS];
static _Atomic double step_seconds[STEPS];
static _Thread_local double step_start;
static atomic_long calls_done;
static _Atomic(const char *) phase = "allocating and filling the buffers";

static void step_begin(enum step step)
{
    atomic_fetch_add(&threads_at[step], 1);
    step_start = seconds_now();
}

static void step_end(enum step step)
{
    add_double(&step_seconds[step], seconds_now() - step_start);
    atomic_fetch_sub(&threads_at[step], 1);
}

static long env_long(const char *name, long fallback)
{
    const char *text = getenv(name);
    if (text == NULL || text[0] == '\0')
        return fallback;
    char *end;
    const long value = strtol(text, &end, 10);
    if (*end != '\0' || value < 1) {
        fprintf(stderr, "%s=%s: expected a positive whole number\n", name, text);
        exit(2);
    }
    return value;
}

static void *host_alloc(size_t bytes)
{
    void *p = malloc(bytes);
    if (p == NULL) {
        fprintf(stderr, "out of memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

static void fill_random(float *x, size_t count, tb_rng *rng)
{
    for (size_t i = 0; i < count; i++)
        x[i] = tb_rng_uniform(rng);
}

static void slot_init(slot *s, size_t capacity, tb_rng *rng)
{
    const size_t bytes = capacity * sizeof(float);
    s->capacity = capacity;
    s->a = host_alloc(bytes);
    s->b = host_alloc(bytes);
    s->c0 = host_alloc(bytes);
    s->result = host_alloc(bytes);
    fill_random(s->a, capacity, rng);
    fill_random(s->b, capacity, rng);
    fill_random(s->c0, capacity, rng);
    for (int r = 0; r < 3; r++) {
        s->op[PAGEABLE][r] = r == 0 ? s->a : r == 1 ? s->b : host_alloc(bytes);
        CUDA_CHECK(cudaHostAlloc((void **)&s->op[PINNED][r], bytes, cudaHostAllocDefault));
        CUDA_CHECK(cudaMalloc((void **)&s->op[DEVICE][r], bytes));
        CUDA_CHECK(cudaMallocManaged((void **)&s->op[MANAGED][r], bytes, cudaMemAttachGlobal));
    }
    for (int kind = PINNED; kind < KINDS; kind++) {
        CUDA_CHECK(cudaMemcpy(s->op[kind][0], s->a, bytes, cudaMemcpyDefault));
        CUDA_CHECK(cudaMemcpy(s->op[kind][1], s->b, bytes, cudaMemcpyDefault));
    }
}

/* Log-uniform in [MIN_DIM, max_dim]. */
static int random_dim(tb_rng *rng, int max_dim)
{
    const double u = (double)(tb_rng_next(rng) >> 11) * 0x1p-53;
    return (int)(MIN_DIM * exp(u * log((double)max_dim / MIN_DIM)) + 0.5);
}

static int random_ld(tb_rng *rng, int layout, int rows, int cols)
{
    return tb_min_ld(layout, rows, cols) + (tb_rng_below(rng, 4) ? 0 : 1 + tb_rng_below(rng, MAX_PAD));
}

static void random_call(tb_rng *rng, call_spec *cs)
{
    const int max_dim = tb_rng_below(rng, BIG_ONE_IN) == 0 ? BIG_DIM : SMALL_DIM;
    cs->layout = tb_layouts[tb_rng_below(rng, 2)];
    cs->trans_a = tb_transposes[tb_rng_below(rng, 3)];
    cs->trans_b = tb_transposes[tb_rng_below(rng, 3)];
    cs->m = random_dim(rng, max_dim);
    cs->n = random_dim(rng, max_dim);
    cs->k = random_dim(rng, max_dim);
    const int nt_a = cs->trans_a == TB_NO_TRANS, nt_b = cs->trans_b == TB_NO_TRANS;
    cs->lda = random_ld(rng, cs->layout, nt_a ? cs->m : cs->k, nt_a ? cs->k : cs->m);
    cs->ldb = random_ld(rng, cs->layout, nt_b ? cs->k : cs->n, nt_b ? cs->n : cs->k);
    cs->ldc = random_ld(rng, cs->layout, cs->m, cs->n);
    cs->kind = only_kind >= 0 ? only_kind : (int)tb_rng_below(rng, KINDS);
    cs->alpha = tb_rng_below(rng, 4) ? 2.0f * tb_rng_uniform(rng) : 1.0f;
    const int beta_choice = tb_rng_below(rng, 4);
    cs->beta = beta_choice == 0 ? 0.0f : beta_choice == 1 ? 1.0f : 2.0f * tb_rng_uniform(rng);
}

/* Elements spanned by a stored rows x cols operand with leading dimension ld. */
static size_t span(int layout, int rows, int cols, int ld)
{
    const int outer = layout == TB_ROW_MAJOR ? rows : cols;
    return (size_t)ld * (size_t)outer;
}

static size_t largest_span(const call_spec *cs)
{
    const int nt_a = cs->trans_a == TB_NO_TRANS, nt_b = cs->trans_b == TB_NO_TRANS;
    size_t most = span(cs->layout, cs->m, cs->n, cs->ldc);
    const size_t a = span(cs->layout, nt_a ? cs->m : cs->k, nt_a ? cs->k : cs->m, cs->lda);
    const size_t b = span(cs->layout, nt_b ? cs->k : cs->n, nt_b ? cs->n : cs->k, cs->ldb);
    most = a > most ? a : most;
    return b > most ? b : most;
}

static double flops(const call_spec *cs)
{
    return 2.0 * cs->m * cs->n * cs->k;
}

/* Element (i, j) of op(X) for X stored with the call's layout and leading dimension ld. */
static double op_at(const float *x, int layout, int trans, int ld, int i, int j)
{
    const int r = trans == TB_NO_TRANS ? i : j, c = trans == TB_NO_TRANS ? j : i;
    return x[layout == TB_ROW_MAJOR ? (size_t)r * ld + c : (size_t)c * ld + r];
}

static double c_at(const float *c, const call_spec *cs, int i, int j)
{
    return op_at(c, cs->layout, TB_NO_TRANS, cs->ldc, i, j);
}

/* Whether got is within the K-scaled factor times `bracket` (|alpha| |A||B| + |beta| |C0|, summed or not) of exact. */
static int within(double got, double exact, double bracket, int k)
{
    return isfinite(got) && fabs(got - exact) <= TB_BOUND_FACTOR * (k + 2.0) * FLT_EPSILON * bracket;
}

/* Problems found in s->result, the C the call left; the first few printed. */
static long check_result(const slot *s, const call_spec *cs, tb_rng *rng)
{
    const float *a = s->a, *b = s->b, *c0 = s->c0, *c = s->result;
    const double alpha = cs->alpha, beta = cs->beta, abs_alpha = fabs(alpha), abs_beta = fabs(beta);
    const int m = cs->m, n = cs->n, k = cs->k;
    long problems = 0;

    for (int t = 0; t < SAMPLES; t++) {
        const int i = tb_rng_below(rng, m), j = tb_rng_below(rng, n);
        double dot = 0.0, abs_dot = 0.0;
        for (int l = 0; l < k; l++) {
            const double x = op_at(a, cs->layout, cs->trans_a, cs->lda, i, l);
            const double y = op_at(b, cs->layout, cs->trans_b, cs->ldb, l, j);
            dot += x * y;
            abs_dot += fabs(x * y);
        }
        const double c_old = beta == 0.0 ? 0.0 : c_at(c0, cs, i, j);
        problems += !within(c_at(c, cs, i, j), alpha * dot + beta * c_old,
                            abs_alpha * abs_dot + abs_beta * fabs(c_old), k);
    }

    /* Row sums: C e against alpha op(A) (op(B) e) + beta C0 e, and column sums likewise. */
    double *b_rows = calloc((size_t)k, sizeof *b_rows), *b_abs_rows = calloc((size_t)k, sizeof *b_abs_rows);
    double *a_cols = calloc((size_t)k, sizeof *a_cols), *a_abs_cols = calloc((size_t)k, sizeof *a_abs_cols);
    double *col_sum = calloc((size_t)n, sizeof *col_sum), *col_ref = calloc((size_t)n, sizeof *col_ref);
    double *col_bracket = calloc((size_t)n, sizeof *col_bracket);
    if (!b_rows || !b_abs_rows || !a_cols || !a_abs_cols || !col_sum || !col_ref || !col_bracket) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    for (int l = 0; l < k; l++)
        for (int j = 0; j < n; j++) {
            const double y = op_at(b, cs->layout, cs->trans_b, cs->ldb, l, j);
            b_rows[l] += y;
            b_abs_rows[l] += fabs(y);
        }
    for (int i = 0; i < m; i++) {
        double row_ref = 0.0, row_bracket = 0.0, row_sum = 0.0;
        for (int l = 0; l < k; l++) {
            const double x = op_at(a, cs->layout, cs->trans_a, cs->lda, i, l);
            row_ref += alpha * x * b_rows[l];
            row_bracket += abs_alpha * fabs(x) * b_abs_rows[l];
            a_cols[l] += x;
            a_abs_cols[l] += fabs(x);
        }
        for (int j = 0; j < n; j++) {
            const double got = c_at(c, cs, i, j), old = beta == 0.0 ? 0.0 : c_at(c0, cs, i, j);
            row_sum += got;
            row_ref += beta * old;
            row_bracket += abs_beta * fabs(old);
            col_sum[j] += got;
            col_ref[j] += beta * old;
            col_bracket[j] += abs_beta * fabs(old);
        }
        problems += !within(row_sum, row_ref, row_bracket, k);
    }
    for (int l = 0; l < k; l++)
        for (int j = 0; j < n; j++) {
            const double y = op_at(b, cs->layout, cs->trans_b, cs->ldb, l, j);
            col_ref[j] += alpha * a_cols[l] * y;
            col_bracket[j] += abs_alpha * a_abs_cols[l] * fabs(y);
        }
    for (int j = 0; j < n; j++)
        problems += !within(col_sum[j], col_ref[j], col_bracket[j], k);
    free(b_rows), free(b_abs_rows), free(a_cols), free(a_abs_cols), free(col_sum), free(col_ref), free(col_bracket);
    return problems;
}

static slot *acquire(const call_spec *cs, int thread)
{
    if (largest_span(cs) <= small_slots[thread].capacity)
        return &small_slots[thread];
    step_begin(WAITING);
    while (sem_wait(&big_available) != 0)
        ;
    step_end(WAITING);
    pthread_mutex_lock(&big_lock);
    int i = 0;
    while (!big_free[i])
        i++;
    big_free[i] = 0;
    pthread_mutex_unlock(&big_lock);
    return &big_slots[i];
}

static void release(slot *s)
{
    if (s < big_slots || s >= big_slots + BIG_SLOTS)
        return;
    pthread_mutex_lock(&big_lock);
    big_free[s - big_slots] = 1;
    pthread_mutex_unlock(&big_lock);
    sem_post(&big_available);
}

/*
 * The program's own copies, as a threaded CUDA program makes them: host to
 * host with memcpy, to and from device and managed memory on the thread's
 * own non-blocking stream, waited for before the call, which (ordered after
 * the default stream only) then waits for no other thread's copies.
 */
static _Thread_local cudaStream_t copy_stream;

static void copy(void *to, const void *from, size_t bytes, int kind)
{
    if (kind == PAGEABLE || kind == PINNED) {
        memcpy(to, from, bytes);
        return;
    }
    if (copy_stream == NULL)
        CUDA_CHECK(cudaStreamCreateWithFlags(&copy_stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDefault, copy_stream));
    CUDA_CHECK(cudaStreamSynchronize(copy_stream));
}

static void end_copies(void)
{
    if (copy_stream != NULL)
        CUDA_CHECK(cudaStreamDestroy(copy_stream));
    copy_stream = NULL;
}

/* One call on the slot's buffers of the call's kind; with `check`, the number of problems. */
static long run_call(slot *s, const call_spec *cs, int check, tb_rng *rng)
{
    float *const *op = s->op[cs->kind];
    const size_t c_bytes = span(cs->layout, cs->m, cs->n, cs->ldc) * sizeof(float);
    step_begin(COPYING);
    copy(op[2], s->c0, c_bytes, cs->kind);
    step_end(COPYING);
    step_begin(CALLING);
    cblas_sgemm((CBLAS_LAYOUT)cs->layout, (CBLAS_TRANSPOSE)cs->trans_a, (CBLAS_TRANSPOSE)cs->trans_b, cs->m, cs->n,
                cs->k, cs->alpha, op[0], cs->lda, op[1], cs->ldb, cs->beta, op[2], cs->ldc);
    step_end(CALLING);
    atomic_fetch_add(&calls_done, 1);
    if (!check)
        return 0;
    step_begin(COPYING);
    copy(s->result, op[2], c_bytes, cs->kind);
    step_end(COPYING);
    step_begin(CHECKING);
    const long problems = check_result(s, cs, rng);
    step_end(CHECKING);
    if (problems > 0) {
        tb_gemm_case gc = {cs->layout, cs->trans_a, cs->trans_b, cs->m, cs->n, cs->k,
                           cs->lda, cs->ldb, cs->ldc, cs->alpha, cs->beta};
        char label[256];
        tb_case_describe(&gc, label, sizeof label);
        fprintf(stderr, "FAIL: %ld checks failed: %s, operands %s\n", problems, label, kind_names[cs->kind]);
    }
    return problems;
}

typedef struct soak_totals {
    atomic_long calls, wrong;
    _Atomic double flop;
} soak_totals;

typedef struct soak_worker {
    int thread;
    double deadline;
    soak_totals *totals;
} soak_worker;

static void *soak(void *arg)
{
    const soak_worker *w = arg;
    tb_rng rng;
    tb_rng_seed(&rng, 1000003u * (uint64_t)(w->thread + 1) + (uint64_t)(w->deadline * 1e3));
    while (seconds_now() < w->deadline) {
        call_spec cs;
        random_call(&rng, &cs);
        slot *s = acquire(&cs, w->thread);
        const long problems = run_call(s, &cs, 1, &rng);
        release(s);
        atomic_fetch_add(&w->totals->calls, 1);
        atomic_fetch_add(&w->totals->wrong, problems > 0);
        add_double(&w->totals->flop, flops(&cs));
    }
    end_copies();
    return NULL;
}

/* One call of the throughput mix, unchecked. */
static void run_unchecked(const call_spec *cs, int thread)
{
    slot *s = acquire(cs, thread);
    run_call(s, cs, 0, NULL);
    release(s);
}

/* The throughput mix: calls[0 .. count), taken in turn by whichever thread is free. */
typedef struct rate_work {
    const call_spec *calls;
    long count;
    atomic_long next;
} rate_work;

typedef struct rate_worker {
    int thread;
    rate_work *work;
} rate_worker;

static void *rate(void *arg)
{
    const rate_worker *w = arg;
    long i;
    while ((i = atomic_fetch_add(&w->work->next, 1)) < w->work->count)
        run_unchecked(&w->work->calls[i], w->thread);
    end_copies();
    return NULL;
}

static void run_threads(int threads, void *(*body)(void *), void *args, size_t arg_size)
{
    pthread_t ids[MAX_THREADS];
    for (int t = 0; t < threads; t++)
        if (pthread_create(&ids[t], NULL, body, (char *)args + t * arg_size) != 0) {
            perror("pthread_create");
            exit(1);
        }
    for (int t = 0; t < threads; t++)
        pthread_join(ids[t], NULL);
}

static double device_free_mb(void)
{
    size_t free_bytes, total;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
    return (double)free_bytes / (1 << 20);
}

/* MB mapped from the NVIDIA device files, /dev/nvidia-uvm (managed memory) aside. */
static double pinned_mb(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    double bytes = 0.0;
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        unsigned long start, end;
        const char *path = strchr(line, '/');
        if (path != NULL && sscanf(line, "%lx-%lx", &start, &end) == 2 && strncmp(path, "/dev/nvidia", 11) == 0 &&
            strncmp(path, "/dev/nvidia-uvm", 15) != 0)
            bytes += (double)(end - start);
    }
    if (f != NULL)
        fclose(f);
    return bytes / (1 << 20);
}

/* A field of /proc/self/status in MB (VmRSS), -1 if absent. */
static double status_mb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double kb = -1.0;
    const size_t len = strlen(field);
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, field, len) == 0 && line[len] == ':')
            kb = atof(line + len + 1);
    if (f != NULL)
        fclose(f);
    return kb < 0 ? -1.0 : kb / 1024.0;
}

/* Every PROGRESS_SECONDS until the program ends: the phase, the calls done, what the threads are doing. */
static void *report_progress(void *arg)
{
    (void)arg;
    const double start = seconds_now();
    for (;;) {
        sleep(PROGRESS_SECONDS);
        fprintf(stderr, "progress at %.0f s: %s; %ld calls done;", seconds_now() - start, atomic_load(&phase),
                atomic_load(&calls_done));
        for (int step = 0; step < STEPS; step++)
            fprintf(stderr, " %d %s%s", atomic_load(&threads_at[step]), step_names[step], step + 1 < STEPS ? "," : "\n");
    }
    return NULL;
}

/* Soaks for `seconds` on `threads` threads, adding to totals. */
static void soak_for(double seconds, int threads, soak_totals *totals)
{
    soak_worker workers[MAX_THREADS];
    const double deadline = seconds_now() + seconds;
    for (int t = 0; t < threads; t++)
        workers[t] = (soak_worker){t, deadline, totals};
    run_threads(threads, soak, workers, sizeof workers[0]);
}

/* The process's CPU time, user and system, in seconds. */
static double cpu_seconds(void)
{
    struct rusage use;
    getrusage(RUSAGE_SELF, &use);
    return (double)use.ru_utime.tv_sec + 1e-6 * (double)use.ru_utime.tv_usec + (double)use.ru_stime.tv_sec +
           1e-6 * (double)use.ru_stime.tv_usec;
}

/*
 * FLOP/s of the first `count` calls of the mix on `threads` threads. Also
 * printed: how busy the CPUs were (a thread that waits by spinning keeps one
 * busy) and where the threads' time went, which together tell a slowdown's place.
 */
static double rate_of(const call_spec *calls, long count, int threads)
{
    rate_work work = {calls, count, 0};
    rate_worker workers[MAX_THREADS];
    for (int t = 0; t < threads; t++)
        workers[t] = (rate_worker){t, &work};
    double total = 0.0;
    for (long i = 0; i < count; i++)
        total += flops(&calls[i]);
    double steps_before[STEPS];
    for (int step = 0; step < STEPS; step++)
        steps_before[step] = atomic_load(&step_seconds[step]);
    const double cpu_start = cpu_seconds(), start = seconds_now();
    run_threads(threads, rate, workers, sizeof workers[0]);
    const double wall = seconds_now() - start, cpu = cpu_seconds() - cpu_start;
    printf("the mix on %d thread%s: %.2f s, %.1f CPUs busy; threads' time", threads, threads > 1 ? "s" : "", wall,
           cpu / wall);
    for (int step = 0; step < STEPS; step++)
        if (step != CHECKING)
            printf(" %s %.2f s%s", step_names[step], atomic_load(&step_seconds[step]) - steps_before[step],
                   step + 1 < CHECKING ? "," : "\n");
    return total / wall;
}

/*
 * TB_SOAK_SCHEDULE (spin, yield or blocking): how CUDA waits for device 0,
 * the one the soak runs on, set before the first CUDA call as an application
 * may (cudaSetDeviceFlags); unset, CUDA's default (auto).
 */
static void set_schedule(void)
{
    static const struct {
        const char *name;
        unsigned flag;
    } schedules[] = {{"spin", cudaDeviceScheduleSpin},
                     {"yield", cudaDeviceScheduleYield},
                     {"blocking", cudaDeviceScheduleBlockingSync}};
    const char *name = getenv("TB_SOAK_SCHEDULE");
    int devices = 0;
    if (name == NULL || cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)
        return; /* without a GPU the test skips */
    for (size_t i = 0; i < sizeof schedules / sizeof schedules[0]; i++)
        if (strcmp(name, schedules[i].name) == 0) {
            CUDA_CHECK(cudaSetDeviceFlags(schedules[i].flag));
            return;
        }
    fprintf(stderr, "TB_SOAK_SCHEDULE=%s: expected spin, yield or blocking\n", name);
    exit(2);
}

int main(void)
{
    set_schedule();
    if (!tiledblas_gpu_available()) {
        printf("SKIP: no usable GPU\n");
        return 77;
    }
    const int threads = (int)env_long("TB_SOAK_THREADS", 64);
    const double seconds = (double)env_long("TB_SOAK_SECONDS", 120);
    const double rate_seconds = (double)env_long("TB_SOAK_RATE_SECONDS", 10);
    const double budget_mb = (double)env_long("TILEDBLAS_DEVICE_MB", 1L << 30);
    const char *kind = getenv("TB_SOAK_KIND");
    for (int k = 0; kind && k < KINDS; k++)
        if (strcmp(kind, kind_names[k]) == 0)
            only_kind = k;
    if (kind && only_kind < 0) {
        fprintf(stderr, "TB_SOAK_KIND=%s: expected pageable, pinned, device or managed\n", kind);
        return 2;
    }
    if (threads > MAX_THREADS) {
        fprintf(stderr, "TB_SOAK_THREADS: at most %d\n", MAX_THREADS);
        return 2;
    }

    pthread_t reporter;
    if (pthread_create(&reporter, NULL, report_progress, NULL) != 0 || pthread_detach(reporter) != 0) {
        perror("progress thread");
        return 1;
    }
    tb_rng rng;
    tb_rng_seed(&rng, 4242);
    sem_init(&big_available, 0, BIG_SLOTS);
    for (int i = 0; i < BIG_SLOTS; i++) {
        slot_init(&big_slots[i], (size_t)(BIG_DIM + MAX_PAD) * BIG_DIM, &rng);
        big_free[i] = 1;
    }
    for (int t = 0; t < threads; t++)
        slot_init(&small_slots[t], (size_t)(SMALL_DIM + MAX_PAD) * SMALL_DIM, &rng);

    /* Of each kind, three buffers per slot. */
    const double own_mb = 3.0 * sizeof(float) *
                          ((double)big_slots[0].capacity * BIG_SLOTS + (double)small_slots[0].capacity * threads) /
                          (1 << 20);
    const double free_before = device_free_mb(), pinned_before = pinned_mb(), rss_before = status_mb("VmRSS");
    soak_totals totals = {0, 0, 0.0};
    const double start = seconds_now();
    atomic_store(&phase, "soak, first half");
    soak_for(seconds / 2, threads, &totals);
    const double free_half = device_free_mb(), pinned_half = pinned_mb(), rss_half = status_mb("VmRSS");
    atomic_store(&phase, "soak, second half");
    soak_for(seconds / 2, threads, &totals);
    const double elapsed = seconds_now() - start;
    const double free_after = device_free_mb(), pinned_after = pinned_mb(), rss_after = status_mb("VmRSS");
    const int pinned_visible = pinned_before >= own_mb;

    /* The throughput mix: what one thread does in rate_seconds, each call run as it is drawn; then the same
     * calls again on one thread and on every thread. */
    atomic_store(&phase, "drawing the throughput mix on one thread");
    const long max_calls = 1L << 20;
    call_spec *mix = host_alloc((size_t)max_calls * sizeof *mix);
    long mix_calls = 0;
    const double mix_start = seconds_now();
    while (mix_calls < max_calls && seconds_now() - mix_start < rate_seconds) {
        random_call(&rng, &mix[mix_calls]);
        run_unchecked(&mix[mix_calls], 0);
        mix_calls++;
    }
    /* Twice each, in turns, the faster kept: both are bound mostly by the GPU and differ by a few %, so
     * that a slowdown of the host during one run would decide a single comparison. No tolerance below:
     * sharing the GPU among many threads must cost them nothing against one. */
    double rate_one = 0.0, rate_many = 0.0;
    for (int round = 0; round < 2; round++) {
        atomic_store(&phase, "the throughput mix on one thread");
        const double one = rate_of(mix, mix_calls, 1);
        atomic_store(&phase, "the throughput mix on every thread");
        const double many = rate_of(mix, mix_calls, threads);
        rate_one = one > rate_one ? one : rate_one;
        rate_many = many > rate_many ? many : rate_many;
    }

    printf("soak: %d threads, %.0f s: %ld calls (%.1f TFLOP), %ld wrong results\n", threads, elapsed,
           atomic_load(&totals.calls), atomic_load(&totals.flop) / 1e12, atomic_load(&totals.wrong));
    printf("device free memory: %.0f MB before the first call, %.0f MB halfway, %.0f MB after (budget %.0f MB)\n",
           free_before, free_half, free_after, budget_mb);
    printf("pinned host memory: %.0f MB before, %.0f MB halfway, %.0f MB after (the program's own: %.0f MB); "
           "resident set %.0f, %.0f, %.0f MB\n",
           pinned_before, pinned_half, pinned_after, own_mb, rss_before, rss_half, rss_after);
    printf("throughput on %ld calls of the mix, the faster of two: %.1f GFLOP/s on 1 thread, %.1f GFLOP/s on %d "
           "threads\n",
           mix_calls, rate_one / 1e9, rate_many / 1e9, threads);

    int failed = atomic_load(&totals.wrong) > 0;
    if (free_after < free_half - SLACK_MB) {
        fprintf(stderr, "FAIL: the second half of the soak took %.0f MB of device memory\n", free_half - free_after);
        failed = 1;
    }
    if (free_before - free_after > budget_mb + SLACK_MB) {
        fprintf(stderr, "FAIL: %.0f MB of device memory held after the soak, budget %.0f MB\n",
                free_before - free_after, budget_mb);
        failed = 1;
    }
    if (pinned_visible && pinned_after > pinned_half + SLACK_MB) {
        fprintf(stderr, "FAIL: the second half of the soak pinned %.0f MB more\n", pinned_after - pinned_half);
        failed = 1;
    }
    if (!pinned_visible) {
        printf("pinned buffers not seen in /proc/self/maps: the resident set checked instead\n");
        if (rss_after > rss_half + own_mb + SLACK_MB) {
            fprintf(stderr, "FAIL: the resident set grew by %.0f MB in the second half\n", rss_after - rss_half);
            failed = 1;
        }
    }
    if (rate_many < rate_one) {
        fprintf(stderr, "FAIL: %d threads are slower than one\n", threads);
        failed = 1;
    }
    printf("%s\n", failed ? "FAIL" : "PASS");
    return failed;
}
