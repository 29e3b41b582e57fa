/* Auto mode's measured corrections near the crossover (see crossover.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dispatch/crossover.h"

/* 2^18 flops (about 51^3) is the lowest class: the GPU floor's default is 7e5. */
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

/* The median of a path's first `count` ratios (at most TB_CROSSOVER_SAMPLES; the upper middle of an even count). */
static double median_ratio(const float r[TB_CROSSOVER_SAMPLES], unsigned count)
{
    float sorted[TB_CROSSOVER_SAMPLES];
    memcpy(sorted, r, count * sizeof *sorted);
    for (unsigned i = 1; i < count; i++) /* insertion sort: a handful of floats */
        for (unsigned j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
            const float t = sorted[j];
            sorted[j] = sorted[j - 1];
            sorted[j - 1] = t;
        }
    return sorted[count / 2];
}

/* How many of a path's ratios the ring holds since its last reset. */
static unsigned held(const tb_crossover_class *cls, int path)
{
    return cls->samples[path] < TB_CROSSOVER_SAMPLES ? cls->samples[path] : TB_CROSSOVER_SAMPLES;
}

/* A path's seconds for a call predicted at `predicted`, as measured: 0 while it has no samples. */
static double estimate(const tb_crossover_class *cls, int path, const double predicted[TB_PATHS])
{
    const unsigned n = held(cls, path);
    return n ? predicted[path] * median_ratio(cls->ratios[path], n) : 0.0;
}

/*
 * Whether a path's samples since its reset are enough to choose by: all of
 * them, or TB_CROSSOVER_EARLY that are all clearly apart from the other
 * path's estimate, once that has all its samples.
 */
static int judged(tb_crossover_class *cls, int path, const double predicted[TB_PATHS])
{
    if (cls->judged[path]) /* until its samples are reset: a later sample does not undo a verdict */
        return 1;
    const unsigned n = cls->samples[path];
    if (n < TB_CROSSOVER_EARLY || (n < TB_CROSSOVER_SAMPLES && cls->samples[!path] < TB_CROSSOVER_SAMPLES))
        return 0;
    float fastest = cls->ratios[path][0], slowest = fastest;
    for (unsigned i = 1; i < n && i < TB_CROSSOVER_SAMPLES; i++) {
        fastest = fminf(fastest, cls->ratios[path][i]);
        slowest = fmaxf(slowest, cls->ratios[path][i]);
    }
    const double other = estimate(cls, !path, predicted);
    cls->judged[path] = n >= TB_CROSSOVER_SAMPLES || predicted[path] * fastest > TB_CROSSOVER_CLEAR * other ||
                        TB_CROSSOVER_CLEAR * predicted[path] * slowest < other;
    return cls->judged[path];
}

/*
 * Prices the last trial of the path not taken once both paths are judged:
 * its calls times how much slower than the other its path measured then
 * (signed: a trial that found its path faster cost less than nothing).
 */
static int price_trial(tb_crossover_class *cls, const double seconds[TB_PATHS])
{
    if (cls->trial_priced)
        return 0;
    cls->trial_cost = cls->trial_calls * (seconds[cls->trial_path] - seconds[!cls->trial_path]);
    cls->trial_priced = 1;
    return 1;
}

