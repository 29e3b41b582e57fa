/*
 * Address ranges that hold ordinary host memory for certain, so that an
 * operand inside one needs no question to the CUDA driver: once CUDA is
 * loaded, the three queries of a 16^3 call cost 0.6-1.0 us on the H100
 * machine, as much as the SGEMM itself on the CPU. Device and managed
 * allocations are mappings of their own, never inside these:
 *   - the brk heap, where malloc puts the main thread's small blocks (looked
 *     at first; the others only for an operand outside it);
 *   - the calling thread's stack, from the current frame up to its top (all of
 *     it live, so no other mapping can sit there), where the frame is on that
 *     stack (not on a coroutine's or a signal stack, from where "up to the
 *     top" would span other mappings);
 *   - the program's own loaded segments (static and global arrays), which stay
 *     mapped for the life of the process.
 * Such memory may still be registered (pinned), so the ranges stand in for the
 * driver only where that cannot matter. Other memory (mmap'd blocks, other
 * threads' malloc arenas) is asked about.
 *
 * Finding the ranges allocates (pthread_getattr_np, /proc/self/maps). A
 * forked child keeps what its parent had found, and leaves unknown what it
 * had not: in the child of a threaded process an allocator may wait forever
 * on a lock that another of the parent's threads held at the fork (glibc's
 * malloc guards against that; others, AddressSanitizer's among them, do not).
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dispatch/host_ranges.h"

/* Executables have 2-5 loadable segments; a program with more is only asked about more often. */
#define MAX_SEGMENTS 8

static struct {
    pthread_once_t once;
    atomic_int found; /* the fields below are final */
    uintptr_t heap_start; /* the [heap] line, or the break itself while there is no heap yet; 0 unknown */
    int break_in_place;   /* __curbrk is the break (program_break) */
    int segments;
    tb_host_range program[MAX_SEGMENTS];
} fixed = {.once = PTHREAD_ONCE_INIT};

/*
 * glibc's program break (__curbrk, declared weak in host_ranges.h: NULL where
 * the C library has no such symbol), read in place: it is what sbrk(0)
 * returns, without the call through the PLT into a page of libc's code that a
 * tiny call would touch for nothing else. Only the libc of the initial
 * namespace keeps it current: in another (dlmopen), sbrk(0) asks the kernel.
 */
static uintptr_t program_break(void)
{
    if (fixed.break_in_place) {
        void *const now = __atomic_load_n(&__curbrk, __ATOMIC_RELAXED);
        if (now)
            return (uintptr_t)now;
    }
    return (uintptr_t)sbrk(0);
}

/* Whether this library, and so the libc it uses, was loaded in the initial namespace. */
static int in_initial_namespace(void)
{
#ifdef LM_ID_BASE /* namespaces: glibc */
    Dl_info info;
    struct link_map *map = NULL;
    Lmid_t namespace;
    return dladdr1((void *)&fixed, &info, (void **)&map, RTLD_DL_LINKMAP) && map &&
           dlinfo(map, RTLD_DI_LMID, &namespace) == 0 && namespace == LM_ID_BASE;
#else
    return 1; /* a C library without namespaces (nor, then, dlmopen) */
#endif
}

/* The calling thread's stack, [0, 0) unknown; found when first needed. */
static _Thread_local tb_host_range thread_stack;
static _Thread_local int stack_asked;

static uintptr_t find_heap_start(void)
{
    const uintptr_t brk_now = (uintptr_t)sbrk(0);
    if (brk_now == (uintptr_t)-1)
        return 0;
    FILE *maps = fopen("/proc/self/maps", "r");
    if (!maps)
        return 0;
    char *line = NULL;
    size_t size = 0;
    ssize_t length;
    uintptr_t start = brk_now;
    /* Whole lines, the name field (after five others) exactly [heap]: files' paths are absolute. */
    while ((length = getline(&line, &size, maps)) > 0) {
        unsigned long lo;
        int name = 0;
        if (sscanf(line, "%lx-%*x %*s %*s %*s %*s %n", &lo, &name) == 1 && name > 0 &&
            strcmp(line + name, "[heap]\n") == 0) {
            start = (uintptr_t)lo;
            break;
        }
    }
    free(line);
    fclose(maps);
    return start;
}

