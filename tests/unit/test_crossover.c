/*
 * Auto mode's corrections near the crossover (src/dispatch/crossover.c),
 * driven with simulated timings: a class whose cost model picks the wrong path
 * (as the H100 machine's did at 64^3: CPU predicted 31 us, GPU 24; measured 23
 * and 28) must settle on the right one after its trials, keep it through one
 * outlier, through slow pairs of calls and through GPU calls slowed by the CPU
 * BLAS's spinning threads after its trials, follow a path that slows down at
 * once and one that speeds up by the next retry, judge a trial early when it
 * is far from the other path, and lose about TB_CROSSOVER_REGRET of its time
 * to trials of the slower path.
 */
#include <stdio.h>
#include <string.h>

#include "dispatch/crossover.h"

static int failures;

#define CHECK(cond, ...)                          \
    do {                                          \
        if (!(cond)) {                            \
            printf("FAIL %s:%d: ", __FILE__, __LINE__); \
            printf(__VA_ARGS__);                  \
            printf("\n");                         \
            failures++;                           \
        }                                         \
    } while (0)

/* Deterministic noise within +-10%. */
static double jitter(unsigned i)
{
    const unsigned h = (i * 2654435761u) >> 16;
    return 0.9 + 0.2 * (double)(h % 1000) / 1000.0;
}

typedef struct {
    unsigned calls[TB_PATHS], trials;
    double seconds; /* all calls */
} tally;

/* The simulated clock: calls follow each other back to back. */
static double now = 1.0;

/* One call chosen in `cls` that takes seconds_on[path]; returns its path. */
static int step(tb_crossover_class *cls, const double predicted[TB_PATHS], const double seconds_on[TB_PATHS],
                tally *t)
{
    int trial;
    const int path = tb_crossover_choose(cls, predicted, &trial);
    tb_crossover_measured(cls, path, trial, 0, predicted, now, seconds_on[path]);
    now += seconds_on[path];
    if (t) {
        t->calls[path]++;
        t->trials += (unsigned)trial;
        t->seconds += seconds_on[path];
    }
    return path;
}

/* `calls` choices in `cls` where the paths really take true_s[path] seconds, within +-10%; `outlier_at`:
 * that call takes 100 times as long (0: none). Returns the path of the last call. */
static int run(tb_crossover_class *cls, const double predicted[TB_PATHS], const double true_s[TB_PATHS],
               unsigned calls, unsigned outlier_at, tally *t)
{
    static unsigned noise;
    int path = -1;
    for (unsigned i = 1; i <= calls; i++) {
        const double scale = jitter(++noise) * (i == outlier_at ? 100.0 : 1.0);
        path = step(cls, predicted, (const double[]){true_s[0] * scale, true_s[1] * scale}, t);
    }
    return path;
}

static void test_band(void)
{
    CHECK(tb_crossover_in_band((const double[]){31e-6, 24e-6}), "31 us against 24 us is close");
    CHECK(tb_crossover_in_band((const double[]){24e-6, 31e-6}), "24 us against 31 us is close");
    CHECK(!tb_crossover_in_band((const double[]){1e-3, 1e-4}), "a factor of 10 is not close");
    CHECK(!tb_crossover_in_band((const double[]){1e-4, 1e-3}), "a factor of 10 is not close");
    CHECK(!tb_crossover_in_band((const double[]){0.0, 1e-5}), "no prediction is not close");
}

static void test_classes(void)
{
    const double cube64 = 2.0 * 64 * 64 * 64, cube64_bytes = 4.0 * 4 * 64 * 64;
    const int c64 = tb_crossover_class_of(cube64, cube64_bytes);
    CHECK(c64 >= 0 && c64 < TB_CROSSOVER_CLASSES, "64^3 in range (%d)", c64);
    CHECK(tb_crossover_class_of(2.0 * cube64, 2.0 * cube64_bytes) != c64, "twice the flops: another class");
    CHECK(tb_crossover_class_of(1.2 * cube64, 1.2 * cube64_bytes) == c64, "20%% more: the same class");
    /* 4096 x 4096 x 16 moves far more bytes per flop than the cube of the same flops. */
    const double skinny = 2.0 * 4096 * 4096 * 16, skinny_bytes = 4.0 * (2 * 4096 * 16 + 4096.0 * 4096);
    const double side = 645, cube_bytes = 4.0 * 3 * side * side;
    CHECK(tb_crossover_class_of(skinny, skinny_bytes) != tb_crossover_class_of(skinny, cube_bytes),
          "a skinny shape and a cube of its flops differ");
    for (double f = 1.0; f < 1e20; f *= 7.0) {
        const int c = tb_crossover_class_of(f, f / 3.0), d = tb_crossover_class_of(f, 0.0);
        CHECK(c >= 0 && c < TB_CROSSOVER_CLASSES && d >= 0 && d < TB_CROSSOVER_CLASSES,
              "flops %g: classes %d, %d in range", f, c, d);
    }
}

