/* The tiny call's gate (tiny_gate.h): its state, and opening it. */
#include <stdatomic.h>

#include "cpu/cpu_blas.h"
#include "dispatch/host_ranges.h"
#include "dispatch/tiny_gate.h"

tb_tiny_gate tb_tiny;

/* Everything the gate needs is final by the first tiny call; a verbose process keeps it shut (every
 * call is accounted), as does one whose CPU BLAS has no cblas_sgemm of its own or whose break moves
 * out of sight. */
void tb_tiny_gate_open(const tb_config *config)
{
    static atomic_flag tried = ATOMIC_FLAG_INIT;
    if (atomic_flag_test_and_set(&tried))
        return;
    tb_tiny.gpu_min_flops = config->gpu_min_flops;
    tb_tiny.heap_start = tb_heap_start_by_break_in_place();
    tb_tiny.device = &config->device;
    tb_tiny.cpu_cblas = tb_cpu_backend_cblas();
    if (config->verbose == 0 && tb_tiny.heap_start && tb_tiny.cpu_cblas)
        atomic_store_explicit(&tb_tiny.open, 1, memory_order_release);
}
