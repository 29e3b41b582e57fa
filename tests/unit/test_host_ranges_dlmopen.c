/*
 * The certain host ranges (src/dispatch/host_ranges.c) in a library loaded
 * with dlmopen into a namespace of its own: there the libc it uses is a second
 * copy, whose program break variable is not kept current, so the heap's end
 * must come from sbrk(0). After the main program's heap shrinks, the range
 * must not run past the real break (the memory beyond is unmapped, and could
 * later be device memory). Host only: it runs on CI.
 */
#include <dlfcn.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define BLOCKS 4000

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s PROBE_MODULE\n", argv[0]);
        return 2;
    }
    void *module = dlmopen(LM_ID_NEWLM, argv[1], RTLD_NOW);
    if (!module) {
        fprintf(stderr, "FAIL: dlmopen: %s\n", dlerror());
        return 1;
    }
    uintptr_t (*heap_end)(void) = (uintptr_t (*)(void))dlsym(module, "tb_probe_heap_end");
    if (!heap_end) {
        fprintf(stderr, "FAIL: dlsym: %s\n", dlerror());
        return 1;
    }
    static void *blocks[BLOCKS];
    for (int i = 0; i < BLOCKS; i++)
        blocks[i] = malloc(10000);
    const uintptr_t grown = (uintptr_t)sbrk(0), end_grown = heap_end();
    for (int i = 0; i < BLOCKS; i++)
        free(blocks[i]);
    malloc_trim(0);
    const uintptr_t trimmed = (uintptr_t)sbrk(0), end_trimmed = heap_end();
    printf("grown: break %#lx, range end %#lx; trimmed: break %#lx, range end %#lx\n", (unsigned long)grown,
           (unsigned long)end_grown, (unsigned long)trimmed, (unsigned long)end_trimmed);
    if (trimmed >= grown) {
        printf("the heap did not shrink here: nothing to check\n");
        return 77;
    }
    if (end_grown > grown || end_trimmed > trimmed) {
        fprintf(stderr, "FAIL: the heap range runs past the program break\n");
        return 1;
    }
    printf("ok\n");
    return 0;
}
