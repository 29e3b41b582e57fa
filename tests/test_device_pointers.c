/*
 * cblas_sgemm with operands in GPU memory: cudaMalloc'ed A, B and C must be
 * used in place (in auto mode, even for a problem too small to be worth the
 * GPU for host data), and managed memory must work too. C is copied back with
 * its padding and guards, A and B are copied back to prove them unmodified;
 * results are compared with the reference.
 * Exits 77 (skipped) when CUDA sees no device or tiledblas cannot use it.
 */
#include "refblas.h"
#include "testutil.h"
#include "tiledblas.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static int passed, failed;

static int cuda_ok(cudaError_t status, const char *what)
{
    if (status == cudaSuccess)
        return 1;
    fprintf(stderr, "FAIL: %s: %s\n", what, cudaGetErrorString(status));
    return 0;
}

static size_t alloc_bytes(const tb_matrix *m)
{
    return tb_matrix_alloc_count(m) * sizeof(float);
}

/* A host matrix whose storage is replaced by `base` (same size, not owned). */
static tb_matrix view_on(const tb_matrix *like, float *base)
{
    tb_matrix m = *like;
    m.base = base;
    m.data = base + TB_GUARD;
    return m;
}

static void record(size_t problems, const char *label)
{
    if (problems == 0) {
        passed++;
    } else {
        failed++;
        fprintf(stderr, "  in case: %s\n", label);
    }
}

static void call_tiledblas(const tb_gemm_case *gc, const float *a, const float *b, float *c)
{
    cblas_sgemm((CBLAS_LAYOUT)gc->layout, (CBLAS_TRANSPOSE)gc->trans_a,
                (CBLAS_TRANSPOSE)gc->trans_b, gc->m, gc->n, gc->k, gc->alpha, a, gc->lda, b,
                gc->ldb, gc->beta, c, gc->ldc);
}

/* Operands in cudaMalloc'ed memory, guards and padding included. */
static void run_device_case(const tb_gemm_case *gc, tb_rng *rng)
{
    char desc[256], label[300];
    tb_case_describe(gc, desc, sizeof desc);
    snprintf(label, sizeof label, "device pointers: %s", desc);

    tb_gemm_operands ops;
    tb_operands_make(&ops, gc, rng);
    tb_matrix got, ref;
    tb_matrix_clone(&got, &ops.c0);
    if (gc->beta == 0.0f)
        tb_matrix_fill_view(&got, NAN); /* must be overwritten unread */

    float *dev_a = NULL, *dev_b = NULL, *dev_c = NULL;
    size_t problems = 0;
    if (cuda_ok(cudaMalloc((void **)&dev_a, alloc_bytes(&ops.a)), "cudaMalloc A") &&
        cuda_ok(cudaMalloc((void **)&dev_b, alloc_bytes(&ops.b)), "cudaMalloc B") &&
        cuda_ok(cudaMalloc((void **)&dev_c, alloc_bytes(&got)), "cudaMalloc C") &&
        cuda_ok(cudaMemcpy(dev_a, ops.a.base, alloc_bytes(&ops.a), cudaMemcpyHostToDevice), "upload A") &&
        cuda_ok(cudaMemcpy(dev_b, ops.b.base, alloc_bytes(&ops.b), cudaMemcpyHostToDevice), "upload B") &&
        cuda_ok(cudaMemcpy(dev_c, got.base, alloc_bytes(&got), cudaMemcpyHostToDevice), "upload C")) {
        call_tiledblas(gc, dev_a + TB_GUARD, dev_b + TB_GUARD, dev_c + TB_GUARD);
        /* Copy everything back over the host copies: tb_check_case compares A and B too. */
        if (cuda_ok(cudaMemcpy(got.base, dev_c, alloc_bytes(&got), cudaMemcpyDeviceToHost), "download C") &&
            cuda_ok(cudaMemcpy(ops.a.base, dev_a, alloc_bytes(&ops.a), cudaMemcpyDeviceToHost), "download A") &&
            cuda_ok(cudaMemcpy(ops.b.base, dev_b, alloc_bytes(&ops.b), cudaMemcpyDeviceToHost), "download B")) {
            tb_run_reference(gc, &ops, &ref);
            problems = tb_check_case(gc, &ops, &got, &ref, label);
            tb_matrix_free(&ref);
        } else {
            problems = 1;
        }
    } else {
        problems = 1;
    }
    cudaFree(dev_a);
    cudaFree(dev_b);
    cudaFree(dev_c);
    record(problems, label);
    tb_matrix_free(&got);
    tb_operands_free(&ops);
}

