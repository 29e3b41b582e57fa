/*
 * Turns on the lanes of GPU resources (src/gpu/lanes.c), without a GPU:
 *   - eight threads, then 64, taking the first lane, either or both at
 *     random, for a second each: no lane is ever held twice, both are held
 *     by a call that asked for both, the second lane is used, and every wait
 *     ends (a hang fails the test by its timeout);
 *   - order: while a caller waits for both lanes, a later call does not take
 *     the free one (without that rule the test hangs, and its timeout fails
 *     it); a caller waiting for the first lane gets it before a later call
 *     that can run on either (woken together, so this one can pass by luck);
 *   - closing at exit: callers waiting, or that would wait, give up; the
 *     closing thread still waits for its lane.
 * Host only: it runs on CI.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gpu/lanes.h"

static atomic_int holders[TB_GPU_LANES];
static atomic_int failures, turns, second_lane_turns, both_turns;
static atomic_int stop;

static void fail(const char *what)
{
    fprintf(stderr, "FAIL: %s\n", what);
    atomic_fetch_add(&failures, 1);
}

static void sleep_ms(int ms)
{
    nanosleep(&(struct timespec){ms / 1000, ms % 1000 * 1000000L}, NULL);
}

static void hold(int lane)
{
    if (atomic_fetch_add(&holders[lane], 1) != 0)
        fail("a lane held by two calls at once");
}

static void release(int lane)
{
    atomic_fetch_sub(&holders[lane], 1);
}

static void *stress(void *arg)
{
    unsigned seed = (unsigned)(size_t)arg;
    while (!atomic_load(&stop)) {
        /* Calls for both are rare (the kernel's timing), and hold up every other while they wait. */
        const int pick = rand_r(&seed) % 200;
        const tb_lane_choice choice = pick == 0 ? TB_BOTH_LANES : pick < 80 ? TB_FIRST_LANE : TB_EITHER_LANE;
        const int lane = tb_lane_take(choice);
        if (choice != TB_EITHER_LANE && lane != 0)
            fail("a call for the first lane (or both) got the second");
        hold(lane);
        atomic_fetch_add(&turns, 1);
        if (choice == TB_BOTH_LANES)
            hold(1), atomic_fetch_add(&both_turns, 1);
        if (lane == 1)
            atomic_fetch_add(&second_lane_turns, 1);
        nanosleep(&(struct timespec){0, 1000L * (rand_r(&seed) % 100)}, NULL); /* a call: up to 0.1 ms */
        if (choice == TB_BOTH_LANES)
            release(1);
        release(lane);
        tb_lane_give(lane, choice);
    }
    return NULL;
}

/* One waiting caller: its choice, and the lane it got (-1 while waiting). */
typedef struct {
    tb_lane_choice choice;
    atomic_int lane;
    pthread_t thread;
} waiter;

static void *wait_for_lane(void *arg)
{
    waiter *w = arg;
    atomic_store(&w->lane, tb_lane_take(w->choice));
    return NULL;
}

static void start_waiter(waiter *w, tb_lane_choice choice)
{
    w->choice = choice;
    atomic_store(&w->lane, -1);
    if (pthread_create(&w->thread, NULL, wait_for_lane, w)) {
        fprintf(stderr, "cannot start a thread\n");
        exit(1);
    }
    sleep_ms(50); /* it is waiting now */
}

static void check_order(void)
{
    /* Both lanes busy; a caller for the first waits, then one for either. */
    const int first = tb_lane_take(TB_FIRST_LANE), second = tb_lane_take(TB_EITHER_LANE);
    if (first != 0 || second != 1)
        fail("free lanes: the first, then the second");
    waiter for_first, for_either;
    start_waiter(&for_first, TB_FIRST_LANE);
    start_waiter(&for_either, TB_EITHER_LANE);
    tb_lane_give(0, TB_FIRST_LANE);
    sleep_ms(50);
    if (atomic_load(&for_first.lane) != 0 || atomic_load(&for_either.lane) != -1)
        fail("the caller waiting for the first lane did not get it before a later call for either");
    tb_lane_give(1, TB_EITHER_LANE);
    pthread_join(for_either.thread, NULL);
    pthread_join(for_first.thread, NULL);
    if (atomic_load(&for_either.lane) != 1)
        fail("the call for either did not get the second lane once free");
    tb_lane_give(0, TB_FIRST_LANE);
    tb_lane_give(1, TB_EITHER_LANE);

    /* The first lane busy; a caller waits for both: a later call for either leaves the second alone. */
    tb_lane_take(TB_FIRST_LANE);
    waiter for_both, after_both;
    start_waiter(&for_both, TB_BOTH_LANES);
    start_waiter(&after_both, TB_EITHER_LANE);
    if (atomic_load(&after_both.lane) != -1)
        fail("a call took the free second lane while another waited for both");
    tb_lane_give(0, TB_FIRST_LANE);
    pthread_join(for_both.thread, NULL);
    sleep_ms(50);
    if (atomic_load(&after_both.lane) != -1)
        fail("a call took a lane while both were held");
    tb_lane_give(0, TB_BOTH_LANES);
    pthread_join(after_both.thread, NULL);
    tb_lane_give(atomic_load(&after_both.lane), TB_EITHER_LANE);

    /* Both lanes freed at once: two callers for either get one each (a lane freed wakes one caller,
     * who passes the other on). */
    tb_lane_take(TB_BOTH_LANES);
    waiter callers[2];
    start_waiter(&callers[0], TB_EITHER_LANE);
    start_waiter(&callers[1], TB_EITHER_LANE);
    tb_lane_give(0, TB_BOTH_LANES);
    sleep_ms(50);
    if (atomic_load(&callers[0].lane) < 0 || atomic_load(&callers[1].lane) < 0)
        fail("of two callers for either, one still waits with both lanes freed");
    /* Each caller's lane given back once it has one, so that a caller left waiting still ends. */
    int joined[2] = {0, 0};
    for (int ended = 0; ended < 2;)
        for (int i = 0; i < 2; i++)
            if (!joined[i] && atomic_load(&callers[i].lane) >= 0) {
                pthread_join(callers[i].thread, NULL);
                tb_lane_give(atomic_load(&callers[i].lane), TB_EITHER_LANE);
                joined[i] = 1;
                ended++;
            }
}

