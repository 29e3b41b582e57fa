/* The CPU path: whichever BLAS the process would have used without us (cpu_blas.c). */
#ifndef TILEDBLAS_CPU_CPU_BLAS_H
#define TILEDBLAS_CPU_CPU_BLAS_H

#include <stdatomic.h>
#include <stdint.h>

#include "core/call.h"
#include "tiledblas.h"

typedef void (*tb_cblas_sgemm_fn)(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int m,
                                  int n, int k, float alpha, const float *a, int lda, const float *b, int ldb,
                                  float beta, float *c, int ldc);

/*
 * The CPU SGEMM of one naming convention (compat/abi/conventions.txt): the
 * CPU fallback of every SGEMM name spelled that way, found on first use.
 */
typedef struct tb_cpu_target {
    atomic_int resolved;
    int convention;  /* index into the conventions */
    int ilp64;       /* 64-bit integers in sgemm and cblas below */
    void *sgemm;     /* the Fortran SGEMM; NULL: the built-in loop */
    void *cblas;     /* the same library's CBLAS SGEMM where it cannot come back to us (OpenBLAS); else NULL */
    char name[512];  /* path of the library, or "builtin" */
} tb_cpu_target;

/* The target of a convention (0: plain LP64 names, the default of a tb_call). */
tb_cpu_target *tb_cpu_target_of(int convention);

/* Runs the call on its CPU target (call->cpu, NULL: the plain LP64 one). */
TB_TINY_PATH void tb_cpu_sgemm(const tb_call *call);
/* The same with 64-bit dimensions, on an ILP64 target: for calls the 32-bit tb_call cannot hold. */
void tb_cpu_sgemm64(tb_cpu_target *target, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                    const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc);

const char *tb_cpu_backend_name(void);
/*
 * The CPU BLAS libraries resolved so far, without resolving any: each once,
 * with the conventions it serves ("/lib/libopenblas.so.0 (plain) + /x.so
 * (scipy, scipy64)"), into `out`. Returns how many; 0 while none is.
 */
int tb_cpu_backends_describe(char *out, size_t size);
/* The backend's own cblas_sgemm, which cannot come back to us (OpenBLAS); else NULL. */
tb_cblas_sgemm_fn tb_cpu_backend_cblas(void);
/* Records a call by one of `t`'s names, a 64-bit-integer convention's: tb_cpu_backend_ilp64_name answers for it. */
void tb_cpu_note_ilp64_call(const tb_cpu_target *t);
/*
 * The ILP64 backend's path, resolving it: that of the convention of the latest
 * call by a 64-bit-integer SGEMM name (a program's ILP64 calls go there);
 * before any, the first ILP64 convention's. "none" when only the built-in
 * loop is left.
 */
const char *tb_cpu_backend_ilp64_name(void);

/*
 * A routine's definition for a forwarder: TILEDBLAS_CPU_BLAS's library, the
 * definition the program would reach in its loaded objects (resolve.h), then
 * the CPU BLAS libraries. NULL when none has it; `searched` then says what was
 * searched. *shared is 0 where the program's objects define the name in
 * several local scopes, so that each caller reaches its own
 * (tb_resolve_in_caller): the answer is then the first of them in load order.
 */
void *tb_cpu_lookup(const char *name, int *shared, char *searched, size_t searched_size);

/*
 * The same for a 64-bit-integer name (plain: its plain spelling): the
 * program's definition, then libopenblas64.so.0 under either name.
 */
void *tb_cpu_lookup_ilp64(const char *name, const char *plain, int *shared, char *searched, size_t searched_size);

/* C = beta*C on host memory, reference rules (beta == 0 writes zeros without reading). */
void tb_scale_c_host(const tb_call *call);

#endif /* TILEDBLAS_CPU_CPU_BLAS_H */