/* Operands in managed memory, read on the host right after the call (which must block). */
static void run_managed_case(const tb_gemm_case *gc, tb_rng *rng)
{
    char desc[256], label[300];
    tb_case_describe(gc, desc, sizeof desc);
    snprintf(label, sizeof label, "managed memory: %s", desc);

    tb_gemm_operands ops;
    tb_operands_make(&ops, gc, rng);
    float *man_a = NULL, *man_b = NULL, *man_c = NULL;
    size_t problems = 0;
    if (cuda_ok(cudaMallocManaged((void **)&man_a, alloc_bytes(&ops.a), cudaMemAttachGlobal), "cudaMallocManaged A") &&
        cuda_ok(cudaMallocManaged((void **)&man_b, alloc_bytes(&ops.b), cudaMemAttachGlobal), "cudaMallocManaged B") &&
        cuda_ok(cudaMallocManaged((void **)&man_c, alloc_bytes(&ops.c0), cudaMemAttachGlobal), "cudaMallocManaged C")) {
        memcpy(man_a, ops.a.base, alloc_bytes(&ops.a));
        memcpy(man_b, ops.b.base, alloc_bytes(&ops.b));
        memcpy(man_c, ops.c0.base, alloc_bytes(&ops.c0));
        tb_matrix got = view_on(&ops.c0, man_c);
        if (gc->beta == 0.0f)
            tb_matrix_fill_view(&got, NAN);
        call_tiledblas(gc, man_a + TB_GUARD, man_b + TB_GUARD, man_c + TB_GUARD);
        memcpy(ops.a.base, man_a, alloc_bytes(&ops.a));
        memcpy(ops.b.base, man_b, alloc_bytes(&ops.b));
        tb_matrix ref;
        tb_run_reference(gc, &ops, &ref);
        problems = tb_check_case(gc, &ops, &got, &ref, label);
        tb_matrix_free(&ref);
    } else {
        problems = 1;
    }
    cudaFree(man_a);
    cudaFree(man_b);
    cudaFree(man_c);
    record(problems, label);
    tb_operands_free(&ops);
}

int main(void)
{
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("SKIP: CUDA sees no device\n");
        return 77;
    }
    if (!tiledblas_gpu_available()) {
        printf("SKIP: tiledblas cannot use the GPU\n");
        return 77;
    }
    tb_ref_cblas_sgemm(); /* fail early if the reference is missing */

    static const int layouts[] = {TB_ROW_MAJOR, TB_COL_MAJOR};
    static const int transposes[] = {TB_NO_TRANS, TB_TRANS, TB_CONJ_TRANS};
    static const struct {
        int m, n, k;
    } shapes[] = {{5, 7, 3}, {129, 65, 257}, {300, 200, 150}};
    static const float scalar_pairs[][2] = {{1.0f, 0.0f}, {0.7f, -1.3f}};
    tb_rng rng;
    tb_rng_seed(&rng, 99);

    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int li = 0; li < 2; li++)
            for (int ai = 0; ai < 3; ai++)
                for (int bi = 0; bi < 3; bi++) {
                    const float *pair = scalar_pairs[(ai + bi + li) % 2];
                    tb_gemm_case gc = {.layout = layouts[li], .trans_a = transposes[ai],
                                       .trans_b = transposes[bi], .m = shapes[s].m,
                                       .n = shapes[s].n, .k = shapes[s].k,
                                       .alpha = pair[0], .beta = pair[1]};
                    tb_case_set_ld(&gc, 3, 1, 2);
                    run_device_case(&gc, &rng);
                }

    for (int li = 0; li < 2; li++) {
        tb_gemm_case gc = {.layout = layouts[li], .trans_a = TB_TRANS, .trans_b = TB_NO_TRANS,
                           .m = 64, .n = 48, .k = 32, .alpha = 1.3f, .beta = 0.0f};
        tb_case_set_ld(&gc, 0, 2, 1);
        run_managed_case(&gc, &rng);
        gc.beta = 0.7f;
        run_managed_case(&gc, &rng);
    }

    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
