/*
 * The host copy pool (src/gpu/host_copy.c) belongs to the process, whichever
 * thread starts it: started by a thread pinned to one CPU, it must still take
 * as many threads as the process's mask allows (the main thread's; at most 16),
 * and its workers must run on the process's CPUs, not on the caller's one.
 * Host only: it runs on CI. Exits 77 where the process has fewer than two
 * usable CPUs: pinned or not, the pool then has one thread.
 */
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/cpu_count.h"
#include "gpu/host_copy.h"

/* The configuration the pool reads: copy_threads 0, the usable CPUs. */
static tb_config config;

const tb_config *tb_config_get(void)
{
    return &config;
}

static int failures;

static void fail(const char *what)
{
    printf("FAIL: %s\n", what);
    failures++;
}

/* A thread's "Cpus_allowed_list:" line from /proc (the CPUs it may run on), or "" if unreadable. */
static void allowed_cpus(const char *task, char *list, size_t size)
{
    char path[96], line[256];
    snprintf(path, sizeof path, "/proc/self/task/%s/status", task);
    list[0] = '\0';
    FILE *file = fopen(path, "re");
    if (!file)
        return;
    while (fgets(line, sizeof line, file))
        if (strncmp(line, "Cpus_allowed_list:", 18) == 0)
            snprintf(list, size, "%s", line + 18);
    fclose(file);
}

typedef struct {
    int first_cpu;
    int usable; /* tb_usable_cpus() as the pinned thread sees it */
} pinned_caller;

/* Pins itself to one CPU, then starts the pool with a copy large enough to use it. */
static void *call_pinned(void *arg)
{
    pinned_caller *caller = arg;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(caller->first_cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) {
        fail("sched_setaffinity to one CPU");
        return NULL;
    }
    caller->usable = tb_usable_cpus();
    const int64_t rows = 1024, cols = 512; /* 2 MB: above the pool's threshold */
    float *src = malloc((size_t)(rows * cols) * sizeof(float)), *dst = malloc((size_t)(rows * cols) * sizeof(float));
    if (!src || !dst) {
        fail("malloc");
        exit(1);
    }
    for (int64_t i = 0; i < rows * cols; i++)
        src[i] = (float)i;
    tb_host_copy(dst, rows, src, rows, rows, cols);
    if (memcmp(dst, src, (size_t)(rows * cols) * sizeof(float)) != 0)
        fail("the copy made from the pinned thread differs from its source");
    free(src);
    free(dst);
    return NULL;
}

int main(void)
{
    const int process_cpus = tb_usable_cpus();
    if (process_cpus < 2) {
        printf("SKIP: the process has %d usable CPU\n", process_cpus);
        return 77;
    }
    cpu_set_t all;
    if (sched_getaffinity(0, sizeof all, &all) != 0) {
        printf("SKIP: the mask does not fit a cpu_set_t\n");
        return 77;
    }
    pinned_caller caller = {0, 0};
    while (!CPU_ISSET(caller.first_cpu, &all))
        caller.first_cpu++;
    char self_task[32], main_cpus[256];
    snprintf(self_task, sizeof self_task, "%d", (int)getpid());
    allowed_cpus(self_task, main_cpus, sizeof main_cpus);

    pthread_t thread;
    if (pthread_create(&thread, NULL, call_pinned, &caller) != 0 || pthread_join(thread, NULL) != 0) {
        fail("pthread_create");
        return 1;
    }
    if (caller.usable != process_cpus) {
        printf("usable CPUs seen from a thread pinned to one: %d, from the main thread: %d\n", caller.usable,
               process_cpus);
        fail("a pinned thread's mask counted as the process's");
    }

    /* The pool's workers are every thread but the main one (the pinned caller has exited). */
    const int wanted = tb_host_copy_threads(), expected_workers = wanted - 1;
    int workers = 0;
    DIR *tasks = opendir("/proc/self/task");
    if (!tasks) {
        fail("opendir /proc/self/task");
        return 1;
    }
    for (struct dirent *entry; (entry = readdir(tasks));) {
        if (entry->d_name[0] == '.' || strcmp(entry->d_name, self_task) == 0)
            continue;
        workers++;
        char cpus[256];
        allowed_cpus(entry->d_name, cpus, sizeof cpus);
        if (strcmp(cpus, main_cpus) != 0) {
            printf("worker %s runs on CPUs %s", entry->d_name, cpus);
            printf("the process's CPUs: %s", main_cpus);
            fail("a worker runs on the first caller's CPUs, not the process's");
        }
    }
    closedir(tasks);
    if (workers != expected_workers) {
        printf("%d workers, expected %d (%d threads with the caller)\n", workers, expected_workers, wanted);
        fail("the pool was sized from the first caller's mask");
    }
    if (failures) {
        printf("%d failures\n", failures);
        return 1;
    }
    printf("copy pool: %d threads on the process's CPUs (%d usable), started from a thread pinned to CPU %d\n",
           wanted, process_cpus, caller.first_cpu);
    return 0;
}
