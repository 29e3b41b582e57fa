/* How many CPUs threads started by the calling thread can keep busy. */
#ifndef TILEDBLAS_CORE_CPU_COUNT_H
#define TILEDBLAS_CORE_CPU_COUNT_H

/* CPUs threads started by the calling thread can keep busy: its affinity mask, capped by a CFS quota. */
int tb_usable_cpus(void);
/* CPUs a quota allows, rounded up, from cgroup v2's cpu.max text ("200000 100000"; "max 100000": none)
 * or v1's quota and period joined by a space (a quota of -1: none); 0 for none or unreadable text. */
int tb_cpus_from_quota(const char *text);

#endif /* TILEDBLAS_CORE_CPU_COUNT_H */
