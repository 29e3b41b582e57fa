/*
 * --e2e: what a user sees. cblas_sgemm of libtiledblas (on whichever path
 * TILEDBLAS_DEVICE selects) against OpenBLAS's, host memory in and out.
 */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tiledblas.h"
#include "bench.h"

/* A checked row's timing: its median over `reps` calls, printed as it lands. */
static void finish_row(bench_row *row, const bench_case *bc, double ms, int reps)
{
    row->ms = ms;
    row->reps = reps;
    row->gflops = bench_gflops(bc, ms);
    if (!row->failed)
        snprintf(row->status, sizeof row->status, "ok");
    fprintf(stderr, "[e2e] %s %s %s: %.3f ms (median of %d), %.1f GFLOP/s, err/bound %.2g, %s\n",
            bc->shape, bc->op, row->variant, row->ms, row->reps, row->gflops, row->error,
            row->status);
}

/* One implementation on one case: a checked warm-up call, then the timing. */
static bench_row *run_variant(const char *name, bench_sgemm_fn sgemm, const bench_case *bc,
                              const bench_host_bufs *h, const bench_sample *s, const bench_opts *o,
                              bench_table *t)
{
    bench_row *row = bench_table_add(t, bc, name);
    bench_host_call r = {sgemm, bc, h->a, h->b, h->c};
    bench_host_check(row, sgemm, bc, h, s);
    double ms = 0.0; /* left so when the timing fails (reps -1) */
    const int reps = bench_time(bench_host_call_ms, &r, o->reps, &ms);
    finish_row(row, bc, ms, reps);
    return row;
}

/*
 * beta != 0 and the same call with beta = 0, each checked, then timed in
 * alternation (which goes first alternates too), so that their ratio, what
 * adding beta*C costs, is not two moments' drift; the beta = 0 row is added
 * first, and the other's ratio is to it until a baseline replaces it.
 */
static void run_beta_pair(const char *name, const bench_case *bc, const bench_host_bufs *h, const bench_sample *s,
                          const bench_opts *o, bench_table *t)
{
    bench_case plain = *bc;
    plain.beta = 0.0f;
    bench_sample *plain_samples = bench_xmalloc(BENCH_SAMPLES * sizeof *plain_samples);
    const tb_gemm_args g = bench_colmajor(&plain, h->a, h->b, h->c0);
    bench_samples_make(&g, plain_samples);
    char plain_name[32];
    snprintf(plain_name, sizeof plain_name, "%.24s beta=0", name);
    const size_t first = t->len;
    bench_table_add(t, &plain, plain_name);
    bench_table_add(t, bc, name);
    bench_row *rows[2] = {&t->rows[first], &t->rows[first + 1]};
    const bench_host_call calls[2] = {{cblas_sgemm, &plain, h->a, h->b, h->c}, {cblas_sgemm, bc, h->a, h->b, h->c}};
    bench_host_check(rows[0], cblas_sgemm, &plain, h, plain_samples);
    bench_host_check(rows[1], cblas_sgemm, bc, h, s);
    free(plain_samples);

    double *times[2] = {bench_xmalloc(sizeof(double) * (size_t)o->reps), bench_xmalloc(sizeof(double) * (size_t)o->reps)};
    times[0][0] = bench_host_call_ms((void *)&calls[0]);
    times[1][0] = bench_host_call_ms((void *)&calls[1]);
    const int reps = bench_reps_within_budget(times[0][0] + times[1][0], o->reps);
    for (int r = 1; r < reps; r++)
        for (int i = 0; i < 2; i++) {
            const int v = (r + i) % 2;
            times[v][r] = bench_host_call_ms((void *)&calls[v]);
        }
    for (int v = 0; v < 2; v++) {
        finish_row(rows[v], v ? bc : &plain, bench_median(times[v], reps), reps);
        free(times[v]);
    }
    rows[0]->ratio = 1.0;
    rows[1]->ratio = rows[1]->ms > 0.0 ? rows[0]->ms / rows[1]->ms : 0.0;
    fprintf(stderr, "[e2e] %s %s: beta=%g takes %.3fx the time of beta=0\n", bc->shape, bc->op, (double)bc->beta,
            rows[0]->ms > 0.0 ? rows[1]->ms / rows[0]->ms : 0.0);
}

