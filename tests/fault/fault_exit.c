/*
 * Exit with calls in flight (fault_call.h): a program's main returns while
 * three threads make GPU calls on host operands, and the simulated runtime
 * tears down from an exit handler, as the CUDA runtime does; a process forks
 * while such calls are in flight, and its children exit; main returns while
 * a call waits for a lane.
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

#include "child_end.h"
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

/* What the CUDA runtime's exit handler does: it tears the contexts down, and with them the memory they
 * held, whatever other threads are doing; the teardown takes a while, and calls in flight meet it. */
static void runtime_tears_down(void)
{
    fake_teardown();
    const struct timespec teardown = {0, 20 * 1000 * 1000};
    nanosleep(&teardown, NULL);
}

/* Three threads making GPU calls of `cfg` for ever; returns once they have made a few. */
static void start_callers(const config *cfg)
{
    static gemm calls[EXIT_THREADS];
    for (int i = 0; i < EXIT_THREADS; i++) {
        gemm_make(&calls[i], cfg, 100u + (unsigned)i);
        pthread_t thread;
        if (pthread_create(&thread, NULL, call_forever, &calls[i]) != 0)
            _exit(5);
    }
    while (atomic_load(&exit_calls) < 4 * EXIT_THREADS)
        sched_yield();
}

/*
 * A program whose main returns while three threads make GPU calls, the runtime tearing down under them.
 * Its exit handler is registered as CUDA registers its own, when CUDA starts, so before the library's.
 * The calls are large enough that a thread is most of the time inside a kernel, reading device memory.
 */
static void exit_with_calls_in_flight(void)
{
    static const config cfg = {STAGED, HOST, HOST, HOST, COL, N, N, 160, 144, 128, 0.5f, 0, 1};
    set_environment(cfg.path);
    setenv("TILEDBLAS_VERBOSE", "2", 1); /* a trace line per call names its path */
    fake_reset(free_bytes_for(cfg.path));
    atexit(runtime_tears_down);
    if (!tiledblas_gpu_available())
        _exit(4);
    start_callers(&cfg);
    exit(0);
}

static double seconds_now(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

/* Children forked while three threads' calls are in flight exit at once: those calls are not theirs to
 * wait for. Returns the children that did not. */
static int fork_with_calls_in_flight(void)
{
    static const config cfg = {STAGED, HOST, HOST, HOST, COL, N, N, 160, 144, 128, 0.5f, 0, 1};
    set_environment(cfg.path);
    fake_reset(free_bytes_for(cfg.path));
    if (!tiledblas_gpu_available())
        _exit(4);
    start_callers(&cfg);
    int slow = 0;
    for (int i = 0; i < EXIT_RUNS; i++) {
        const double start = seconds_now();
        fflush(stdout);
        const pid_t pid = fork();
        if (pid == 0)
            exit(0);
        int status;
        waitpid(pid, &status, 0);
        const double took = seconds_now() - start;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || took > 5.0) {
            char how[96];
            printf("FAIL: a child forked with calls in flight %s after %.1f s\n", tb_child_end(status, how, sizeof how),
                   took);
            slow++;
        }
    }
    return slow;
}

/* --- a call waiting for a lane at exit --- */

static gemm lane_calls[3]; /* two held on the lanes, one waiting for a lane */
static atomic_int waiting_returned;
static long launches_before, marks_before;

static void *call_held_on_a_lane(void *g)
{
    fake_hold_next_launch();
    gemm_run(g, ((gemm *)g)->c.data);
    return NULL;
}

static void *call_waiting_for_a_lane(void *g)
{
    gemm_run(g, ((gemm *)g)->c.data);
    atomic_store(&waiting_returned, 1);
    return NULL;
}

static void *release_later(void *unused)
{
    (void)unused;
    const struct timespec later = {0, 200 * 1000 * 1000};
    nanosleep(&later, NULL);
    fake_release_held();
    return NULL;
}

/* Registered after CUDA started, so run before the library's exit handler: the held kernels go on a
 * little later, while the exit waits for their calls. */
