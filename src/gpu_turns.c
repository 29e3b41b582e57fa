/*
 * Calls take turns on the device, its workspace and the pinned staging.
 *
 * A mutex hands the turn to a sleeping thread, and waking one costs 50-100
 * microseconds on a virtual machine, while the copy threads, idle meanwhile,
 * fall asleep too: four threads calling 1024^3 (0.46 ms a call) at once ran
 * at 0.67-0.88 of the same calls made one at a time. So a call that has
 * queued its last work on the GPU wakes the next caller early
 * (tb_gpu_turn_ending), and that one waits for the turn awake, yielding its
 * CPU to the copy threads still at work.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "internal.h"

/* A caller woken early waits this long at most before sleeping again; a call's end takes far less. */
#define EARLY_WAIT_SECONDS 0.02

static struct {
    pthread_mutex_t lock; /* guards the counts below and sleeping on `wake` */
    pthread_cond_t wake;
    atomic_int busy; /* a call has the turn; read unlocked by callers waiting awake */
    int sleeping;    /* callers asleep on `wake` */
    int signalled;   /* of them, woken and not yet up */
    int awake;       /* callers waiting awake */
} turns = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

/* Wakes one sleeping caller unless one is up or on its way already (turns.lock held). */
static void wake_next(void)
{
    if (turns.sleeping > turns.signalled && turns.signalled + turns.awake == 0) {
        turns.signalled++;
        pthread_cond_signal(&turns.wake);
    }
}

/* Waits awake until the turn looks free or EARLY_WAIT_SECONDS pass. */
static void wait_awake(void)
{
    const double start = tb_seconds_now();
    for (unsigned i = 1; atomic_load(&turns.busy); i++) {
        if (i % 16 == 0 && tb_seconds_now() - start > EARLY_WAIT_SECONDS)
            return;
        sched_yield();
    }
}

void tb_gpu_turn_take(void)
{
    pthread_mutex_lock(&turns.lock);
    while (atomic_load(&turns.busy)) {
        turns.sleeping++;
        pthread_cond_wait(&turns.wake, &turns.lock);
        turns.sleeping--;
        if (turns.signalled > 0)
            turns.signalled--;
        if (atomic_load(&turns.busy)) { /* woken early (or spuriously) */
            turns.awake++;
            pthread_mutex_unlock(&turns.lock);
            wait_awake();
            pthread_mutex_lock(&turns.lock);
            turns.awake--;
        }
    }
    atomic_store(&turns.busy, 1);
    pthread_mutex_unlock(&turns.lock);
}

void tb_gpu_turn_ending(void)
{
    pthread_mutex_lock(&turns.lock);
    wake_next();
    pthread_mutex_unlock(&turns.lock);
}

void tb_gpu_turn_give(void)
{
    pthread_mutex_lock(&turns.lock);
    atomic_store(&turns.busy, 0);
    wake_next();
    pthread_mutex_unlock(&turns.lock);
}

void tb_gpu_turns_after_fork(void)
{
    pthread_mutex_init(&turns.lock, NULL);
    pthread_cond_init(&turns.wake, NULL);
    atomic_store(&turns.busy, 0);
    turns.sleeping = turns.signalled = turns.awake = 0;
}
