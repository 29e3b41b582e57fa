/*
 * The tiny call's gate (src/dispatch/tiny_gate.c): a tiny call on the brk heap
 * goes straight to the CPU BLAS's cblas_sgemm with the caller's own arguments;
 * every other call takes the general path, which hands the CPU BLAS the
 * column-major form. Run with TILEDBLAS_CPU_BLAS set to cpu_blas_recorder,
 * which records how it was called: a row-major call that arrives row-major
 * went through the gate, one that arrives column-major (A and B swapped) did
 * not; so did a column-major one whose CblasConjTrans arrives as such (the
 * general path sends CblasTrans). Checked: the first call (gate still shut),
 * every layout and transpose with and without padding, invalid arguments and
 * empty calls after the gate opened, alpha = 0, operands on the stack, sgemm_,
 * and a forced GPU. With TILEDBLAS_VERBOSE set the gate stays shut: every call
 * is reported. Where malloc does not serve small blocks from the brk heap (an
 * allocator of its own, or glibc tuned to mmap), the gate has nothing to take:
 * skipped.
 */
#define _DEFAULT_SOURCE /* sbrk */
#include "cpu_blas_recorder.h"
#include "testutil.h"
#include "tiledblas.h"

#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static recorder_last_fn recorder_last;
static int gate_can_open; /* not verbose */
static tb_tally tally;

/* The error handlers' last report: cblas_sgemm's dimensions reach xerbla_ (CBLAS_CallFromC set). */
static struct {
    int cblas_calls, f77_calls, info, row_major_strg, call_from_c;
} xerbla_seen;

void cblas_xerbla(int info, const char *routine, const char *form, ...)
{
    (void)routine, (void)form;
    xerbla_seen.cblas_calls++;
    xerbla_seen.info = info;
    xerbla_seen.row_major_strg = RowMajorStrg;
}

void xerbla_(const char *srname, const int *info, size_t len);
void xerbla_(const char *srname, const int *info, size_t len)
{
    (void)srname, (void)len;
    xerbla_seen.f77_calls++;
    xerbla_seen.info = *info;
    xerbla_seen.row_major_strg = RowMajorStrg;
    xerbla_seen.call_from_c = CBLAS_CallFromC;
}

/* Whether malloc serves small blocks from the brk heap, past the program's end and below the break. */
static int malloc_uses_brk_heap(void)
{
    extern char end;
    void *block = malloc(64);
    const int in_heap = (char *)block >= &end && (char *)block < (char *)sbrk(0);
    free(block);
    return in_heap;
}

static void find_recorder(void)
{
    const char *path = getenv("TILEDBLAS_CPU_BLAS");
    /* The library loads it on its first call on the CPU; this handle is the same object. */
    tiledblas_cpu_backend();
    void *handle = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
    recorder_last = handle ? (recorder_last_fn)dlsym(handle, "recorder_last") : NULL;
    if (!recorder_last || !strstr(tiledblas_cpu_backend(), "cpu_blas_recorder")) {
        fprintf(stderr, "TILEDBLAS_CPU_BLAS must name cpu_blas_recorder, the CPU BLAS in use (%s)\n",
                tiledblas_cpu_backend());
        exit(1);
    }
}

/* A transpose as the general path hands it on: real data, so CblasConjTrans is CblasTrans. */
static int handed_on(int trans)
{
    return trans == CblasNoTrans ? CblasNoTrans : CblasTrans;
}

/* How the recorder must have seen a call: through the gate as it was made, else in column-major form. */
static int arrived_as(const recorder_call *seen, int calls_before, int straight, const tb_gemm_case *gc,
                      const float *a, const float *b)
{
    if (seen->calls != calls_before + 1)
        return 0;
    if (straight)
        return seen->layout == gc->layout && seen->trans_a == gc->trans_a && seen->trans_b == gc->trans_b &&
               seen->a == a && seen->b == b;
    if (gc->layout == CblasColMajor)
        return seen->layout == CblasColMajor && seen->trans_a == handed_on(gc->trans_a) &&
               seen->trans_b == handed_on(gc->trans_b) && seen->a == a && seen->b == b;
    return seen->layout == CblasColMajor && seen->trans_a == handed_on(gc->trans_b) &&
           seen->trans_b == handed_on(gc->trans_a) && seen->a == b && seen->b == a;
}

