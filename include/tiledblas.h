/*
 * tiledblas: a drop-in CBLAS/BLAS SGEMM that runs on an NVIDIA GPU.
 *
 * Include this instead of <cblas.h> (the enum values and the cblas_sgemm
 * signature are the standard CBLAS ones, LP64: int dimensions), link with
 * -ltiledblas, or preload libtiledblas.so into a program linked to any BLAS.
 * The library also exports, and forwards to the CPU BLAS, every other BLAS,
 * CBLAS and LAPACK routine; declare those with the CPU BLAS's own headers.
 */
#ifndef TILEDBLAS_H
#define TILEDBLAS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exported from the shared library; everything else in it is hidden. */
#if defined(__GNUC__)
#define TILEDBLAS_API __attribute__((visibility("default")))
#else
#define TILEDBLAS_API
#endif

#define TILEDBLAS_VERSION_MAJOR 0
#define TILEDBLAS_VERSION_MINOR 1
#define TILEDBLAS_VERSION_PATCH 0

/* Standard CBLAS enumerations (same values as every cblas.h). */
#ifndef CBLAS_ENUM_DEFINED_H
#define CBLAS_ENUM_DEFINED_H
enum CBLAS_ORDER { CblasRowMajor = 101, CblasColMajor = 102 };
enum CBLAS_TRANSPOSE { CblasNoTrans = 111, CblasTrans = 112, CblasConjTrans = 113 };
enum CBLAS_UPLO { CblasUpper = 121, CblasLower = 122 };
enum CBLAS_DIAG { CblasNonUnit = 131, CblasUnit = 132 };
enum CBLAS_SIDE { CblasLeft = 141, CblasRight = 142 };
#endif
typedef enum CBLAS_ORDER CBLAS_ORDER;
typedef enum CBLAS_ORDER CBLAS_LAYOUT;
typedef enum CBLAS_TRANSPOSE CBLAS_TRANSPOSE;

/* C = alpha * op(A) * op(B) + beta * C, with the reference CBLAS semantics. */
TILEDBLAS_API void cblas_sgemm(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE TransA, CBLAS_TRANSPOSE TransB,
                 int M, int N, int K, float alpha, const float *A, int lda,
                 const float *B, int ldb, float beta, float *C, int ldc);

/* Fortran 77 SGEMM (gfortran's trailing hidden string lengths are tolerated). */
TILEDBLAS_API void sgemm_(const char *transa, const char *transb, const int *m, const int *n,
            const int *k, const float *alpha, const float *a, const int *lda,
            const float *b, const int *ldb, const float *beta, float *c,
            const int *ldc);

/*
 * The same with 64-bit integers (ILP64), under the names OpenBLAS and Julia
 * use (cblas_sgemm64_, sgemm_64_) and the reference CBLAS and MKL use
 * (cblas_sgemm_64). Dimensions past INT_MAX are taken whole (on the CPU BLAS);
 * argument errors go to cblas_xerbla and to xerbla_64_, whose info is 64-bit.
 */
TILEDBLAS_API void cblas_sgemm64_(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE TransA, CBLAS_TRANSPOSE TransB,
                    int64_t M, int64_t N, int64_t K, float alpha, const float *A, int64_t lda,
                    const float *B, int64_t ldb, float beta, float *C, int64_t ldc);
TILEDBLAS_API void cblas_sgemm_64(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE TransA, CBLAS_TRANSPOSE TransB,
                    int64_t M, int64_t N, int64_t K, float alpha, const float *A, int64_t lda,
                    const float *B, int64_t ldb, float beta, float *C, int64_t ldc);
TILEDBLAS_API void sgemm_64_(const char *transa, const char *transb, const int64_t *m, const int64_t *n,
               const int64_t *k, const float *alpha, const float *a, const int64_t *lda,
               const float *b, const int64_t *ldb, const float *beta, float *c, const int64_t *ldc);

