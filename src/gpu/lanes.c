/*
 * Calls take turns on the lanes of GPU resources (memory.c): each lane is
 * a device workspace, pinned staging and streams of its own, held by one
 * call at a time. Every path runs on the first. While the first is busy,
 * the second takes calls on device operands alone (FP32 math), and calls on
 * host memory that its smaller share of the pinned staging can stage whole,
 * or pipeline as the first lane would (one row block, the widest panels), so
 * that one call's host copies run beside another's transfers and kernels,
 * and one device call's kernel beside the next one's set-up. The kernel's timing takes both. Whoever needs more
 * goes first: while a caller waits for both lanes no other takes one, and
 * while one waits for the first, calls that can run on either leave it the
 * first. A lane freed wakes one caller that can take it, not every waiting
 * one: with dozens of threads waiting, waking all of them for one lane costs
 * more CPU time than a small GPU call takes.
 */
#include <pthread.h>
#include <string.h>

#include "gpu/lanes.h"

static struct {
    pthread_mutex_t lock;
    pthread_cond_t freed[TB_BOTH_LANES + 1]; /* where callers wait, by choice */
    int busy[TB_GPU_LANES];
    int waiting[TB_BOTH_LANES + 1]; /* callers waiting, by choice */
    int closed;                     /* the process is exiting: no caller waits (tb_lanes_close) */
} lanes = {.lock = PTHREAD_MUTEX_INITIALIZER,
           .freed = {PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER}};

_Static_assert(TB_GPU_LANES == 2, "a choice names the first, the second or both");

/* The lane of the calling thread's turn. */
static _Thread_local int current_lane;
/* The thread that closed the lanes (the exiting one): it still waits for them. */
static _Thread_local int closed_here;

int tb_gpu_lane(void)
{
    return current_lane;
}

/* Under lanes.lock: the lane the choice can take now, -1 none. */
static int free_lane_for(tb_lane_choice choice)
{
    if (choice != TB_BOTH_LANES && lanes.waiting[TB_BOTH_LANES])
        return -1;
    switch (choice) {
    case TB_BOTH_LANES:
        return !lanes.busy[0] && !lanes.busy[1] ? 0 : -1;
    case TB_FIRST_LANE:
        return !lanes.busy[0] ? 0 : -1;
    case TB_EITHER_LANE:
        if (!lanes.busy[0] && !lanes.waiting[TB_FIRST_LANE])
            return 0;
        return !lanes.busy[1] ? 1 : -1;
    }
    return -1;
}

/*
 * Under lanes.lock: wakes one waiting caller that can take a lane now, the
 * one free_lane_for puts first. Called whenever a lane is given, and by each
 * caller that took one, to pass on a lane still free: a caller woken that
 * finds its lane taken waits again, and the lane's next giving wakes one more.
 */
static void wake_one(void)
{
    static const tb_lane_choice order[] = {TB_BOTH_LANES, TB_FIRST_LANE, TB_EITHER_LANE};
    for (int i = 0; i < TB_BOTH_LANES + 1; i++)
        if (lanes.waiting[order[i]] && free_lane_for(order[i]) >= 0) {
            pthread_cond_signal(&lanes.freed[order[i]]);
            return;
        }
}

int tb_lane_take(tb_lane_choice choice)
{
    pthread_mutex_lock(&lanes.lock);
    int lane;
    while ((lane = free_lane_for(choice)) < 0) {
        if (lanes.closed && !closed_here) {
            wake_one(); /* a caller that gave up may have held others back (one waiting for both) */
            pthread_mutex_unlock(&lanes.lock);
            return -1;
        }
        lanes.waiting[choice]++; /* counted until it looks again, under the lock */
        pthread_cond_wait(&lanes.freed[choice], &lanes.lock);
        lanes.waiting[choice]--;
    }
    lanes.busy[lane] = 1;
    if (choice == TB_BOTH_LANES)
        lanes.busy[1] = 1;
    wake_one();
    pthread_mutex_unlock(&lanes.lock);
    current_lane = lane;
    return lane;
}

void tb_lane_give(int lane, tb_lane_choice choice)
{
    pthread_mutex_lock(&lanes.lock);
    lanes.busy[lane] = 0;
    if (choice == TB_BOTH_LANES)
        lanes.busy[1] = 0;
    wake_one();
    pthread_mutex_unlock(&lanes.lock);
}

void tb_lanes_close(void)
{
    closed_here = 1;
    pthread_mutex_lock(&lanes.lock);
    lanes.closed = 1;
    for (int i = 0; i < TB_BOTH_LANES + 1; i++)
        pthread_cond_broadcast(&lanes.freed[i]);
    pthread_mutex_unlock(&lanes.lock);
}

void tb_lanes_after_fork(void)
{
    pthread_mutex_init(&lanes.lock, NULL);
    for (int i = 0; i < TB_BOTH_LANES + 1; i++)
        pthread_cond_init(&lanes.freed[i], NULL);
    memset(lanes.busy, 0, sizeof lanes.busy);
    memset(lanes.waiting, 0, sizeof lanes.waiting);
    lanes.closed = 0;
}
