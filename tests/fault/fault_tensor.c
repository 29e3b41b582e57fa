/*
 * The tensor math's kernel, launch by launch (fault_call.h), on a simulated
 * GPU that offers the tensor-core rung. A 1280 x 1280 x 768 call is just
 * large enough for the rung: staged whole, its one launch runs it and the
 * trace says math=tensor; a step shallower (K = 767) or narrower (1278 x
 * 1278) it runs the FP32 kernels, math=fp32; pipelined, its launches are
 * panels of C too narrow for the rung, and pieces of K too shallow, so every
 * one runs the FP32 kernels, math=fp32. C is checked in each.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child_end.h"
#include "fake_cuda.h"
#include "fault_call.h"
#include "kernels.h"

/* The trace line's math=... of the call logged to `log`, or "none". */
static const char *traced_math(FILE *log)
{
    static char math[16];
    char line[1024];
    snprintf(math, sizeof math, "none");
    rewind(log);
    while (fgets(line, sizeof line, log)) {
        const char *at = strncmp(line, "tiledblas: sgemm ", 17) == 0 ? strstr(line, "math=") : NULL;
        if (at)
            sscanf(at + 5, "%15[a-z0-9]", math);
    }
    return math;
}

/* In a child: the call on `cfg`'s path; exits 0 when its launches and trace are as `tensor` says. */
static void one_call(const config *cfg, int tensor)
{
    FILE *log = tmpfile();
    if (!log || dup2(fileno(log), STDERR_FILENO) < 0)
        _exit(2);
    setenv("TILEDBLAS_MATH", "tensor", 1);
    set_environment(cfg->path);
    setenv("TILEDBLAS_VERBOSE", "2", 1);
    fake_set_tensor_rung(1);
    fake_reset(free_bytes_for(cfg->path));
    gemm g;
    gemm_make(&g, cfg, 91u);
    gemm_run(&g, g.c.data);
    const long rung = fake_kernel_launches(TB_KERNEL_TF32X3), all = fake_launches(0);
    const char *math = traced_math(log);
    const int verdict = gemm_verdict(&g);
    const int ok = verdict == 1 && all > 0 && (tensor ? rung == all && strcmp(math, "tensor") == 0
                                                       : rung == 0 && strcmp(math, "fp32") == 0);
    if (!ok)
        printf("FAIL tensor-launches (%s %dx%dx%d): %ld of %ld launches ran the rung, trace math=%s, C %s\n",
               cfg->path == PIPELINED ? "pipelined" : "staged", cfg->m, cfg->n, cfg->k, rung, all, math,
               verdict == 1 ? "right" : "wrong");
    fflush(stdout);
    _exit(ok ? 0 : 1);
}

int fault_tensor_launches(void)
{
    static const config cases[] = {{STAGED, HOST, HOST, HOST, COL, N, N, 1280, 1280, 768, 0.5f, 0, 1},
                                   {STAGED, HOST, HOST, HOST, COL, N, N, 1280, 1280, 767, 0.5f, 0, 1},
                                   {STAGED, HOST, HOST, HOST, COL, N, N, 1278, 1278, 1024, 0.5f, 0, 1},
                                   {PIPELINED, HOST, HOST, HOST, COL, N, N, 1280, 1280, 768, 0.5f, 0, 1}};
    int failures = 0;
    for (int i = 0; i < 4; i++) {
        fflush(stdout);
        const pid_t pid = fork();
        if (pid == 0) {
            alarm(120);
            one_call(&cases[i], i == 0);
        }
        int status;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            char how[96];
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 1)
                printf("FAIL tensor-launches: the child %s\n", tb_child_end(status, how, sizeof how));
            failures++;
        }
    }
    return failures;
}
