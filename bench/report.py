#!/usr/bin/env python3
"""Turn one run of bench/suite.sh into tiledblas's performance documents.

usage: python3 bench/report.py [--repo DIR] RESULTS_DIR

RESULTS_DIR holds the run's bench.csv and environment.txt (bench/suite.sh's
--out folder, or docs/results). Their copies in docs/results/ are replaced
first when RESULTS_DIR is another folder, since the documents name the data
they are drawn from and that data lives in the tree. Then it writes:

  docs/PERFORMANCE.md  the whole document: method, experiment details, one
                       table per benchmark mode with its ratios, the plots
  docs/plots/*.png     ladder, e2e, policy, timeline (for the modes present)
  README.md            between <!-- BEGIN generated:performance --> and
                       <!-- END generated:performance -->: one compact table
  kernels/README.md    between <!-- BEGIN generated:ladder --> and
                       <!-- END generated:ladder -->: the ladder table, whose
                       rung, file, idea and TILEDBLAS_KERNEL columns are kept

Only the text between the marker lines changes in README.md and
kernels/README.md; a file or marker pair that is missing is reported and
skipped. A mode the run did not measure gets a "not measured in this run"
line. Running it twice on the same data gives the same files.

--repo DIR writes into another checkout (default: the one holding this script).
Needs Python 3 and matplotlib (Debian: python3-matplotlib, for /usr/bin/python3).
"""
import argparse
import csv
import os
import sys
import textwrap
from collections import OrderedDict

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
except ImportError:  # pragma: no cover - depends on the host
    sys.exit("bench/report.py needs matplotlib (Debian: apt-get install python3-matplotlib, "
             "then run it with /usr/bin/python3)")

TARGET = 0.95  # auto mode's goal: at least this share of the faster forced path's speed
RESULTS = "docs/results"
PLOTS = "docs/plots"
README_BLOCK = "performance"
LADDER_BLOCK = "ladder"
LADDER_SHAPE = "4096x4096x4096"
LADDER_HEADER = ["rung", "file", "idea", "TILEDBLAS_KERNEL", "TFLOP/s at 4096³", "× cuBLAS"]


def warn(message):
    print(f"report.py: warning: {message}", file=sys.stderr)


# ---- the data -----------------------------------------------------------------

def number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def read_rows(path):
    """The CSV's rows, numbers parsed; a file without a step column (plain --csv) gets the mode."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r.setdefault("step", r["mode"])
        r["ms"] = number(r["median_ms"]) or 0.0
        r["tflops"] = (number(r["gflops"]) or 0.0) / 1e3
        ratio = number(r["ratio"])
        r["ratio"] = ratio if ratio and ratio > 0 else None
        r["error"] = number(r.get("error"))
        r["error_median"] = number(r.get("error_median"))
    return rows


def read_environment(path):
    """environment.txt: "key: value" lines, in order."""
    env = OrderedDict()
    if not os.path.exists(path):
        warn(f"{path} is missing: the experiment details will be empty")
        return env
    with open(path) as f:
        for line in f:
            key, sep, value = line.rstrip("\n").partition(": ")
            if sep and key.strip():
                env[key.strip()] = value.strip()
    return env


class Data:
    """One run: the CSV's rows and environment.txt."""

    def __init__(self, rows, env):
        self.rows = rows
        self.env = env

    def select(self, step=None, variant=None, shape=None, op="row NN"):
        """The rows that match every criterion given (op None: any layout and transpose)."""
        out = []
        for r in self.rows:
            if step is not None and r["step"] != step:
                continue
            if variant is not None and r["variant"] != variant:
                continue
            if shape is not None and r["shape"] != shape:
                continue
            if op is not None and r["op"] != op:
                continue
            out.append(r)
        return out

    def one(self, step, variant, shape, op="row NN"):
        """The step's row, or None; the last one wins for a repeated point."""
        found = self.select(step=step, variant=variant, shape=shape, op=op)
        return found[-1] if found and found[-1]["ms"] > 0 else None

    def has(self, step):
        return any(r["step"] == step for r in self.rows)

    def shapes(self, step, op="row NN"):
        return list(OrderedDict.fromkeys(r["shape"] for r in self.select(step=step, op=op)))

    def variants(self, step, op="row NN"):
        return list(OrderedDict.fromkeys(r["variant"] for r in self.select(step=step, op=op)))

    def default_gpu(self, shape):
        """tiledblas on the GPU path with the library's defaults, host to host, at a shape."""
        for step in ("e2e-gpu", "e2e-8192", "e2e-16384"):
            row = self.one(step, "tiledblas:gpu", shape)
            if row:
                return row
        return None

    def failed(self):
        return [r for r in self.rows if not r["status"].startswith("ok")]


# ---- formatting --------------------------------------------------------------

def shape_name(shape):
    """4096x4096x4096 as 4096³; other shapes as M×N×K."""
    dims = shape.split("x")
    if len(dims) == 3 and len(set(dims)) == 1:
        return dims[0] + "³"
    return "×".join(dims)


def fmt_ms(ms):
    if ms is None or ms <= 0:
        return "–"
    for limit, digits in ((100, 0), (10, 1), (1, 2), (0.1, 3)):
        if ms >= limit:
            return f"{ms:.{digits}f}"
    return f"{ms:.4f}"


def fmt_tflops(t):
    if t is None or t <= 0:
        return "–"
    return f"{t:.1f}" if t >= 10 else f"{t:.2f}" if t >= 0.1 else f"{t:.3f}"


def fmt_ratio(x):
    if x is None or x <= 0:
        return "–"
    return f"{x:.0f}" if x >= 100 else f"{x:.1f}" if x >= 10 else f"{x:.2f}" if x >= 0.1 else f"{x:.3f}"


def wrap(lines, width=100):
    """Prose lines wrapped at `width` (bullets hang); tables, headings, images and comments kept."""
    out = []
    for line in lines:
        if len(line) <= width or line.startswith(("|", "#", "!", "<!--")):
            out.append(line)
            continue
        indent = "  " if line.startswith("- ") else ""
        # Spaces inside `code` spans do not break: odd pieces between backticks are code.
        parts = line.split("`")
        kept = "`".join(p.replace(" ", "\0") if i % 2 else p for i, p in enumerate(parts))
        out += [w.replace("\0", " ") for w in textwrap.wrap(kept, width, subsequent_indent=indent,
                                                              break_long_words=False, break_on_hyphens=False)]
    return out


def table(header, rows, align=None):
    """A markdown table; align: one of 'l'/'r' per column (default: first left, rest right)."""
    align = align or ["l"] + ["r"] * (len(header) - 1)
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" if a == "l" else "--:" for a in align) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def not_measured(what, steps):
    return f"Not measured in this run ({what}: `bench/suite.sh --steps \"{steps}\"`)."


