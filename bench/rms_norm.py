"""RMS norm forward, fp32: effective GB/s (one read and one write of the matrix) against numpy and torch.

torch's `rms_norm` has no out= variant, so Tessel and torch both allocate their outputs on each call with torch's
allocator (`torch.empty_like`, as Triton's tutorials do); numpy writes into arrays allocated once.
"""
import numpy as np

import tessel as triton
import tessel.language as tl

from .common import Report, measure, optional_torch, row_shapes

NAME = "rms_norm"
EPS = 1e-6


@triton.jit
def rms_norm_kernel(x_ptr, y_ptr, w_ptr, rstd_ptr, stride, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
    rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / n + eps)
    tl.store(rstd_ptr + row, rstd)
    w = tl.load(w_ptr + cols, mask=mask)
    tl.store(y_ptr + row * stride + cols, x * rstd * w, mask=mask)


def tessel_rms_norm(x, w, y, rstd):
    rows, cols = x.shape
    rms_norm_kernel[(rows,)](x, y, w, rstd, cols, cols, EPS, BLOCK=triton.next_power_of_2(cols))
    return y


def numpy_rms_norm(x, w, y, rstd, tmp):
    np.multiply(x, x, out=tmp)
    np.mean(tmp, axis=1, out=rstd)
    rstd += EPS
    np.sqrt(rstd, out=rstd)
    np.reciprocal(rstd, out=rstd)
    np.multiply(x, rstd[:, None], out=y)
    y *= w


def run(quick: bool) -> Report:
    torch = optional_torch()
    impls = ["tessel", "numpy"] + (["torch"] if torch else [])
    report = Report(NAME, "GB/s", "rows x cols", impls)
    shapes = row_shapes(quick)
    rng = np.random.default_rng(0)
    for rows, cols in shapes:
        x = rng.standard_normal((rows, cols), dtype=np.float32)
        w = rng.standard_normal(cols, dtype=np.float32)
        y, rstd = np.empty_like(x), np.empty(rows, np.float32)
        tessel_rms_norm(x, w, y, rstd)
        x64 = x.astype(np.float64)
        r64 = 1 / np.sqrt((x64 * x64).mean(axis=1) + EPS)
        label = f"{rows}x{cols}"
        np.testing.assert_allclose(rstd, r64, rtol=1e-5, err_msg=f"rms norm rstd {label}")
        np.testing.assert_allclose(y, x64 * r64[:, None] * w, rtol=1e-5, atol=1e-5, err_msg=f"rms norm {label}")
        report.checked(label)
        if quick:
            continue
        ny, nr, tmp = np.empty_like(x), np.empty(rows, np.float32), np.empty_like(x)
        timings = {"numpy": measure(lambda: numpy_rms_norm(x, w, ny, nr, tmp))}
        if torch:
            tx, tw = torch.from_numpy(x), torch.from_numpy(w)
            ty = torch.nn.functional.rms_norm(tx, (cols,), tw, EPS)
            np.testing.assert_allclose(ty.numpy(), y, rtol=1e-5, atol=1e-5, err_msg=f"torch rms norm {label}")
            timings["tessel"] = measure(lambda: tessel_rms_norm(tx, tw, torch.empty_like(tx), torch.empty(rows)))
            timings["torch"] = measure(lambda: torch.nn.functional.rms_norm(tx, (cols,), tw, EPS))
        else:
            timings["tessel"] = measure(lambda: tessel_rms_norm(x, w, y, rstd))
        report.add(label, 2 * x.nbytes, timings)
    return report
