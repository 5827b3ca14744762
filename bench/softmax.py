"""Row-wise softmax, fp32: effective GB/s (one read and one write of the matrix)
against numpy and torch.softmax.

The fused kernel reads each row once and keeps it in registers/cache for the max,
the exponentials and the sum; numpy makes several passes over memory, so the
target is well above numpy and at least torch.

Like with like: every implementation allocates its output on each call (Tessel
with np.empty_like, as Triton's tutorial does with torch.empty_like), because
numpy and torch.softmax do. Past tens of MB each fresh output is newly mapped
memory whose page faults every side pays.
"""
import numpy as np

import tessel as triton
import tessel.language as tl

from .common import Report, measure, optional_torch

NAME = "softmax"
ROWS = 4096


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * out_row_stride + cols, e / tl.sum(e, axis=0), mask=mask)


def tessel_softmax(x, out):
    rows, cols = x.shape
    softmax_kernel[(rows,)](x, out, cols, x.strides[0] // x.itemsize, out.strides[0] // out.itemsize,
                            BLOCK=triton.next_power_of_2(cols))


def numpy_softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def run(quick: bool) -> Report:
    torch = optional_torch()
    impls = ["tessel", "numpy"] + (["torch"] if torch else [])
    report = Report(NAME, "GB/s", "rows x cols", impls)
    shapes = [(1, 1), (3, 100), (5, 1000), (2, 8192)] if quick else [(ROWS, 2**k) for k in range(7, 14)]
    rng = np.random.default_rng(0)
    for rows, cols in shapes:
        x = rng.standard_normal((rows, cols), dtype=np.float32)
        out = np.empty_like(x)
        tessel_softmax(x, out)
        np.testing.assert_allclose(out, numpy_softmax(x.astype(np.float64)), rtol=1e-5, atol=1e-7,
                                   err_msg=f"softmax {rows}x{cols}")
        label = f"{rows}x{cols}"
        report.checked(label)
        if quick:
            continue
        timings = {
            "tessel": measure(lambda: tessel_softmax(x, np.empty_like(x))),
            "numpy": measure(lambda: numpy_softmax(x)),
        }
        if torch:
            tx = torch.from_numpy(x)
            timings["torch"] = measure(lambda: torch.softmax(tx, dim=1))
        report.add(label, 2 * x.nbytes, timings)
    return report
