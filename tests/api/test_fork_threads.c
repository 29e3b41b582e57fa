/*
 * fork() while other threads are inside the library: the child inherits
 * whatever those threads held at that instant, and must still make its calls
 * without hanging. Two threads call a tiny SGEMM in a loop while the main
 * thread forks again and again; each child makes the same call and exits. Run
 * with TILEDBLAS_VERBOSE=1 (every call is accounted) and the built-in CPU loop,
 * so that only the library's own state is tested, not the CPU BLAS's.
 */
#include "testutil.h"
#include "tiledblas.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define FORKS 1000
#define CALLERS 4
#define N 16
/* A child that has not finished its one tiny call by then is hung. */
#define CHILD_SECONDS 5

static atomic_int stop;

/* One tiny call, checked: C = A*B with A and B all ones is K everywhere. */
static int tiny_call(void)
{
    float a[N * N], b[N * N], c[N * N];
    for (int i = 0; i < N * N; i++)
        a[i] = b[i] = 1.0f, c[i] = -1.0f;
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, a, N, b, N, 0.0f, c, N);
    for (int i = 0; i < N * N; i++)
        if (c[i] != (float)N)
            return 0;
    return 1;
}

static void *caller(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop))
        if (!tiny_call()) {
            fprintf(stderr, "FAIL: a caller thread computed a wrong result\n");
            exit(1);
        }
    return NULL;
}

int main(void)
{
    pthread_t threads[CALLERS];
    for (int t = 0; t < CALLERS; t++)
        if (pthread_create(&threads[t], NULL, caller, NULL) != 0) {
            perror("pthread_create");
            return 1;
        }
    int hung = 0, wrong = 0;
    for (int f = 0; f < FORKS; f++) {
        const pid_t child = tb_fork_child(CHILD_SECONDS);
        if (child == 0)
            _exit(tiny_call() ? 0 : 1);
        int status = 0;
        if (waitpid(child, &status, 0) != child) {
            perror("waitpid");
            return 1;
        }
        hung += WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM;
        wrong += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    }
    atomic_store(&stop, 1);
    for (int t = 0; t < CALLERS; t++)
        pthread_join(threads[t], NULL);
    printf("%d forks with %d threads calling: %d children hung, %d failed\n", FORKS, CALLERS, hung, wrong);
    printf("%s\n", wrong == 0 ? "PASS" : "FAIL");
    return wrong == 0 ? 0 : 1;
}
