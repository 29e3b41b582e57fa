/*
 * Auto mode's choice between the CPU BLAS and the GPU for calls on host
 * memory: a cost model of both paths whose constants are measured on this
 * machine, once, at the first call large enough to go either way (a few
 * milliseconds; the exit summary of TILEDBLAS_VERBOSE=1 shows them):
 *   CPU: the CPU BLAS with all its threads timed at 64^3, 128^3 and 256^3,
 *        linear in flops between them and beyond 256^3 (its threading changes
 *        with size, so one line through all three would miss the smallest);
 *   GPU: a fixed cost per call, the bytes copied in and out at their own
 *        rates, and the flops at the kernel's rate, each measured through the
 *        real GPU path (copies and kernel are summed, not overlapped: the
 *        model leans to the CPU).
 * The path predicted faster is taken; where the two are close, the
 * predictions are corrected by what such calls measured (crossover.h).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/report.h"
#include "cpu/cpu_blas.h"
#include "dispatch/cost_model.h"
#include "dispatch/crossover.h"
#include "gpu/gpu.h"

/* Tries at measuring (a GPU briefly out of memory may fail one); after the last, the CPU. */
#define CALIBRATION_TRIES 3

/* The cubes the CPU BLAS is timed at; the smallest is about TB_DEFAULT_GPU_MIN_FLOPS. */
static const int CPU_SIDES[3] = {64, 128, 256};
enum { CPU_POINTS = sizeof CPU_SIDES / sizeof CPU_SIDES[0] };

static struct {
    pthread_mutex_t lock;
    int tries;
    atomic_int valid;
    double gpu_call_seconds;
    double in_bytes_per_second, out_bytes_per_second;
    double gpu_flops_per_second;
    double cpu_flops[CPU_POINTS], cpu_seconds[CPU_POINTS]; /* the CPU BLAS at CPU_SIDES */
    double cpu_slope;                     /* seconds per flop beyond the last */
} costs = {.lock = PTHREAD_MUTEX_INITIALIZER};

static double bytes_in(const tb_call *call)
{
    const double m = call->m, n = call->n, k = call->k;
    return 4.0 * (m * k + k * n + (call->beta != 0.0f ? m * n : 0.0));
}

static double bytes_out(const tb_call *call)
{
    return 4.0 * call->m * call->n;
}

static double flops_of(const tb_call *call)
{
    return 2.0 * call->m * call->n * call->k;
}

static double predict_gpu(const tb_call *call)
{
    return costs.gpu_call_seconds + bytes_in(call) / costs.in_bytes_per_second +
           bytes_out(call) / costs.out_bytes_per_second + flops_of(call) / costs.gpu_flops_per_second;
}

/* The CPU BLAS's time: linear between the measured cubes, the first segment below them, cpu_slope above. */
static double predict_cpu(const tb_call *call)
{
    const double f = flops_of(call);
    const int last = CPU_POINTS - 1;
    if (f > costs.cpu_flops[last])
        return costs.cpu_seconds[last] + (f - costs.cpu_flops[last]) * costs.cpu_slope;
    int i = 1;
    while (i < last && f > costs.cpu_flops[i])
        i++;
    const double slope =
        (costs.cpu_seconds[i] - costs.cpu_seconds[i - 1]) / (costs.cpu_flops[i] - costs.cpu_flops[i - 1]);
    const double t = costs.cpu_seconds[i - 1] + (f - costs.cpu_flops[i - 1]) * slope;
    return t > 0.0 ? t : 0.0;
}

/* A synthetic m x n x k call on `buffer` (large enough; values are irrelevant to timing). */
static tb_call synthetic(float *buffer, int m, int n, int k)
{
    return (tb_call){.m = m, .n = n, .k = k, .alpha = 1.0f, .beta = 0.0f,
                     .a = buffer, .lda = m, .b = buffer + (size_t)m * k, .ldb = k,
                     .c = buffer + (size_t)m * k + (size_t)k * n, .ldc = m};
}

/* One run of the call on a path; 0 when it failed. */
typedef int (*path_fn)(const tb_call *call);

static int on_gpu(const tb_call *call)
{
    tb_gpu_progress progress;
    return tb_gpu_sgemm(call, 0, 0, &progress) == TB_GPU_OK;
}

static int on_cpu(const tb_call *call)
{
    tb_cpu_sgemm(call);
    return 1;
}