def env_get(env, key, default="unknown"):
    value = env.get(key, "").strip()
    return value if value else default


def gpu_name(env):
    return env_get(env, "gpu").split(" (")[0]


def reproduce(env):
    return env_get(env, "command", 'bench/suite.sh --steps "test bench"')


# ---- OpenBLAS fairness ----------------------------------------------------------

# Cores whose SGEMM kernels use AVX-512 (Cooperlake and SapphireRapids add only bfloat16
# kernels to SkylakeX's), and those with AVX2 and FMA at best.
AVX512_CORES = {"skylakex", "cooperlake", "sapphirerapids"}
AVX2_CORES = {"haswell", "zen", "excavator", "steamroller"}
OLD_X86_CORES = {"katmai", "coppermine", "northwood", "prescott", "banias", "atom", "core2", "penryn",
                 "dunnington", "nehalem", "athlon", "opteron", "opteron_sse3", "barcelona", "nano",
                 "sandybridge", "bobcat", "bulldozer", "piledriver"}


def core_of(text):
    return text.split(" ")[0].split("(")[0].strip().lower() if text else ""


def core_name(env):
    """The core OpenBLAS ran, as the library names it (Prescott, SkylakeX, ...)."""
    return env_get(env, "openblas core used").split(" ")[0]


def openblas_caution(env):
    """A sentence when OpenBLAS did not run its best kernels for the host, else None."""
    used = core_of(env_get(env, "openblas core used", ""))
    best = core_of(env_get(env, "openblas core best for cpu", ""))
    if not used or used == "unknown":
        return ("Which kernels OpenBLAS ran was not recorded: the × OpenBLAS figures may compare "
                "against an OpenBLAS below its best on this host.")
    if best == "skylakex":
        weaker = used not in AVX512_CORES
    elif best == "haswell":
        weaker = used not in AVX512_CORES | AVX2_CORES
    else:
        weaker = used in OLD_X86_CORES
    if not weaker:
        return None
    better = {"skylakex": "the SkylakeX (AVX-512) kernels this CPU supports",
              "haswell": "the Haswell (AVX2) kernels this CPU supports"}.get(best, "those of a current CPU")
    why = ("as OPENBLAS_CORETYPE asked" if "set by the user" in env_get(env, "openblas coretype", "")
           else "its CPU detection fell back to an old core")
    size = " (about fivefold at 4096³ where Prescott runs in place of SkylakeX)" if used == "prescott" else ""
    return (f"**Caution: OpenBLAS ran its {core_name(env)} kernels**, not {better}, {why}: every "
            f"× OpenBLAS figure here overstates tiledblas's lead{size}. `bench/suite.sh` sets "
            f"`OPENBLAS_CORETYPE` where detection falls short; a run of it replaces these figures.")


# ---- the sections of PERFORMANCE.md ---------------------------------------------

def section_details(d):
    env = d.env
    lines = ["## Experiment details", ""]
    if not env:
        return lines + ["No environment.txt came with this data.", ""]
    rows = [[key, documented(key, value).replace("|", "\\|")] for key, value in env.items()
            if documented(key, value) is not None]
    lines += [table(["key", "value"], rows, ["l", "l"]), ""]
    lines += [f"Reproduce: `{reproduce(env)}` from the repository root, then "
              f"`python3 bench/report.py suite-out`.", ""]
    return lines


def section_method(d):
    env = d.env
    nvblas = env_get(env, "nvblas config", "")
    coretype = env_get(env, "openblas coretype", "not recorded")
    lines = [
        "## Method",
        "",
        "- **Kernels** (`tiledblas-bench --kernels`): each rung of the kernel ladder and cuBLAS's "
        "`cublasSgemm` (FP32, `CUBLAS_DEFAULT_MATH`, no TF32) on the same device buffers, timed with "
        "CUDA events around each call; beside the tensor-core rung, cuBLAS on TF32 tensor cores "
        "(`cublasGemmEx`, `CUBLAS_COMPUTE_32F_FAST_TF32`, not FP32-accurate) as its ceiling. After one checked call each (relative Frobenius error against "
        "an FP64 reference computed on the GPU), the variants of a case are timed in rounds, each "
        "round starting one variant further on, so that clock and temperature drift fall on all of "
        "them alike; each variant gets up to 20 calls (fewer when a call is slow, about 2 s per "
        "variant); the median is reported.",
        "- **Device pointers through the API** (`--api`): `cblas_sgemm` of libtiledblas on device "
        "buffers and `cublasSgemm` on the same buffers, each timed with the wall clock from the call to "
        "C final, in turns (each round swaps which goes first), median of up to 10 after a checked call "
        "each; besides the listed shapes, 16 drawn at random with a fixed seed.",
        "- **Host to host** (`--e2e`): `cblas_sgemm` of libtiledblas as an application calls it, "
        "operands in ordinary (pageable) host memory, transfers included, timed with the wall clock "
        "around each call; median of up to 20 calls after a checked warm-up call (sampled elements "
        "against FP64 sums, within the FP32 worst-case bound). OpenBLAS and NVBLAS are timed in the "
        "same process on the same buffers right after it; OpenBLAS's threads are given 0.3 s to go "
        "to sleep before the next timing. `beta = 1` against `beta = 0` alternates call by call.",
        "- **Timeline** (`--timeline`): each stage the pipelined host path overlaps, timed alone on "
        "the same bytes (host copies between pageable memory and pinned staging, DMA each way, the "
        "kernel alone), against the whole call.",
        "- **Auto mode** (`--policy`): `TILEDBLAS_DEVICE=auto` against the GPU path forced and "
        "OpenBLAS alone, interleaved in one process: rounds of untimed calls (at least 1 ms) and a "
        "timed one (a batch of about 0.25 ms for shorter calls) for each, in the six orders in turn, "
        "with a 0.3 s pause after OpenBLAS's (its threads spin after a multithreaded call); "
        f"medians of the rounds. Target: auto at least {TARGET} of the faster forced path's speed.",
        "- **Ratios** are always to a reference measured in the same step of the same run, so that "
        "the state of the host (its clocks, other tenants) is shared.",
        "",
        "Fairness checks:",
        "",
        f"- **OpenBLAS at its best for the host CPU.** A `DYNAMIC_ARCH` OpenBLAS picks its kernels by "
        f"detecting the CPU and can fall back to an old core on a virtual CPU. `bench/suite.sh` asks "
        f"the library which core it detects (`openblas_get_corename()` with `OPENBLAS_CORETYPE` "
        f"unset) and sets `OPENBLAS_CORETYPE` to the core the CPU flags support (SkylakeX with "
        f"AVX-512, Haswell with AVX2) when the detected one is older; `tiledblas-bench` prints the "
        f"core of every run. In this run OpenBLAS ran its **{core_name(env)}** kernels ({coretype}). "
        f"The library's own CPU path (`TILEDBLAS_CPU_BLAS`) is the same OpenBLAS.",
    ]
    if nvblas and not nvblas.startswith("not measured"):
        lines.append(f"- **NVBLAS configured as its documentation advises**: every GPU, host memory "
                     f"pinned automatically, OpenBLAS as its CPU BLAS (`{nvblas}`); called through "
                     f"its Fortran `sgemm_`.")
    else:
        lines.append("- **NVBLAS**: not measured in this run (no libnvblas.so found).")
    caution = openblas_caution(env)
    if caution:
        lines += ["", caution]
    failed = d.failed()
    if failed:
        lines += ["", f"**{len(failed)} rows of this run failed their check**: "
                  + ", ".join(f"{r['step']} {r['shape']} {r['variant']}" for r in failed[:10])
                  + (" …" if len(failed) > 10 else "") + "."]
    return lines + [""]


