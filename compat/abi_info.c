/* What the ABI layer tells tiledblas-info: the names exported and forwarded, the ILP64 CPU BLAS. */
#include "abi_tables.h"
#include "cpu/cpu_blas.h"
#include "tiledblas.h"

const char *tiledblas_cpu_backend_ilp64(void)
{
    return tb_cpu_backend_ilp64_name();
}

int tiledblas_abi_exported(void)
{
    return TB_ABI_EXPORTED;
}

int tiledblas_abi_forwarded(void)
{
    return TB_ABI_FORWARDED;
}
