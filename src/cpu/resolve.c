/*
 * The resolver (resolve.h). The global scope is searched as the dynamic
 * linker searches it (dlsym with RTLD_DEFAULT, then RTLD_NEXT past this
 * library). It only sees the global scope, and Python extension modules load
 * their BLAS in a local one; so the loaded objects are then walked in load
 * order (dl_iterate_phdr), each asked for the name through its own handle,
 * and a definition counts only where dladdr places it in that very object.
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/fork_reset.h"
#include "core/report.h"
#include "cpu/resolve.h"

/*
 * Objects this library dlopen'ed itself, with the references it holds; an
 * entry goes when the last is closed (tb_resolve_own_close), before its link
 * map can belong to another object.
 */
enum { OWN_LOADS_MAX = 16 };
static struct {
    struct link_map *map;
    int refs;
} own_loads[OWN_LOADS_MAX];
static int own_load_count;
static pthread_mutex_t own_loads_lock = PTHREAD_MUTEX_INITIALIZER;

TB_FREE_IN_CHILD(own_loads_lock, PTHREAD_MUTEX_INITIALIZER)

static struct link_map *link_map_of_handle(void *handle)
{
    struct link_map *map = NULL;
    return handle && dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 ? map : NULL;
}

/*
 * The object that defines `symbol`: its link map and its file (NULL, NULL:
 * none). Link maps are compared, never read: the loader writes them under a
 * lock of its own, which a thread sanitizer does not see, so a read of one
 * that another thread's dlopen made reads as a race; their fields come
 * through the loader's own calls (dladdr, dlinfo).
 */
static struct link_map *object_of(const void *symbol, const char **file)
{
    Dl_info info;
    struct link_map *map = NULL;
    const int found = symbol && dladdr1(symbol, &info, (void **)&map, RTLD_DL_LINKMAP) && map;
    if (file)
        *file = found ? info.dli_fname : NULL;
    return found ? map : NULL;
}

static struct link_map *link_map_of_symbol(const void *symbol)
{
    return object_of(symbol, NULL);
}

/* The executable's link map (never unloaded; its handle searches the global scope). */
static struct link_map *executable(void)
{
    static _Atomic(struct link_map *) found;
    struct link_map *map = atomic_load_explicit(&found, memory_order_acquire);
    if (!map) {
        void *handle = dlopen(NULL, RTLD_LAZY);
        map = link_map_of_handle(handle);
        if (handle)
            dlclose(handle);
        atomic_store_explicit(&found, map, memory_order_release);
    }
    return map;
}

/* The handle of the loaded object `map`, whose file is `file`; the caller closes it. */
static void *handle_of(const struct link_map *map, const char *file)
{
    return map == executable() ? dlopen(NULL, RTLD_LAZY) : dlopen(file, RTLD_LAZY | RTLD_NOLOAD);
}

static struct link_map *self(void)
{
    return link_map_of_symbol((const void *)tb_resolve_next);
}

/* The entry of `map` in own_loads, or -1; under own_loads_lock. */
static int own_load_entry(const struct link_map *map)
{
    for (int i = 0; i < own_load_count; i++)
        if (own_loads[i].map == map)
            return i;
    return -1;
}

static int loaded_by_us(const struct link_map *map)
{
    pthread_mutex_lock(&own_loads_lock);
    const int found = own_load_entry(map) >= 0;
    pthread_mutex_unlock(&own_loads_lock);
    return found;
}

void *tb_resolve_own_load(const char *name)
{
    void *already = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
    void *handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (already)
        dlclose(already);
    struct link_map *map = link_map_of_handle(handle);
    if (map) {
        pthread_mutex_lock(&own_loads_lock);
        const int entry = own_load_entry(map);
        if (entry >= 0)
            own_loads[entry].refs++;
        else if (!already && own_load_count < OWN_LOADS_MAX)
            own_loads[own_load_count].map = map, own_loads[own_load_count++].refs = 1;
        pthread_mutex_unlock(&own_loads_lock);
    }
    return handle;
}

