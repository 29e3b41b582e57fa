/*
 * Lanes of GPU resources (workspace, pinned staging, the direct, staged and
 * pipelined paths' streams and events) that calls hold in turn (lanes.c).
 */
#ifndef TILEDBLAS_GPU_LANES_H
#define TILEDBLAS_GPU_LANES_H

#define TB_GPU_LANES 2

/* Taking turns on the lanes: the first, either (the first when free), or both at once. */
typedef enum { TB_FIRST_LANE, TB_EITHER_LANE, TB_BOTH_LANES } tb_lane_choice;

/* The lane taken (0 for both), waiting until the choice can be had; it becomes the thread's tb_gpu_lane.
 * -1 once the lanes are closed, where the caller would wait (but for the thread that closed them). */
int tb_lane_take(tb_lane_choice choice);
/* At exit, from the exiting thread: other callers waiting for a lane, and later ones that would wait, give up. */
void tb_lanes_close(void);
void tb_lane_give(int lane, tb_lane_choice choice);
/* The lane the calling thread holds (valid between tb_lane_take and tb_lane_give). */
int tb_gpu_lane(void);
/* In a forked child, where no thread holds a lane. */
void tb_lanes_after_fork(void);

#endif /* TILEDBLAS_GPU_LANES_H */
