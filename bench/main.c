/*
 * tiledblas-bench: one runner for every SGEMM variant of tiledblas.
 *
 *   --kernels  the kernel ladder and cuBLAS on device memory (GPU time only)
 *   --e2e      libtiledblas's cblas_sgemm and OpenBLAS's on host memory
 *   --timeline the stages of one host-to-host call, each timed alone
 *   --policy   auto mode against the GPU and OpenBLAS forced, interleaved in one process
 *   --api      cblas_sgemm on device pointers against cublasSgemm, call to completion
 *   --accuracy the error of both maths against cuBLAS's SGEMM and TF32, on five kinds of input
 *
 * Prints the setup first and the results table last; --csv writes the rows
 * that bench/suite.sh gathers and bench/report.py turns into
 * docs/PERFORMANCE.md. Exit status: 0 all checks passed,
 * 1 a check or a run failed, 2 bad usage, 77 skipped (no GPU for --kernels,
 * no OpenBLAS for --e2e).
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "tiledblas.h"
#include "bench.h"

static const char usage[] =
    "usage: tiledblas-bench [--kernels | --tune | --e2e | --timeline | --policy | --api | --accuracy]\n"
    "                       [options]\n"
    "\n"
    "  --kernels          time every kernel of the ladder and cuBLAS on device memory\n"
    "                     (the default), with each planned kernel's plan; needs a\n"
    "                     GPU, else exits 77\n"
    "  --tune             the same with each tile shape of the regtile and multistage\n"
    "                     kernels (\"reg ...\", \"multi ...\", then multistage with its\n"
    "                     stream-K tail, \"sk ...\") instead of the ladder (the data\n"
    "                     behind their heuristics)\n"
    "  --e2e              time cblas_sgemm of libtiledblas (the path TILEDBLAS_DEVICE\n"
    "                     picks) and of OpenBLAS on host memory, transfers included\n"
    "  --timeline         time the stages of a host-to-host call alone (host copies,\n"
    "                     DMA each way, kernel) against the call; needs a GPU\n"
    "  --policy           auto mode against each path forced, in one process: checked\n"
    "                     once each, then rounds of untimed calls (--warm) and a\n"
    "                     timed one (a batch lasting ~0.25 ms for shorter calls) to\n"
    "                     each of auto, the GPU and OpenBLAS (tiledblas_set_device),\n"
    "                     in changing orders (at least six rounds); ratios to the\n"
    "                     faster forced path, and how many cases reach 0.95\n"
    "  --api              time cblas_sgemm of libtiledblas on device pointers against\n"
    "                     cublasSgemm, each from the call to C final (wall clock),\n"
    "                     in turns; error: largest |c - ref| / (|ref| + 1e-3); needs a\n"
    "                     GPU, else exits 77\n"
    "  --accuracy         the largest and median error against FP64 of cblas_sgemm on\n"
    "                     device pointers in FP32 and tensor math, cublasSgemm and\n"
    "                     cuBLAS's TF32, on uniform, normal, positive, exponent-spread\n"
    "                     and Inf/NaN/subnormal inputs (column-major NN); needs a GPU\n"
    "  --sizes LIST       comma-separated N (for NxNxN) or MxNxK shapes of the CBLAS\n"
    "                     call [1024,2048,4096]\n"
    "  --random N         N shapes with each dimension drawn uniformly from 100 .. 5000\n"
    "                     (a fixed seed: the same shapes every run), after the --sizes\n"
    "                     given, or in place of the default ones\n"
    "  --trans LIST       comma-separated transposes of A and B: NN,NT,TN,TT [NN]\n"
    "  --layout row|col   storage order of the CBLAS call [row]\n"
    "  --beta X           C = op(A) op(B) + X C (alpha is 1) [0]; --e2e with X != 0\n"
    "                     also times beta = 0 in alternation with it (ratio to it)\n"
    "  --reps N           timed calls per entry, fewer when one call is slow: an entry\n"
    "                     takes about 2 s, with at least 3 calls (--policy: 6\n"
    "                     rounds) [20]\n"
    "  --no-openblas      --e2e: time libtiledblas alone; --policy: auto against the\n"
    "                     forced GPU alone\n"
    "  --nvblas PATH      --e2e: also time NVIDIA's NVBLAS (libnvblas.so at PATH,\n"
    "                     configured through NVBLAS_CONFIG_FILE)\n"
    "  --threads N        --e2e: also N threads calling libtiledblas at once, each\n"
    "                     on its own C, against the same calls made one at a time\n"
    "  --warm MS          --policy: the untimed calls before each timed batch last\n"
    "                     at least MS milliseconds (0: one call) [1]\n"
    "  --csv FILE         also write every result to FILE as CSV\n"
    "  -h, --help         print this help\n"
    "\n"
    "OpenBLAS is loaded with dlopen from $OPENBLAS_LIB, else libopenblas.so.0; the\n"
    "core whose kernels it runs is printed (openblas_get_corename). Where its\n"
    "detection picks an older core than the CPU supports, set OPENBLAS_CORETYPE\n"
    "(bench/suite.sh does).\n"
    "Exit status: 0 all checks passed, 1 a check or run failed, 2 bad usage,\n"
    "77 skipped (no usable GPU for --kernels, --timeline, --api or --accuracy, no OpenBLAS for --e2e or\n"
    "--policy).\n";

static int bad_usage(const char *what, const char *arg)
{
    fprintf(stderr, "tiledblas-bench: %s: '%s' (see --help)\n", what, arg);
    return 2;
}

/* One dimension: 1 .. INT_MAX, since CBLAS and cuBLAS take int. */
static int parse_dim(const char *s, char **end, int64_t *dim)
{
    long long v = strtoll(s, end, 10);
    if (*end == s || v < 1 || v > INT_MAX)
        return -1;
    *dim = v;
    return 0;
}

