/* Exit status 0 when tiledblas can use a GPU, 1 otherwise: lets the scripts skip. */
#include "tiledblas.h"

#include <stdio.h>

int main(void)
{
    int available = tiledblas_gpu_available();
    printf("GPU available: %s\n", available ? "yes" : "no");
    return available ? 0 : 1;
}
