/*
 * tiledblas-info: what the library finds on this machine, and whether its
 * paths agree. See usage() for the manual.
 */
#include "tiledblas.h"

#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

extern char **environ;

static void usage(FILE *out)
{
    fputs("NAME\n"
          "    tiledblas-info - what tiledblas finds on this machine\n"
          "\n"
          "SYNOPSIS\n"
          "    tiledblas-info [--check] [--help]\n"
          "\n"
          "DESCRIPTION\n"
          "    Prints the library's version; the GPU it can use, or why none (no NVIDIA\n"
          "    driver library, cuInit failing, no device, the GPU path disabled by the\n"
          "    environment); the CPU BLAS it forwards to, LP64 and ILP64, with the\n"
          "    OpenBLAS kernels each runs where it is OpenBLAS, and a warning naming the\n"
          "    OPENBLAS_CORETYPE to set when these are older than the CPU supports; how\n"
          "    many BLAS, CBLAS and LAPACK names it exports and how many of those it\n"
          "    forwards to the CPU BLAS; and the TILEDBLAS_*, OPENBLAS_* and\n"
          "    CUDA_VISIBLE_DEVICES variables in force.\n"
          "\n"
          "OPTIONS\n"
          "    --check  also runs one small SGEMM on each path (CPU, GPU where one is\n"
          "             usable, automatic) and compares each result with a product\n"
          "             computed in double precision, element by element within\n"
          "             2 (K + 2) eps (|A| |B|)_ij.\n"
          "    --help   prints this manual.\n"
          "\n"
          "EXIT STATUS\n"
          "    0 when every path checked agrees (always without --check), 1 when one\n"
          "    does not, 2 for a bad option.\n",
          out);
}

/* ---- the GPU, through the CUDA driver API (dlopen'ed: the tool runs without one) ---- */

typedef int cu_result;
typedef int cu_device;
typedef cu_result cu_init_fn(unsigned);
typedef cu_result cu_int_fn(int *);
typedef cu_result cu_device_get_fn(cu_device *, int);
typedef cu_result cu_device_name_fn(char *, int, cu_device);
typedef cu_result cu_device_attribute_fn(int *, int, cu_device);
typedef cu_result cu_device_memory_fn(size_t *, cu_device);
typedef cu_result cu_error_name_fn(cu_result, const char **);

enum { CU_COMPUTE_CAPABILITY_MAJOR = 75, CU_COMPUTE_CAPABILITY_MINOR = 76 };

static const char *cu_error(void *driver, cu_result status)
{
    cu_error_name_fn *name = (cu_error_name_fn *)dlsym(driver, "cuGetErrorName");
    const char *text = NULL;
    if (name && name(status, &text) == 0 && text)
        return text;
    return "unknown error";
}

static void report_gpu(void)
{
    const char *device = getenv("TILEDBLAS_DEVICE");
    if (device && strcmp(device, "cpu") == 0)
        printf("gpu:            not used: TILEDBLAS_DEVICE=cpu\n");
    void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!driver) {
        printf("gpu:            none: no NVIDIA driver library (%s)\n", dlerror());
        return;
    }
    cu_init_fn *init = (cu_init_fn *)dlsym(driver, "cuInit");
    cu_int_fn *driver_version = (cu_int_fn *)dlsym(driver, "cuDriverGetVersion");
    cu_int_fn *count = (cu_int_fn *)dlsym(driver, "cuDeviceGetCount");
    cu_device_get_fn *get = (cu_device_get_fn *)dlsym(driver, "cuDeviceGet");
    cu_device_name_fn *name = (cu_device_name_fn *)dlsym(driver, "cuDeviceGetName");
    cu_device_attribute_fn *attribute = (cu_device_attribute_fn *)dlsym(driver, "cuDeviceGetAttribute");
    cu_device_memory_fn *memory = (cu_device_memory_fn *)dlsym(driver, "cuDeviceTotalMem_v2");
    if (!init || !driver_version || !count || !get || !name || !attribute || !memory) {
        printf("gpu:            none: libcuda.so.1 lacks the driver API this tool reads\n");
        return;
    }
    int version = 0, devices = 0;
    cu_result status = init(0);
    if (status != 0) {
        const char *visible = getenv("CUDA_VISIBLE_DEVICES");
        printf("gpu:            none: cuInit failed: %s (%d)%s%s\n", cu_error(driver, status), status,
               visible ? ", CUDA_VISIBLE_DEVICES=" : "", visible ? visible : "");
        return;
    }
    if (driver_version(&version) == 0)
        printf("cuda driver:    %d.%d\n", version / 1000, version % 1000 / 10);
    status = count(&devices);
    if (status != 0 || devices == 0) {
        printf("gpu:            none: %s\n", status != 0 ? cu_error(driver, status) : "no CUDA device");
        return;
    }
    for (int i = 0; i < devices; i++) {
        cu_device dev;
        char text[256] = "unknown";
        int major = 0, minor = 0;
        size_t bytes = 0;
        if (get(&dev, i) != 0)
            continue;
        name(text, (int)sizeof text, dev);
        attribute(&major, CU_COMPUTE_CAPABILITY_MAJOR, dev);
        attribute(&minor, CU_COMPUTE_CAPABILITY_MINOR, dev);
        memory(&bytes, dev);
        printf("gpu %d:          %s, compute capability %d.%d, %.1f GiB\n", i, text, major, minor,
               (double)bytes / (1024.0 * 1024.0 * 1024.0));
    }
    printf("gpu usable:     %s\n", tiledblas_gpu_available() ? "yes" : "no (the library could not start it)");
}

