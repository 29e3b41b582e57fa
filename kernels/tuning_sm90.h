/*
 * The kernel family's tuning for sm_90, measured on an H100 80GB HBM3 (132
 * SMs): the tile shapes of the register-tiled rungs with the rates their plans
 * weigh, and the costs the plans and the default's choice charge. The code
 * holds the mechanisms, this table the numbers a GPU of the architecture
 * measured, as BLIS keeps its block sizes in config/<arch>/. Another target
 * gets its own tuning_<arch>.h with the same names.
 *
 * Rates are TFLOP/s by which operands are stored along k (along_k in
 * common/tile_common.cuh): neither, B, A, both, which for a row-major call
 * are TN, NN, TT and NT. Each is the mean at 4096^3 and 8192^3 of the
 * shape's line ("reg ...", "multi ...") in
 *     tiledblas-bench --tune --sizes 4096,8192 --trans NN,NT,TN,TT
 * 0: not measured in that storage, never chosen. Order matters: ties go to
 * the earlier shape, and the last, the smallest, is the one any GPU holds.
 */
#ifndef TILEDBLAS_TUNING_SM90_H
#define TILEDBLAS_TUNING_SM90_H

/*
 * 02_regtile.cu: SHAPE(BM, BN, BK, WM, WN, BLOCKS, rate: none, B, A, both).
 * A BM x BN x BK block tile of WM x WN warp tiles, built for BLOCKS blocks
 * per SM. Static shared memory within 48 KB, all 8 deep, measured with
 * unaligned operands as well.
 */
#define TB_TUNE_REGTILE_SHAPES(SHAPE)                       \
    SHAPE(256, 128, 8, 64, 64, 1, 42.9, 42.5, 43.5, 42.6) \
    SHAPE(128, 256, 8, 64, 64, 1, 42.3, 43.3, 42.5, 42.5) \
    SHAPE(128, 128, 8, 64, 32, 2, 44.2, 41.8, 42.3, 39.5) \
    SHAPE(128, 64, 8, 64, 32, 3, 39.7, 38.1, 35.5, 34.8)  \
    SHAPE(64, 64, 8, 32, 32, 4, 37.5, 34.5, 34.2, 32.6)

/*
 * 03_multistage.cu: SHAPE(BM, BN, BK, WM, WN, STAGES, BLOCKS, SPREAD,
 * ALIGNED_ONLY, rate: none, B, A, both, zig-zag: none, B, A, both).
 * STAGES: the depth of the ring of k-slices. SPREAD: a slice's transposing
 * copies go out over the k-steps of the one before. ALIGNED_ONLY: measured
 * with 16-byte copies only, never planned for unaligned operands. Zig-zag:
 * 1 where the FMAs go in zig-zag order in that storage.
 *
 * Registers set the blocks per SM: 8x8 per thread fits 128 registers, so two
 * 256-thread or four 128-thread blocks share an SM; 8x16 per thread needs
 * 210-240, so one block of 8 warps, each with twice the independent FMAs per
 * fragment load. That is cuBLAS's own choice on the H100 for large calls
 * (256x128x8, 3 stages, 8 warps of 64x64); here it runs best with 16- or
 * 32-deep slices, which cut the barriers and the loop's bookkeeping per FMA
 * (92.8% of the loop's instructions are FMAs at 16, 86.5% with 8x8). The
 * operand stored along k is best in the narrower side of the tile (its copies
 * are the transposing 4-byte ones): 256x128 when it is B, 128x256 when it is
 * A; 128x256x32 is there for A along k (row-major TT: 51.0 against 48.9 for
 * 128x256x16). Unaligned, 256x128x32's 4-byte copies (32 per thread per
 * slice) ran 4097x4095x4099 at 0.81 of cuBLAS, hence ALIGNED_ONLY.
 *
 * Shared memory (STAGES slices of both tiles) is 17-75 KB per block, inside
 * an sm_80 or sm_90 SM at that occupancy; 256x128x32 and 128x256x32 take 150
 * KB, more than sm_86 and sm_89 allow a block, where the plan leaves them out.
 *
 * Zig-zag order is on where it ran faster in the --tune command above at both
 * sizes (the mean of the two: 0.7-3.3% with one operand along k for the 8x16
 * tiles, 4.7% with B along k for 128x64x8, 1.7-2.6% with neither for
 * 128x128x8 and 64x64x8; elsewhere it was even or up to 13% slower). The 8x16
 * tiles' rates in those storages are their plain-order rates times what it
 * gained. The smaller tiles keep their plain-order rates: raised, 128x64x8's
 * won it plans at 1000^3 and 1024^3 with K in three slices that ran 25%
 * slower than 128x128x8's in two.
 *
 * With an operand along k in the wide side of the 8x16 tiles, the kernels run
 * 4-8% above these rates, and 10-13% with both along k (their copies read
 * whole sectors, K_POINTERS in 03_multistage.cu); each storage's first-ranked
 * shape is still its fastest or within 1% of it. The --tune command above
 * measures them afresh.
 */
