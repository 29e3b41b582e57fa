/*
 * The CPU path: whichever BLAS the process would have used without us, one
 * target per naming convention of the SGEMM names (cpu_blas.h). A target is
 * resolved once, on first use:
 *   1. LP64 names: TILEDBLAS_CPU_BLAS (a library, or "builtin");
 *   2. the next definition of the convention's Fortran SGEMM in load order,
 *      whatever its dlopen scope (resolve.h): preloaded, the program's own;
 *   3. LP64: libopenblas.so.0, then libblas.so.3 (with liblapack.so.3 for the
 *      forwarders); ILP64: libopenblas64.so.0, under the convention's names or
 *      the plain ones (Debian's build exports its 64-bit routines so);
 *   4. a simple built-in loop, with a warning.
 * A library is used only where its integer width is established and is the
 * target's (tb_fortran_width): 32-bit integers never reach a 64-bit BLAS, nor
 * the reverse. Never ourselves. Every object providing a target is pinned.
 *
 * Calls go to the library's Fortran SGEMM, or to its CBLAS SGEMM when it is
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

#include "abi_tables.h"
#include "core/config.h"
#include "core/fork_reset.h"
#include "core/report.h"
#include "cpu/cpu_blas.h"
#include "cpu/resolve.h"

/* Fortran SGEMM with gfortran's hidden string lengths, which every BLAS accepts: 32- and 64-bit integers. */
typedef void (*f77_sgemm_fn)(const char *transa, const char *transb, const int *m, const int *n, const int *k,
                             const float *alpha, const float *a, const int *lda, const float *b, const int *ldb,
                             const float *beta, float *c, const int *ldc, size_t transa_len, size_t transb_len);
typedef void (*f77_sgemm64_fn)(const char *transa, const char *transb, const int64_t *m, const int64_t *n,
                               const int64_t *k, const float *alpha, const float *a, const int64_t *lda,
                               const float *b, const int64_t *ldb, const float *beta, float *c, const int64_t *ldc,
                               size_t transa_len, size_t transb_len);
typedef void (*cblas_sgemm64_fn)(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int64_t m,
                                 int64_t n, int64_t k, float alpha, const float *a, int64_t lda, const float *b,
                                 int64_t ldb, float beta, float *c, int64_t ldc);

typedef struct {
    const char *name;                              /* as conventions.txt names it */
    const char *cblas, *fortran, *openblas_config; /* formats of the names; the config's, or NULL */
    int ilp64;
} convention;
#define TB_CONVENTION_ENTRY(index, name, cblas, fortran, config, wide) {name, cblas, fortran, config, wide},
static const convention conventions[TB_CONVENTION_COUNT] = {TB_CONVENTIONS(TB_CONVENTION_ENTRY)};
static const convention plain_lp64 = {"plain", "cblas_%s", "%s_", "openblas_get_config", 0};
static const convention plain_ilp64 = {"plain", "cblas_%s", "%s_", "openblas_get_config", 1};

#define TB_TARGET_ENTRY(index, name, cblas, fortran, config, wide) {.convention = index, .ilp64 = wide},
static tb_cpu_target targets[TB_CONVENTION_COUNT] = {TB_CONVENTIONS(TB_TARGET_ENTRY)};

/* The convention of the latest call by a 64-bit-integer SGEMM name; -1 before any. */
static atomic_int latest_ilp64 = -1;

/*
 * What resolution finds is published under this lock, the first thread's
 * answer kept. Resolution itself runs without it: it loads libraries and calls
 * into them (their isamax), and a lock held there could deadlock against the
 * dynamic loader's (a library constructor making a BLAS call while another
 * thread resolves). A child forked while another thread held it starts with it
 * free (the other thread does not exist there).
 */
static pthread_mutex_t targets_lock = PTHREAD_MUTEX_INITIALIZER;

TB_FREE_IN_CHILD(targets_lock, PTHREAD_MUTEX_INITIALIZER)

/* Libraries this library loads itself, with what loading them found. */
typedef struct {
    void *handles[2];
    int builtin;        /* TILEDBLAS_CPU_BLAS=builtin */
    char searched[128]; /* what was looked for, for messages */
} libraries;

typedef struct {
    atomic_int done;
    libraries loaded;
} libraries_once;

/*
 * The libraries `load` finds, loaded once: each thread that finds them not
 * yet loaded loads its own copy, the first to finish publishes it and the
 * others close theirs.
 */
