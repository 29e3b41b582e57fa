/*
 * Operands the application is still writing on its own stream when it calls
 * cblas_sgemm: the call must see them written, as a BLAS call sees every
 * write made before it. A of N x N floats is first set to NaN, then the real
 * A goes up with cudaMemcpyAsync from pinned memory (about a millisecond at
 * N = 4096), and cblas_sgemm is called at once, on the copy's heels. Streams:
 * the legacy default stream, a stream made with default flags (blocking) and
 * a non-blocking one. C is checked at sampled elements against FP64 dot
 * products of the host data, within the FP32 bound; an A read before its copy
 * landed gives NaN or the wrong values. Exits 77 without a usable GPU.
 */
#include "testutil.h"
#include "tiledblas.h"

#include <cuda_runtime_api.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N 4096
#define SAMPLES 64

static tb_tally tally;

static int cuda_ok(cudaError_t status, const char *what)
{
    if (status == cudaSuccess)
        return 1;
    fprintf(stderr, "FAIL: %s: %s\n", what, cudaGetErrorString(status));
    tb_tally_record(&tally, 0, what);
    return 0;
}

/* The sampled elements of C (column-major, C = A B) against FP64 sums of the host operands. */
static void check_c(const float *c, const float *a, const float *b, const char *label)
{
    tb_rng rng;
    tb_rng_seed(&rng, 17);
    int bad = 0;
    for (int s = 0; s < SAMPLES; s++) {
        const int i = tb_rng_below(&rng, N), j = tb_rng_below(&rng, N);
        double exact = 0.0, magnitude = 0.0;
        for (int p = 0; p < N; p++) {
            exact += (double)a[i + (size_t)p * N] * (double)b[p + (size_t)j * N];
            magnitude += fabs((double)a[i + (size_t)p * N] * (double)b[p + (size_t)j * N]);
        }
        const double got = c[i + (size_t)j * N];
        if (!(fabs(got - exact) <= TB_BOUND_FACTOR * (N + 2.0) * FLT_EPSILON * magnitude)) {
            if (!bad)
                fprintf(stderr, "%s: C(%d,%d) = %.9g, expected %.9g\n", label, i, j, got, exact);
            bad++;
        }
    }
    tb_tally_record(&tally, bad == 0, label);
}

/* One call with A still on its way up on `stream`. */
static void race(cudaStream_t stream, const char *label, const float *a_host, const float *b_host, float *a, float *b,
                 float *c, float *c_host)
{
    const size_t bytes = (size_t)N * N * sizeof(float);
    if (!cuda_ok(cudaMemset(a, 0xff, bytes), "NaN into A") || !cuda_ok(cudaDeviceSynchronize(), "the NaN in place") ||
        !cuda_ok(cudaMemcpyAsync(a, a_host, bytes, cudaMemcpyHostToDevice, stream), "A's copy"))
        return;
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, a, N, b, N, 0.0f, c, N);
    if (cuda_ok(cudaMemcpy(c_host, c, bytes, cudaMemcpyDeviceToHost), "C back"))
        check_c(c_host, a_host, b_host, label);
}

int main(void)
{
    if (!tiledblas_gpu_available()) {
        printf("SKIP: no usable GPU\n");
        return 77;
    }
    const size_t bytes = (size_t)N * N * sizeof(float);
    float *a_host, *b_host, *c_host, *a, *b, *c;
    if (!cuda_ok(cudaHostAlloc((void **)&a_host, bytes, cudaHostAllocDefault), "pinned A") ||
        !cuda_ok(cudaMallocHost((void **)&b_host, bytes), "pinned B") ||
        !cuda_ok(cudaMallocHost((void **)&c_host, bytes), "pinned C") ||
        !cuda_ok(cudaMalloc((void **)&a, bytes), "device A") || !cuda_ok(cudaMalloc((void **)&b, bytes), "device B") ||
        !cuda_ok(cudaMalloc((void **)&c, bytes), "device C"))
        return tb_tally_report(&tally);
    tb_rng rng;
    tb_rng_seed(&rng, 3);
    for (size_t e = 0; e < (size_t)N * N; e++) {
        a_host[e] = tb_rng_uniform(&rng);
        b_host[e] = tb_rng_uniform(&rng);
    }
    cudaStream_t blocking, non_blocking;
    if (cuda_ok(cudaMemcpy(b, b_host, bytes, cudaMemcpyHostToDevice), "B up") &&
        cuda_ok(cudaStreamCreate(&blocking), "a blocking stream") &&
        cuda_ok(cudaStreamCreateWithFlags(&non_blocking, cudaStreamNonBlocking), "a non-blocking stream")) {
        race(cudaStreamLegacy, "A written on the legacy default stream", a_host, b_host, a, b, c, c_host);
        race(blocking, "A written on a blocking stream", a_host, b_host, a, b, c, c_host);
        race(non_blocking, "A written on a non-blocking stream", a_host, b_host, a, b, c, c_host);
        cudaStreamDestroy(blocking);
        cudaStreamDestroy(non_blocking);
    }
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    cudaFreeHost(a_host);
    cudaFreeHost(b_host);
    cudaFreeHost(c_host);
    return tb_tally_report(&tally);
}
