/*
 * The kernels' C face (kernels/kernels.h) on the host, for the simulated
 * runtime: every launch is a site that may fail, its ranges are checked
 * against the registry, and the product is computed in double. A call of
 * K >= SPLIT_MIN_K asks for split-K scratch; given it, the launch sums two
 * slices of K through the scratch, as split-K does, else it runs unsplit.
 */
#include <stdatomic.h>
#include <string.h>

#include "fake_cuda.h"
#include "kernels.h"

#define SPLIT_MIN_K 16
#define SPLITS 2

static const char *const names[TB_KERNEL_COUNT] = {"naive",      "tiled16", "tiled32", "regtile",
                                                   "multistage", "tf32x3",  "best"};

const char *tb_kernel_name(tb_kernel_id id)
{
    return id >= 0 && id < TB_KERNEL_COUNT ? names[id] : "?";
}

int tb_kernel_from_name(const char *name)
{
    for (int id = 0; id < TB_KERNEL_COUNT; id++)
        if (strcmp(name, names[id]) == 0)
            return id;
    return -1;
}

/* The tensor-core rung is offered where a test asks, before CUDA starts (fake_set_tensor_rung); its
 * launches compute as every other's. Launches are counted per kernel. */
static atomic_int tensor_rung;
static atomic_long launches_of[TB_KERNEL_COUNT];

void fake_set_tensor_rung(int offered)
{
    atomic_store(&tensor_rung, offered);
}

long fake_kernel_launches(int kernel)
{
    return atomic_load(&launches_of[kernel]);
}

int tb_tf32x3_supported(void)
{
    return atomic_load(&tensor_rung);
}

int tb_tf32x3_ran_fp32(void)
{
    return 0;
}

int64_t tb_kernel_workspace_floats(tb_kernel_id id, const tb_gemm_args *args)
{
    (void)id;
    return args->k >= SPLIT_MIN_K ? SPLITS * args->m * args->n : 0;
}

void tb_kernel_describe_plan(tb_kernel_id id, const tb_gemm_args *args, char *text, size_t size)
{
    (void)id, (void)args;
    if (size)
        text[0] = '\0';
}

/* Bytes a column-major rows x cols block with leading dimension ld spans. */
static size_t span(int64_t rows, int64_t cols, int64_t ld)
{
    return rows > 0 && cols > 0 ? ((size_t)(cols - 1) * (size_t)ld + (size_t)rows) * sizeof(float) : 0;
}

/* sum over p in [p0, p1) of op(A)(i,p) op(B)(p,j). */
static double dot(const tb_gemm_args *g, int64_t i, int64_t j, int64_t p0, int64_t p1)
{
    double sum = 0.0;
    for (int64_t p = p0; p < p1; p++) {
        const float a = g->trans_a ? g->a[p + i * g->lda] : g->a[i + p * g->lda];
        const float b = g->trans_b ? g->b[j + p * g->ldb] : g->b[p + j * g->ldb];
        sum += (double)a * b;
    }
    return sum;
}

static void store(const tb_gemm_args *g, int64_t i, int64_t j, double product)
{
    float *c = &g->c[i + j * g->ldc];
    *c = g->beta == 0.0f ? (float)(g->alpha * product) : (float)(g->alpha * product + (double)g->beta * *c);
}

cudaError_t tb_kernel_launch(tb_kernel_id id, const tb_gemm_args *g, cudaStream_t stream)
{
    const cudaError_t status = fake_launch(stream);
    if (status != cudaSuccess)
        return status;
    atomic_fetch_add(&launches_of[id], 1);
    const int reads_ab = g->alpha != 0.0f && g->k > 0;
    if (reads_ab) {
        fake_check_device(g->a, span(g->trans_a ? g->k : g->m, g->trans_a ? g->m : g->k, g->lda), "kernel A");
        fake_check_device(g->b, span(g->trans_b ? g->n : g->k, g->trans_b ? g->k : g->n, g->ldb), "kernel B");
    }
    fake_check_device(g->c, span(g->m, g->n, g->ldc), "kernel C");
    const int64_t scratch = tb_kernel_workspace_floats(id, g);
    const int split = reads_ab && scratch > 0 && g->workspace_floats >= scratch;
    if (g->workspace_floats > 0)
        fake_check_device(g->workspace, (size_t)g->workspace_floats * sizeof(float), "kernel workspace");
    if (!split) {
        for (int64_t j = 0; j < g->n; j++)
            for (int64_t i = 0; i < g->m; i++)
                store(g, i, j, reads_ab ? dot(g, i, j, 0, g->k) : 0.0);
        return cudaSuccess;
    }
    /* Each slice's partial sums in its plane of the scratch, then the summing pass. */
    const int64_t plane = g->m * g->n, half = g->k / 2;
    for (int s = 0; s < SPLITS; s++)
        for (int64_t j = 0; j < g->n; j++)
            for (int64_t i = 0; i < g->m; i++)
                g->workspace[s * plane + i + j * g->m] =
                    (float)dot(g, i, j, s == 0 ? 0 : half, s == 0 ? half : g->k);
    for (int64_t j = 0; j < g->n; j++)
        for (int64_t i = 0; i < g->m; i++) {
            double sum = 0.0;
            for (int s = 0; s < SPLITS; s++)
                sum += g->workspace[s * plane + i + j * g->m];
            store(g, i, j, sum);
        }
    return cudaSuccess;
}
