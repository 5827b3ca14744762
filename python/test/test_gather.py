"""tl.gather on every target, against numpy's take_along_axis: 1-D and 2-D, either axis, index blocks smaller and
larger than the source along the axis, every element type (bit for bit), index types, Triton's errors."""
import numpy as np
import pytest

import tessel as triton
import tessel.language as tl


@triton.jit
def _gather_2d(src_ptr, idx_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, IM: tl.constexpr, IN: tl.constexpr,
               AXIS: tl.constexpr):
    src = tl.load(src_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    idx = tl.load(idx_ptr + tl.arange(0, IM)[:, None] * IN + tl.arange(0, IN)[None, :])
    tl.store(out_ptr + tl.arange(0, IM)[:, None] * IN + tl.arange(0, IN)[None, :], tl.gather(src, idx, AXIS))


@pytest.mark.parametrize("M,N,axis,extent", [(16, 32, 0, 64), (16, 32, 0, 4), (16, 32, 1, 8), (8, 8, 1, 128),
                                             (1, 32, 0, 16), (32, 1, 1, 2), (64, 64, -1, 64)])
def test_gather_2d(rng, M, N, axis, extent):
    src = rng.standard_normal((M, N)).astype(np.float32)
    ishape = (extent, N) if axis == 0 else (M, extent)
    idx = rng.integers(0, src.shape[axis], ishape).astype(np.int32)
    out = np.zeros(ishape, np.float32)
    _gather_2d[(1,)](src, idx, out, M, N, *ishape, axis)
    np.testing.assert_array_equal(out, np.take_along_axis(src, idx, axis))


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int64, np.float16, np.float64])
@pytest.mark.parametrize("index_dtype", [np.int8, np.uint32, np.int64])
def test_gather_types(rng, dtype, index_dtype):
    src = (rng.standard_normal((8, 16)) * 50).astype(dtype)
    idx = rng.integers(0, 8, (32, 16)).astype(index_dtype)
    out = np.zeros((32, 16), dtype)
    _gather_2d[(1,)](src, idx, out, 8, 16, 32, 16, 0)
    np.testing.assert_array_equal(out, np.take_along_axis(src, idx.astype(np.int64), 0))


@triton.jit
def _gather_1d(src_ptr, idx_ptr, out_ptr, N: tl.constexpr, I: tl.constexpr):
    src = tl.load(src_ptr + tl.arange(0, N))
    idx = tl.load(idx_ptr + tl.arange(0, I))
    tl.store(out_ptr + tl.arange(0, I), src.gather(idx, 0))


@pytest.mark.parametrize("N,I", [(1, 8), (128, 128), (256, 16), (16, 512)])
def test_gather_1d(rng, N, I):
    src = rng.integers(-1000, 1000, N).astype(np.int32)
    idx = rng.integers(0, N, I).astype(np.int32)
    out = np.zeros(I, np.int32)
    _gather_1d[(1,)](src, idx, out, N, I)
    np.testing.assert_array_equal(out, src[idx])


def test_out_of_range_indices_stay_inside_the_source(rng):
    """An index outside the source gives some element of it (Triton leaves the value unspecified), never memory
    outside it."""
    src = rng.integers(1, 1000, 64).astype(np.int32)
    idx = np.array([-1, 64, 2**30, 5] * 4, np.int32)
    out = np.zeros(16, np.int32)
    _gather_1d[(1,)](src, idx, out, 64, 16)
    assert np.isin(out, src).all() and (out[3::4] == src[5]).all()


@triton.jit
def _bad_gather(src_ptr, WHICH: tl.constexpr):
    src = tl.load(src_ptr + tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :])
    if WHICH == 0:
        g = tl.gather(src, src, 0)
    elif WHICH == 1:
        g = tl.gather(src, tl.arange(0, 16), 0)
    elif WHICH == 2:
        g = tl.gather(src, tl.zeros([8, 8], tl.int32), 0)
    else:
        g = tl.gather(src, tl.zeros([16, 16], tl.int32), 2)
    tl.store(src_ptr + tl.arange(0, 16), tl.sum(g, 0))


@pytest.mark.parametrize("which,message", [(0, "index must be an integer tensor"),
                                           (1, "source and index tensors must have the same rank"),
                                           (2, "index dim 1 must match the corresponding source dim"),
                                           (3, "gather axis 2 must be < source rank (2)")])
def test_tritons_errors_at_the_line(which, message):
    with pytest.raises(triton.CompilationError) as info:
        _bad_gather[(1,)](np.zeros(256, np.float32), which)
    assert message in str(info.value) and "tl.gather(src" in str(info.value), str(info.value)
