/*
 * Address ranges that hold ordinary host memory for certain (host_ranges.c),
 * so that an operand inside one needs no question to the CUDA driver.
 */
#ifndef TILEDBLAS_DISPATCH_HOST_RANGES_H
#define TILEDBLAS_DISPATCH_HOST_RANGES_H

#include <stddef.h>
#include <stdint.h>

#include "core/call.h"

/* An address range, [start, end). */
typedef struct {
    uintptr_t start, end;
} tb_host_range;

/* Whether [at, at + bytes) lies inside r. */
static inline int tb_range_holds(const tb_host_range *r, uintptr_t at, size_t bytes)
{
    return at >= r->start && at < r->end && bytes <= r->end - at;
}

/* glibc's program break; the tiny call's gate opens only where it is the break (host_ranges.c). */
extern void *__curbrk __attribute__((weak));

/* For the calling thread, now: the brk heap, then (found only when needed) its stack above the
 * current frame and the program's segments. */
typedef struct {
    tb_host_range heap, stack;
    const tb_host_range *program;
    int program_segments;
    int beyond_heap_known; /* stack and program are filled in */
} tb_certain_host;

TB_TINY_PATH void tb_certain_host_ranges(tb_certain_host *where);
/* Where the brk heap starts, where its end is __curbrk; else 0. */
uintptr_t tb_heap_start_by_break_in_place(void);
/* Whether [at, at + bytes) lies in the stack or program ranges, which it fills in on first need. */
TB_TINY_PATH int tb_is_certain_host_beyond_heap(tb_certain_host *where, uintptr_t at, size_t bytes);

/*
 * Whether [p, p + bytes) is ordinary host memory by those ranges alone (a few
 * nanoseconds against ~0.3 us for the driver's answer). It may still be
 * registered (pinned): use it only where that cannot matter.
 */
static inline int tb_is_certain_host(tb_certain_host *where, const void *p, size_t bytes)
{
    const uintptr_t at = (uintptr_t)p;
    if (tb_range_holds(&where->heap, at, bytes))
        return 1;
    return tb_is_certain_host_beyond_heap(where, at, bytes);
}

#endif /* TILEDBLAS_DISPATCH_HOST_RANGES_H */
