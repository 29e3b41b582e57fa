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

/* --- a call on device operands beside another --- */

#define LANES_WAIT_SECONDS 10

static atomic_int second_done;

/* A call whose kernel is held until the test releases it. */
static void *call_held(void *arg)
{
    gemm *g = arg;
    fake_hold_next_launch();
    gemm_run(g, g->c.data);
    return NULL;
}

static void *call_plain(void *arg)
{
    gemm *g = arg;
    gemm_run(g, g->c.data);
    return NULL;
}

static void *call_and_flag(void *arg)
{
    call_plain(arg);
    atomic_store(&second_done, 1);
    return NULL;
}

/* Polls every 10 ms for up to `seconds`: for `done`, or with NULL for `held` launches or records held. */
static int wait_for(atomic_int *done, int held, int seconds)
{
    const struct timespec tick = {0, 10 * 1000 * 1000};
    for (int i = 0; i < seconds * 100; i++) {
        if (done ? atomic_load(done) : fake_held() == held)
            return 1;
        nanosleep(&tick, NULL);
    }
    return 0;
}

/*
 * A call on device operands (`second`) while another's kernel, on the first lane, is held, and with it
 * that lane's stream: whether it finished before the release (waiting up to `seconds`); both C checked.
 * -1 when the setting up or a C failed.
 */
static int beside_held(gemm *first, gemm *second, int seconds)
{
    atomic_store(&second_done, 0);
    memcpy(first->c.data, first->c0, first->c.count * sizeof(float));
    memcpy(second->c.data, second->c0, second->c.count * sizeof(float));
    pthread_t held, beside;
    if (pthread_create(&held, NULL, call_held, first) != 0)
        return -1;
    const int was_held = wait_for(NULL, 1, LANES_WAIT_SECONDS);
    if (was_held && pthread_create(&beside, NULL, call_and_flag, second) != 0)
        return -1;
    const int finished = was_held && wait_for(&second_done, 0, seconds);
    fake_release_held();
    pthread_join(held, NULL);
    if (was_held)
        pthread_join(beside, NULL);
    if (!was_held) {
        printf("FAIL device-lanes: the first call's kernel was never launched\n");
        return -1;
    }
    if (gemm_verdict(first) != 1 || gemm_verdict(second) != 1) {
        printf("FAIL device-lanes: C wrong (first %d, second %d)\n", gemm_verdict(first), gemm_verdict(second));
        return -1;
    }
    return finished;
}

/*
 * Two threads' calls on device operands (beta != 0, so C is copied first): while the first call's kernel
 * is held on the first lane, the second must finish, on the second lane and its own stream. Under
 * TILEDBLAS_DEVICE_MB (`capped`), where the second lane keeps no workspace, so only a call without
 * split-K's scratch (the fake kernels ask for it from K = 16): one with it waits for the first lane;
 * and no call waits for the whole device.
 */
int fault_device_lanes(int capped)
{
    const config cfg = {STAGED, DEVICE, DEVICE, DEVICE, COL, N, N, 64, 48, 40, 0.5f, 0, 1};
    const config unsplit = {STAGED, DEVICE, DEVICE, DEVICE, COL, N, N, 64, 48, 12, 0.5f, 0, 1};
    if (capped)
        setenv("TILEDBLAS_DEVICE_MB", "64", 1);
    set_environment(cfg.path);
    fake_reset(free_bytes_for(cfg.path));
    gemm first, split, plain;
    gemm_make(&first, &cfg, 31u);
    gemm_make(&split, &cfg, 37u);
    gemm_make(&plain, &unsplit, 41u);
    gemm_run(&first, first.c.data); /* CUDA starts outside the test */
    const long waits = fake_device_waits();

    int failed = 0;
    const int plain_beside = beside_held(&first, &plain, LANES_WAIT_SECONDS);
    const int split_beside = beside_held(&first, &split, capped ? 1 : LANES_WAIT_SECONDS);
    if (plain_beside < 0 || split_beside < 0)
        return 1;
    if (!plain_beside || (!capped && !split_beside)) {
        printf("FAIL device-lanes: a call (K = %d) did not finish in %d s beside the first\n",
               plain_beside ? cfg.k : unsplit.k, LANES_WAIT_SECONDS);
        failed = 1;
    }
    if (capped && split_beside) {
        printf("FAIL device-lanes: under a cap, a call with split-K scratch ran beside the first\n");
        failed = 1;
    }
    if (capped && fake_device_waits() != waits) {
        printf("FAIL device-lanes: calls waited for the whole device %ld times\n", fake_device_waits() - waits);
        failed = 1;
    }
    return failed;
}

/* --- the application's work marked before a lane is taken --- */

static void *call_mark_held(void *arg)
{
    gemm *g = arg;
    fake_hold_next_mark();
    gemm_run(g, g->c.data);
    return NULL;
}

