/*
 * fork() while other threads are inside the library: the child inherits
 * whatever those threads held at that instant, and must still make its calls
 * without hanging. Caller threads call a tiny SGEMM in a loop while the main
 * thread forks again and again; each child makes the same call and exits.
 * Registered with TILEDBLAS_VERBOSE=0 and 1 (every call accounted) and the
 * built-in CPU loop, so that only the library's own state is tested, not the
 * CPU BLAS's; scripts run it with other backends to see whose locks hang.
 *
 * Environment (all optional):
 *   TB_FORKS         children forked (default 1000)
 *   TB_FORK_CALLERS  threads calling while the main thread forks (default 4)
 *   TB_FORK_SECONDS  a child still running after this long is hung (default 5)
 *   TB_FORK_ON_HANG  a command run with a hung child's pid as last argument
 *                    while it still hangs (e.g. a debugger printing its stacks)
 * Exits 1 if any child hung, crashed or computed a wrong result.
 */
#include "testutil.h"
#include "tiledblas.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define N 16
#define MAX_CALLERS 64

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

/* A positive whole number from the environment, or `fallback` when unset. Exits on a bad value. */
static int env_count(const char *name, int fallback, int max)
{
    const char *text = getenv(name);
    if (text == NULL || text[0] == '\0')
        return fallback;
    char *end;
    const long value = strtol(text, &end, 10);
    if (*end != '\0' || value < 1 || value > max) {
        fprintf(stderr, "%s=%s: expected a whole number in 1..%d\n", name, text, max);
        exit(2);
    }
    return (int)value;
}

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/*
 * The child's exit status. A child still running halfway to its alarm is
 * reported, and handed to TB_FORK_ON_HANG if set, before waiting for the end.
 */
static int wait_child(pid_t child, unsigned seconds, const char *on_hang)
{
    const double deadline = seconds_now() + seconds / 2.0;
    const struct timespec pause = {0, 200000};
    int status = 0;
    pid_t done;
    while ((done = waitpid(child, &status, WNOHANG)) == 0 && seconds_now() < deadline)
        nanosleep(&pause, NULL);
    if (done == 0) {
        fprintf(stderr, "child %d still running after %.1f s\n", (int)child, seconds / 2.0);
        if (on_hang != NULL) {
            char command[1024];
            snprintf(command, sizeof command, "%s %d", on_hang, (int)child);
            if (system(command) != 0)
                fprintf(stderr, "'%s' failed\n", command);
        }
        done = waitpid(child, &status, 0);
    }
    if (done != child) {
        perror("waitpid");
        exit(1);
    }
    return status;
}

int main(void)
{
    const int forks = env_count("TB_FORKS", 1000, 1000000);
    const int callers = env_count("TB_FORK_CALLERS", 4, MAX_CALLERS);
    const unsigned child_seconds = (unsigned)env_count("TB_FORK_SECONDS", 5, 3600);
    const char *on_hang = getenv("TB_FORK_ON_HANG");

    pthread_t threads[MAX_CALLERS];
    for (int t = 0; t < callers; t++)
        if (pthread_create(&threads[t], NULL, caller, NULL) != 0) {
            perror("pthread_create");
            return 1;
        }
    const double start = seconds_now();
    int hung = 0, crashed = 0, wrong = 0;
    for (int f = 0; f < forks; f++) {
        const pid_t child = tb_fork_child(child_seconds);
        if (child == 0)
            _exit(tiny_call() ? 0 : 1);
        const int status = wait_child(child, child_seconds, on_hang);
        if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
            hung++;
        } else if (WIFSIGNALED(status)) {
            crashed++;
            fprintf(stderr, "child %d killed by signal %d (%s)\n", (int)child, WTERMSIG(status),
                    strsignal(WTERMSIG(status)));
        } else
            wrong += WEXITSTATUS(status) != 0;
    }
    const double elapsed = seconds_now() - start;
    atomic_store(&stop, 1);
    for (int t = 0; t < callers; t++)
        pthread_join(threads[t], NULL);
    const int failed = hung + crashed + wrong;
    printf("%d forks with %d threads calling (CPU BLAS: %s) in %.1f s: %d children hung, %d crashed, "
           "%d wrong\n",
           forks, callers, tiledblas_cpu_backend(), elapsed, hung, crashed, wrong);
    printf("%s\n", failed == 0 ? "PASS" : "FAIL");
    return failed == 0 ? 0 : 1;
}