/* ---- the CPU BLAS and its OpenBLAS kernels ---- */

/* The newest OpenBLAS core the CPU's flags support ("SkylakeX", "Haswell"), or NULL. */
static const char *best_core(void)
{
    FILE *cpuinfo = fopen("/proc/cpuinfo", "r");
    if (!cpuinfo)
        return NULL;
    char line[8192];
    const char *best = NULL;
    while (fgets(line, sizeof line, cpuinfo)) {
        if (strncmp(line, "flags", 5) != 0)
            continue;
        char *flags = strchr(line, ':');
        if (!flags)
            break;
        char padded[8200];
        snprintf(padded, sizeof padded, " %s ", flags + 1);
        char *end = strchr(padded, '\n');
        if (end)
            *end = ' ';
#define HAS(flag) (strstr(padded, " " flag " ") != NULL)
        if (HAS("avx512f") && HAS("avx512bw") && HAS("avx512dq") && HAS("avx512vl"))
            best = "SkylakeX";
        else if (HAS("avx2") && HAS("fma"))
            best = "Haswell";
#undef HAS
        break;
    }
    fclose(cpuinfo);
    return best;
}

/* Whether `core` has the SGEMM kernels of `best`: a newer core counts as good. */
static int core_as_good(const char *core, const char *best)
{
    static const char *const avx512[] = {"skylakex", "cooperlake", "sapphirerapids", NULL};
    static const char *const avx2[] = {"haswell", "zen", "skylakex", "cooperlake", "sapphirerapids", NULL};
    const char *const *good = strcmp(best, "SkylakeX") == 0 ? avx512 : avx2;
    for (; *good; good++)
        if (strcasecmp(core, *good) == 0)
            return 1;
    return 0;
}

/*
 * openblas_get_corename() of a loaded library, under the names OpenBLAS builds
 * give it; a library has one of them. The plain name comes first: it is that
 * of the LP64 build and also of Debian's ILP64 one (libopenblas64.so.0 keeps
 * the plain names, as for its routines), where the 64_ spelling is absent.
 * The suffixed and prefixed names are those of builds with a symbol suffix
 * (OpenBLAS's own ILP64 packaging) and of scipy-openblas.
 */
static const char *corename(const char *path)
{
    static const char *const names[] = {"openblas_get_corename", "openblas_get_corename64_",
                                        "scipy_openblas_get_corename", "scipy_openblas_get_corename64_"};
    void *handle = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
    if (!handle)
        return NULL;
    const char *core = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !core; i++) {
        char *(*get)(void) = (char *(*)(void))dlsym(handle, names[i]);
        if (get)
            core = get();
    }
    dlclose(handle);
    return core;
}

