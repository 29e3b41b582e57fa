/*
 * The default kernel: per call, the fastest way the ladder's top rungs offer
 * for its storage orders, as measured on the H100 at 4096^3 and 8192^3 in
 * every transpose pair (tiledblas-bench --kernels --sizes 4096,8192 --trans
 * NN,NT,TN,TT, with --layout row and col). multistage copies operands stored
 * along m or n straight into shared memory with cp.async and transposes an
 * operand stored along k with 4-byte copies, in the tile shape that keeps
 * that operand on its narrow side (45-49 TFLOP/s).
 *
 * With both operands stored along k (column-major TN, row-major NT) every tile
 * transposes both on the way in: regtile's register-staged copies reach 42.6,
 * multistage's 41.0. Re-storing one operand along m or n in the workspace
 * first (transpose.cu) costs one pass over it at device memory speed (54 us
 * for 4096^2 floats) and lets multistage run at its one-operand rate: 47.6
 * TFLOP/s in all at 4096^3, 0.98 of row-major NN, against regtile's 42.3.
 * The plan prices regtile as it is against each operand re-stored plus its
 * pass (at the cost tuning_sm90.h gives), and takes the fastest: small calls
 * keep regtile.
 *
 * No element of C sums more than MAX_CHAIN_K products in one chain: where
 * the plan would (K longer than that and not split across blocks enough), the
 * call runs as launches over consecutive slices of K, as few as keep every
 * slice's own plan within the bound, each after the first adding to C
 * (beta = 1). Rounding error grows with the square root of a chain's
 * length, so this holds it at a 4096-long sum's whatever K. cuBLAS splits K
 * at some shapes. Unbounded, the relative error at 4097x4095x4099 was 1.74
 * times cuBLAS's (1.15e-6 against 6.6e-7), and equal at 4096^3 and 8192^3;
 * in two chains it is 1.23 times cuBLAS's there and 0.69 times at 8192^3, for
 * 7% and 1.4% more time on the H100 (C read back, each launch's fill and
 * tail). The error column of tiledblas-bench --kernels --sizes
 * 4097x4095x4099,8192 shows both errors.
 */
#include <stdint.h>
#include <stdio.h>

#include "kernels.h"
#include "tuning_sm90.h"

#define MAX_CHAIN_K 4096
/* Slices of K start on whole tiles' depth, which keeps the operands' 16-byte alignment. */
#define CHAIN_ALIGN 128

typedef enum { KEEP, RESTORE_A, RESTORE_B } restore_choice;

typedef struct best_plan {
    tb_kernel_id kernel;    /* what runs on the call as it is (also when re-storing finds no room) */
    restore_choice restore; /* else multistage on the re-stored operand */
    int64_t restore_floats; /* workspace for the re-stored operand, alignment included */
} best_plan;

/* A re-stored operand's leading dimension: multiples of 4 keep its columns 16-byte aligned. */
static int64_t restored_ld(int64_t rows)
{
    return (rows + 3) / 4 * 4;
}

static float *align16(float *p)
{
    return (float *)(((uintptr_t)p + 15) & ~(uintptr_t)15);
}

/*
 * The call on a re-stored operand at `at`: A as m x k (op(A) = A'), or B as
 * n x k (op(B) = B'^T), both stored along m or n.
 */
static tb_gemm_args restored(const tb_gemm_args *args, restore_choice which, float *at)
{
    tb_gemm_args r = *args;
    if (which == RESTORE_A)
        r.trans_a = 0, r.a = at, r.lda = restored_ld(args->m);
    else
        r.trans_b = 1, r.b = at, r.ldb = restored_ld(args->n);
    return r;
}

static int64_t operand_floats(const tb_gemm_args *r, restore_choice which)
{
    return (which == RESTORE_A ? r->lda : r->ldb) * r->k;
}

