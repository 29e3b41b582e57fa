/*
 * The application's BLAS unloaded after tiledblas has used it: the program
 * dlopens OpenBLAS with RTLD_GLOBAL (the CPU BLAS tiledblas then takes for its
 * CPU path), makes SGEMM calls through tiledblas (a general one and tiny ones,
 * which the tiny gate sends straight to the cached cblas_sgemm), dlcloses
 * OpenBLAS and calls again. tiledblas pins what it resolved, so the calls
 * after the dlclose still run and are right; without the pin they jump into
 * an unmapped library (SIGSEGV). Linked to tiledblas alone (BARE): nothing
 * else holds OpenBLAS.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tiledblas.h"

/* Column-major C = A*B in double, the expected result. */
static void reference(int n, const float *a, const float *b, double *c)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            double sum = 0.0;
            for (int p = 0; p < n; p++)
                sum += (double)a[i + p * n] * b[p + j * n];
            c[i + j * n] = sum;
        }
}

/* One n^3 product through cblas_sgemm; 0 when every element is within the K-scaled FP32 bound. */
static int product_fails(int n, const char *label)
{
    float *a = malloc(sizeof(float) * n * n), *b = malloc(sizeof(float) * n * n), *c = malloc(sizeof(float) * n * n);
    double *expected = malloc(sizeof(double) * n * n);
    for (int i = 0; i < n * n; i++) {
        a[i] = (float)((i * 7 % 13) - 6) / 8.0f;
        b[i] = (float)((i * 5 % 11) - 5) / 8.0f;
        c[i] = 0.0f;
    }
    reference(n, a, b, expected);
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
    int wrong = 0;
    for (int i = 0; i < n * n; i++) {
        double scale = 0.0;
        for (int p = 0; p < n; p++)
            scale += fabs((double)a[i % n + p * n] * b[p + (i / n) * n]);
        if (!(fabs(c[i] - expected[i]) <= 2.0 * n * 0x1p-24 * scale + 1e-30))
            wrong++;
    }
    if (wrong)
        fprintf(stderr, "FAIL %s: %d of %d elements wrong\n", label, wrong, n * n);
    free(a), free(b), free(c), free(expected);
    return wrong != 0;
}

int main(void)
{
    void *openblas = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_GLOBAL);
    if (!openblas) {
        fprintf(stderr, "SKIP: libopenblas.so.0 not found: %s\n", dlerror());
        return 77;
    }
    int failures = product_fails(64, "64^3 before the dlclose");
    for (int i = 0; i < 3; i++)
        failures += product_fails(16, "16^3 before the dlclose");
    if (!strstr(tiledblas_cpu_backend(), "openblas")) {
        fprintf(stderr, "FAIL: CPU backend %s, expected the program's OpenBLAS\n", tiledblas_cpu_backend());
        return 1;
    }
    dlclose(openblas);
    failures += product_fails(64, "64^3 after the dlclose");
    for (int i = 0; i < 3; i++)
        failures += product_fails(16, "16^3 after the dlclose");
    if (failures)
        return 1;
    printf("ok: SGEMM on the program's OpenBLAS before and after its dlclose\n");
    return 0;
}
