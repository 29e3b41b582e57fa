/*
 * The TILEDBLAS_* variables as the configuration reads them: each case sets
 * one variable in a child process (the configuration is read once per
 * process), reads the configuration there and checks the value it took and
 * the warnings printed. A value that is not a finite number in range, or not
 * whole where a count is meant, is ignored with one warning naming the
 * variable and the default, and the default is used (a cast of 1e30, inf or
 * nan to int would be undefined, and a NaN floor would send every tiny call
 * past the small-call rule).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/config.h"

typedef enum { VERBOSE, GPU_MIN_FLOPS, PIPELINE_MIN_FLOPS, PINNED_MB, DEVICE_MB, COPY_THREADS, DEVICE } field;

static const struct {
    const char *variable, *value;
    field field;
    double expected;
    int warns; /* the warning names the variable and its value */
} cases[] = {
    {"TILEDBLAS_PINNED_MB", "1e30", PINNED_MB, 512, 1},
    {"TILEDBLAS_PINNED_MB", "-1", PINNED_MB, 512, 1},
    {"TILEDBLAS_PINNED_MB", "0", PINNED_MB, 0, 0},
    {"TILEDBLAS_PINNED_MB", "64", PINNED_MB, 64, 0},
    {"TILEDBLAS_PINNED_MB", "64MB", PINNED_MB, 512, 1},
    {"TILEDBLAS_DEVICE_MB", "inf", DEVICE_MB, 0, 1},
    {"TILEDBLAS_DEVICE_MB", "2048", DEVICE_MB, 2048, 0},
    {"TILEDBLAS_COPY_THREADS", "nan", COPY_THREADS, 0, 1},
    {"TILEDBLAS_COPY_THREADS", "2.5", COPY_THREADS, 0, 1},
    {"TILEDBLAS_COPY_THREADS", "99999", COPY_THREADS, 0, 1},
    {"TILEDBLAS_COPY_THREADS", "8", COPY_THREADS, 8, 0},
    {"TILEDBLAS_GPU_MIN_FLOPS", "nan", GPU_MIN_FLOPS, 7e5, 1},
    {"TILEDBLAS_GPU_MIN_FLOPS", "inf", GPU_MIN_FLOPS, 7e5, 1},
    {"TILEDBLAS_GPU_MIN_FLOPS", "1e6", GPU_MIN_FLOPS, 1e6, 0},
    {"TILEDBLAS_GPU_MIN_FLOPS", "0", GPU_MIN_FLOPS, 0, 0},
    {"TILEDBLAS_PIPELINE_MIN_FLOPS", "-4e9", PIPELINE_MIN_FLOPS, 4e9, 1},
    {"TILEDBLAS_PIPELINE_MIN_FLOPS", "2.5e9", PIPELINE_MIN_FLOPS, 2.5e9, 0},
    {"TILEDBLAS_VERBOSE", "yes", VERBOSE, 0, 1},
    {"TILEDBLAS_VERBOSE", "2", VERBOSE, 2, 0},
    {"TILEDBLAS_DEVICE", "bogus", DEVICE, TILEDBLAS_DEVICE_AUTO, 1},
    {"TILEDBLAS_DEVICE", "GPU", DEVICE, TILEDBLAS_DEVICE_GPU, 0},
};

static double value_of(const tb_config *config, field f)
{
    switch (f) {
    case VERBOSE:
        return config->verbose;
    case GPU_MIN_FLOPS:
        return config->gpu_min_flops;
    case PIPELINE_MIN_FLOPS:
        return config->pipeline_min_flops;
    case PINNED_MB:
        return config->pinned_mb;
    case DEVICE_MB:
        return config->device_mb;
    case COPY_THREADS:
        return config->copy_threads;
    case DEVICE:
        return atomic_load(&config->device);
    }
    return NAN;
}

/* In the child: 0 when the case holds, 1 (with what was wrong on stdout) otherwise. */
static int check_case(size_t c, FILE *err)
{
    setenv(cases[c].variable, cases[c].value, 1);
    const double got = value_of(tb_config_get(), cases[c].field);
    fflush(stderr);
    char text[1024] = "";
    rewind(err);
    const size_t length = fread(text, 1, sizeof text - 1, err);
    text[length] = '\0';
    char named[256];
    snprintf(named, sizeof named, "%s=%s", cases[c].variable, cases[c].value);
    int lines = 0;
    for (const char *p = text; *p; p++)
        lines += *p == '\n';
    const int warned = strstr(text, "tiledblas: warning: ignoring ") == text && strstr(text, named) != NULL;
    int ok = got == cases[c].expected;
    ok &= cases[c].warns ? warned && lines == 1 : length == 0;
    if (!ok)
        printf("FAIL: %s: took %g, expected %g; stderr: \"%s\"\n", named, got, cases[c].expected, text);
    return !ok;
}

int main(void)
{
    int failures = 0;
    const size_t count = sizeof cases / sizeof cases[0];
    for (size_t c = 0; c < count; c++) {
        FILE *err = tmpfile();
        if (!err) {
            perror("tmpfile");
            return 1;
        }
        fflush(NULL);
        const pid_t child = fork();
        if (child < 0) {
            perror("fork");
            return 1;
        }
        if (child == 0) {
            dup2(fileno(err), STDERR_FILENO);
            const int failed = check_case(c, err);
            fflush(stdout);
            _exit(failed);
        }
        int status = 0;
        failures += waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
        fclose(err);
    }
    printf("%zu cases, %d failed\n", count, failures);
    return failures != 0;
}
