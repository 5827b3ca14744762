"""Whole kernels as users write them: vector add and a row-wise fused softmax."""
import numpy as np
import pytest

import tessel as triton
import tessel.language as tl

f16, f32 = np.float16, np.float32


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@pytest.mark.parametrize("n", [1, 1000, 4097, 2**18 + 3])
@pytest.mark.parametrize("dt", [f32, f16, np.int32], ids=["f32", "f16", "i32"])
def test_vector_add(rand, dt, n):
    x = rand(n, dt, -1000, 1000)
    y = rand(n, dt, -1000, 1000)
    out = np.empty(n, dt)
    add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, out, n, BLOCK=1024)
    np.testing.assert_array_equal(out, x + y)


@triton.jit
def softmax_kernel(in_ptr, out_ptr, n_cols, in_row_stride, out_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    # Padding lanes read -inf: they do not change the max and contribute exp(-inf) = 0.
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=float("-inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    y = e / tl.sum(e, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def _softmax_ref(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize(
    "shape", [(1, 1), (37, 127), (8, 1000), (5, 4096), (3, 8192)], ids=lambda s: f"{s[0]}x{s[1]}"
)
@pytest.mark.parametrize("dt", [f32, f16], ids=["f32", "f16"])
def test_softmax(rand, dt, shape):
    rows, cols = shape
    # A row slice of a wider array: the input row stride differs from the row length.
    x = rand((rows, cols + 3), dt, -10, 10)[:, 2 : cols + 2]
    out = np.empty((rows, cols), dt)
    block = triton.next_power_of_2(cols)
    softmax_kernel[(rows,)](x, out, cols, x.strides[0] // x.itemsize, out.strides[0] // out.itemsize, BLOCK=block)
    tol = 1e-5 if dt == f32 else 2e-3
    np.testing.assert_allclose(out, _softmax_ref(x), rtol=tol, atol=tol / cols)
    np.testing.assert_allclose(out.astype(np.float64).sum(axis=1), 1.0, rtol=tol * 5)
