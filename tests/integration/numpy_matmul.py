"""float32 matrix products through numpy's BLAS (one cblas_sgemm each),
plain and on transposed views, compared with float64 products element-wise
within 2 (K + 2) eps (|A| |B|)_ij. Prints one line per product and a last line
"preload_numpy: all N products OK"; exits 1 on any mismatch."""
import sys

import numpy as np

rng = np.random.default_rng(2024)


def uniform(rows, cols):
    return rng.uniform(-1.0, 1.0, size=(rows, cols)).astype(np.float32)


def check(name, a, b):
    c = a @ b
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    exact = a64 @ b64
    k = a.shape[1]
    bound = 2 * (k + 2) * np.finfo(np.float32).eps * (np.abs(a64) @ np.abs(b64))
    ok = c.dtype == np.float32 and bool(np.all(np.abs(c - exact) <= bound))
    print(f"preload_numpy: {name} {a.shape[0]}x{b.shape[1]}x{k}: {'OK' if ok else 'MISMATCH'}")
    return ok


# Distinct buffers for every operand: a.T @ a would go to syrk, not gemm.
products = [
    ("a @ b", uniform(64, 48), uniform(48, 80)),
    ("a @ b", uniform(200, 300), uniform(300, 150)),
    ("a.T @ b", uniform(300, 120).T, uniform(300, 90)),
    ("a @ b.T", uniform(77, 129), uniform(65, 129).T),
    ("a.T @ b.T", uniform(33, 17).T, uniform(40, 33).T),
    ("a @ b", uniform(513, 257), uniform(257, 130)),
    ("a @ b", uniform(1024, 1024), uniform(1024, 1024)),
]
passed = sum(check(name, a, b) for name, a, b in products)
if passed != len(products):
    print(f"preload_numpy: {len(products) - passed} of {len(products)} products MISMATCH")
    sys.exit(1)
print(f"preload_numpy: all {len(products)} products OK")