/* One of --threads N callers: its own C, the shared A and B, `calls` calls after the start line. */
typedef struct caller {
    bench_host_call run;
    int calls;
    pthread_barrier_t *start;
} caller;

static void *caller_main(void *arg)
{
    caller *me = arg;
    pthread_barrier_wait(me->start);
    for (int i = 0; i < me->calls; i++)
        bench_host_run(&me->run);
    return NULL;
}

/* Every caller's C as it is before its first call: NaN where beta = 0 (never read), else C0. */
static void reset_outputs(caller *callers, int threads, const bench_case *bc, const bench_host_bufs *h)
{
    for (int i = 0; i < threads; i++) {
        float *c = callers[i].run.c;
        if (bc->beta == 0.0f)
            for (size_t e = 0; e < h->nc; e++)
                c[e] = NAN;
        else
            memcpy(c, h->c0, h->nc * sizeof *c);
    }
}

/* The same calls as the threads make, one at a time, caller after caller in turn: wall clock per call. */
static double serial_ms(const caller *callers, int threads, int calls)
{
    const double t0 = bench_now_ms();
    for (int r = 0; r < calls; r++)
        for (int i = 0; i < threads; i++)
            bench_host_run(&callers[i].run);
    return (bench_now_ms() - t0) / ((double)threads * calls);
}

/* All callers at once from a common start: wall clock to the last return, per call. */
static double concurrent_ms(caller *callers, int threads, int calls)
{
    pthread_t *ids = bench_xmalloc((size_t)threads * sizeof *ids);
    pthread_barrier_t start;
    if (pthread_barrier_init(&start, NULL, (unsigned)threads + 1)) {
        fprintf(stderr, "tiledblas-bench: cannot make a barrier\n");
        exit(1);
    }
    for (int i = 0; i < threads; i++) {
        callers[i].start = &start;
        if (pthread_create(&ids[i], NULL, caller_main, &callers[i])) {
            fprintf(stderr, "tiledblas-bench: cannot start thread %d\n", i);
            exit(1);
        }
    }
    const double t0 = bench_now_ms();
    pthread_barrier_wait(&start);
    for (int i = 0; i < threads; i++)
        pthread_join(ids[i], NULL);
    const double ms = (bench_now_ms() - t0) / ((double)threads * calls);
    pthread_barrier_destroy(&start);
    free(ids);
    return ms;
}

/* Checks every caller's C after a concurrent block (beta = 0 only: beta != 0 accumulates). */
static void check_outputs(bench_row *row, const caller *callers, int threads, const bench_case *bc,
                          const bench_host_bufs *h, const bench_sample *s, size_t *nonfinite)
{
    for (int i = 0; i < threads && bc->beta == 0.0f; i++) {
        const double e = bench_sampled_error(callers[i].run.c, bc->ldc, s);
        row->error = e > row->error || isnan(e) ? e : row->error;
        for (size_t at = 0; at < h->nc; at++)
            *nonfinite += !isfinite(callers[i].run.c[at]);
    }
}

/* Rounds of one block of concurrent calls and one of the same calls made one at a time. */
#define THREAD_ROUNDS 7

/*
 * --threads N: N threads call libtiledblas at once, each on its own C, `calls`
 * times, against the same calls on the same buffers made one at a time (a
 * median of single calls on one C, whose operands stay in the host's caches,
 * is not the same work). THREAD_ROUNDS rounds each time both blocks, in
 * alternating order, after an untimed one; the row's time is the median of
 * the concurrent blocks' times per call, and its ratio the median of the
 * rounds' ratios (serial over concurrent), so that drifts of the machine
 * between rounds cancel. The outputs of every concurrent block are checked.
 */