/*
 * Two threads' calls on device operands whose marks of the application's work (an event recorded on the
 * legacy default stream) are held, as the driver holds them behind other threads' pageable copies: a
 * third thread's call must finish meanwhile, since a call waiting there holds no lane. All three C checked.
 */
int fault_marks_hold_no_lane(void)
{
    const config cfg = {STAGED, DEVICE, DEVICE, DEVICE, COL, N, N, 64, 48, 12, 0.5f, 0, 1};
    set_environment(cfg.path);
    fake_reset(free_bytes_for(cfg.path));
    gemm held[2], third;
    gemm_make(&held[0], &cfg, 43u);
    gemm_make(&held[1], &cfg, 47u);
    gemm_make(&third, &cfg, 53u);
    gemm_run(&third, third.c.data); /* CUDA starts outside the test */
    memcpy(third.c.data, third.c0, third.c.count * sizeof(float));
    atomic_store(&second_done, 0);
    pthread_t threads[3];
    int made = 0;
    for (; made < 2 && pthread_create(&threads[made], NULL, call_mark_held, &held[made]) == 0; made++)
        ;
    const int were_held = made == 2 && wait_for(NULL, 2, LANES_WAIT_SECONDS);
    if (were_held && pthread_create(&threads[made], NULL, call_and_flag, &third) == 0)
        made++;
    const int finished = made == 3 && wait_for(&second_done, 0, LANES_WAIT_SECONDS);
    fake_release_held();
    for (int t = 0; t < made; t++)
        pthread_join(threads[t], NULL);
    if (made < 3) {
        printf("FAIL marks-hold-no-lane: a thread could not be started\n");
        return 1;
    }
    if (!were_held) {
        printf("FAIL marks-hold-no-lane: the two calls' marks were not both held\n");
        return 1;
    }
    if (!finished) {
        printf("FAIL marks-hold-no-lane: a call did not finish in %d s while two others waited to mark the "
               "application's work\n", LANES_WAIT_SECONDS);
        return 1;
    }
    if (gemm_verdict(&held[0]) != 1 || gemm_verdict(&held[1]) != 1 || gemm_verdict(&third) != 1) {
        printf("FAIL marks-hold-no-lane: C wrong (%d, %d, %d)\n", gemm_verdict(&held[0]),
               gemm_verdict(&held[1]), gemm_verdict(&third));
        return 1;
    }
    return 0;
}

/* --- each call waits for its own mark --- */

/* Polls every 10 ms for up to LANES_WAIT_SECONDS for `records` marks on the legacy default stream. */
static int wait_for_records(long records)
{
    const struct timespec tick = {0, 10 * 1000 * 1000};
    for (int i = 0; i < LANES_WAIT_SECONDS * 100; i++) {
        if (fake_legacy_records() >= records)
            return 1;
        nanosleep(&tick, NULL);
    }
    return 0;
}

/*
 * Two calls on device operands hold both lanes (their kernels held); two more mark the application's
 * work and wait for a lane. Once the lanes are free, each of the two must wait for its own mark: a mark
 * another call made later may follow application work queued after the call began, work that might
 * wait for what the caller does after the call. All four C checked.
 */
int fault_own_marks(void)
{
    const config cfg = {STAGED, DEVICE, DEVICE, DEVICE, COL, N, N, 64, 48, 12, 0.5f, 0, 1};
    set_environment(cfg.path);
    fake_reset(free_bytes_for(cfg.path));
    gemm calls[4];
    for (int i = 0; i < 4; i++)
        gemm_make(&calls[i], &cfg, 59u + 4u * (unsigned)i);
    gemm_run(&calls[0], calls[0].c.data); /* CUDA starts outside the test */
    memcpy(calls[0].c.data, calls[0].c0, calls[0].c.count * sizeof(float));
    const long records = fake_legacy_records(), foreign = fake_foreign_waits();
    pthread_t threads[4];
    int made = 0, ready = 1;
    for (; made < 2 && ready && pthread_create(&threads[made], NULL, call_held, &calls[made]) == 0; made++)
        ready = wait_for(NULL, made + 1, LANES_WAIT_SECONDS); /* the lanes taken in turn */
    for (; ready && made >= 2 && made < 4 && pthread_create(&threads[made], NULL, call_plain, &calls[made]) == 0;
         made++)
        ;
    ready = ready && made == 4 && wait_for_records(records + 4);
    fake_release_held();
    for (int t = 0; t < made; t++)
        pthread_join(threads[t], NULL);
    if (!ready) {
        printf("FAIL own-marks: the four calls were not all under way (%d started)\n", made);
        return 1;
    }
    int failed = 0;
    if (fake_foreign_waits() != foreign) {
        printf("FAIL own-marks: %ld waits for a mark another call made\n", fake_foreign_waits() - foreign);
        failed = 1;
    }
    for (int i = 0; i < 4; i++)
        if (gemm_verdict(&calls[i]) != 1) {
            printf("FAIL own-marks: C of call %d wrong (%d)\n", i, gemm_verdict(&calls[i]));
            failed = 1;
        }
    return failed;
}
