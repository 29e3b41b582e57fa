/* Where a checked SGEMM goes from its entry point, whatever its name (sgemm_handoff.h). */
#include <limits.h>

#include "compat.h"
#include "dispatch/sgemm.h"
#include "sgemm_handoff.h"

static int fits_int(int64_t x)
{
    return x <= INT_MAX;
}

void tb_sgemm_handoff(tb_cpu_target *cpu, const tb_origin *origin, int trans_a, int trans_b, int64_t m, int64_t n,
                      int64_t k, float alpha, const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
                      float *c, int64_t ldc)
{
    if (cpu->ilp64)
        tb_cpu_note_ilp64_call(cpu);
    if (!(fits_int(m) && fits_int(n) && fits_int(k) && fits_int(lda) && fits_int(ldb) && fits_int(ldc))) {
        tb_cpu_sgemm64(cpu, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        return;
    }
    const tb_call call = {
        .trans_a = trans_a, .trans_b = trans_b, .m = (int)m, .n = (int)n, .k = (int)k,
        .alpha = alpha, .beta = beta,
        .a = a, .lda = (int)lda, .b = b, .ldb = (int)ldb, .c = c, .ldc = (int)ldc,
        .cpu = cpu->convention == 0 ? NULL : cpu,
    };
    tb_sgemm(&call, origin);
}
