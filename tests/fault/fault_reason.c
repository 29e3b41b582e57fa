/*
 * The reason the GPU is unusable, read while it is written (fault_call.h): a
 * thread reads it over and over while a call on device operands loses the
 * context and disables the GPU. Under TSan an unsynchronised read of the text
 * is a reported race; in every build the reason must end up said.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "fake_cuda.h"
#include "fault_call.h"
#include "gpu/gpu.h"

static atomic_int disabled;

static void *read_reason(void *unused)
{
    (void)unused;
    size_t said = 0;
    while (!atomic_load(&disabled))
        said += strlen(tb_gpu_unusable_reason()) > 0;
    return (void *)said;
}

int fault_reason_while_disabled(void)
{
    static const config cfg = {STAGED, DEVICE, DEVICE, DEVICE, COL, N, N, 20, 24, 16, 0.5f, 0, 1};
    set_environment(cfg.path);
    fake_reset(free_bytes_for(cfg.path));
    if (!tiledblas_gpu_available()) {
        printf("FAIL: reason while disabled: no GPU before the fault\n");
        return 1;
    }
    gemm g;
    gemm_make(&g, &cfg, 4242u);
    pthread_t reader;
    if (pthread_create(&reader, NULL, read_reason, NULL) != 0)
        return 1;
    fake_inject(FAKE_STICKY, 1, NULL); /* the context is lost at the call's first CUDA call */
    gemm_run(&g, g.c.data);
    atomic_store(&disabled, 1);
    pthread_join(reader, NULL);
    const char *reason = tb_gpu_unusable_reason();
    if (tiledblas_gpu_available() || !reason[0]) {
        printf("FAIL: reason while disabled: GPU %s, reason \"%s\"\n",
               tiledblas_gpu_available() ? "still usable" : "disabled", reason);
        return 1;
    }
    return 0;
}
