/*
 * The forwarders' resolver: the first call of a forwarded name (generated
 * forwarders.S, entered through forward_lazy.S) finds its definition by the
 * CPU BLAS's rule (tb_cpu_lookup; a 64-bit-integer name, which has a plain
 * spelling, tb_cpu_lookup_ilp64) and stores it in the name's slot. A name
 * nothing provides stops the program with one message: never a jump to NULL.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "cpu/cpu_blas.h"

extern const char *const tb_forward_names[], *const tb_forward_plain_names[];
extern _Atomic(void *) tb_forward_slots[];

void *tb_forward_resolve(unsigned index);

void *tb_forward_resolve(unsigned index)
{
    const char *name = tb_forward_names[index];
    char searched[1024];
    const char *plain = tb_forward_plain_names[index];
    void *target = plain ? tb_cpu_lookup_ilp64(name, plain, searched, sizeof searched)
                         : tb_cpu_lookup(name, searched, sizeof searched);
    if (!target) {
        fprintf(stderr, "tiledblas: %s is not provided by any BLAS or LAPACK library (searched %s); aborting\n",
                name, searched);
        abort();
    }
    atomic_store_explicit(&tb_forward_slots[index], target, memory_order_release);
    return target;
}
