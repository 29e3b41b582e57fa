/*
 * Strided host-to-host copies of column-major blocks, spread over a small pool
 * of threads. Pageable memory reaches the pinned staging buffers of the GPU
 * paths this way: one thread copies at ~10 GB/s, several approach the memory
 * system's bandwidth, which is what keeps the copies behind the kernels.
 *
 * Host memory bandwidth is the bound of a host-to-host call: every byte is
 * read and written by the copy and read again by the DMA. Large copies use
 * non-temporal stores, which skip reading the destination into the cache
 * first (a third of the copy's traffic), also when they come in short runs
 * (a slice of K of each column). Waking a sleeping thread costs 50-100
 * microseconds on a virtual machine, as long as copying a few megabytes: so
 * workers spin briefly after a job before sleeping, and for the whole of a GPU
 * call (a burst, which hands them a job every few hundred microseconds) they
 * are woken at its start and spin between its jobs. Spinning, they yield the
 * CPU every microsecond or so: with every CPU spinning, a thread woken or
 * preempted (the next GPU caller, a copy thread holding a piece) otherwise
 * waited for a time slice, and four threads calling at once ran at 0.92 of
 * the same calls one at a time on the H100 machine (0.96-0.99 yielding).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/call.h"
#include "core/config.h"
#include "core/cpu_count.h"
#include "gpu/host_copy.h"

#define MAX_THREADS 16
/* Below this a plain memcpy (which keeps the data in cache) is as fast. */
#define STREAMING_MIN_BYTES (256u << 10)
/* Streamed stores go out in whole 64-byte lines; a shorter run is copied plainly. */
#define STREAMING_MIN_RUN 256
/* How long an idle worker (or the caller, waiting for workers) spins before sleeping. */
#define SPIN_SECONDS 50e-6

typedef struct {
    float *dst;
    int64_t dst_ld;
    const float *src;
    int64_t src_ld;
    int64_t rows, cols;
    int combine; /* dst = src + beta * dst instead of dst = src */
    float beta;
    int streaming; /* the job is large enough for non-temporal stores */
} copy_job;

/*
 * The current job's ticket: its generation (bits 32-63), how many pieces it
 * is cut into (16-31) and the next piece to take (0-15). A thread takes a
 * piece with one compare-and-swap on the whole ticket, so a worker that wakes
 * late either takes a piece of the job that is running or finds none left,
 * and the caller waits for the pieces, never for workers that took none.
 */
_Static_assert(4 * MAX_THREADS < 0x10000, "a job's pieces fit the ticket's 16-bit fields");
#define TICKET(generation, pieces, next) ((uint64_t)(generation) << 32 | (uint64_t)(pieces) << 16 | (next))
#define TICKET_GENERATION(t) ((unsigned)((t) >> 32))
#define TICKET_PIECES(t) ((int)((t) >> 16 & 0xffff))
#define TICKET_NEXT(t) ((int)((t)&0xffff))

static struct {
    pthread_once_t once;
    pthread_mutex_t serial; /* one job at a time */
    pthread_mutex_t lock;   /* guards sleeping on `wake` and `done` */
    pthread_cond_t wake, done;
    int workers;               /* the caller takes part too: workers + 1 threads */
    _Atomic uint64_t ticket;   /* published (under `lock`) per job, after `job` is written */
    atomic_int pieces_done;    /* of the current job */
    atomic_int sleepers;       /* workers asleep on `wake` */
    atomic_int bursts;         /* bursts under way: workers spin between jobs */
    copy_job job;              /* stays unchanged until all its pieces are done */
} pool = {
    .once = PTHREAD_ONCE_INIT,
    .serial = PTHREAD_MUTEX_INITIALIZER,
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .wake = PTHREAD_COND_INITIALIZER,
    .done = PTHREAD_COND_INITIALIZER,
};

/* Spins until done() holds (1), for up to `spin` seconds unless a burst is under way (else 0). */
static int spin_until(int (*done)(void), double spin)
{
    const double start = tb_seconds_now();
    for (unsigned i = 0;; i++) { /* unsigned: a burst may keep it spinning past 2^31 */
        if (done())
            return 1;
        if ((i & 15) == 15) {
            if (tb_seconds_now() - start > spin && atomic_load(&pool.bursts) == 0)
                return 0;
            sched_yield(); /* a thread waiting for this CPU runs now, not a time slice later */
        }
#if defined(__SSE2__)
        _mm_pause();
#endif
    }
}

/*
 * memcpy, with non-temporal stores when streaming: the destination is not read
 * first. copy_part fences them once per piece: a fence per run waits for the
 * stores in flight, which made 1 KB runs (a slice of K of each column) 2.7
 * times slower on one thread (4 KB runs: 1.6).
 */
