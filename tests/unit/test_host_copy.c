/*
 * The host copy pool (src/gpu/host_copy.c), which moves every operand of a GPU
 * call on host memory between the caller's memory and pinned staging, here
 * on plain memory: strided and dense blocks, the three ways a job is cut
 * (one dense range, whole columns, slices of every column), sizes below and
 * above the pool's and the non-temporal stores' thresholds, unaligned
 * destinations, beta*C added on the way, and four threads handing it jobs at
 * once, inside and outside a burst. Every element of the block must equal
 * src (copies) or src + beta*dst (combines: the data make that exact in
 * float), and every element before, between and after the block columns must
 * be untouched. The pool's size follows the configured count
 * (TILEDBLAS_COPY_THREADS), else the usable CPUs (src/core/cpu_count.c), which
 * must count a one-CPU affinity mask as one and read CFS quotas right.
 * Host only: it runs on CI.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/cpu_count.h"
#include "gpu/host_copy.h"

/* The configuration the pool reads: only copy_threads matters to it. */
static tb_config config;

const tb_config *tb_config_get(void)
{
    return &config;
}

#define GUARD -7.25f
/* Floats after the last column, which no job may reach. */
#define TAIL 64
static int failures;

static void fail(const char *what, const char *detail)
{
    if (failures++ < 20)
        printf("FAIL: %s: %s\n", what, detail);
}

/* Element i of buffer `seed`: a multiple of 1/64 below 163 in magnitude, so src + beta*dst is exact
 * in float for the betas used here (1.25, -0.5) and any rounding error would show. */
static float value(uint32_t seed, int64_t i)
{
    uint32_t x = (uint32_t)i * 2654435761u ^ seed * 40503u;
    x ^= x >> 15;
    return (float)(x % 20011u) / 64.0f - 150.0f;
}

/*
 * One job: a rows x cols block with leading dimensions src_ld and dst_ld, the
 * destination `offset` floats past a 64-byte boundary; combine: dst = src +
 * beta*dst. Checked against the same arithmetic here.
 */
static void check_job(int64_t rows, int64_t cols, int64_t src_ld, int64_t dst_ld, int offset, int combine,
                      float beta, uint32_t seed)
{
    const int64_t src_n = src_ld * cols, dst_n = offset + dst_ld * cols + TAIL;
    float *src = malloc((size_t)src_n * sizeof *src), *dst_base = NULL, *before = malloc((size_t)dst_n * sizeof *before);
    if (!src || !before || posix_memalign((void **)&dst_base, 64, (size_t)dst_n * sizeof *dst_base) != 0) {
        fail("allocation", "out of memory");
        free(src), free(before), free(dst_base);
        return;
    }
    float *dst = dst_base + offset;
    for (int64_t i = 0; i < src_n; i++)
        src[i] = value(seed, i);
    for (int64_t i = 0; i < dst_n; i++)
        dst_base[i] = before[i] = value(seed + 1, i);
    /* Rows past the block in each column stay as they were: mark them. */
    for (int64_t j = 0; j < cols; j++)
        for (int64_t i = rows; i < dst_ld; i++)
            dst[i + j * dst_ld] = before[offset + i + j * dst_ld] = GUARD;
    if (combine)
        tb_host_combine(dst, dst_ld, src, src_ld, rows, cols, beta);
    else
        tb_host_copy(dst, dst_ld, src, src_ld, rows, cols);

    int64_t wrong = 0, first = -1;
    for (int64_t i = 0; i < dst_n; i++) /* before the block and after it */
        if ((i < offset || i >= offset + dst_ld * cols) && dst_base[i] != before[i])
            wrong++, first = first < 0 ? i : first;
    for (int64_t j = 0; j < cols; j++)
        for (int64_t i = 0; i < dst_ld; i++) {
            const int64_t at = i + j * dst_ld;
            const float old = before[offset + at];
            const float want = i >= rows ? old : combine ? src[i + j * src_ld] + beta * old : src[i + j * src_ld];
            if (dst[at] != want)
                wrong++, first = first < 0 ? offset + at : first;
        }
    if (wrong) {
        char what[96], detail[128];
        snprintf(what, sizeof what, "%s %lldx%lld, ld %lld to %lld", combine ? "combine" : "copy", (long long)rows,
                 (long long)cols, (long long)src_ld, (long long)dst_ld);
        snprintf(detail, sizeof detail, "%lld wrong elements, the first at %lld (offset %d, beta %g)",
                 (long long)wrong, (long long)first, offset, (double)beta);
        fail(what, detail);
    }
    free(src), free(before), free(dst_base);
}

/*
 * Shapes that take each way of cutting a job (with 4 threads: up to 16 pieces,
 * none under 256 KB), around the thresholds: the pool from 512 KB, streamed
 * stores from 256 KB and for runs of 64 floats or more.
 */
