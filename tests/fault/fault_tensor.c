/*
 * The tensor math's kernel, launch by launch (fault_call.h), on a simulated
 * GPU that offers the tensor-core rung. Staged whole, a call just inside each
 * of the rung's three bounds runs it in its one launch and the trace says
 * math=tensor: 1280 x 1280 x 384 (K), 384 x 384 x 4096 (m n / (m + n) =
 * 192) and 813^3 (m n k of at least 2^29); a step past each bound (K = 383,
 * 382 x 382 x 4096, 812^3) it runs the FP32 kernels, math=fp32. Pipelined,
 * 1280 x 1280 x 384's launches are panels of C too narrow for the rung, and
 * pieces of K too shallow, so every one runs the FP32 kernels, math=fp32. C
 * is checked in each.
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
    static const struct {
        config cfg;
        int tensor; /* 1: every launch runs the rung */
    } cases[] = {{{STAGED, HOST, HOST, HOST, COL, N, N, 1280, 1280, 384, 0.5f, 0, 1}, 1},
                 {{STAGED, HOST, HOST, HOST, COL, N, N, 1280, 1280, 383, 0.5f, 0, 1}, 0},
                 {{STAGED, HOST, HOST, HOST, COL, N, N, 384, 384, 4096, 0.5f, 0, 1}, 1},
                 {{STAGED, HOST, HOST, HOST, COL, N, N, 382, 382, 4096, 0.5f, 0, 1}, 0},
                 {{STAGED, HOST, HOST, HOST, COL, N, N, 813, 813, 813, 0.5f, 0, 1}, 1},
                 {{STAGED, HOST, HOST, HOST, COL, N, N, 812, 812, 812, 0.5f, 0, 1}, 0},
                 {{PIPELINED, HOST, HOST, HOST, COL, N, N, 1280, 1280, 384, 0.5f, 0, 1}, 0}};
    int failures = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fflush(stdout);
        const pid_t pid = fork();
        if (pid == 0) {
            alarm(120);
            one_call(&cases[i].cfg, cases[i].tensor);
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
