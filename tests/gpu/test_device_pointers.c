/*
 * cblas_sgemm with operands in GPU memory: cudaMalloc'ed A, B and C must be
 * used in place (in auto mode, even for a problem too small to be worth the
 * GPU for host data), and managed memory must work too; operands in pinned
 * host memory (cudaHostAlloc), which the GPU paths copy without staging, must
 * give the same results (run with TILEDBLAS_DEVICE=gpu to send them there), and so
 * must managed C with A and B in ordinary host memory. C is copied back with
 * its padding and guards, A and B are copied back to prove them unmodified;
 * results are compared with the reference.
 * --mixed-only runs only the managed-C cases: under a TILEDBLAS_DEVICE_MB too small for
 * A and B, the call must still be done (on the CPU BLAS, which can read managed memory).
 * Exits 77 (skipped) when CUDA sees no device or tiledblas cannot use it.
 */
#include "refblas.h"
#include "testutil.h"
#include "tiledblas.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

static tb_tally tally;

/* Where the operands live during the call; HOST_MEMORY is the test's own malloc'ed copy. */
typedef enum memory_kind { DEVICE_MEMORY, MANAGED_MEMORY, PINNED_MEMORY, HOST_MEMORY } memory_kind;

static int cuda_ok(cudaError_t status, const char *action, const char *operand)
{
    if (status == cudaSuccess)
        return 1;
    fprintf(stderr, "FAIL: %s %s: %s\n", action, operand, cudaGetErrorString(status));
    return 0;
}

static size_t alloc_bytes(const tb_matrix *m)
{
    return tb_matrix_alloc_count(m) * sizeof(float);
}

static int gpu_alloc(memory_kind kind, float **ptr, size_t bytes, const char *operand)
{
    if (kind == HOST_MEMORY)
        return 1; /* the host copy is used as it is */
    if (kind == MANAGED_MEMORY)
        return cuda_ok(cudaMallocManaged((void **)ptr, bytes, cudaMemAttachGlobal),
                       "cudaMallocManaged", operand);
    if (kind == PINNED_MEMORY)
        return cuda_ok(cudaHostAlloc((void **)ptr, bytes, cudaHostAllocDefault), "cudaHostAlloc", operand);
    return cuda_ok(cudaMalloc((void **)ptr, bytes), "cudaMalloc", operand);
}

static void gpu_free(memory_kind kind, float *ptr)
{
    if (kind == PINNED_MEMORY)
        cudaFreeHost(ptr);
    else if (kind != HOST_MEMORY)
        cudaFree(ptr);
}

/* Managed and pinned memory are read and written on the host directly, right after the call: it must block. */
static int copy(memory_kind kind, void *dst, const void *src, size_t bytes,
                enum cudaMemcpyKind direction, const char *operand)
{
    if (kind == HOST_MEMORY)
        return 1;
    if (kind != DEVICE_MEMORY) {
        memcpy(dst, src, bytes);
        return 1;
    }
    const char *action = direction == cudaMemcpyHostToDevice ? "upload" : "download";
    return cuda_ok(cudaMemcpy(dst, src, bytes, direction), action, operand);
}

/* One case with A, B and C in memory of the given kinds, guards and padding included. */
static void run_case(const memory_kind kinds[3], const char *kind_name, const tb_gemm_case *gc, tb_rng *rng)
{
    char label[300];
    tb_case_label(gc, kind_name, label, sizeof label);
    tb_gemm_operands ops;
    tb_operands_make(&ops, gc, rng);
    tb_matrix got;
    tb_start_c(&got, &ops.c0, gc->beta);

    /* Everything is copied back over the host copies: tb_check_case compares A and B too. */
    tb_matrix *const host[] = {&ops.a, &ops.b, &got};
    static const char *const names[] = {"A", "B", "C"};
    float *gpu[] = {NULL, NULL, NULL};
    for (int i = 0; i < 3; i++)
        if (kinds[i] == HOST_MEMORY)
            gpu[i] = host[i]->base;
    int ok = 1;
    for (int i = 0; i < 3 && ok; i++)
        ok = gpu_alloc(kinds[i], &gpu[i], alloc_bytes(host[i]), names[i]) &&
             copy(kinds[i], gpu[i], host[i]->base, alloc_bytes(host[i]), cudaMemcpyHostToDevice,
                  names[i]);
    if (ok)
        tb_call_tiledblas(gc, gpu[0] + TB_GUARD, gpu[1] + TB_GUARD, gpu[2] + TB_GUARD);
    for (int i = 0; i < 3 && ok; i++)
        ok = copy(kinds[i], host[i]->base, gpu[i], alloc_bytes(host[i]), cudaMemcpyDeviceToHost,
                  names[i]);
    size_t problems = 1;
    if (ok) {
        tb_matrix ref;
        tb_run_reference(gc, &ops, &ref);
        problems = tb_check_case(gc, &ops, &got, &ref, label);
        tb_matrix_free(&ref);
    }
    for (int i = 0; i < 3; i++)
        gpu_free(kinds[i], gpu[i]);
    tb_tally_record(&tally, problems == 0, label);
    tb_matrix_free(&got);
    tb_operands_free(&ops);
}

