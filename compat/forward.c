/*
 * The forwarders' resolver, entered through forward_lazy.S with a forwarded
 * name's slot index and the address its caller returns to. The name's
 * definition is found by the CPU BLAS's rule (tb_cpu_lookup; a 64-bit-integer
 * name, which has a plain spelling, tb_cpu_lookup_ilp64). Where every caller
 * reaches that definition it is stored in the name's slot: later calls take
 * the one indirect jump. Where the program's objects define the name in
 * several local dlopen scopes (two bundled BLAS libraries calling their own
 * LAPACK helpers under the same name), the answer depends on the caller: the
 * slot keeps the lazy entry, and each call asks here for its caller's: the
 * definition in the calling object's local scope, itself or its dependencies
 * (tb_resolve_in_caller), else the first in load order; remembered per name
 * and calling object.
 * A name nothing provides stops the program with one message: never a jump to
 * NULL.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/fork_reset.h"
#include "cpu/cpu_blas.h"
#include "cpu/resolve.h"

extern const char *const tb_forward_names[], *const tb_forward_plain_names[];
extern _Atomic(void *) tb_forward_slots[];

void *tb_forward_resolve(unsigned index, const void *caller);

/*
 * The per-caller answers: open addressing, entries written once under a lock
 * and published by their object (release), read without one. A full table
 * only means that later pairs are resolved at each call.
 */
enum { CALLER_ENTRIES = 512 };
static struct {
    _Atomic(const void *) object; /* the caller's link map; NULL: free */
    unsigned index;
    void *target;
} callers[CALLER_ENTRIES];
static pthread_mutex_t callers_lock = PTHREAD_MUTEX_INITIALIZER;

TB_FREE_IN_CHILD(callers_lock, PTHREAD_MUTEX_INITIALIZER)

static unsigned first_entry(unsigned index, const void *object)
{
    const uintptr_t key = (uintptr_t)object >> 4 ^ (uintptr_t)index * 0x9e3779b1u;
    return (unsigned)(key ^ key >> 16) % CALLER_ENTRIES;
}

/* The cached answer for (index, object), or NULL; *free_entry: where it would go, or -1 when full. */
static void *cached(unsigned index, const void *object, int *free_entry)
{
    unsigned e = first_entry(index, object);
    for (int probes = 0; probes < CALLER_ENTRIES; probes++, e = (e + 1) % CALLER_ENTRIES) {
        const void *entry_object = atomic_load_explicit(&callers[e].object, memory_order_acquire);
        if (!entry_object) {
            *free_entry = (int)e;
            return NULL;
        }
        if (entry_object == object && callers[e].index == index)
            return callers[e].target;
    }
    *free_entry = -1;
    return NULL;
}

/* The calling object, as its link map; NULL where none holds the address. */
static const void *object_of(const void *caller)
{
    struct dl_find_object found;
    return _dl_find_object((void *)caller, &found) == 0 ? (const void *)found.dlfo_link_map : NULL;
}

static void remember(unsigned index, const void *object, void *target)
{
    int free_entry;
    pthread_mutex_lock(&callers_lock);
    if (!cached(index, object, &free_entry) && free_entry >= 0) {
        callers[free_entry].index = index;
        callers[free_entry].target = target;
        atomic_store_explicit(&callers[free_entry].object, object, memory_order_release);
    }
    pthread_mutex_unlock(&callers_lock);
}

void *tb_forward_resolve(unsigned index, const void *caller)
{
    const void *object = object_of(caller);
    int free_entry;
    void *target = object ? cached(index, object, &free_entry) : NULL;
    if (target)
        return target;
    const char *name = tb_forward_names[index];
    char searched[1024];
    const char *plain = tb_forward_plain_names[index];
    int shared = 1;
    target = plain ? tb_cpu_lookup_ilp64(name, plain, &shared, searched, sizeof searched)
                   : tb_cpu_lookup(name, &shared, searched, sizeof searched);
    if (!target) {
        fprintf(stderr, "tiledblas: %s is not provided by any BLAS or LAPACK library (searched %s); aborting\n",
                name, searched);
        abort();
    }
    if (shared) {
        atomic_store_explicit(&tb_forward_slots[index], target, memory_order_release);
        return target;
    }
    void *own = tb_resolve_in_caller(name, caller);
    if (own)
        target = own;
    if (object)
        remember(index, object, target);
    return target;
}