def val(row, key):
    """row[key], or None where the row is missing."""
    return row[key] if row else None


def subsection(title, rows, header, intro=None, absent=None, steps="bench", align=None):
    """A ### section: its intro and table, or a "not measured" line when there are no rows."""
    lines = [f"### {title}", ""]
    if not rows:
        return lines + [not_measured(absent or title, steps), ""]
    return lines + ([intro, ""] if intro else []) + [table(header, rows, align), ""]


def ladder_rows(d):
    """Each rung and cuBLAS by size: TFLOP/s (x cuBLAS)."""
    rows = []
    for v in d.variants("kernels"):
        cells = [{"cublas": "cuBLAS", "cublas-tf32": "cuBLAS TF32 (not FP32-accurate)"}.get(v, f"`{v}`")]
        for s in d.shapes("kernels"):
            r = d.one("kernels", v, s)
            ratio = "" if v == "cublas" or not r else f" ({fmt_ratio(r['ratio'])})"
            cells.append(fmt_tflops(val(r, "tflops")) + ratio)
        rows.append(cells)
    return rows


def shape_rows(d):
    """The default kernel against cuBLAS on the awkward shapes and the stream-K tails."""
    rows = []
    for step in ("kernel-shapes", "kernel-tails"):
        for s in d.shapes(step):
            best, cublas = d.one(step, "best", s), d.one(step, "cublas", s)
            rows.append([shape_name(s), fmt_ms(val(best, "ms")), fmt_tflops(val(best, "tflops")),
                         fmt_tflops(val(cublas, "tflops")), fmt_ratio(val(best, "ratio"))])
    return rows


def transpose_rows(d):
    rows = []
    for step in ("kernel-trans-row", "kernel-trans-col"):
        for r in d.select(step=step, variant="best", op=None):
            cublas = d.one(step, "cublas", r["shape"], r["op"])
            rows.append([shape_name(r["shape"]), r["op"], fmt_tflops(r["tflops"]),
                         fmt_tflops(val(cublas, "tflops")), fmt_ratio(r["ratio"])])
    return rows


def tune_rows(d):
    """The fastest tile shape of each family per shape: "tile: TFLOP/s (x cuBLAS)"."""
    rows = []
    for s in d.shapes("tune"):
        cells = [shape_name(s)]
        for family in ("reg ", "multi ", "sk "):
            found = [r for r in d.select(step="tune", shape=s) if r["variant"].startswith(family) and r["ms"] > 0]
            fastest = max(found, key=lambda r: r["tflops"]) if found else None
            cells.append(f"{fastest['variant'][len(family):]}: {fmt_tflops(fastest['tflops'])}"
                         f" ({fmt_ratio(fastest['ratio'])})" if fastest else "–")
        rows.append(cells + [fmt_tflops(val(d.one("tune", "cublas", s), "tflops"))])
    return rows


def section_kernels(d):
    lines = ["## Kernels on device memory", ""]
    if not d.has("kernels"):
        return lines + [not_measured("the kernel ladder", "bench"), ""]
    lines += ["Each rung of the ladder (`TILEDBLAS_KERNEL`; `best`, the default, plans each call from "
              "the top rungs: which one, its tile shape, how K is split) against cuBLAS, row-major NN, "
              "device memory. Cells: TFLOP/s, and in brackets the ratio to cuBLAS in the same run.", "",
              table(["kernel"] + [shape_name(s) for s in d.shapes("kernels")], ladder_rows(d)), "",
              "![The kernel ladder against cuBLAS](plots/ladder.png)", ""]
    lines += subsection("Other shapes", shape_rows(d), ["M×N×K", "best ms", "best TFLOP/s", "cuBLAS TFLOP/s",
                                                        "× cuBLAS"],
                        "The default kernel (`best`) on awkward and skinny shapes and on grids whose last "
                        "wave of tiles is mostly empty (stream-K tails), row-major NN.",
                        "awkward shapes and stream-K tails", "shapes")
    lines += subsection("Transposes and layouts", transpose_rows(d),
                        ["shape", "layout, op", "best TFLOP/s", "cuBLAS TFLOP/s", "× cuBLAS"],
                        absent="every transpose in both layouts", steps="shapes", align=["l", "l", "r", "r", "r"])
    lines += subsection("Tile shapes", tune_rows(d),
                        ["shape", "regtile", "multistage", "multistage, stream-K", "cuBLAS TFLOP/s"],
                        "The fastest tile shape of each family (`tiledblas-bench --tune`): regtile, "
                        "multistage, and multistage with a stream-K tail. Cells: tile, TFLOP/s (× cuBLAS).",
                        "every tile shape", "tune", ["l", "l", "l", "l", "r"])
    return lines


def api_rows(d, step):
    """Per shape: tiledblas and cuBLAS on device pointers, call to completion, and their errors."""
    rows = []
    for s in d.shapes(step, op="col NN"):
        ours, theirs = d.one(step, "tiledblas", s, op="col NN"), d.one(step, "cublas", s, op="col NN")
        errors = [val(ours, "error"), val(theirs, "error")]
        error_ratio = errors[0] / errors[1] if None not in errors and errors[1] > 0 else None
        rows.append([shape_name(s), fmt_ms(val(ours, "ms")), fmt_ms(val(theirs, "ms")),
                     fmt_ratio(val(ours, "ratio")), fmt_error(errors[0]), fmt_error(errors[1]),
                     fmt_ratio(error_ratio)])
    return rows


def fmt_error(e):
    return "–" if e is None else f"{e:.1e}"