/* One case on random heap operands, checked against OpenBLAS and for the path it took. */
static void heap_case(const tb_gemm_case *gc, int straight, const char *what, tb_rng *rng)
{
    char label[256];
    tb_case_label(gc, what, label, sizeof label);
    tb_gemm_operands ops;
    tb_operands_make(&ops, gc, rng);
    const int before = recorder_last().calls;
    const int ok_values = tb_run_case(gc, &ops, label) == 0;
    const recorder_call seen = recorder_last();
    const int ok_path = arrived_as(&seen, before, straight, gc, ops.a.data, ops.b.data);
    if (!ok_path)
        fprintf(stderr, "FAIL %s: the CPU BLAS saw %d calls (expected %d), layout %d, A %s\n", label,
                seen.calls - before, 1, seen.layout,
                seen.a == ops.a.data ? "as given" : seen.a == ops.b.data ? "swapped with B" : "elsewhere");
    tb_tally_record(&tally, ok_values && ok_path, label);
    tb_operands_free(&ops);
}

static tb_gemm_case square_case(int layout, int n, float alpha, float beta)
{
    tb_gemm_case gc = {layout, CblasNoTrans, CblasNoTrans, n, n, n, 0, 0, 0, alpha, beta};
    tb_case_set_ld(&gc, 0, 0, 0);
    return gc;
}

static void every_layout_and_transpose(tb_rng *rng)
{
    static const int shapes[][3] = {{1, 1, 1}, {16, 16, 16}, {7, 5, 3}, {2, 129, 3}, {33, 31, 17}};
    static const int transposes[] = {CblasNoTrans, CblasTrans, CblasConjTrans};
    static const float betas[] = {0.0f, 1.3f};
    for (int layout = CblasRowMajor; layout <= CblasColMajor; layout++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int ta = 0; ta < 3; ta++)
                for (int tb = 0; tb < 3; tb++)
                    for (int padded = 0; padded < 2; padded++)
                        for (int bi = 0; bi < 2; bi++) {
                            tb_gemm_case gc = {layout,      transposes[ta], transposes[tb], shapes[s][0],
                                               shapes[s][1], shapes[s][2],  0, 0, 0, 0.7f, betas[bi]};
                            tb_case_set_ld(&gc, padded ? 3 : 0, padded ? 1 : 0, padded ? 2 : 0);
                            heap_case(&gc, gate_can_open, "through the gate", rng);
                        }
}

/* A call with one invalid or empty argument after the gate opened, and what it must do instead. */
typedef struct odd_call {
    const char *what;
    int f77; /* through sgemm_ (column-major), else cblas_sgemm */
    int layout, trans_a, m, n, k, lda, ldb, ldc;
    int info;       /* the number xerbla_ receives (the Fortran SGEMM's, of the column-major call); 0: none */
    float scaled_by; /* no error: C's values afterwards, times its own (1: untouched) */
} odd_call;

static void run_odd_call(const odd_call *odd, float *a, float *b, float *c, int elements)
{
    for (int i = 0; i < elements; i++)
        a[i] = b[i] = 1.0f, c[i] = (float)i;
    memset(&xerbla_seen, 0, sizeof xerbla_seen);
    const int before = recorder_last().calls;
    const float alpha = 1.0f, beta = 0.5f;
    if (odd->f77) {
        const char trans = odd->trans_a == CblasNoTrans ? 'n' : 't';
        sgemm_(&trans, "N", &odd->m, &odd->n, &odd->k, &alpha, a, &odd->lda, b, &odd->ldb, &beta, c, &odd->ldc);
    } else {
        cblas_sgemm((CBLAS_LAYOUT)odd->layout, (CBLAS_TRANSPOSE)odd->trans_a, CblasNoTrans, odd->m, odd->n, odd->k,
                    alpha, a, odd->lda, b, odd->ldb, beta, c, odd->ldc);
    }
    const float factor = odd->info ? 1.0f : odd->scaled_by;
    int c_right = 1;
    for (int i = 0; i < elements; i++)
        c_right &= c[i] == factor * (float)i;
    const int reported = odd->info ? xerbla_seen.f77_calls == 1 && xerbla_seen.info == odd->info &&
                                         xerbla_seen.call_from_c == !odd->f77 &&
                                         xerbla_seen.row_major_strg == (odd->layout == CblasRowMajor)
                                   : xerbla_seen.f77_calls == 0;
    const int ok = reported && xerbla_seen.cblas_calls == 0 && recorder_last().calls == before && c_right &&
                   RowMajorStrg == 0 && CBLAS_CallFromC == 0;
    if (!ok)
        fprintf(stderr, "FAIL %s: xerbla_ called %d times with %d (expected %d), cblas_xerbla %d times; "
                "CPU BLAS called %d times; C %s\n", odd->what, xerbla_seen.f77_calls, xerbla_seen.info, odd->info,
                xerbla_seen.cblas_calls, recorder_last().calls - before, c_right ? "right" : "wrong");
    tb_tally_record(&tally, ok, odd->what);
}

