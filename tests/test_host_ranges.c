/*
 * The ranges that hold host memory for certain (src/host_ranges.c), which let
 * a small call skip the driver's ~0.3 us answer per operand: a stack array of
 * the caller (on the main thread and on another), a static array and a small
 * block of the main thread's malloc must be inside them; an mmap'd block,
 * another thread's stack and a span running past the heap's end must not,
 * since memory outside them can be device memory and must be asked about.
 * Host only: it runs on CI.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

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
    printf("host ranges: stack, static, heap inside; mmap, another stack, a span past the heap outside\n");
    return 0;
}