def api_summary(d, step):
    """The random set in one line: median and worst ratio to cuBLAS, the largest error ratio."""
    pairs = []
    for s in d.shapes(step, op="col NN"):
        ours, theirs = d.one(step, "tiledblas", s, op="col NN"), d.one(step, "cublas", s, op="col NN")
        if ours and theirs and ours["ratio"]:
            e0, e1 = ours["error"], theirs["error"]
            pairs.append((ours["ratio"], shape_name(s), e0 / e1 if e0 is not None and e1 else None))
    if not pairs:
        return []
    ratios = sorted(p[0] for p in pairs)
    worst = min(pairs)
    median = ratios[len(ratios) // 2] if len(ratios) % 2 else (ratios[len(ratios) // 2 - 1] + ratios[len(ratios) // 2]) / 2
    error_ratios = [p[2] for p in pairs if p[2] is not None]
    line = (f"Over the {len(pairs)} shapes drawn at random (each dimension uniform in 100..5000, a fixed seed): "
            f"median {fmt_ratio(median)}× cuBLAS, worst {fmt_ratio(worst[0])}× ({worst[1]}), "
            f"{sum(r < 0.85 for r in ratios)} below 0.85")
    if error_ratios:
        line += f"; the largest error against cuBLAS's: {fmt_ratio(max(error_ratios))}×"
    return [line + ".", ""]


ACCURACY_INPUTS = ("uniform", "normal", "positive", "spread", "specials")
ACCURACY_WAYS = (("fp32", "tiledblas FP32"), ("tensor", "tiledblas tensor"), ("cublas", "cuBLAS SGEMM"),
                 ("cublas-tf32", "cuBLAS TF32"))


def accuracy_rows(d):
    """Per input and K: max / median error of each way; a failed row (Inf/NaN misplaced) marked."""
    rows = []
    for inp in ACCURACY_INPUTS:
        for s in d.shapes("accuracy", op="col NN"):
            cells = []
            for way, _ in ACCURACY_WAYS:
                r = next(iter(d.select(step="accuracy", variant=f"{inp} {way}", shape=s, op="col NN")), None)
                if r is None or r["error"] is None:
                    cells.append("–")
                    continue
                cell = f"{fmt_error(r['error'])} / {fmt_error(r['error_median'])}"
                cells.append(cell if r["status"].startswith("ok") else cell + " (Inf/NaN misplaced)")
            rows.append([inp, s.split("x")[-1]] + cells)
    return rows


def section_accuracy(d):
    lines = ["## Accuracy of the two maths", ""]
    if not d.has("accuracy"):
        return lines + [not_measured("the error of both maths beside cuBLAS's", "bench"), ""]
    return lines + [
        "The largest and the median of |c − c64| / (|c64| + 10⁻³) over C (512 × 512, column-major NN) "
        "against an FP64 reference, on the same inputs for each: `cblas_sgemm` of libtiledblas on device "
        "pointers with `TILEDBLAS_MATH=fp32` and `tensor`, cuBLAS's FP32 SGEMM and its TF32 mode "
        "(`CUBLAS_COMPUTE_32F_FAST_TF32`). Inputs: uniform in (−1, 1); standard normal; uniform in (0, 1), "
        "where nothing cancels; magnitudes spread over 2^−20..2^20 with random signs; and uniform with 0.1% "
        "each of +Inf, −Inf and NaN, 5% subnormal and 5% zero (Inf and NaN must land where cuBLAS's SGEMM "
        "puts them). Cells: max / median.", "",
        table(["input", "K"] + [name for _, name in ACCURACY_WAYS], accuracy_rows(d),
              ["l", "r", "r", "r", "r", "r"]), ""]


def section_api(d):
    lines = ["## cblas_sgemm on device pointers", ""]
    if not (d.has("api") or d.has("api-random") or d.has("api-tensor")):
        return lines + [not_measured("cblas_sgemm on device pointers against cuBLAS", "bench"), ""]
    head = ["M×N×K", "tiledblas ms", "cuBLAS ms", "× cuBLAS", "max error", "cuBLAS max error", "error ×"]
    lines += ["`cblas_sgemm` of libtiledblas on device pointers against `cublasSgemm`, as an application "
              "times them: the wall clock from the call to C final (cuBLAS: the call and its stream's "
              "synchronisation), called in turns in one process, column-major NN, medians. Error: the "
              "largest |c − c64| / (|c64| + 10⁻³) over C against an FP64 reference; `error ×`: "
              "tiledblas's over cuBLAS's.", ""]
    if d.has("api"):
        lines += [table(head, api_rows(d, "api")), ""]
    if d.has("api-random"):
        lines += ["### Shapes drawn at random", ""] + api_summary(d, "api-random")
        lines += [table(head, api_rows(d, "api-random")), ""]
    if d.has("api-tensor"):
        lines += ["### Tensor math", "",
                  "The same with `TILEDBLAS_MATH=tensor`: tiledblas on the tensor cores at FP32-level accuracy, "
                  "against cuBLAS's FP32 SGEMM.", "", table(head, api_rows(d, "api-tensor")), ""]
    if d.has("api-tensor-ops"):
        lines += ["Every transpose, row-major (the kernel sees each of its four operand orders), with "
                  "`TILEDBLAS_MATH=tensor`:", "",
                  table(["M×N×K", "op", "tiledblas ms", "cuBLAS ms", "× cuBLAS"], api_ops_rows(d, "api-tensor-ops"),
                        ["l", "l", "r", "r", "r"]), ""]
    return lines


def api_ops_rows(d, step):
    """Per shape and layout-transpose: tiledblas and cuBLAS on device pointers."""
    rows = []
    for r in d.select(step=step, variant="tiledblas", op=None):
        theirs = d.one(step, "cublas", r["shape"], op=r["op"])
        rows.append([shape_name(r["shape"]), r["op"], fmt_ms(r["ms"] if r["ms"] > 0 else None),
                     fmt_ms(val(theirs, "ms")), fmt_ratio(r["ratio"])])
    return rows


def openblas_label(env):
    core = core_name(env)
    return f"OpenBLAS ({core})" if core != "unknown" else "OpenBLAS"


def e2e_rows(d):
    """The GPU path and auto mode against OpenBLAS, each ratio from its own step."""
    rows = []
    for s in OrderedDict.fromkeys(d.shapes("e2e-gpu") + d.shapes("e2e-8192") + d.shapes("e2e-auto")):
        gpu, auto = d.default_gpu(s), d.one("e2e-auto", "tiledblas:auto", s)
        ob = d.one("e2e-gpu", "openblas", s) or d.one("e2e-auto", "openblas", s)
        rows.append([shape_name(s), fmt_ms(val(gpu, "ms")), fmt_tflops(val(gpu, "tflops")),
                     fmt_ms(val(auto, "ms")), fmt_ms(val(ob, "ms")), fmt_tflops(val(ob, "tflops")),
                     fmt_ratio(val(gpu, "ratio")), fmt_ratio(val(auto, "ratio"))])
    return rows


def nvblas_rows(d):
    def row(s):
        ours, nv = d.one("e2e-nvblas", "tiledblas:gpu", s), d.one("e2e-nvblas", "nvblas", s)
        return [shape_name(s), fmt_ms(val(ours, "ms")), fmt_ms(val(nv, "ms")), fmt_tflops(val(nv, "tflops")),
                fmt_ratio(val(ours, "ratio"))]
    return [row(s) for s in d.shapes("e2e-nvblas")]


def numpy_rows(d):
    def row(s):
        alone, ours = d.one("numpy", "numpy alone", s), d.one("numpy", "numpy + tiledblas", s)
        return [shape_name(s), fmt_ms(val(alone, "ms")), fmt_tflops(val(alone, "tflops")), fmt_ms(val(ours, "ms")),
                fmt_tflops(val(ours, "tflops")), fmt_ratio(val(ours, "ratio"))]
    return [row(s) for s in d.shapes("numpy")]


def beta_rows(d):
    def row(s):
        zero, one = d.one("e2e-beta", "tiledblas:gpu beta=0", s), d.one("e2e-beta", "tiledblas:gpu", s)
        return [shape_name(s), fmt_ms(val(zero, "ms")), fmt_ms(val(one, "ms")),
                fmt_ratio(zero and one and one["ms"] / zero["ms"])]
    return [row(s) for s in d.shapes("e2e-beta")]


def pageable_rows(d):
    def row(s):
        plain, ours = d.one("e2e-pageable", "tiledblas:gpu", s), d.default_gpu(s)
        return [shape_name(s), fmt_ms(val(plain, "ms")), fmt_ms(val(ours, "ms")),
                fmt_ratio(plain and ours and plain["ms"] / ours["ms"])]
    return [row(s) for s in d.shapes("e2e-pageable")]


def copy_steps(d):
    """The e2e-copyN steps, by thread count."""
    steps = OrderedDict.fromkeys(r["step"] for r in d.rows if r["step"].startswith("e2e-copy"))
    return sorted(steps, key=lambda s: int(s[len("e2e-copy"):] or 0))


def copy_rows(d):
    steps = copy_steps(d)
    rows = []
    for s in OrderedDict.fromkeys(s for step in steps for s in d.shapes(step)):
        rows.append([shape_name(s)] + [fmt_ms(val(d.one(step, "tiledblas:gpu", s), "ms")) for step in steps]
                    + [fmt_ms(val(d.default_gpu(s), "ms"))])
    return rows


def thread_rows(d):
    def row(s):
        alone = d.one("e2e-threads", "tiledblas:gpu", s)
        together = ([r for r in d.select(step="e2e-threads", shape=s) if " x" in r["variant"]] or [None])[-1]
        return [shape_name(s), fmt_ms(val(alone, "ms")), together["variant"].rsplit(" x", 1)[1] if together else "–",
                fmt_ms(val(together, "ms")), fmt_ratio(val(together, "ratio"))]
    return [row(s) for s in d.shapes("e2e-threads")]


def tensor_e2e_rows(d):
    """Host to host: the FP32 math (its own steps) and the tensor math, by size."""
    def row(s):
        fp32, tensor = d.default_gpu(s), d.one("e2e-tensor", "tiledblas:gpu", s)
        return [shape_name(s), fmt_ms(val(fp32, "ms")), fmt_tflops(val(fp32, "tflops")), fmt_ms(val(tensor, "ms")),
                fmt_tflops(val(tensor, "tflops")), fmt_ratio(fp32 and tensor and fp32["ms"] / tensor["ms"])]
    return [row(s) for s in d.shapes("e2e-tensor")]


def section_e2e(d):
    env = d.env
    lines = ["## cblas_sgemm host to host", ""]
    if not any(r["mode"] == "e2e" for r in d.rows):
        return lines + [not_measured("host-to-host calls", "bench"), ""]
    lines += ["What an application sees: `cblas_sgemm` on host memory, row-major NN, transfers "
              "included. `gpu`: `TILEDBLAS_DEVICE=gpu`; `auto`: the default mode. Each × is against "
              f"the reference timed in the same step: {openblas_label(env)} here, NVBLAS below.", ""]
    rows = e2e_rows(d)
    if rows:
        lines += [table(["size", "gpu ms", "gpu TFLOP/s", "auto ms", "OpenBLAS ms", "OpenBLAS TFLOP/s",
                         "gpu × OpenBLAS", "auto × OpenBLAS"], rows), ""]
    lines += subsection("Against NVBLAS", nvblas_rows(d),
                        ["size", "tiledblas gpu ms", "NVBLAS ms", "NVBLAS TFLOP/s", "× NVBLAS"],
                        "NVIDIA's NVBLAS on the same host buffers, configured as its documentation advises "
                        "(see Method).", "NVBLAS")
    lines += subsection("Tensor math", tensor_e2e_rows(d),
                        ["size", "FP32 ms", "FP32 TFLOP/s", "tensor ms", "tensor TFLOP/s", "tensor × FP32"],
                        "`TILEDBLAS_MATH=tensor` against the default FP32 math, `TILEDBLAS_DEVICE=gpu`, each from "
                        "its own step: how much of the faster kernel the pipeline lets through.", "tensor math")
    lines += subsection("beta = 1", beta_rows(d), ["size", "beta = 0 ms", "beta = 1 ms", "time beta = 1 / beta = 0"],
                        "`C = AB + C` reads C from the host as well; the two alternate call by call.")
    lines += subsection("The plain-copy baseline", pageable_rows(d),
                        ["size", "pageable copies ms", "default ms", "default × pageable"],
                        "What a straightforward GPU SGEMM does: `cudaMemcpy` from pageable memory, one kernel, "
                        "copy back (`TILEDBLAS_PINNED_MB=0`), against the default pinned, pipelined path "
                        "(the gpu column above, another step of the same run).", "pageable copies")
    lines += subsection("Host copy threads", copy_rows(d),
                        ["size"] + [f"{step[len('e2e-copy'):]} threads" for step in copy_steps(d)] + ["default"],
                        "The pool that copies between pageable memory and pinned staging, with fewer threads "
                        "than its default (every usable CPU, at most 16); ms per call.", "copy threads")
    lines += subsection("Threads calling at once", thread_rows(d),
                        ["size", "alone ms", "threads", "together ms per call", "throughput ×"],
                        "Several threads calling at once, each on its own C, against the same calls made one "
                        "at a time in the same rounds: time per call, and the throughput ratio.",
                        "threads calling at once")
    lines += subsection("numpy", numpy_rows(d),
                        ["size", "numpy alone ms", "TFLOP/s", "preloaded ms", "TFLOP/s", "× numpy alone"],
                        "A float32 `a @ b` as a numpy user runs it (`bench/numpy_matmul.py`): the numpy of the "
                        "machine's `python3` on its own BLAS, and the same with `LD_PRELOAD=libtiledblas.so`, "
                        "processes in turns; host arrays in, host array out.", "numpy", steps="numpy")
    return lines + ["![cblas_sgemm host to host](plots/e2e.png)", ""]


def section_timeline(d):
    lines = ["## Where the time of one call goes", ""]
    if not d.has("timeline"):
        return lines + [not_measured("the stages of one call", "bench"), ""]
    shapes = d.shapes("timeline")
    lines += ["Each stage of the pipelined host path timed alone on the same bytes, against the "
              "whole call (`TILEDBLAS_DEVICE=gpu`). `1t`/`Nt`: host copies on one thread and on the "
              "library's pool. `serial sum`: the stages one after another at the pool's thread count; "
              "`bound`: the largest of the host copies together, either DMA and the kernel, which no "
              "overlap can beat. Cells: ms (share of the call).", ""]
    rows = []
    for v in d.variants("timeline"):
        cells = [v]
        for s in shapes:
            r = d.one("timeline", v, s)
            cells.append(f"{fmt_ms(r['ms'])} ({fmt_ratio(r['ratio'])})" if r else "–")
        rows.append(cells)
    lines += [table(["stage"] + [shape_name(s) for s in shapes], rows), ""]
    lines += ["![Stages of one call](plots/timeline.png)", ""]
    return lines


def policy_cases(d, step):
    """(shape, op) -> {variant: row} for one --policy step, in the run's order."""
    cases = OrderedDict()
    for r in d.select(step=step, op=None):
        variant = r["variant"].split(":")[-1]  # tiledblas:auto, tiledblas:gpu, openblas
        cases.setdefault((r["shape"], r["op"]), {})[variant] = r
    return cases


def policy_count(cases):
    met = [k for k, v in cases.items() if "auto" in v and (v["auto"]["ratio"] or 0) >= TARGET]
    below = [(k, v["auto"]["ratio"]) for k, v in cases.items()
             if "auto" in v and (v["auto"]["ratio"] or 0) < TARGET]
    return len(met), len(cases), below


def case_name(key):
    shape, op = key
    return shape_name(shape) + ("" if op == "row NN" else f" {op}")


def section_policy(d):
    env = d.env
    lines = ["## Auto mode: the CPU or the GPU", ""]
    if not d.has("policy"):
        return lines + [not_measured("auto mode", "policy"), ""]
    spinning, parked = policy_cases(d, "policy"), policy_cases(d, "policy-parked")
    summary = []
    large = policy_cases(d, "policy-large")
    for label, cases in (("OpenBLAS's threads spinning after a call (its default)", spinning),
                         ("OpenBLAS's threads parked after each call (`OPENBLAS_THREAD_TIMEOUT=4`)", parked),
                         ("Large sizes, against the forced GPU alone", large)):
        if not cases:
            continue
        met, total, below = policy_count(cases)
        line = f"- {label}: auto reaches {TARGET} of the faster forced path in **{met} of {total}** cases"
        if below:
            line += "; below: " + ", ".join(f"{case_name(k)} {fmt_ratio(x)}" for k, x in below)
        summary.append(line + ".")
    lines += [f"`TILEDBLAS_DEVICE=auto` against the GPU path forced and {openblas_label(env)} alone, "
              "host memory, interleaved in one process. `auto ÷ faster`: auto's speed over the faster "
              "forced path's.", ""] + summary + [""]
    rows = []
    for key, v in spinning.items():
        gpu, ob, auto = v.get("gpu"), v.get("openblas"), v.get("auto")
        faster = "–"
        if gpu and ob and gpu["ms"] > 0 and ob["ms"] > 0:
            faster = "GPU" if gpu["ms"] < ob["ms"] else "OpenBLAS"
        p = parked.get(key, {}).get("auto")
        rows.append([case_name(key), fmt_ms(ob and ob["ms"]), fmt_ms(gpu and gpu["ms"]), faster,
                     fmt_ms(auto and auto["ms"]), fmt_ratio(auto and auto["ratio"]),
                     fmt_ratio(p and p["ratio"]) if parked else "–"])
    lines += [table(["shape", "OpenBLAS ms", "GPU ms", "faster", "auto ms", "auto ÷ faster",
                     "parked: auto ÷ faster"], rows, ["l", "r", "r", "l", "r", "r", "r"]), ""]
    if large:
        rows = []
        for key, v in large.items():
            gpu, auto = v.get("gpu"), v.get("auto")
            rows.append([case_name(key), fmt_ms(gpu and gpu["ms"]), fmt_ms(auto and auto["ms"]),
                         fmt_ratio(auto and auto["ratio"])])
        lines += ["Large sizes, auto against the forced GPU alone:", "",
                  table(["shape", "GPU ms", "auto ms", "auto ÷ GPU"], rows), ""]
    lines += ["![Auto mode against each path forced](plots/policy.png)", ""]
    return lines


def headline(d):
    env = d.env
    parts = []
    k = d.one("kernels", "best", LADDER_SHAPE)
    if k:
        parts.append(f"the default kernel runs at {fmt_tflops(k['tflops'])} TFLOP/s at 4096³ on device "
                     f"memory, {fmt_ratio(k['ratio'])}× cuBLAS")
    h = d.default_gpu(LADDER_SHAPE)
    if h:
        text = f"`cblas_sgemm` host to host at 4096³ takes {fmt_ms(h['ms'])} ms ({fmt_tflops(h['tflops'])} TFLOP/s)"
        extra = []
        if h["ratio"]:
            extra.append(f"{fmt_ratio(h['ratio'])}× {openblas_label(env)}")
        nv = d.one("e2e-nvblas", "tiledblas:gpu", LADDER_SHAPE)
        if nv and nv["ratio"]:
            extra.append(f"{fmt_ratio(nv['ratio'])}× NVBLAS")
        parts.append(text + (", " + " and ".join(extra) if extra else ""))
    if not parts:
        return []
    return [f"On {gpu_name(env)}, " + "; ".join(parts) + ".", ""]


def performance_md(d, source):
    lines = [f"<!-- generated by bench/report.py from {source}/bench.csv and {source}/environment.txt; "
             "do not edit by hand -->", "",
             "# Performance", "",
             "What tiledblas's SGEMM achieves, measured by one run of `bench/suite.sh` and drawn from its "
             "CSV by `bench/report.py`. To measure your own machine, run the command under "
             "Experiment details.", ""]
    lines += headline(d)
    for section in (section_method, section_details, section_kernels, section_api, section_accuracy,
                    section_e2e, section_timeline, section_policy):
        lines += section(d)
    while lines and lines[-1] == "":
        lines.pop()
    return "\n".join(wrap("\n".join(lines).split("\n"))) + "\n"


# ---- plots ----------------------------------------------------------------------

def grouped(rows, key_x, key_series, value):
    """x values in order, and series -> {x: value}; the last row wins for a repeated point."""
    xs = list(OrderedDict.fromkeys(key_x(r) for r in rows))
    series = OrderedDict()
    for r in rows:
        series.setdefault(key_series(r), {})[key_x(r)] = value(r)
    return xs, series


def bars(ax, xs, series, ylabel):
    width = 0.8 / max(1, len(series))
    for i, (name, points) in enumerate(series.items()):
        pos = [j + (i - (len(series) - 1) / 2) * width for j in range(len(xs))]
        ax.bar(pos, [points.get(x, 0.0) for x in xs], width, label=name)
    ax.set_xticks(range(len(xs)))
    ax.set_xticklabels(xs, rotation=30, ha="right")
    ax.set_ylabel(ylabel)
    ax.set_yscale("log")
    # Ticks at 1, 2 and 5 of each decade, written as plain numbers: a log axis readable at a glance.
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))


