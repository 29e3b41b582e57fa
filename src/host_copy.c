/*
 * Strided host-to-host copies of column-major blocks, spread over a small pool
 * of threads. Pageable memory reaches the pinned staging buffers of the GPU
 * pipeline this way: one thread copies at ~10 GB/s, several approach the
 * memory system's bandwidth, which is what keeps the copies behind the kernels.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* Below this a single thread is faster than waking the pool (~10 us against ~50 us of copying). */
#define PARALLEL_MIN_BYTES (512u << 10)
#define MAX_THREADS 16

typedef struct {
    float *dst;
    int64_t dst_ld;
    const float *src;
    int64_t src_ld;
    int64_t rows, cols;
} copy_job;

static struct {
    pthread_once_t once;
    pthread_mutex_t serial; /* one job at a time */
    pthread_mutex_t lock;
    pthread_cond_t wake, done;
    int workers;          /* the caller takes part too: workers + 1 parts */
    unsigned generation;  /* bumped per job; workers wait for a new one */
    int pending;          /* workers still copying the current job */
    copy_job job;
} pool = {
    .once = PTHREAD_ONCE_INIT,
    .serial = PTHREAD_MUTEX_INITIALIZER,
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .wake = PTHREAD_COND_INITIALIZER,
    .done = PTHREAD_COND_INITIALIZER,
};

/*
 * Part `part` of `parts`: one contiguous range when both blocks are dense (large
 * memcpys use streaming stores), else whole columns when there are enough, else
 * slices of each column.
 */
static void copy_part(const copy_job *job, int part, int parts)
{
    const size_t elem = sizeof(float);
    if (job->src_ld == job->rows && job->dst_ld == job->rows) {
        const int64_t total = job->rows * job->cols;
        const int64_t e0 = total * part / parts, e1 = total * (part + 1) / parts;
        memcpy(job->dst + e0, job->src + e0, (size_t)(e1 - e0) * elem);
        return;
    }
    if (job->cols >= parts) {
        const int64_t c0 = job->cols * part / parts, c1 = job->cols * (part + 1) / parts;
        for (int64_t j = c0; j < c1; j++)
            memcpy(job->dst + j * job->dst_ld, job->src + j * job->src_ld, (size_t)job->rows * elem);
        return;
    }
    const int64_t r0 = job->rows * part / parts, r1 = job->rows * (part + 1) / parts;
    for (int64_t j = 0; j < job->cols; j++)
        memcpy(job->dst + j * job->dst_ld + r0, job->src + j * job->src_ld + r0,
               (size_t)(r1 - r0) * elem);
}

typedef struct {
    int index;
} worker_arg;

static void *worker_main(void *arg)
{
    const int index = ((worker_arg *)arg)->index;
    free(arg);
    unsigned seen = 0;
    for (;;) {
        pthread_mutex_lock(&pool.lock);
        while (pool.generation == seen)
            pthread_cond_wait(&pool.wake, &pool.lock);
        seen = pool.generation;
        const copy_job job = pool.job;
        const int parts = pool.workers + 1;
        pthread_mutex_unlock(&pool.lock);

        copy_part(&job, index + 1, parts);

        pthread_mutex_lock(&pool.lock);
        if (--pool.pending == 0)
            pthread_cond_signal(&pool.done);
        pthread_mutex_unlock(&pool.lock);
    }
    return NULL;
}

/* A forked child has none of the parent's workers, and no thread holds its locks: it copies alone. */
static void after_fork_in_child(void)
{
    pthread_mutex_init(&pool.serial, NULL);
    pthread_mutex_init(&pool.lock, NULL);
    pthread_cond_init(&pool.wake, NULL);
    pthread_cond_init(&pool.done, NULL);
    pool.workers = 0;
    pool.pending = 0;
}

static void start_pool(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int wanted = tb_config_get()->copy_threads;
    if (wanted <= 0) /* default: half the CPUs, the rest stay for the application */
        wanted = cpus > 1 ? (int)(cpus / 2) : 1;
    wanted = wanted > MAX_THREADS ? MAX_THREADS : wanted;
    pthread_atfork(NULL, NULL, after_fork_in_child);
    for (int i = 0; i < wanted - 1; i++) {
        worker_arg *arg = malloc(sizeof *arg);
        pthread_t thread;
        if (!arg)
            break;
        arg->index = pool.workers;
        if (pthread_create(&thread, NULL, worker_main, arg) != 0) {
            free(arg);
            break;
        }
        pthread_detach(thread);
        pool.workers++;
    }
}

void tb_host_copy(float *dst, int64_t dst_ld, const float *src, int64_t src_ld, int64_t rows,
                  int64_t cols)
{
    const copy_job job = {dst, dst_ld, src, src_ld, rows, cols};
    if ((size_t)rows * (size_t)cols * sizeof(float) < PARALLEL_MIN_BYTES) {
        copy_part(&job, 0, 1);
        return;
    }
    pthread_once(&pool.once, start_pool);
    pthread_mutex_lock(&pool.serial);
    pthread_mutex_lock(&pool.lock);
    const int parts = pool.workers + 1;
    pool.job = job;
    pool.pending = pool.workers;
    pool.generation++;
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.lock);

    copy_part(&job, 0, parts);

    pthread_mutex_lock(&pool.lock);
    while (pool.pending > 0)
        pthread_cond_wait(&pool.done, &pool.lock);
    pthread_mutex_unlock(&pool.lock);
    pthread_mutex_unlock(&pool.serial);
}
