/*
 * fork() after the GPU path has run: the child cannot use its parent's CUDA
 * context, so its calls must run on the CPU, correctly and without hanging on
 * a lock some parent thread held; the parent goes on using the GPU. Large
 * enough calls that, with TILEDBLAS_DEVICE=gpu, the parent also goes through
 * the pipelined path and its copy threads.
 * With TILEDBLAS_DEVICE=gpu and no usable GPU it exits 77 (skipped).
 */
#include "refblas.h"
#include "testutil.h"
#include "tiledblas.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* A hung child is a failure, not a stuck test run. */
#define CHILD_SECONDS 120

static size_t one_case(tb_rng *rng, const char *who)
{
    tb_gemm_case gc = {
        .layout = tb_layouts[tb_rng_below(rng, 2)],
        .trans_a = tb_transposes[tb_rng_below(rng, 3)],
        .trans_b = tb_transposes[tb_rng_below(rng, 3)],
        .m = 700, .n = 600, .k = 500, .alpha = 0.7f, .beta = 1.3f,
    };
    tb_case_set_ld(&gc, 1, 2, 3);
    char label[300];
    tb_case_label(&gc, who, label, sizeof label);
    tb_gemm_operands ops;
    tb_operands_make(&ops, &gc, rng);
    const size_t problems = tb_run_case(&gc, &ops, label);
    tb_operands_free(&ops);
    return problems;
}

int main(void)
{
    tb_skip_if_forced_gpu_missing();
    tb_tally tally = {0, 0};
    tb_rng rng;
    tb_rng_seed(&rng, 77);

    tb_tally_record(&tally, one_case(&rng, "parent before fork") == 0, "parent before fork");
    const pid_t child = tb_fork_child(CHILD_SECONDS);
    if (child == 0) {
        size_t problems = 0;
        for (int i = 0; i < 3; i++)
            problems += one_case(&rng, "child");
        _exit(problems == 0 ? 0 : 1);
    }
    tb_tally_record(&tally, one_case(&rng, "parent after fork") == 0, "parent after fork");

    int status = 0;
    const int child_ok = waitpid(child, &status, 0) == child && WIFEXITED(status) &&
                         WEXITSTATUS(status) == 0;
    if (!child_ok)
        fprintf(stderr, "FAIL: child %s\n",
                WIFSIGNALED(status) ? "killed (hung or crashed)" : "computed wrong results");
    tb_tally_record(&tally, child_ok, "child after fork");
    return tb_tally_report(&tally);
}
