/* The tiledblas_* functions: what the library adds to the BLAS interface. */
#include <stdatomic.h>

#include "core/config.h"
#include "cpu/cpu_blas.h"
#include "gpu/gpu.h"
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

int tiledblas_set_device(tiledblas_device device)
{
    if (device != TILEDBLAS_DEVICE_AUTO && device != TILEDBLAS_DEVICE_GPU && device != TILEDBLAS_DEVICE_CPU)
        return -1;
    return (int)tb_config_set_device(device);
}

tiledblas_device tiledblas_get_device(void)
{
    return (tiledblas_device)atomic_load(&tb_config_get()->device);
}

int tiledblas_set_math(tiledblas_math math)
{
    if (math != TILEDBLAS_MATH_FP32 && math != TILEDBLAS_MATH_TENSOR)
        return -1;
    return (int)tb_config_set_math(math);
}

tiledblas_math tiledblas_get_math(void)
{
    return (tiledblas_math)atomic_load(&tb_config_get()->math);
}
