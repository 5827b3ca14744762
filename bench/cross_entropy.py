"""Cross-entropy loss per row (logsumexp of the logits minus the target's), fp32 logits: effective GB/s (one read
of the logits) against numpy and torch's `cross_entropy(reduction="none")`. The outputs are one float per row:
each side allocates or not as it likes, at no cost worth counting.
"""
import numpy as np

import tessel as triton
import tessel.language as tl

from .common import Report, measure, optional_torch, row_shapes

NAME = "cross_entropy"


@triton.jit
def cross_entropy_kernel(x_ptr, target_ptr, loss_ptr, stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n, other=-float("inf"))
    m = tl.max(x, axis=0)
    lse = m + tl.log(tl.sum(tl.exp(x - m), axis=0))
    target = tl.load(target_ptr + row)
    tl.store(loss_ptr + row, lse - tl.load(x_ptr + row * stride + target))


def tessel_cross_entropy(x, target, loss):
    rows, cols = x.shape
    cross_entropy_kernel[(rows,)](x, target, loss, x.strides[0] // x.itemsize, cols,
                                  BLOCK=triton.next_power_of_2(cols))


def numpy_cross_entropy(x, target, loss, tmp):
    m = x.max(axis=1)
    np.subtract(x, m[:, None], out=tmp)
    np.exp(tmp, out=tmp)
    np.log(tmp.sum(axis=1), out=loss)
    loss += m
    loss -= x[np.arange(x.shape[0]), target]


def run(quick: bool) -> Report:
    torch = optional_torch()
    impls = ["tessel", "numpy"] + (["torch"] if torch else [])
    report = Report(NAME, "GB/s", "rows x cols", impls)
    shapes = row_shapes(quick)
    rng = np.random.default_rng(0)
    for rows, cols in shapes:
        x = rng.standard_normal((rows, cols), dtype=np.float32) * 4
        target = rng.integers(0, cols, rows).astype(np.int64)
        loss = np.empty(rows, np.float32)
        tessel_cross_entropy(x, target, loss)
        x64 = x.astype(np.float64)
        m = x64.max(axis=1)
        want = m + np.log(np.exp(x64 - m[:, None]).sum(axis=1)) - x64[np.arange(rows), target]
        label = f"{rows}x{cols}"
        np.testing.assert_allclose(loss, want, rtol=1e-5, atol=1e-5, err_msg=f"cross entropy {label}")
        report.checked(label)
        if quick:
            continue
        nloss, tmp = np.empty(rows, np.float32), np.empty_like(x)
        timings = {
            "tessel": measure(lambda: tessel_cross_entropy(x, target, loss)),
            "numpy": measure(lambda: numpy_cross_entropy(x, target, nloss, tmp)),
        }
        if torch:
            tx, tt = torch.from_numpy(x), torch.from_numpy(target)
            got = torch.nn.functional.cross_entropy(tx, tt, reduction="none")
            np.testing.assert_allclose(got.numpy(), loss, rtol=1e-5, atol=1e-5, err_msg=f"torch cross entropy {label}")
            timings["torch"] = measure(lambda: torch.nn.functional.cross_entropy(tx, tt, reduction="none"))
        report.add(label, x.nbytes, timings)
    return report
