/*
 * One SGEMM, then a forked child that exits without calling, then the
 * parent's exit: with TILEDBLAS_VERBOSE=1 the exit summary must come once,
 * from the parent, with its one call (expect_quiet_process.sh).
 *
 * Usage: fork_summary_app   (exits 1 when the product is wrong or the child failed)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "testutil.h"

int main(void)
{
    tb_gemm_case gc = {.layout = TB_COL_MAJOR, .trans_a = TB_NO_TRANS, .trans_b = TB_NO_TRANS,
                       .m = 32, .n = 32, .k = 32, .alpha = 1.0f, .beta = 0.0f};
    tb_case_set_ld(&gc, 0, 0, 0);
    tb_rng rng;
    tb_rng_seed(&rng, 3);
    tb_gemm_operands ops;
    tb_operands_make(&ops, &gc, &rng);
    const int wrong = tb_run_case(&gc, &ops, "before the fork") != 0;
    tb_operands_free(&ops);
    const pid_t child = tb_fork_child(60);
    if (child == 0)
        exit(0); /* runs the library's exit destructor, as any child that returns does */
    int status = 0;
    const int child_ok = waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    printf("fork_summary_app: %s\n", wrong ? "wrong product" : !child_ok ? "child failed" : "all 1 products OK");
    return wrong || !child_ok;
}