def save(fig, path):
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)


def chart(path, xs, series, ylabel, title, width=12, line=None):
    fig, ax = plt.subplots(figsize=(width, 5))
    bars(ax, xs, series, ylabel)
    if line:
        ax.axhline(line, color="black", linewidth=0.8, linestyle="--")
    ax.set_title(title)
    save(fig, path)


def plot_ladder(d, path):
    rows = [r for r in d.select(step="kernels") if r["tflops"] > 0]
    if not rows:
        return False
    xs, series = grouped(rows, lambda r: shape_name(r["shape"]),
                         lambda r: {"cublas": "cuBLAS", "cublas-tf32": "cuBLAS TF32"}.get(r["variant"], r["variant"]),
                         lambda r: r["tflops"])
    chart(path, xs, series, "TFLOP/s (log)",
          f"SGEMM kernels on device memory, row-major NN, {gpu_name(d.env)} (CUDA events, medians)", width=10)
    return True


def plot_e2e(d, path):
    picks = (("e2e-gpu", "tiledblas:gpu", "tiledblas, GPU path"),
             ("e2e-8192", "tiledblas:gpu", "tiledblas, GPU path"),
             ("e2e-auto", "tiledblas:auto", "tiledblas, auto mode"),
             ("e2e-gpu", "openblas", openblas_label(d.env)),
             ("e2e-nvblas", "nvblas", "NVBLAS"),
             ("e2e-pageable", "tiledblas:gpu", "GPU, pageable copies"))
    rows = []
    for step, variant, label in picks:
        rows += [dict(r, label=label) for r in d.select(step=step, variant=variant) if r["tflops"] > 0]
    if not rows:
        return False
    rows.sort(key=lambda r: [int(x) for x in r["shape"].split("x")])  # stable: the series keep their order
    xs, series = grouped(rows, lambda r: shape_name(r["shape"]), lambda r: r["label"], lambda r: r["tflops"])
    series = OrderedDict((label, series[label]) for _, _, label in picks if label in series)
    chart(path, xs, series, "TFLOP/s (log)",
          f"cblas_sgemm, host memory in and out, row-major NN, {gpu_name(d.env)} (wall clock, medians)")
    return True


