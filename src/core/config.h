/* Run-time configuration: the TILEDBLAS_* environment variables, read once. */
#ifndef TILEDBLAS_CORE_CONFIG_H
#define TILEDBLAS_CORE_CONFIG_H

#include <stdatomic.h>

#include "core/call.h"
#include "tiledblas.h"

typedef struct tb_config {
    atomic_int device;    /* tiledblas_device; tiledblas_set_device changes it while other threads call */
    atomic_int math;      /* tiledblas_math; tiledblas_set_math changes it while other threads call */
    int verbose;          /* 0 silent, 1 summary at exit, 2 one line per call, 3 and the pipeline's stages */
    char kernel[32];      /* TILEDBLAS_KERNEL as given, resolved by the GPU layer; "": the default */
    double gpu_min_flops; /* auto: smaller 2*m*n*k stay on the CPU without consulting the cost model */
    double pipeline_min_flops; /* host operands: smallest 2*m*n*k that is pipelined */
    int pinned_mb;        /* cap on pinned staging memory */
    int device_mb;        /* cap on the device memory the GPU path uses; 0: what is free */
    int copy_threads;     /* host copy threads; 0: tb_usable_cpus() (at most 16) */
} tb_config;

TB_TINY_PATH const tb_config *tb_config_get(void);
/*
 * A TILEDBLAS_* variable, or NULL. In secure-execution mode (a setuid or
 * setgid program, or one with file capabilities) there are none, as the loader
 * ignores LD_PRELOAD and LD_LIBRARY_PATH there: they could name a library to
 * load with the program's privileges.
 */
const char *tb_env(const char *name);
/* Sets the path for calls on host memory (config->device); returns the previous one. */
tiledblas_device tb_config_set_device(tiledblas_device device);
/* Sets the GPU's math (config->math); returns the previous one. */
tiledblas_math tb_config_set_math(tiledblas_math math);

#endif /* TILEDBLAS_CORE_CONFIG_H */
