/*
 * Device pointers on a GPU other than the one the library started on: the
 * call must run on the device that holds them and match the reference, with
 * host operands beside them too, while calls on the first device still run
 * there; operands on two devices at once are refused with C untouched. The
 * calling thread's current device and context stay the program's throughout.
 * Needs two GPUs (exits 77 with fewer, or where tiledblas cannot use them).
 *
 * Usage: test_other_device FIRST   (0 or 1: the device current when the library starts)
 */
#include "refblas.h"
#include "testutil.h"
#include "tiledblas.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOST -1 /* an operand left in the test's host memory */

static tb_tally tally;
static int first;

static int cuda_ok(cudaError_t status, const char *action)
{
    if (status == cudaSuccess)
        return 1;
    printf("FAIL: %s: %s\n", action, cudaGetErrorString(status));
    return 0;
}

static size_t alloc_bytes(const tb_matrix *m)
{
    return tb_matrix_alloc_count(m) * sizeof(float);
}

/* A copy of `m` on `device`, the program's device current again on return; NULL after an error. */
static float *upload(const tb_matrix *m, int device)
{
    float *copy = NULL;
    const int ok = cuda_ok(cudaSetDevice(device), "cudaSetDevice") &&
                   cuda_ok(cudaMalloc((void **)&copy, alloc_bytes(m)), "cudaMalloc") &&
                   cuda_ok(cudaMemcpy(copy, m->base, alloc_bytes(m), cudaMemcpyHostToDevice), "upload");
    cudaSetDevice(first);
    return ok ? copy : NULL;
}

static int download(tb_matrix *m, const float *copy)
{
    return cuda_ok(cudaMemcpy(m->base, copy, alloc_bytes(m), cudaMemcpyDeviceToHost), "download");
}

/* The program's device and context as the test set them. */
static int program_state_kept(const char *label)
{
    int device = -1;
    if (cudaGetDevice(&device) != cudaSuccess || device != first) {
        printf("FAIL: %s: current device %d after the call, the program's is %d\n", label, device, first);
        return 0;
    }
    return 1;
}

/*
 * One case with A, B and C on the given devices (HOST: host memory). Operands on
 * two devices must leave C as it was; otherwise C must match the reference.
 */
static void run_case(const int where[3], const char *what, const tb_gemm_case *gc, tb_rng *rng)
{
    char label[300];
    tb_case_label(gc, what, label, sizeof label);
    tb_gemm_operands ops;
    tb_operands_make(&ops, gc, rng);
    tb_matrix got, before;
    tb_start_c(&got, &ops.c0, gc->beta);
    tb_matrix_clone(&before, &got);

    tb_matrix *const host[] = {&ops.a, &ops.b, &got};
    float *operand[3] = {NULL, NULL, NULL};
    int ok = 1, devices_seen = -1, several = 0;
    for (int i = 0; i < 3; i++) {
        if (where[i] == HOST) {
            operand[i] = host[i]->base;
            continue;
        }
        several |= devices_seen >= 0 && devices_seen != where[i];
        devices_seen = where[i];
        ok = ok && (operand[i] = upload(host[i], where[i])) != NULL;
    }
    if (ok)
        tb_call_tiledblas(gc, operand[0] + TB_GUARD, operand[1] + TB_GUARD, operand[2] + TB_GUARD);
    ok = ok && program_state_kept(label);
    for (int i = 0; i < 3 && ok; i++)
        if (where[i] != HOST)
            ok = download(host[i], operand[i]);
    size_t problems = 1;
    if (ok && several) {
        problems = !tb_matrix_same_bits(&got, &before);
        if (problems)
            printf("FAIL: %s: operands on two devices, yet C was written\n", label);
    } else if (ok) {
        tb_matrix ref;
        tb_run_reference(gc, &ops, &ref);
        problems = tb_check_case(gc, &ops, &got, &ref, label);
        tb_matrix_free(&ref);
    }
    for (int i = 0; i < 3; i++)
        if (where[i] != HOST)
            cudaFree(operand[i]);
    tb_tally_record(&tally, problems == 0, label);
    tb_matrix_free(&before);
    tb_matrix_free(&got);
    tb_operands_free(&ops);
}

int main(int argc, char **argv)
{
    first = argc > 1 ? atoi(argv[1]) : 0;
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 2) {
        printf("SKIP: fewer than two CUDA devices\n");
        return 77;
    }
    if ((first != 0 && first != 1) || !cuda_ok(cudaSetDevice(first), "cudaSetDevice") ||
        !cuda_ok(cudaFree(NULL), "cudaFree"))
        return 2;
    if (!tiledblas_gpu_available()) {
        printf("SKIP: tiledblas cannot use the GPU\n");
        return 77;
    }
    tb_ref_cblas_sgemm(); /* fail early if the reference is missing */
    const int other = 1 - first;

    /* Square, small and skinny with a long K (split where the kernel's plan says so), in both layouts. */
    static const struct {
        int m, n, k;
    } shapes[] = {{300, 200, 150}, {33, 17, 9}, {64, 64, 8192}};
    static const float scalar_pairs[][2] = {{1.0f, 0.0f}, {0.7f, -1.3f}};
    tb_rng rng;
    tb_rng_seed(&rng, 41);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int li = 0; li < 2; li++) {
            const float *pair = scalar_pairs[(s + (size_t)li) % 2];
            tb_gemm_case gc = {.layout = tb_layouts[li], .trans_a = tb_transposes[(s + 1) % 3],
                               .trans_b = tb_transposes[s % 3], .m = shapes[s].m, .n = shapes[s].n,
                               .k = shapes[s].k, .alpha = pair[0], .beta = pair[1]};
            tb_case_set_ld(&gc, 2, 1, 3);
            const int on_other[3] = {other, other, other}, on_first[3] = {first, first, first};
            const int host_a[3] = {HOST, other, other}, host_c[3] = {other, other, HOST};
            const int two_devices[3] = {first, other, other};
            run_case(on_other, "device pointers on the other device", &gc, &rng);
            run_case(on_first, "device pointers on the first device", &gc, &rng);
            run_case(host_a, "host A, B and C on the other device", &gc, &rng);
            run_case(host_c, "host C, A and B on the other device", &gc, &rng);
            run_case(two_devices, "A on the first device, B and C on the other (refused)", &gc, &rng);
        }
    return tb_tally_report(&tally);
}