static const libraries *load_once(libraries_once *once, void (*load)(libraries *out))
{
    if (atomic_load_explicit(&once->done, memory_order_acquire))
        return &once->loaded;
    libraries mine = {0};
    load(&mine);
    pthread_mutex_lock(&targets_lock);
    const int first = !atomic_load_explicit(&once->done, memory_order_relaxed);
    if (first) {
        once->loaded = mine;
        atomic_store_explicit(&once->done, 1, memory_order_release);
    }
    pthread_mutex_unlock(&targets_lock);
    for (int i = 0; i < 2 && !first; i++)
        if (mine.handles[i])
            tb_resolve_own_close(mine.handles[i]);
    return &once->loaded;
}

tb_cpu_target *tb_cpu_target_of(int convention)
{
    return &targets[convention];
}

static const char *spell(char *out, size_t size, const char *format, const char *routine)
{
    snprintf(out, size, format, routine);
    return out;
}

/* Takes SGEMM from the object behind `handle` under the names of `conv`, if its width is the target's. */
static int use_object(tb_cpu_target *t, void *handle, const convention *conv)
{
    char name[64];
    if (tb_fortran_width_in(handle, spell(name, sizeof name, conv->fortran, "isamax")) != (t->ilp64 ? 64 : 32))
        return 0;
    void *sgemm = tb_resolve_in(handle, spell(name, sizeof name, conv->fortran, "sgemm"));
    if (!sgemm)
        return 0;
    t->sgemm = sgemm;
    t->cblas = conv->openblas_config && tb_resolve_in(handle, conv->openblas_config)
                   ? tb_resolve_in(handle, spell(name, sizeof name, conv->cblas, "sgemm"))
                   : NULL;
    snprintf(t->name, sizeof t->name, "%s", tb_object_path(sgemm));
    return 1;
}

static int use_next(tb_cpu_target *t, const convention *conv)
{
    char name[64];
    void *sgemm = tb_resolve_next(spell(name, sizeof name, conv->fortran, "sgemm"), NULL);
    void *handle = sgemm ? tb_handle_of(sgemm) : NULL;
    const int used = handle && use_object(t, handle, conv);
    if (handle)
        dlclose(handle);
    return used;
}

/*
 * The LP64 libraries this library loads itself, each once and only when
 * needed: TILEDBLAS_CPU_BLAS's, and the defaults after the program's own.
 */
static libraries_once requested_once, defaults_once;

/* `name`, loaded, if it is a BLAS with 32-bit integers; else closed again. */
static void *load_lp64(const char *name)
{
    void *handle = tb_resolve_own_load(name);
    if (handle && tb_fortran_width_in(handle, "isamax_") != 32) {
        tb_warn("%s is not a BLAS with 32-bit integers (its isamax_ says so, or it has none); not used", name);
        tb_resolve_own_close(handle);
        return NULL;
    }
    return handle;
}

static void load_requested(libraries *out)
{
    const char *requested = tb_env("TILEDBLAS_CPU_BLAS");
    if (!requested || !*requested)
        return;
    out->builtin = strcmp(requested, "builtin") == 0;
    if (!out->builtin && !(out->handles[0] = load_lp64(requested)))
        tb_warn("TILEDBLAS_CPU_BLAS=%s could not be used; trying libopenblas.so.0", requested);
}

static void load_defaults(libraries *out)
{
    if ((out->handles[0] = load_lp64("libopenblas.so.0"))) {
        snprintf(out->searched, sizeof out->searched, "libopenblas.so.0");
    } else if ((out->handles[0] = load_lp64("libblas.so.3"))) {
        out->handles[1] = tb_resolve_own_load("liblapack.so.3");
        snprintf(out->searched, sizeof out->searched, "libblas.so.3%s",
                 out->handles[1] ? " and liblapack.so.3" : " (no liblapack.so.3)");
    } else {
        snprintf(out->searched, sizeof out->searched, "no libopenblas.so.0 nor libblas.so.3");
    }
}

static void resolve_lp64(tb_cpu_target *t, const convention *conv)
{
    const libraries *requested = load_once(&requested_once, load_requested);
    if (requested->builtin)
        return;
    if (requested->handles[0] && use_object(t, requested->handles[0], &plain_lp64))
        return;
    if (use_next(t, conv))
        return;
    const libraries *defaults = load_once(&defaults_once, load_defaults);
    for (int i = 0; i < 2 && defaults->handles[i]; i++)
        if (use_object(t, defaults->handles[i], &plain_lp64))
            return;
    tb_warn("no CPU BLAS found (libopenblas.so.0, libblas.so.3); using the slow built-in loop");
}

