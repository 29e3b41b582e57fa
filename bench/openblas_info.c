/*
 * What an OpenBLAS library is and which kernels it runs on this host, for
 * bench/suite.sh's environment.txt and its choice of OPENBLAS_CORETYPE.
 *
 *     openblas_info [LIBRARY]      (default: $OPENBLAS_LIB, else libopenblas.so.0)
 *
 * Prints "key: value" lines: the file the loader opened, openblas_get_config(),
 * openblas_get_corename() (the core whose kernels it uses: the one it detected,
 * or OPENBLAS_CORETYPE's where a DYNAMIC_ARCH build honours it) and its thread
 * count. The library is dlopen'ed, not linked, so one binary inspects any
 * OpenBLAS. Exit status 1 when the library cannot be loaded.
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : getenv("OPENBLAS_LIB");
    if (!path || !*path)
        path = "libopenblas.so.0";
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        fprintf(stderr, "openblas_info: %s\n", dlerror());
        return 1;
    }
    void *sgemm = dlsym(handle, "cblas_sgemm");
    char *(*config)(void) = (char *(*)(void))dlsym(handle, "openblas_get_config");
    char *(*corename)(void) = (char *(*)(void))dlsym(handle, "openblas_get_corename");
    int (*threads)(void) = (int (*)(void))dlsym(handle, "openblas_get_num_threads");

    Dl_info info;
    printf("file: %s\n", sgemm && dladdr(sgemm, &info) && info.dli_fname ? info.dli_fname : path);
    printf("cblas_sgemm: %s\n", sgemm ? "yes" : "no");
    printf("config: %s\n", config ? config() : "unknown (no openblas_get_config: not OpenBLAS?)");
    printf("corename: %s\n", corename ? corename() : "unknown");
    if (threads)
        printf("threads: %d\n", threads());
    else
        printf("threads: unknown\n");
    return 0;
}
