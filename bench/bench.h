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

#include "kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BENCH_MAX_SHAPES 64
#define BENCH_MAX_TRANS 4

typedef enum bench_mode { BENCH_KERNELS, BENCH_E2E, BENCH_TIMELINE } bench_mode;

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
    double error;  /* rel. Frobenius error (--kernels), max error/bound (--e2e); <0: none */
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
bench_row *bench_table_add(bench_table *t, const bench_case *c, const char *variant);
void *bench_xmalloc(size_t bytes);

/* kernels_mode.c and e2e_mode.c: print the mode's header lines, then fill the
 * table; return 0, or an exit code when the run could not go on (a message
 * has been printed). */
int bench_kernels(const bench_opts *o, bench_table *t);
int bench_e2e(const bench_opts *o, bench_table *t);
int bench_timeline(const bench_opts *o, bench_table *t);

/* reference.cu: the FP64 reference and the comparison, on the device. */
typedef struct bench_err {
    double diff2, ref2;           /* sums of (c - ref)^2 and ref^2 over finite c */
    unsigned long long nonfinite; /* NaN or Inf in c: unwritten or broken */
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
