#!/usr/bin/env python3
"""The library exports exactly the names of the symbol lists (compat/abi), the
SGEMM names of every convention, the error handlers, the reference CBLAS's two
globals and the tiledblas_* functions; tiledblas_abi_exported() and
tiledblas_abi_forwarded() count them; and every forwarded name's code is
endbr64 and the one indirect jump through its slot.

    check_exports.py LIBRARY ABI_DIR
"""
import ctypes
import os
import subprocess
import sys

library, abi_dir = sys.argv[1:3]
failures = []


def names(path):
    with open(os.path.join(abi_dir, path)) as f:
        return [line.split()[0] for line in f if line.strip() and not line.startswith("#")]


listed = set()
interfaces = {}
for name in ("blas.txt", "cblas.txt", "lapack.txt", "openblas.txt"):
    with open(os.path.join(abi_dir, name)) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                routine, interface = line.split()[:2]
                listed.add(routine)
                interfaces[routine] = interface
# The 64-bit spellings of every CBLAS and Fortran routine: OpenBLAS's and the reference's.
for routine, interface in interfaces.items():
    if interface == "cblas":
        listed |= {routine + "64_", routine + "_64"}
    elif interface == "fortran":
        listed.add(routine + "64_")
sgemm_names = {"cblas_sgemm", "sgemm_", "cblas_sgemm64_", "sgemm_64_", "cblas_sgemm_64", "scipy_cblas_sgemm",
               "scipy_sgemm_", "scipy_cblas_sgemm64_", "scipy_sgemm_64_"}
handlers = {"xerbla_", "xerbla_64_", "cblas_xerbla"}

exported = {}
for line in subprocess.run(["nm", "-D", "--defined-only", library], check=True, capture_output=True,
                           text=True).stdout.splitlines():
    address, kind, name = line.split()
    exported[name] = (kind, int(address, 16))
functions = {n for n, (kind, _) in exported.items() if kind in "TW" and not n.startswith("tiledblas_")}
data = {n for n, (kind, _) in exported.items() if kind not in "TW"}

expected = listed | sgemm_names | handlers
if functions != expected:
    failures.append("exported functions differ from the lists: missing %s, extra %s"
                    % (sorted(expected - functions)[:10], sorted(functions - expected)[:10]))
if data != {"RowMajorStrg", "CBLAS_CallFromC"}:
    failures.append("exported data: %s" % sorted(data))

lib = ctypes.CDLL(library)
own = sgemm_names | handlers
if lib.tiledblas_abi_exported() != len(expected):
    failures.append("tiledblas_abi_exported() = %d, expected %d" % (lib.tiledblas_abi_exported(), len(expected)))
if lib.tiledblas_abi_forwarded() != len(expected - own):
    failures.append("tiledblas_abi_forwarded() = %d, expected %d"
                    % (lib.tiledblas_abi_forwarded(), len(expected - own)))

# A forwarder is `endbr64` (f3 0f 1e fa, an indirect branch's landing pad under CET), then
# `jmp *slot(%rip)`: ff 25 and a 32-bit displacement, at the symbol's address.
FORWARDER = b"\xf3\x0f\x1e\xfa\xff\x25"
with open(library, "rb") as f:
    image = f.read()
segments = subprocess.run(["readelf", "-lW", library], check=True, capture_output=True, text=True).stdout


def file_offset(address):
    for line in segments.splitlines():
        fields = line.split()
        if fields and fields[0] == "LOAD":
            offset, vaddr, filesz = int(fields[1], 16), int(fields[2], 16), int(fields[4], 16)
            if vaddr <= address < vaddr + filesz:
                return address - vaddr + offset
    return None


not_jumps = [n for n in sorted(expected - own)
             if image[file_offset(exported[n][1]):file_offset(exported[n][1]) + len(FORWARDER)] != FORWARDER]
if not_jumps:
    failures.append("%d forwarded names are not one indirect jump, e.g. %s" % (len(not_jumps), not_jumps[:5]))

for failure in failures:
    print("FAIL:", failure)
if failures:
    sys.exit(1)
print("ok: %d names exported, %d forwarded" % (len(expected), len(expected - own)))
