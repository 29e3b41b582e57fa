/* Auto mode's measured corrections near the crossover (see crossover.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "crossover.h"

/* 2^18 flops (about 51^3) is the lowest class: the GPU floor's default is 5e5. */
#define LOWEST_FLOPS_LOG2 18

static int clamp(int x, int lo, int hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

int tb_crossover_in_band(const double predicted[TB_PATHS])
{
    const double cpu = predicted[TB_PATH_CPU], gpu = predicted[TB_PATH_GPU];
    return cpu > 0.0 && gpu > 0.0 && cpu < TB_CROSSOVER_BAND * gpu && gpu < TB_CROSSOVER_BAND * cpu;
}

int tb_crossover_class_of(double flops, double bytes)
{
    const int by_flops = (int)floor(2.0 * (log2(flops > 1.0 ? flops : 1.0) - LOWEST_FLOPS_LOG2));
    const int by_intensity = (int)floor(log2(bytes > 0.0 && flops > bytes ? flops / bytes : 1.0));
    return clamp(by_flops, 0, TB_CROSSOVER_FLOP_CLASSES - 1) * TB_CROSSOVER_INTENSITY_CLASSES +
           clamp(by_intensity, 0, TB_CROSSOVER_INTENSITY_CLASSES - 1);
}

static double median_ratio(const float r[TB_CROSSOVER_SAMPLES])
{
    float sorted[TB_CROSSOVER_SAMPLES];
    memcpy(sorted, r, sizeof sorted);
    for (int i = 1; i < TB_CROSSOVER_SAMPLES; i++) /* insertion sort: a handful of floats */
        for (int j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
            const float t = sorted[j];
            sorted[j] = sorted[j - 1];
            sorted[j - 1] = t;
        }
    _Static_assert(TB_CROSSOVER_SAMPLES % 2 == 1, "an odd count has a middle sample");
    return sorted[TB_CROSSOVER_SAMPLES / 2];
}

int tb_crossover_choose(tb_crossover_class *cls, const double predicted[TB_PATHS], int *trial)
{
    const int predicted_best = predicted[TB_PATH_GPU] < predicted[TB_PATH_CPU];
    cls->choices++;
    *trial = 1;
    /* The predicted faster path is measured first: a class seen only once costs nothing extra. */
    if (cls->samples[predicted_best] < TB_CROSSOVER_SAMPLES)
        return predicted_best;
    if (cls->samples[!predicted_best] < TB_CROSSOVER_SAMPLES)
        return !predicted_best;
    const double cpu = predicted[TB_PATH_CPU] * median_ratio(cls->ratios[TB_PATH_CPU]);
    const double gpu = predicted[TB_PATH_GPU] * median_ratio(cls->ratios[TB_PATH_GPU]);
    const int measured_best = gpu < cpu;
    const unsigned n = cls->choices;
    *trial = n % TB_CROSSOVER_RETRY == 0 || (n >= TB_CROSSOVER_FIRST_RETRY && n < TB_CROSSOVER_RETRY && !(n & (n - 1)));
    if (!*trial)
        return measured_best;
    /* The other path's old ratios are forgotten: it is measured afresh, this call and the next ones. */
    cls->samples[!measured_best] = 0;
    return !measured_best;
}

void tb_crossover_measured(tb_crossover_class *cls, int path, int trial, int failed, double predicted,
                           double started, double seconds)
{
    const int in_shadow = path == TB_PATH_GPU && !trial && !failed &&
                          started - cls->cpu_trial_end < TB_CROSSOVER_SHADOW_SECONDS;
    if (!in_shadow)
        tb_crossover_record(cls, path, predicted, seconds);
    if (path == TB_PATH_CPU && trial)
        cls->cpu_trial_end = started + seconds;
}

void tb_crossover_record(tb_crossover_class *cls, int path, double predicted, double seconds)
{
    if (!(predicted > 0.0) || !(seconds >= 0.0))
        return;
    cls->ratios[path][cls->samples[path] % TB_CROSSOVER_SAMPLES] = (float)(seconds / predicted);
    cls->samples[path]++;
    cls->taken[path]++;
}

int tb_crossover_describe(const tb_crossover_class *cls, int index, char *text, size_t size)
{
    if (!cls->choices)
        return 0;
    char ratio[TB_PATHS][16]; /* "-" until the path has a median since its last reset */
    for (int p = 0; p < TB_PATHS; p++) {
        if (cls->samples[p] >= TB_CROSSOVER_SAMPLES)
            snprintf(ratio[p], sizeof ratio[p], "x%.2f", median_ratio(cls->ratios[p]));
        else
            snprintf(ratio[p], sizeof ratio[p], "-");
    }
    const int by_flops = index / TB_CROSSOVER_INTENSITY_CLASSES, by_intensity = index % TB_CROSSOVER_INTENSITY_CLASSES;
    snprintf(text, size, "2^%.1f flops, %d flop/B: cpu %u calls (%s of predicted), gpu %u calls (%s)",
             LOWEST_FLOPS_LOG2 + 0.5 * by_flops, 1 << by_intensity, cls->taken[TB_PATH_CPU], ratio[TB_PATH_CPU],
             cls->taken[TB_PATH_GPU], ratio[TB_PATH_GPU]);
    return 1;
}
