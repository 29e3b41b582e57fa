/*
 * The exit summary (TILEDBLAS_VERBOSE >= 1), assembled here where what it
 * tells is known: the calls and GFLOP per path, the CPU BLAS libraries
 * resolved (each with the naming conventions it serves), the cost
 * model's measured constants and the classes of calls auto mode measured.
 * Nothing calls into this file: its destructor runs at exit, which a shared
 * library always links in. A process that accounted no call (none made, or
 * verbose off) prints nothing and reads no setting: preloaded, the library
 * sits in every program a shell starts.
 */
#include <stdio.h>

#include "core/config.h"
#include "core/report.h"
#include "cpu/cpu_blas.h"
#include "dispatch/cost_model.h"

static void print_crossover_class(const char *text)
{
    fprintf(stderr, "tiledblas: near the crossover: %s\n", text);
}

__attribute__((destructor)) static void print_summary(void)
{
    const tb_totals totals = tb_report_totals();
    if (totals.calls[0] + totals.calls[1] == 0 || tb_config_get()->verbose < 1)
        return;
    /* Only the backends calls have resolved are named: exit must not load a BLAS. */
    char backends[2048];
    const int libraries = tb_cpu_backends_describe(backends, sizeof backends);
    char costs[256];
    const int measured = tb_cost_model_describe(costs, sizeof costs);
    fprintf(stderr, "tiledblas: summary: gpu %lu calls %.3f GFLOP, cpu %lu calls %.3f GFLOP%s%s%s%s\n",
            totals.calls[1], totals.gflop[1], totals.calls[0], totals.gflop[0],
            libraries == 0 ? "" : libraries == 1 ? ", cpu backend " : ", cpu backends ", libraries ? backends : "",
            measured ? ", cost model: " : "", measured ? costs : "");
    if (measured)
        tb_auto_describe_classes(print_crossover_class);
}
