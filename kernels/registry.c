/* Names and launchers of the kernel ladder, indexed by tb_kernel_id. */
#include <string.h>

#include "kernels.h"

static const struct {
    const char *name;
    tb_launch_fn launch;
} ladder[TB_KERNEL_COUNT] = {
    [TB_KERNEL_NAIVE] = {"naive", tb_launch_naive},
    [TB_KERNEL_TILED16] = {"tiled16", tb_launch_tiled16},
    [TB_KERNEL_TILED32] = {"tiled32", tb_launch_tiled32},
    [TB_KERNEL_REGTILE] = {"regtile", tb_launch_regtile},
};

const char *tb_kernel_name(tb_kernel_id id)
{
    return (unsigned)id < TB_KERNEL_COUNT ? ladder[id].name : "unknown";
}

int tb_kernel_from_name(const char *name)
{
    for (int id = 0; id < TB_KERNEL_COUNT; id++)
        if (strcmp(name, ladder[id].name) == 0)
            return id;
    return -1;
}

cudaError_t tb_kernel_launch(tb_kernel_id id, const tb_gemm_args *args, cudaStream_t stream)
{
    if ((unsigned)id >= TB_KERNEL_COUNT)
        return cudaErrorInvalidValue;
    return ladder[id].launch(args, stream);
}
