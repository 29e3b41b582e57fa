/*
 * CBLAS calls on host memory, shared by --e2e and --policy: the operands of a
 * shape, one timed call, the checked first call (against FP64 sums of sampled
 * elements), and OpenBLAS's cblas_sgemm loaded at run time.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

void bench_host_run(const bench_host_call *r)
{
    const bench_case *bc = r->bc;
    /* bench_parse keeps every dimension within int. */
    r->sgemm(bc->row_major ? CblasRowMajor : CblasColMajor,
             bc->trans_a ? CblasTrans : CblasNoTrans, bc->trans_b ? CblasTrans : CblasNoTrans,
             (int)bc->m, (int)bc->n, (int)bc->k, 1.0f, r->a, (int)bc->lda, r->b, (int)bc->ldb,
             bc->beta, r->c, (int)bc->ldc);
}

double bench_host_call_ms(void *ctx)
{
    const double t0 = bench_now_ms();
    bench_host_run(ctx);
    return bench_now_ms() - t0;
}

float *bench_random_buffer(size_t n, uint64_t seed)
{
    float *x = bench_xmalloc(n * sizeof *x);
    bench_fill(x, n, seed);
    return x;
}

void bench_host_bufs_make(bench_host_bufs *h, bench_shape sh, float beta)
{
    memset(h, 0, sizeof *h);
    h->nc = (size_t)(sh.m * sh.n);
    h->a = bench_random_buffer((size_t)(sh.m * sh.k), 1);
    h->b = bench_random_buffer((size_t)(sh.k * sh.n), 2);
    h->c = bench_xmalloc(h->nc * sizeof *h->c);
    if (beta != 0.0f)
        h->c0 = bench_random_buffer(h->nc, 3);
}

void bench_host_bufs_free(bench_host_bufs *h)
{
    free(h->a);
    free(h->b);
    free(h->c);
    free(h->c0);
}

/*
 * The corners and random elements of C (column-major coordinates, g->c is
 * C0), each with the classic worst-case bound for FP32 dot products:
 * (K + 2) * 2^-24 * (|alpha| sum |a||b| + |beta c0|). A result within it has
 * err/bound <= 1 whatever the summation order.
 */
void bench_samples_make(const tb_gemm_args *g, bench_sample *s)
{
    const double u = ldexp(1.0, -24);
    for (int q = 0; q < BENCH_SAMPLES; q++) {
        bench_sample *x = &s[q];
        if (q < 4) {
            x->i = q & 1 ? g->m - 1 : 0;
            x->j = q & 2 ? g->n - 1 : 0;
        } else {
            x->i = (int64_t)(bench_hash(2 * (uint64_t)q) % (uint64_t)g->m);
            x->j = (int64_t)(bench_hash(2 * (uint64_t)q + 1) % (uint64_t)g->n);
        }
        double sum = 0.0, mag = 0.0;
        for (int64_t p = 0; p < g->k; p++) {
            const double a = g->trans_a ? g->a[p + x->i * g->lda] : g->a[x->i + p * g->lda];
            const double b = g->trans_b ? g->b[x->j + p * g->ldb] : g->b[p + x->j * g->ldb];
            sum += a * b;
            mag += fabs(a * b);
        }
        x->ref = g->alpha * sum;
        mag *= fabs(g->alpha);
        if (g->beta != 0.0f) {
            const double c0 = (double)g->beta * g->c[x->i + x->j * g->ldc];
            x->ref += c0;
            mag += fabs(c0);
        }
        x->bound = (double)(g->k + 2) * u * mag;
    }
}

double bench_sampled_error(const float *c, int64_t ldc, const bench_sample *s)
{
    double worst = 0.0;
    for (int q = 0; q < BENCH_SAMPLES; q++) {
        const double e = fabs(c[s[q].i + s[q].j * ldc] - s[q].ref) / s[q].bound;
        if (!(e <= worst)) /* NaN sticks */
            worst = e;
    }
    return worst;
}

void bench_row_fail(bench_row *row, const char *why)
{
    row->failed = 1;
    snprintf(row->status, sizeof row->status, "FAIL: %s", why);
}

void bench_host_check(bench_row *row, bench_sgemm_fn sgemm, const bench_case *bc, const bench_host_bufs *h,
                      const bench_sample *s)
{
    bench_host_call r = {sgemm, bc, h->a, h->b, h->c};
    size_t nonfinite = 0;
    char why[64];

    if (bc->beta == 0.0f) /* NaN: C must be written, never read */
        for (size_t e = 0; e < h->nc; e++)
            h->c[e] = NAN;
    else
        memcpy(h->c, h->c0, h->nc * sizeof *h->c);
    bench_host_run(&r);
    for (size_t e = 0; e < h->nc; e++)
        nonfinite += !isfinite(h->c[e]);
    row->error = bench_sampled_error(h->c, bc->ldc, s);
    if (nonfinite) {
        snprintf(why, sizeof why, "%zu of %zu outputs NaN/Inf", nonfinite, h->nc);
        bench_row_fail(row, why);
    } else if (!(row->error <= 1.0)) {
        bench_row_fail(row, "error above the FP32 bound");
    }
}

/* OpenBLAS through dlopen: linking it would clash with our own cblas_sgemm. */
bench_sgemm_fn bench_load_openblas(void **handle)
{
    const char *path = getenv("OPENBLAS_LIB");
    if (!path || !*path)
        path = "libopenblas.so.0";
    *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!*handle) {
        fprintf(stderr, "tiledblas-bench: cannot load OpenBLAS: %s\n", dlerror());
        return NULL;
    }
    bench_sgemm_fn sgemm = (bench_sgemm_fn)dlsym(*handle, "cblas_sgemm");
    if (!sgemm) {
        fprintf(stderr, "tiledblas-bench: %s: %s\n", path, dlerror());
        dlclose(*handle);
        return NULL;
    }

    /* OpenBLAS's own extensions, when present, say what was measured: its build, the core
     * whose kernels run (detected, or forced by OPENBLAS_CORETYPE) and its thread count. */
    char *(*config)(void) = (char *(*)(void))dlsym(*handle, "openblas_get_config");
    char *(*corename)(void) = (char *(*)(void))dlsym(*handle, "openblas_get_corename");
    int (*threads)(void) = (int (*)(void))dlsym(*handle, "openblas_get_num_threads");
    const char *coretype = getenv("OPENBLAS_CORETYPE");
    printf("baseline: OpenBLAS cblas_sgemm from %s", path);
    if (config)
        printf(", %s", config());
    if (corename)
        printf(", core %s (OPENBLAS_CORETYPE=%s)", corename(), coretype && *coretype ? coretype : "(unset)");
    if (threads)
        printf(", %d threads", threads());
    printf("\n");
    return sgemm;
}