void tb_resolve_own_close(void *handle)
{
    struct link_map *map = link_map_of_handle(handle);
    if (!map)
        return;
    pthread_mutex_lock(&own_loads_lock);
    const int entry = own_load_entry(map);
    if (entry >= 0 && --own_loads[entry].refs == 0)
        own_loads[entry] = own_loads[--own_load_count];
    pthread_mutex_unlock(&own_loads_lock);
    dlclose(handle);
}

const char *tb_object_path(const void *symbol)
{
    Dl_info info;
    return symbol && dladdr(symbol, &info) && info.dli_fname && *info.dli_fname ? info.dli_fname : "?";
}

/* The objects pinned so far, each once: a pinned object's link map stays its own. */
enum { PINNED_MAX = 256 };
static const struct link_map *pinned[PINNED_MAX];
static int pinned_count;
static pthread_mutex_t pinned_lock = PTHREAD_MUTEX_INITIALIZER;

TB_FREE_IN_CHILD(pinned_lock, PTHREAD_MUTEX_INITIALIZER)

/* Whether `map` is pinned; under pinned_lock. */
static int pinned_already(const struct link_map *map)
{
    for (int i = 0; i < pinned_count; i++)
        if (pinned[i] == map)
            return 1;
    return 0;
}

void tb_pin(const void *symbol)
{
    const char *file;
    const struct link_map *map = object_of(symbol, &file);
    if (!map || map == executable())
        return; /* the executable, which is never unloaded */
    pthread_mutex_lock(&pinned_lock);
    const int done = pinned_already(map);
    pthread_mutex_unlock(&pinned_lock);
    /* Not under the lock: dlopen takes the loader's. The reference is kept on purpose (NODELETE). */
    if (done || !dlopen(file, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE))
        return;
    pthread_mutex_lock(&pinned_lock);
    if (!pinned_already(map) && pinned_count < PINNED_MAX)
        pinned[pinned_count++] = map;
    pthread_mutex_unlock(&pinned_lock);
}

/* `name` in the object `map` itself, through `handle` (which may also see its dependencies). */
static void *defined_in(void *handle, const struct link_map *map, const char *name)
{
    void *symbol = dlsym(handle, name);
    return symbol && link_map_of_symbol(symbol) == map ? symbol : NULL;
}

/* Another libtiledblas (it exports the library's own query), which would forward back: said once, never used. */
static int is_tiledblas(void *handle, const struct link_map *map)
{
    const void *query = defined_in(handle, map, "tiledblas_abi_exported");
    if (!query)
        return 0;
    TB_WARN_ONCE("another copy of libtiledblas is loaded (%s); nothing is forwarded to it",
                 map == executable() ? "the executable" : tb_object_path(query));
    return 1;
}

/* tb_resolve_in without pinning. */
static void *lookup_in(void *handle, const char *name)
{
    struct link_map *map = link_map_of_handle(handle);
    if (!map || map == self() || is_tiledblas(handle, map))
        return NULL;
    return defined_in(handle, map, name);
}

void *tb_resolve_in(void *handle, const char *name)
{
    void *symbol = lookup_in(handle, name);
    tb_pin(symbol);
    return symbol;
}

/* The loaded objects' names, in load order; "" is the executable. */
typedef struct {
    char **names;
    size_t count, capacity;
} object_list;

static int collect(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    object_list *list = data;
    if (list->count == list->capacity) {
        size_t capacity = list->capacity ? 2 * list->capacity : 64;
        char **names = realloc(list->names, capacity * sizeof *names);
        if (!names)
            return 1;
        list->names = names, list->capacity = capacity;
    }
    char *copy = strdup(info->dlpi_name ? info->dlpi_name : "");
    if (!copy)
        return 1;
    list->names[list->count++] = copy;
    return 0;
}

