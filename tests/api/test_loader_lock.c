/*
 * The CPU BLAS's resolution and the dynamic loader's lock: one thread makes
 * the first SGEMM call, whose resolution calls the candidate library's isamax_
 * (loader_lock_blas.c, TILEDBLAS_CPU_BLAS) and then looks up its sgemm_;
 * meanwhile this thread dlopens a module (loader_lock_module.c) whose
 * constructor, run under the loader's lock, makes an SGEMM call too. Both
 * calls must finish, on that library, with the right result: a resolution
 * that held a lock of its own across the loader's would deadlock here.
 *   test_loader_lock BLAS MODULE
 */
#define _GNU_SOURCE /* dlopen flags */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "tiledblas.h"

enum { DEADLINE_S = 20 };

static const float expected[4] = {23, 34, 31, 46}; /* [1 3; 2 4] * [5 7; 6 8], column-major */

static void deadlocked(int signal)
{
    (void)signal;
    static const char message[] = "FAIL: the calls did not finish: a deadlock with the dynamic loader\n";
    if (write(2, message, sizeof message - 1) < 0)
        _exit(1);
    _exit(1);
}

static float first_result[4];

static void *first_call(void *arg)
{
    (void)arg;
    const float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1.0f, a, 2, b, 2, 0.0f, first_result, 2);
    return NULL;
}

static int check(const char *who, const float *got)
{
    for (int i = 0; i < 4; i++)
        if (got[i] != expected[i]) {
            fprintf(stderr, "FAIL: %s's result[%d] is %g, expected %g\n", who, i, got[i], expected[i]);
            return 1;
        }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s BLAS MODULE\n", argv[0]);
        return 2;
    }
    signal(SIGALRM, deadlocked);
    alarm(DEADLINE_S);
    pthread_t thread;
    pthread_create(&thread, NULL, first_call, NULL);
    /* Wait until the first call's resolution is inside the library's isamax_. */
    const struct timespec pause = {0, 1000000};
    void *blas;
    while (!(blas = dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD)))
        nanosleep(&pause, NULL);
    const atomic_int *probing = dlsym(blas, "loader_lock_probing");
    while (probing && !atomic_load(probing))
        nanosleep(&pause, NULL);
    void *module = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
    pthread_join(thread, NULL);
    alarm(0);
    if (!module) {
        fprintf(stderr, "FAIL: cannot load %s: %s\n", argv[2], dlerror());
        return 1;
    }
    const float *module_result = dlsym(module, "loader_lock_result");
    const atomic_int *calls = dlsym(module, "loader_lock_calls");
    int failures = check("the first call", first_result) + check("the constructor's call", module_result);
    if (!calls || atomic_load(calls) != 2) {
        fprintf(stderr, "FAIL: %d calls reached the CPU BLAS, expected 2\n", calls ? atomic_load(calls) : -1);
        failures++;
    }
    if (failures)
        return 1;
    printf("ok: both calls finished, on the CPU BLAS\n");
    return 0;
}
