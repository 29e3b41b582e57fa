/*
 * The stream-K tail's bookkeeping (the kernels' stream_k.cuh), on the host:
 * for many grids, K depths and slot counts, the pieces must cover every
 * k-slice of every tail tile exactly once, agree on how each tile was cut and
 * where its partial tiles go, come longest first, and, started in grid order
 * on the first free slot as the GPU starts blocks, finish within one k-slice
 * of the longest range. Needs no GPU.
 */
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <queue>
#include <vector>

#include "stream_k.cuh"

static int failures;

/* The part of K one piece sums. */
struct KSpan {
    int tile;
    int64_t begin, len;
};

static void fail(const char *what, int64_t tiles_m, int64_t tiles_n, int64_t slots, int64_t slices)
{
    if (failures++ < 20)
        printf("FAIL: %s (tiles %lld x %lld, %lld slots, %lld k-slices)\n", what, (long long)tiles_m,
               (long long)tiles_n, (long long)slots, (long long)slices);
}

/* Time at which the last piece ends when each starts on the first free slot, in grid order. */
static int64_t greedy_makespan(const std::vector<int64_t> &lengths, int64_t slots)
{
    std::priority_queue<int64_t, std::vector<int64_t>, std::greater<int64_t>> free_at;
    for (int64_t s = 0; s < slots; s++)
        free_at.push(0);
    int64_t end = 0;
    for (int64_t len : lengths) {
        const int64_t start = free_at.top();
        free_at.pop();
        free_at.push(start + len);
        end = std::max(end, start + len);
    }
    return end;
}

