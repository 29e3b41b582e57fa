/*
 * The calling thread's current CUDA context and device are the application's:
 * every call, the first (which starts CUDA inside the library) included, and
 * every query, must leave them as it found them. One mode per process, since
 * only the first call starts CUDA:
 *   driver-sgemm  a driver-API program's own context (cuCtxCreate, not the
 *                 primary one) current; the first call is an SGEMM on the GPU;
 *   driver-query  the same, the first call tiledblas_gpu_available();
 *   no-context    the driver initialised but no context current: none after;
 *   runtime       a runtime-API program's device (the last one) set and its
 *                 context current: both the same after.
 * The SGEMMs run on host operands, forced to the GPU, checked against the
 * reference. The driver is reached through dlopen, so that the program starts
 * where there is none. Exits 77 (skipped) without a device or where
 * tiledblas cannot use it.
 *
 * Usage: test_caller_context MODE
 */
#include "refblas.h"
#include "testutil.h"
#include "tiledblas.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
    CUresult (*init)(unsigned flags);
    CUresult (*device_count)(int *count);
    CUresult (*device_get)(CUdevice *device, int ordinal);
    CUresult (*create_v4)(CUcontext *context, CUctxCreateParams *params, unsigned flags, CUdevice device);
    CUresult (*create_v2)(CUcontext *context, unsigned flags, CUdevice device);
    CUresult (*destroy)(CUcontext context);
    CUresult (*get_current)(CUcontext *context);
} cu;

static int failures;

static void fail(const char *what)
{
    printf("FAIL: %s\n", what);
    failures++;
}

/* The driver's entry points the test uses; exits 77 without the driver or a device. */
static void load_driver(void)
{
    void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!driver) {
        printf("SKIP: no CUDA driver (%s)\n", dlerror());
        exit(77);
    }
    *(void **)&cu.init = dlsym(driver, "cuInit");
    *(void **)&cu.device_count = dlsym(driver, "cuDeviceGetCount");
    *(void **)&cu.device_get = dlsym(driver, "cuDeviceGet");
    *(void **)&cu.create_v4 = dlsym(driver, "cuCtxCreate_v4");
    *(void **)&cu.create_v2 = dlsym(driver, "cuCtxCreate_v2");
    *(void **)&cu.destroy = dlsym(driver, "cuCtxDestroy_v2");
    *(void **)&cu.get_current = dlsym(driver, "cuCtxGetCurrent");
    int count = 0;
    if (!cu.init || !cu.device_count || !cu.device_get || !cu.get_current || !cu.destroy ||
        (!cu.create_v4 && !cu.create_v2) || cu.init(0) != CUDA_SUCCESS ||
        cu.device_count(&count) != CUDA_SUCCESS || count == 0) {
        printf("SKIP: the CUDA driver sees no device\n");
        exit(77);
    }
}

static CUcontext current_context(void)
{
    CUcontext context = NULL;
    if (cu.get_current(&context) != CUDA_SUCCESS)
        fail("cuCtxGetCurrent");
    return context;
}

/* A context of the program's own on device 0, not the primary one; current on return. */
static CUcontext create_own_context(void)
{
    CUdevice device;
    CUcontext context = NULL;
    const int made = cu.device_get(&device, 0) == CUDA_SUCCESS &&
                     (cu.create_v4 ? cu.create_v4(&context, NULL, 0, device)
                                   : cu.create_v2(&context, 0, device)) == CUDA_SUCCESS;
    if (!made) {
        fail("cuCtxCreate");
        exit(1);
    }
    return context;
}

static void expect_context(CUcontext want, const char *after)
{
    const CUcontext got = current_context();
    if (got != want) {
        printf("after %s: current context %p, the program's was %p\n", after, (void *)got, (void *)want);
        fail("the library changed the calling thread's current context");
    }
}

/* A 256^3 SGEMM on host operands, forced to the GPU, against the reference. */
static void sgemm_on_gpu(void)
{
    tiledblas_set_device(TILEDBLAS_DEVICE_GPU);
    tb_gemm_case gc = {.layout = TB_COL_MAJOR, .trans_a = TB_NO_TRANS, .trans_b = TB_TRANS,
                       .m = 256, .n = 256, .k = 256, .alpha = 1.0f, .beta = 0.5f};
    tb_case_set_ld(&gc, 1, 0, 2);
    tb_rng rng;
    tb_rng_seed(&rng, 5);
    tb_gemm_operands ops;
    tb_operands_make(&ops, &gc, &rng);
    char label[200];
    tb_case_label(&gc, "host operands on the GPU", label, sizeof label);
    if (tb_run_case(&gc, &ops, label) != 0)
        fail("the product differs from the reference");
    tb_operands_free(&ops);
}

/* The checks mean nothing where the library ran on the CPU. */
static int finish(const char *mode)
{
    if (!tiledblas_gpu_available()) {
        printf("SKIP: tiledblas cannot use the GPU\n");
        return 77;
    }
    if (failures) {
        printf("%s: %d failures\n", mode, failures);
        return 1;
    }
    printf("%s: the calling thread's current context and device unchanged\n", mode);
    return 0;
}

static int driver_program(const char *mode, int query_first)
{
    load_driver();
    const CUcontext own = create_own_context();
    if (query_first) {
        tiledblas_gpu_available();
        expect_context(own, "the first tiledblas_gpu_available");
    }
    sgemm_on_gpu();
    expect_context(own, query_first ? "an SGEMM" : "the first SGEMM");
    tiledblas_gpu_available();
    expect_context(own, "tiledblas_gpu_available");
    sgemm_on_gpu();
    expect_context(own, "a second SGEMM");
    const int status = finish(mode);
    cu.destroy(own);
    return status;
}

static int no_context_program(void)
{
    load_driver();
    expect_context(NULL, "cuInit");
    sgemm_on_gpu();
    expect_context(NULL, "the first SGEMM");
    tiledblas_gpu_available();
    expect_context(NULL, "tiledblas_gpu_available");
    return finish("no-context");
}

static int runtime_program(void)
{
    load_driver();
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("SKIP: the CUDA runtime sees no device\n");
        return 77;
    }
    const int mine = devices - 1;
    if (cudaSetDevice(mine) != cudaSuccess || cudaFree(NULL) != cudaSuccess) {
        fail("cudaSetDevice");
        return 1;
    }
    const CUcontext context = current_context();
    sgemm_on_gpu();
    expect_context(context, "the first SGEMM");
    tiledblas_gpu_available();
    expect_context(context, "tiledblas_gpu_available");
    int device = -1;
    if (cudaGetDevice(&device) != cudaSuccess || device != mine) {
        printf("current device %d, the program's was %d\n", device, mine);
        fail("the library changed the calling thread's current device");
    }
    return finish("runtime");
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    tb_ref_cblas_sgemm(); /* fail early if the reference is missing */
    if (strcmp(mode, "driver-sgemm") == 0)
        return driver_program(mode, 0);
    if (strcmp(mode, "driver-query") == 0)
        return driver_program(mode, 1);
    if (strcmp(mode, "no-context") == 0)
        return no_context_program();
    if (strcmp(mode, "runtime") == 0)
        return runtime_program();
    fprintf(stderr, "usage: test_caller_context driver-sgemm|driver-query|no-context|runtime\n");
    return 2;
}
