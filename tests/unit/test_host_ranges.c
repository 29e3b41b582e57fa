/*
 * The ranges that hold host memory for certain (src/dispatch/host_ranges.c),
 * which let a small call skip the driver's ~0.3 us answer per operand: a stack
 * array of the caller (on the main thread and on another), a static array and
 * a small block of the main thread's malloc must be inside them; an mmap'd
 * block, another thread's stack and a span running past the heap's end must
 * not, since memory outside them can be device memory and must be asked about;
 * nor may that block be inside them for a call from a signal handler on an
 * alternate stack, whose frame is off the thread's stack. Host only: it runs
 * on CI.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dispatch/host_ranges.h"

static int failures;

static void expect(int got, int want, const char *what)
{
    if (got != want) {
        fprintf(stderr, "FAIL: %s: %s certain host memory\n", what, want ? "not" : "wrongly");
        failures++;
    }
}

static int certain(const void *p, size_t bytes)
{
    tb_certain_host where;
    tb_certain_host_ranges(&where);
    return tb_is_certain_host(&where, p, bytes);
}

static float program_array[1024];

typedef struct {
    volatile float *main_stack; /* an array in the main thread's frame */
    int own_stack, other_stack;
} thread_view;

static void *look_from_thread(void *arg)
{
    thread_view *view = arg;
    volatile float own[256] = {0};
    view->own_stack = certain((const void *)own, sizeof own);
    view->other_stack = certain((const void *)view->main_stack, 256 * sizeof(float));
    return NULL;
}

static const float *mapped_block;
static char *alternate_low;
static volatile sig_atomic_t mapped_from_handler = -1, on_alternate_stack;

/* Runs synchronously (raise, one thread), after the ranges were first looked up: nothing allocates. */
static void look_from_signal_stack(int signal)
{
    (void)signal;
    char here;
    on_alternate_stack = &here >= alternate_low && &here < alternate_low + (1 << 16);
    mapped_from_handler = certain(mapped_block, 4096);
}

/* A handler on a stack of its own, here in the heap: far below the thread's stack top. */
static int mapped_seen_from_alternate_stack(void)
{
    alternate_low = malloc(1 << 16);
    stack_t alternate = {.ss_sp = alternate_low, .ss_size = 1 << 16, .ss_flags = 0};
    struct sigaction action = {.sa_handler = look_from_signal_stack, .sa_flags = SA_ONSTACK};
    sigemptyset(&action.sa_mask);
    if (!alternate.ss_sp || sigaltstack(&alternate, NULL) || sigaction(SIGUSR1, &action, NULL) || raise(SIGUSR1)) {
        fprintf(stderr, "cannot run a handler on an alternate stack\n");
        exit(1);
    }
    const stack_t off = {.ss_flags = SS_DISABLE};
    sigaltstack(&off, NULL);
    free(alternate.ss_sp);
    if (!on_alternate_stack) {
        fprintf(stderr, "the handler did not run on the alternate stack\n");
        exit(1);
    }
    return mapped_from_handler;
}

int main(void)
{
    volatile float on_stack[256] = {0};
    expect(certain((const void *)on_stack, sizeof on_stack), 1, "the caller's stack array");
    expect(certain(program_array, sizeof program_array), 1, "a static array");

    /* glibc's main arena serves small blocks of the main thread from the brk heap. */
    float *small = malloc(64 * sizeof(float));
    expect(certain(small, 64 * sizeof(float)), 1, "a small malloc block of the main thread");
    const char *brk_now = sbrk(0);
    expect(certain(brk_now - 16, 64), 0, "a span running past the brk heap's end");

    const size_t bytes = (size_t)1 << 22;
    float *mapped = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    expect(certain(mapped, bytes), 0, "an mmap'd block");
    mapped_block = mapped;
    expect(mapped_seen_from_alternate_stack(), 0, "an mmap'd block, seen from a signal handler's own stack");

    thread_view view = {on_stack, 0, 0};
    pthread_t thread;
    if (pthread_create(&thread, NULL, look_from_thread, &view) || pthread_join(thread, NULL)) {
        fprintf(stderr, "cannot run a thread\n");
        return 1;
    }
    expect(view.own_stack, 1, "a thread's own stack array");
    expect(view.other_stack, 0, "another thread's stack, seen from a thread");

    munmap(mapped, bytes);
    free(small);
    if (failures)
        return 1;
    printf("host ranges: stack, static, heap inside; mmap (also from a signal stack), another stack, a span past "
           "the heap outside\n");
    return 0;
}