static libraries_once ilp64_once;

/* libopenblas64.so.0, if its integers are 64-bit under its plain names or the _64_ ones; else closed again. */
static void load_ilp64_library(libraries *out)
{
    void *handle = tb_resolve_own_load("libopenblas64.so.0");
    if (handle && tb_fortran_width_in(handle, "isamax_") != 64 && tb_fortran_width_in(handle, "isamax_64_") != 64) {
        tb_warn("libopenblas64.so.0 is not a BLAS with 64-bit integers (its isamax says so); not used");
        tb_resolve_own_close(handle);
        handle = NULL;
    }
    out->handles[0] = handle;
}

static void resolve_target(tb_cpu_target *t)
{
    const convention *conv = &conventions[t->convention];
    if (conv->ilp64) {
        if (!use_next(t, conv)) {
            void *library = load_once(&ilp64_once, load_ilp64_library)->handles[0];
            const int used = library && (use_object(t, library, conv) || use_object(t, library, &plain_ilp64));
            if (!used)
                TB_WARN_ONCE("no CPU BLAS with 64-bit integers found (libopenblas64.so.0); 64-bit-integer SGEMM "
                             "names use the slow built-in loop on the CPU");
        }
    } else {
        resolve_lp64(t, conv);
    }
    if (!t->sgemm)
        snprintf(t->name, sizeof t->name, "builtin");
}

/* `t`, resolved into a copy without the lock and published under it (the first thread's answer is kept). */
static tb_cpu_target *resolved(tb_cpu_target *t)
{
    if (atomic_load_explicit(&t->resolved, memory_order_acquire))
        return t;
    tb_cpu_target mine = {.convention = t->convention, .ilp64 = t->ilp64};
    resolve_target(&mine);
    pthread_mutex_lock(&targets_lock);
    if (!atomic_load_explicit(&t->resolved, memory_order_relaxed)) {
        t->sgemm = mine.sgemm;
        t->cblas = mine.cblas;
        memcpy(t->name, mine.name, sizeof t->name);
        atomic_store_explicit(&t->resolved, 1, memory_order_release);
    }
    pthread_mutex_unlock(&targets_lock);
    return t;
}

const char *tb_cpu_backend_name(void)
{
    return resolved(&targets[0])->name;
}

/* Appends to the text in out[size], of which *used is taken; what does not fit is cut. */
static void append(char *out, size_t size, size_t *used, const char *format, const char *text)
{
    if (*used < size)
        *used += (size_t)snprintf(out + *used, size - *used, format, text);
}

static int same_library(int i, int j)
{
    return atomic_load(&targets[j].resolved) && strcmp(targets[j].name, targets[i].name) == 0;
}

int tb_cpu_backends_describe(char *out, size_t size)
{
    int libraries = 0;
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < TB_CONVENTION_COUNT; i++) {
        int listed = !atomic_load(&targets[i].resolved);
        for (int j = 0; j < i && !listed; j++)
            listed = same_library(i, j);
        if (listed)
            continue;
        append(out, size, &used, libraries ? " + %s" : "%s", targets[i].name);
        append(out, size, &used, " (%s", conventions[i].name);
        for (int j = i + 1; j < TB_CONVENTION_COUNT; j++)
            if (same_library(i, j))
                append(out, size, &used, ", %s", conventions[j].name);
        append(out, size, &used, "%s", ")");
        libraries++;
    }
    return libraries;
}

tb_cblas_sgemm_fn tb_cpu_backend_cblas(void)
{
    return (tb_cblas_sgemm_fn)resolved(&targets[0])->cblas;
}

void tb_cpu_note_ilp64_call(const tb_cpu_target *t)
{
    if (atomic_load_explicit(&latest_ilp64, memory_order_relaxed) != t->convention)
        atomic_store_explicit(&latest_ilp64, t->convention, memory_order_relaxed);
}

const char *tb_cpu_backend_ilp64_name(void)
{
    int convention = atomic_load_explicit(&latest_ilp64, memory_order_relaxed);
    for (int i = 0; i < TB_CONVENTION_COUNT && convention < 0; i++)
        if (conventions[i].ilp64)
            convention = i;
    if (convention < 0)
        return "none";
    return resolved(&targets[convention])->sgemm ? targets[convention].name : "none";
}