static void copy_bytes(void *dst, const void *src, size_t bytes, int streaming)
{
#if defined(__SSE2__)
    if (streaming && bytes >= STREAMING_MIN_RUN) {
        char *d = dst;
        const char *s = src;
        const size_t head = (16 - ((uintptr_t)d & 15)) & 15;
        memcpy(d, s, head);
        d += head, s += head, bytes -= head;
        for (; bytes >= 64; d += 64, s += 64, bytes -= 64) {
            const __m128i x0 = _mm_loadu_si128((const __m128i *)s), x1 = _mm_loadu_si128((const __m128i *)(s + 16));
            const __m128i x2 = _mm_loadu_si128((const __m128i *)(s + 32)), x3 = _mm_loadu_si128((const __m128i *)(s + 48));
            _mm_stream_si128((__m128i *)d, x0);
            _mm_stream_si128((__m128i *)(d + 16), x1);
            _mm_stream_si128((__m128i *)(d + 32), x2);
            _mm_stream_si128((__m128i *)(d + 48), x3);
        }
        memcpy(d, s, bytes);
        return;
    }
#else
    (void)streaming;
#endif
    memcpy(dst, src, bytes);
}

/* One contiguous run of `count` elements of the job. */
static void move_run(const copy_job *job, float *dst, const float *src, int64_t count)
{
    if (!job->combine) {
        copy_bytes(dst, src, (size_t)count * sizeof(float), job->streaming);
        return;
    }
    const float beta = job->beta;
    for (int64_t i = 0; i < count; i++)
        dst[i] = src[i] + beta * dst[i];
}

/*
 * Part `part` of `parts`: one contiguous range when both blocks are dense (large
 * copies fastest), else whole columns when there are enough, else
 * slices of each column.
 */
static void move_runs(const copy_job *job, int part, int parts)
{
    if (job->src_ld == job->rows && job->dst_ld == job->rows) {
        const int64_t total = job->rows * job->cols;
        const int64_t e0 = total * part / parts, e1 = total * (part + 1) / parts;
        move_run(job, job->dst + e0, job->src + e0, e1 - e0);
        return;
    }
    if (job->cols >= parts) {
        const int64_t c0 = job->cols * part / parts, c1 = job->cols * (part + 1) / parts;
        for (int64_t j = c0; j < c1; j++)
            move_run(job, job->dst + j * job->dst_ld, job->src + j * job->src_ld, job->rows);
        return;
    }
    const int64_t r0 = job->rows * part / parts, r1 = job->rows * (part + 1) / parts;
    for (int64_t j = 0; j < job->cols; j++)
        move_run(job, job->dst + j * job->dst_ld + r0, job->src + j * job->src_ld + r0, r1 - r0);
}

static void copy_part(const copy_job *job, int part, int parts)
{
    move_runs(job, part, parts);
#if defined(__SSE2__)
    if (job->streaming)
        _mm_sfence(); /* streamed stores are visible to other threads (and the DMA) from here */
#endif
}

/*
 * Pieces are taken in turn rather than dealt out, so a thread the scheduler
 * pauses holds up one small piece, not a whole share of the job.
 */
static void copy_pieces(void)
{
    uint64_t t = atomic_load(&pool.ticket);
    while (TICKET_NEXT(t) < TICKET_PIECES(t)) {
        if (!atomic_compare_exchange_weak(&pool.ticket, &t, t + 1))
            continue; /* t now holds the current ticket */
        /* The piece is ours, so its job cannot finish, nor `job` change, before we are done. */
        const int pieces = TICKET_PIECES(t);
        copy_part(&pool.job, TICKET_NEXT(t), pieces);
        if (atomic_fetch_add(&pool.pieces_done, 1) + 1 == pieces) {
            pthread_mutex_lock(&pool.lock);
            pthread_cond_signal(&pool.done);
            pthread_mutex_unlock(&pool.lock);
        }
        t = atomic_load(&pool.ticket);
    }
}

static _Thread_local unsigned worker_seen; /* the last generation this worker looked at */

static int new_job(void)
{
    return TICKET_GENERATION(atomic_load(&pool.ticket)) != worker_seen;
}

static int pieces_left; /* of the caller's job (pool.serial held) */

static int job_finished(void)
{
    return atomic_load(&pool.pieces_done) == pieces_left;
}

