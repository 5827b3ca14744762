"""tl.sort, tl.topk and tl.bitonic_merge along the last dimension, on every target, against numpy (exact: a sort
only moves elements), with duplicates, every integer and float type, and Triton's interpreter on one kernel."""
import numpy as np
import pytest

import tessel as triton
import tessel.language as tl


@triton.jit
def _sort_2d(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, DESCENDING: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(out_ptr + offs, tl.sort(tl.load(x_ptr + offs), descending=DESCENDING))


def _values(rng, shape, dtype):
    if np.dtype(dtype).kind == "f":
        return rng.integers(-20, 20, shape).astype(dtype) / 4  # many duplicates, -0.0 and 0.0 included
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("M,N", [(1, 1), (1, 2), (4, 16), (8, 128), (1, 1024)])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_shapes(rng, M, N, descending):
    x = _values(rng, (M, N), np.float32)
    out = np.zeros_like(x)
    _sort_2d[(1,)](x, out, M, N, descending)
    want = np.sort(x, 1)
    np.testing.assert_array_equal(out, want[:, ::-1] if descending else want)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64, np.float16,
                                   np.float64])
def test_sort_types(rng, dtype):
    x = _values(rng, (4, 64), dtype)
    out = np.zeros_like(x)
    _sort_2d[(1,)](x, out, 4, 64, False)
    np.testing.assert_array_equal(out, np.sort(x, 1))


@triton.jit
def _topk(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    tl.store(out_ptr + tl.arange(0, M)[:, None] * K + tl.arange(0, K)[None, :], x.topk(K))


@pytest.mark.parametrize("N,K", [(16, 1), (64, 8), (256, 16), (32, 32)])
def test_topk(rng, N, K):
    x = _values(rng, (4, N), np.int32)
    out = np.zeros((4, K), np.int32)
    _topk[(1,)](x, out, 4, N, K)
    np.testing.assert_array_equal(out, -np.sort(-x, 1)[:, :K])


@triton.jit
def _merge(x_ptr, out_ptr, N: tl.constexpr, DESCENDING: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.bitonic_merge(tl.load(x_ptr + offs), descending=DESCENDING))


@pytest.mark.parametrize("descending", [False, True])
def test_bitonic_merge(rng, descending):
    """An ascending run then a descending one (a bitonic sequence) merges into order."""
    half = np.sort(_values(rng, 32, np.int32))
    x = np.concatenate([half, np.sort(_values(rng, 32, np.int32))[::-1]])
    out = np.zeros_like(x)
    _merge[(1,)](x, out, 64, descending)
    want = np.sort(x)
    np.testing.assert_array_equal(out, want[::-1] if descending else want)


def _sort_and_topk(x_ptr, s_ptr, t_ptr):
    x = tl.load(x_ptr + tl.arange(0, 4)[:, None] * 32 + tl.arange(0, 32)[None, :])
    tl.store(s_ptr + tl.arange(0, 4)[:, None] * 32 + tl.arange(0, 32)[None, :], tl.sort(x, descending=True))
    tl.store(t_ptr + tl.arange(0, 4)[:, None] * 4 + tl.arange(0, 4)[None, :], tl.topk(x, 4))


def test_matches_tritons_interpreter():
    from triton_oracle import Both
    x = np.random.default_rng(3).integers(-50, 50, (4, 32)).astype(np.int32)
    want, got = Both(_sort_and_topk).run((1,), x, np.zeros((4, 32), np.int32), np.zeros((4, 4), np.int32))
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)


@triton.jit
def _sort_middle(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :])
    tl.store(x_ptr + tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :], tl.sort(x, dim=0))


def test_only_the_last_dimension_sorts():
    with pytest.raises(triton.CompilationError) as info:
        _sort_middle[(1,)](np.zeros(32, np.float32))
    assert "only minor dimension is currently supported" in str(info.value)
