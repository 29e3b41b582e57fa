/*
 * tiledblas_set_device / tiledblas_get_device: the start-up value comes from
 * TILEDBLAS_DEVICE (ctest sets cpu), unknown values change nothing, and each
 * setting sends the next call where it says. tiledblas_set_math /
 * tiledblas_get_math likewise, from TILEDBLAS_MATH (ctest sets tensor): a call
 * on the GPU names its math in the trace, tensor where the GPU has the
 * tensor-core path, else FP32 with one warning; a call with K below 384, a
 * C narrower than m n / (m + n) = 192, or fewer than 2^29 products m n k, is
 * computed in FP32 under either math. The path taken is read from the
 * per-call trace (ctest sets TILEDBLAS_VERBOSE=2), caught by pointing stderr
 * at a file; every result is also checked against the reference. Last, one
 * thread flips the setting while others call, and every result must hold.
 */
#include "testutil.h"
#include "tiledblas.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CALLERS 4
#define CALLS_PER_CALLER 25

static tb_tally tally;

static void expect(int ok, const char *what)
{
    tb_tally_record(&tally, ok, what);
}

/* One checked call of an n x n x k case, setting the path first. */
static void call_with(tiledblas_device device, int n, int k, tb_rng *rng)
{
    tiledblas_set_device(device);
    tb_gemm_case gc = {.layout = TB_ROW_MAJOR, .trans_a = TB_NO_TRANS, .trans_b = TB_TRANS,
                       .m = n, .n = n, .k = k, .alpha = 0.5f, .beta = 0.0f};
    tb_case_set_ld(&gc, 0, 1, 2);
    tb_tally_random_case(&tally, &gc, "call", rng);
}

/* The trace lines of the calls, in order, caught from stderr while `calls` runs. */
static char *traced(void (*calls)(tb_rng *), tb_rng *rng)
{
    FILE *sink = tmpfile();
    if (!sink) {
        perror("tmpfile");
        exit(1);
    }
    fflush(stderr);
    const int saved = dup(2);
    if (saved < 0 || dup2(fileno(sink), 2) < 0) {
        perror("dup2");
        exit(1);
    }
    calls(rng);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    const long size = ftell(sink);
    char *text = calloc((size_t)size + 1, 1);
    rewind(sink);
    if (!text || fread(text, 1, (size_t)size, sink) != (size_t)size) {
        fprintf(stderr, "cannot read the caught stderr back\n");
        exit(1);
    }
    fclose(sink);
    fputs(text, stderr); /* shown in the test log as well */
    return text;
}

/* Under the tensor math, a call the tensor cores take (m = n = 1280, K = 384, the shallowest), one a
 * step shallower, one a step narrower than m n / (m + n) = 192 (m = n = 382), and one a step short of
 * 2^29 products (812^3); then the fp32 math. */
static void two_maths(tb_rng *rng)
{
    tiledblas_set_math(TILEDBLAS_MATH_TENSOR);
    call_with(TILEDBLAS_DEVICE_GPU, 1280, 384, rng);
    call_with(TILEDBLAS_DEVICE_GPU, 1280, 383, rng);
    call_with(TILEDBLAS_DEVICE_GPU, 382, 4096, rng);
    call_with(TILEDBLAS_DEVICE_GPU, 812, 812, rng);
    tiledblas_set_math(TILEDBLAS_MATH_FP32);
    call_with(TILEDBLAS_DEVICE_GPU, 1280, 384, rng);
}

static void three_paths(tb_rng *rng)
{
    call_with(TILEDBLAS_DEVICE_CPU, 64, 64, rng);
    call_with(TILEDBLAS_DEVICE_AUTO, 16, 16, rng);
    call_with(TILEDBLAS_DEVICE_GPU, 64, 64, rng);
}

/* The n-th (from 0) "tiledblas: sgemm" line of text contains `want`. */
static int call_line_has(const char *text, int n, const char *want)
{
    for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (strncmp(line, "tiledblas: sgemm ", 17) != 0)
            continue;
        if (n-- == 0) {
            const char *end = strchr(line, '\n');
            const size_t length = end ? (size_t)(end - line) : strlen(line);
            const char *hit = strstr(line, want);
            return hit && hit + strlen(want) <= line + length;
        }
    }
    return 0;
}

static size_t count_of(const char *text, const char *needle)
{
    size_t count = 0;
    for (const char *at = strstr(text, needle); at; at = strstr(at + 1, needle))
        count++;
    return count;
}

static atomic_int stop_flipping;

static void *flipper(void *arg)
{
    (void)arg;
    static const tiledblas_device order[] = {TILEDBLAS_DEVICE_GPU, TILEDBLAS_DEVICE_CPU, TILEDBLAS_DEVICE_AUTO};
    for (unsigned i = 0; !atomic_load(&stop_flipping); i++) {
        tiledblas_set_device(order[i % 3]);
        nanosleep(&(struct timespec){0, 200 * 1000}, NULL);
    }
    return NULL;
}

typedef struct caller {
    pthread_t thread;
    int index;
    tb_tally tally;
} caller;

