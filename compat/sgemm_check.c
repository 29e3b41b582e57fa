/* Argument checks of the reference SGEMM, shared by every SGEMM name. */
#include "compat.h"

int tb_parse_trans(char trans)
{
    switch (trans) {
    case 'N': case 'n':
        return 0;
    case 'T': case 't': case 'C': case 'c':
        return 1;
    default:
        return -1;
    }
}

static int64_t at_least_one(int64_t x)
{
    return x > 1 ? x : 1;
}

int tb_sgemm_dims_error(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                        int64_t ldc)
{
    const int64_t rows_a = trans_a ? k : m, rows_b = trans_b ? n : k;
    if (m < 0)
        return 3;
    if (n < 0)
        return 4;
    if (k < 0)
        return 5;
    if (lda < at_least_one(rows_a))
        return 8;
    if (ldb < at_least_one(rows_b))
        return 10;
    if (ldc < at_least_one(m))
        return 13;
    return 0;
}
