/*
 * How many CPUs the host copy pool can keep busy. Its workers spin while a
 * GPU call runs, so more of them than there are CPUs to run on would only
 * take turns, and beyond a CPU quota they would spend it and then stall until
 * the next period. Two limits are seen:
 *  - the calling thread's affinity mask (taskset, a container's cpuset): the
 *    threads it starts inherit that mask, so its CPUs are all they can use;
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

/* CPUs in the calling thread's mask; kernels built for more than 1024 CPUs need a larger set. */
static int cpus_in_mask(void)
{
    for (int size = 1024; size <= (1 << 20); size *= 2) {
        cpu_set_t *mask = CPU_ALLOC(size);
        if (!mask)
            break;
        const size_t bytes = CPU_ALLOC_SIZE(size);
        const int found = sched_getaffinity(0, bytes, mask) == 0;
        const int einval = !found && errno == EINVAL;
        const int count = found ? CPU_COUNT_S(bytes, mask) : 0;
        CPU_FREE(mask);
        if (found && count > 0)
            return count;
        if (!einval)
            break;
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
