/* The tiledblas_* functions: what the library adds to the BLAS interface. */
#include "internal.h"
#include "tiledblas.h"

const char *tiledblas_version(void)
{
    return TILEDBLAS_VERSION_STRING;
}

int tiledblas_gpu_available(void)
{
    return tb_gpu_usable();
}

const char *tiledblas_cpu_backend(void)
{
    return tb_cpu_backend_name();
}
