/* Where a call's operands live (residency.h): the certain host ranges first, then the CUDA driver. */
#include "dispatch/host_ranges.h"
#include "dispatch/residency.h"
#include "gpu/gpu.h"

tb_residency tb_find_residency(const tb_call *call, int reads_ab, int below_floor)
{
    tb_residency where = {0, 0, 1, -1};
    const float *operands[3] = {reads_ab ? call->a : NULL, reads_ab ? call->b : NULL, call->c};
    const unsigned bits[3] = {TB_RESIDENT_A, TB_RESIDENT_B, TB_RESIDENT_C};
    const size_t spans[3] = {tb_span_a(call), tb_span_b(call), tb_span_c(call)};
    tb_certain_host host;
    if (below_floor)
        tb_certain_host_ranges(&host);
    for (int i = 0; i < 3; i++) {
        if (!operands[i] || (below_floor && tb_is_certain_host(&host, operands[i], spans[i])))
            continue;
        if (!tb_process_has_cuda()) /* asked only now: it walks the loaded objects */
            return where;
        int device = -1;
        tb_mem_kind kind = tb_gpu_mem_kind(operands[i], &device);
        /* Pinned only as a whole: a span partly registered is copied as pageable memory. */
        if (kind == TB_MEM_PINNED && !tb_gpu_pinned_span(operands[i], spans[i]))
            kind = TB_MEM_HOST;
        if (kind == TB_MEM_PINNED)
            where.pinned |= bits[i];
        if (kind == TB_MEM_HOST || kind == TB_MEM_PINNED)
            continue;
        where.mask |= bits[i];
        where.cpu_readable &= kind == TB_MEM_MANAGED;
        where.device = where.device == -1 || where.device == device ? device : -2;
    }
    return where;
}
