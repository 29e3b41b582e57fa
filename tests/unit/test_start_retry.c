/*
 * When CUDA's start-up is tried again after failing (src/gpu/start_retry.c):
 * a transient failure is retried once enough time has passed, up to
 * TB_GPU_START_ATTEMPTS attempts in all; no driver, no device, a driver too old
 * or a stub library is never retried. Host only: it runs on CI.
 */
#include <stdio.h>

#include "gpu/start_retry.h"

static int failures;

static void expect(int failed, cudaError_t status, double seconds, tb_start_retry want, const char *what)
{
    static const char *names[] = {"now", "later", "never"};
    const tb_start_retry got = tb_gpu_start_retry(failed, status, seconds);
    if (got != want) {
        printf("FAIL: %s (%d failed, status %d, %.1f s since): %s, expected %s\n", what, failed, (int)status,
               seconds, names[got], names[want]);
        failures++;
    }
}

int main(void)
{
    static const cudaError_t permanent[] = {cudaErrorNoDevice, cudaErrorInsufficientDriver, cudaErrorStubLibrary,
                                            cudaErrorSystemDriverMismatch, cudaErrorCompatNotSupportedOnDevice};
    for (size_t i = 0; i < sizeof permanent / sizeof permanent[0]; i++)
        expect(1, permanent[i], 1e6, TB_START_NEVER, "a permanent condition");

    static const cudaError_t transient[] = {cudaErrorDevicesUnavailable, cudaErrorMemoryAllocation,
                                            cudaErrorSystemNotReady, cudaErrorInitializationError,
                                            cudaErrorUnknown};
    for (size_t i = 0; i < sizeof transient / sizeof transient[0]; i++) {
        expect(1, transient[i], 0.0, TB_START_LATER, "right after the first failure");
        expect(1, transient[i], 0.9, TB_START_LATER, "within a second of the first failure");
        expect(1, transient[i], 1.0, TB_START_NOW, "a second after the first failure");
        expect(2, transient[i], 1.5, TB_START_LATER, "within two seconds of the second failure");
        expect(2, transient[i], 2.0, TB_START_NOW, "two seconds after the second failure");
        expect(TB_GPU_START_ATTEMPTS, transient[i], 1e6, TB_START_NEVER, "every attempt spent");
    }
    if (TB_GPU_START_ATTEMPTS < 2 || TB_GPU_START_ATTEMPTS > 5) {
        printf("FAIL: %d attempts: a transient failure needs a retry, and a broken device few\n",
               TB_GPU_START_ATTEMPTS);
        failures++;
    }
    if (failures) {
        printf("%d failures\n", failures);
        return 1;
    }
    printf("start-up retries: at most %d attempts after transient failures, spaced; none after permanent ones\n",
           TB_GPU_START_ATTEMPTS);
    return 0;
}
