/* Names and launchers of the kernel ladder, indexed by tb_kernel_id. */
#include <string.h>

#include "kernels.h"

static const struct {
    const char *name;
    tb_launch_fn launch;
    int64_t (*workspace_floats)(const tb_gemm_args *args); /* NULL: needs none */
    void (*describe_plan)(const tb_gemm_args *args, char *text, size_t size); /* NULL: one fixed launch */
} ladder[TB_KERNEL_COUNT] = {
    [TB_KERNEL_NAIVE] = {"naive", tb_launch_naive, NULL, NULL},
    [TB_KERNEL_TILED16] = {"tiled16", tb_launch_tiled16, NULL, NULL},
    [TB_KERNEL_TILED32] = {"tiled32", tb_launch_tiled32, NULL, NULL},
    [TB_KERNEL_REGTILE] = {"regtile", tb_launch_regtile, tb_regtile_workspace_floats, tb_regtile_describe_plan},
    [TB_KERNEL_MULTISTAGE] = {"multistage", tb_launch_multistage, tb_multistage_workspace_floats,
                              tb_multistage_describe_plan},
    [TB_KERNEL_TF32X3] = {"tf32x3", tb_launch_tf32x3, tb_tf32x3_workspace_floats, tb_tf32x3_describe_plan},
    [TB_KERNEL_BEST] = {"best", tb_launch_best, tb_best_workspace_floats, tb_best_describe_plan},
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

int64_t tb_kernel_workspace_floats(tb_kernel_id id, const tb_gemm_args *args)
{
    if ((unsigned)id >= TB_KERNEL_COUNT || !ladder[id].workspace_floats)
        return 0;
    return ladder[id].workspace_floats(args);
}

void tb_kernel_describe_plan(tb_kernel_id id, const tb_gemm_args *args, char *text, size_t size)
{
    if (size > 0)
        text[0] = '\0';
    if ((unsigned)id < TB_KERNEL_COUNT && ladder[id].describe_plan)
        ladder[id].describe_plan(args, text, size);
}