static int parse_shapes(const char *arg, bench_opts *o)
{
    const char *s = arg;
    o->nshapes = 0;
    for (;;) {
        bench_shape sh;
        char *end;
        if (o->nshapes == BENCH_MAX_SHAPES || parse_dim(s, &end, &sh.m) != 0)
            return bad_usage("bad --sizes", arg);
        sh.n = sh.k = sh.m;
        if (*end == 'x') {
            if (parse_dim(end + 1, &end, &sh.n) != 0 || *end != 'x' ||
                parse_dim(end + 1, &end, &sh.k) != 0)
                return bad_usage("bad --sizes (N or MxNxK)", arg);
        }
        o->shapes[o->nshapes++] = sh;
        if (*end == '\0')
            return 0;
        if (*end != ',')
            return bad_usage("bad --sizes", arg);
        s = end + 1;
    }
}

/*
 * `count` shapes from the fixed-seed generator after the first `keep` of o's: each dimension
 * uniform in 100 .. 5000, the off-list shapes a tuning table never sees. -1: no room.
 */
static int add_random_shapes(bench_opts *o, int keep, int count)
{
    if (keep + count > BENCH_MAX_SHAPES)
        return -1;
    uint64_t state = 0x5eed;
    o->nshapes = keep;
    for (int i = 0; i < count; i++) {
        int64_t dims[3];
        for (int d = 0; d < 3; d++)
            dims[d] = 100 + (int64_t)(bench_hash(state++) % 4901);
        o->shapes[o->nshapes++] = (bench_shape){dims[0], dims[1], dims[2]};
    }
    return 0;
}

static int is_trans_letter(char c)
{
    return c == 'N' || c == 'T';
}

static int parse_trans(const char *arg, bench_opts *o)
{
    const char *s = arg;
    o->ntrans = 0;
    for (;;) {
        if (o->ntrans == BENCH_MAX_TRANS || !is_trans_letter(s[0]) || !is_trans_letter(s[1]) ||
            (s[2] != ',' && s[2] != '\0'))
            return bad_usage("bad --trans (NN,NT,TN,TT)", arg);
        memcpy(o->trans[o->ntrans], s, 2);
        o->trans[o->ntrans++][2] = '\0';
        if (s[2] == '\0')
            return 0;
        s += 3;
    }
}

/* A whole number lo .. hi, or -1. */
static int parse_count(const char *v, long lo, long hi)
{
    char *end;
    const long n = strtol(v, &end, 10);
    return end == v || *end != '\0' || n < lo || n > hi ? -1 : (int)n;
}

static int takes_value(const char *opt)
{
    static const char *const with_value[] = {"--sizes", "--trans", "--layout", "--beta",
                                             "--reps",  "--csv",   "--nvblas", "--threads", "--warm",
                                             "--random"};
    for (size_t i = 0; i < sizeof with_value / sizeof *with_value; i++)
        if (!strcmp(opt, with_value[i]))
            return 1;
    return 0;
}

