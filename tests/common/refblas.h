/*
 * The reference SGEMM for tests and benchmarks: OpenBLAS's cblas_sgemm,
 * reached through its own dlopen handle. The global symbol cblas_sgemm in a
 * program linked to tiledblas is tiledblas itself, so the reference must
 * never be linked directly.
 */
#ifndef TB_REFBLAS_H
#define TB_REFBLAS_H

typedef void (*tb_ref_sgemm_fn)(int layout, int ta, int tb, int m, int n, int k,
                                float alpha, const float *a, int lda,
                                const float *b, int ldb, float beta, float *c,
                                int ldc);

/*
 * OpenBLAS's cblas_sgemm from $OPENBLAS_LIB, else "libopenblas.so.0", opened
 * with RTLD_LOCAL. Thread-safe; exits the process with a message when the
 * library or the symbol cannot be loaded.
 */
tb_ref_sgemm_fn tb_ref_cblas_sgemm(void);

#endif /* TB_REFBLAS_H */
