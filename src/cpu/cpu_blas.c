/*
 * The CPU path: whichever BLAS the process would have used without us.
 * Resolved once, lazily, in this order: the next sgemm_ in the process (when
 * preloaded, the application's own BLAS), TILEDBLAS_CPU_BLAS, libopenblas.so.0,
 * libblas.so.3, and last a simple built-in loop. Never ourselves.
 *
 * Calls go to that library's sgemm_, or to its cblas_sgemm when it is
 * OpenBLAS, which handles its arguments faster: on the H100 machine a 16^3
 * call (465 ns in OpenBLAS alone) took 20-24 ns longer through us that way,
 * 30-33 through its sgemm_. Other CBLAS layers may call sgemm_ by name (the
 * reference CBLAS does), which is ours when we are linked or preloaded: they
 * are never called.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "core/config.h"
#include "core/report.h"
#include "cpu/cpu_blas.h"

/* Fortran SGEMM with gfortran's hidden string lengths, which every BLAS accepts. */
typedef void (*f77_sgemm_fn)(const char *transa, const char *transb, const int *m, const int *n,
                             const int *k, const float *alpha, const float *a, const int *lda,
                             const float *b, const int *ldb, const float *beta, float *c,
                             const int *ldc, size_t transa_len, size_t transb_len);

static struct {
    f77_sgemm_fn sgemm;   /* NULL: built-in loop */
    tb_cblas_sgemm_fn cblas; /* the same library's CBLAS entry, where it cannot come back to us; else NULL */
    char name[512];
} backend;
static pthread_once_t backend_once = PTHREAD_ONCE_INIT;
static atomic_int backend_resolved;

static int is_ours(void *symbol)
{
    Dl_info theirs, ours;
    return dladdr(symbol, &theirs) && dladdr((void *)tb_cpu_sgemm, &ours) &&
           theirs.dli_fbase == ours.dli_fbase;
}

/* `name` from the object `info` describes, where it is defined there; else NULL. */
static void *symbol_of_object(void *handle, const Dl_info *info, const char *name)
{
    void *symbol = dlsym(handle, name);
    Dl_info where;
    return symbol && dladdr(symbol, &where) && where.dli_fbase == info->dli_fbase ? symbol : NULL;
}

/* OpenBLAS's cblas_sgemm, when the object holding the sgemm_ at `symbol` is OpenBLAS. */
static tb_cblas_sgemm_fn openblas_cblas(void *symbol)
{
    Dl_info info;
    if (!dladdr(symbol, &info) || !info.dli_fname)
        return NULL;
    /* A handle on the object already loaded; it stays loaded after dlclose, as whoever loaded it holds it. */
    void *handle = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_LOCAL);
    if (!handle)
        return NULL;
    void *cblas = symbol_of_object(handle, &info, "openblas_get_config")
                      ? symbol_of_object(handle, &info, "cblas_sgemm")
                      : NULL;
    dlclose(handle);
    return (tb_cblas_sgemm_fn)cblas;
}

static int use_symbol(void *symbol, const char *fallback_name)
{
    if (!symbol || is_ours(symbol))
        return 0;
    Dl_info info;
    const char *name = dladdr(symbol, &info) && info.dli_fname ? info.dli_fname : fallback_name;
    backend.sgemm = (f77_sgemm_fn)symbol;
    backend.cblas = openblas_cblas(symbol);
    snprintf(backend.name, sizeof backend.name, "%s", name);
    return 1;
}

/* RTLD_LOCAL keeps the library's symbols out of the global scope, where ours must stay first. */
static int use_library(const char *soname)
{
    void *handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!handle)
        return 0;
    if (use_symbol(dlsym(handle, "sgemm_"), soname))
        return 1;
    dlclose(handle);
    return 0;
}

static void find_backend(void)
{
    if (use_symbol(dlsym(RTLD_NEXT, "sgemm_"), "sgemm_"))
        return;
    const char *requested = tb_env("TILEDBLAS_CPU_BLAS");
    if (requested && *requested) {
        if (strcmp(requested, "builtin") == 0) {
            snprintf(backend.name, sizeof backend.name, "builtin");
            return;
        }
        if (use_library(requested))
            return;
        tb_warn("TILEDBLAS_CPU_BLAS=%s could not be loaded; trying libopenblas.so.0", requested);
    }
    if (use_library("libopenblas.so.0") || use_library("libblas.so.3"))
        return;
    snprintf(backend.name, sizeof backend.name, "builtin");
    tb_warn("no CPU BLAS found (libopenblas.so.0, libblas.so.3); using the slow built-in loop");
}

static void resolve_backend(void)
{
    find_backend();
    atomic_store(&backend_resolved, 1);
}

const char *tb_cpu_backend_name(void)
{
    pthread_once(&backend_once, resolve_backend);
    return backend.name;
}

const char *tb_cpu_backend_if_resolved(void)
{
    return atomic_load(&backend_resolved) ? backend.name : NULL;
}

tb_cblas_sgemm_fn tb_cpu_backend_cblas(void)
{
    pthread_once(&backend_once, resolve_backend);
    return backend.cblas;
}

/* Reference loop, accumulated in double; only runs when no CPU BLAS exists. */
static void builtin_sgemm(const tb_call *c)
{
    for (int64_t j = 0; j < c->n; j++) {
        for (int64_t i = 0; i < c->m; i++) {
            double acc = 0.0;
            for (int64_t p = 0; p < c->k; p++) {
                const float a = c->trans_a ? c->a[p + i * c->lda] : c->a[i + p * c->lda];
                const float b = c->trans_b ? c->b[j + p * c->ldb] : c->b[p + j * c->ldb];
                acc += (double)a * b;
            }
            float *out = &c->c[i + j * c->ldc];
            *out = c->beta == 0.0f ? (float)(c->alpha * acc)
                                   : (float)(c->alpha * acc) + c->beta * *out;
        }
    }
}

void tb_cpu_sgemm(const tb_call *c)
{
    if (!atomic_load_explicit(&backend_resolved, memory_order_acquire)) /* skips a call per SGEMM */
        pthread_once(&backend_once, resolve_backend);
    if (!backend.sgemm) {
        builtin_sgemm(c);
        return;
    }
    if (backend.cblas) {
        backend.cblas(CblasColMajor, c->trans_a ? CblasTrans : CblasNoTrans, c->trans_b ? CblasTrans : CblasNoTrans,
                      c->m, c->n, c->k, c->alpha, c->a, c->lda, c->b, c->ldb, c->beta, c->c, c->ldc);
        return;
    }
    const char ta = c->trans_a ? 'T' : 'N', tb = c->trans_b ? 'T' : 'N';
    backend.sgemm(&ta, &tb, &c->m, &c->n, &c->k, &c->alpha, c->a, &c->lda, c->b, &c->ldb,
                  &c->beta, c->c, &c->ldc, 1, 1);
}

void tb_scale_c_host(const tb_call *c)
{
    if (c->beta == 1.0f)
        return;
    for (int64_t j = 0; j < c->n; j++) {
        float *col = c->c + j * c->ldc;
        for (int64_t i = 0; i < c->m; i++)
            col[i] = c->beta == 0.0f ? 0.0f : c->beta * col[i];
    }
}