/* As on the H100 machine at 64^3: CPU predicted 31 us, GPU 24; measured 23 and 28. */
static void test_settles_on_the_faster(void)
{
    const double predicted[TB_PATHS] = {[TB_PATH_CPU] = 31e-6, [TB_PATH_GPU] = 24e-6};
    const double true_s[TB_PATHS] = {[TB_PATH_CPU] = 23e-6, [TB_PATH_GPU] = 28e-6};
    tb_crossover_class cls = {0};
    /* The first calls follow the model (the GPU) while it is measured, then the CPU is. */
    for (int i = 0; i < TB_CROSSOVER_SAMPLES; i++) {
        int trial;
        const int path = tb_crossover_choose(&cls, predicted, &trial);
        CHECK(path == TB_PATH_GPU && trial, "call %d: the predicted path, on trial", i);
        tb_crossover_measured(&cls, path, trial, 0, predicted, now, true_s[path]);
        now += true_s[path];
    }
    int trial;
    const int path = tb_crossover_choose(&cls, predicted, &trial);
    CHECK(path == TB_PATH_CPU && trial, "then the other path, on trial");
    tb_crossover_measured(&cls, path, trial, 0, predicted, now, true_s[path]);
    now += true_s[path];

    tally t = {{0}, 0, 0.0};
    const unsigned calls = 10000;
    CHECK(run(&cls, predicted, true_s, calls, 100, &t) == TB_PATH_CPU, "settles on the CPU");
    /* The GPU's retries cost about TB_CROSSOVER_REGRET of the time (one trial more at most, and the noise). */
    const double lost = t.calls[TB_PATH_GPU] * (true_s[TB_PATH_GPU] - true_s[TB_PATH_CPU]);
    const double allowed = 1.25 * TB_CROSSOVER_REGRET * t.seconds +
                           TB_CROSSOVER_SAMPLES * 1.1 * (true_s[TB_PATH_GPU] - true_s[TB_PATH_CPU]);
    CHECK(lost <= allowed, "%u of %u calls on the slower GPU: %.3g s lost, at most %.3g", t.calls[TB_PATH_GPU],
          calls, lost, allowed);
    CHECK(t.calls[TB_PATH_GPU] >= 10 * TB_CROSSOVER_SAMPLES, "the GPU is retried (%u calls)",
          t.calls[TB_PATH_GPU]);

    /* The exit summary's line counts every measured call (the trials above too). */
    char text[160], counts[64];
    snprintf(counts, sizeof counts, "cpu %u calls", t.calls[TB_PATH_CPU] + 1);
    CHECK(tb_crossover_describe(&cls, 0, text, sizeof text) && strstr(text, counts), "summary \"%s\" has \"%s\"",
          text, counts);
    snprintf(counts, sizeof counts, "gpu %u calls", t.calls[TB_PATH_GPU] + TB_CROSSOVER_SAMPLES);
    CHECK(strstr(text, counts), "summary \"%s\" has \"%s\"", text, counts);
    CHECK(!tb_crossover_describe(&(tb_crossover_class){0}, 0, text, sizeof text), "an unused class: no line");
}

