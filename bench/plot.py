#!/usr/bin/env python3
"""PNG plots of tiledblas-bench results.

    plot.py RESULTS.csv OUTDIR

RESULTS.csv is what `tiledblas-bench --csv` writes, or the bench.csv of
bench/run_gpu_suite.sh (the same columns after a leading `step`). Writes, for
the data present:
  OUTDIR/ladder.png    --kernels, row-major NN: GFLOP/s of every rung and cuBLAS by size
  OUTDIR/e2e.png       --e2e: TFLOP/s of each path, host memory in and out, by shape
  OUTDIR/policy.png    --policy: auto mode against each path forced, as ratios
  OUTDIR/timeline.png  --timeline: each stage alone against the whole call
Needs matplotlib (Debian: python3-matplotlib).
"""
import csv
import sys
from collections import OrderedDict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_rows(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r["median_ms"] = float(r["median_ms"])
        r["gflops"] = float(r["gflops"])
    return rows


def grouped(rows, key_x, key_series, value):
    """series -> OrderedDict(x -> value); the last row wins for a repeated point."""
    xs = list(OrderedDict.fromkeys(key_x(r) for r in rows))
    series = OrderedDict()
    for r in rows:
        series.setdefault(key_series(r), {})[key_x(r)] = value(r)
    return xs, series


def bars(ax, xs, series, ylabel, log=False):
    width = 0.8 / max(1, len(series))
    for i, (name, points) in enumerate(series.items()):
        pos = [j + (i - (len(series) - 1) / 2) * width for j in range(len(xs))]
        ax.bar(pos, [points.get(x, 0.0) for x in xs], width, label=name)
    ax.set_xticks(range(len(xs)))
    ax.set_xticklabels(xs, rotation=30, ha="right")
    ax.set_ylabel(ylabel)
    if log:
        ax.set_yscale("log")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize="small")


def in_steps(row, prefix):
    """Rows of the suite's merged CSV carry their step; a plain --csv file has none."""
    return "step" not in row or row["step"].startswith(prefix)


def chart(rows, out, value, ylabel, title, width=12):
    """Bars of `value` per shape (x) and variant (series), log scale; False when there are no rows."""
    if not rows:
        return False
    xs, series = grouped(rows, lambda r: r["shape"], lambda r: r["variant"], value)
    fig, ax = plt.subplots(figsize=(width, 5))
    bars(ax, xs, series, ylabel, log=True)
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    return True


def plot_ladder(rows, out):
    rows = [r for r in rows if r["mode"] == "kernels" and r["op"] == "row NN" and r["gflops"] > 0
            and in_steps(r, "kernels")]
    return chart(rows, out, lambda r: r["gflops"], "GFLOP/s (log)",
                 "SGEMM kernels on device memory, row-major NN (CUDA events, medians)", width=10)


def plot_e2e(rows, out, prefix="e2e", title="cblas_sgemm, host memory in and out (wall clock, medians)"):
    rows = [r for r in rows if r["mode"] == "e2e" and r["gflops"] > 0 and in_steps(r, prefix)]
    return chart(rows, out, lambda r: r["gflops"] / 1e3, "TFLOP/s (log)", title, width=14)


def plot_policy(rows, out):
    """--policy: each path's speed over the faster forced path's, with auto's 0.95 target."""
    rows = [r for r in rows if r["mode"] == "policy" and float(r["ratio"]) > 0]
    if not rows:
        return False
    def series_of(r):
        """The suite runs --policy in several steps (OpenBLAS's threads spinning, parked; large sizes)."""
        return r["variant"] + (" [" + r["step"].replace("-large", "") + "]" if "step" in r else "")

    xs, series = grouped(rows, lambda r: r["shape"] + ("" if r["op"] == "row NN" else " " + r["op"]),
                         series_of, lambda r: float(r["ratio"]))
    fig, ax = plt.subplots(figsize=(14, 5))
    bars(ax, xs, series, "speed / faster forced path's (log)", log=True)
    ax.axhline(0.95, color="black", linewidth=0.8, linestyle="--")
    ax.set_title("auto mode against OpenBLAS alone and the forced GPU, interleaved in one process (medians)")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    return True


def plot_timeline(rows, out):
    rows = [r for r in rows if r["mode"] == "timeline"]
    return chart(rows, out, lambda r: r["median_ms"], "ms (log)",
                 "Stages of one host-to-host call, each timed alone, against the call")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    rows = read_rows(sys.argv[1])
    plots = (("ladder", plot_ladder), ("e2e", plot_e2e), ("policy", plot_policy), ("timeline", plot_timeline))
    made = [name for name, plot in plots if rows and plot(rows, f"{sys.argv[2]}/{name}.png")]
    print("wrote:", ", ".join(f"{sys.argv[2]}/{m}.png" for m in made) if made else "nothing (no rows)")


if __name__ == "__main__":
    main()