int tb_crossover_choose(tb_crossover_class *cls, const double predicted[TB_PATHS], int *trial)
{
    const int predicted_best = predicted[TB_PATH_GPU] < predicted[TB_PATH_CPU];
    const unsigned n = ++cls->choices;
    *trial = 1;
    /* The predicted faster path is measured first: a class seen only once costs nothing extra. */
    if (!judged(cls, predicted_best, predicted))
        return predicted_best;
    if (!judged(cls, !predicted_best, predicted)) {
        cls->trial_path = !predicted_best;
        return !predicted_best;
    }
    const double seconds[TB_PATHS] = {estimate(cls, TB_PATH_CPU, predicted), estimate(cls, TB_PATH_GPU, predicted)};
    /* Right after a trial both estimates are fresh; between trials only the path taken's is. */
    const double margin = price_trial(cls, seconds) ? 1.0 - TB_CROSSOVER_HYSTERESIS : 1.0 / TB_CROSSOVER_LEAVE;
    int measured_best = seconds[TB_PATH_GPU] < seconds[TB_PATH_CPU];
    if (cls->settled && measured_best != cls->current && seconds[measured_best] > margin * seconds[cls->current])
        measured_best = cls->current;
    *trial = n - cls->trial_began >= TB_CROSSOVER_MIN_RETRY &&
             cls->trial_cost + cls->shadow_cost <= TB_CROSSOVER_REGRET * cls->since_trial;
    if (!*trial) {
        cls->settled = 1;
        cls->current = measured_best;
        return measured_best;
    }
    /* The other path's old ratios are forgotten: it is measured afresh, this call and the next ones. */
    cls->samples[!measured_best] = 0;
    cls->judged[!measured_best] = 0;
    cls->trial_path = !measured_best;
    cls->trial_began = n;
    cls->trial_calls = 0;
    cls->trial_priced = 0;
    cls->trial_cost = cls->shadow_cost = cls->since_trial = 0.0;
    return !measured_best;
}

static void record(tb_crossover_class *cls, int path, double predicted, double seconds)
{
    if (!(predicted > 0.0))
        return;
    cls->ratios[path][cls->samples[path] % TB_CROSSOVER_SAMPLES] = (float)(seconds / predicted);
    cls->samples[path]++;
    cls->taken[path]++;
}

void tb_crossover_measured(tb_crossover_class *cls, int path, int trial, int failed,
                           const double predicted[TB_PATHS], double started, double seconds)
{
    if (!(seconds >= 0.0))
        return;
    const int in_shadow = path == TB_PATH_GPU && !trial && !failed &&
                          started - cls->cpu_trial_end < TB_CROSSOVER_SHADOW_SECONDS;
    /* Only the first of a path's calls after a pause: calls that far apart, one after another, are its rhythm. */
    const int after_pause = cls->last_end[path] > 0.0 && started - cls->last_end[path] >= TB_CROSSOVER_COLD_SECONDS;
    const int cold = !failed && after_pause && !cls->paused[path];
    cls->paused[path] = after_pause;
    cls->last_end[path] = started + seconds;
    /*
     * A trial's calls count once there is a path to compare with; a call in
     * a trial's shadow that the trial clearly slowed down counts by how much
     * (calls within that are noise, or the estimate's error, thousands of
     * times over in the shadow of a class of microsecond calls).
     */
    if (trial && path == cls->trial_path && estimate(cls, !path, predicted) > 0.0) {
        cls->trial_calls++;
    } else if (in_shadow && !cold) {
        const double usual = estimate(cls, path, predicted);
        if (usual > 0.0 && seconds > TB_CROSSOVER_CLEAR * usual)
            cls->shadow_cost += seconds - usual;
    }
    cls->since_trial += seconds;
    if (!in_shadow && !cold)
        record(cls, path, predicted[path], seconds);
    if (path == TB_PATH_CPU && trial)
        cls->cpu_trial_end = started + seconds;
}

int tb_crossover_describe(const tb_crossover_class *cls, int index, char *text, size_t size)
{
    if (!cls->choices)
        return 0;
    char ratio[TB_PATHS][16]; /* "-" until the path has a median of a few calls since its last reset */
    for (int p = 0; p < TB_PATHS; p++) {
        if (cls->samples[p] >= TB_CROSSOVER_EARLY)
            snprintf(ratio[p], sizeof ratio[p], "x%.2f", median_ratio(cls->ratios[p], held(cls, p)));
        else
            snprintf(ratio[p], sizeof ratio[p], "-");
    }
    const int by_flops = index / TB_CROSSOVER_INTENSITY_CLASSES, by_intensity = index % TB_CROSSOVER_INTENSITY_CLASSES;
    snprintf(text, size, "2^%.1f flops, %d flop/B: cpu %u calls (%s of predicted), gpu %u calls (%s)",
             LOWEST_FLOPS_LOG2 + 0.5 * by_flops, 1 << by_intensity, cls->taken[TB_PATH_CPU], ratio[TB_PATH_CPU],
             cls->taken[TB_PATH_GPU], ratio[TB_PATH_GPU]);
    return 1;
}