/* An object whose definitions count as the program's: not this library, another copy of it, or one it loaded. */
static int counts(void *handle, struct link_map *map)
{
    return map && map != self() && !loaded_by_us(map) && !is_tiledblas(handle, map);
}

void *tb_handle_of(const void *symbol)
{
    const char *file;
    const struct link_map *map = object_of(symbol, &file);
    return map ? handle_of(map, file) : NULL;
}

/*
 * `name` in the global scope, besides this library: the first definition
 * there, which every caller reaches. The global scope before this library is
 * RTLD_DEFAULT's answer when that is not ours; after it, RTLD_NEXT's.
 */
static void *global_definition(const char *name)
{
    void *symbol = dlsym(RTLD_DEFAULT, name);
    if (symbol && link_map_of_symbol(symbol) == self())
        symbol = dlsym(RTLD_NEXT, name);
    const char *file;
    struct link_map *map = object_of(symbol, &file);
    if (!map)
        return NULL;
    void *handle = handle_of(map, file);
    const int counted = handle && counts(handle, map);
    if (handle)
        dlclose(handle);
    return counted ? symbol : NULL;
}

/* The first object in load order that defines `name` itself, whatever its scope; *more: another one does too. */
static void *first_definition(const char *name, int *more)
{
    object_list list = {0};
    dl_iterate_phdr(collect, &list);
    void *found = NULL;
    *more = 0;
    /* The executable (first) is in the global scope, which global_definition has searched. */
    for (size_t i = 1; i < list.count && !*more; i++) {
        void *handle = dlopen(list.names[i], RTLD_LAZY | RTLD_NOLOAD);
        struct link_map *map = link_map_of_handle(handle);
        void *symbol = counts(handle, map) ? defined_in(handle, map, name) : NULL;
        if (symbol && found)
            *more = 1;
        else if (symbol)
            found = symbol;
        if (handle)
            dlclose(handle);
    }
    for (size_t i = 0; i < list.count; i++)
        free(list.names[i]);
    free(list.names);
    return found;
}

void *tb_resolve_next(const char *name, int *shared)
{
    int more = 0;
    void *found = global_definition(name);
    if (!found)
        found = first_definition(name, &more);
    if (shared)
        *shared = !more;
    tb_pin(found);
    return found;
}

void *tb_resolve_in_caller(const char *name, const void *caller)
{
    const char *file;
    struct link_map *map = object_of(caller, &file);
    void *handle = map ? handle_of(map, file) : NULL;
    /* The caller's local scope: the calling object, then its dependencies. */
    void *symbol = handle ? dlsym(handle, name) : NULL;
    if (handle)
        dlclose(handle);
    struct link_map *definer = object_of(symbol, &file);
    void *definer_handle = definer ? handle_of(definer, file) : NULL;
    void *own = definer_handle && counts(definer_handle, definer) ? symbol : NULL;
    if (definer_handle)
        dlclose(definer_handle);
    tb_pin(caller);
    tb_pin(own);
    return own;
}

/*
 * isamax of one element, with the count 1 in its low 32 bits and the sign bit
 * set above: a 32-bit BLAS reads 1 and answers 1; a 64-bit one reads a
 * negative count and answers 0. Both read the stride 1 either way.
 */
int tb_fortran_width(void *isamax)
{
    if (!isamax)
        return 0;
    typedef int64_t (*isamax_fn)(const int64_t *n, const float *x, const int64_t *incx);
    const int64_t n = (int64_t)(UINT64_C(0x8000000000000001)), inc = 1;
    const float x[2] = {1.0f, 2.0f};
    const int answer = (int)((isamax_fn)isamax)(&n, x, &inc);
    return answer == 1 ? 32 : answer == 0 ? 64 : 0;
}

int tb_fortran_width_in(void *handle, const char *isamax)
{
    return tb_fortran_width(lookup_in(handle, isamax));
}
