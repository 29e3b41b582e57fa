/*
 * A host operand whose first half is registered with CUDA (cudaHostRegister,
 * whole pages from the one holding its first element) is not pinned as a
 * whole: the call must be computed (its copies cannot treat the span as
 * pinned), the GPU must stay in use, and a call on device pointers right after
 * must compute C. Run with TILEDBLAS_DEVICE=gpu. Exits 77 (skipped) when CUDA
 * sees no device or tiledblas cannot use it.
 */
#include "refblas.h"
#include "testutil.h"
#include "tiledblas.h"

#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

static tb_tally tally;

static int cuda_ok(cudaError_t status, const char *action)
{
    if (status == cudaSuccess)
        return 1;
    fprintf(stderr, "FAIL: %s: %s\n", action, cudaGetErrorString(status));
    return 0;
}

/* The pages holding the first half of A's elements, from the one holding the first. */
static void first_half_pages(const tb_matrix *a, void **start, size_t *bytes)
{
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), first = (uintptr_t)a->data;
    const uintptr_t end = first + a->count * sizeof(float) / 2;
    *start = (void *)(first & ~(page - 1));
    *bytes = (size_t)(((end + page - 1) & ~(page - 1)) - (first & ~(page - 1)));
}

/* The call with the first half of A registered: A spans past the registered range. */
static void half_registered_call(tb_rng *rng)
{
    tb_gemm_case gc = {.layout = TB_COL_MAJOR, .trans_a = TB_NO_TRANS, .trans_b = TB_NO_TRANS,
                       .m = 700, .n = 650, .k = 600, .alpha = 1.0f, .beta = 0.5f};
    tb_case_set_ld(&gc, 3, 1, 2);
    tb_gemm_operands ops;
    tb_operands_make(&ops, &gc, rng);
    void *start;
    size_t bytes;
    first_half_pages(&ops.a, &start, &bytes);
    if (!cuda_ok(cudaHostRegister(start, bytes, cudaHostRegisterDefault), "cudaHostRegister")) {
        tb_tally_record(&tally, 0, "half-registered A: registering");
        tb_operands_free(&ops);
        return;
    }
    tb_tally_record(&tally, tb_run_case(&gc, &ops, "half-registered A") == 0, "half-registered A");
    cudaHostUnregister(start);
    tb_operands_free(&ops);
    tb_tally_record(&tally, tiledblas_gpu_available(), "the GPU still in use after the half-registered call");
}

/* A, B and C in device memory, guards and padding included: C must come back computed. */
static void device_call(tb_rng *rng)
{
    tb_gemm_case gc = {.layout = TB_ROW_MAJOR, .trans_a = TB_TRANS, .trans_b = TB_NO_TRANS,
                       .m = 300, .n = 200, .k = 150, .alpha = 0.9f, .beta = -0.6f};
    tb_case_set_ld(&gc, 1, 2, 3);
    tb_gemm_operands ops;
    tb_operands_make(&ops, &gc, rng);
    tb_matrix got, ref;
    tb_start_c(&got, &ops.c0, gc.beta);
    tb_run_reference(&gc, &ops, &ref);
    const tb_matrix *host[3] = {&ops.a, &ops.b, &got};
    float *device[3] = {NULL, NULL, NULL};
    int ok = 1;
    for (int i = 0; i < 3 && ok; i++) {
        const size_t bytes = tb_matrix_alloc_count(host[i]) * sizeof(float);
        ok = cuda_ok(cudaMalloc((void **)&device[i], bytes), "cudaMalloc") &&
             cuda_ok(cudaMemcpy(device[i], host[i]->base, bytes, cudaMemcpyHostToDevice), "upload");
    }
    if (ok) {
        tb_call_tiledblas(&gc, device[0] + TB_GUARD, device[1] + TB_GUARD, device[2] + TB_GUARD);
        ok = cuda_ok(cudaMemcpy(got.base, device[2], tb_matrix_alloc_count(&got) * sizeof(float),
                                cudaMemcpyDeviceToHost),
                     "download") &&
             tb_check_case(&gc, &ops, &got, &ref, "device pointers after it") == 0;
    }
    tb_tally_record(&tally, ok, "device pointers after the half-registered call");
    for (int i = 0; i < 3; i++)
        cudaFree(device[i]);
    tb_matrix_free(&got);
    tb_matrix_free(&ref);
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
    tb_ref_cblas_sgemm();
    tb_rng rng;
    tb_rng_seed(&rng, 4);
    half_registered_call(&rng);
    device_call(&rng);
    return tb_tally_report(&tally);
}