static void release_held_soon(void)
{
    pthread_t releaser;
    if (pthread_create(&releaser, NULL, release_later, NULL) != 0 || pthread_detach(releaser) != 0)
        _exit(5);
}

/* Registered before CUDA started, so run after the library's exit handler: the waiting call returned,
 * launched nothing and left its C as given; the two held calls finished. */
static void check_after_library(void)
{
    /* The exit waited for the held calls; the waiting one may still be on its way out of the call. */
    const struct timespec tick = {0, 10 * 1000 * 1000};
    for (int i = 0; i < 500 && !atomic_load(&waiting_returned); i++)
        nanosleep(&tick, NULL);
    const long launched = fake_launches(0) - launches_before;
    const int verdict = gemm_verdict(&lane_calls[2]);
    if (!atomic_load(&waiting_returned) || launched != 2 || verdict != 0) {
        printf("FAIL: a call waiting for a lane at exit: %s, %ld kernels launched after (2 expected), its C %s\n",
               atomic_load(&waiting_returned) ? "returned" : "did not return", launched,
               verdict == 0 ? "untouched" : "written");
        fflush(stdout);
        _exit(6);
    }
    _exit(0);
}

/* Main returns while two calls on device operands hold both lanes, their kernels held, and a third
 * waits for a lane. */
static void exit_with_a_call_waiting_for_a_lane(void)
{
    static const config cfg = {STAGED, DEVICE, DEVICE, DEVICE, COL, N, N, 64, 48, 12, 0.5f, 0, 1};
    set_environment(cfg.path);
    fake_reset(free_bytes_for(cfg.path));
    atexit(check_after_library);
    for (int i = 0; i < 3; i++)
        gemm_make(&lane_calls[i], &cfg, 200u + (unsigned)i);
    gemm_run(&lane_calls[2], lane_calls[2].c.data); /* CUDA starts */
    memcpy(lane_calls[2].c.data, lane_calls[2].c0, lane_calls[2].c.count * sizeof(float));
    atexit(release_held_soon);
    launches_before = fake_launches(0);
    marks_before = fake_legacy_records();
    pthread_t thread;
    for (int i = 0; i < 2; i++)
        if (pthread_create(&thread, NULL, call_held_on_a_lane, &lane_calls[i]) != 0 || pthread_detach(thread) != 0)
            _exit(5);
    const struct timespec tick = {0, 10 * 1000 * 1000};
    for (int i = 0; i < 1000 && fake_held() < 2; i++)
        nanosleep(&tick, NULL);
    if (pthread_create(&thread, NULL, call_waiting_for_a_lane, &lane_calls[2]) != 0 || pthread_detach(thread) != 0)
        _exit(5);
    /* Each call marks the application's work just before it asks for a lane: the third has once three
     * marks were made. */
    for (int i = 0; i < 1000 && fake_legacy_records() - marks_before < 3; i++)
        nanosleep(&tick, NULL);
    if (fake_legacy_records() - marks_before < 3) {
        printf("FAIL: the third call never asked for a lane\n");
        fflush(stdout);
        _exit(6);
    }
    const struct timespec settle = {0, 20 * 1000 * 1000};
    nanosleep(&settle, NULL); /* it waits for a lane now */
    exit(0);
}

int fault_exit_lane_wait(void)
{
    fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) {
        alarm(60);
        exit_with_a_call_waiting_for_a_lane();
    }
    int status;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    char how[96];
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 6)
        printf("FAIL: the process exiting with a call waiting for a lane %s\n", tb_child_end(status, how, sizeof how));
    return 1;
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
            char how[96];
            printf("FAIL: exit with calls in flight, run %d: %s, %d GPU calls traced, %d lines of CPU work "
                   "or warnings\n",
                   run + 1, tb_child_end(status, how, sizeof how), traced, bad);
            failures++;
        }
    }
    return failures;
}

int fault_fork_in_flight(void)
{
    fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) {
        alarm(120);
        _exit(fork_with_calls_in_flight());
    }
    int status;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    char how[96];
    if (!WIFEXITED(status) || WEXITSTATUS(status) > EXIT_RUNS)
        printf("FAIL: the process forking with calls in flight %s\n", tb_child_end(status, how, sizeof how));
    return 1;
}
