"""Layer norm forward, fp32 (Triton's tutorial 05 kernel): effective GB/s (one read and one write of the matrix)
against numpy and torch.

Like with like, as bench.softmax: every side writes into outputs allocated once (Tessel's kernel as it is, numpy
with out= arguments, torch through aten's `native_layer_norm.out`), the mean and 1/std of each row included.
`torch_alloc` is `torch.nn.functional.layer_norm`, which allocates its output on each call: from 2048 columns up
aten's out= variant is the slower of the two by up to 10x, below it the faster.
"""
import numpy as np

import tessel as triton

from .common import Report, measure, optional_torch, row_shapes
from .gpu_static_kernels import layer_norm_fwd

NAME = "layer_norm"
EPS = 1e-5


def tessel_layer_norm(x, w, b, y, mean, rstd):
    rows, cols = x.shape
    # The tutorial's block: the whole row up to 64 KiB, a loop over blocks beyond.
    block = min(65536 // x.itemsize, triton.next_power_of_2(cols))
    layer_norm_fwd[(rows,)](x, y, w, b, mean, rstd, x.strides[0] // x.itemsize, cols, EPS, BLOCK_SIZE=block)


def numpy_layer_norm(x, w, b, y, mean, rstd, tmp):
    np.mean(x, axis=1, out=mean)
    np.subtract(x, mean[:, None], out=y)
    np.multiply(y, y, out=tmp)
    np.mean(tmp, axis=1, out=rstd)
    rstd += EPS
    np.sqrt(rstd, out=rstd)
    np.reciprocal(rstd, out=rstd)
    y *= rstd[:, None]
    y *= w
    y += b


def run(quick: bool) -> Report:
    torch = optional_torch()
    impls = ["tessel", "numpy"] + (["torch", "torch_alloc"] if torch else [])
    report = Report(NAME, "GB/s", "rows x cols", impls)
    shapes = row_shapes(quick, quick_widest=20000)
    rng = np.random.default_rng(0)
    for rows, cols in shapes:
        x = rng.standard_normal((rows, cols), dtype=np.float32) * 3 + 1
        w = rng.standard_normal(cols, dtype=np.float32)
        b = rng.standard_normal(cols, dtype=np.float32)
        y, mean, rstd = np.empty_like(x), np.empty(rows, np.float32), np.empty(rows, np.float32)
        tessel_layer_norm(x, w, b, y, mean, rstd)
        x64 = x.astype(np.float64)
        m64 = x64.mean(axis=1, keepdims=True)
        r64 = 1 / np.sqrt(((x64 - m64) ** 2).mean(axis=1, keepdims=True) + EPS)
        label = f"{rows}x{cols}"
        np.testing.assert_allclose(mean, m64[:, 0], rtol=1e-5, atol=1e-5, err_msg=f"layer norm mean {label}")
        np.testing.assert_allclose(rstd, r64[:, 0], rtol=1e-5, err_msg=f"layer norm rstd {label}")
        np.testing.assert_allclose(y, (x64 - m64) * r64 * w + b, rtol=1e-4, atol=1e-4, err_msg=f"layer norm {label}")
        report.checked(label)
        if quick:
            continue
        ny, nm, nr, tmp = np.empty_like(x), np.empty(rows, np.float32), np.empty(rows, np.float32), np.empty_like(x)
        timings = {
            "tessel": measure(lambda: tessel_layer_norm(x, w, b, y, mean, rstd)),
            "numpy": measure(lambda: numpy_layer_norm(x, w, b, ny, nm, nr, tmp)),
        }
        if torch:
            tx, tw, tb = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b)
            ty, tm, tr = torch.empty(x.shape), torch.empty(rows, 1), torch.empty(rows, 1)

            def torch_layer_norm():
                torch.ops.aten.native_layer_norm.out(tx, [cols], tw, tb, EPS, out0=ty, out1=tm, out2=tr)

            torch_layer_norm()
            np.testing.assert_allclose(ty.numpy(), y, rtol=1e-4, atol=1e-4, err_msg=f"torch layer norm {label}")
            timings["torch"] = measure(torch_layer_norm)
            timings["torch_alloc"] = measure(lambda: torch.nn.functional.layer_norm(tx, (cols,), tw, tb, EPS))
        report.add(label, 2 * x.nbytes, timings)
    return report
