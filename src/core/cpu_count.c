/*
 * How many CPUs the host copy pool can keep busy, and which. Its workers spin
 * while a GPU call runs, so more of them than there are CPUs to run on would
 * only take turns, and beyond a CPU quota they would spend it and then stall
 * until the next period. Two limits are seen:
 *  - the process's affinity mask (taskset, a container's cpuset), as its main
 *    thread has it: the first caller may be a thread the application pinned to
 *    one CPU, whose mask says nothing of the process's;
 *  - a CFS quota (docker --cpus, a Kubernetes CPU limit), which leaves the
 *    mask whole: cgroup v2's cpu.max, else v1's cpu.cfs_quota_us over
 *    cpu.cfs_period_us, as the process's own cgroup mount shows them.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cpu_count.h"

/* The main thread's mask (its thread id is the process id); the calling thread's once it has exited.
 * Kernels built for more than 1024 CPUs need a larger set than cpu_set_t. */
cpu_set_t *tb_process_cpu_mask(size_t *bytes)
{
    for (int size = 1024; size <= (1 << 20); size *= 2) {
        cpu_set_t *mask = CPU_ALLOC(size);
        if (!mask)
            return NULL;
        *bytes = CPU_ALLOC_SIZE(size);
        int found = sched_getaffinity(getpid(), *bytes, mask) == 0;
        if (!found && errno == ESRCH)
            found = sched_getaffinity(0, *bytes, mask) == 0;
        if (found && CPU_COUNT_S(*bytes, mask) > 0)
            return mask;
        const int too_small = !found && errno == EINVAL;
        CPU_FREE(mask);
        if (!too_small)
            break;
    }
    return NULL;
}

/* CPUs in the process's mask; the online CPUs where it cannot be read. */
static int cpus_in_mask(void)
{
    size_t bytes;
    cpu_set_t *mask = tb_process_cpu_mask(&bytes);
    if (mask) {
        const int count = CPU_COUNT_S(bytes, mask);
        CPU_FREE(mask);
        return count;
    }
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 1 ? (int)online : 1;
}

int tb_cpus_from_quota(const char *text)
{
    char *end;
    if (!text || strncmp(text, "max", 3) == 0)
        return 0;
    const long long quota = strtoll(text, &end, 10);
    if (end == text || quota <= 0)
        return 0;
    const char *rest = end;
    const long long period = strtoll(rest, &end, 10);
    if (end == rest || period <= 0)
        return 0;
    const long long cpus = (quota + period - 1) / period;
    return cpus > 1 << 20 ? 1 << 20 : (int)cpus;
}

/* The first line of a small file, without its newline; 0 if it cannot be read. */
static int read_line(const char *path, char *line, size_t size)
{
    FILE *file = fopen(path, "re");
    if (!file)
        return 0;
    const int read = fgets(line, (int)size, file) != NULL;
    fclose(file);
    if (read)
        line[strcspn(line, "\n")] = '\0';
    return read;
}

/* CPUs the CFS quota allows (rounded up), 0 where there is none or none is visible. */
static int cpus_by_quota(void)
{
    char line[64], quota[32], period[32];
    if (read_line("/sys/fs/cgroup/cpu.max", line, sizeof line))
        return tb_cpus_from_quota(line);
    if (!read_line("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", quota, sizeof quota) ||
        !read_line("/sys/fs/cgroup/cpu/cpu.cfs_period_us", period, sizeof period))
        return 0;
    snprintf(line, sizeof line, "%s %s", quota, period);
    return tb_cpus_from_quota(line);
}

int tb_usable_cpus(void)
{
    const int mask = cpus_in_mask(), quota = cpus_by_quota();
    return quota > 0 && quota < mask ? quota : mask;
}
