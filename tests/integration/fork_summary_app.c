/*
 * One SGEMM, then a forked child that exits without calling, then the
 * parent's exit: with TILEDBLAS_VERBOSE=1 the exit summary must come once,
 * from the parent, with its one call (expect_quiet_process.sh).
 *
 * Usage: fork_summary_app   (exits 1 when the product is wrong or the child failed)
 */
#include <tiledblas.h>

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "testutil.h"

#define N 32

int main(void)
{
    static float a[N * N], b[N * N], c[N * N];
    for (int i = 0; i < N * N; i++)
        a[i] = 1.0f, b[i] = 2.0f, c[i] = -1.0f;
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, a, N, b, N, 0.0f, c, N);
    int wrong = 0;
    for (int i = 0; i < N * N; i++)
        wrong += c[i] != 2.0f * N;
    const pid_t child = tb_fork_child(60);
    if (child == 0)
        exit(0); /* runs the library's exit destructor, as any child that returns does */
    int status = 0;
    const int child_ok = waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    printf("fork_summary_app: %s\n", wrong ? "wrong product" : !child_ok ? "child failed" : "all 1 products OK");
    return wrong || !child_ok;
}