static void run_threaded(const char *name, int threads, const bench_case *bc, const bench_host_bufs *h,
                         const bench_sample *s, const bench_opts *o, bench_table *t)
{
    char variant[32];
    snprintf(variant, sizeof variant, "%.24s x%d", name, threads);
    bench_row *row = bench_table_add(t, bc, variant);
    const int calls = o->reps < 3 ? 3 : o->reps;
    caller *callers = bench_xmalloc((size_t)threads * sizeof *callers);
    for (int i = 0; i < threads; i++)
        callers[i] = (caller){{cblas_sgemm, bc, h->a, h->b, bench_xmalloc(h->nc * sizeof(float))}, calls, NULL};
    reset_outputs(callers, threads, bc, h);
    serial_ms(callers, threads, 1); /* untimed: staging and workspaces grown, threads started */

    double concurrent[THREAD_ROUNDS], serial[THREAD_ROUNDS], ratio[THREAD_ROUNDS];
    row->error = bc->beta == 0.0f ? 0.0 : -1.0;
    size_t nonfinite = 0;
    for (int r = 0; r < THREAD_ROUNDS; r++) {
        if (r % 2)
            serial[r] = serial_ms(callers, threads, calls);
        reset_outputs(callers, threads, bc, h);
        concurrent[r] = concurrent_ms(callers, threads, calls);
        check_outputs(row, callers, threads, bc, h, s, &nonfinite);
        if (r % 2 == 0)
            serial[r] = serial_ms(callers, threads, calls);
        ratio[r] = concurrent[r] > 0.0 ? serial[r] / concurrent[r] : 0.0;
    }
    row->ms = bench_median(concurrent, THREAD_ROUNDS);
    row->reps = THREAD_ROUNDS * threads * calls;
    row->gflops = bench_gflops(bc, row->ms);
    row->ratio = bench_median(ratio, THREAD_ROUNDS); /* sorts them: ratio[0] and the last are the extremes */
    const double serial_median = bench_median(serial, THREAD_ROUNDS);
    if (nonfinite)
        bench_row_fail(row, "NaN/Inf in an output");
    else if (bc->beta == 0.0f && !(row->error <= 1.0))
        bench_row_fail(row, "error above the FP32 bound");
    else
        snprintf(row->status, sizeof row->status, "ok");
    fprintf(stderr,
            "[e2e] %s %s %s: %.3f ms per call (median of %d rounds of %d calls), %.1f GFLOP/s, "
            "%.2fx one at a time (median of the rounds' ratios, %.2f-%.2f; one at a time %.3f ms), %s\n",
            bc->shape, bc->op, row->variant, row->ms, THREAD_ROUNDS, threads * calls, row->gflops, row->ratio,
            ratio[0], ratio[THREAD_ROUNDS - 1], serial_median, row->status);
    for (int i = 0; i < threads; i++)
        free(callers[i].run.c);
    free(callers);
}

/* NVBLAS exports only the Fortran sgemm_: a CBLAS-shaped adapter over it. */
typedef void (*f77_sgemm_fn)(const char *ta, const char *tb, const int *m, const int *n,
                             const int *k, const float *alpha, const float *a, const int *lda,
                             const float *b, const int *ldb, const float *beta, float *c,
                             const int *ldc);
static f77_sgemm_fn nvblas_sgemm;

static void nvblas_cblas_sgemm(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb,
                               int m, int n, int k, float alpha, const float *a, int lda,
                               const float *b, int ldb, float beta, float *c, int ldc)
{
    const char op_a = ta == CblasNoTrans ? 'N' : 'T', op_b = tb == CblasNoTrans ? 'N' : 'T';
    if (layout == CblasRowMajor) /* C^T = op(B)^T op(A)^T, column-major */
        nvblas_sgemm(&op_b, &op_a, &n, &m, &k, &alpha, b, &ldb, a, &lda, &beta, c, &ldc);
    else
        nvblas_sgemm(&op_a, &op_b, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc);
}

static bench_sgemm_fn load_nvblas(const char *path, void **handle)
{
    *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!*handle || !(*(void **)&nvblas_sgemm = dlsym(*handle, "sgemm_"))) {
        fprintf(stderr, "tiledblas-bench: cannot use NVBLAS %s: %s\n", path, dlerror());
        return NULL;
    }
    const char *config = getenv("NVBLAS_CONFIG_FILE");
    printf("nvblas: sgemm_ from %s, NVBLAS_CONFIG_FILE=%s\n", path, config ? config : "(unset)");
    return nvblas_cblas_sgemm;
}

