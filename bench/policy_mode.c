/*
 * --policy: auto mode against each path forced, in one process. For every
 * case, libtiledblas's cblas_sgemm set to auto, then to the GPU
 * (tiledblas_set_device), and OpenBLAS alone are each checked once, then
 * timed in rounds. A round calls each variant untimed for at least --warm
 * (1 ms), then times it, so that what is timed follows calls of its own kind,
 * as in a program that uses that variant alone: the untimed calls take what
 * the previous variant or the pause left behind (OpenBLAS's threads spinning
 * or asleep, cold caches, idle cores; one untimed call of a few microseconds
 * does not, and a variant that follows the pause more often than another
 * would be timed slower). Calls shorter than
 * BATCH_MS are timed in batches that last about that long: a call of a
 * microsecond or two, timed alone, measures the clock and where the last
 * variant left the branch predictors as much as the call. After OpenBLAS's
 * timed calls the round pauses OPENBLAS_REST_S: its threads spin 0.1-0.16 s
 * after a multithreaded call (its default), taking CPUs from the calls that
 * follow, which a program that uses OpenBLAS alone never makes.
 * Round r takes the r-th of the six orders of the three, so host load that
 * drifts falls on all three alike. A variant's time is its median over the
 * rounds.
 *
 * Every row's ratio is its speed over the faster forced path's (OpenBLAS or
 * the GPU); the summary counts the cases where auto reaches 0.95 of it.
 * Without a GPU, or with --no-openblas, the other path alone is the reference.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tiledblas.h"
#include "bench.h"

#define TARGET 0.95
#define BATCH_MS 0.25
#define OPENBLAS_REST_S 0.3
/* OpenBLAS calls shorter than this run on one thread: nothing spins after them. */
#define OPENBLAS_THREADED_MS 0.01

enum { AUTO, GPU, OPENBLAS, VARIANTS };

static const char *const variant_names[VARIANTS] = {"tiledblas:auto", "tiledblas:gpu", "openblas"};

/* The six orders of the three variants. */
static const int orders[6][VARIANTS] = {
    {AUTO, GPU, OPENBLAS}, {GPU, OPENBLAS, AUTO}, {OPENBLAS, AUTO, GPU},
    {AUTO, OPENBLAS, GPU}, {OPENBLAS, GPU, AUTO}, {GPU, AUTO, OPENBLAS},
};

typedef struct policy_case {
    bench_host_call call[VARIANTS];
    int present[VARIANTS];
} policy_case;

/* Sets the library's path for variant v (OpenBLAS is called directly). */
static void select_path(int v)
{
    if (v != OPENBLAS)
        tiledblas_set_device(v == AUTO ? TILEDBLAS_DEVICE_AUTO : TILEDBLAS_DEVICE_GPU);
}

/* Untimed calls of variant v for at least warm_ms (one at least), then `batch` timed ones: ms per call. */
static double call_variant_again(policy_case *pc, int v, int batch, double warm_ms)
{
    select_path(v);
    const double warm_until = bench_now_ms() + warm_ms;
    do
        bench_host_run(&pc->call[v]);
    while (bench_now_ms() < warm_until);
    const double t0 = bench_now_ms();
    for (int i = 0; i < batch; i++)
        bench_host_run(&pc->call[v]);
    return (bench_now_ms() - t0) / batch;
}

/*
 * Fills the rows of the present variants with their medians over interleaved
 * rounds; returns the calls per timed batch.
 */
static int time_interleaved(policy_case *pc, const bench_case *bc, int max_reps, double warm_ms,
                            bench_row *rows[VARIANTS])
{
    double *t[VARIANTS], probe[VARIANTS] = {0}, fastest = 0.0;
    for (int v = 0; v < VARIANTS; v++) {
        t[v] = bench_xmalloc(sizeof(double) * (size_t)max_reps);
        if (pc->present[v]) {
            probe[v] = call_variant_again(pc, v, 1, warm_ms);
            fastest = fastest == 0.0 || probe[v] < fastest ? probe[v] : fastest;
        }
    }
    const int batch = fastest >= BATCH_MS ? 1 : (int)(BATCH_MS / (fastest > 1e-6 ? fastest : 1e-6)) + 1;
    double round_ms = 0.0;
    for (int v = 0; v < VARIANTS; v++)
        round_ms += (probe[v] > warm_ms ? probe[v] : warm_ms) + batch * probe[v];
    /* All six orders at least: host load that drifts falls on every variant in every position. */
    const int budgeted = bench_reps_within_budget(round_ms, max_reps), all_orders = max_reps < 6 ? max_reps : 6;
    const int rounds = budgeted > all_orders ? budgeted : all_orders;
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < VARIANTS; i++) {
            const int v = orders[r % 6][i];
            if (!pc->present[v])
                continue;
            t[v][r] = call_variant_again(pc, v, batch, warm_ms);
            if (v == OPENBLAS && t[v][r] >= OPENBLAS_THREADED_MS)
                nanosleep(&(struct timespec){0, (long)(OPENBLAS_REST_S * 1e9)}, NULL);
        }
    for (int v = 0; v < VARIANTS; v++) {
        if (pc->present[v]) {
            rows[v]->ms = bench_median(t[v], rounds);
            rows[v]->reps = rounds;
            rows[v]->gflops = bench_gflops(bc, rows[v]->ms);
        }
        free(t[v]);
    }
    return batch;
}

