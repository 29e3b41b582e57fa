#!/usr/bin/env python3
"""Writes the symbol lists (blas.txt, cblas.txt, lapack.txt, openblas.txt) from the
dynamic exports of installed libraries: the reference BLAS and CBLAS (Debian keeps
both in blas/libblas.so.3), the reference LAPACK, and OpenBLAS for its extensions.
Run once when a list must change; the lists are kept in the tree.

    compat/abi/extract.py [LIBDIR]      (default /usr/lib/x86_64-linux-gnu)
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# OpenBLAS's public additions that programs call: thread and configuration
# control, and its BLAS-like extensions (axpby, matrix copies, min/max/sum).
OPENBLAS_PUBLIC = re.compile(
    r"^(openblas_(set|get)_num_threads_?|openblas_get_num_procs_?|openblas_get_config"
    r"|openblas_get_corename|openblas_get_parallel_?|openblas_(set|get)affinity"
    r"|goto_set_num_threads|goto_get_num_procs"
    r"|(cblas_)?[sdcz](axpby|omatcopy|imatcopy|geadd|gemm3m)_?"
    r"|(cblas_)?i?[sdcz]{1,2}(amin|amax|min|max|sum)_?"
    r"|cblas_[cz]dot[cu])$")


def exports(path):
    out = subprocess.run(["nm", "-D", "--defined-only", path], check=True,
                         capture_output=True, text=True).stdout
    names = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 3:
            names[fields[2]] = fields[1]
    return names


def write(name, header, rows):
    with open(os.path.join(HERE, name), "w") as f:
        f.write(header)
        f.write("# name interface\n")
        for row in sorted(rows):
            f.write(" ".join(row) + "\n")


def main():
    libdir = sys.argv[1] if len(sys.argv) > 1 else "/usr/lib/x86_64-linux-gnu"
    blas = exports(os.path.join(libdir, "blas/libblas.so.3"))
    lapack = exports(os.path.join(libdir, "lapack/liblapack.so.3"))
    openblas = exports(os.path.join(libdir, "libopenblas.so.0"))
    functions = lambda table: {n for n, kind in table.items() if kind in "TW"}

    fortran_blas = {n for n in functions(blas) if not n.startswith("cblas_")}
    cblas = {n for n in functions(blas) if n.startswith("cblas_")}
    fortran_lapack = {n for n in functions(lapack) if not n.startswith("_")} - fortran_blas
    extensions = {n for n in functions(openblas) if OPENBLAS_PUBLIC.match(n)}
    extensions -= fortran_blas | cblas | fortran_lapack

    iface = lambda n: "cblas" if n.startswith("cblas_") else ("c" if not n.endswith("_") else "fortran")
    write("blas.txt", "# The reference BLAS, levels 1-3 and auxiliaries (blas/libblas.so.3).\n",
          [(n, "fortran") for n in fortran_blas])
    write("cblas.txt", "# The reference CBLAS (blas/libblas.so.3).\n",
          [(n, "cblas") for n in cblas])
    write("lapack.txt", "# The reference LAPACK's Fortran interface (lapack/liblapack.so.3).\n",
          [(n, "fortran") for n in fortran_lapack])
    write("openblas.txt", "# OpenBLAS's public extensions (libopenblas.so.0).\n",
          [(n, iface(n)) for n in extensions])


if __name__ == "__main__":
    main()
