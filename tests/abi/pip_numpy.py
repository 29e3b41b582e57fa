"""float32 products through pip's numpy and SciPy, each one SGEMM call of
their bundled OpenBLAS (scipy_-prefixed names), compared with float64 products
element-wise within 2 (K + 2) eps (|A| |B|)_ij; float64 routines checked too.

    pip_numpy.py            the products: one line each, then the float64
                            checks, and last "pip_numpy: all N products OK",
                            N being the number of SGEMM calls made
    pip_numpy.py large      a 4096 x 4096 float32 product, once to warm up,
                            then timed: "pip_numpy: large 4096: median X ms
                            of R", then "pip_numpy: all R+1 products OK"

Exits 1 on any mismatch, 2 where numpy is not pip's (no scipy-openblas)."""
import sys
import time

import numpy as np
import scipy
import scipy.linalg
from scipy.linalg import blas

rng = np.random.default_rng(2029)
EPS32 = float(np.finfo(np.float32).eps)
EPS64 = float(np.finfo(np.float64).eps)


def uniform(*shape):
    return rng.uniform(-1.0, 1.0, size=shape).astype(np.float32)


def within_bound(c, a, b, alpha=1.0):
    """c against alpha a b in float64, element-wise within 2 (K + 2) eps |alpha| (|A| |B|)."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    exact = alpha * np.matmul(a64, b64)
    bound = 2 * (a.shape[-1] + 2) * EPS32 * abs(alpha) * np.matmul(np.abs(a64), np.abs(b64))
    return c.dtype == np.float32 and c.shape == exact.shape and bool(np.all(np.abs(c - exact) <= bound))


class Tally:
    def __init__(self):
        self.calls = 0
        self.failed = 0

    def product(self, name, calls, c, a, b, alpha=1.0):
        """One result of `calls` SGEMM calls, checked against a b."""
        ok = within_bound(c, a, b, alpha)
        self.calls += calls
        self.failed += not ok
        print(f"pip_numpy: {name} {'x'.join(map(str, c.shape))} K={a.shape[-1]}: {'OK' if ok else 'MISMATCH'}")

    def check(self, name, ok):
        self.failed += not ok
        print(f"pip_numpy: {name}: {'OK' if ok else 'MISMATCH'}")


def blas_name():
    """The BLAS numpy was built with, as numpy 2 records it."""
    try:
        return np.__config__.CONFIG["Build Dependencies"]["blas"]["name"]
    except (AttributeError, KeyError, TypeError):
        return "unknown"


def float32_products(tally):
    # Distinct buffers for every operand: a @ a.T would go to ssyrk, not SGEMM;
    # no dimension of 1, which numpy sends to sgemv.
    a, b = uniform(64, 48), uniform(48, 80)
    tally.product("C @ C", 1, a @ b, a, b)
    fa, fb = np.asfortranarray(uniform(200, 300)), np.asfortranarray(uniform(300, 150))
    tally.product("F @ F", 1, fa @ fb, fa, fb)
    fb2 = np.asfortranarray(uniform(48, 96))
    tally.product("C @ F", 1, a @ fb2, a, fb2)
    at, b2 = uniform(300, 120).T, uniform(300, 90)
    tally.product("a.T @ b", 1, at @ b2, at, b2)
    a3, bt = uniform(77, 129), uniform(65, 129).T
    tally.product("a @ b.T", 1, a3 @ bt, a3, bt)
    at2, bt2 = uniform(33, 17).T, uniform(40, 33).T
    tally.product("a.T @ b.T", 1, at2 @ bt2, at2, bt2)
    a4, b4 = uniform(513, 257), uniform(257, 130)
    tally.product("C @ C", 1, a4 @ b4, a4, b4)
    # A stack of four products: one SGEMM each.
    sa, sb = uniform(4, 32, 16), uniform(4, 16, 24)
    tally.product("stacked @", 4, sa @ sb, sa, sb)
    tally.product("np.dot", 1, np.dot(a4, b4), a4, b4)
    # einsum with optimize=True contracts through tensordot, a reshaped SGEMM.
    ta, tb = uniform(8, 16, 24), uniform(24, 20)
    tally.product("einsum ijk,kl->ijl", 1, np.einsum("ijk,kl->ijl", ta, tb, optimize=True), ta, tb)
    # Three operands: two contractions, two SGEMMs.
    ea, eb, ec = uniform(30, 40), uniform(40, 50), uniform(50, 20)
    chain = np.einsum("ij,jk,kl->il", ea, eb, ec, optimize=True)
    ab = ea.astype(np.float64) @ eb.astype(np.float64)
    exact = ab @ ec.astype(np.float64)
    bound = 2 * (40 + 50 + 4) * EPS32 * (np.abs(ea.astype(np.float64)) @ np.abs(eb.astype(np.float64))
                                         @ np.abs(ec.astype(np.float64)))
    tally.calls += 2
    tally.check("einsum ij,jk,kl->il 30x20", chain.dtype == np.float32 and bool(np.all(np.abs(chain - exact) <= bound)))
    # SciPy's Fortran SGEMM wrapper, plain and with op(A) = A^T.
    sa2, sb2 = np.asfortranarray(uniform(45, 35)), np.asfortranarray(uniform(35, 55))
    tally.product("scipy sgemm", 1, blas.sgemm(1.5, sa2, sb2), sa2, sb2, alpha=1.5)
    st = np.asfortranarray(uniform(35, 45))
    tally.product("scipy sgemm trans_a", 1, blas.sgemm(-0.5, st, sb2, trans_a=1), st.T, sb2, alpha=-0.5)


def float64_routines(tally):
    a, b = rng.uniform(-1, 1, (150, 170)), rng.uniform(-1, 1, (170, 90))
    # The definition, without BLAS (einsum without optimize loops in C).
    exact = np.einsum("ik,kj->ij", a, b, optimize=False)
    bound = 2 * (170 + 2) * EPS64 * np.einsum("ik,kj->ij", np.abs(a), np.abs(b), optimize=False)
    tally.check("float64 matmul 150x90 K=170", bool(np.all(np.abs(a @ b - exact) <= bound)))
    m = rng.uniform(-1, 1, (120, 120)) + 120 * np.eye(120)
    rhs = rng.uniform(-1, 1, (120, 3))
    x = np.linalg.solve(m, rhs)
    residual = np.max(np.abs(m @ x - rhs)) / (np.max(np.abs(m)) * np.max(np.abs(x)) * 120)
    tally.check("float64 np.linalg.solve 120", residual <= 10 * EPS64)
    s_in = rng.uniform(-1, 1, (80, 60))
    u, s, vt = scipy.linalg.svd(s_in, full_matrices=False)
    error = np.max(np.abs((u * s) @ vt - s_in)) / (np.max(s) * 80)
    orthogonal = np.max(np.abs(u.T @ u - np.eye(60))) <= 100 * 80 * EPS64
    tally.check("float64 scipy.linalg.svd 80x60", error <= 10 * EPS64 and orthogonal and bool(np.all(np.diff(s) <= 0)))


def large(tally, repeats=5):
    a, b = uniform(4096, 4096), uniform(4096, 4096)
    c = a @ b
    # Checked on a sample of rows: the float64 product of the whole is too slow here.
    rows = rng.choice(4096, size=16, replace=False)
    tally.product("large 4096 (16 rows checked)", 1, c[rows], a[rows], b)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - start)
    tally.calls += repeats
    print(f"pip_numpy: large 4096: median {1e3 * float(np.median(times)):.1f} ms of {repeats}, "
          f"first {1e3 * times[0]:.1f} ms")


def main():
    print(f"pip_numpy: numpy {np.__version__} ({blas_name()}), scipy {scipy.__version__}")
    if not np.__version__.startswith(("2.", "3.")) or "scipy-openblas" not in blas_name():
        print("pip_numpy: not pip's numpy 2 with scipy-openblas")
        return 2
    tally = Tally()
    if sys.argv[1:] == ["large"]:
        large(tally)
    else:
        float32_products(tally)
        float64_routines(tally)
    if tally.failed:
        print(f"pip_numpy: {tally.failed} checks MISMATCH")
        return 1
    print(f"pip_numpy: all {tally.calls} products OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
