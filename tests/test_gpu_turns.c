/*
 * Host only: the GPU path's turns (src/gpu_turns.c) under many threads. Each
 * turn holds for a few microseconds and, in the first round, wakes the next
 * caller early at a random point (or not at all, or twice), as calls do; in
 * the second round never, so only giving the turn wakes anyone. No two
 * threads may hold the turn at once, and every turn must be taken: a lost
 * wake-up hangs the test, which the alarm turns into a failure.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "internal.h"

#define THREADS 8
#define TURNS 4000
#define ALARM_SECONDS 120

static atomic_int holders, overlaps, taken;
static int early_wakes; /* this round's turns wake the next caller early */

static uint64_t next_random(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

static void busy_for(double seconds)
{
    const double until = tb_seconds_now() + seconds;
    while (tb_seconds_now() < until)
        ;
}

static void *caller(void *arg)
{
    uint64_t state = 0x9e3779b97f4a7c15u * (uint64_t)(uintptr_t)arg + 1;
    for (int i = 0; i < TURNS; i++) {
        tb_gpu_turn_take();
        if (atomic_fetch_add(&holders, 1) != 0)
            atomic_fetch_add(&overlaps, 1);
        atomic_fetch_add(&taken, 1);
        const uint64_t r = next_random(&state);
        busy_for((double)(r % 8) * 1e-6);
        const int endings = early_wakes ? (int)(r >> 8 & 3) % 3 : 0; /* none, one or two early wake-ups */
        for (int e = 0; e < endings; e++) {
            tb_gpu_turn_ending();
            busy_for((double)(r >> 16 & 7) * 1e-6);
        }
        atomic_fetch_sub(&holders, 1);
        tb_gpu_turn_give();
        if (r >> 24 & 1)
            busy_for(2e-6); /* now and then a caller comes back a little later */
    }
    return NULL;
}

/* One round of THREADS callers taking TURNS turns each; 0 when every turn was taken alone. */
static int round_of_turns(int with_early_wakes)
{
    early_wakes = with_early_wakes;
    atomic_store(&taken, 0);
    pthread_t threads[THREADS];
    for (uintptr_t t = 0; t < THREADS; t++)
        if (pthread_create(&threads[t], NULL, caller, (void *)t) != 0) {
            fprintf(stderr, "FAIL: pthread_create\n");
            return 1;
        }
    for (int t = 0; t < THREADS; t++)
        pthread_join(threads[t], NULL);
    const int expected = THREADS * TURNS;
    printf("%s early wake-ups: %d turns taken of %d, %d overlapping\n", with_early_wakes ? "with" : "without",
           atomic_load(&taken), expected, atomic_load(&overlaps));
    if (atomic_load(&overlaps) != 0 || atomic_load(&taken) != expected) {
        fprintf(stderr, "FAIL: turns overlapped or were lost\n");
        return 1;
    }
    return 0;
}

int main(void)
{
    alarm(ALARM_SECONDS); /* a hang (a caller never woken) ends the test as a failure */
    if (round_of_turns(1) || round_of_turns(0))
        return 1;
    /* The turn is free again: one more take and give must not wait. */
    tb_gpu_turn_take();
    tb_gpu_turn_give();
    printf("PASS\n");
    return 0;
}