static void run_gpu_case(memory_kind kind, const tb_gemm_case *gc, tb_rng *rng)
{
    static const char *const kind_names[] = {"device pointers", "managed memory", "pinned memory"};
    const memory_kind kinds[3] = {kind, kind, kind};
    run_case(kinds, kind_names[kind], gc, rng);
}

/* Managed C, A and B in host memory: large enough (1.4 MB each) to miss a 1 MB device budget. */
static void run_mixed_cases(tb_rng *rng)
{
    static const memory_kind kinds[3] = {HOST_MEMORY, HOST_MEMORY, MANAGED_MEMORY};
    for (int li = 0; li < 2; li++) {
        tb_gemm_case gc = {.layout = tb_layouts[li], .trans_a = TB_NO_TRANS, .trans_b = TB_TRANS,
                           .m = 600, .n = 610, .k = 620, .alpha = 0.9f, .beta = 0.0f};
        tb_case_set_ld(&gc, 1, 0, 3);
        run_case(kinds, "managed C, host A and B", &gc, rng);
        gc.beta = -0.6f;
        run_case(kinds, "managed C, host A and B", &gc, rng);
    }
}

int main(int argc, char **argv)
{
    const int mixed_only = argc > 1 && strcmp(argv[1], "--mixed-only") == 0;
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

    static const struct {
        int m, n, k;
    } shapes[] = {{5, 7, 3}, {129, 65, 257}, {300, 200, 150}};
    static const float scalar_pairs[][2] = {{1.0f, 0.0f}, {0.7f, -1.3f}};
    tb_rng rng;
    tb_rng_seed(&rng, 99);
    run_mixed_cases(&rng);
    if (mixed_only)
        return tb_tally_report(&tally);

    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int li = 0; li < 2; li++)
            for (int ai = 0; ai < 3; ai++)
                for (int bi = 0; bi < 3; bi++) {
                    const float *pair = scalar_pairs[(ai + bi + li) % 2];
                    tb_gemm_case gc = {.layout = tb_layouts[li], .trans_a = tb_transposes[ai],
                                       .trans_b = tb_transposes[bi], .m = shapes[s].m,
                                       .n = shapes[s].n, .k = shapes[s].k,
                                       .alpha = pair[0], .beta = pair[1]};
                    tb_case_set_ld(&gc, 3, 1, 2);
                    run_gpu_case(DEVICE_MEMORY, &gc, &rng);
                }

    /*
     * Grids past one wave of large tiles, whose part-filled last wave runs as a
     * stream-K tail on the H100 (bench_kernels_stream_k checks the plan): tiles cut
     * in about two pieces (K = 1029, ragged) and about six (K = 4100).
     */
    static const struct {
        int m, n, k;
    } tail_shapes[] = {{2304, 2304, 1029}, {2176, 2176, 4100}};
    for (size_t s = 0; s < sizeof tail_shapes / sizeof tail_shapes[0]; s++)
        for (int li = 0; li < 2; li++)
            for (int ai = 0; ai < 2; ai++)
                for (int bi = 0; bi < 2; bi++) {
                    const float *pair = scalar_pairs[(ai + bi + li + (int)s) % 2];
                    tb_gemm_case gc = {.layout = tb_layouts[li], .trans_a = tb_transposes[ai],
                                       .trans_b = tb_transposes[bi], .m = tail_shapes[s].m,
                                       .n = tail_shapes[s].n, .k = tail_shapes[s].k,
                                       .alpha = pair[0], .beta = pair[1]};
                    tb_case_set_ld(&gc, 0, 0, 0);
                    run_gpu_case(DEVICE_MEMORY, &gc, &rng);
                }

    for (int li = 0; li < 2; li++) {
        tb_gemm_case gc = {.layout = tb_layouts[li], .trans_a = TB_TRANS, .trans_b = TB_NO_TRANS,
                           .m = 64, .n = 48, .k = 32, .alpha = 1.3f, .beta = 0.0f};
        tb_case_set_ld(&gc, 0, 2, 1);
        run_gpu_case(MANAGED_MEMORY, &gc, &rng);
        gc.beta = 0.7f;
        run_gpu_case(MANAGED_MEMORY, &gc, &rng);
    }

    /* Pinned host memory: staged-path and pipeline-wide shapes, padded, beta zero and not. */
    static const struct {
        int m, n, k;
    } pinned_shapes[] = {{129, 65, 257}, {300, 520, 150}};
    for (size_t s = 0; s < sizeof pinned_shapes / sizeof pinned_shapes[0]; s++)
        for (int li = 0; li < 2; li++)
            for (int ai = 0; ai < 2; ai++) /* no transpose, transpose */
                for (int bi = 0; bi < 2; bi++) {
                    const float *pair = scalar_pairs[(ai + bi) % 2];
                    tb_gemm_case gc = {.layout = tb_layouts[li], .trans_a = tb_transposes[ai],
                                       .trans_b = tb_transposes[bi], .m = pinned_shapes[s].m,
                                       .n = pinned_shapes[s].n, .k = pinned_shapes[s].k,
                                       .alpha = pair[0], .beta = pair[1]};
                    tb_case_set_ld(&gc, 2, 0, 1);
                    run_gpu_case(PINNED_MEMORY, &gc, &rng);
                }

    return tb_tally_report(&tally);
}