static void report_cpu_blas(const char *label, const char *path)
{
    printf("%-16s%s\n", label, path ? path : "none");
    const char *core = path ? corename(path) : NULL;
    if (!core)
        return;
    printf("  openblas core: %s\n", core);
    const char *best = best_core();
    if (!best || core_as_good(core, best))
        return;
    const char *coretype = getenv("OPENBLAS_CORETYPE");
    printf("  warning: OpenBLAS runs its %s kernels, older than this CPU supports (%s)%s; "
           "set OPENBLAS_CORETYPE=%s\n", core, strcmp(best, "SkylakeX") == 0 ? "AVX-512" : "AVX2",
           coretype ? ", as OPENBLAS_CORETYPE asks" : ": its CPU detection fell short", best);
}

static void report_environment(void)
{
    int shown = 0;
    for (char **var = environ; *var; var++)
        if (strncmp(*var, "TILEDBLAS_", 10) == 0 || strncmp(*var, "OPENBLAS_", 9) == 0 ||
            strncmp(*var, "CUDA_VISIBLE_DEVICES=", 21) == 0) {
            printf("%-16s%s\n", shown ? "" : "environment:", *var);
            shown = 1;
        }
    if (!shown)
        printf("environment:    no TILEDBLAS_*, OPENBLAS_* or CUDA_VISIBLE_DEVICES variable set\n");
}

/* ---- --check: one SGEMM per path against a double-precision product ---- */

enum { M = 96, N = 80, K = 112 };

/* Whether cblas_sgemm on `device` agrees with the double product; prints the worst error. */
static int check_path(const char *label, tiledblas_device device, const float *a, const float *b)
{
    static float c[M * N];
    for (int i = 0; i < M * N; i++)
        c[i] = NAN; /* beta = 0: never read */
    tiledblas_set_device(device);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1.0f, a, K, b, K, 0.0f, c, N);
    double worst = 0.0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double exact = 0.0, magnitude = 0.0;
            for (int p = 0; p < K; p++) {
                exact += (double)a[i * K + p] * (double)b[j * K + p];
                magnitude += fabs((double)a[i * K + p]) * fabs((double)b[j * K + p]);
            }
            const double ratio = fabs((double)c[i * N + j] - exact) / (2.0 * (K + 2) * FLT_EPSILON * magnitude);
            worst = ratio > worst || isnan(ratio) ? ratio : worst;
        }
    const int ok = worst <= 1.0;
    char heading[32];
    snprintf(heading, sizeof heading, "check %s:", label);
    printf("%-16s%dx%dx%d SGEMM %s (largest error %.3g of its bound)\n", heading, M, N, K,
           ok ? "agrees" : "DISAGREES", worst);
    return ok;
}

static int check_paths(void)
{
    static float a[M * K], b[N * K];
    unsigned long long state = 29;
    for (int i = 0; i < M * K; i++) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        a[i] = (float)((double)(state >> 11) / (double)(1ULL << 53) * 2.0 - 1.0);
    }
    for (int i = 0; i < N * K; i++) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        b[i] = (float)((double)(state >> 11) / (double)(1ULL << 53) * 2.0 - 1.0);
    }
    const tiledblas_device before = tiledblas_get_device();
    int ok = check_path("cpu", TILEDBLAS_DEVICE_CPU, a, b);
    if (tiledblas_gpu_available())
        ok &= check_path("gpu", TILEDBLAS_DEVICE_GPU, a, b);
    else
        printf("check gpu:      skipped: no usable GPU\n");
    ok &= check_path("auto", TILEDBLAS_DEVICE_AUTO, a, b);
    tiledblas_set_device(before);
    printf("check:          %s\n", ok ? "every path agrees" : "a path DISAGREES");
    return ok;
}

int main(int argc, char **argv)
{
    int check = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--check") == 0) {
            check = 1;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "tiledblas-info: unknown option '%s'\n\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    printf("tiledblas:      %s\n", tiledblas_version());
    report_gpu();
    report_cpu_blas("cpu blas lp64:", tiledblas_cpu_backend());
    report_cpu_blas("cpu blas ilp64:", tiledblas_cpu_backend_ilp64());
    printf("symbols:        %d exported, %d of them forwarded to the CPU BLAS\n", tiledblas_abi_exported(),
           tiledblas_abi_forwarded());
    report_environment();
    return check && !check_paths() ? 1 : 0;
}
