/* What cpu_blas_recorder (a CPU BLAS for tests) records of the last call it received. */
#ifndef TB_CPU_BLAS_RECORDER_H
#define TB_CPU_BLAS_RECORDER_H

typedef struct recorder_call {
    int calls;                             /* received so far */
    int layout, trans_a, trans_b, m, n, k; /* layout 0: through sgemm_, transposes then its characters */
    const float *a, *b;
    float *c;
} recorder_call;

/* Exported by the recorder; look it up with dlsym. */
typedef recorder_call (*recorder_last_fn)(void);

#endif /* TB_CPU_BLAS_RECORDER_H */
