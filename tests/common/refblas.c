#include "refblas.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_once_t ref_once = PTHREAD_ONCE_INIT;
static tb_ref_sgemm_fn ref_sgemm;

static void load_reference(void)
{
    const char *path = getenv("OPENBLAS_LIB");
    if (path == NULL || path[0] == '\0')
        path = "libopenblas.so.0";

    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        fprintf(stderr, "reference BLAS: cannot load %s: %s (set OPENBLAS_LIB)\n",
                path, dlerror());
        exit(EXIT_FAILURE);
    }
    /* Through the handle: the global cblas_sgemm is the code under test. */
    void *symbol = dlsym(handle, "cblas_sgemm");
    if (symbol == NULL) {
        fprintf(stderr, "reference BLAS: %s has no cblas_sgemm: %s\n", path, dlerror());
        exit(EXIT_FAILURE);
    }
    /* POSIX guarantees object and function pointers convert through dlsym. */
    *(void **)&ref_sgemm = symbol;
}

tb_ref_sgemm_fn tb_ref_cblas_sgemm(void)
{
    pthread_once(&ref_once, load_reference);
    return ref_sgemm;
}