static best_plan plan(const tb_gemm_args *args)
{
    const int both_along_k = args->trans_a && !args->trans_b;
    best_plan best = {both_along_k ? TB_KERNEL_REGTILE : TB_KERNEL_MULTISTAGE, KEEP, 0};
    if (!both_along_k || args->m <= 0 || args->n <= 0 || args->k <= 0)
        return best;
    double fastest = tb_regtile_predicted_seconds(args);
    for (restore_choice which = RESTORE_A; which <= RESTORE_B; which++) {
        /* Planned on an aligned placeholder, as the launch aligns the real one. */
        const tb_gemm_args r = restored(args, which, NULL);
        const int64_t floats = operand_floats(&r, which);
        const double seconds = 2.0 * sizeof(float) * (double)floats / TB_TUNE_RESTORE_BYTES_PER_SECOND +
                               TB_TUNE_RESTORE_LAUNCH_SECONDS + tb_multistage_predicted_seconds(&r);
        if (seconds < fastest)
            fastest = seconds, best.restore = which, best.restore_floats = floats + 3;
    }
    return best;
}

/* The longest chain of products the plan sums for one element of C. */
static int64_t planned_chain(const tb_gemm_args *args)
{
    const best_plan p = plan(args);
    if (p.restore == KEEP)
        return p.kernel == TB_KERNEL_MULTISTAGE ? tb_multistage_planned_chain(args) : tb_regtile_planned_chain(args);
    const tb_gemm_args r = restored(args, p.restore, NULL);
    return tb_multistage_planned_chain(&r);
}

/* Depth of each slice of K but the last in `chains` slices: whole CHAIN_ALIGN, K itself for one. */
static int64_t depth_for(int64_t k, int64_t chains)
{
    if (chains <= 1)
        return k;
    const int64_t depth = (k + chains - 1) / chains;
    return (depth + CHAIN_ALIGN - 1) / CHAIN_ALIGN * CHAIN_ALIGN;
}

/* As many slices as keep each at most MAX_CHAIN_K deep: enough whatever the plans. */
static int64_t most_chains(int64_t k)
{
    return (k + MAX_CHAIN_K - 1) / MAX_CHAIN_K;
}

/* Slice counts chain_depth tries before it settles for most_chains: each try plans two slices. */
#define CHAIN_TRIES 8

/*
 * Depth of each slice of K but the last (which takes the rest), for the
 * fewest slices whose plans all stay within MAX_CHAIN_K (the deepest slice and
 * the last are the two depths planned); K itself when the call's plan does.
 * No plan splits K more than TB_MAX_SPLITS ways, so fewer slices than
 * K / (TB_MAX_SPLITS * MAX_CHAIN_K) cannot do; past CHAIN_TRIES counts from
 * there, most_chains.
 */
static int64_t chain_depth(const tb_gemm_args *args)
{
    const int64_t k = args->k, most = most_chains(k), per_launch = TB_MAX_SPLITS * MAX_CHAIN_K;
    const int64_t fewest = k > per_launch ? (k + per_launch - 1) / per_launch : 1;
    tb_gemm_args slice = *args;
    for (int64_t chains = fewest; chains < most && chains < fewest + CHAIN_TRIES; chains++) {
        const int64_t depth = depth_for(k, chains);
        slice.k = depth;
        if (planned_chain(&slice) > MAX_CHAIN_K)
            continue;
        slice.k = k - (k - 1) / depth * depth;
        if (planned_chain(&slice) <= MAX_CHAIN_K)
            return depth;
    }
    return depth_for(k, most);
}

/* The call over K's slice k0 .. k0+depth-1: the first sets C, the others add to it. */
static tb_gemm_args chain(const tb_gemm_args *args, int64_t k0, int64_t depth)
{
    tb_gemm_args c = *args;
    c.k = depth;
    c.a += args->trans_a ? k0 : k0 * args->lda;
    c.b += args->trans_b ? k0 * args->ldb : k0;
    if (k0 > 0)
        c.beta = 1.0f;
    return c;
}

/*
 * One slice of K: re-stores the planned operand at the start of the workspace
 * and runs multistage with the rest of it; without room for the operand,
 * regtile runs on the call as it is (slower, still right).
 */
static cudaError_t launch_chain(const tb_gemm_args *args, cudaStream_t stream)
{
    const best_plan p = plan(args);
    if (p.restore == KEEP || !args->workspace || args->workspace_floats < p.restore_floats)
        return tb_kernel_launch(p.kernel, args, stream);
    float *at = align16(args->workspace);
    tb_gemm_args r = restored(args, p.restore, at);
    r.workspace = at + operand_floats(&r, p.restore);
    r.workspace_floats = args->workspace_floats - (r.workspace - args->workspace);
    const cudaError_t status =
        p.restore == RESTORE_A ? tb_launch_transpose(args->a, args->k, args->m, args->lda, at, r.lda, stream)
                               : tb_launch_transpose(args->b, args->k, args->n, args->ldb, at, r.ldb, stream);
    return status != cudaSuccess ? status : tb_launch_multistage(&r, stream);
}

