/*
 * The error handlers and the reference CBLAS error protocol.
 *
 * The library always calls the handlers through their global symbols, so a
 * program's own definitions in its executable or ahead of us take their
 * place. The defaults here first hand the report to the handler the program
 * would have reached without us: the next definition in load order, by the
 * CPU BLAS's rule (cpu/resolve.h), which does not count the libraries
 * tiledblas loaded itself. Preloaded, that is the program's own handler or its
 * BLAS's; relinked, there is none, and the defaults print one line and return
 * (OpenBLAS's behaviour, not the reference's exit).
 *
 * As in the reference, a CBLAS routine's argument errors found by its Fortran
 * part (for cblas_sgemm: M, N, K and the leading dimensions) go to xerbla_
 * with CBLAS_CallFromC set, and xerbla_ hands them on to cblas_xerbla one
 * argument later (the layout comes first). The SGEMM names with 64-bit
 * integers report through xerbla_64_, whose info is 64-bit, the same way;
 * cblas_xerbla takes an int everywhere.
 *
 * RowMajorStrg and CBLAS_CallFromC are written only while an error is
 * reported, under one lock for the whole report, so a valid call in another
 * thread never changes what a handler reads.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "compat.h"
#include "core/fork_reset.h"
#include "cpu/resolve.h"
#include "tiledblas.h"

int RowMajorStrg = 0;
int CBLAS_CallFromC = 0;

/* Recursive: a handler may itself make a call that reports an error. */
static pthread_mutex_t report_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

TB_FREE_IN_CHILD(report_lock, PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP)

void tb_report_cblas(int row_major, int info, const char *routine, const char *form, int value)
{
    pthread_mutex_lock(&report_lock);
    const int saved = RowMajorStrg;
    RowMajorStrg = row_major;
    cblas_xerbla(info, routine, form, value);
    RowMajorStrg = saved;
    pthread_mutex_unlock(&report_lock);
}

void tb_report_f77(int ilp64, int from_cblas, int row_major, int info)
{
    pthread_mutex_lock(&report_lock);
    const int saved_row_major = RowMajorStrg, saved_from_c = CBLAS_CallFromC;
    if (from_cblas)
        RowMajorStrg = row_major, CBLAS_CallFromC = 1;
    const int64_t info64 = info;
    if (ilp64)
        xerbla_64_("SGEMM ", &info64, 6);
    else
        xerbla_("SGEMM ", &info, 6);
    RowMajorStrg = saved_row_major, CBLAS_CallFromC = saved_from_c;
    pthread_mutex_unlock(&report_lock);
}

static const char *const cblas_sgemm_args[] = {
    "", "Layout", "TransA", "TransB", "M", "N", "K", "alpha", "A", "lda", "B", "ldb", "beta", "C", "ldc",
};
static const char *const f77_sgemm_args[] = {
    "", "TRANSA", "TRANSB", "M", "N", "K", "ALPHA", "A", "LDA", "B", "LDB", "BETA", "C", "LDC",
};

static const char *arg_name(const char *const *names, size_t count, int64_t info)
{
    return info > 0 && (size_t)info < count ? names[info] : "?";
}

/*
 * A row-major call runs as a column-major one with some arguments swapped and
 * reports their numbers there; the reference maps them back per routine family
 * (the first family the name contains), as here.
 */
static const struct {
    const char *family, *except; /* names containing `except` are not of the family */
    int swap[2][2];              /* pairs of numbers to exchange; {0, 0}: none */
} row_major_swaps[] = {
    {"gemm", NULL, {{4, 5}, {9, 11}}}, {"symm", NULL, {{4, 5}, {0, 0}}}, {"hemm", NULL, {{4, 5}, {0, 0}}},
    {"trmm", NULL, {{6, 7}, {0, 0}}},  {"trsm", NULL, {{6, 7}, {0, 0}}}, {"gemv", NULL, {{3, 4}, {0, 0}}},
    {"gbmv", NULL, {{3, 4}, {5, 6}}},  {"ger", NULL, {{2, 3}, {6, 8}}},  {"her2", "her2k", {{6, 8}, {0, 0}}},
    {"hpr2", NULL, {{6, 8}, {0, 0}}},
};

