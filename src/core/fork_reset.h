/*
 * Locks a forked child gets back free: a child inherits a lock held by a
 * thread of its parent that does not exist in it, and would hang on it.
 * TB_FREE_IN_CHILD(lock, INITIALIZER) registers, when the library loads, a
 * fork handler that re-initialises `lock` in the child; for locks whose state
 * is whole, or safely redone, whenever the lock is free.
 */
#ifndef TILEDBLAS_CORE_FORK_RESET_H
#define TILEDBLAS_CORE_FORK_RESET_H

#include <pthread.h>

#define TB_FREE_IN_CHILD(lock, initializer)                                       \
    static void lock##_free_in_child(void)                                        \
    {                                                                             \
        const pthread_mutex_t fresh = initializer;                                \
        lock = fresh;                                                             \
    }                                                                             \
    __attribute__((constructor)) static void lock##_register_free_in_child(void) \
    {                                                                             \
        pthread_atfork(NULL, NULL, lock##_free_in_child);                         \
    }

#endif /* TILEDBLAS_CORE_FORK_RESET_H */