/* What chain_depth needs of the workspace: the most any of its slices asks for. */
static int64_t slices_workspace_floats(const tb_gemm_args *args, int64_t depth);

/*
 * The depth of the slices that run with the workspace the call has: short of
 * what the plans ask, they lose their splits (and re-stores), and slices of
 * at most MAX_CHAIN_K alone keep the bound.
 */
static int64_t launched_depth(const tb_gemm_args *args)
{
    if (args->k <= MAX_CHAIN_K) /* no plan can exceed the bound: nothing to plan on the way */
        return args->k;
    const int64_t depth = chain_depth(args), needed = slices_workspace_floats(args, depth);
    const int short_of_scratch = needed > 0 && (!args->workspace || args->workspace_floats < needed);
    return short_of_scratch ? depth_for(args->k, most_chains(args->k)) : depth;
}

int64_t tb_best_slice_depth(const tb_gemm_args *args)
{
    return launched_depth(args);
}

int64_t tb_best_planned_chain(const tb_gemm_args *args)
{
    return planned_chain(args);
}

cudaError_t tb_launch_best(const tb_gemm_args *args, cudaStream_t stream)
{
    const int64_t depth = launched_depth(args);
    if (depth >= args->k) /* K = 0 included: C only scaled */
        return launch_chain(args, stream);
    cudaError_t status = cudaSuccess;
    for (int64_t k0 = 0; k0 < args->k && status == cudaSuccess; k0 += depth) {
        const tb_gemm_args c = chain(args, k0, args->k - k0 < depth ? args->k - k0 : depth);
        status = launch_chain(&c, stream);
    }
    return status;
}

static int64_t chain_workspace_floats(const tb_gemm_args *args)
{
    const best_plan p = plan(args);
    if (p.restore == KEEP)
        return tb_kernel_workspace_floats(p.kernel, args);
    const tb_gemm_args r = restored(args, p.restore, NULL);
    return p.restore_floats + tb_multistage_workspace_floats(&r);
}

/* The slices are all as deep but the last. */
static int64_t slices_workspace_floats(const tb_gemm_args *args, int64_t depth)
{
    tb_gemm_args slice = *args; /* pointers are not needed (they may be placeholders) */
    slice.k = depth;
    const int64_t deepest = chain_workspace_floats(&slice);
    if (depth >= args->k)
        return deepest;
    slice.k = args->k - (args->k - 1) / depth * depth;
    const int64_t rest = chain_workspace_floats(&slice);
    return deepest > rest ? deepest : rest;
}

int64_t tb_best_workspace_floats(const tb_gemm_args *args)
{
    return slices_workspace_floats(args, chain_depth(args));
}

/*
 * The rung that runs, on what, and its plan (of the first slice of K when
 * there are several; with the workspace the call has): "A re-stored,
 * multistage 256x128x32", "K in 2 chains, multistage ...".
 */
void tb_best_describe_plan(const tb_gemm_args *args, char *text, size_t size)
{
    const int64_t depth = launched_depth(args), chains = depth > 0 ? (args->k + depth - 1) / depth : 1;
    tb_gemm_args slice = *args;
    slice.k = depth;
    const best_plan p = plan(&slice);
    const tb_kernel_id kernel = p.restore == KEEP ? p.kernel : TB_KERNEL_MULTISTAGE;
    const tb_gemm_args r = p.restore == KEEP ? slice : restored(&slice, p.restore, NULL);
    const char *restore = p.restore == KEEP ? "" : p.restore == RESTORE_A ? "A re-stored, " : "B re-stored, ";
    char chained[48] = "";
    if (chains > 1)
        snprintf(chained, sizeof chained, "K in %lld chains, ", (long long)chains);
    const int used = snprintf(text, size, "%s%s%s ", chained, restore, tb_kernel_name(kernel));
    if (used >= 0 && (size_t)used < size)
        tb_kernel_describe_plan(kernel, &r, text + used, size - (size_t)used);
}
