#!/usr/bin/env python3
"""Summarise the pipeline traces of TILEDBLAS_VERBOSE=3 (src/pipeline_trace.c).

usage: pipeline_trace.py TRACE [TRACE...]   (stderr of a program run with TILEDBLAS_VERBOSE=3)

For the last two calls of each file: when the first kernel started and the
last one ended, how long some kernel was running (the union of the kernels'
spans, on every stream), the gaps between them, each whole panel's kernel
span, and the host's time per stage. The first panels (computed over pieces
of K) are those below 4, the pipeline's slots.
"""
import re
import sys
from collections import defaultdict

LINE = re.compile(r"tiledblas: pipeline\s+([\d.]+)\s+([\d.]+) ms (gpu |host) (.*) (\d+)$")
FIRST_PANELS = 4


DROPPED = re.compile(r"tiledblas: pipeline: (\d+) more stages not traced")


def calls(path):
    """The traced calls of a file: lists of (begin, end, where, what, index); a call starts at 0."""
    found, current = [], []
    for line in open(path):
        dropped = DROPPED.match(line)
        if dropped:
            print(f"{path}: warning: a call lost {dropped.group(1)} stages; its summary is incomplete")
        m = LINE.match(line.rstrip())
        if not m:
            continue
        begin, end = float(m.group(1)), float(m.group(2))
        if current and begin < current[-1][0] - 1.0:
            found.append(current)
            current = []
        current.append((begin, end, m.group(3).strip(), m.group(4), int(m.group(5))))
    if current:
        found.append(current)
    return found


def busy_and_gaps(spans):
    """Union length of sorted (begin, end) spans, and the gaps between them."""
    busy, gaps, begin, end = 0.0, [], None, None
    for b, e in spans:
        if end is None:
            begin, end = b, e
        elif b > end:
            busy += end - begin
            gaps.append((end, b - end))
            begin, end = b, e
        else:
            end = max(end, e)
    return busy + (end - begin if end is not None else 0.0), gaps


def summarise(call):
    kernels = sorted((s for s in call if s[3] == "kernel panel"), key=lambda s: s[0])
    if not kernels:
        print(f"  call {max(s[1] for s in call):.2f} ms: no kernel traced")
        return
    busy, gaps = busy_and_gaps([(s[0], s[1]) for s in kernels])
    print(f"  call {max(s[1] for s in call):.2f} ms: kernels from {kernels[0][0]:.3f} to "
          f"{max(s[1] for s in kernels):.3f}, running {busy:.2f}, gaps {sum(g for _, g in gaps):.3f}")
    print("  gaps over 20 us (at, ms):", [(round(at, 2), round(g, 3)) for at, g in gaps if g > 0.02])
    first = [s for s in kernels if s[4] < FIRST_PANELS]
    if first:
        print(f"  first panels: {len(first)} kernels, {first[0][0]:.2f}-{max(s[1] for s in first):.2f} ms")
    for s in kernels:
        if s[4] >= FIRST_PANELS:
            print(f"   panel {s[4]}: {s[0]:.2f}-{s[1]:.2f} ({s[1] - s[0]:.2f} ms)")
    host = defaultdict(float)
    for s in call:
        if s[2] == "host":
            host[s[3]] += s[1] - s[0]
    print("  host ms:", {what: round(ms, 2) for what, ms in host.items()})


def main(paths):
    for path in paths:
        found = calls(path)
        print(f"{path}: {len(found)} calls traced")
        for call in found[-2:]:
            summarise(call)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
