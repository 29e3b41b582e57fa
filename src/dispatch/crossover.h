/*
 * Auto mode's memory of calls near the crossover. The cost model's constants
 * are measured once, in milliseconds, and where it predicts both paths within
 * a factor of TB_CROSSOVER_BAND of each other its errors (the CPU BLAS at
 * 64^3 was calibrated at 31 us and ran in 23) decide the choice. There, calls
 * are timed, and each path's measured over predicted time is kept per class
 * of calls (flops and flops per byte). The choice scales each prediction by
 * the median of its path's last TB_CROSSOVER_SAMPLES ratios; until a path is
 * judged it is tried. Five, because slow calls come in pairs: the first calls
 * after other work (cold caches, the CPU BLAS's threads asleep) took
 * 0.06-0.2 ms at 96^3 on the H100 machine against 0.035 later, and with a
 * median of three two of them made auto mode flip to the slower path for the
 * next 70 calls. A path on trial is judged after TB_CROSSOVER_EARLY calls
 * already when even the fastest of them is TB_CROSSOVER_CLEAR times slower
 * than the other path (or the slowest that much faster): a slow pair cannot
 * make all three slow, and at 4096x4096x16, where the CPU took 2.4 times the
 * GPU's time, the last two calls of a trial only cost.
 *
 * The path not taken is measured afresh (its samples forgotten) from time to
 * time, as first samples can mislead (on the H100 machine the CPU BLAS took
 * 30 us a call at 64^3 in its first calls, 21 us later) and a path gets
 * faster unseen while the other is taken. How often is set by what the last
 * such trial cost: its calls times how much slower its path's median was
 * than the taken path's (a median, as a single cold call below can take 20
 * times the others and would put the next trial off for thousands of calls),
 * and what calls in its shadow (below) that it clearly slowed down took
 * beyond their path's. The next trial waits until that is at most
 * TB_CROSSOVER_REGRET of the seconds the class's calls have taken since, and
 * for TB_CROSSOVER_MIN_RETRY calls, so trials cost a class whose calls come
 * back to back about that share of its time (calls after a pause are not
 * charged, below, so short bursts pay more). Fixed intervals (the 16th,
 * 32nd, ..., 256th call, then every 512th) cost 10.6% in test_crossover's
 * model of 4096x4096x16, where each trial of the CPU slows the next 0.1 s of
 * GPU calls threefold. The path taken is measured at every call but those in
 * the shadow, so its slowing down shows in its median within three calls; it
 * is left then if that is TB_CROSSOVER_LEAVE times the other path's
 * estimate, else at the next trial. A verdict on a path stands until its
 * samples are reset, so its later calls cannot put it back on trial.
 *
 * Each sample is taken in the state the calls before it left: a GPU call
 * right after CPU BLAS calls runs beside the BLAS's threads still spinning
 * (OpenBLAS's do for ~0.1 s), and its host copies with them: 10-15% slower
 * at 64^3 on the H100 machine, 2-3 times at 4096x4096x16. After a trial of
 * the CPU such GPU calls made the GPU, the faster path, look the slower one
 * and turned the class to the CPU (auto at 0.43 of the GPU there). So a GPU
 * call on the path taken within TB_CROSSOVER_SHADOW_SECONDS of the end of
 * the class's own trial of the CPU is not counted: a cost the trial caused,
 * not the path's, and counted as the trial's. Spinning threads left by other
 * calls (other classes, the program's own) are the path's real cost while
 * they last and count, and so do a trial's calls and failed GPU calls.
 * A GPU call that fails counts with its CPU fallback, so its class turns to
 * the CPU.
 *
 * A call that starts TB_CROSSOVER_COLD_SECONDS or more after its path's last
 * call in the class ended measures that path waking up: on the H200 machine
 * the first CPU BLAS call at 128^3 after a pause took 0.26-0.48 ms against
 * 0.043 (OpenBLAS's threads asleep), the first GPU call 0.12-0.14 ms. A
 * stream of calls pays that once, so it is neither counted nor charged to a
 * trial. Where the path's previous call came after a pause too, calls that
 * far apart are the class's rhythm and count (else a trial of such a class
 * never ended). For the same reason the path taken changes after a trial only
 * for one whose estimate is TB_CROSSOVER_HYSTERESIS faster, and between
 * trials, where the other path's estimate is old, only when its own grows to
 * TB_CROSSOVER_LEAVE times that: where the two are about even, the
 * estimates' noise flipped the class from one to the other every few calls,
 * each flip paying a cold call.
 *
 * No locking here: the caller serialises access to a class. Threads that
 * choose at once may all take trial calls, and a call in flight when its
 * path's samples are reset counts as a fresh one; neither costs more than a
 * call per thread.
 */
