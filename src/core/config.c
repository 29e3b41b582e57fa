/* Run-time configuration: the TILEDBLAS_* environment variables, read once. */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/config.h"
#include "core/report.h"

/*
 * Below this (about 70^3) the CPU BLAS always wins: on the H100 machine a GPU
 * call took 21 us at 16^3 and 27-29 at 64^3, while OpenBLAS ran 64^3 (the
 * largest it runs on one thread) in 19 us, which one core of 27 GFLOP/s
 * matches up to about 72^3. Auto mode measured calls of that size no better
 * than the model: the CPU BLAS's times there ranged 19-42 us with the state
 * other calls left, and turned 64^3 to the GPU (0.70 of OpenBLAS alone).
 * `tiledblas-bench --policy --sizes 16,32,64,96,128` measures both paths there.
 */
#define TB_DEFAULT_GPU_MIN_FLOPS 7.0e5
/* Below this one copy-compute-copy round beats the pipeline's set-up (1024^3 did; `tiledblas-bench --e2e`
 * with TILEDBLAS_PIPELINE_MIN_FLOPS set either side of a size compares the two). */
#define TB_DEFAULT_PIPELINE_MIN_FLOPS 4e9
/* Pinned staging of the host-operand paths: 3 slots of B and C panels take ~200 MB at 8192^3. */
#define TB_DEFAULT_PINNED_MB 512

static tb_config config;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;
static atomic_int config_read;

/* The most a count may be: beyond these no value means anything more (copy threads stop at 16). */
#define MOST_MB (1 << 22)
#define MOST_THREADS 4096
#define MOST_VERBOSE 1000

const char *tb_env(const char *name)
{
    return secure_getenv(name);
}

/*
 * A number from the environment: finite, at least 0, at most `most`, and
 * whole where a count is meant; anything else is ignored with one warning
 * that names the variable and the default used instead.
 */
static double env_number(const char *name, double fallback, double most, int whole)
{
    const char *text = tb_env(name);
    if (!text || !*text)
        return fallback;
    char *end;
    const double value = strtod(text, &end);
    if (end != text && *end == '\0' && isfinite(value) && value >= 0 && value <= most &&
        (!whole || value == floor(value)))
        return value;
    if (whole)
        tb_warn("ignoring %s=%s (expected a whole number from 0 to %.0f); using %g", name, text, most, fallback);
    else
        tb_warn("ignoring %s=%s (expected a finite number, at least 0); using %g", name, text, fallback);
    return fallback;
}

static int env_count(const char *name, int fallback, int most)
{
    return (int)env_number(name, fallback, most, 1);
}

static void read_environment(void)
{
    const char *device = tb_env("TILEDBLAS_DEVICE");
    if (device && *device) {
        if (strcasecmp(device, "gpu") == 0)
            atomic_store(&config.device, TILEDBLAS_DEVICE_GPU);
        else if (strcasecmp(device, "cpu") == 0)
            atomic_store(&config.device, TILEDBLAS_DEVICE_CPU);
        else if (strcasecmp(device, "auto") != 0)
            tb_warn("ignoring TILEDBLAS_DEVICE=%s (expected auto, gpu or cpu)", device);
    }

    const char *math = tb_env("TILEDBLAS_MATH");
    if (math && *math) {
        if (strcasecmp(math, "tensor") == 0)
            atomic_store(&config.math, TILEDBLAS_MATH_TENSOR);
        else if (strcasecmp(math, "fp32") != 0)
            tb_warn("ignoring TILEDBLAS_MATH=%s (expected fp32 or tensor)", math);
    }

    config.verbose = env_count("TILEDBLAS_VERBOSE", 0, MOST_VERBOSE);

    const char *kernel = tb_env("TILEDBLAS_KERNEL");
    snprintf(config.kernel, sizeof config.kernel, "%s", kernel ? kernel : "");

    config.gpu_min_flops = env_number("TILEDBLAS_GPU_MIN_FLOPS", TB_DEFAULT_GPU_MIN_FLOPS, DBL_MAX, 0);
    config.pipeline_min_flops =
        env_number("TILEDBLAS_PIPELINE_MIN_FLOPS", TB_DEFAULT_PIPELINE_MIN_FLOPS, DBL_MAX, 0);
    config.pinned_mb = env_count("TILEDBLAS_PINNED_MB", TB_DEFAULT_PINNED_MB, MOST_MB);
    config.device_mb = env_count("TILEDBLAS_DEVICE_MB", 0, MOST_MB);
    config.copy_threads = env_count("TILEDBLAS_COPY_THREADS", 0, MOST_THREADS);
    atomic_store_explicit(&config_read, 1, memory_order_release);
}

const tb_config *tb_config_get(void)
{
    if (!atomic_load_explicit(&config_read, memory_order_acquire)) /* every SGEMM asks: skip the call */
        pthread_once(&config_once, read_environment);
    return &config;
}

tiledblas_device tb_config_set_device(tiledblas_device device)
{
    pthread_once(&config_once, read_environment); /* the environment must not overwrite it later */
    return (tiledblas_device)atomic_exchange(&config.device, (int)device);
}

tiledblas_math tb_config_set_math(tiledblas_math math)
{
    pthread_once(&config_once, read_environment);
    return (tiledblas_math)atomic_exchange(&config.math, (int)math);
}
