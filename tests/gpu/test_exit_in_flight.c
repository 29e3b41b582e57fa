/*
 * A program whose main returns while three threads run 2048^3 GPU calls on
 * host operands: the exit meets calls in flight. Each run must end
 * (no hang, within a timeout), and no call may turn into CPU work or print a
 * warning on the way out. The test runs the program RUNS times, each in a
 * fresh process (itself with --program), with TILEDBLAS_DEVICE=gpu and
 * TILEDBLAS_VERBOSE=2, whose trace lines name each call's path. Exits 77
 * (skipped) when tiledblas cannot use a GPU.
 */
#include "child_end.h"
#include "testutil.h"
#include "tiledblas.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RUNS 6
#define THREADS 3
#define SIZE 2048
#define RUN_SECONDS 120

static atomic_int calls_done;

static void *caller(void *unused)
{
    (void)unused;
    const size_t count = (size_t)SIZE * SIZE;
    float *a = malloc(count * sizeof(float)), *b = malloc(count * sizeof(float)), *c = malloc(count * sizeof(float));
    if (!a || !b || !c)
        exit(2);
    for (size_t i = 0; i < count; i++)
        a[i] = b[i] = c[i] = (float)(i % 7) * 0.25f;
    for (;;) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, SIZE, SIZE, SIZE, 1.0f, a, SIZE, b, SIZE, 0.5f, c,
                    SIZE);
        atomic_fetch_add(&calls_done, 1);
    }
    return NULL;
}

static void sleep_ms(long ms)
{
    const struct timespec pause = {ms / 1000, ms % 1000 * 1000000};
    nanosleep(&pause, NULL);
}

/* The program: returns from main once every thread has finished a call and the next ones are under way. */
static int program(void)
{
    if (!tiledblas_gpu_available())
        return 77;
    for (int i = 0; i < THREADS; i++) {
        pthread_t thread;
        if (pthread_create(&thread, NULL, caller, NULL) != 0)
            return 2;
    }
    while (atomic_load(&calls_done) < THREADS)
        sleep_ms(1);
    sleep_ms(5);
    return 0;
}

/* Lines of the run's stderr that show CPU work or a warning. */
static int bad_lines(FILE *log)
{
    char line[1024];
    int bad = 0;
    rewind(log);
    while (fgets(line, sizeof line, log))
        if (strstr(line, "warning") || strstr(line, "path=cpu")) {
            if (bad++ < 5)
                printf("  %s", line);
        }
    return bad;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--program") == 0)
        return program();
    setenv("TILEDBLAS_DEVICE", "gpu", 1);
    setenv("TILEDBLAS_VERBOSE", "2", 1);
    int failed = 0;
    for (int run = 0; run < RUNS; run++) {
        FILE *log = tmpfile();
        if (!log)
            return 1;
        const pid_t child = tb_fork_child(RUN_SECONDS);
        if (child == 0) {
            dup2(fileno(log), STDERR_FILENO);
            execl("/proc/self/exe", argv[0], "--program", (char *)NULL);
            _exit(3);
        }
        int status;
        waitpid(child, &status, 0);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
            printf("SKIP: tiledblas cannot use the GPU\n");
            return 77;
        }
        const int clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        char how[96];
        const int bad = bad_lines(log);
        printf("run %d: %s, %d lines of CPU work or warnings\n", run + 1, tb_child_end(status, how, sizeof how), bad);
        failed += !clean || bad;
        fclose(log);
    }
    printf("%d of %d runs failed\n", failed, RUNS);
    return failed ? 1 : 0;
}
