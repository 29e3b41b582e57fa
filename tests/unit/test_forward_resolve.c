/*
 * The forwarders' resolver (compat/forward.c) with its lookup answered here:
 * a name that is found is stored in its slot and returned; a name that no
 * library provides stops the process with SIGABRT after one message naming
 * the routine and what was searched, never a jump to NULL.
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cpu/cpu_blas.h"

void *tb_forward_resolve(unsigned index);

static void provided(void)
{
}

const char *const tb_forward_names[] = {"provided_", "missing_"};
const char *const tb_forward_plain_names[] = {NULL, NULL};
_Atomic(void *) tb_forward_slots[2];

void *tb_cpu_lookup(const char *name, char *searched, size_t searched_size)
{
    if (strcmp(name, "provided_") == 0)
        return (void *)provided;
    snprintf(searched, searched_size, "the test's lookup");
    return NULL;
}

void *tb_cpu_lookup_ilp64(const char *name, const char *plain, char *searched, size_t searched_size)
{
    (void)name, (void)plain, (void)searched, (void)searched_size;
    return NULL; /* no 64-bit name here */
}

int main(void)
{
    int failures = 0;
    if (tb_forward_resolve(0) != (void *)provided || atomic_load(&tb_forward_slots[0]) != (void *)provided) {
        fprintf(stderr, "FAIL: a provided name is not returned and stored in its slot\n");
        failures++;
    }
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0)
        return 1;
    const pid_t child = fork();
    if (child == 0) {
        dup2(pipe_fds[1], 2);
        tb_forward_resolve(1);
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
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT) {
        fprintf(stderr, "FAIL: a missing name did not abort (status %d)\n", status);
        failures++;
    }
    if (!strstr(message, "missing_") || !strstr(message, "the test's lookup") || strchr(message, '\n') !=
        message + strlen(message) - 1) {
        fprintf(stderr, "FAIL: not one line naming the routine and what was searched: '%s'\n", message);
        failures++;
    }
    if (failures)
        return 1;
    printf("ok: %s", message);
    return 0;
}
