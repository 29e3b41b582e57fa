/*
 * A forwarded name that several libraries define, each calling its own (as the
 * OpenBLAS libraries bundled with numpy and SciPy call their LAPACK helpers
 * under unprefixed names): every call must reach the definition its caller
 * would reach without tiledblas. The libraries (scope_lib.c) call
 * sroundup_lwork_ through their PLT, which tiledblas, linked here, takes.
 *   test_caller_scope local A B CALLER   A and B, each defining the name, and
 *       CALLER, which only calls it, dlopen'ed RTLD_LOCAL: A's calls reach A's
 *       definition and B's B's, from several threads; CALLER's reach the first
 *       in load order, A's.
 *   test_caller_scope global A B GLOBAL  A and B RTLD_LOCAL, GLOBAL (loaded
 *       between them) RTLD_GLOBAL: every call reaches GLOBAL's, the one the
 *       global scope gives every caller.
 *   test_caller_scope modules MA MB  MA linked to A, MB to B, both only
 *       calling the name, dlopen'ed RTLD_LOCAL (two extension modules, each
 *       with its own BLAS as a dependency): MA's calls reach A's definition and
 *       MB's B's, the one in each caller's local scope.
 * Prints the time of a call through the forwarder in each case.
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tiledblas.h"

typedef float scope_call_fn(int lwork);

/* Each library's answer: lwork + its SCOPE_VALUE (CMakeLists.txt). */
enum { VALUE_A = 1, VALUE_B = 2, VALUE_GLOBAL = 3, LWORK = 100, CALLS = 200000, THREADS = 4 };

static int failures;

static scope_call_fn *open_library(const char *path, int scope)
{
    void *handle = dlopen(path, RTLD_NOW | scope);
    scope_call_fn *call = handle ? (scope_call_fn *)dlsym(handle, "scope_call") : NULL;
    if (!call) {
        fprintf(stderr, "FAIL: cannot load %s: %s\n", path, dlerror());
        failures++;
    }
    return call;
}

static void expect_value(const char *who, scope_call_fn *call, int value)
{
    const float got = call(LWORK);
    if (got != (float)(LWORK + value)) {
        fprintf(stderr, "FAIL: %s's call reached the definition answering %g, expected %d\n", who, got,
                LWORK + value);
        failures++;
    }
}

static double ns_per_call(scope_call_fn *call)
{
    struct timespec start, end;
    float sum = 0.0f;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (int i = 0; i < CALLS; i++)
        sum += call(i & 1);
    clock_gettime(CLOCK_MONOTONIC, &end);
    if (sum < 0.0f) /* keeps the loop */
        printf("%g\n", sum);
    return ((double)(end.tv_sec - start.tv_sec) * 1e9 + (double)(end.tv_nsec - start.tv_nsec)) / CALLS;
}

static scope_call_fn *library_a, *library_b;
static int thread_failures[THREADS];

/* Alternating calls from A and B, as two libraries used by one thread interleave. */
static void *alternate(void *arg)
{
    int *failed = arg;
    for (int i = 0; i < CALLS / 10; i++)
        if (library_a(i) != (float)(i + VALUE_A) || library_b(i) != (float)(i + VALUE_B))
            (*failed)++;
    return NULL;
}

static void check_local(const char *path_a, const char *path_b, const char *path_caller)
{
    library_a = open_library(path_a, RTLD_LOCAL);
    library_b = open_library(path_b, RTLD_LOCAL);
    scope_call_fn *caller = open_library(path_caller, RTLD_LOCAL);
    if (failures)
        return;
    /* B first: the answer must not be whoever called first. */
    expect_value("B", library_b, VALUE_B);
    expect_value("A", library_a, VALUE_A);
    expect_value("the caller without a definition", caller, VALUE_A);
    pthread_t threads[THREADS];
    for (int t = 0; t < THREADS; t++)
        pthread_create(&threads[t], NULL, alternate, &thread_failures[t]);
    for (int t = 0; t < THREADS; t++) {
        pthread_join(threads[t], NULL);
        if (thread_failures[t]) {
            fprintf(stderr, "FAIL: thread %d: %d calls reached another library's definition\n", t,
                    thread_failures[t]);
            failures++;
        }
    }
    printf("local definitions in A and B: %.1f ns a call from A, %.1f from B\n", ns_per_call(library_a),
           ns_per_call(library_b));
}

static void check_global(const char *path_a, const char *path_b, const char *path_global)
{
    scope_call_fn *a = open_library(path_a, RTLD_LOCAL);
    scope_call_fn *global = open_library(path_global, RTLD_GLOBAL);
    scope_call_fn *b = open_library(path_b, RTLD_LOCAL);
    if (failures)
        return;
    expect_value("A", a, VALUE_GLOBAL);
    expect_value("B", b, VALUE_GLOBAL);
    expect_value("the global library", global, VALUE_GLOBAL);
    printf("a global definition: %.1f ns a call from A\n", ns_per_call(a));
}

static void check_modules(const char *path_a, const char *path_b)
{
    scope_call_fn *module_a = open_library(path_a, RTLD_LOCAL);
    scope_call_fn *module_b = open_library(path_b, RTLD_LOCAL);
    if (failures)
        return;
    /* B first: the answer must not be the first definition in load order. */
    expect_value("the module linked to B", module_b, VALUE_B);
    expect_value("the module linked to A", module_a, VALUE_A);
    printf("definitions in the modules' dependencies: %.1f ns a call from the module linked to B\n",
           ns_per_call(module_b));
}

int main(int argc, char **argv)
{
    const int modules = argc == 4 && strcmp(argv[1], "modules") == 0;
    if (!modules && (argc != 5 || (strcmp(argv[1], "local") != 0 && strcmp(argv[1], "global") != 0))) {
        fprintf(stderr, "usage: %s local A B CALLER | global A B GLOBAL | modules MA MB\n", argv[0]);
        return 2;
    }
    /* Where a name goes by default is the subject; a CPU BLAS named in the environment (as the
     * benchmark suite names one) would take every forwarded name by design. */
    unsetenv("TILEDBLAS_CPU_BLAS");
    /* The premise: the libraries' references bind to tiledblas's forwarder. */
    Dl_info forwarder, library;
    void *symbol = dlsym(RTLD_DEFAULT, "sroundup_lwork_");
    if (!symbol || !dladdr(symbol, &forwarder) || !dladdr((void *)tiledblas_version, &library) ||
        forwarder.dli_fbase != library.dli_fbase) {
        fprintf(stderr, "FAIL: sroundup_lwork_ is not tiledblas's forwarder in the global scope\n");
        return 1;
    }
    if (modules)
        check_modules(argv[2], argv[3]);
    else if (strcmp(argv[1], "local") == 0)
        check_local(argv[2], argv[3], argv[4]);
    else
        check_global(argv[2], argv[3], argv[4]);
    if (failures)
        return 1;
    printf("ok: every call reached its caller's definition (%s)\n", argv[1]);
    return 0;
}
