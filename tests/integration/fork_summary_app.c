/*
 * One SGEMM, then two forked children: one exits without calling, the other
 * makes two calls and exits; then the parent exits. With TILEDBLAS_VERBOSE=1
 * each process that made calls prints its own summary, once: the parent's
 * with its one call, the calling child's with its two, the silent child none
 * (expect_quiet_process.sh).
 *
 * Usage: fork_summary_app   (exits 1 when a product is wrong or a child failed)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "testutil.h"

/* `calls` checked 32^3 SGEMMs; the number of wrong ones. */
static int sgemms(int calls, uint64_t seed)
{
    tb_gemm_case gc = {.layout = TB_COL_MAJOR, .trans_a = TB_NO_TRANS, .trans_b = TB_NO_TRANS,
                       .m = 32, .n = 32, .k = 32, .alpha = 1.0f, .beta = 0.0f};
    tb_case_set_ld(&gc, 0, 0, 0);
    tb_rng rng;
    tb_rng_seed(&rng, seed);
    int wrong = 0;
    for (int i = 0; i < calls; i++) {
        tb_gemm_operands ops;
        tb_operands_make(&ops, &gc, &rng);
        wrong += tb_run_case(&gc, &ops, "sgemm") != 0;
        tb_operands_free(&ops);
    }
    return wrong;
}

static int child_ok(pid_t child)
{
    int status = 0;
    return waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int main(void)
{
    const int wrong = sgemms(1, 3);
    /* exit() runs the library's exit destructor, as any child that returns does. */
    const pid_t silent = tb_fork_child(60);
    if (silent == 0)
        exit(0);
    const int silent_ok = child_ok(silent);
    const pid_t calling = tb_fork_child(60);
    if (calling == 0)
        exit(sgemms(2, 4) != 0);
    const int calling_ok = child_ok(calling);
    printf("fork_summary_app: %s\n",
           wrong ? "wrong product" : !silent_ok || !calling_ok ? "a child failed" : "all 3 products OK");
    return wrong || !silent_ok || !calling_ok;
}
