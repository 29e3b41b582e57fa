/*
 * Where a name the library does not run itself is defined: the rule shared by
 * the forwarders, the CPU fallback of every SGEMM name and the default error
 * handlers (resolve.c).
 */
#ifndef TILEDBLAS_CPU_RESOLVE_H
#define TILEDBLAS_CPU_RESOLVE_H

/*
 * The definition of `name` the program would reach without tiledblas. A
 * reference binds to the first definition in the global scope (the
 * executable, the preloaded and linked libraries, those dlopen'ed
 * RTLD_GLOBAL), else to one in the caller's own local dlopen scope. So: the
 * global scope's definition where there is one; else the first loaded object,
 * in load order, that defines the name itself. Skipped: this library, another
 * copy of it (said once), and the objects this library loaded itself
 * (tb_resolve_own_load). The object found is pinned (tb_pin). NULL when none
 * defines it. *shared (unless NULL) is 1 when every caller reaches the answer
 * (a global definition, or the only one), 0 when two or more objects outside
 * the global scope define the name: a caller then reaches the one in its own
 * local scope (tb_resolve_in_caller).
 */
void *tb_resolve_next(const char *name, int *shared);

/*
 * `name` as the object that holds the address `caller` would reach it in its
 * own local scope (the object, then its dependencies), where the defining
 * object counts as the program's (never this library, another copy of it, or
 * an object it loaded), pinned; else NULL. The calling object is pinned too,
 * so that an answer remembered for it stays true.
 */
void *tb_resolve_in_caller(const char *name, const void *caller);

/* `name` as defined in the object behind `handle` itself (not a dependency, never this library), pinned; else NULL. */
void *tb_resolve_in(void *handle, const char *name);

/*
 * dlopen(name, RTLD_NOW | RTLD_LOCAL), remembering the object as loaded by
 * this library: tb_resolve_next does not count it as the program's.
 */
void *tb_resolve_own_load(const char *name);

/* Keeps the object defining `symbol` loaded for the life of the process (RTLD_NODELETE); each object once. */
void tb_pin(const void *symbol);

/* dlclose of a handle from tb_resolve_own_load; the object stops counting as loaded by this library with its last. */
void tb_resolve_own_close(void *handle);

/*
 * A handle of the object defining `symbol` (the executable's: the global
 * scope's, dlopen(NULL)); NULL where none holds it. The caller closes it.
 */
void *tb_handle_of(const void *symbol);

/* The path of the object defining `symbol`, or "?". */
const char *tb_object_path(const void *symbol);

/*
 * The integer width of the Fortran BLAS whose isamax (its name in `isamax`)
 * is at `isamax`: 64 or 32, read from how it takes a count; 0 when unknown.
 */
int tb_fortran_width(void *isamax);

/* The same for the isamax named `isamax` in the object behind `handle` itself, without pinning it. */
int tb_fortran_width_in(void *handle, const char *isamax);

#endif /* TILEDBLAS_CPU_RESOLVE_H */