/* A path on trial far from the other is judged by TB_CROSSOVER_EARLY calls; one near it by all its samples. */
static void test_early_verdict(void)
{
    const double predicted[TB_PATHS] = {[TB_PATH_CPU] = 2e-3, [TB_PATH_GPU] = 1e-3};
    const struct {
        double cpu_s;
        unsigned trial_calls;
        int taken;
    } cases[] = {
        {2.4e-3, TB_CROSSOVER_EARLY, TB_PATH_GPU},   /* clearly slower */
        {1.3e-3, TB_CROSSOVER_SAMPLES, TB_PATH_GPU}, /* slower, not clearly */
        {0.9e-3, TB_CROSSOVER_SAMPLES, TB_PATH_CPU}, /* faster, not clearly */
        {0.5e-3, TB_CROSSOVER_EARLY, TB_PATH_CPU},   /* clearly faster */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        tb_crossover_class cls = {0};
        tally t = {{0}, 0, 0.0};
        const double seconds_on[TB_PATHS] = {[TB_PATH_CPU] = cases[c].cpu_s, [TB_PATH_GPU] = 1e-3};
        for (int i = 0; i < TB_CROSSOVER_SAMPLES; i++)
            step(&cls, predicted, seconds_on, &t);
        unsigned cpu_trials = 0;
        int path, trial = 1;
        while ((path = tb_crossover_choose(&cls, predicted, &trial)) == TB_PATH_CPU && trial && cpu_trials < 10) {
            tb_crossover_measured(&cls, path, trial, 0, predicted, now, seconds_on[path]);
            now += seconds_on[path];
            cpu_trials++;
        }
        CHECK(cpu_trials == cases[c].trial_calls && path == cases[c].taken && !trial,
              "CPU at %.1f ms against 1 ms: %u trial calls (expected %u), then the %s", cases[c].cpu_s * 1e3,
              cpu_trials, cases[c].trial_calls, path == TB_PATH_CPU ? "CPU" : "GPU");
    }
}

/* As on the H100 machine at 64^3: the CPU path's first calls took 30 us, the later ones 21; the
 * GPU path's 27. The first retry of the CPU must find it faster and keep it. */
static void test_first_samples_not_final(void)
{
    const double predicted[TB_PATHS] = {[TB_PATH_CPU] = 20e-6, [TB_PATH_GPU] = 23e-6};
    tb_crossover_class cls = {0};
    tally t = {{0}, 0, 0.0};
    int path = -1;
    /* The GPU, faster than the CPU's first calls, is taken; the first retry of the CPU comes at the
     * fewest calls apart, as that trial cost nothing. */
    for (unsigned i = 0; i < 3 * TB_CROSSOVER_MIN_RETRY; i++)
        path = step(&cls, predicted,
                    (const double[]){t.calls[TB_PATH_CPU] < TB_CROSSOVER_SAMPLES ? 30e-6 : 21e-6, 27e-6}, &t);
    CHECK(path == TB_PATH_CPU, "the CPU, faster once warm, is found by the first retry");
    CHECK(t.calls[TB_PATH_GPU] <= TB_CROSSOVER_MIN_RETRY + TB_CROSSOVER_SAMPLES, "%u calls on the slower GPU",
          t.calls[TB_PATH_GPU]);
}

static void test_follows_changes(void)
{
    const double predicted[TB_PATHS] = {[TB_PATH_CPU] = 20e-6, [TB_PATH_GPU] = 30e-6};
    double true_s[TB_PATHS] = {[TB_PATH_CPU] = 20e-6, [TB_PATH_GPU] = 30e-6};
    tb_crossover_class cls = {0};
    tally t = {{0}, 0, 0.0};
    CHECK(run(&cls, predicted, true_s, 50, 0, &t) == TB_PATH_CPU, "the model was right: the CPU");

    /* The CPUs get busy: the CPU path triples. A majority of slow calls moves its median. */
    true_s[TB_PATH_CPU] = 60e-6;
    tally after = {{0}, 0, 0.0};
    CHECK(run(&cls, predicted, true_s, 10, 0, &after) == TB_PATH_GPU, "a slower CPU path is left");
    CHECK(after.calls[TB_PATH_CPU] <= TB_CROSSOVER_SAMPLES / 2 + 1, "within %d calls (%u on the CPU)",
          TB_CROSSOVER_SAMPLES / 2 + 1, after.calls[TB_PATH_CPU]);

    /* They get free again: seen at the next retry, once the class has spent the last trial's cost
     * 1/TB_CROSSOVER_REGRET times (on the GPU, from here on), and judged within its samples. */
    true_s[TB_PATH_CPU] = 20e-6;
    const double wait = (cls.trial_cost + cls.shadow_cost) / TB_CROSSOVER_REGRET - cls.since_trial;
    const unsigned most = (unsigned)(wait > 0.0 ? wait / (0.9 * true_s[TB_PATH_GPU]) : 0.0) +
                          TB_CROSSOVER_MIN_RETRY + TB_CROSSOVER_SAMPLES + 1;
    unsigned calls = 0;
    int trial = 1;
    for (int path = TB_PATH_GPU; (path != TB_PATH_CPU || trial) && calls < 100000; calls++) {
        path = tb_crossover_choose(&cls, predicted, &trial);
        tb_crossover_measured(&cls, path, trial, 0, predicted, now, true_s[path]);
        now += true_s[path];
    }
    CHECK(calls <= most, "a faster CPU path is taken again after %u calls (at most %u)", calls, most);
}

