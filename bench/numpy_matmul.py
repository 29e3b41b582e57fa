#!/usr/bin/env python3
"""numpy's float32 matmul end to end: numpy alone against numpy with libtiledblas.so preloaded.

    numpy_matmul.py LIBRARY [--sizes 2048,4096,8192] [--reps 5] [--rounds 2] [--csv FILE]

Each measurement is a process of its own (the preload cannot change inside one): the two
run in turns, --rounds times, each timing --reps products after one to warm up, from
numpy arrays in host memory to the result in host memory, as a numpy user sees it. The
median over every rep of a variant is reported, with the ratio numpy alone / preloaded.
Preloaded, the calls are traced (TILEDBLAS_VERBOSE=2) and the path they took is counted.
The error is the largest |c - c64| / (|a||b|)_ij over 16 rows, against float64.
CSV rows have the columns of tiledblas-bench's (bench.csv): step numpy, mode e2e.
"""
import argparse
import os
import re
import subprocess
import sys

CHILD = r"""
import sys, time, numpy as np
n, reps = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(n)
a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
c = a @ b
rows = rng.choice(n, size=16, replace=False)
exact = a[rows].astype(np.float64) @ b.astype(np.float64)
scale = np.abs(a[rows]).astype(np.float64) @ np.abs(b).astype(np.float64)
error = float(np.max(np.abs(c[rows] - exact) / scale))
times = []
for _ in range(reps):
    start = time.perf_counter()
    a @ b
    times.append(time.perf_counter() - start)
blas = np.__config__.CONFIG["Build Dependencies"]["blas"]
print("numpy", np.__version__, blas.get("name"), blas.get("version"))
print("error", error)
print("times", " ".join(repr(t) for t in times))
"""


def run(n, reps, preload):
    env = dict(os.environ)
    if preload:
        env["LD_PRELOAD"] = preload
        env["TILEDBLAS_VERBOSE"] = "2"
    done = subprocess.run([sys.executable, "-c", CHILD, str(n), str(reps)], env=env,
                          capture_output=True, text=True, check=True)
    out = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
    paths = re.findall(r"^tiledblas: sgemm .* path=(\w+)", done.stderr, re.M)
    return out["numpy"], float(out["error"]), [float(t) for t in out["times"].split()], paths


def median(values):
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else 0.5 * (values[mid - 1] + values[mid])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("library")
    parser.add_argument("--sizes", default="2048,4096,8192")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--csv")
    args = parser.parse_args()
    library = os.path.abspath(args.library)
    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        times = {"numpy alone": [], "numpy + tiledblas": []}
        errors = {name: 0.0 for name in times}
        paths = {}
        for _ in range(args.rounds):
            for name, preload in (("numpy alone", None), ("numpy + tiledblas", library)):
                numpy_id, error, took, traced = run(n, args.reps, preload)
                times[name] += took
                errors[name] = max(errors[name], error)
                for path in traced:
                    paths[path] = paths.get(path, 0) + 1
        alone = median(times["numpy alone"])
        print(f"{numpy_id}: {n}^3 float32 matmul, end to end")
        for name, took in times.items():
            ms = 1e3 * median(took)
            gflops = 2.0 * n ** 3 / median(took) / 1e9
            ratio = alone / median(took)
            print(f"  {name:18s} {ms:9.1f} ms  {gflops / 1e3:6.2f} TFLOP/s  x{ratio:5.2f}  "
                  f"error {errors[name]:.2e}")
            rows.append(f"numpy,e2e,{n}x{n}x{n},row NN,{name},{ms:.6g},{gflops:.6g},{ratio:.6g},"
                        f"{errors[name]:.3g},{len(took)},\"ok\",")
        print("  preloaded calls by path: " + (", ".join(f"{p} {c}" for p, c in sorted(paths.items()))
                                              or "none traced"))
    if args.csv:
        with open(args.csv, "w") as f:
            f.write("mode,shape,op,variant,median_ms,gflops,ratio,error,reps,status,error_median\n")
            f.write("\n".join(row.split(",", 1)[1] for row in rows) + "\n")


if __name__ == "__main__":
    main()
