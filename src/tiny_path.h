/* TB_TINY_PATH and TB_TINY_DATA, shared by the framework and the ABI layer without the rest of internal.h. */
#ifndef TILEDBLAS_TINY_PATH_H
#define TILEDBLAS_TINY_PATH_H

/*
 * Marks the functions a tiny call on host memory passes through, from the
 * entry points to the CPU BLAS: the linker puts them together (.text.hot), so
 * that such a call touches few code pages, not one per source file.
 */
#define TB_TINY_PATH __attribute__((hot))

/*
 * Marks the variables such a call reads or writes: in a section of their own,
 * which the linker keeps whole, they share a page and a few cache lines
 * instead of three pages spread between auto mode's tables and the pipeline
 * trace (each miss there costs the most on a busy or virtualised host).
 */
#define TB_TINY_DATA __attribute__((section("tb_tiny_data")))

#endif /* TILEDBLAS_TINY_PATH_H */
