/*
 * What the GPU tests that call the kernels directly share: CUDA checks that
 * end the test, a case's shape and storage, and its operands from a fixed
 * sequence with the FP64 reference and the magnitudes the FP32 bound needs.
 */
#ifndef TILEDBLAS_TESTS_KERNEL_CASE_CUH
#define TILEDBLAS_TESTS_KERNEL_CASE_CUH

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <vector>

#define CHECK_CUDA(call)                                                                                   \
    do {                                                                                                   \
        const cudaError_t status_ = (call);                                                                \
        if (status_ != cudaSuccess) {                                                                      \
            printf("FAIL: %s: %s (line %d)\n", #call, cudaGetErrorString(status_), __LINE__);              \
            exit(1);                                                                                       \
        }                                                                                                  \
    } while (0)

/* Uniform in [-1, 1) from a fixed sequence, so that a failure reproduces. */
static inline float next_value(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(*state >> 11) / (double)(1ull << 53) * 2.0 - 1.0);
}

struct Case {
    int64_t m, n, k;
    int trans_a, trans_b;
    int64_t pad; /* extra leading dimension: pad 1 leaves columns unaligned for 16-byte copies */
};

/* op(X)(i, p) of a column-major X. */
static inline double op(const std::vector<float> &x, int64_t ld, int trans, int64_t i, int64_t p)
{
    return trans ? x[p + i * ld] : x[i + p * ld];
}

/* A case's operands, stored with their pads, C's starting values, and the FP64 reference. */
struct Operands {
    int64_t lda, ldb, ldc;
    std::vector<float> a, b, c0;
    std::vector<double> exact, magnitude; /* op(A) op(B) and |op(A)| |op(B)|, m x n */
};

static inline Operands make_operands(const Case &c)
{
    const int64_t a_rows = c.trans_a ? c.k : c.m, a_cols = c.trans_a ? c.m : c.k;
    const int64_t b_rows = c.trans_b ? c.n : c.k, b_cols = c.trans_b ? c.k : c.n;
    Operands o;
    o.lda = a_rows + c.pad, o.ldb = b_rows + c.pad, o.ldc = c.m + c.pad;
    o.a.resize(o.lda * a_cols), o.b.resize(o.ldb * b_cols), o.c0.resize(o.ldc * c.n);
    uint64_t state = (uint64_t)(c.m * 131 + c.n * 17 + c.k) ^ (uint64_t)(c.trans_a * 2 + c.trans_b);
    for (float &x : o.a)
        x = next_value(&state);
    for (float &x : o.b)
        x = next_value(&state);
    for (float &x : o.c0)
        x = next_value(&state);
    o.exact.assign(c.m * c.n, 0.0);
    o.magnitude.assign(c.m * c.n, 0.0);
    for (int64_t j = 0; j < c.n; j++)
        for (int64_t i = 0; i < c.m; i++) {
            double sum = 0.0, abs_sum = 0.0;
            for (int64_t p = 0; p < c.k; p++) {
                const double t = op(o.a, o.lda, c.trans_a, i, p) * op(o.b, o.ldb, c.trans_b, p, j);
                sum += t;
                abs_sum += fabs(t);
            }
            o.exact[i + j * c.m] = sum;
            o.magnitude[i + j * c.m] = abs_sum;
        }
    return o;
}

#endif /* TILEDBLAS_TESTS_KERNEL_CASE_CUH */
