/*
 * A forked child's small SGEMMs on host memory allocate nothing. In the
 * child of a threaded process an allocator may wait forever on a lock that
 * one of the parent's other threads held at the fork (glibc's malloc guards
 * against that, AddressSanitizer's does not), so the child's calls must not
 * need one. Each child counts the allocations its calls make, on operands on
 * its stack, in the brk heap and in the program's static data. The parent's
 * main thread forks before it has made any call, as a program that only its
 * children compute with would (the CPU BLAS must then be the built-in loop:
 * finding another loads it); with TB_FORK_ALLOC_PARENT_CALL=1 it makes one
 * call first, and the CPU BLAS may be any.
 *
 * The test replaces malloc and its kin by counting wrappers around glibc's
 * own: under a sanitizer, whose allocator they would bypass, it skips (77).
 */
#include "testutil.h"
#include "tiledblas.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)

int main(void)
{
    printf("SKIP: the counting allocator cannot stand beside a sanitizer's\n");
    return 77;
}

#else

#define N 16

/* glibc's allocator under the names it exports besides the standard ones. */
extern void *__libc_malloc(size_t bytes);
extern void *__libc_calloc(size_t count, size_t bytes);
extern void *__libc_realloc(void *p, size_t bytes);
extern void *__libc_memalign(size_t alignment, size_t bytes);
extern void __libc_free(void *p);

static atomic_int counting, allocations;

static void count(void)
{
    if (atomic_load_explicit(&counting, memory_order_relaxed))
        atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
}

void *malloc(size_t bytes)
{
    count();
    return __libc_malloc(bytes);
}

void *calloc(size_t count_, size_t bytes)
{
    count();
    return __libc_calloc(count_, bytes);
}

void *realloc(void *p, size_t bytes)
{
    count();
    return __libc_realloc(p, bytes);
}

void *memalign(size_t alignment, size_t bytes)
{
    count();
    return __libc_memalign(alignment, bytes);
}

void *aligned_alloc(size_t alignment, size_t bytes)
{
    count();
    return __libc_memalign(alignment, bytes);
}

int posix_memalign(void **p, size_t alignment, size_t bytes)
{
    count();
    if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment % sizeof(void *) != 0)
        return EINVAL;
    void *block = __libc_memalign(alignment, bytes);
    if (!block)
        return ENOMEM;
    *p = block;
    return 0;
}

void free(void *p)
{
    __libc_free(p);
}

static float static_a[N * N], static_b[N * N], static_c[N * N];

/* C = A*B with A and B all ones is K everywhere; the allocations the call made. */
static int counted_call(float *a, float *b, float *c, const char *where)
{
    for (int i = 0; i < N * N; i++)
        a[i] = b[i] = 1.0f, c[i] = -1.0f;
    atomic_store(&allocations, 0);
    atomic_store(&counting, 1);
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, a, N, b, N, 0.0f, c, N);
    atomic_store(&counting, 0);
    const int made = atomic_load(&allocations);
    int wrong = 0;
    for (int i = 0; i < N * N; i++)
        wrong += c[i] != (float)N;
    if (made != 0 || wrong != 0)
        fprintf(stderr, "operands %s: %d allocations, %d wrong elements\n", where, made, wrong);
    return made == 0 && wrong == 0;
}

static int child_calls(void)
{
    float a[N * N], b[N * N], c[N * N];
    float *heap = __libc_malloc(3 * N * N * sizeof(float));
    if (!heap)
        return 0;
    int ok = counted_call(a, b, c, "on the stack");
    ok &= counted_call(heap, heap + N * N, heap + 2 * N * N, "in the heap");
    ok &= counted_call(static_a, static_b, static_c, "in static data");
    /* The second time round too: nothing the first calls found may need an allocation later. */
    ok &= counted_call(a, b, c, "on the stack, again");
    __libc_free(heap);
    return ok;
}

int main(void)
{
    const int forks = 3;
    int failed = 0;
    const char *parent_call = getenv("TB_FORK_ALLOC_PARENT_CALL");
    if (parent_call && strcmp(parent_call, "1") == 0) {
        /* Its allocations (finding the CPU BLAS and the ranges) are the parent's: only C is checked. */
        float a[N * N], b[N * N], c[N * N];
        for (int i = 0; i < N * N; i++)
            a[i] = b[i] = 1.0f, c[i] = -1.0f;
        cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, a, N, b, N, 0.0f, c, N);
        for (int i = 0; i < N * N; i++)
            if (c[i] != (float)N) {
                fprintf(stderr, "the parent's call computed a wrong result\nFAIL\n");
                return 1;
            }
    }
    for (int f = 0; f < forks; f++) {
        const pid_t child = tb_fork_child(30);
        if (child == 0)
            _exit(child_calls() ? 0 : 1);
        int status = 0;
        if (waitpid(child, &status, 0) != child) {
            perror("waitpid");
            return 1;
        }
        failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    printf("%d forked children called with the counting allocator: %d failed\n%s\n", forks, failed,
           failed ? "FAIL" : "PASS");
    return failed ? 1 : 0;
}

#endif