static int row_major_position(int info, const char *routine)
{
    for (size_t f = 0; f < sizeof row_major_swaps / sizeof *row_major_swaps; f++) {
        if (!strstr(routine, row_major_swaps[f].family) ||
            (row_major_swaps[f].except && strstr(routine, row_major_swaps[f].except)))
            continue;
        for (int p = 0; p < 2; p++) {
            const int *pair = row_major_swaps[f].swap[p];
            if (info == pair[0] || info == pair[1])
                return info == pair[0] ? pair[1] : pair[0];
        }
        return info;
    }
    return info;
}

/*
 * The handler a default passes the report to, looked up at its first report
 * only: the object defining it is pinned, so the address stays valid. Threads
 * reporting at once may each look it up; they find the same one.
 */
typedef struct {
    atomic_int found;
    _Atomic(void *) handler; /* NULL: none, the default reports itself */
} next_handler;

static next_handler next_cblas_xerbla, next_xerbla, next_xerbla_64;

static void *handler_of(next_handler *next, const char *name)
{
    if (!atomic_load_explicit(&next->found, memory_order_acquire)) {
        atomic_store_explicit(&next->handler, tb_resolve_next(name, NULL), memory_order_relaxed);
        atomic_store_explicit(&next->found, 1, memory_order_release);
    }
    return atomic_load_explicit(&next->handler, memory_order_relaxed);
}

typedef void (*cblas_xerbla_fn)(int info, const char *routine, const char *form, ...);
typedef void (*xerbla_fn)(const char *srname, const int *info, size_t srname_len);
typedef void (*xerbla64_fn)(const char *srname, const int64_t *info, size_t srname_len);

void cblas_xerbla(int info, const char *routine, const char *form, ...)
{
    char message[256];
    va_list args;
    va_start(args, form);
    vsnprintf(message, sizeof message, form, args);
    va_end(args);
    void *next = handler_of(&next_cblas_xerbla, "cblas_xerbla");
    if (next) {
        /* It maps a row-major number itself, from the RowMajorStrg set for it. */
        ((cblas_xerbla_fn)next)(info, routine, "%s", message);
        return;
    }
    if (RowMajorStrg)
        info = row_major_position(info, routine);
    if (strcmp(routine, "cblas_sgemm") == 0)
        fprintf(stderr, "tiledblas: parameter %d (%s) to %s was invalid\n", info,
                arg_name(cblas_sgemm_args, sizeof cblas_sgemm_args / sizeof *cblas_sgemm_args, info), routine);
    else
        fprintf(stderr, "tiledblas: parameter %d to %s was invalid\n", info, routine);
}

/* The default Fortran handler's own report, for xerbla_ and xerbla_64_. */
static void report_f77(const char *srname, int64_t info, size_t srname_len)
{
    /* Fortran strings are blank-padded, not NUL-terminated. */
    size_t len = strnlen(srname, srname_len < 24 ? srname_len : 24);
    while (len > 0 && srname[len - 1] == ' ')
        len--;
    if (CBLAS_CallFromC) {
        char routine[32] = "cblas_";
        for (size_t i = 0; i < len; i++)
            routine[6 + i] = (char)tolower((unsigned char)srname[i]);
        cblas_xerbla((int)info + 1, routine, "");
    } else if (len == 5 && strncmp(srname, "SGEMM", 5) == 0) {
        fprintf(stderr, "tiledblas: parameter %lld (%s) to SGEMM was invalid\n", (long long)info,
                arg_name(f77_sgemm_args, sizeof f77_sgemm_args / sizeof *f77_sgemm_args, info));
    } else {
        fprintf(stderr, "tiledblas: parameter %lld to %.*s was invalid\n", (long long)info, (int)len, srname);
    }
}

void xerbla_(const char *srname, const int *info, size_t srname_len)
{
    void *next = handler_of(&next_xerbla, "xerbla_");
    if (next)
        ((xerbla_fn)next)(srname, info, srname_len);
    else
        report_f77(srname, *info, srname_len);
}

void xerbla_64_(const char *srname, const int64_t *info, size_t srname_len)
{
    void *next = handler_of(&next_xerbla_64, "xerbla_64_");
    if (next)
        ((xerbla64_fn)next)(srname, info, srname_len);
    else
        report_f77(srname, *info, srname_len);
}
