/*
 * Auto mode's memory of calls near the crossover. Where the cost model
 * predicts both paths within a factor of TB_CROSSOVER_BAND of each other, its
 * errors could decide the choice, so there calls are timed, per class of
 * calls (flops and flops per byte), and each path's prediction is scaled by
 * the median of its last measured/predicted ratios. A path not yet judged is
 * tried; the path not taken is tried afresh once what its last trial cost is
 * a small share of the class's time; samples that measure something else
 * than the path (a GPU call in the shadow of the class's own CPU trial, whose
 * threads still spin; the first call after a pause) are left out; and the
 * class changes path only for a clear gain. docs/DESIGN.md ("Near the
 * crossover") gives the measurements behind each rule; test_crossover
 * checks them on simulated timings, `tiledblas-bench --policy` on real ones.
 *
 * No locking here: the caller serialises access to a class. Threads that
 * choose at once may all take trial calls, and a call in flight when its
 * path's samples are reset counts as a fresh one; neither costs more than a
 * call per thread.
 */
#ifndef TILEDBLAS_DISPATCH_CROSSOVER_H
#define TILEDBLAS_DISPATCH_CROSSOVER_H

#include <stddef.h>

/* Predictions closer than this factor are measured. */
#define TB_CROSSOVER_BAND 3.0
/* Ratios kept per path; the median of five outvotes the slow pairs that come after other work. */
#define TB_CROSSOVER_SAMPLES 5
/* A path on trial is judged after this many calls already when all are TB_CROSSOVER_CLEAR apart. */
#define TB_CROSSOVER_EARLY 3
#define TB_CROSSOVER_CLEAR 1.5
/* The path not taken is tried again after at least this many calls, and once its last trial cost
 * at most TB_CROSSOVER_REGRET of the seconds the class's calls have taken since. */
#define TB_CROSSOVER_MIN_RETRY 16
#define TB_CROSSOVER_REGRET 0.01
/* How long after a CPU BLAS call a GPU call is in its shadow: OpenBLAS's threads spin 2^28 cycles. */
#define TB_CROSSOVER_SHADOW_SECONDS 0.15
/* A call this long after its path's last call in the class measures the path waking up. */
#define TB_CROSSOVER_COLD_SECONDS 0.05
/* After a trial the class changes path only for one this much faster; between trials only when its
 * path's estimate grows to TB_CROSSOVER_LEAVE times the other's. */
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

#endif /* TILEDBLAS_DISPATCH_CROSSOVER_H */