#define TB_TUNE_MULTISTAGE_SHAPES(SHAPE)                                                         \
    SHAPE(256, 128, 32, 64, 64, 3, 1, true, true, 47.7, 51.9, 48.3, 44.5, 0, 1, 1, 0)   \
    SHAPE(256, 128, 16, 64, 64, 3, 1, true, false, 47.5, 50.5, 46.1, 42.7, 0, 1, 1, 0)  \
    SHAPE(128, 256, 32, 64, 64, 3, 1, true, true, 0.0, 48.1, 51.4, 0.0, 0, 1, 1, 0)     \
    SHAPE(128, 256, 16, 64, 64, 3, 1, true, false, 48.3, 47.4, 49.7, 42.7, 0, 1, 1, 0)  \
    SHAPE(128, 128, 8, 64, 32, 4, 2, false, false, 46.4, 45.0, 44.9, 42.2, 1, 0, 0, 0)  \
    SHAPE(128, 64, 8, 64, 32, 4, 4, false, false, 44.6, 42.8, 34.9, 31.2, 0, 1, 0, 0)   \
    SHAPE(64, 64, 8, 32, 32, 4, 4, false, false, 41.7, 36.0, 36.2, 29.5, 1, 0, 0, 0)

/*
 * The share of an SM's full rate that its resident warps reach with one and
 * with two warps per scheduler (from three: the full rate); with one, a
 * block's FMAs wait on its loads. Measured as the time per block of grids of
 * exactly 1, 2, 3 and 4 blocks per SM at K = 2048 (tiledblas-bench --tune
 * --sizes MxNx2048, M/BM * N/BN that many times the SM count): one 4-warp
 * block ran at 0.78-0.82 of four, two (or one of 8 warps) at 0.93-0.95.
 */
#define TB_TUNE_SHARE_ONE_WARP_PER_SCHEDULER 0.80
#define TB_TUNE_SHARE_TWO_WARPS_PER_SCHEDULER 0.94

/*
 * A block's ring fill and drain, in k-steps of its tile (about the rings'
 * depth): 1024^3 in slices of 16 k-steps ran 25% over its FMAs' time.
 */
#define TB_TUNE_FILL_STEPS 4
/*
 * The least a launch's fill costs in all, the latency of its first loads and
 * last stores (later blocks fill while others compute). Four k-steps of an
 * 8-deep tile (3 us for 128x128x8) fall short of it: 768^3 and 1000^3 ran 5-8
 * us over such plans, and 1000x1000x2000 took 128x128x8 in two slices, 3-14%
 * slower than 256x128x16. tiledblas-bench --kernels --sizes
 * 768,1000,1000x1000x2000 shows the plans it decides.
 */
#define TB_TUNE_MIN_FILL_SECONDS 7e-6

/*
 * Split-K: the shallowest slice of K a plan cuts. 256 rather than 1024 took
 * 1024^3 from 0.92 to 1.03-1.06 of cuBLAS (tiledblas-bench --kernels --sizes
 * 1024).
 */
#define TB_TUNE_MIN_K_PER_SLICE 256
/*
 * Split-K's second pass: the partial planes written and read back, and C, at
 * L2 speed where they fit in L2, else at device memory speed, plus its
 * launch. Two slices at 1000^3 cost about 9 us, where device memory speed
 * would charge 17.
 */
#define TB_TUNE_SPLIT_L2_BYTES_PER_SECOND 7e12
#define TB_TUNE_SPLIT_BYTES_PER_SECOND 2e12
#define TB_TUNE_SPLIT_LAUNCH_SECONDS 3e-6
/*
 * The slices summed in a cluster instead: each block parks its tile in shared
 * memory and reads as much back, at this rate per SM (about 2 us for a
 * 128x128 tile, where the second pass cost 6).
 */
#define TB_TUNE_CLUSTER_SUM_BYTES_PER_SECOND 1e11

/*
 * A stream-K tail is charged its longest range of k-slices, plus
 * TAIL_EXTRA_SLICES for the pieces' ring fill and partial tiles, plus
 * TAIL_SLACK of a tile: what the longest-first schedule left unbalanced (0.1-0.4
 * of a tile over six sizes; SMs differ in speed). So a mostly full last wave
 * (4096^3: 0.88) keeps whole tiles, which ran 0.6% faster there. A shape's
 * "multi" and "sk" lines in tiledblas-bench --tune --sizes 3072,4096,5120 are
 * it without and with its tail.
 */
#define TB_TUNE_TAIL_EXTRA_SLICES 4
#define TB_TUNE_TAIL_SLACK 0.15

/*
 * best.c: re-storing an operand (transpose.cu) before multistage, priced by
 * the bytes it reads and writes and its launch: 54 us for a 4096^2 matrix and
 * 220 us for 8192^2 (Nsight Compute). What the choice gains shows in
 * tiledblas-bench --kernels --sizes 4096,8192 --trans NT (best against
 * regtile and multistage).
 */
#define TB_TUNE_RESTORE_BYTES_PER_SECOND 2.4e12
#define TB_TUNE_RESTORE_LAUNCH_SECONDS 5e-6

#endif /* TILEDBLAS_TUNING_SM90_H */