/*
 * As on the H100 machine at 96^3 (the policy benchmark, other variants' calls
 * in between): the GPU path takes 33 us, but every tenth call and the next
 * take 60 and 160 (cold after other work); the CPU path 42. Slow pairs must
 * not turn the class to the CPU between retries.
 */
static void test_slow_pairs_kept(void)
{
    const double predicted[TB_PATHS] = {[TB_PATH_CPU] = 40e-6, [TB_PATH_GPU] = 30e-6};
    tb_crossover_class cls = {0};
    tally t = {{0}, 0, 0.0};
    const unsigned calls = 512;
    for (unsigned i = 0; i < calls; i++) {
        const double gpu_s = i % 10 == 0 ? 60e-6 : i % 10 == 1 ? 160e-6 : 33e-6;
        step(&cls, predicted, (const double[]){[TB_PATH_CPU] = 42e-6, [TB_PATH_GPU] = gpu_s}, &t);
    }
    CHECK(t.calls[TB_PATH_CPU] <= t.trials, "%u calls on the slower CPU, %u of them trials", t.calls[TB_PATH_CPU],
          t.trials);
    CHECK(t.calls[TB_PATH_GPU] >= calls - 8 * TB_CROSSOVER_SAMPLES, "%u of %u calls on the GPU",
          t.calls[TB_PATH_GPU], calls);
}

/*
 * As on the H100 machine at 4096x4096x16: the GPU takes 1.5 ms, but 4.5 while
 * OpenBLAS's threads spin (0.1 s after its calls), the CPU 3.6. The CPU's
 * trials must not turn the class to it.
 */
static void shadowed_class(tb_crossover_class *cls, const double predicted[TB_PATHS], unsigned calls, tally *t)
{
    double cpu_end = 0.0;
    for (unsigned i = 0; i < calls; i++) {
        const int path = step(cls, predicted, (const double[]){3.6e-3, now - cpu_end < 0.1 ? 4.5e-3 : 1.5e-3}, t);
        cpu_end = path == TB_PATH_CPU ? now : cpu_end;
    }
}

static void test_shadow_of_cpu_trials(void)
{
    const double predicted[TB_PATHS] = {[TB_PATH_CPU] = 2.2e-3, [TB_PATH_GPU] = 1.95e-3};
    tb_crossover_class cls = {0};
    tally t = {{0}, 0, 0.0};
    shadowed_class(&cls, predicted, 512, &t);
    CHECK(t.calls[TB_PATH_CPU] == TB_CROSSOVER_EARLY, "%u of 512 calls on the slower CPU: its first trial, judged "
          "early", t.calls[TB_PATH_CPU]);

    /*
     * Over 20000 calls (about 30 s) the CPU's retries and the slow GPU calls
     * after them cost about TB_CROSSOVER_REGRET of the time; retries at fixed
     * counts (16, 32, ..., 256 calls, then every 512) would lose 10.6% here.
     */
    tally longer = {{0}, 0, 0.0};
    shadowed_class(&cls, predicted, 20000, &longer);
    const double ideal = 20000 * 1.5e-3, lost = longer.seconds - ideal;
    CHECK(lost <= 1.5 * TB_CROSSOVER_REGRET * ideal && longer.calls[TB_PATH_CPU] > 0,
          "%u CPU calls in 20000 lost %.3f s of %.1f (at most %.3f)", longer.calls[TB_PATH_CPU], lost, ideal,
          1.5 * TB_CROSSOVER_REGRET * ideal);
}

/*
 * As the policy benchmark runs 128^3 on the H100 machine, in bursts of two
 * calls 0.3 s apart: the CPU takes 21 us a call, 400 the first of a burst
 * (OpenBLAS's threads asleep); the GPU 27, 130 the first. The warm paths
 * decide: the CPU, after the first trials.
 */
