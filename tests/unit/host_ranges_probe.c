/* Loaded by test_host_ranges_dlmopen in a namespace of its own: the end of the heap range it sees. */
#include <stdint.h>

#include "dispatch/host_ranges.h"

__attribute__((visibility("default"))) uintptr_t tb_probe_heap_end(void)
{
    tb_certain_host where;
    tb_certain_host_ranges(&where);
    return where.heap.end;
}