def plot_policy(d, path):
    rows = [r for step in ("policy", "policy-parked", "policy-large")
            for r in d.select(step=step, op=None) if r["ratio"]]
    if not rows:
        return False
    names = {"auto": "auto", "gpu": "GPU forced", "openblas": "OpenBLAS alone"}

    def label(r):
        """The large sizes continue the default series; the parked run is its own."""
        return names.get(r["variant"].split(":")[-1], r["variant"]) + (
            ", OpenBLAS threads parked" if r["step"] == "policy-parked" else "")

    xs, series = grouped(rows, lambda r: case_name((r["shape"], r["op"])), label, lambda r: r["ratio"])
    chart(path, xs, series, "speed / faster forced path's (log)",
          "auto mode against OpenBLAS alone and the forced GPU, interleaved in one process (medians)",
          width=14, line=TARGET)
    return True


def plot_timeline(d, path):
    rows = [r for r in d.select(step="timeline") if r["ms"] > 0]
    if not rows:
        return False
    xs, series = grouped(rows, lambda r: shape_name(r["shape"]), lambda r: r["variant"], lambda r: r["ms"])
    chart(path, xs, series, "ms (log)", "Stages of one host-to-host call, each timed alone, against the call")
    return True


# ---- generated blocks in files written by hand ------------------------------------