/* dl_iterate_phdr visitor: the first object is the program itself. */
static int note_program_segments(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size, (void)data;
    for (int i = 0; i < info->dlpi_phnum && fixed.segments < MAX_SEGMENTS; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && ph->p_memsz > 0)
            fixed.program[fixed.segments++] =
                (tb_host_range){info->dlpi_addr + ph->p_vaddr, info->dlpi_addr + ph->p_vaddr + ph->p_memsz};
    }
    return 1;
}

static void find_fixed_ranges(void)
{
    fixed.break_in_place = &__curbrk && in_initial_namespace();
    fixed.heap_start = find_heap_start();
    dl_iterate_phdr(note_program_segments, NULL);
    atomic_store_explicit(&fixed.found, 1, memory_order_release);
}

static void find_fixed_ranges_once(void)
{
    if (!atomic_load_explicit(&fixed.found, memory_order_acquire)) /* one pthread_once call less per SGEMM */
        pthread_once(&fixed.once, find_fixed_ranges);
}

static tb_host_range find_thread_stack(void)
{
    pthread_attr_t attr;
    void *low = NULL;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return (tb_host_range){0, 0};
    const int known = pthread_attr_getstack(&attr, &low, &size) == 0;
    pthread_attr_destroy(&attr);
    return known ? (tb_host_range){(uintptr_t)low, (uintptr_t)low + size} : (tb_host_range){0, 0};
}

/*
 * In a forked child, whose one thread is a copy of the one that forked: the
 * ranges the parent had not found yet stay unknown (none), so that they are
 * never looked for there. Operands outside the known ranges are asked about.
 */
static void after_fork_in_child(void)
{
    if (!atomic_load_explicit(&fixed.found, memory_order_relaxed)) {
        fixed.break_in_place = 0;
        fixed.heap_start = 0;
        fixed.segments = 0;
        atomic_store_explicit(&fixed.found, 1, memory_order_release);
    }
    stack_asked = 1;
}

__attribute__((constructor)) static void register_fork_handler(void)
{
    pthread_atfork(NULL, NULL, after_fork_in_child);
}

void tb_certain_host_ranges(tb_certain_host *where)
{
    find_fixed_ranges_once();
    const uintptr_t brk_now = program_break();
    const int heap_known = fixed.heap_start && brk_now != (uintptr_t)-1;
    *where = (tb_certain_host){.heap = {heap_known ? fixed.heap_start : 0, heap_known ? brk_now : 0}};
}

uintptr_t tb_heap_start_by_break_in_place(void)
{
    find_fixed_ranges_once();
    return fixed.break_in_place ? fixed.heap_start : 0;
}

/* Not inlined: its frame is below the caller's, so [frame, top) holds every frame above. */
__attribute__((noinline)) int tb_is_certain_host_beyond_heap(tb_certain_host *where, uintptr_t at, size_t bytes)
{
    if (!where->beyond_heap_known) {
        if (!stack_asked) {
            thread_stack = find_thread_stack();
            stack_asked = 1;
        }
        /* Everything from this frame up is live stack: the caller's arrays are in it. */
        const uintptr_t here = (uintptr_t)__builtin_frame_address(0);
        const int on_it = tb_range_holds(&thread_stack, here, 1);
        where->stack = (tb_host_range){on_it ? here : 0, on_it ? thread_stack.end : 0};
        where->program = fixed.program;
        where->program_segments = fixed.segments;
        where->beyond_heap_known = 1;
    }
    if (tb_range_holds(&where->stack, at, bytes))
        return 1;
    for (int i = 0; i < where->program_segments; i++)
        if (tb_range_holds(&where->program[i], at, bytes))
            return 1;
    return 0;
}
