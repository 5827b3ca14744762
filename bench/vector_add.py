"""Vector add, fp32: GB/s (two reads and one write per element) against numpy and torch.

numpy's add already runs at memory bandwidth for large arrays, so the target is
parity there; small sizes show launch overhead.
"""
import numpy as np

import tessel as triton
import tessel.language as tl

from .common import Report, measure, optional_torch

NAME = "vector_add"
BLOCK = 1024  # what Triton users typically write; the compiler is meant to make it fast


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def tessel_add(x, y, out):
    add_kernel[(triton.cdiv(x.size, BLOCK),)](x, y, out, x.size, BLOCK=BLOCK)


def run(quick: bool) -> Report:
    torch = optional_torch()
    impls = ["tessel", "numpy"] + (["torch"] if torch else [])
    report = Report(NAME, "GB/s", "elements", impls)
    sizes = [1, 1000, 2**12 + 3] if quick else [2**k for k in range(12, 27)]
    rng = np.random.default_rng(0)
    for n in sizes:
        x = rng.standard_normal(n, dtype=np.float32)
        y = rng.standard_normal(n, dtype=np.float32)
        out = np.empty_like(x)
        ref = np.empty_like(x)
        tessel_add(x, y, out)
        np.add(x, y, out=ref)
        np.testing.assert_array_equal(out, ref, err_msg=f"vector add, n={n}")
        report.checked(str(n))
        if quick:
            continue
        timings = {
            "tessel": measure(lambda: tessel_add(x, y, out)),
            "numpy": measure(lambda: np.add(x, y, out=ref)),
        }
        if torch:
            tx, ty, tout = torch.from_numpy(x), torch.from_numpy(y), torch.from_numpy(ref)
            timings["torch"] = measure(lambda: torch.add(tx, ty, out=tout))
        report.add(f"2^{n.bit_length() - 1}", 3 * n * x.itemsize, timings)
    return report