void *tb_cpu_lookup_ilp64(const char *name, const char *plain, int *shared, char *searched, size_t searched_size)
{
    void *symbol = tb_resolve_next(name, shared);
    if (symbol)
        return symbol;
    void *library = load_once(&ilp64_once, load_ilp64_library)->handles[0];
    symbol = library ? tb_resolve_in(library, name) : NULL;
    if (!symbol && library)
        symbol = tb_resolve_in(library, plain);
    if (!symbol)
        snprintf(searched, searched_size, "the loaded objects in load order, %s",
                 library ? "libopenblas64.so.0 (also as plain name)" : "no libopenblas64.so.0");
    return symbol;
}

void *tb_cpu_lookup(const char *name, int *shared, char *searched, size_t searched_size)
{
    void *requested = load_once(&requested_once, load_requested)->handles[0];
    *shared = 1;
    void *symbol = requested ? tb_resolve_in(requested, name) : NULL;
    if (!symbol)
        symbol = tb_resolve_next(name, shared);
    if (symbol)
        return symbol;
    const libraries *defaults = load_once(&defaults_once, load_defaults);
    for (int i = 0; i < 2 && !symbol && defaults->handles[i]; i++)
        symbol = tb_resolve_in(defaults->handles[i], name);
    if (!symbol)
        snprintf(searched, searched_size, "the loaded objects in load order%s, %s",
                 requested ? ", TILEDBLAS_CPU_BLAS" : "", defaults->searched);
    return symbol;
}

/* Reference loop, accumulated in double; only runs when no CPU BLAS exists. */
static void builtin_sgemm(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
                          int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc)
{
    for (int64_t j = 0; j < n; j++) {
        for (int64_t i = 0; i < m; i++) {
            double acc = 0.0;
            for (int64_t p = 0; p < k; p++) {
                const float x = trans_a ? a[p + i * lda] : a[i + p * lda];
                const float y = trans_b ? b[j + p * ldb] : b[p + j * ldb];
                acc += (double)x * y;
            }
            float *out = &c[i + j * ldc];
            *out = beta == 0.0f ? (float)(alpha * acc) : (float)(alpha * acc) + beta * *out;
        }
    }
}

void tb_cpu_sgemm64(tb_cpu_target *target, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                    const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc)
{
    const tb_cpu_target *t = resolved(target);
    if (!t->sgemm) {
        builtin_sgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    } else if (t->cblas) {
        ((cblas_sgemm64_fn)t->cblas)(CblasColMajor, trans_a ? CblasTrans : CblasNoTrans,
                                     trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c,
                                     ldc);
    } else {
        const char ta = trans_a ? 'T' : 'N', tb = trans_b ? 'T' : 'N';
        ((f77_sgemm64_fn)t->sgemm)(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);
    }
}

void tb_cpu_sgemm(const tb_call *c)
{
    tb_cpu_target *t = c->cpu ? c->cpu : &targets[0];
    if (!atomic_load_explicit(&t->resolved, memory_order_acquire)) /* skips a call per SGEMM */
        resolved(t);
    if (t->ilp64) {
        tb_cpu_sgemm64(t, c->trans_a, c->trans_b, c->m, c->n, c->k, c->alpha, c->a, c->lda, c->b, c->ldb, c->beta,
                       c->c, c->ldc);
    } else if (!t->sgemm) {
        builtin_sgemm(c->trans_a, c->trans_b, c->m, c->n, c->k, c->alpha, c->a, c->lda, c->b, c->ldb, c->beta, c->c,
                      c->ldc);
    } else if (t->cblas) {
        ((tb_cblas_sgemm_fn)t->cblas)(CblasColMajor, c->trans_a ? CblasTrans : CblasNoTrans,
                                      c->trans_b ? CblasTrans : CblasNoTrans, c->m, c->n, c->k, c->alpha, c->a,
                                      c->lda, c->b, c->ldb, c->beta, c->c, c->ldc);
    } else {
        const char ta = c->trans_a ? 'T' : 'N', tb = c->trans_b ? 'T' : 'N';
        ((f77_sgemm_fn)t->sgemm)(&ta, &tb, &c->m, &c->n, &c->k, &c->alpha, c->a, &c->lda, c->b, &c->ldb, &c->beta,
                                 c->c, &c->ldc, 1, 1);
    }
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