/* Fills o from the command line; returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, bench_opts *o)
{
    memset(o, 0, sizeof *o);
    o->mode = BENCH_KERNELS;
    o->nshapes = 3;
    for (int i = 0; i < 3; i++)
        o->shapes[i].m = o->shapes[i].n = o->shapes[i].k = 1024 << i;
    o->ntrans = 1;
    strcpy(o->trans[0], "NN");
    o->row_major = 1;
    o->reps = 20;
    o->warm_ms = 1.0;
    int warm_given = 0, sizes_given = 0, random_shapes = 0;

    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i];
        int rc = 0; /* from the list parsers: 0, or 2 for bad usage */
        char *end;
        if (takes_value(opt) && i + 1 == argc)
            return bad_usage("missing value", opt);
        if (!strcmp(opt, "-h") || !strcmp(opt, "--help")) {
            fputs(usage, stdout);
            return 0;
        } else if (!strcmp(opt, "--kernels")) {
            o->mode = BENCH_KERNELS;
        } else if (!strcmp(opt, "--tune")) {
            o->mode = BENCH_KERNELS;
            o->tune = 1;
        } else if (!strcmp(opt, "--e2e")) {
            o->mode = BENCH_E2E;
        } else if (!strcmp(opt, "--timeline")) {
            o->mode = BENCH_TIMELINE;
        } else if (!strcmp(opt, "--policy")) {
            o->mode = BENCH_POLICY;
        } else if (!strcmp(opt, "--api")) {
            o->mode = BENCH_API;
        } else if (!strcmp(opt, "--accuracy")) {
            o->mode = BENCH_ACCURACY;
        } else if (!strcmp(opt, "--no-openblas")) {
            o->no_openblas = 1;
        } else if (!strcmp(opt, "--nvblas")) {
            o->nvblas = argv[++i];
        } else if (!strcmp(opt, "--sizes")) {
            rc = parse_shapes(argv[++i], o);
            sizes_given = 1;
        } else if (!strcmp(opt, "--random")) {
            if ((random_shapes = parse_count(argv[++i], 1, BENCH_MAX_SHAPES)) < 0)
                return bad_usage("bad --random (1 .. 64)", argv[i]);
        } else if (!strcmp(opt, "--trans")) {
            rc = parse_trans(argv[++i], o);
        } else if (!strcmp(opt, "--layout")) {
            const char *v = argv[++i];
            if (strcmp(v, "row") && strcmp(v, "col"))
                return bad_usage("bad --layout (row or col)", v);
            o->row_major = !strcmp(v, "row");
        } else if (!strcmp(opt, "--beta")) {
            const char *v = argv[++i];
            o->beta = strtof(v, &end);
            if (end == v || *end != '\0' || !isfinite(o->beta))
                return bad_usage("bad --beta", v);
        } else if (!strcmp(opt, "--reps")) {
            if ((o->reps = parse_count(argv[++i], 1, 100000)) < 0)
                return bad_usage("bad --reps (1 .. 100000)", argv[i]);
        } else if (!strcmp(opt, "--threads")) {
            if ((o->threads = parse_count(argv[++i], 2, 64)) < 0)
                return bad_usage("bad --threads (2 .. 64)", argv[i]);
        } else if (!strcmp(opt, "--warm")) {
            const char *v = argv[++i];
            warm_given = 1;
            o->warm_ms = strtod(v, &end);
            if (end == v || *end != '\0' || !(o->warm_ms >= 0.0 && o->warm_ms <= 1000.0))
                return bad_usage("bad --warm (0 .. 1000)", v);
        } else if (!strcmp(opt, "--csv")) {
            o->csv_path = argv[++i];
        } else {
            return bad_usage("unknown option", opt);
        }
        if (rc)
            return rc;
    }
    if (random_shapes && add_random_shapes(o, sizes_given ? o->nshapes : 0, random_shapes) != 0)
        return bad_usage("too many shapes (at most 64 with --random)", "--random");
    if (o->threads && o->mode != BENCH_E2E)
        return bad_usage("--threads needs --e2e", "--threads");
    if (o->no_openblas && o->mode != BENCH_E2E && o->mode != BENCH_POLICY)
        return bad_usage("--no-openblas needs --e2e or --policy", "--no-openblas");
    if (warm_given && o->mode != BENCH_POLICY)
        return bad_usage("--warm needs --policy", "--warm");
    if (o->nvblas && o->mode != BENCH_E2E)
        return bad_usage("--nvblas needs --e2e", o->nvblas);
    return -1;
}

/* Names the GPU for the header; returns 0 when none is usable. */
static int describe_gpu(char *buf, size_t size)
{
    struct cudaDeviceProp prop;
    int count = 0, dev, sms, major, minor;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err == cudaSuccess && count == 0)
        err = cudaErrorNoDevice;
    /* Creating the context is what fails on a GPU that is there but unusable. */
    if (err == cudaSuccess)
        err = cudaFree(NULL);
    if (err == cudaSuccess)
        err = cudaGetDevice(&dev);
    if (err == cudaSuccess)
        err = cudaGetDeviceProperties(&prop, dev);
    if (err == cudaSuccess)
        err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (err == cudaSuccess)
        err = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    if (err == cudaSuccess)
        err = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
    if (err != cudaSuccess) {
        snprintf(buf, size, "no usable GPU (%s)", cudaGetErrorString(err));
        return 0;
    }
    snprintf(buf, size, "%s (sm_%d%d, %d SMs)", prop.name, major, minor, sms);
    return 1;
}

