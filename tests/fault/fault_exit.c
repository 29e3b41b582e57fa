/*
 * Exit with calls in flight (fault_call.h): a program's main returns while
 * three threads make GPU calls on host operands, and the simulated runtime
 * starts unloading from an exit handler, as the CUDA runtime's teardown does.
 */
#include <pthread.h>
#include <sched.h>
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

#define EXIT_RUNS 6
#define EXIT_THREADS 3

static atomic_int exit_calls;

static void *call_forever(void *g)
{
    for (;;) {
        gemm_run(g, ((gemm *)g)->c.data);
        atomic_fetch_add(&exit_calls, 1);
    }
    return NULL;
}

/* What the CUDA runtime's own exit handler does: from now on it is unloading, while its teardown takes a
 * while (the calls in flight meet it). */
static void runtime_unloads(void)
{
    fake_inject(FAKE_UNLOADING, 1, NULL);
    const struct timespec teardown = {0, 20 * 1000 * 1000};
    nanosleep(&teardown, NULL);
}

/* A program whose main returns while three threads make GPU calls, the runtime unloading under them. */
static void exit_with_calls_in_flight(void)
{
    static const config cfg = {STAGED, HOST, HOST, HOST, COL, N, N, 48, 40, 36, 0.5f, 0, 1};
    set_environment(cfg.path);
    setenv("TILEDBLAS_VERBOSE", "2", 1); /* a trace line per call names its path */
    fake_reset(free_bytes_for(cfg.path));
    if (!tiledblas_gpu_available())
        _exit(4);
    atexit(runtime_unloads);
    static gemm calls[EXIT_THREADS];
    for (int i = 0; i < EXIT_THREADS; i++) {
        gemm_make(&calls[i], &cfg, 100u + (unsigned)i);
        pthread_t thread;
        if (pthread_create(&thread, NULL, call_forever, &calls[i]) != 0)
            _exit(5);
    }
    while (atomic_load(&exit_calls) < 10 * EXIT_THREADS)
        sched_yield();
    exit(0);
}

/* Each run ends, within the alarm, with no call turned into CPU work and no warning. */
int fault_exit_in_flight(void)
{
    int failures = 0;
    for (int run = 0; run < EXIT_RUNS; run++) {
        FILE *log = tmpfile();
        if (!log)
            exit(2);
        fflush(stdout);
        const pid_t pid = fork();
        if (pid == 0) {
            alarm(60);
            dup2(fileno(log), STDERR_FILENO);
            exit_with_calls_in_flight();
        }
        int status;
        waitpid(pid, &status, 0);
        char line[1024];
        int bad = 0, traced = 0;
        rewind(log);
        while (fgets(line, sizeof line, log)) {
            traced += strstr(line, "path=gpu") != NULL;
            bad += strstr(line, "path=cpu") != NULL || strstr(line, "warning") != NULL;
        }
        fclose(log);
        const int clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        if (!clean || bad || !traced) {
            printf("FAIL: exit with calls in flight, run %d: %s, %d GPU calls traced, %d lines of CPU work "
                   "or warnings\n",
                   run + 1,
                   WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM ? "hung"
                   : clean                                             ? "exited"
                                                                       : "ended abnormally",
                   traced, bad);
            failures++;
        }
    }
    return failures;
}
