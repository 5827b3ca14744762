"""Scans: tl.associative_scan with any @jit combine function (tuples, reverse=), tl.cumsum and tl.cumprod, on every
target, against numpy (exact where the operation is exact) and against Triton 3.6's interpreter for the semantics of
a non-commutative combine."""
import numpy as np
import pytest

import tessel as triton
import tessel.language as tl


@triton.jit
def _cumsum_2d(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr, REVERSE: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.cumsum(x, axis=AXIS, reverse=REVERSE))


def _np_cumsum(x, axis, reverse, dtype=None):
    x = np.flip(x, axis) if reverse else x
    r = np.cumsum(x, axis=axis, dtype=dtype)
    return np.flip(r, axis) if reverse else r


@pytest.mark.parametrize("M,N", [(1, 1), (1, 16), (16, 1), (4, 8), (32, 64), (8, 256)])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumsum_2d_int32(rand, M, N, axis, reverse):
    x = rand((M, N), np.int32, -100, 100)
    out = np.zeros_like(x)
    _cumsum_2d[(1,)](x, out, M, N, axis, reverse)
    np.testing.assert_array_equal(out, _np_cumsum(x, axis, reverse))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int64, np.uint32, np.float16, np.float32,
                                   np.float64])
def test_cumsum_dtypes(rand, dtype):
    """Narrow ints are summed in 32 bits (as Triton does); floats in their own type, in order, so small exact values
    sum exactly."""
    M, N = 4, 32
    lo, hi = (0, 8) if np.dtype(dtype).kind == "u" else (-8, 8)
    x = rand((M, N), dtype, lo, hi)
    if np.dtype(dtype).kind == "f":
        x = np.round(x).astype(dtype)  # integers: every partial sum exact
    want = _np_cumsum(x.astype(np.int64 if np.dtype(dtype).kind != "f" else np.float64), 1, False)
    out_dtype = {np.int8: np.int32, np.int16: np.int32, np.uint8: np.uint32}.get(dtype, dtype)
    out = np.zeros((M, N), out_dtype)
    _cumsum_2d[(1,)](x, out, M, N, 1, False)
    np.testing.assert_array_equal(out, want.astype(out_dtype))


@triton.jit
def _cumsum_1d(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs).cumsum(0))


@pytest.mark.parametrize("N", [2, 128, 1024])
def test_cumsum_1d_float(rand, N):
    x = rand(N, np.float32)
    out = np.zeros_like(x)
    _cumsum_1d[(1,)](x, out, N)
    np.testing.assert_allclose(out, np.cumsum(x.astype(np.float64)), rtol=1e-5, atol=1e-4)


@triton.jit
def _cumprod(x_ptr, out_ptr, N: tl.constexpr, REVERSE: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.cumprod(tl.load(x_ptr + offs), 0, reverse=REVERSE))


@pytest.mark.parametrize("reverse", [False, True])
def test_cumprod_int64_wraps_like_numpy(rand, reverse):
    x = rand(64, np.int64, -5, 6)
    out = np.zeros_like(x)
    _cumprod[(1,)](x, out, 64, reverse)
    np.testing.assert_array_equal(out, np.flip(np.cumprod(np.flip(x))) if reverse else np.cumprod(x))


@triton.jit
def _affine_combine(a1, b1, a2, b2):
    # Composition of x -> a*x + b maps, earlier first: associative, not commutative.
    return a1 * a2, b1 * a2 + b2