int bench_e2e(const bench_opts *o, bench_table *t)
{
    const char *device = getenv("TILEDBLAS_DEVICE");
    char name[32];
    void *openblas_handle = NULL;
    bench_sgemm_fn openblas = NULL;

    snprintf(name, sizeof name, "tiledblas%s%s", device ? ":" : "", device ? device : "");
    printf("tiledblas: cblas_sgemm of libtiledblas %s, TILEDBLAS_DEVICE=%s, GPU available: %s, "
           "CPU backend: %s\n",
           tiledblas_version(), device ? device : "(unset)",
           tiledblas_gpu_available() ? "yes" : "no", tiledblas_cpu_backend());
    void *nvblas_handle = NULL;
    bench_sgemm_fn nvblas = NULL;
    if (o->nvblas && !(nvblas = load_nvblas(o->nvblas, &nvblas_handle)))
        return 1;
    if (!o->no_openblas) {
        openblas = bench_load_openblas(&openblas_handle);
        if (!openblas) {
            printf("OpenBLAS not loadable (set OPENBLAS_LIB, or pass --no-openblas): skipped\n");
            return 77;
        }
    }
    printf("timing: wall clock around each call, host memory in and out, median of up to %d "
           "calls after a checked warm-up call\n", o->reps);
    if (o->threads)
        printf("x%d: %d threads calling at once, each on its own C, %d calls each; time per call from the "
               "wall clock of all of them, median of %d rounds; ratio: median over the rounds of the same "
               "calls on the same buffers made one at a time, timed alike in the same round, over it\n",
               o->threads, o->threads, o->reps < 3 ? 3 : o->reps, THREAD_ROUNDS);
    printf("err/bound: max over %d sampled elements of |C - C_fp64| / ((K+2) 2^-24 (|A||B| + "
           "|beta C0|)); <= 1 passes\n", BENCH_SAMPLES);
    fflush(stdout);

    for (int si = 0; si < o->nshapes; si++) {
        const bench_shape sh = o->shapes[si];
        bench_host_bufs h;
        bench_sample *s = bench_xmalloc(BENCH_SAMPLES * sizeof *s);
        bench_host_bufs_make(&h, sh, o->beta);

        for (int i = 0; i < o->ntrans; i++) {
            const bench_case bc = bench_case_make(o, sh, o->trans[i]);
            const tb_gemm_args g = bench_colmajor(&bc, h.a, h.b, h.c0);
            bench_samples_make(&g, s);
            const size_t ours = t->len; /* an index: adding rows moves them */
            if (bc.beta != 0.0f && !o->threads)
                run_beta_pair(name, &bc, &h, s, o, t);
            else
                run_variant(name, cblas_sgemm, &bc, &h, s, o, t);
            if (o->threads)
                run_threaded(name, o->threads, &bc, &h, s, o, t);
            /* Ratios are to the last baseline: OpenBLAS when timed, else NVBLAS. */
            const size_t first = t->len;
            if (nvblas)
                run_variant("nvblas", nvblas, &bc, &h, s, o, t);
            if (openblas) {
                run_variant("openblas", openblas, &bc, &h, s, o, t);
                /* OpenBLAS's threads spin for a while after a call, taking CPUs from whatever
                 * runs next (our host copies): let them go to sleep before the next timing. */
                nanosleep(&(struct timespec){0, 300 * 1000 * 1000}, NULL);
            }
            if (t->len > first && t->rows[t->len - 1].gflops > 0.0)
                for (size_t j = ours; j < t->len; j++)
                    if (!o->threads || j != ours + 1) /* the threaded row's ratio is to ours */
                        t->rows[j].ratio = t->rows[j].gflops / t->rows[t->len - 1].gflops;
        }
        free(s);
        bench_host_bufs_free(&h);
    }
    if (openblas_handle)
        dlclose(openblas_handle);
    if (nvblas_handle)
        dlclose(nvblas_handle);
    return 0;
}
