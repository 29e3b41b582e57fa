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

#include <math.h>
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

static const int layouts[] = {TB_ROW_MAJOR, TB_COL_MAJOR};
static const int transposes[] = {TB_NO_TRANS, TB_TRANS, TB_CONJ_TRANS};
static const float scalar_values[] = {0.0f, 1.0f, -1.0f, 0.7f, 1.3f};

typedef struct worker {
    pthread_t thread;
    int index;
    int passed, failed;
} worker;

static void *run_worker(void *arg)
{
    worker *self = arg;
    tb_rng rng;
    tb_rng_seed(&rng, 1000u + (uint64_t)self->index);

    for (int call = 0; call < CALLS_PER_THREAD; call++) {
        int s = tb_rng_below(&rng, SHAPE_COUNT);
        tb_gemm_case gc = {
            .layout = layouts[tb_rng_below(&rng, 2)],
            .trans_a = transposes[tb_rng_below(&rng, 3)],
            .trans_b = transposes[tb_rng_below(&rng, 3)],
            .m = thread_shapes[s].m, .n = thread_shapes[s].n, .k = thread_shapes[s].k,
            .alpha = scalar_values[tb_rng_below(&rng, 5)],
            .beta = scalar_values[tb_rng_below(&rng, 5)],
        };
        tb_case_set_ld(&gc, tb_rng_below(&rng, 4), tb_rng_below(&rng, 4), tb_rng_below(&rng, 4));

        char desc[256], label[300];
        tb_case_describe(&gc, desc, sizeof desc);
        snprintf(label, sizeof label, "thread %d call %d: %s", self->index, call, desc);

        tb_gemm_operands ops;
        tb_operands_make(&ops, &gc, &rng);
        tb_matrix got, ref;
        tb_matrix_clone(&got, &ops.c0);
        if (gc.beta == 0.0f)
            tb_matrix_fill_view(&got, NAN); /* must be overwritten unread */
        cblas_sgemm((CBLAS_LAYOUT)gc.layout, (CBLAS_TRANSPOSE)gc.trans_a,
                    (CBLAS_TRANSPOSE)gc.trans_b, gc.m, gc.n, gc.k, gc.alpha, ops.a.data,
                    gc.lda, ops.b.data, gc.ldb, gc.beta, got.data, gc.ldc);
        tb_run_reference(&gc, &ops, &ref);
        if (tb_check_case(&gc, &ops, &got, &ref, label) == 0) {
            self->passed++;
        } else {
            self->failed++;
            fprintf(stderr, "  in case: %s\n", label);
        }
        tb_matrix_free(&got);
        tb_matrix_free(&ref);
        tb_operands_free(&ops);
    }
    return NULL;
}

int main(void)
{
    if (tb_env_forces_gpu() && !tiledblas_gpu_available()) {
        printf("SKIP: TILEDBLAS_DEVICE=gpu but no usable GPU\n");
        return 77;
    }
    tb_ref_cblas_sgemm(); /* load the reference before the threads race for it */

    worker workers[THREAD_COUNT];
    for (int i = 0; i < THREAD_COUNT; i++) {
        workers[i] = (worker){.index = i};
        if (pthread_create(&workers[i].thread, NULL, run_worker, &workers[i]) != 0) {
            fprintf(stderr, "cannot create thread %d\n", i);
            return 1;
        }
    }
    int passed = 0, failed = 0;
    for (int i = 0; i < THREAD_COUNT; i++) {
        pthread_join(workers[i].thread, NULL);
        passed += workers[i].passed;
        failed += workers[i].failed;
    }
    printf("%d threads x %d calls\n", THREAD_COUNT, CALLS_PER_THREAD);
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 && passed == THREAD_COUNT * CALLS_PER_THREAD ? 0 : 1;
}