@triton.jit
def _affine_scan(a_ptr, b_ptr, oa_ptr, ob_ptr, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr,
                 REVERSE: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    a, b = tl.associative_scan((tl.load(a_ptr + offs), tl.load(b_ptr + offs)), AXIS, _affine_combine,
                               reverse=REVERSE)
    tl.store(oa_ptr + offs, a)
    tl.store(ob_ptr + offs, b)


def _affine_reference(a, b, axis, reverse):
    """Sequential: element i holds the composition of elements 0..i (i..n-1 from the end when reversed)."""
    a, b = np.moveaxis(a, axis, -1).copy(), np.moveaxis(b, axis, -1).copy()
    n = a.shape[-1]
    order = range(n - 1, -1, -1) if reverse else range(n)
    ra, rb = np.empty_like(a), np.empty_like(b)
    ca = cb = None
    for i in order:
        if ca is None:
            ca, cb = a[..., i], b[..., i]
        else:
            ca, cb = ca * a[..., i], cb * a[..., i] + b[..., i]
        ra[..., i], rb[..., i] = ca, cb
    return np.moveaxis(ra, -1, axis), np.moveaxis(rb, -1, axis)


@pytest.mark.parametrize("M,N,axis", [(8, 16, 1), (16, 8, 0), (1, 32, 1), (4, 4, 0)])
@pytest.mark.parametrize("reverse", [False, True])
def test_non_commutative_tuple_scan(rand, M, N, axis, reverse):
    """A tuple scan whose combine is not commutative: the order along the axis (and with reverse=) is kept."""
    a = rand((M, N), np.int32, -3, 4)
    b = rand((M, N), np.int32, -9, 10)
    oa, ob = np.zeros_like(a), np.zeros_like(b)
    _affine_scan[(1,)](a, b, oa, ob, M, N, axis, reverse)
    wa, wb = _affine_reference(a, b, axis, reverse)
    np.testing.assert_array_equal(oa, wa)
    np.testing.assert_array_equal(ob, wb)


def test_non_commutative_scan_matches_tritons_interpreter(rng):
    """Triton's interpreter runs the same kernel source: the reverse order of a non-commutative scan is Triton's."""
    import os
    import subprocess
    import sys
    import textwrap
    script = textwrap.dedent("""
        import numpy as np, torch, triton, triton.language as tl
        @triton.jit
        def combine(a1, b1, a2, b2):
            return a1 * a2, b1 * a2 + b2
        @triton.jit
        def k(a_ptr, b_ptr, oa_ptr, ob_ptr, N: tl.constexpr, REVERSE: tl.constexpr):
            offs = tl.arange(0, N)
            a, b = tl.associative_scan((tl.load(a_ptr + offs), tl.load(b_ptr + offs)), 0, combine, reverse=REVERSE)
            tl.store(oa_ptr + offs, a)
            tl.store(ob_ptr + offs, b)
        a = torch.tensor([2, -1, 3, 1, -2, 1, 2, 1], dtype=torch.int32)
        b = torch.tensor([1, 5, -2, 7, 3, -4, 0, 6], dtype=torch.int32)
        for rev in (False, True):
            oa, ob = torch.zeros_like(a), torch.zeros_like(b)
            k[(1,)](a, b, oa, ob, 8, rev)
            print(oa.tolist(), ob.tolist())
    """)
    env = dict(os.environ, TRITON_INTERPRET="1")
    p = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    triton_results = [eval(line.replace("] [", "], [")) for line in p.stdout.strip().splitlines()]
    a = np.array([2, -1, 3, 1, -2, 1, 2, 1], np.int32)
    b = np.array([1, 5, -2, 7, 3, -4, 0, 6], np.int32)
    for rev, (ta, tb) in zip((False, True), triton_results):
        oa, ob = np.zeros_like(a), np.zeros_like(b)
        _affine_scan[(1,)](a[None], b[None], oa[None], ob[None], 1, 8, 1, rev)
        assert oa.tolist() == ta and ob.tolist() == tb, (rev, oa, ob, ta, tb)


@triton.jit
def _scan_3d(x_ptr, out_ptr, AXIS: tl.constexpr):
    i = tl.arange(0, 2)[:, None, None] * 32 + tl.arange(0, 4)[None, :, None] * 8 + tl.arange(0, 8)[None, None, :]
    tl.store(out_ptr + i, tl.cumsum(tl.load(x_ptr + i), AXIS))


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_cumsum_3d(rand, axis):
    x = rand((2, 4, 8), np.int32, -50, 50)
    out = np.zeros_like(x)
    _scan_3d[(1,)](x, out, axis)
    np.testing.assert_array_equal(out, np.cumsum(x, axis))


@triton.jit
def _scan_bad_axis(x_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.store(x_ptr + tl.arange(0, N), tl.cumsum(x, 1))


def test_scan_axis_out_of_range_is_a_compile_error():
    with pytest.raises(triton.CompilationError) as info:
        _scan_bad_axis[(1,)](np.zeros(8, np.int32), 8)
    assert "scan: axis 1 out of range" in str(info.value) and "tl.cumsum(x, 1)" in str(info.value)