static void print_header(int argc, char **argv, const char *gpu)
{
    char date[32];
    const time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    printf("command:");
    for (int i = 0; i < argc; i++)
        printf(" %s", argv[i]);
    printf("\ndevice: %s, %s, tiledblas %s\n", gpu, date, tiledblas_version());
    printf("host: %ld CPUs online\n", sysconf(_SC_NPROCESSORS_ONLN));
}

static void print_table(const bench_opts *o, const bench_table *t)
{
    const int kernels = o->mode == BENCH_KERNELS, api = o->mode == BENCH_API;
    printf("\n%-16s %-7s %-16s %10s %10s %11s %9s  %s\n", "shape", "op", "variant", "ms",
           "GFLOP/s",
           kernels || api              ? "vs cuBLAS"
           : o->mode == BENCH_TIMELINE ? "of call"
           : o->mode == BENCH_POLICY   ? "vs faster"
                                       : "vs OpenBLAS",
           kernels ? "rel.err" : api || o->mode == BENCH_ACCURACY ? "max.err" : "err/bound",
           "check");
    for (size_t i = 0; i < t->len; i++) {
        const bench_row *r = &t->rows[i];
        printf("%-16s %-7s %-16s ", r->shape, r->op, r->variant);
        if (r->reps)
            printf("%10.4f %10.1f ", r->ms, r->gflops);
        else
            printf("%10s %10s ", "-", "-");
        if (r->ratio > 0.0)
            printf("%11.3f ", r->ratio);
        else
            printf("%11s ", "-");
        if (!(r->error < 0.0)) /* NaN shows */
            printf("%9.1e  %s\n", r->error, r->status);
        else
            printf("%9s  %s\n", "-", r->status);
    }
}

static void write_csv(FILE *f, const bench_opts *o, const bench_table *t)
{
    for (size_t i = 0; i < t->len; i++) {
        const bench_row *r = &t->rows[i];
        static const char *const modes[] = {"kernels", "e2e", "timeline", "policy", "api", "accuracy"};
        fprintf(f, "%s,%s,%s,%s,%.6g,%.6g,%.6g,", modes[o->mode],
                r->shape, r->op, r->variant, r->ms, r->gflops, r->ratio);
        if (!(r->error < 0.0)) /* NaN shows */
            fprintf(f, "%.3g", r->error);
        fprintf(f, ",%d,\"%s\",", r->reps, r->status);
        if (!(r->error_median < 0.0))
            fprintf(f, "%.3g", r->error_median);
        fputc('\n', f);
    }
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_table t = {0};
    char gpu[320];
    FILE *csv = NULL;
    size_t failed = 0;
    int status = parse_args(argc, argv, &o);
    if (status >= 0)
        return status;

    if (!describe_gpu(gpu, sizeof gpu) && o.mode != BENCH_E2E && o.mode != BENCH_POLICY) {
        fprintf(stderr, "tiledblas-bench: %s\n", gpu);
        printf("no usable GPU: skipped\n");
        return 77;
    }
    if (o.csv_path) {
        csv = fopen(o.csv_path, "w");
        if (!csv) {
            perror(o.csv_path);
            return 1;
        }
        fprintf(csv, "mode,shape,op,variant,median_ms,gflops,ratio,error,reps,status,error_median\n");
    }

    print_header(argc, argv, gpu);
    status = o.mode == BENCH_KERNELS  ? bench_kernels(&o, &t)
             : o.mode == BENCH_TIMELINE ? bench_timeline(&o, &t)
             : o.mode == BENCH_POLICY   ? bench_policy(&o, &t)
             : o.mode == BENCH_API      ? bench_api(&o, &t)
             : o.mode == BENCH_ACCURACY ? bench_accuracy(&o, &t)
                                        : bench_e2e(&o, &t);
    if (t.len) {
        print_table(&o, &t);
        for (size_t i = 0; i < t.len; i++)
            failed += t.rows[i].failed != 0;
        printf("\n%zu results, %zu failed\n", t.len, failed);
    }
    if (csv) {
        write_csv(csv, &o, &t);
        if (fclose(csv) != 0) {
            perror(o.csv_path);
            status = status ? status : 1;
        }
    }
    free(t.rows);
    if (status)
        return status;
    return failed ? 1 : 0;
}
