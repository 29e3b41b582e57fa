/*
 * The simulated runtime's checks themselves (fault_call.h): copies and
 * launches outside the allocations must abort the process, ranges inside
 * them must pass. The sweep's verdicts rest on these checks.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_cuda.h"
#include "fault_call.h"
#include "kernels.h"

/* Whether `bad` aborts a fresh child (the registry's verdict on a range outside every allocation). */
static int aborts(void (*bad)(void))
{
    fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) {
        const int null = open("/dev/null", O_WRONLY);
        dup2(null, STDERR_FILENO);
        fake_reset(free_bytes_for(STAGED));
        bad();
        _exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

static void copy_to_host_memory_as_device(void)
{
    static float host[64], source[64];
    cudaMemcpyAsync(host, source, sizeof host, cudaMemcpyHostToDevice, NULL);
}

static void copy_past_device_allocation(void)
{
    float *device = fake_alloc(FAKE_DEVICE, 64 * sizeof(float));
    static float source[65];
    cudaMemcpyAsync(device, source, sizeof source, cudaMemcpyHostToDevice, NULL);
}

static void kernel_on_host_memory(void)
{
    static float a[16], b[16], c[16];
    const tb_gemm_args args = {.m = 4, .n = 4, .k = 4, .alpha = 1.0f, .a = a, .lda = 4, .b = b, .ldb = 4, .c = c,
                               .ldc = 4};
    tb_kernel_launch(TB_KERNEL_BEST, &args, NULL);
}

static void kernel_past_device_allocation(void)
{
    float *a = fake_alloc(FAKE_DEVICE, 16 * sizeof(float)), *b = fake_alloc(FAKE_DEVICE, 16 * sizeof(float));
    float *c = fake_alloc(FAKE_MANAGED, 15 * sizeof(float));
    const tb_gemm_args args = {.m = 4, .n = 4, .k = 4, .alpha = 1.0f, .a = a, .lda = 4, .b = b, .ldb = 4, .c = c,
                               .ldc = 4};
    tb_kernel_launch(TB_KERNEL_BEST, &args, NULL);
}

/* The registry catches what the sweep relies on it to catch; a range inside an allocation passes. */
int fault_registry_checks(void)
{
    int failures = 0;
    static const struct {
        void (*bad)(void);
        const char *what;
    } cases[] = {{copy_to_host_memory_as_device, "a copy to host memory named device memory"},
                 {copy_past_device_allocation, "a copy past the end of a device allocation"},
                 {kernel_on_host_memory, "a kernel on host memory"},
                 {kernel_past_device_allocation, "a kernel writing past a managed C"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (!aborts(cases[i].bad)) {
            printf("FAIL: the registry let %s through\n", cases[i].what);
            failures++;
        }
    fake_reset(free_bytes_for(STAGED));
    float *device = fake_alloc(FAKE_DEVICE, 64 * sizeof(float));
    static float source[64];
    if (cudaMemcpyAsync(device, source, sizeof source, cudaMemcpyHostToDevice, NULL) != cudaSuccess) {
        printf("FAIL: the registry refused a copy inside a device allocation\n");
        failures++;
    }
    return failures;
}
