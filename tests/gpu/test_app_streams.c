/*
 * A call on device pointers is ordered as a CUDA call without a stream
 * (cudaMemcpy): after the work queued before it on the legacy default stream
 * and so on every blocking stream, not after the application's non-blocking
 * streams.
 *
 * Operands still being written: A of N x N floats is first set to NaN, then
 * the real A goes up with cudaMemcpyAsync from pinned memory (about a
 * millisecond at N = 4096), and cblas_sgemm is called at once, on the copy's
 * heels. Streams: the legacy default stream, a stream made with default
 * flags (blocking) and the calling thread's default stream. C is checked at
 * sampled elements against FP64 dot products of the host data, within the
 * FP32 bound; an A read before its copy landed gives NaN or the wrong values.
 *
 * Work that is not the call's to wait for: a non-blocking stream held by a
 * host function until the call has returned (or for HOLD_SECONDS at most);
 * the call must return well before. Exits 77 without a usable GPU.
 */
#include "testutil.h"
#include "tiledblas.h"

#include <cuda_runtime_api.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N 4096
#define SAMPLES 64
#define HOLD_SECONDS 10

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

/* A host function on a stream: the stream waits until the semaphore is posted, or HOLD_SECONDS. */
static void CUDART_CB hold(void *released)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += HOLD_SECONDS;
    while (sem_timedwait(released, &until) != 0 && errno == EINTR)
        ;
}

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* A call while a non-blocking stream is held: it must not wait for that stream. */
static void beside_held_stream(cudaStream_t non_blocking, const float *a, const float *b, float *c)
{
    sem_t released;
    sem_init(&released, 0, 0);
    if (!cuda_ok(cudaLaunchHostFunc(non_blocking, hold, &released), "the held stream"))
        return;
    const double start = seconds_now();
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, a, N, b, N, 0.0f, c, N);
    const double took = seconds_now() - start;
    sem_post(&released);
    cuda_ok(cudaStreamSynchronize(non_blocking), "the held stream released");
    sem_destroy(&released);
    const int waited = took > HOLD_SECONDS / 2.0;
    if (waited)
        fprintf(stderr, "the call took %.1f s: it waited for the held non-blocking stream\n", took);
    tb_tally_record(&tally, !waited, "a call beside a held non-blocking stream");
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
        race(cudaStreamPerThread, "A written on the thread's default stream", a_host, b_host, a, b, c, c_host);
        beside_held_stream(non_blocking, a, b, c);
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