/*
 * Error handler, called through its global symbol: a program that defines its
 * own cblas_xerbla (or Fortran xerbla_) receives the reports instead, as from
 * the reference CBLAS: invalid dimensions of cblas_sgemm reach xerbla_ first.
 * The defaults print one line to stderr and return.
 */
TILEDBLAS_API void cblas_xerbla(int info, const char *routine, const char *form, ...);

/*
 * Reference CBLAS protocol: 1 while a row-major call is being checked, so a
 * cblas_xerbla can map the swapped column-major parameter numbers back.
 */
TILEDBLAS_API extern int RowMajorStrg;

/*
 * Reference CBLAS protocol: 1 while cblas_sgemm reports an invalid dimension
 * through xerbla_ (as the Fortran SGEMM's number), which then passes it to
 * cblas_xerbla one argument later.
 */
TILEDBLAS_API extern int CBLAS_CallFromC;

/* What the library adds. */
TILEDBLAS_API const char *tiledblas_version(void);          /* "0.1.0" */
TILEDBLAS_API int tiledblas_gpu_available(void);            /* 1 when a usable GPU is present */
TILEDBLAS_API const char *tiledblas_cpu_backend(void);      /* path or name of the CPU BLAS in use */
/*
 * Path of the ILP64 (64-bit integer) CPU BLAS, resolved by this call, or
 * "none": that of the naming convention of the latest call by a 64-bit-integer
 * SGEMM name (cblas_sgemm64_ and sgemm_64_ before any).
 */
TILEDBLAS_API const char *tiledblas_cpu_backend_ilp64(void);
/* Names the library exports from its symbol lists: its own routines and the forwarded ones. */
TILEDBLAS_API int tiledblas_abi_exported(void);
/* Of those, the names forwarded to the CPU BLAS. */
TILEDBLAS_API int tiledblas_abi_forwarded(void);

/*
 * Where calls on host memory run, for every thread of the process: chosen per
 * call by the cost model (auto), or forced. TILEDBLAS_DEVICE sets it at
 * start-up; calls on device pointers always run on the GPU, and a forced GPU
 * without a usable one falls back to the CPU BLAS.
 */
typedef enum { TILEDBLAS_DEVICE_AUTO = 0, TILEDBLAS_DEVICE_GPU = 1, TILEDBLAS_DEVICE_CPU = 2 } tiledblas_device;
/* Returns the previous setting; an unknown value changes nothing and returns -1. */
TILEDBLAS_API int tiledblas_set_device(tiledblas_device device);
TILEDBLAS_API tiledblas_device tiledblas_get_device(void);

/*
 * How SGEMM computes on the GPU, for every thread of the process: FP32 (the
 * default: FP32 fused multiply-adds, as the CPU BLAS computes) or tensor (the
 * tensor cores, each operand split into two TF32 parts, three products per
 * step: FP32-level accuracy, not bit for bit FP32; see the README for its
 * bound). Tensor math needs a build for sm_90a and a GPU of compute
 * capability 9.0; elsewhere calls use FP32, with one warning. Calls below
 * the tensor math's bounds (K below 768, or m n / (m + n) below 640; on the
 * pipelined host path, each launch), where the tensor cores gain little or
 * lose, use FP32 too, unless TILEDBLAS_KERNEL=tf32x3 forces the rung.
 * TILEDBLAS_MATH (fp32 or tensor) sets it at start-up; calls on the CPU are
 * FP32 either way.
 */
typedef enum { TILEDBLAS_MATH_FP32 = 0, TILEDBLAS_MATH_TENSOR = 1 } tiledblas_math;
/* Returns the previous setting; an unknown value changes nothing and returns -1. */
TILEDBLAS_API int tiledblas_set_math(tiledblas_math math);
TILEDBLAS_API tiledblas_math tiledblas_get_math(void);

#ifdef __cplusplus
}
#endif
#endif /* TILEDBLAS_H */
