/*
 * A program's own Fortran error handler, in a shared library of the program
 * rather than its executable: it says what it got and ends the program with
 * status 3, as an application's handler may (preload_handler.sh).
 */
#include <stdio.h>
#include <stdlib.h>

void xerbla_(const char *srname, const int *info, size_t len);
void xerbla_(const char *srname, const int *info, size_t len)
{
    printf("application handler: parameter %d to %.*s\n", *info, (int)(len < 6 ? len : 6), srname);
    fflush(stdout);
    exit(3);
}
