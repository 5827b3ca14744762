"""tl.join, tl.split, tl.interleave and tl.cat on every target: against numpy, bit for bit (NaN payloads and -0.0 go
through), with broadcasting and scalars as Triton 3.6 has them, and Triton's errors."""
import numpy as np
import pytest

import tessel as triton
import tessel.language as tl

DTYPES = [np.float32, np.float16, np.float64, np.int8, np.uint8, np.int32, np.int64, np.uint64]


def _values(rng, shape, dtype):
    if np.dtype(dtype).kind == "f":
        x = rng.standard_normal(shape).astype(dtype)
        flat = x.reshape(-1)
        flat[:3] = [np.nan, -0.0, np.inf][:flat.size]
        return x
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


@triton.jit
def _join_split_2d(a_ptr, b_ptr, j_ptr, s0_ptr, s1_ptr, i_ptr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    a = tl.load(a_ptr + rows * N + cols)
    b = tl.load(b_ptr + rows * N + cols)
    j = tl.join(a, b)
    tl.store(j_ptr + (rows * N + cols)[:, :, None] * 2 + tl.arange(0, 2)[None, None, :], j)
    lo, hi = j.split()
    tl.store(s0_ptr + rows * N + cols, lo)
    tl.store(s1_ptr + rows * N + cols, hi)
    tl.store(i_ptr + rows * 2 * N + tl.arange(0, 2 * N)[None, :], tl.interleave(a, b))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("M,N", [(1, 1), (4, 8), (16, 32)])
def test_join_split_interleave(rng, dtype, M, N):
    a, b = _values(rng, (M, N), dtype), _values(rng, (M, N), dtype)
    j = np.zeros((M, N, 2), dtype)
    s0, s1 = np.zeros_like(a), np.zeros_like(a)
    i = np.zeros((M, 2 * N), dtype)
    _join_split_2d[(1,)](a, b, j, s0, s1, i, M, N)
    bits = lambda x: x.view(f"u{np.dtype(dtype).itemsize}")  # noqa: E731 (exact, NaN included)
    np.testing.assert_array_equal(bits(j), bits(np.stack([a, b], -1)))
    np.testing.assert_array_equal(bits(s0), bits(a))
    np.testing.assert_array_equal(bits(s1), bits(b))
    np.testing.assert_array_equal(bits(i), bits(np.stack([a, b], -1).reshape(M, 2 * N)))


@triton.jit
def _join_broadcast(a_ptr, b_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    a = tl.load(a_ptr + tl.arange(0, N))  # [N]
    b = tl.load(b_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])  # [M, N]
    j = tl.join(a, b)  # [M, N, 2]
    idx = (tl.arange(0, M)[:, None, None] * N + tl.arange(0, N)[None, :, None]) * 2 + tl.arange(0, 2)[None, None, :]
    tl.store(out_ptr + idx, j)


def test_join_broadcasts_its_operands(rng):
    a = rng.standard_normal(8).astype(np.float32)
    b = rng.standard_normal((4, 8)).astype(np.float32)
    out = np.zeros((4, 8, 2), np.float32)
    _join_broadcast[(1,)](a, b, out, 4, 8)
    np.testing.assert_array_equal(out, np.stack([np.broadcast_to(a, (4, 8)), b], -1))


@triton.jit
def _scalars(x_ptr, out_ptr, s_ptr):
    x = tl.load(x_ptr)
    y = tl.load(x_ptr + 1)
    j = tl.join(x, y)  # a block of 2
    tl.store(out_ptr + tl.arange(0, 2), j)
    lo, hi = tl.split(j)  # two scalars
    tl.store(s_ptr, hi)
    tl.store(s_ptr + 1, lo)


def test_scalars_join_into_a_block_of_two_and_split_back():
    x = np.array([3.5, -7.25], np.float32)
    out, s = np.zeros(2, np.float32), np.zeros(2, np.float32)
    _scalars[(1,)](x, out, s)
    np.testing.assert_array_equal(out, x)
    np.testing.assert_array_equal(s, x[::-1])


@triton.jit
def _interleave_scalars(X, Y, Z):
    z = tl.interleave(X, Y)  # scalar arguments: a block of 2, as they join
    tl.static_assert(z.shape == [tl.constexpr(2)])
    tl.store(Z + tl.arange(0, 2), z)


def test_scalars_interleave_into_a_block_of_two():
    z = np.zeros(2, np.int32)
    _interleave_scalars[(1,)](10, 20, z)
    np.testing.assert_array_equal(z, [10, 20])


@triton.jit
def _cat(a_ptr, b_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + tl.arange(0, 2 * N), tl.cat(tl.load(a_ptr + offs), tl.load(b_ptr + offs), can_reorder=True))


@pytest.mark.parametrize("N", [1, 16, 256])
def test_cat_keeps_the_order(rng, N):
    a, b = rng.integers(0, 1000, N).astype(np.int32), rng.integers(0, 1000, N).astype(np.int32)
    out = np.zeros(2 * N, np.int32)
    _cat[(1,)](a, b, out, N)
    np.testing.assert_array_equal(out, np.concatenate([a, b]))


@triton.jit
def _permute_4d(x_ptr, out_ptr):
    i = (tl.arange(0, 2)[:, None, None, None] * 64 + tl.arange(0, 4)[None, :, None, None] * 16 +
         tl.arange(0, 8)[None, None, :, None] * 2 + tl.arange(0, 2)[None, None, None, :])
    y = tl.permute(tl.load(x_ptr + i), (2, 0, 3, 1))  # [8, 2, 2, 4]
    o = (tl.arange(0, 8)[:, None, None, None] * 16 + tl.arange(0, 2)[None, :, None, None] * 8 +
         tl.arange(0, 2)[None, None, :, None] * 4 + tl.arange(0, 4)[None, None, None, :])
    tl.store(out_ptr + o, y)


def test_permute_of_rank_four(rng):
    x = rng.integers(0, 10**6, (2, 4, 8, 2)).astype(np.int32)
    out = np.zeros((8, 2, 2, 4), np.int32)
    _permute_4d[(1,)](x, out)
    np.testing.assert_array_equal(out, x.transpose(2, 0, 3, 1))


def test_matches_tritons_interpreter():
    """The same kernel source under Triton 3.6's interpreter gives the same join, split and interleave."""
    import os
    import subprocess
    import sys
    import inspect
    import textwrap
    src = textwrap.dedent(inspect.getsource(_join_split_2d.fn))
    script = "import numpy as np, torch, triton, triton.language as tl\n" + src + textwrap.dedent("""
        rng = np.random.default_rng(5)
        a = torch.from_numpy(rng.standard_normal((4, 8)).astype(np.float32))
        b = torch.from_numpy(rng.standard_normal((4, 8)).astype(np.float32))
        j = torch.zeros(4, 8, 2); s0 = torch.zeros(4, 8); s1 = torch.zeros(4, 8); i = torch.zeros(4, 16)
        _join_split_2d[(1,)](a, b, j, s0, s1, i, 4, 8)
        np.save(sys.argv[1], np.concatenate([j.numpy().ravel(), s0.numpy().ravel(), s1.numpy().ravel(),
                                            i.numpy().ravel()]))
    """)
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "out.npy")
        p = subprocess.run([sys.executable, "-c", "import sys\n" + script, path], capture_output=True, text=True,
                           env=dict(os.environ, TRITON_INTERPRET="1"), timeout=300)
        assert p.returncode == 0, p.stderr
        want = np.load(path)
    rng = np.random.default_rng(5)
    a = rng.standard_normal((4, 8)).astype(np.float32)
    b = rng.standard_normal((4, 8)).astype(np.float32)
    j, s0, s1, i = np.zeros((4, 8, 2), np.float32), np.zeros((4, 8), np.float32), np.zeros((4, 8), np.float32), \
        np.zeros((4, 16), np.float32)
    _join_split_2d[(1,)](a, b, j, s0, s1, i, 4, 8)
    np.testing.assert_array_equal(np.concatenate([j.ravel(), s0.ravel(), s1.ravel(), i.ravel()]), want)


@triton.jit
def _split_bad(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 4))
    a, b = tl.split(x)
    tl.store(x_ptr, a + b)


@triton.jit
def _cat_without_reorder(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 4))
    tl.store(x_ptr + tl.arange(0, 8), tl.cat(x, x))


@pytest.mark.parametrize("kernel,message", [
    (_split_bad, "tl.split() needs a block whose last dimension has size 2"),
    (_cat_without_reorder, "current implementation of `cat` always may reorder elements"),
], ids=["split", "cat"])
def test_errors_name_the_line(kernel, message):
    with pytest.raises(triton.CompilationError) as info:
        kernel[(1,)](np.zeros(8, np.float32))
    text = str(info.value)
    assert message in text, text