int bench_policy(const bench_opts *o, bench_table *t)
{
    void *openblas_handle = NULL;
    const bench_sgemm_fn openblas = o->no_openblas ? NULL : bench_load_openblas(&openblas_handle);
    if (!o->no_openblas && !openblas) {
        printf("OpenBLAS not loadable (set OPENBLAS_LIB, or pass --no-openblas): skipped\n");
        return 77;
    }
    const int gpu = tiledblas_gpu_available();
    if (!gpu && !openblas) {
        printf("no usable GPU and no OpenBLAS: nothing to compare auto mode with; skipped\n");
        return 77;
    }
    const int initial = tiledblas_get_device();
    printf("tiledblas: cblas_sgemm of libtiledblas %s, set to auto and to the GPU in turn "
           "(tiledblas_set_device), GPU available: %s, CPU backend: %s\n",
           tiledblas_version(), gpu ? "yes" : "no (auto against OpenBLAS alone)", tiledblas_cpu_backend());
    if (!openblas)
        printf("OpenBLAS alone: not timed (--no-openblas); auto against the forced GPU\n");
    printf("timing: wall clock, host memory in and out; after a checked call each, rounds of untimed calls "
           "per variant for at least %.2f ms (at least one), then a timed one (a batch lasting about %.2f ms "
           "for shorter calls), each round in another of the six orders, a %.2f s pause after OpenBLAS's (its "
           "threads spin); medians of up to %d rounds\n", o->warm_ms, BATCH_MS, OPENBLAS_REST_S, o->reps);
    printf("ratio: speed over the faster forced path's (OpenBLAS alone or the GPU); target for auto: >= %.2f\n",
           TARGET);
    fflush(stdout);

    int cases = 0, met = 0;
    char misses[2048] = "";
    for (int si = 0; si < o->nshapes; si++) {
        bench_host_bufs h;
        bench_sample *s = bench_xmalloc(BENCH_SAMPLES * sizeof *s);
        bench_host_bufs_make(&h, o->shapes[si], o->beta);
        for (int i = 0; i < o->ntrans; i++) {
            const bench_case bc = bench_case_make(o, o->shapes[si], o->trans[i]);
            const tb_gemm_args g = bench_colmajor(&bc, h.a, h.b, h.c0);
            bench_samples_make(&g, s);
            policy_case pc = {.present = {1, gpu, openblas != NULL}};
            /* Adding a row may move the table: the case's rows are added first, then pointed to. */
            const size_t first_row = t->len;
            for (int v = 0; v < VARIANTS; v++)
                if (pc.present[v])
                    bench_table_add(t, &bc, variant_names[v]);
            bench_row *rows[VARIANTS] = {0};
            for (int v = 0, at = 0; v < VARIANTS; v++) {
                pc.call[v] = (bench_host_call){v == OPENBLAS ? openblas : cblas_sgemm, &bc, h.a, h.b, h.c};
                if (!pc.present[v])
                    continue;
                rows[v] = &t->rows[first_row + at++];
                select_path(v);
                bench_host_check(rows[v], pc.call[v].sgemm, &bc, &h, s);
            }
            /* The checks poisoned and rewrote C: beta != 0 now accumulates, which costs the same. */
            const int batch = time_interleaved(&pc, &bc, o->reps, o->warm_ms, rows);

            const double best = !gpu                                           ? rows[OPENBLAS]->ms
                                : !openblas || rows[GPU]->ms < rows[OPENBLAS]->ms ? rows[GPU]->ms
                                                                                  : rows[OPENBLAS]->ms;
            for (int v = 0; v < VARIANTS; v++)
                if (rows[v]) {
                    rows[v]->ratio = rows[v]->ms > 0.0 ? best / rows[v]->ms : 0.0;
                    if (!rows[v]->failed)
                        snprintf(rows[v]->status, sizeof rows[v]->status, "ok");
                }
            cases++;
            if (rows[AUTO]->ratio >= TARGET) {
                met++;
            } else {
                char miss[96];
                snprintf(miss, sizeof miss, "%s%s %s %.3f", misses[0] ? ", " : "", bc.shape, bc.op,
                         rows[AUTO]->ratio);
                if (sizeof misses - strlen(misses) > strlen(miss))
                    strcat(misses, miss);
            }
            fprintf(stderr, "[policy] %s %s: auto %.4f ms, gpu %.4f ms, openblas %.4f ms (%d rounds of %d calls; 0: not "
                    "timed): auto at %.3f\n", bc.shape, bc.op, rows[AUTO]->ms, gpu ? rows[GPU]->ms : 0.0,
                    openblas ? rows[OPENBLAS]->ms : 0.0, rows[AUTO]->reps, batch, rows[AUTO]->ratio);
        }
        free(s);
        bench_host_bufs_free(&h);
    }
    tiledblas_set_device((tiledblas_device)initial);
    printf("auto >= %.2f of the faster forced path: %d of %d cases%s%s\n", TARGET, met, cases,
           misses[0] ? "; below: " : "", misses);
    if (openblas_handle)
        dlclose(openblas_handle);
    return 0;
}