static void *give_first_lane_later(void *unused)
{
    (void)unused;
    sleep_ms(50);
    tb_lane_give(0, TB_FIRST_LANE);
    return NULL;
}

/* Closed (at exit, by the exiting thread): a caller waiting for a lane gives up, so does a later one that
 * would wait; a free lane is still taken; the thread that closed them still waits for one. */
static void check_close(void)
{
    tb_lane_take(TB_FIRST_LANE);
    tb_lane_take(TB_EITHER_LANE);
    waiter for_first, for_either;
    start_waiter(&for_first, TB_FIRST_LANE);
    tb_lanes_close();
    pthread_join(for_first.thread, NULL);
    if (atomic_load(&for_first.lane) != -1)
        fail("a caller waiting for a lane when the lanes closed did not give up");
    start_waiter(&for_either, TB_EITHER_LANE);
    pthread_join(for_either.thread, NULL);
    if (atomic_load(&for_either.lane) != -1)
        fail("a caller that would wait for a lane after they closed did not give up");
    tb_lane_give(1, TB_EITHER_LANE);
    start_waiter(&for_either, TB_EITHER_LANE);
    pthread_join(for_either.thread, NULL);
    if (atomic_load(&for_either.lane) != 1)
        fail("a free lane was not taken after the lanes closed");
    tb_lane_give(1, TB_EITHER_LANE);
    /* The callers that gave up left no count behind: the first lane, freed, goes to a caller for either. */
    tb_lane_give(0, TB_FIRST_LANE);
    start_waiter(&for_either, TB_EITHER_LANE);
    pthread_join(for_either.thread, NULL);
    if (atomic_load(&for_either.lane) != 0)
        fail("callers that gave up left a wait counted: a caller for either did not get the free first lane");
    pthread_t giver;
    if (pthread_create(&giver, NULL, give_first_lane_later, NULL)) {
        fprintf(stderr, "cannot start a thread\n");
        exit(1);
    }
    if (tb_lane_take(TB_FIRST_LANE) != 0)
        fail("the thread that closed the lanes did not wait for one");
    pthread_join(giver, NULL);
    tb_lane_give(0, TB_FIRST_LANE);
}

/* `count` threads taking turns for a second. */
static void stress_with(int count)
{
    enum { MAX_THREADS = 64 };
    pthread_t threads[MAX_THREADS];
    atomic_store(&stop, 0);
    atomic_store(&turns, 0), atomic_store(&second_lane_turns, 0), atomic_store(&both_turns, 0);
    for (int i = 0; i < count && i < MAX_THREADS; i++)
        if (pthread_create(&threads[i], NULL, stress, (void *)(size_t)(i + 1))) {
            fprintf(stderr, "cannot start a thread\n");
            exit(1);
        }
    sleep_ms(1000);
    atomic_store(&stop, 1);
    for (int i = 0; i < count && i < MAX_THREADS; i++)
        pthread_join(threads[i], NULL);
    printf("lanes, %d threads: %d turns, %d on the second, %d on both\n", count, atomic_load(&turns),
           atomic_load(&second_lane_turns), atomic_load(&both_turns));
    if (!atomic_load(&second_lane_turns))
        fail("the second lane never used");
    if (!atomic_load(&both_turns))
        fail("no call for both lanes got them");
}

int main(void)
{
    stress_with(8);
    stress_with(64);
    check_order();
    check_close();
    if (atomic_load(&failures))
        return 1;
    printf("lanes: waiting order kept, closing kept\n");
    return 0;
}
