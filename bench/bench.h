/*
 * tiledblas-bench: shared pieces of the benchmark runner.
 *
 * A case is one CBLAS call as a user would make it (layout, transposes,
 * M x N x K, alpha = 1, beta). The kernels and cuBLAS get the column-major
 * problem the library turns it into (bench_colmajor), so every variant
 * computes exactly what cblas_sgemm would.
 */
#ifndef TILEDBLAS_BENCH_H
#define TILEDBLAS_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels.h"
#include "tiledblas.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A CUDA call that must work: the run ends with the call and its error otherwise. */
#define CUDA_CHECK(call)                                                               \
    do {                                                                               \
        cudaError_t err_ = (call);                                                     \
        if (err_ != cudaSuccess) {                                                     \
            fprintf(stderr, "tiledblas-bench: %s:%d: %s: %s\n", __FILE__, __LINE__,   \
                    #call, cudaGetErrorString(err_));                                  \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

/* The same for a cuBLAS call, where the file includes cuBLAS. */
#define CUBLAS_CHECK(call)                                                             \
    do {                                                                               \
        cublasStatus_t st_ = (call);                                                   \
        if (st_ != CUBLAS_STATUS_SUCCESS) {                                            \
            fprintf(stderr, "tiledblas-bench: %s:%d: %s: %s\n", __FILE__, __LINE__,   \
                    #call, cublasGetStatusString(st_));                                \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

#define BENCH_MAX_SHAPES 64
#define BENCH_MAX_TRANS 4

typedef enum bench_mode {
    BENCH_KERNELS,
    BENCH_E2E,
    BENCH_TIMELINE,
    BENCH_POLICY,
    BENCH_API,
    BENCH_ACCURACY
} bench_mode;

typedef struct bench_shape {
    int64_t m, n, k;
} bench_shape;

typedef struct bench_opts {
    bench_mode mode;
    bench_shape shapes[BENCH_MAX_SHAPES];
    int nshapes;
    char trans[BENCH_MAX_TRANS][3]; /* "NN", "NT", ... */
    int ntrans;
    int row_major;
    float beta;
    int reps;        /* upper bound; slow entries take fewer (bench_time) */
    int no_openblas; /* --e2e only */
    const char *nvblas; /* --e2e: path of libnvblas.so to time as well, or NULL */
    int threads;        /* --e2e: also N threads calling libtiledblas at once (0: not) */
    double warm_ms;     /* --policy: untimed calls before each timed batch last at least this */
    int tune;        /* --tune: regtile's and multistage's tile shapes instead of the ladder */
    const char *csv_path;
} bench_opts;

/* One CBLAS call: C = op(A) * op(B) + beta * C, every operand packed. */
typedef struct bench_case {
    int row_major, trans_a, trans_b;
    int64_t m, n, k;
    int64_t lda, ldb, ldc;
    float beta;
    char shape[48]; /* "MxNxK" */
    char op[8];     /* "row NN" */
} bench_case;

typedef struct bench_row {
    char shape[48], op[8], variant[32];
    double ms;     /* median over `reps` timed calls */
    double gflops; /* 2*M*N*K / time */
    double ratio;  /* vs cuBLAS (--kernels) or OpenBLAS (--e2e); 0: none */
    double error;  /* rel. Frobenius error (--kernels), max error/bound (--e2e), largest error (--api,
                      --accuracy); <0: none */
    double error_median; /* --accuracy: the median error; <0: none */
    int reps;
    int failed;
    char status[80]; /* "ok", or "FAIL: " and why */
} bench_row;

typedef struct bench_table {
    bench_row *rows;
    size_t len, cap;
} bench_table;

/* common.c */
bench_case bench_case_make(const bench_opts *o, bench_shape s, const char *trans);
tb_gemm_args bench_colmajor(const bench_case *c, const float *a, const float *b, float *cc);
double bench_gflops(const bench_case *c, double ms);
uint64_t bench_hash(uint64_t x); /* splitmix64's mixer */
void bench_fill(float *x, size_t n, uint64_t seed);
double bench_now_ms(void);
/* Runs one timed call, returns its time in ms, or a negative value on failure. */
typedef double (*bench_timed_fn)(void *ctx);
int bench_time(bench_timed_fn run, void *ctx, int max_reps, double *median_ms);
/* Samples to take after a first one of first_ms: max_reps, fewer to stay within the budget. */
int bench_reps_within_budget(double first_ms, int max_reps);
double bench_median(double *t, int count); /* sorts t */
bench_row *bench_table_add(bench_table *t, const bench_case *c, const char *variant);
void *bench_xmalloc(size_t bytes);

/* host_calls.c: CBLAS calls on host memory (--e2e, --policy). */
typedef void (*bench_sgemm_fn)(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n,
                               int k, float alpha, const float *a, int lda, const float *b, int ldb,
                               float beta, float *c, int ldc);
typedef struct bench_host_call {
    bench_sgemm_fn sgemm;
    const bench_case *bc;
    const float *a, *b;
    float *c;
} bench_host_call;
/* One call, alpha = 1. */
void bench_host_run(const bench_host_call *r);
/* The same (ctx: a bench_host_call); its wall-clock time in ms. */
double bench_host_call_ms(void *ctx);
/* Host buffers of one shape; C0 (beta != 0 only) is what C starts from. */
typedef struct bench_host_bufs {
    float *a, *b, *c, *c0;
    size_t nc;
} bench_host_bufs;
void bench_host_bufs_make(bench_host_bufs *h, bench_shape sh, float beta);
void bench_host_bufs_free(bench_host_bufs *h);
float *bench_random_buffer(size_t n, uint64_t seed);
/* One element of the column-major problem, in FP64, with its error bound. */
#define BENCH_SAMPLES 256
typedef struct bench_sample {
    int64_t i, j;
    double ref, bound;
} bench_sample;
void bench_samples_make(const tb_gemm_args *g, bench_sample *s);
/* Largest err/bound over the samples; c is the column-major result. */
double bench_sampled_error(const float *c, int64_t ldc, const bench_sample *s);
void bench_row_fail(bench_row *row, const char *why);
/* The checked call: C poisoned with NaN (beta == 0, so it must be written unread) or
 * reset to C0, one call, then row->error, and a failed row on NaN/Inf or a large error. */
void bench_host_check(bench_row *row, bench_sgemm_fn sgemm, const bench_case *bc, const bench_host_bufs *h,
                      const bench_sample *s);
/* OpenBLAS's cblas_sgemm from $OPENBLAS_LIB, else libopenblas.so.0 (prints what it is), or NULL. */
bench_sgemm_fn bench_load_openblas(void **handle);

/* kernels_mode.c, e2e_mode.c, timeline_mode.c, policy_mode.c, api_mode.c and accuracy_mode.c: print the mode's header lines, then fill the
 * table; return 0, or an exit code when the run could not go on (a message
 * has been printed). */
int bench_kernels(const bench_opts *o, bench_table *t);
int bench_e2e(const bench_opts *o, bench_table *t);
int bench_timeline(const bench_opts *o, bench_table *t);
int bench_policy(const bench_opts *o, bench_table *t);
int bench_api(const bench_opts *o, bench_table *t);
int bench_accuracy(const bench_opts *o, bench_table *t);

/* reference.cu: the FP64 reference and the comparison, on the device. */
typedef struct bench_err {
    double diff2, ref2;           /* sums of (c - ref)^2 and ref^2 over finite c */
    unsigned long long nonfinite; /* NaN or Inf in c: unwritten or broken */
    double max_relative;          /* the largest |c - ref| / (|ref| + 1e-3) over finite c */
} bench_err;

/* ref = alpha * op(A) * op(B) + beta * C in double, C read from args->c. */
cudaError_t bench_reference_gemm(const tb_gemm_args *args, double *ref, cudaStream_t stream);
/* Compares the packed m x n results c and ref; scratch is one device bench_err.
 * Synchronises the stream. */
cudaError_t bench_compare(const float *c, const double *ref, size_t count,
                          bench_err *scratch, bench_err *out, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif /* TILEDBLAS_BENCH_H */
