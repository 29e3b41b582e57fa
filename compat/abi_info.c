/* What the ABI layer tells tiledblas-info: the names exported and forwarded, the ILP64 CPU BLAS. */
#include "tiledblas.h"

const char *tiledblas_cpu_backend_ilp64(void)
{
    return "none";
}

int tiledblas_abi_exported(void)
{
    return 2;
}

int tiledblas_abi_forwarded(void)
{
    return 0;
}
