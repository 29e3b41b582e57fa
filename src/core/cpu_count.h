/* How many CPUs the process's threads can keep busy, and which. */
#ifndef TILEDBLAS_CORE_CPU_COUNT_H
#define TILEDBLAS_CORE_CPU_COUNT_H

#include <sched.h>
#include <stddef.h>

/* The process's affinity mask (its main thread's, whichever thread asks), allocated with CPU_ALLOC
 * (CPU_FREE it), its size in *bytes; NULL where it cannot be read. */
cpu_set_t *tb_process_cpu_mask(size_t *bytes);
/* CPUs the process's threads can keep busy: the process's affinity mask, capped by a CFS quota. */
int tb_usable_cpus(void);
/* CPUs a quota allows, rounded up, from cgroup v2's cpu.max text ("200000 100000"; "max 100000": none)
 * or v1's quota and period joined by a space (a quota of -1: none); 0 for none or unreadable text. */
int tb_cpus_from_quota(const char *text);

#endif /* TILEDBLAS_CORE_CPU_COUNT_H */
