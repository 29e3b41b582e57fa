/* TB_TINY_PATH, shared by the framework and the ABI layer without the rest of internal.h. */
#ifndef TILEDBLAS_TINY_PATH_H
#define TILEDBLAS_TINY_PATH_H

/*
 * Marks the functions a tiny call on host memory passes through, from the
 * entry points to the CPU BLAS: the linker puts them together (.text.hot), so
 * that such a call touches few code pages, not one per source file.
 */
#define TB_TINY_PATH __attribute__((hot))

#endif /* TILEDBLAS_TINY_PATH_H */
