"""Every reduction over every power-of-two block shape up to 256 x 256 and every axis, with many random inputs each,
against numpy.

Float max/min once gave wrong values for about 40% of inputs on some of these shapes (LLVM's loop vectorizer
miscompiled loops carrying several maxnum reductions): a reduction's lowering depends on the shape (partial lanes
along a contiguous axis, chunk loops), so every shape is tried, not a sample.
"""
import numpy as np
import pytest
import torch

import tessel as triton
import tessel.language as tl

SIZES = [2**k for k in range(9)]  # 1 .. 256
# A simulated GPU compiles each shape through ptxas and runs it warp by warp: there, each row count is tried with
# every other column count (1, 4, 16, 64, 256).
GPU_COLUMNS = SIZES[::2]
SEEDS = 8


@triton.jit
def _reduce_all_1d(x_ptr, sum_ptr, max_ptr, min_ptr, argmax_ptr, argmin_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.store(sum_ptr, tl.sum(x, 0))
    tl.store(max_ptr, tl.max(x, 0))
    tl.store(min_ptr, tl.min(x, 0))
    tl.store(argmax_ptr, tl.argmax(x, 0))
    tl.store(argmin_ptr, tl.argmin(x, 0))


@triton.jit
def _reduce_all_2d(x_ptr, sum_ptr, max_ptr, min_ptr, argmax_ptr, argmin_ptr,
                   M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr):
    m = tl.arange(0, M)
    n = tl.arange(0, N)
    x = tl.load(x_ptr + m[:, None] * N + n[None, :])
    if AXIS == 0:
        out = n
    else:
        out = m
    tl.store(sum_ptr + out, tl.sum(x, AXIS))
    tl.store(max_ptr + out, tl.max(x, AXIS))
    tl.store(min_ptr + out, tl.min(x, AXIS))
    tl.store(argmax_ptr + out, tl.argmax(x, AXIS))
    tl.store(argmin_ptr + out, tl.argmin(x, AXIS))


def _inputs(rng, shape, dtype):
    """Random values exactly representable in `dtype` (the array passed, and float64 copy for the reference). Ties
    are likely for small types: argmax/argmin then answer the first index, as numpy and Triton's default
    tie_break_left do."""
    if dtype == "bf16":
        x = torch.from_numpy(rng.standard_normal(shape).astype(np.float32)).to(torch.bfloat16)
        return x, x.double().numpy()
    if np.dtype(dtype).kind == "f":
        x = rng.standard_normal(shape).astype(dtype)
    else:
        x = rng.integers(-1000, 1000, size=shape).astype(dtype)
    return x, x.astype(np.float64)


def _check(rng, shape, axis, dtype):
    is_bf16 = dtype == "bf16"
    out_len = 1 if len(shape) == 1 else shape[1 - axis]
    for _ in range(SEEDS):
        x, ref = _inputs(rng, shape, dtype)
        # max/min of types narrower than 32 bits come back in fp32 (Triton's rule); the sum in the input's type.
        value_dtype = np.float32 if is_bf16 else np.dtype(dtype)
        outs = [np.zeros(out_len, value_dtype) for _ in range(3)] + [np.zeros(out_len, np.int32) for _ in range(2)]
        if is_bf16:
            outs[0] = torch.zeros(out_len, dtype=torch.bfloat16)
        if len(shape) == 1:
            _reduce_all_1d[(1,)](x, *outs, N=shape[0])
        else:
            _reduce_all_2d[(1,)](x, *outs, M=shape[0], N=shape[1], AXIS=axis)
        total = outs[0].float().numpy() if is_bf16 else outs[0]
        where = f"shape {shape}, axis {axis}, dtype {dtype}"
        np.testing.assert_array_equal(outs[1], ref.max(axis).astype(value_dtype), err_msg="max: " + where)
        np.testing.assert_array_equal(outs[2], ref.min(axis).astype(value_dtype), err_msg="min: " + where)
        np.testing.assert_array_equal(outs[3], ref.argmax(axis), err_msg="argmax: " + where)
        np.testing.assert_array_equal(outs[4], ref.argmin(axis), err_msg="argmin: " + where)
        if np.dtype(value_dtype).kind == "f":
            # Summation order differs from numpy's: bound the error by (count) x (rounding) x (magnitudes summed).
            eps = 2.0**-8 if is_bf16 else np.finfo(value_dtype).eps
            bound = shape[axis] * eps * np.abs(ref).sum(axis)
            assert np.all(np.abs(total - ref.sum(axis)) <= bound), "sum: " + where
        else:
            np.testing.assert_array_equal(total, ref.sum(axis).astype(value_dtype), err_msg="sum: " + where)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bf16", "int32"])
@pytest.mark.parametrize("n", SIZES)
def test_1d(rng, n, dtype):
    _check(rng, (n,), 0, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bf16", "int32"])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("m", SIZES)
def test_2d(rng, m, axis, dtype, target):
    # One test per row count: every column count runs in it (a test each would be 648 tests).
    for n in SIZES if target.startswith("cpu") else GPU_COLUMNS:
        _check(rng, (m, n), axis, dtype)


@triton.jit
def _max_min_nan(x_ptr, max_ptr, min_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.store(max_ptr, tl.max(x, 0))
    tl.store(min_ptr, tl.min(x, 0))


@pytest.mark.parametrize("n", [16, 64, 128, 256])
def test_max_min_ignore_nan(rng, n):
    """tl.max/tl.min ignore NaN inputs unless every input is NaN, as Triton's maxnum/minnum-based reductions do."""
    for count in (1, 3, n - 1, n):
        x = rng.standard_normal(n).astype(np.float32)
        x[rng.choice(n, count, replace=False)] = np.nan
        mx, mn = np.zeros(1, np.float32), np.zeros(1, np.float32)
        _max_min_nan[(1,)](x, mx, mn, N=n)
        np.testing.assert_array_equal(mx[0], np.fmax.reduce(x))
        np.testing.assert_array_equal(mn[0], np.fmin.reduce(x))