static void *run_caller(void *arg)
{
    caller *self = arg;
    tb_rng rng;
    tb_rng_seed(&rng, 77u + (uint64_t)self->index);
    for (int i = 0; i < CALLS_PER_CALLER; i++) {
        tb_gemm_case gc = {.layout = tb_layouts[i % 2], .trans_a = tb_transposes[i % 3],
                           .trans_b = tb_transposes[(i + self->index) % 3], .m = 96 + i, .n = 160,
                           .k = 130 - i, .alpha = 1.0f, .beta = i % 2 ? 0.5f : 0.0f};
        tb_case_set_ld(&gc, i % 3, 1, 0);
        char what[64];
        snprintf(what, sizeof what, "caller %d call %d", self->index, i);
        tb_tally_random_case(&self->tally, &gc, what, &rng);
    }
    return NULL;
}

int main(void)
{
    tb_rng rng;
    tb_rng_seed(&rng, 5);

    expect(tiledblas_get_math() == TILEDBLAS_MATH_TENSOR, "TILEDBLAS_MATH=tensor is the start-up setting");
    expect(tiledblas_set_math(TILEDBLAS_MATH_FP32) == TILEDBLAS_MATH_TENSOR, "set math returns the previous setting");
    expect(tiledblas_get_math() == TILEDBLAS_MATH_FP32, "get math returns what was set");
    expect(tiledblas_set_math((tiledblas_math)2) == -1, "an unknown math is refused");
    expect(tiledblas_set_math((tiledblas_math)-1) == -1, "a negative math is refused");
    expect(tiledblas_get_math() == TILEDBLAS_MATH_FP32, "a refused math changes nothing");

    expect(tiledblas_get_device() == TILEDBLAS_DEVICE_CPU, "TILEDBLAS_DEVICE=cpu is the start-up setting");
    expect(tiledblas_set_device(TILEDBLAS_DEVICE_GPU) == TILEDBLAS_DEVICE_CPU, "set returns the previous setting");
    expect(tiledblas_get_device() == TILEDBLAS_DEVICE_GPU, "get returns what was set");
    expect(tiledblas_set_device((tiledblas_device)7) == -1, "an unknown value is refused");
    expect(tiledblas_set_device((tiledblas_device)-1) == -1, "a negative value is refused");
    expect(tiledblas_get_device() == TILEDBLAS_DEVICE_GPU, "a refused value changes nothing");

    const int gpu = tiledblas_gpu_available();
    char *text = traced(three_paths, &rng);
    expect(call_line_has(text, 0, "path=cpu reason=forced"), "cpu: the call runs on the CPU, forced");
    expect(call_line_has(text, 1, "path=cpu reason=small"), "auto: a 16^3 call stays on the CPU");
    expect(call_line_has(text, 2, gpu ? "path=gpu reason=forced" : "path=cpu reason=no-gpu"),
           gpu ? "gpu: the call runs on the GPU, forced" : "gpu without one: the CPU, and why");
    expect(count_of(text, "warning") == (gpu ? 0u : 1u),
           gpu ? "no warning with a GPU" : "one warning when the forced GPU is missing");
    expect(call_line_has(text, 0, "math=fp32"), "the CPU computes in FP32");
    free(text);

    text = traced(two_maths, &rng);
    const int tensor_path = call_line_has(text, 0, "path=gpu reason=forced math=tensor");
    expect(gpu ? tensor_path || (call_line_has(text, 0, "path=gpu reason=forced math=fp32") &&
                                 count_of(text, "TILEDBLAS_MATH=tensor") == 1)
               : call_line_has(text, 0, "path=cpu reason=no-gpu math=fp32"),
           "tensor math: the tensor cores where the GPU has them, else FP32 with one warning");
    expect(call_line_has(text, 1, gpu ? "path=gpu reason=forced math=fp32" : "path=cpu reason=no-gpu math=fp32"),
           "tensor math, K below 384: FP32");
    expect(call_line_has(text, 2, gpu ? "path=gpu reason=forced math=fp32" : "path=cpu reason=no-gpu math=fp32"),
           "tensor math, m n / (m + n) below 192: FP32");
    expect(call_line_has(text, 3, gpu ? "path=gpu reason=forced math=fp32" : "path=cpu reason=no-gpu math=fp32"),
           "tensor math, fewer than 2^29 products: FP32");
    expect(call_line_has(text, 4, gpu ? "path=gpu reason=forced math=fp32" : "path=cpu reason=no-gpu math=fp32"),
           "fp32 math: FP32");
    printf("tensor math on this machine: %s\n", tensor_path ? "the tensor cores" : "not offered");
    free(text);

    caller callers[CALLERS];
    pthread_t flipping;
    atomic_store(&stop_flipping, 0);
    if (pthread_create(&flipping, NULL, flipper, NULL) != 0) {
        fprintf(stderr, "cannot start the flipping thread\n");
        return 1;
    }
    for (int i = 0; i < CALLERS; i++) {
        callers[i] = (caller){.index = i};
        if (pthread_create(&callers[i].thread, NULL, run_caller, &callers[i]) != 0) {
            fprintf(stderr, "cannot start caller %d\n", i);
            return 1;
        }
    }
    for (int i = 0; i < CALLERS; i++) {
        pthread_join(callers[i].thread, NULL);
        tally.passed += callers[i].tally.passed;
        tally.failed += callers[i].tally.failed;
    }
    atomic_store(&stop_flipping, 1);
    pthread_join(flipping, NULL);
    return tb_tally_report(&tally);
}