static void test_cold_calls(void)
{
    const double predicted[TB_PATHS] = {[TB_PATH_CPU] = 25e-6, [TB_PATH_GPU] = 22e-6};
    tb_crossover_class cls = {0};
    unsigned cpu_settled = 0, settled = 0;
    for (unsigned burst = 0; burst < 200; burst++) {
        now += 0.3;
        for (int call = 0; call < 2; call++) {
            int trial;
            const int path = tb_crossover_choose(&cls, predicted, &trial);
            const double seconds = path == TB_PATH_CPU ? (call ? 21e-6 : 400e-6) : (call ? 27e-6 : 130e-6);
            tb_crossover_measured(&cls, path, trial, 0, predicted, now, seconds);
            now += seconds;
            if (burst >= 100 && !trial) {
                settled++;
                cpu_settled += path == TB_PATH_CPU;
            }
        }
    }
    /* The rest are trials of the GPU: half their calls are cold and not counted, so each takes a few bursts. */
    CHECK(cpu_settled == settled && settled >= 100, "bursts 100-199: %u of %u calls chosen (not trials) on the CPU",
          cpu_settled, settled);
}

/*
 * As on the H100 machine at 64^3 with OpenBLAS's threads parked: the GPU
 * takes 27 us; the CPU 21, but its first call in the class 400 and the next
 * four 30. The first trial finds the CPU slower; its cold call must not put
 * off the next trial, which finds the CPU faster, beyond 100 calls.
 */
static void test_cold_trial_call(void)
{
    const double predicted[TB_PATHS] = {[TB_PATH_CPU] = 25e-6, [TB_PATH_GPU] = 22e-6};
    tb_crossover_class cls = {0};
    tally t = {{0}, 0, 0.0};
    int path = -1;
    for (unsigned i = 0; i < 100; i++) {
        const unsigned cpu_calls = t.calls[TB_PATH_CPU];
        path = step(&cls, predicted, (const double[]){cpu_calls == 0 ? 400e-6 : cpu_calls < 5 ? 30e-6 : 21e-6, 27e-6},
                    &t);
    }
    CHECK(path == TB_PATH_CPU, "the CPU is taken within 100 calls (%u on the GPU)", t.calls[TB_PATH_GPU]);
}

/*
 * A program whose calls of a class come 0.06 s apart, after 300 back to back
 * (CPU 20 us, GPU 40): its calls are all after a pause. A trial of the GPU
 * must still end, and the class stay on the CPU: calls that far apart, one
 * after another, are the program's rhythm, and a trial that discounted every
 * call after a pause would never end.
 */
static void test_sparse_calls(void)
{
    const double predicted[TB_PATHS] = {[TB_PATH_CPU] = 20e-6, [TB_PATH_GPU] = 40e-6};
    const double seconds_on[TB_PATHS] = {[TB_PATH_CPU] = 20e-6, [TB_PATH_GPU] = 40e-6};
    tb_crossover_class cls = {0};
    for (int i = 0; i < 300; i++)
        step(&cls, predicted, seconds_on, NULL);
    tally t = {{0}, 0, 0.0};
    for (int i = 0; i < 2000; i++) {
        now += 0.06;
        step(&cls, predicted, seconds_on, &t);
    }
    CHECK(t.calls[TB_PATH_GPU] <= 50, "%u of 2000 calls 0.06 s apart on the slower GPU", t.calls[TB_PATH_GPU]);
}

/*
 * A path judged early (three calls clearly faster) and taken stays judged as
 * its later calls come in less clearly apart: no trial of the path taken.
 */
static void test_no_trial_of_the_path_taken(void)
{
    const double predicted[TB_PATHS] = {[TB_PATH_CPU] = 2e-3, [TB_PATH_GPU] = 1e-3};
    tb_crossover_class cls = {0};
    unsigned cpu_calls = 0, wrong = 0;
    for (int i = 0; i < 40; i++) {
        int trial;
        const int path = tb_crossover_choose(&cls, predicted, &trial);
        wrong += trial && cls.settled && path == cls.current;
        const double seconds = path == TB_PATH_GPU ? 1e-3 : cpu_calls++ < 3 ? 0.5e-3 : 0.8e-3;
        tb_crossover_measured(&cls, path, trial, 0, predicted, now, seconds);
        now += seconds;
    }
    CHECK(wrong == 0, "%u trial calls on the path taken", wrong);
}

