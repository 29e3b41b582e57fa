/*
 * Concurrent cblas_sgemm from many threads: mixed shapes, layouts and
 * transposes on fresh random inputs, each result checked element-wise against
 * the reference. Large shapes are included so that auto mode on a GPU machine
 * sends some calls to the GPU while others run on the CPU.
 * With TILEDBLAS_DEVICE=gpu and no usable GPU it exits 77 (skipped).
 */
#include "refblas.h"
#include "testutil.h"
#include "tiledblas.h"

#include <pthread.h>
#include <stdio.h>

#define THREAD_COUNT 16
#define CALLS_PER_THREAD 40

static const struct {
    int m, n, k;
} thread_shapes[] = {
    {1, 1, 1}, {7, 5, 3}, {33, 17, 65}, {64, 64, 64}, {100, 37, 250},
    {129, 130, 127}, {255, 64, 200}, {512, 512, 512},
};
#define SHAPE_COUNT (int)(sizeof thread_shapes / sizeof thread_shapes[0])

static const float scalar_values[] = {0.0f, 1.0f, -1.0f, 0.7f, 1.3f};

typedef struct worker {
    pthread_t thread;
    int index;
    tb_tally tally;
} worker;

static void *run_worker(void *arg)
{
    worker *self = arg;
    tb_rng rng;
    tb_rng_seed(&rng, 1000u + (uint64_t)self->index);

    for (int call = 0; call < CALLS_PER_THREAD; call++) {
        int s = tb_rng_below(&rng, SHAPE_COUNT);
        tb_gemm_case gc = {
            .layout = tb_layouts[tb_rng_below(&rng, 2)],
            .trans_a = tb_transposes[tb_rng_below(&rng, 3)],
            .trans_b = tb_transposes[tb_rng_below(&rng, 3)],
            .m = thread_shapes[s].m, .n = thread_shapes[s].n, .k = thread_shapes[s].k,
            .alpha = scalar_values[tb_rng_below(&rng, 5)],
            .beta = scalar_values[tb_rng_below(&rng, 5)],
        };
        tb_case_set_ld(&gc, tb_rng_below(&rng, 4), tb_rng_below(&rng, 4), tb_rng_below(&rng, 4));

        char what[64];
        snprintf(what, sizeof what, "thread %d call %d", self->index, call);
        tb_tally_random_case(&self->tally, &gc, what, &rng);
    }
    return NULL;
}

int main(void)
{
    tb_skip_if_forced_gpu_missing();
    tb_ref_cblas_sgemm(); /* load the reference before the threads race for it */

    worker workers[THREAD_COUNT];
    for (int i = 0; i < THREAD_COUNT; i++) {
        workers[i] = (worker){.index = i};
        if (pthread_create(&workers[i].thread, NULL, run_worker, &workers[i]) != 0) {
            fprintf(stderr, "cannot create thread %d\n", i);
            return 1;
        }
    }
    tb_tally total = {0, 0};
    for (int i = 0; i < THREAD_COUNT; i++) {
        pthread_join(workers[i].thread, NULL);
        total.passed += workers[i].tally.passed;
        total.failed += workers[i].tally.failed;
    }
    printf("%d threads x %d calls\n", THREAD_COUNT, CALLS_PER_THREAD);
    return tb_tally_report(&total) == 0 && total.passed == THREAD_COUNT * CALLS_PER_THREAD ? 0 : 1;
}