static void check(int64_t tiles_m, int64_t tiles_n, int64_t slots, int64_t slices)
{
    StreamKTail t = stream_k_layout(tiles_m, tiles_n, slots, slices);
    const int64_t tiles = tiles_m * tiles_n;
    const int64_t rest = tiles % slots;
    const int64_t ranges = std::min({slots, (int64_t)STREAM_K_MAX_RANGES, rest * slices / STREAM_K_MIN_SLICES});
    const bool expect_tail = tiles > slots && rest != 0 && slices >= 2 * STREAM_K_MIN_SLICES && ranges > rest;
    if (!t.tiles) {
        if (expect_tail)
            fail("no tail where one gains", tiles_m, tiles_n, slots, slices);
        return;
    }
    if (t.dp_tiles + t.tiles != tiles || t.dp_tiles % slots != 0 || t.ranges > slots || t.ranges <= t.tiles)
        fail("tail counts", tiles_m, tiles_n, slots, slices);
    stream_k_order(t);

    std::vector<int> covered((size_t)t.tiles * t.slices, 0);
    std::vector<int> slot_users((size_t)2 * t.ranges, 0);
    std::vector<int> tile_parts((size_t)t.tiles, -1), tile_first_range((size_t)t.tiles, -1);
    std::vector<int> pieces_of((size_t)t.tiles, 0);
    std::vector<int64_t> lengths;
    std::vector<KSpan> k_spans;
    for (int64_t b = 0; b < tail_blocks(t); b++) {
        const StreamKPiece p = stream_k_piece(t, b);
        if (p.tile < 0 || p.tile >= t.tiles || p.first < 0 || p.first >= p.last || p.last > t.slices ||
            p.index < 0 || p.index >= p.parts) {
            fail("piece out of range", tiles_m, tiles_n, slots, slices);
            return;
        }
        for (int s = p.first; s < p.last; s++)
            covered[(size_t)p.tile * t.slices + s]++;
        lengths.push_back(p.last - p.first);
        /* The slot a piece writes is the one the last piece reads for its index (stream_k_finish). */
        if (p.parts > 1) {
            const int64_t slot = 2 * (int64_t)(p.first_range + p.index) + (p.index == 0 && p.first_split);
            if (slot != t.pieces[b]) /* the piece's own range and part */
                fail("partial slot is not the piece's range and part", tiles_m, tiles_n, slots, slices);
            else
                slot_users[(size_t)slot]++;
        }
        /* K as the kernel sums it (BK = 32, K ragged): the pieces of a tile tile [0, K) in k order. */
        const int64_t k = slices * 32 - 5;
        int64_t k_begin, k_len;
        piece_k_range(p, 32, k, k_begin, k_len);
        k_spans.push_back({p.tile, k_begin, k_len});
        /* Pieces of one tile must agree on how it was cut. */
        if (tile_parts[(size_t)p.tile] < 0) {
            tile_parts[(size_t)p.tile] = p.parts;
            tile_first_range[(size_t)p.tile] = p.first_range;
        } else if (tile_parts[(size_t)p.tile] != p.parts || tile_first_range[(size_t)p.tile] != p.first_range) {
            fail("pieces of a tile disagree", tiles_m, tiles_n, slots, slices);
        }
        pieces_of[(size_t)p.tile]++;
        /* k order: a piece's index counts the ranges that start inside its tile before it. */
        if (p.index != range_of(t, (int64_t)p.tile * t.slices + p.first) - p.first_range)
            fail("piece index is not its k order", tiles_m, tiles_n, slots, slices);
    }
    for (int c : covered)
        if (c != 1) {
            fail("a k-slice computed other than once", tiles_m, tiles_n, slots, slices);
            break;
        }
    std::sort(k_spans.begin(), k_spans.end(),
              [](const KSpan &x, const KSpan &y) { return x.tile != y.tile ? x.tile < y.tile : x.begin < y.begin; });
    for (size_t i = 0; i < k_spans.size(); i++) {
        const bool tile_start = i == 0 || k_spans[i - 1].tile != k_spans[i].tile;
        const int64_t expected = tile_start ? 0 : k_spans[i - 1].begin + k_spans[i - 1].len;
        const bool tile_end = i + 1 == k_spans.size() || k_spans[i + 1].tile != k_spans[i].tile;
        if (k_spans[i].begin != expected || k_spans[i].len <= 0 ||
            (tile_end && k_spans[i].begin + k_spans[i].len != slices * 32 - 5)) {
            fail("pieces do not cover K of their tile in order", tiles_m, tiles_n, slots, slices);
            break;
        }
    }
    for (int i = 0; i < t.tiles; i++)
        if (pieces_of[(size_t)i] != tile_parts[(size_t)i]) {
            fail("a tile's piece count differs from its pieces", tiles_m, tiles_n, slots, slices);
            break;
        }
    for (int u : slot_users)
        if (u > 1) {
            fail("two pieces write one partial tile", tiles_m, tiles_n, slots, slices);
            break;
        }
    for (size_t i = 1; i < lengths.size(); i++)
        if (lengths[i - 1] < lengths[i]) {
            fail("pieces not longest first", tiles_m, tiles_n, slots, slices);
            break;
        }
    /* Whole tiles first (equal length, whole waves), then the tail's pieces. */
    if (greedy_makespan(lengths, slots) > longest_range(t) + 1)
        fail("pieces in grid order overrun the longest range", tiles_m, tiles_n, slots, slices);
}

int main(void)
{
    const int64_t slot_counts[] = {108, 132, 264, 512, 600};
    const int64_t depths[] = {1, 15, 16, 17, 33, 128, 129, 256, 1000, 4099};
    int64_t cases = 0;
    for (int64_t slots : slot_counts)
        for (int64_t slices : depths)
            for (int64_t tiles_m = 1; tiles_m <= 40; tiles_m += 3)
                for (int64_t tiles_n = 1; tiles_n <= 70; tiles_n += 2, cases++)
                    check(tiles_m, tiles_n, slots, slices);
    /* grid.y: a tall grid of tiles must stay within 65535 rows with its pieces added. */
    const StreamKTail tall = stream_k_layout(1, 70000, 132, 64);
    if (tall.tiles)
        fail("tail past grid.y's limit", 1, 70000, 132, 64);
    printf("%lld layouts checked, %d failures\n", (long long)cases, failures);
    return failures ? 1 : 0;
}