static void *worker_main(void *arg)
{
    (void)arg;
    for (;;) {
        if (!spin_until(new_job, SPIN_SECONDS)) {
            pthread_mutex_lock(&pool.lock);
            atomic_fetch_add(&pool.sleepers, 1);
            while (!new_job() && atomic_load(&pool.bursts) == 0)
                pthread_cond_wait(&pool.wake, &pool.lock);
            atomic_fetch_sub(&pool.sleepers, 1);
            pthread_mutex_unlock(&pool.lock);
            if (!new_job()) /* woken for a burst: wait for its first job spinning */
                continue;
        }
        worker_seen = TICKET_GENERATION(atomic_load(&pool.ticket));
        copy_pieces();
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
    atomic_store(&pool.sleepers, 0);
    atomic_store(&pool.bursts, 0);
}

/*
 * Default: every CPU the pool can keep busy (core/cpu_count.c). The host
 * copies bound a GPU call on host memory, and its caller waits for them
 * anyway; at 4096^3 on the H100 machine 16 threads took 4.5 ms a call against
 * 8's 5.3.
 */
int tb_host_copy_threads(void)
{
    const int wanted = tb_config_get()->copy_threads, threads = wanted > 0 ? wanted : tb_usable_cpus();
    return threads > MAX_THREADS ? MAX_THREADS : threads;
}

/*
 * The workers run on the process's CPUs, not on those of the thread whose
 * first call starts the pool (a thread would pass its own mask on): an
 * application's thread pinned to one CPU must not confine every copy there.
 */
static void start_pool(void)
{
    const int wanted = tb_host_copy_threads();
    pthread_atfork(NULL, NULL, after_fork_in_child);
    pthread_attr_t attributes;
    const int have_attributes = pthread_attr_init(&attributes) == 0;
    size_t mask_bytes = 0;
    cpu_set_t *mask = have_attributes ? tb_process_cpu_mask(&mask_bytes) : NULL;
    /* Where the mask cannot be read, they inherit the caller's. */
    if (mask)
        pthread_attr_setaffinity_np(&attributes, mask_bytes, mask);
    for (int i = 0; i < wanted - 1; i++) {
        pthread_t thread;
        if (pthread_create(&thread, have_attributes ? &attributes : NULL, worker_main, NULL) != 0)
            break;
        pthread_detach(thread);
        pool.workers++;
    }
    if (mask)
        CPU_FREE(mask);
    if (have_attributes)
        pthread_attr_destroy(&attributes);
}

static void run_job(copy_job job)
{
    const int64_t rows = job.rows, cols = job.cols;
    const size_t bytes = (size_t)rows * (size_t)cols * sizeof(float);
    job.streaming = bytes >= STREAMING_MIN_BYTES;
    if (bytes < TB_HOST_COPY_POOL_MIN_BYTES) {
        copy_part(&job, 0, 1);
        return;
    }
    pthread_once(&pool.once, start_pool);
    pthread_mutex_lock(&pool.serial);
    /* Four pieces per thread, none under 256 KB (the non-temporal threshold). */
    const int64_t by_size = (int64_t)(bytes / STREAMING_MIN_BYTES);
    const int64_t wanted = 4 * (int64_t)(pool.workers + 1);
    pieces_left = (int)(by_size < wanted ? (by_size > 1 ? by_size : 1) : wanted);
    pool.job = job;
    atomic_store(&pool.pieces_done, 0);
    pthread_mutex_lock(&pool.lock);
    const unsigned generation = TICKET_GENERATION(atomic_load(&pool.ticket)) + 1;
    atomic_store(&pool.ticket, TICKET(generation, pieces_left, 0));
    if (atomic_load(&pool.sleepers) > 0)
        pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.lock);

    copy_pieces();

    if (!spin_until(job_finished, SPIN_SECONDS)) {
        pthread_mutex_lock(&pool.lock);
        while (!job_finished())
            pthread_cond_wait(&pool.done, &pool.lock);
        pthread_mutex_unlock(&pool.lock);
    }
    pthread_mutex_unlock(&pool.serial);
}

void tb_host_copy(float *dst, int64_t dst_ld, const float *src, int64_t src_ld, int64_t rows,
                  int64_t cols)
{
    run_job((copy_job){.dst = dst, .dst_ld = dst_ld, .src = src, .src_ld = src_ld, .rows = rows, .cols = cols});
}

void tb_host_combine(float *dst, int64_t dst_ld, const float *src, int64_t src_ld, int64_t rows,
                     int64_t cols, float beta)
{
    run_job((copy_job){.dst = dst, .dst_ld = dst_ld, .src = src, .src_ld = src_ld, .rows = rows, .cols = cols,
                       .combine = 1, .beta = beta});
}

void tb_host_copy_burst(int begin)
{
    if (!begin) {
        atomic_fetch_sub(&pool.bursts, 1);
        return;
    }
    pthread_once(&pool.once, start_pool);
    if (atomic_fetch_add(&pool.bursts, 1) == 0 && atomic_load(&pool.sleepers) > 0) {
        pthread_mutex_lock(&pool.lock);
        pthread_cond_broadcast(&pool.wake);
        pthread_mutex_unlock(&pool.lock);
    }
}