/* Fastest of `reps` runs after a warm-up (which may start threads or grow buffers); negative on failure. */
static double fastest(path_fn run, const tb_call *call, int reps)
{
    double best = -1.0;
    for (int r = 0; r <= reps; r++) {
        const double start = tb_seconds_now();
        if (!run(call))
            return -1.0;
        const double t = tb_seconds_now() - start;
        if (r > 0 && (best < 0 || t < best))
            best = t;
    }
    return best;
}

/* The bytes moved in `seconds` once the other costs are taken off; noise cannot make it absurd. */
static double rate_of(double bytes, double seconds, double other_seconds)
{
    const double moving = seconds - other_seconds;
    return moving > bytes / 100e9 ? bytes / moving : 100e9;
}

static void calibrate(void)
{
    enum { SIDE = 2048, THIN = 16 };
    /* The largest synthetic call: 2048 x 2048 C with K = 16, or A 2048 x 2048 with N = 16. */
    const size_t floats = (size_t)SIDE * SIDE + 2 * (size_t)SIDE * THIN;
    float *buffer = malloc(floats * sizeof(float));
    if (!buffer)
        return;
    for (size_t i = 0; i < floats; i++)
        buffer[i] = 0.5f;

    const tb_call tiny = synthetic(buffer, THIN, THIN, THIN);
    const tb_call inward = synthetic(buffer, SIDE, THIN, SIDE), outward = synthetic(buffer, SIDE, SIDE, THIN);
    /* The GPU first: the CPU BLAS's threads may spin for a while after its calls, taking
     * CPUs from the GPU path's host copies. */
    double kernel_seconds = 0.0;
    const double tiny_s = fastest(on_gpu, &tiny, 5), inward_s = fastest(on_gpu, &inward, 5),
                 outward_s = fastest(on_gpu, &outward, 5);
    double cpu_seconds[CPU_POINTS];
    for (int i = 0; i < CPU_POINTS; i++) {
        const tb_call cube = synthetic(buffer, CPU_SIDES[i], CPU_SIDES[i], CPU_SIDES[i]);
        cpu_seconds[i] = fastest(on_cpu, &cube, 5);
    }
    const int gpu_ok = tiny_s > 0 && inward_s > 0 && outward_s > 0 &&
                       tb_gpu_time_kernel(1024, &kernel_seconds) == TB_GPU_OK &&
                       kernel_seconds > 0.0;
    free(buffer);
    if (!gpu_ok)
        return;
    costs.gpu_call_seconds = tiny_s;
    costs.gpu_flops_per_second = 2.0 * 1024 * 1024 * 1024 / kernel_seconds;
    /* Each synthetic call moves mostly one way; the other way's bytes are costed at the first rate. */
    costs.in_bytes_per_second =
        rate_of(bytes_in(&inward), inward_s, tiny_s + flops_of(&inward) / costs.gpu_flops_per_second);
    costs.out_bytes_per_second =
        rate_of(bytes_out(&outward), outward_s,
                tiny_s + flops_of(&outward) / costs.gpu_flops_per_second +
                    bytes_in(&outward) / costs.in_bytes_per_second);
    /* CPU: noise must not make a larger cube look faster than a smaller one. */
    for (int i = 0; i < CPU_POINTS; i++) {
        costs.cpu_flops[i] = 2.0 * CPU_SIDES[i] * CPU_SIDES[i] * CPU_SIDES[i];
        costs.cpu_seconds[i] = i > 0 && cpu_seconds[i] < costs.cpu_seconds[i - 1] ? costs.cpu_seconds[i - 1]
                                                                                 : cpu_seconds[i];
    }
    /* Beyond the last cube, the last segment's slope; where times are too close to separate
     * (thread start-up dominating both), the plain average rate instead. */
    const int last = CPU_POINTS - 1;
    costs.cpu_slope = costs.cpu_seconds[last] > 1.5 * costs.cpu_seconds[last - 1]
                          ? (costs.cpu_seconds[last] - costs.cpu_seconds[last - 1]) /
                                (costs.cpu_flops[last] - costs.cpu_flops[last - 1])
                          : costs.cpu_seconds[last] / costs.cpu_flops[last];
    if (costs.cpu_slope > 0.0)
        atomic_store(&costs.valid, 1);
}

