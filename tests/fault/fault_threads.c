/*
 * Many threads at once (fault_call.h): STRESS_THREADS threads each make
 * STRESS_CALLS calls of small random shapes, layouts and transposes on
 * operands in host, pinned, device and managed memory, with every path
 * reachable (the pipeline from tiny sizes, a pinned staging share of a
 * megabyte, a device cap of a few megabytes) and the copy pool shared. Run in
 * a child: should it not finish within STRESS_SECONDS, every thread's stack
 * is printed (gdb, where installed) and the case fails; so does any C not
 * equal to the reference within the bound.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fake_cuda.h"
#include "fault_call.h"

#define STRESS_THREADS 48
#define STRESS_CALLS 60
#define STRESS_SECONDS 120
#define STRESS_MAX_DIM 96

static atomic_int stress_wrong;

static unsigned next_random(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return *seed >> 8;
}

static void *call_many(void *arg)
{
    unsigned seed = 7919u * (unsigned)(size_t)arg + 1u;
    static const memory kinds[] = {HOST, HOST, HOST, PINNED, DEVICE, MANAGED}; /* host the most: every path */
    for (int i = 0; i < STRESS_CALLS; i++) {
        const config cfg = {STAGED,
                            kinds[next_random(&seed) % 6],
                            kinds[next_random(&seed) % 6],
                            kinds[next_random(&seed) % 6],
                            next_random(&seed) % 2 ? ROW : COL,
                            next_random(&seed) % 2 ? T : N,
                            next_random(&seed) % 2 ? T : N,
                            1 + (int)(next_random(&seed) % STRESS_MAX_DIM),
                            1 + (int)(next_random(&seed) % STRESS_MAX_DIM),
                            1 + (int)(next_random(&seed) % STRESS_MAX_DIM),
                            next_random(&seed) % 2 ? 0.5f : 0.0f,
                            0,
                            1};
        gemm g; /* its buffers kept: the registry checks against them to the end */
        gemm_make(&g, &cfg, seed);
        gemm_run(&g, g.c.data);
        if (gemm_verdict(&g) != 1) {
            atomic_fetch_add(&stress_wrong, 1);
            fprintf(stderr, "FAIL: wrong C, %dx%dx%d, operands %d %d %d\n", cfg.m, cfg.n, cfg.k, cfg.a, cfg.b, cfg.c);
        }
    }
    return NULL;
}

static void stress(void)
{
    setenv("TILEDBLAS_DEVICE", "gpu", 1);
    setenv("TILEDBLAS_GPU_MIN_FLOPS", "0", 1);
    setenv("TILEDBLAS_PIPELINE_MIN_FLOPS", "2e5", 1);
    setenv("TILEDBLAS_PINNED_MB", "1", 1);
    setenv("TILEDBLAS_DEVICE_MB", "3", 1);
    setenv("TILEDBLAS_COPY_THREADS", "4", 1);
    fake_reset((size_t)8 << 30);
    if (!tiledblas_gpu_available())
        _exit(4);
    pthread_t threads[STRESS_THREADS];
    for (size_t t = 0; t < STRESS_THREADS; t++)
        if (pthread_create(&threads[t], NULL, call_many, (void *)t) != 0)
            _exit(5);
    for (int t = 0; t < STRESS_THREADS; t++)
        pthread_join(threads[t], NULL);
    _exit(atomic_load(&stress_wrong) ? 3 : 0);
}

/* Every thread's stack of the stalled child, on stdout. */
static void print_stacks(pid_t pid)
{
    char command[160];
    snprintf(command, sizeof command, "gdb -batch -p %d -ex 'thread apply all bt' 2>/dev/null", (int)pid);
    fflush(stdout);
    if (system(command) != 0)
        printf("(no stacks: gdb missing or could not attach)\n");
}

int fault_many_threads(void)
{
    fflush(stdout);
    fflush(stderr);
    const pid_t pid = fork();
    if (pid == 0)
        stress();
    int status = 0;
    const struct timespec tick = {0, 100 * 1000 * 1000};
    for (int waited = 0; waitpid(pid, &status, WNOHANG) == 0; waited++) {
        if (waited == STRESS_SECONDS * 10) {
            printf("FAIL: %d threads' calls still running after %d s; their stacks:\n", STRESS_THREADS,
                   STRESS_SECONDS);
            print_stacks(pid);
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return 1;
        }
        nanosleep(&tick, NULL);
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        printf("FAIL: %d threads' calls: %s %d\n", STRESS_THREADS, WIFEXITED(status) ? "exit status" : "signal",
               WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        return 1;
    }
    return 0;
}
