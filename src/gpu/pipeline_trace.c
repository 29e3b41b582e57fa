/*
 * TILEDBLAS_VERBOSE=3: when each stage of a pipelined call ran, on one clock,
 * printed after the call. It exists to tune the pipeline: the benchmark's
 * --timeline times each stage alone, this shows how they overlap in a call.
 * GPU stages are timed with events on their own streams, host stages with
 * the host clock; both count from the call's start (the streams are idle
 * then, so an event recorded at the start completes at once). One pipelined
 * call is traced at a time: one on the other lane meanwhile is not.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/call.h"
#include "core/config.h"
#include "gpu/pipeline_trace.h"

#define MAX_STAGES 4096

typedef struct {
    const char *what; /* what and of which panel or piece; NULL: not timed, left out */
    int64_t panel;
    int on_gpu;
    double begin, end; /* seconds from the start */
} stage;

/* The trace is taken by one call at a time; the thread that took it is the one tracing. */
static atomic_flag taken = ATOMIC_FLAG_INIT;
static _Thread_local int tracing;

static struct {
    double start;
    cudaEvent_t zero;
    int count, dropped; /* stages recorded, and those past MAX_STAGES */
    stage stages[MAX_STAGES];
    cudaEvent_t gpu_begin[MAX_STAGES], gpu_end[MAX_STAGES]; /* of stages[i], created once */
} trace;

/* A failure here is the trace's alone: it is cleared so that no later launch check sees it. */
static cudaError_t event(cudaEvent_t *e)
{
    const cudaError_t status = *e ? cudaSuccess : cudaEventCreate(e);
    if (status != cudaSuccess)
        cudaGetLastError();
    return status;
}

static cudaError_t record(cudaEvent_t e, cudaStream_t stream)
{
    const cudaError_t status = cudaEventRecord(e, stream);
    if (status != cudaSuccess)
        cudaGetLastError();
    return status;
}

void tb_trace_pipeline_begin(cudaStream_t stream)
{
    if (tb_config_get()->verbose < 3 || atomic_flag_test_and_set(&taken))
        return;
    tracing = event(&trace.zero) == cudaSuccess && record(trace.zero, stream) == cudaSuccess;
    if (!tracing) {
        atomic_flag_clear(&taken);
        return;
    }
    trace.start = tb_seconds_now();
    trace.count = trace.dropped = 0;
}

int tb_trace_gpu_begin(cudaStream_t stream, const char *what, int64_t panel)
{
    if (!tracing)
        return -1;
    if (trace.count == MAX_STAGES) {
        trace.dropped++;
        return -1;
    }
    const int id = trace.count;
    if (event(&trace.gpu_begin[id]) != cudaSuccess || event(&trace.gpu_end[id]) != cudaSuccess ||
        record(trace.gpu_begin[id], stream) != cudaSuccess)
        return -1;
    trace.stages[id] = (stage){what, panel, 1, 0.0, 0.0};
    return trace.count++;
}

void tb_trace_gpu_end(int id, cudaStream_t stream)
{
    if (id >= 0 && record(trace.gpu_end[id], stream) != cudaSuccess)
        trace.stages[id].what = NULL;
}

double tb_trace_host_begin(void)
{
    return tracing ? tb_seconds_now() : 0.0;
}

void tb_trace_host_end(double begin, const char *what, int64_t panel)
{
    if (!tracing)
        return;
    if (trace.count == MAX_STAGES) {
        trace.dropped++;
        return;
    }
    trace.stages[trace.count++] = (stage){what, panel, 0, begin - trace.start, tb_seconds_now() - trace.start};
}

static int by_begin(const void *x, const void *y)
{
    const stage *a = x, *b = y;
    return (a->begin > b->begin) - (a->begin < b->begin);
}

/* After the call's work is done: the stages by start time, in milliseconds. */
void tb_trace_pipeline_end(void)
{
    if (!tracing)
        return;
    tracing = 0;
    for (int i = 0; i < trace.count; i++) {
        stage *s = &trace.stages[i];
        float begin_ms, end_ms;
        if (!s->on_gpu || !s->what)
            continue;
        if (cudaEventSynchronize(trace.gpu_end[i]) != cudaSuccess ||
            cudaEventElapsedTime(&begin_ms, trace.zero, trace.gpu_begin[i]) != cudaSuccess ||
            cudaEventElapsedTime(&end_ms, trace.zero, trace.gpu_end[i]) != cudaSuccess) {
            s->what = NULL;
            cudaGetLastError(); /* the trace's failure, as in event() */
        } else
            s->begin = begin_ms / 1e3, s->end = end_ms / 1e3;
    }
    qsort(trace.stages, (size_t)trace.count, sizeof(stage), by_begin);
    for (int i = 0; i < trace.count; i++) {
        const stage *s = &trace.stages[i];
        if (s->what)
            fprintf(stderr, "tiledblas: pipeline %9.3f %9.3f ms %s %s %lld\n", 1e3 * s->begin, 1e3 * s->end,
                    s->on_gpu ? "gpu " : "host", s->what, (long long)s->panel);
    }
    if (trace.dropped)
        fprintf(stderr, "tiledblas: pipeline: %d more stages not traced\n", trace.dropped);
    atomic_flag_clear(&taken);
}
