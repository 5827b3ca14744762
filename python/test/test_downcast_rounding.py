"""`x.to(dtype, fp_downcast_rounding="rtz")` on every target: narrowing float conversions rounded toward zero, against
references built from every value of the narrow type (fp16, bf16) or exact rationals (fp64 to fp32); Triton's errors
where the rounding mode does not apply."""
from fractions import Fraction

import numpy as np
import pytest

import tessel as triton
import tessel.language as tl


@triton.jit
def _narrow(x_ptr, y_ptr, N: tl.constexpr, DST: tl.constexpr, ROUNDING: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs).to(DST, fp_downcast_rounding=ROUNDING))


def _toward_zero_table(values: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The value of largest magnitude among `values` (a narrow type's finite non-negative values, as float64) not
    above |x|, with x's sign; infinities and NaN as they are."""
    finite = np.sort(values[np.isfinite(values)])
    mag = np.abs(x.astype(np.float64))
    index = np.searchsorted(finite, mag, side="right") - 1
    out = np.copysign(finite[np.clip(index, 0, None)], x)
    return np.where(np.isfinite(x), out, x.astype(np.float64))


def _inputs(rng, dtype, n=1024):
    x = np.concatenate([rng.standard_normal(n // 4) * 10.0 ** rng.integers(-8, 8, n // 4),
                        rng.uniform(-70000, 70000, n // 4),
                        rng.uniform(-1e-6, 1e-6, n // 4),
                        rng.uniform(-1, 1, n // 4) * 3e38]).astype(dtype)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 65504.0, 65519.0, 65520.0, 1e9, -1e9, 1 + 2**-11,
                         1 + 3 * 2**-12, 2**-24, 2**-25, 3 * 2**-26, -(2**-24) * 1.5, 1.0 / 3, -2.0 / 3], dtype)
    x[:len(specials)] = specials
    return x


def test_fp32_to_fp16_toward_zero(rng):
    x = _inputs(rng, np.float32)
    y = np.zeros(len(x), np.float16)
    _narrow[(1,)](x, y, len(x), tl.float16, "rtz")
    every = np.arange(0x7C01, dtype=np.uint16).view(np.float16).astype(np.float64)  # +0 .. +inf
    want = _toward_zero_table(every, x).astype(np.float16)
    np.testing.assert_array_equal(y.view(np.uint16)[~np.isnan(x)], want.view(np.uint16)[~np.isnan(x)])
    assert np.isnan(y[np.isnan(x)]).all()
    # The default (and "rtne") is round to nearest even: numpy's conversion.
    _narrow[(1,)](x, y, len(x), tl.float16, "rtne")
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(y[~np.isnan(x)], x[~np.isnan(x)].astype(np.float16))


def test_fp32_to_bf16_toward_zero(rng):
    x = _inputs(rng, np.float32)
    out = np.zeros(len(x), np.float32)
    _to_bf16_and_back[(1,)](x, out, len(x))
    every = (np.arange(0x7F81, dtype=np.uint32) << 16).view(np.float32).astype(np.float64)  # +0 .. +inf
    want = _toward_zero_table(every, x).astype(np.float32)
    np.testing.assert_array_equal(out[~np.isnan(x)], want[~np.isnan(x)])
    assert np.isnan(out[np.isnan(x)]).all()


@triton.jit
def _to_bf16_and_back(x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs).to(tl.bfloat16, fp_downcast_rounding="rtz").to(tl.float32))


def test_fp64_to_fp32_toward_zero(rng):
    x = _inputs(rng, np.float64, 256)
    x[-4:] = [1e39, -1e-46, 2.0**-149 * 1.5, np.nextafter(1.0, 2.0)]
    y = np.zeros(len(x), np.float32)
    _narrow[(1,)](x, y, len(x), tl.float32, "rtz")
    for got, v in zip(y, x):
        if np.isnan(v):
            assert np.isnan(got)
            continue
        with np.errstate(over="ignore"):
            want = np.float32(v)  # to nearest: past |v| by at most half a step, or infinite
        if np.isinf(want) and np.isfinite(v):
            want = np.copysign(np.finfo(np.float32).max, v).astype(np.float32)
        # Toward zero while past |v| (compared exactly, as rationals).
        while np.isfinite(v) and abs(Fraction(float(want))) > abs(Fraction(float(v))):
            want = np.nextafter(want, np.float32(0))
        assert got.view(np.uint32) == np.float32(want).view(np.uint32), (v, got, want)


@triton.jit
def _widen(x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs).to(tl.float32, fp_downcast_rounding="rtz"))


@triton.jit
def _to_int(x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs).to(tl.int32, fp_downcast_rounding="rtz"))


def test_rounding_applies_to_narrowing_float_conversions_only():
    # Triton's words, at the kernel's line.
    x16, x32 = np.zeros(16, np.float16), np.zeros(16, np.float32)
    with pytest.raises(triton.CompilationError, match="fp_downcast_rounding should be set only for truncating fp "
                                                     "conversions. Source scalar type is fp16 and destination type "
                                                     "is fp32"):
        _widen[(1,)](x16, x32, 16)
    with pytest.raises(triton.CompilationError, match="should be set only for truncating fp conversions"):
        _to_int[(1,)](x32, np.zeros(16, np.int32), 16)
    with pytest.raises(triton.CompilationError, match="fp_downcast_rounding must be 'rtne' or 'rtz', got 'up'"):
        _narrow[(1,)](x32, x16, 16, tl.float16, "up")
