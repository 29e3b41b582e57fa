/*
 * The resolver (cpu/resolve.c) on its own: a name defined only in a library
 * dlopen'ed RTLD_LOCAL is found (dlsym(RTLD_NEXT) cannot see it there); a
 * library the resolver loaded itself does not count as the program's; a name
 * nobody defines gives NULL; the resolver's own object (here the test, whose
 * symbols are exported) is never the answer; the integer width of OpenBLAS's
 * LP64 and ILP64 builds is read right, without keeping the library loaded; the
 * executable's symbols have a handle.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cpu/resolve.h"

/* resolve.c's warnings (core/report.c in the library). */
void tb_warn(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fputc('\n', stderr);
}

static int failures;

static void expect(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "FAIL: %s\n", what);
        failures++;
    }
}

int main(void)
{
    expect(tb_resolve_next("sgemm_", NULL) == NULL, "sgemm_ found before any BLAS is loaded");
    expect(tb_resolve_next("no_such_routine_anywhere_", NULL) == NULL, "a name nobody defines was found");

    void *own = tb_resolve_own_load("libopenblas64.so.0");
    if (own) {
        expect(tb_resolve_next("isamax_", NULL) == NULL,
               "a library the resolver loaded itself counted as the program's");
        expect(tb_fortran_width_in(own, "isamax_") == 64, "libopenblas64.so.0 not read as 64-bit");
        /* The probe does not pin: a library closed again (rejected) goes. */
        tb_resolve_own_close(own);
        void *left = dlopen("libopenblas64.so.0", RTLD_LAZY | RTLD_NOLOAD);
        expect(left == NULL, "libopenblas64.so.0 still loaded after its only handle was closed");
        if (left)
            dlclose(left);
    }
    expect(tb_handle_of((const void *)main) != NULL, "no handle for a symbol of the executable");

    void *local = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!local) {
        fprintf(stderr, "SKIP: libopenblas.so.0 not found\n");
        return 77;
    }
    expect(dlsym(RTLD_NEXT, "sgemm_") == NULL, "the test's premise: RTLD_NEXT does not see a local scope");
    int shared = 0;
    void *sgemm = tb_resolve_next("sgemm_", &shared);
    expect(shared, "a name defined in one library only is not every caller's");
    expect(sgemm == dlsym(local, "sgemm_"), "sgemm_ of the RTLD_LOCAL OpenBLAS not found");
    expect(strstr(tb_object_path(sgemm), "openblas") != NULL, "tb_object_path does not name OpenBLAS");
    expect(tb_fortran_width(tb_resolve_next("isamax_", NULL)) == 32, "libopenblas.so.0 not read as 32-bit");
    expect(tb_resolve_next("tb_resolve_next", NULL) == NULL, "the resolver's own object was the answer");
    expect(tb_resolve_in(local, "openblas_get_num_threads") == dlsym(local, "openblas_get_num_threads"),
           "tb_resolve_in does not find the library's own definition");
    expect(tb_fortran_width(NULL) == 0, "no isamax, yet a width");

    /* Pinned: the library stays mapped after its last dlclose, and its sgemm_ with it. */
    dlclose(local);
    Dl_info info;
    expect(dladdr(sgemm, &info) && strstr(info.dli_fname, "openblas"), "the resolved library was unloaded");
    if (failures)
        return 1;
    printf("ok: the resolver\n");
    return 0;
}
