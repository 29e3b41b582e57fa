/*
 * The forwarders' resolver (compat/forward.c) with its lookup answered here:
 * a name that every caller reaches is stored in its slot and returned; a name
 * defined in several local scopes is never stored, each calling object gets
 * its own definition, else the first, and the answer is remembered per name
 * and calling object; a name that no library provides stops the process with
 * SIGABRT after one message naming the routine and what was searched, never a
 * jump to NULL.
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cpu/cpu_blas.h"
#include "cpu/resolve.h"

void *tb_forward_resolve(unsigned index, const void *caller);

static void provided(void)
{
}

/* The two definitions of "ambiguous_": the first in load order, and the one in the test program itself. */
static void first_definition(void)
{
}

static void program_definition(void)
{
}

const char *const tb_forward_names[] = {"provided_", "missing_", "ambiguous_"};
const char *const tb_forward_plain_names[] = {NULL, NULL, NULL};
_Atomic(void *) tb_forward_slots[3];

static int lookups, caller_lookups;

void *tb_cpu_lookup(const char *name, int *shared, char *searched, size_t searched_size)
{
    lookups++;
    *shared = strcmp(name, "ambiguous_") != 0;
    if (strcmp(name, "provided_") == 0)
        return (void *)provided;
    if (!*shared)
        return (void *)first_definition;
    snprintf(searched, searched_size, "the test's lookup");
    return NULL;
}

void *tb_cpu_lookup_ilp64(const char *name, const char *plain, int *shared, char *searched, size_t searched_size)
{
    (void)name, (void)plain, (void)shared, (void)searched, (void)searched_size;
    return NULL; /* no 64-bit name here */
}

/* The test program defines "ambiguous_"; the C library, where the other caller is, does not. */
void *tb_resolve_in_caller(const char *name, const void *caller)
{
    caller_lookups++;
    Dl_info in_caller, in_test;
    const int same_object = dladdr(caller, &in_caller) && dladdr((void *)program_definition, &in_test) &&
                            in_caller.dli_fbase == in_test.dli_fbase;
    return strcmp(name, "ambiguous_") == 0 && same_object ? (void *)program_definition : NULL;
}

static int failures;

static void expect(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "FAIL: %s\n", what);
        failures++;
    }
}

/* Calls from the test program and from the C library: each its own answer, each found once. */
static void check_per_caller(void)
{
    const void *in_program = (const void *)expect, *in_libc = (const void *)printf;
    lookups = caller_lookups = 0;
    for (int round = 0; round < 3; round++) {
        expect(tb_forward_resolve(2, in_program) == (void *)program_definition,
               "a caller defining an ambiguous name does not get its own definition");
        expect(tb_forward_resolve(2, in_libc) == (void *)first_definition,
               "a caller without a definition does not get the first in load order");
    }
    expect(atomic_load(&tb_forward_slots[2]) == NULL, "an ambiguous name's target was stored in its slot");
    expect(lookups == 2 && caller_lookups == 2, "the answer for a name and calling object is not remembered");
}

int main(void)
{
    expect(tb_forward_resolve(0, (const void *)main) == (void *)provided &&
               atomic_load(&tb_forward_slots[0]) == (void *)provided,
           "a provided name is not returned and stored in its slot");
    check_per_caller();
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0)
        return 1;
    const pid_t child = fork();
    if (child == 0) {
        dup2(pipe_fds[1], 2);
        tb_forward_resolve(1, (const void *)main);
        _exit(0); /* not reached when the resolver aborts */
    }
    close(pipe_fds[1]);
    char message[512] = {0};
    size_t got = 0;
    ssize_t n;
    while (got < sizeof message - 1 && (n = read(pipe_fds[0], message + got, sizeof message - 1 - got)) > 0)
        got += (size_t)n;
    int status = 0;
    waitpid(child, &status, 0);
    expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "a missing name did not abort");
    expect(strstr(message, "missing_") && strstr(message, "the test's lookup") &&
               strchr(message, '\n') == message + strlen(message) - 1,
           "not one line naming the routine and what was searched");
    if (failures) {
        fprintf(stderr, "the missing name's message: '%s'\n", message);
        return 1;
    }
    printf("ok: %s", message);
    return 0;
}