/* Reported as before the gate opened, C untouched; empty calls only scale C, as the reference does. */
static void odd_arguments(void)
{
    enum { R = CblasRowMajor, C = CblasColMajor, N = CblasNoTrans, T = CblasTrans };
    /* A row-major call is checked as the column-major one with A and B swapped: its lda is that call's ldb. */
    static const odd_call odd[] = {
        {"row-major: lda below K", 0, R, N, 8, 8, 8, 7, 8, 8, 10, 0},
        {"row-major: ldb below N", 0, R, N, 8, 8, 8, 8, 7, 8, 8, 0},
        {"row-major: ldc below N", 0, R, N, 8, 8, 8, 8, 8, 7, 13, 0},
        {"row-major: M negative", 0, R, N, -1, 8, 8, 8, 8, 8, 4, 0},
        {"row-major: K negative", 0, R, N, 8, 8, -1, 8, 8, 8, 5, 0},
        {"column-major: lda below M", 0, C, N, 8, 8, 8, 7, 8, 8, 8, 0},
        {"column-major, A transposed: lda below K", 0, C, T, 8, 8, 6, 5, 8, 8, 8, 0},
        {"column-major: ldb below K", 0, C, N, 8, 8, 8, 8, 7, 8, 10, 0},
        {"sgemm_: lda below M", 1, C, N, 8, 8, 8, 7, 8, 8, 8, 0},
        {"sgemm_, A transposed: lda below K", 1, C, T, 8, 8, 6, 5, 8, 8, 8, 0},
        {"sgemm_: N negative", 1, C, N, 8, -1, 8, 8, 8, 8, 4, 0},
        {"row-major: M = 0", 0, R, N, 0, 8, 8, 8, 8, 8, 0, 1.0f},
        {"row-major: K = 0 scales C by beta", 0, R, N, 8, 8, 0, 8, 8, 8, 0, 0.5f},
        {"sgemm_: K = 0 scales C by beta", 1, C, N, 8, 8, 0, 8, 8, 8, 0, 0.5f},
    };
    const int elements = 64;
    float *a = malloc(sizeof(float) * elements), *b = malloc(sizeof(float) * elements),
          *c = malloc(sizeof(float) * elements);
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
        run_odd_call(&odd[i], a, b, c, elements);
    free(a), free(b), free(c);
}

/* alpha = 0 reads neither A nor B (NaN there) and only scales C: the CPU BLAS is not called. */
static void alpha_zero(void)
{
    const int n = 8;
    float *a = malloc(sizeof(float) * n * n), *b = malloc(sizeof(float) * n * n), *c = malloc(sizeof(float) * n * n);
    for (int i = 0; i < n * n; i++)
        a[i] = b[i] = NAN, c[i] = (float)i;
    const int before = recorder_last().calls;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 0.0f, a, n, b, n, 0.5f, c, n);
    int scaled = 1;
    for (int i = 0; i < n * n; i++)
        scaled &= c[i] == 0.5f * (float)i;
    const int ok = scaled && recorder_last().calls == before;
    if (!ok)
        fprintf(stderr, "FAIL alpha = 0: C %s, CPU BLAS called %d times\n", scaled ? "scaled" : "wrong",
                recorder_last().calls - before);
    tb_tally_record(&tally, ok, "alpha = 0");
    free(a), free(b), free(c);
}

#define SMALL 8
/* Small integers: any correct SGEMM gets every element exactly. */
static void fill_exact(float *a, float *b, float *c)
{
    for (int i = 0; i < SMALL * SMALL; i++) {
        a[i] = (float)(i % 5 - 2);
        b[i] = (float)((3 * i) % 7 - 3);
        c[i] = (float)(i % 3);
    }
}

/* Row-major C = A B + 2 C, exact. */
static int exact_result(const float *a, const float *b, const float *c0, const float *c)
{
    for (int i = 0; i < SMALL; i++)
        for (int j = 0; j < SMALL; j++) {
            double sum = 2.0 * c0[i * SMALL + j];
            for (int p = 0; p < SMALL; p++)
                sum += (double)a[i * SMALL + p] * b[p * SMALL + j];
            if (c[i * SMALL + j] != (float)sum)
                return 0;
        }
    return 1;
}