static void check_shapes(uint32_t seed)
{
    static const struct {
        int64_t rows, cols, src_pad, dst_pad;
    } shapes[] = {
        {1, 1, 0, 0},           {37, 5, 3, 1},          {255, 255, 0, 0},     /* alone: under 512 KB */
        {363, 363, 0, 0},       {512, 256, 0, 0},       {1000, 300, 0, 0},    /* dense: one range each */
        {1000, 300, 24, 5},     {4096, 40, 8, 3},       {700, 701, 1, 0},     /* whole columns */
        {200000, 3, 5, 7},      {131072, 1, 0, 9},      {99999, 2, 1, 0},     /* slices of each column */
        {63, 4000, 1, 1},       {17, 9000, 0, 2},                             /* runs too short to stream */
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int offset = 0; offset < 4; offset += 3)
            for (int combine = 0; combine < 2; combine++) {
                const float beta = combine ? (offset ? -0.5f : 1.25f) : 0.0f;
                check_job(shapes[s].rows, shapes[s].cols, shapes[s].rows + shapes[s].src_pad,
                          shapes[s].rows + shapes[s].dst_pad, offset, combine, beta, seed + (uint32_t)s);
            }
}

static void *concurrent_caller(void *arg)
{
    const uint32_t seed = (uint32_t)(uintptr_t)arg;
    const int burst = seed % 2;
    if (burst)
        tb_host_copy_burst(1);
    check_shapes(seed * 100);
    if (burst)
        tb_host_copy_burst(0);
    return NULL;
}

static void expect_count(const char *what, int got, int want)
{
    if (got != want) {
        char detail[64];
        snprintf(detail, sizeof detail, "%d, expected %d", got, want);
        fail(what, detail);
    }
}

/* The configured count wins, up to 16; else the usable CPUs, up to 16, which a one-CPU mask makes one. */
static void check_thread_count(void)
{
    config.copy_threads = 3;
    expect_count("threads, TILEDBLAS_COPY_THREADS=3", tb_host_copy_threads(), 3);
    config.copy_threads = 100;
    expect_count("threads, TILEDBLAS_COPY_THREADS=100", tb_host_copy_threads(), 16);
    config.copy_threads = 0;
    const int usable = tb_usable_cpus();
    expect_count("threads by default", tb_host_copy_threads(), usable > 16 ? 16 : usable);

    cpu_set_t all, one;
    if (sched_getaffinity(0, sizeof all, &all) != 0) /* a kernel built for more CPUs than cpu_set_t holds */
        return;
    if (usable < 1 || usable > CPU_COUNT(&all))
        expect_count("usable CPUs, within the affinity mask", usable, CPU_COUNT(&all));
    int first = 0;
    while (!CPU_ISSET(first, &all))
        first++;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    if (sched_setaffinity(0, sizeof one, &one) == 0) {
        expect_count("usable CPUs, pinned to one", tb_usable_cpus(), 1);
        expect_count("threads by default, pinned to one CPU", tb_host_copy_threads(), 1);
        sched_setaffinity(0, sizeof all, &all);
    }
}

/* Quotas as cgroup v2's cpu.max and v1's quota and period show them. */
static void check_quota_texts(void)
{
    static const struct {
        const char *text;
        int cpus;
    } cases[] = {
        {"max 100000", 0}, {"200000 100000", 2}, {"150000 100000", 2}, {"50000 100000", 1},
        {"-1 100000", 0},  {"", 0},              {"max", 0},           {"100000", 0},
        {"400000 0", 0},   {"abc 100000", 0},    {"3200000 100000", 32},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char what[64];
        snprintf(what, sizeof what, "CPUs of quota \"%s\"", cases[c].text);
        expect_count(what, tb_cpus_from_quota(cases[c].text), cases[c].cpus);
    }
}

int main(void)
{
    check_quota_texts();
    check_thread_count();
    /* The pool starts at its first job with the count the configuration gives then. */
    config.copy_threads = 4;
    check_shapes(1);
    tb_host_copy_burst(1);
    check_shapes(2);
    tb_host_copy_burst(0);

    enum { CALLERS = 4 };
    pthread_t callers[CALLERS];
    for (int t = 0; t < CALLERS; t++)
        if (pthread_create(&callers[t], NULL, concurrent_caller, (void *)(uintptr_t)(t + 3)) != 0) {
            fail("pthread_create", "failed");
            return 1;
        }
    for (int t = 0; t < CALLERS; t++)
        pthread_join(callers[t], NULL);

    if (failures) {
        printf("%d failures\n", failures);
        return 1;
    }
    printf("host copies: every element of every shape exact, nothing around them touched; CPU counts right\n");
    return 0;
}
