/*
 * One configured SGEMM of the fault harness (fault_sweep.c): where its
 * operands live, the path its budgets lead to, its operands and reference;
 * and the scenarios that run beside the sweep (fault_exit.c,
 * fault_registry.c, fault_threads.c, fault_reason.c, fault_two_devices.c).
 */
#ifndef TB_FAULT_CALL_H
#define TB_FAULT_CALL_H

#include <stddef.h>
#include <stdio.h>

#include "tiledblas.h"

/* Where an operand lives. */
typedef enum { HOST, PINNED, DEVICE, MANAGED, HALF_REGISTERED } memory;

/* The path a configuration's budgets lead host operands to. */
typedef enum { STAGED, PIPELINED, ROW_BLOCKS, PAGEABLE } path;

typedef struct {
    path path;
    memory a, b, c;
    int layout, trans_a, trans_b, m, n, k;
    float beta;
    int warm;    /* a fault-free call first: the fault hits a library whose buffers exist */
    int threads; /* 1, or 2: a second thread makes the same call at once, on its own C (both lanes);
                    column-major, through sgemm_ (gemm_run) */
} config;

enum { COL = CblasColMajor, ROW = CblasRowMajor, N = CblasNoTrans, T = CblasTrans };

/* One operand as stored: `count` floats at `data`, leading dimension `ld`. */
typedef struct {
    float *data;
    size_t count;
    int ld;
    memory where;
} operand;

/* A call: its configuration, operands, C as it was, the reference and the element-wise bound. */
typedef struct {
    config cfg;
    operand a, b, c;
    float *c0;   /* C before the call */
    float *want; /* the reference */
    float *bound;
} gemm;

/* The device's free memory the fake reports for a path's budgets, and the path's TILEDBLAS_* variables. */
size_t free_bytes_for(path p);
void set_environment(path p);
/* Operands in their memory, filled from `seed`, with C's reference and error bound. */
void gemm_make(gemm *g, const config *cfg, unsigned seed);
/* The call with C at `c`. */
void gemm_run(const gemm *g, float *c);
/* 1: C is the reference within the bound, padding untouched; 0: untouched entirely; -1: neither. */
int gemm_verdict(const gemm *g);
/* Calls the library handed to the CPU BLAS so far. */
int fault_cpu_calls(void);
/* Warnings the library wrote to `log` past *offset, which moves past them; *with_text (when not NULL):
 * how many of them contain `text`. */
int count_warnings_with(FILE *log, long *offset, const char *text, int *with_text);

/* Main returns while three threads make GPU calls (fault_exit.c); the registry's checks
 * (fault_registry.c); the GPU's unusable reason read while a lost context writes it (fault_reason.c):
 * each returns the failures it printed. */
int fault_exit_in_flight(void);
/* Children forked while three threads make GPU calls exit at once; a call waiting for a lane when main
 * returns gives up, launching nothing (fault_exit.c). */
int fault_fork_in_flight(void);
int fault_exit_lane_wait(void);
int fault_registry_checks(void);
int fault_reason_while_disabled(void);
/* Many threads' calls at once, on every kind of memory and path (fault_threads.c). */
int fault_many_threads(void);
/* Calls on device operands while another's kernel is held on the first lane: they run on the second
 * (under TILEDBLAS_DEVICE_MB, `capped`, those that need no split-K scratch). */
int fault_device_lanes(int capped);
/* Calls waiting to mark the application's work hold no lane: another call finishes meanwhile. */
int fault_marks_hold_no_lane(void);
/* Calls waiting for a lane each wait, once they have it, for their own mark of the application's work. */
int fault_own_marks(void);
/* The tensor math's kernel per launch: a call the rung takes whole, and pipelined in launches too small
 * for it (fault_tensor.c). */
int fault_tensor_launches(void);
/* Calls on memory of two devices: where they run, faults on the second, threads on both
 * (fault_two_devices.c). */
int fault_two_devices(void);

#endif /* TB_FAULT_CALL_H */