/* A row-major call on a, b, c; checks the result and how it reached the CPU BLAS (reached: 0 not at all). */
static void exact_case(const char *what, float *a, float *b, float *c, int reached, int straight)
{
    float c0[SMALL * SMALL];
    fill_exact(a, b, c);
    memcpy(c0, c, sizeof c0);
    const int before = recorder_last().calls;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, SMALL, SMALL, SMALL, 1.0f, a, SMALL, b, SMALL, 2.0f, c,
                SMALL);
    const recorder_call seen = recorder_last();
    const int exact = exact_result(a, b, c0, c);
    const tb_gemm_case gc = square_case(CblasRowMajor, SMALL, 1.0f, 2.0f);
    const int path = reached ? arrived_as(&seen, before, straight, &gc, a, b) : seen.calls == before;
    if (!exact || !path)
        fprintf(stderr, "FAIL %s: result %s; the CPU BLAS saw %d calls, layout %d\n", what,
                exact ? "exact" : "wrong", seen.calls - before, seen.layout);
    tb_tally_record(&tally, exact && path, what);
}

static void stack_and_heap_operands(void)
{
    float a[SMALL * SMALL], b[SMALL * SMALL], c[SMALL * SMALL];
    exact_case("operands on the stack take the general path", a, b, c, 1, 0);
    float *heap_c = malloc(sizeof c);
    exact_case("C on the heap, A and B on the stack", a, b, heap_c, 1, 0);
    float *heap_a = malloc(sizeof a), *heap_b = malloc(sizeof b);
    exact_case("all on the heap", heap_a, heap_b, heap_c, 1, gate_can_open);

    /* Forced to the GPU, the gate is shut: the GPU runs it, or (none) the general path's fallback. */
    tiledblas_set_device(TILEDBLAS_DEVICE_GPU);
    const int gpu = tiledblas_gpu_available();
    exact_case(gpu ? "forced GPU: not the CPU BLAS" : "forced GPU without one: the general path", heap_a, heap_b,
               heap_c, !gpu, 0);
    tiledblas_set_device(TILEDBLAS_DEVICE_CPU);
    exact_case("forced CPU", heap_a, heap_b, heap_c, 1, gate_can_open);
    tiledblas_set_device(TILEDBLAS_DEVICE_AUTO);
    exact_case("auto again", heap_a, heap_b, heap_c, 1, gate_can_open);
    free(heap_a), free(heap_b), free(heap_c);
}

/* Fortran SGEMM with the gate open: the CPU BLAS gets the call column-major with no conjugate, as from the
 * general path, so only its values and that one call are checked here. */
static void fortran_call(void)
{
    float *a = malloc(sizeof(float) * SMALL * SMALL), *b = malloc(sizeof(float) * SMALL * SMALL),
          *c = malloc(sizeof(float) * SMALL * SMALL);
    float c0[SMALL * SMALL];
    fill_exact(a, b, c);
    memcpy(c0, c, sizeof c0);
    const int n = SMALL;
    const float one = 1.0f, two = 2.0f;
    const int before = recorder_last().calls;
    /* Column-major C^T = B^T A^T: the row-major product above. */
    sgemm_("N", "N", &n, &n, &n, &one, b, &n, a, &n, &two, c, &n);
    const recorder_call seen = recorder_last();
    const tb_gemm_case gc = square_case(CblasColMajor, SMALL, 1.0f, 2.0f);
    const int ok = exact_result(a, b, c0, c) && arrived_as(&seen, before, 1, &gc, b, a);
    if (!ok)
        fprintf(stderr, "FAIL sgemm_: result %s, the CPU BLAS saw %d calls, layout %d\n",
                exact_result(a, b, c0, c) ? "exact" : "wrong", seen.calls - before, seen.layout);
    tb_tally_record(&tally, ok, "sgemm_");
    free(a), free(b), free(c);
}

int main(void)
{
    const char *verbose = getenv("TILEDBLAS_VERBOSE");
    gate_can_open = !verbose || atoi(verbose) == 0;
    if (!malloc_uses_brk_heap()) {
        printf("malloc does not serve small blocks from the brk heap here: the gate has nothing to take\n");
        return 77;
    }
    find_recorder();
    tb_rng rng;
    tb_rng_seed(&rng, 23);

    tb_gemm_case first = square_case(CblasRowMajor, 16, 1.0f, 0.0f);
    heap_case(&first, 0, "the first call: the gate is still shut", &rng);
    heap_case(&first, gate_can_open, "the second", &rng);
    every_layout_and_transpose(&rng);
    /* Forced to the CPU, so that it reaches the CPU BLAS on a GPU machine too. */
    tiledblas_set_device(TILEDBLAS_DEVICE_CPU);
    tb_gemm_case large = square_case(CblasRowMajor, 600, 1.0f, 0.5f);
    heap_case(&large, 0, "above the GPU floor", &rng);
    tiledblas_set_device(TILEDBLAS_DEVICE_AUTO);
    odd_arguments();
    alpha_zero();
    stack_and_heap_operands();
    fortran_call();
    return tb_tally_report(&tally);
}