int tb_cost_model_describe(char *text, size_t size)
{
    if (!atomic_load(&costs.valid))
        return 0;
    snprintf(text, size,
             "GPU %.0f us per call + in %.1f GB/s + out %.1f GB/s + %.1f TFLOP/s; "
             "CPU %d^3 %.0f us, %d^3 %.0f us, %d^3 %.0f us, then %.0f GFLOP/s",
             1e6 * costs.gpu_call_seconds, 1e-9 * costs.in_bytes_per_second, 1e-9 * costs.out_bytes_per_second,
             1e-12 * costs.gpu_flops_per_second, CPU_SIDES[0], 1e6 * costs.cpu_seconds[0], CPU_SIDES[1],
             1e6 * costs.cpu_seconds[1], CPU_SIDES[2], 1e6 * costs.cpu_seconds[2], 1e-9 / costs.cpu_slope);
    return 1;
}

/* Calibrates once (a few tries); 1 when the model's constants are valid. */
static int calibrated(void)
{
    if (atomic_load(&costs.valid))
        return 1;
    pthread_mutex_lock(&costs.lock);
    /* Not at exit, when other threads' GPU work is refused: a calibration refused, or cut short by the
     * exit, is not a failed try. */
    if (!atomic_load(&costs.valid) && costs.tries < CALIBRATION_TRIES && tb_fault_enter()) {
        costs.tries++;
        calibrate();
        tb_fault_leave();
        if (!atomic_load(&costs.valid) && tb_fault_closed())
            costs.tries--;
        else if (!atomic_load(&costs.valid) && costs.tries == CALIBRATION_TRIES)
            tb_warn("could not measure the GPU path %d times; auto mode uses the CPU BLAS", CALIBRATION_TRIES);
    }
    pthread_mutex_unlock(&costs.lock);
    return atomic_load(&costs.valid);
}

/* What calls near the crossover measured, per class (crossover.h). */
static struct {
    pthread_mutex_t lock;
    tb_crossover_class classes[TB_CROSSOVER_CLASSES];
} crossover = {.lock = PTHREAD_MUTEX_INITIALIZER};

tb_auto_choice tb_auto_choose(const tb_call *call)
{
    tb_auto_choice choice = {.use_gpu = 0, .measure_class = -1};
    if (!tb_gpu_usable()) {
        choice.reason = "no-gpu";
        return choice;
    }
    if (!calibrated()) {
        choice.reason = "uncalibrated";
        return choice;
    }
    const double predicted[TB_PATHS] = {[TB_PATH_CPU] = predict_cpu(call), [TB_PATH_GPU] = predict_gpu(call)};
    if (!tb_crossover_in_band(predicted)) {
        choice.use_gpu = predicted[TB_PATH_GPU] < predicted[TB_PATH_CPU];
        choice.reason = choice.use_gpu ? "gpu-faster" : "cpu-faster";
        return choice;
    }
    const int cls = tb_crossover_class_of(flops_of(call), bytes_in(call) + bytes_out(call));
    int trial;
    pthread_mutex_lock(&crossover.lock);
    const int path = tb_crossover_choose(&crossover.classes[cls], predicted, &trial);
    pthread_mutex_unlock(&crossover.lock);
    static const char *const reasons[2][TB_PATHS] = {{"cpu-measured", "gpu-measured"}, {"cpu-trial", "gpu-trial"}};
    choice.use_gpu = path == TB_PATH_GPU;
    choice.reason = reasons[trial][path];
    choice.measure_class = cls;
    choice.trial = trial;
    _Static_assert(sizeof choice.predicted_seconds == sizeof predicted, "one prediction per path");
    memcpy(choice.predicted_seconds, predicted, sizeof predicted);
    return choice;
}

void tb_auto_describe_classes(void (*line)(const char *text))
{
    char text[160];
    /* At exit; in a child forked while another thread held the lock, it stays held. */
    if (pthread_mutex_trylock(&crossover.lock) != 0)
        return;
    for (int i = 0; i < TB_CROSSOVER_CLASSES; i++)
        if (tb_crossover_describe(&crossover.classes[i], i, text, sizeof text))
            line(text);
    pthread_mutex_unlock(&crossover.lock);
}

void tb_auto_measured(const tb_auto_choice *choice, double started, int gpu_failed)
{
    const int path = choice->use_gpu ? TB_PATH_GPU : TB_PATH_CPU;
    const double seconds = tb_seconds_now() - started;
    pthread_mutex_lock(&crossover.lock);
    tb_crossover_measured(&crossover.classes[choice->measure_class], path, choice->trial, gpu_failed,
                          choice->predicted_seconds, started, seconds);
    pthread_mutex_unlock(&crossover.lock);
}
