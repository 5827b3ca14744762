"""tl.histogram on every target, against numpy's bincount: integer types, masks (blocks and scalars), values
outside the bins, Triton's interpreter on in-range data, and Triton's errors."""
import numpy as np
import pytest

import tessel as triton
import tessel.language as tl


@triton.jit
def _histogram(x_ptr, m_ptr, out_ptr, N: tl.constexpr, BINS: tl.constexpr, MASKED: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    if MASKED:
        counts = tl.histogram(x, BINS, mask=tl.load(m_ptr + tl.arange(0, N)) != 0)
    else:
        counts = x.histogram(BINS)
    tl.store(out_ptr + tl.arange(0, BINS), counts)


def _reference(x, bins, mask=None):
    keep = (x >= 0) & (x < bins)
    if mask is not None:
        keep &= mask != 0
    return np.bincount(x[keep].astype(np.int64), minlength=bins)[:bins].astype(np.int32)


@pytest.mark.parametrize("N,bins", [(1, 2), (64, 8), (256, 16), (2048, 32), (16, 128)])
@pytest.mark.parametrize("masked", [False, True])
def test_histogram(rng, N, bins, masked):
    x = rng.integers(-3, bins + 3, N).astype(np.int32)  # some outside the bins: not counted
    m = rng.integers(0, 2, N).astype(np.int8)
    out = np.zeros(bins, np.int32)
    _histogram[(1,)](x, m, out, N, bins, masked)
    np.testing.assert_array_equal(out, _reference(x, bins, m if masked else None))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint32, np.int64])
def test_histogram_types(rng, dtype):
    x = rng.integers(0, 16, 128).astype(dtype)
    out = np.zeros(16, np.int32)
    _histogram[(1,)](x, x, out, 128, 16, False)
    np.testing.assert_array_equal(out, _reference(x, 16))


def _histogram_kernel(x_ptr, out_ptr):
    x = tl.load(x_ptr + tl.arange(0, 128))
    tl.store(out_ptr + tl.arange(0, 8), tl.histogram(x, 8, mask=x < 6))


def test_matches_tritons_interpreter():
    from triton_oracle import Both
    x = np.random.default_rng(2).integers(0, 8, 128).astype(np.int32)
    want, got = Both(_histogram_kernel).last((1,), x, np.zeros(8, np.int32))
    np.testing.assert_array_equal(got, want)


@triton.jit
def _bad_histogram(x_ptr, WHICH: tl.constexpr):
    if WHICH == 0:
        h = tl.histogram(tl.load(x_ptr + tl.arange(0, 4)[:, None] * 4 + tl.arange(0, 4)[None, :]), 4)
    else:
        h = tl.histogram(tl.load(x_ptr + tl.arange(0, 16)).to(tl.float32), 4)
    tl.store(x_ptr + tl.arange(0, 4), h)


@pytest.mark.parametrize("which,message", [(0, "histogram only supports 1D input"),
                                           (1, "histogram only supports integer input")])
def test_tritons_errors(which, message):
    with pytest.raises(triton.CompilationError) as info:
        _bad_histogram[(1,)](np.zeros(16, np.int32), which)
    assert message in str(info.value), str(info.value)