/* Paths about even (20 and 20.4 us, each within +-10%): the class keeps to one rather than flip with the noise. */
static void test_even_paths_kept(void)
{
    const double predicted[TB_PATHS] = {[TB_PATH_CPU] = 20e-6, [TB_PATH_GPU] = 20e-6};
    tb_crossover_class cls = {0};
    unsigned switches = 0, trials = 0, noise = 7;
    int last = -1;
    for (unsigned i = 0; i < 5000; i++) {
        int trial;
        const int path = tb_crossover_choose(&cls, predicted, &trial);
        const double seconds = (path == TB_PATH_CPU ? 20e-6 : 20.4e-6) * jitter(++noise);
        tb_crossover_measured(&cls, path, trial, 0, predicted, now, seconds);
        now += seconds;
        trials += (unsigned)trial;
        if (!trial) {
            switches += last >= 0 && path != last;
            last = path;
        }
    }
    CHECK(switches <= 10, "%u switches of the path chosen in 5000 calls (%u trial calls)", switches, trials);
}

/*
 * The shadow is the class's own CPU trials' alone: a GPU that slows down for
 * good (to 12 ms, the CPU 3.6) is left within three calls once out of it,
 * and a failed GPU call counts even in it.
 */
static void test_shadow_hides_no_slowdown(void)
{
    const double predicted[TB_PATHS] = {[TB_PATH_CPU] = 2.2e-3, [TB_PATH_GPU] = 1.95e-3};
    tb_crossover_class cls = {0};
    tally t = {{0}, 0, 0.0};
    shadowed_class(&cls, predicted, 340, &t); /* past the first trial and its shadow */
    unsigned on_gpu = 0;
    int trial, path = TB_PATH_GPU;
    for (; on_gpu < 10 && (path = tb_crossover_choose(&cls, predicted, &trial)) == TB_PATH_GPU; on_gpu++) {
        tb_crossover_measured(&cls, path, trial, 0, predicted, now, 12e-3);
        now += 12e-3;
    }
    CHECK(path == TB_PATH_CPU && on_gpu <= TB_CROSSOVER_SAMPLES / 2 + 1, "a slower GPU is left after %u calls",
          on_gpu);

    const double two_ms[TB_PATHS] = {2e-3, 2e-3};
    tb_crossover_class fresh = {0};
    tb_crossover_measured(&fresh, TB_PATH_CPU, 1, 0, two_ms, 1.0, 3e-3); /* a CPU trial ending at 1.003 s */
    tb_crossover_measured(&fresh, TB_PATH_GPU, 0, 0, two_ms, 1.01, 2e-3);
    CHECK(fresh.samples[TB_PATH_GPU] == 0, "a GPU call in the trial's shadow is not counted");
    tb_crossover_measured(&fresh, TB_PATH_GPU, 0, 1, two_ms, 1.02, 9e-3);
    tb_crossover_measured(&fresh, TB_PATH_GPU, 1, 0, two_ms, 1.03, 2e-3);
    for (double at = 1.07; at < 1.003 + TB_CROSSOVER_SHADOW_SECONDS; at += 0.04) /* in the shadow, not cold */
        tb_crossover_measured(&fresh, TB_PATH_GPU, 0, 0, two_ms, at, 2e-3);
    CHECK(fresh.samples[TB_PATH_GPU] == 2, "a failed GPU call and a GPU trial count (%u)", fresh.samples[TB_PATH_GPU]);
    tb_crossover_measured(&fresh, TB_PATH_GPU, 0, 0, two_ms, 1.003 + TB_CROSSOVER_SHADOW_SECONDS + 0.01, 2e-3);
    CHECK(fresh.samples[TB_PATH_GPU] == 3, "and a call past the shadow (%u)", fresh.samples[TB_PATH_GPU]);
    tb_crossover_measured(&fresh, TB_PATH_GPU, 0, 0, two_ms, 1.5, 20e-3);
    CHECK(fresh.samples[TB_PATH_GPU] == 3, "a call after a pause is not counted (%u)", fresh.samples[TB_PATH_GPU]);
    tb_crossover_measured(&fresh, TB_PATH_GPU, 0, 1, two_ms, 2.0, 20e-3);
    CHECK(fresh.samples[TB_PATH_GPU] == 4, "unless it failed (%u)", fresh.samples[TB_PATH_GPU]);
}

int main(void)
{
    test_band();
    test_classes();
    test_settles_on_the_faster();
    test_early_verdict();
    test_first_samples_not_final();
    test_follows_changes();
    test_slow_pairs_kept();
    test_shadow_of_cpu_trials();
    test_shadow_hides_no_slowdown();
    test_cold_calls();
    test_cold_trial_call();
    test_sparse_calls();
    test_no_trial_of_the_path_taken();
    test_even_paths_kept();
    if (failures) {
        printf("%d checks failed\n", failures);
        return 1;
    }
    printf("crossover: all checks passed\n");
    return 0;
}
