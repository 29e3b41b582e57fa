/* Auto mode's choice between the CPU BLAS and the GPU for calls on host memory (cost_model.c). */
#ifndef TILEDBLAS_DISPATCH_COST_MODEL_H
#define TILEDBLAS_DISPATCH_COST_MODEL_H

#include <stddef.h>

#include "core/call.h"

/* Auto mode's path for a call on host memory above the GPU floor, and why. */
typedef struct tb_auto_choice {
    int use_gpu;
    const char *reason;       /* for the per-call trace */
    int measure_class;        /* >= 0: near the crossover; pass the call's time to tb_auto_measured */
    int trial;                /* the path was taken to be measured */
    double predicted_seconds[2]; /* of each path, CPU and GPU (crossover.h's TB_PATH_*) */
} tb_auto_choice;

tb_auto_choice tb_auto_choose(const tb_call *call);
/* The call chosen, started at `started` (tb_seconds_now), has ended; gpu_failed: on the GPU, failed, and
 * finished by the CPU. */
void tb_auto_measured(const tb_auto_choice *choice, double started, int gpu_failed);
/* Calls line() with each class of calls near the crossover that auto mode measured. */
void tb_auto_describe_classes(void (*line)(const char *text));
/* The measured constants as text; 0 (and nothing written) before the first measurement. */
int tb_cost_model_describe(char *text, size_t size);

#endif /* TILEDBLAS_DISPATCH_COST_MODEL_H */