def replace_block(path, name, body_lines):
    """Puts body_lines between the block's marker lines; False (with a warning) when it cannot."""
    begin, end = f"<!-- BEGIN generated:{name} -->", f"<!-- END generated:{name} -->"
    if not os.path.exists(path):
        warn(f"{path} not found: its generated:{name} block is not written")
        return False
    with open(path) as f:
        lines = f.read().split("\n")
    starts = [i for i, l in enumerate(lines) if l.strip() == begin]
    ends = [i for i, l in enumerate(lines) if l.strip() == end]
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        warn(f"{path}: no single {begin} ... {end} pair: block not written")
        return False
    new = lines[:starts[0] + 1] + body_lines + lines[ends[0]:]
    if new != lines:
        with open(path, "w") as f:
            f.write("\n".join(new))
    return True


def block_lines(path, name):
    """The current lines between a block's markers (empty when absent)."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        lines = f.read().split("\n")
    begin, end = f"<!-- BEGIN generated:{name} -->", f"<!-- END generated:{name} -->"
    try:
        i = [l.strip() for l in lines].index(begin)
        j = [l.strip() for l in lines].index(end)
    except ValueError:
        return []
    return lines[i + 1:j]


def readme_block(d):
    env = d.env
    rows = []
    for s in ("2048x2048x2048", "4096x4096x4096", "8192x8192x8192"):
        h = d.default_gpu(s)
        if not h:
            continue
        nv = d.one("e2e-nvblas", "tiledblas:gpu", s)
        rows.append([f"host to host, {shape_name(s)}", fmt_ms(h["ms"]), fmt_tflops(h["tflops"]),
                     fmt_ratio(h["ratio"]), fmt_ratio(nv and nv["ratio"]), "–"])
    for s in (LADDER_SHAPE, "8192x8192x8192"):
        k = d.one("kernels", "best", s)
        if k:
            rows.append([f"kernel on device memory, {shape_name(s)}", fmt_ms(k["ms"]), fmt_tflops(k["tflops"]),
                         "–", "–", fmt_ratio(k["ratio"])])
    for s in (LADDER_SHAPE, "8192x8192x8192"):
        k = d.one("kernels", "tf32x3", s)
        if k:
            rows.append([f"kernel on device memory, {shape_name(s)}, tensor math", fmt_ms(k["ms"]),
                         fmt_tflops(k["tflops"]), "–", "–", fmt_ratio(k["ratio"])])
    if not rows:
        return ["Not measured yet: run `bench/suite.sh`, then `python3 bench/report.py suite-out`."]
    lines = [f"{gpu_name(env)}, `{reproduce(env)}`; SGEMM row-major NN, tiledblas "
             f"on its GPU path, each × against a reference timed in the same run, "
             f"{openblas_label(env)} as the CPU baseline. Method and every table: "
             "[docs/PERFORMANCE.md](docs/PERFORMANCE.md).", "",
             table(["SGEMM", "ms", "TFLOP/s", "× OpenBLAS", "× NVBLAS", "× cuBLAS"], rows)]
    if openblas_caution(env):
        lines += ["", "The OpenBLAS of this run did not use its best kernels for the CPU: "
                  "the × OpenBLAS figures are overstated (see docs/PERFORMANCE.md)."]
    return lines


def split_row(line):
    cells = line.strip().strip("|").split("|")
    return [c.strip() for c in cells]


def kernel_value(cell):
    """The TILEDBLAS_KERNEL value of a cell: its first `code` span, else its first word."""
    if "`" in cell:
        parts = cell.split("`")
        if len(parts) >= 3:
            return parts[1].strip()
    return cell.split()[0] if cell.split() else ""


def ladder_block(d, current):
    """The block anew: the lines before its table kept, the table's last two columns and the
    line after it from the data."""
    env = d.env
    cublas = d.one("kernels", "cublas", LADDER_SHAPE)
    table_lines = [l for l in current if l.strip().startswith("|")]
    first = next((i for i, l in enumerate(current) if l.strip().startswith("|")), 0)
    intro = current[:first]
    rows = []
    if len(table_lines) >= 2:
        header = split_row(table_lines[0])
        col = next((i for i, c in enumerate(header) if "TILEDBLAS_KERNEL" in c), 3)
        for line in table_lines[2:]:
            cells = split_row(line)
            cells += [""] * (4 - len(cells))
            kept = cells[:4]
            value = kernel_value(cells[col]) if col < len(cells) else ""
            r = d.one("kernels", value, LADDER_SHAPE)
            if not r:
                warn(f"kernels/README.md: no 4096³ kernels row for TILEDBLAS_KERNEL '{value}'")
            rows.append(kept + [fmt_tflops(r and r["tflops"]), fmt_ratio(r and r["ratio"])])
        head = (header + [""] * 4)[:4] + LADDER_HEADER[4:]
    else:
        warn("kernels/README.md: no table in the generated:ladder block; one is seeded from the CSV "
             "with empty file and idea columns")
        head = LADDER_HEADER
        for i, v in enumerate(x for x in d.variants("kernels") if x != "cublas"):
            r = d.one("kernels", v, LADDER_SHAPE)
            rows.append([str(i), "", "", f"`{v}`", fmt_tflops(r and r["tflops"]), fmt_ratio(r and r["ratio"])])
    lines = intro + [table(head, rows, ["l", "l", "l", "l", "r", "r"]), ""]
    if cublas:
        version = env_get(env, "cublas", "")
        lines.append(f"Measured on {gpu_name(env)}: device memory, row-major NN, median of "
                     f"CUDA-event timings, against cuBLAS{' ' + version if version else ''} "
                     f"({fmt_tflops(cublas['tflops'])} TFLOP/s) in the same run; `{reproduce(env)}`. "
                     "All sizes: [docs/PERFORMANCE.md](../docs/PERFORMANCE.md).")
    else:
        lines.append("Not measured in this run: `bench/suite.sh --steps \"bench\"`.")
    return lines


# ---- main -------------------------------------------------------------------------

# What describes one run of the suite but not the product it measured: when, at which revision of the
# tree, under which time limit, and how the steps were split over invocations.
UNDOCUMENTED = ("date", "commit", "deadline")


def documented(key, value):
    """An environment.txt value as the documents show it, or None for a key they leave out."""
    if key in UNDOCUMENTED:
        return None
    return value.split(" (this run:")[0] if key == "steps" else value


def copy_result(src, dst):
    """A result file into the tree, environment.txt as documented() shows it."""
    with open(src) as f:
        lines = f.readlines()
    if os.path.basename(src) == "environment.txt":
        kept = []
        for line in lines:
            key, _, value = line.rstrip("\n").partition(": ")
            shown = documented(key.strip(), value)
            if shown is not None:
                kept.append(f"{key}: {shown}\n" if value else line)
        lines = kept
    with open(dst, "w") as f:
        f.writelines(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     usage="python3 bench/report.py [--repo DIR] RESULTS_DIR")
    parser.add_argument("results", metavar="RESULTS_DIR", help="holds bench.csv and environment.txt")
    parser.add_argument("--repo", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        help="the checkout to write into (default: the one holding this script)")
    args = parser.parse_args()

    repo = os.path.abspath(args.repo)
    results = os.path.join(repo, RESULTS)
    given = os.path.abspath(args.results)
    for name in ("bench.csv", "environment.txt"):  # both, so that the data and its description match
        if not os.path.exists(os.path.join(given, name)):
            sys.exit(f"report.py: {os.path.join(given, name)} not found")
    for name in ("bench.csv", "environment.txt"):
        src = os.path.join(given, name)
        if os.path.realpath(given) != os.path.realpath(results):
            os.makedirs(results, exist_ok=True)
            copy_result(src, os.path.join(results, name))
            print(f"copied {src} to {RESULTS}/{name}")

    d = Data(read_rows(os.path.join(results, "bench.csv")),
             read_environment(os.path.join(results, "environment.txt")))
    if not d.rows:
        sys.exit(f"report.py: {RESULTS}/bench.csv has no rows")

    written = []
    plots = os.path.join(repo, PLOTS)
    os.makedirs(plots, exist_ok=True)
    for name, plot in (("ladder", plot_ladder), ("e2e", plot_e2e), ("policy", plot_policy),
                       ("timeline", plot_timeline)):
        path = os.path.join(plots, f"{name}.png")
        if plot(d, path):
            written.append(f"{PLOTS}/{name}.png")
        elif os.path.exists(path):
            os.remove(path)  # a plot of an earlier run's data would contradict the tables
            print(f"removed {PLOTS}/{name}.png (not measured in this run)")

    with open(os.path.join(repo, "docs", "PERFORMANCE.md"), "w") as f:
        f.write(performance_md(d, RESULTS))
    written.append("docs/PERFORMANCE.md")

    readme = os.path.join(repo, "README.md")
    if replace_block(readme, README_BLOCK, wrap(readme_block(d))):
        written.append("README.md (generated:performance)")
    ladder = os.path.join(repo, "kernels", "README.md")
    if os.path.exists(ladder) and replace_block(ladder, LADDER_BLOCK,
                                                wrap(ladder_block(d, block_lines(ladder, LADDER_BLOCK)))):
        written.append("kernels/README.md (generated:ladder)")
    elif not os.path.exists(ladder):
        warn(f"{ladder} not found: its generated:{LADDER_BLOCK} block is not written")
    print("wrote:", ", ".join(written))


if __name__ == "__main__":
    main()