#ifndef TILEDBLAS_CROSSOVER_H
#define TILEDBLAS_CROSSOVER_H

#include <stddef.h>

#define TB_CROSSOVER_BAND 3.0
#define TB_CROSSOVER_SAMPLES 5
#define TB_CROSSOVER_EARLY 3
#define TB_CROSSOVER_CLEAR 1.5
#define TB_CROSSOVER_MIN_RETRY 16
#define TB_CROSSOVER_REGRET 0.01
/* How long after a CPU BLAS call a GPU call is in its shadow: OpenBLAS's threads spin 2^28 cycles. */
#define TB_CROSSOVER_SHADOW_SECONDS 0.15
#define TB_CROSSOVER_COLD_SECONDS 0.05
#define TB_CROSSOVER_HYSTERESIS 0.03
#define TB_CROSSOVER_LEAVE 1.25

enum { TB_PATH_CPU = 0, TB_PATH_GPU = 1, TB_PATHS = 2 };

typedef struct tb_crossover_class {
    float ratios[TB_PATHS][TB_CROSSOVER_SAMPLES]; /* measured over predicted seconds, a ring per path */
    unsigned samples[TB_PATHS];                   /* calls measured per path since its last reset */
    int judged[TB_PATHS];                         /* the samples since then were enough to choose by */
    unsigned taken[TB_PATHS];                     /* calls measured per path in all */
    unsigned choices;                             /* calls chosen in this class */
    int settled;                                  /* a path was chosen other than on trial: `current` */
    int current;                                  /* the path last chosen other than on trial */
    double last_end[TB_PATHS];                    /* when each path's last call ended (0: none yet) */
    int paused[TB_PATHS];                         /* each path's last call came after a pause */
    unsigned trial_began;                         /* `choices` when the last trial of the path not taken began */
    int trial_path;                               /* the path it measures */
    unsigned trial_calls;                         /* its calls */
    int trial_priced;                             /* trial_cost is set: both paths were judged after it */
    double trial_cost;                            /* seconds its calls took beyond the other path's */
    double shadow_cost;                           /* seconds its shadow's slowed calls took beyond their path */
    double since_trial;                           /* seconds of the class's calls since it began */
    double cpu_trial_end;                         /* when its last trial call on the CPU ended (caller's clock) */
} tb_crossover_class;

/* Classes of calls: half-octaves of flops times octaves of flops per byte moved. */
enum { TB_CROSSOVER_FLOP_CLASSES = 48, TB_CROSSOVER_INTENSITY_CLASSES = 12 };
enum { TB_CROSSOVER_CLASSES = TB_CROSSOVER_FLOP_CLASSES * TB_CROSSOVER_INTENSITY_CLASSES };

/* Whether predictions this close are worth measuring (predicted[TB_PATH_CPU], [TB_PATH_GPU] in seconds). */
int tb_crossover_in_band(const double predicted[TB_PATHS]);
/* The class of a call of `flops` moving `bytes` to and from the GPU: 0 .. TB_CROSSOVER_CLASSES-1. */
int tb_crossover_class_of(double flops, double bytes);
/* The path for a call in the band; *trial tells whether it was taken to be measured. */
int tb_crossover_choose(tb_crossover_class *cls, const double predicted[TB_PATHS], int *trial);
/*
 * A call chosen by tb_crossover_choose on `path` (`trial` as it said) with
 * `predicted` seconds for each path started at `started` (seconds, the
 * caller's clock) and took `seconds`; `failed`: a GPU call that failed (its
 * CPU fallback included).
 */
void tb_crossover_measured(tb_crossover_class *cls, int path, int trial, int failed,
                           const double predicted[TB_PATHS], double started, double seconds);
/* The class's state in a line: its calls per path and their median ratio; 0 if it saw no call. */
int tb_crossover_describe(const tb_crossover_class *cls, int index, char *text, size_t size);

#endif /* TILEDBLAS_CROSSOVER_H */
