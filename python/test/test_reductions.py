"""tl.sum / tl.max / tl.min over each axis, with and without keep_dims, and tl.reduce
with user-written @jit combine functions, against numpy."""
import numpy as np
import pytest

import tessel as triton
import tessel.language as tl

f16, f32, i32 = np.float16, np.float32, np.int32

# Blocks are 32 x 64; the (M, N) shapes leave part of each block masked, and the
# masked elements are filled with the reduction's identity.
BM, BN = 32, 64
SHAPES = [(1, 1), (7, 50), (32, 64)]


@triton.jit
def _reduce_kernel(
    x_ptr, out_ptr, M, N, stride_m,
    OP: tl.constexpr, AXIS: tl.constexpr, KEEP: tl.constexpr, FILL: tl.constexpr,
    BM: tl.constexpr, BN: tl.constexpr,
):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * stride_m + rn[None, :], mask=mask, other=FILL)
    if OP == "sum":
        r = tl.sum(x, axis=AXIS, keep_dims=KEEP)
    elif OP == "max":
        r = tl.max(x, axis=AXIS, keep_dims=KEEP)
    else:
        tl.static_assert(OP == "min")
        r = tl.min(x, axis=AXIS, keep_dims=KEEP)
    # The result's shape depends on AXIS and KEEP; each branch builds pointers of
    # exactly that shape, so a wrong result shape fails to compile.
    if AXIS is None:
        if KEEP:
            tl.static_assert(len(r.shape) == 2)
            tl.store(out_ptr + tl.zeros((1, 1), tl.int32), r)
        else:
            tl.store(out_ptr, r)
    elif AXIS == 0:
        if KEEP:
            tl.store(out_ptr + rn[None, :], r, mask=rn[None, :] < N)
        else:
            tl.store(out_ptr + rn, r, mask=rn < N)
    else:
        if KEEP:
            tl.store(out_ptr + rm[:, None], r, mask=rm[:, None] < M)
        else:
            tl.store(out_ptr + rm, r, mask=rm < M)


_IDENTITY = {
    ("sum", "f"): 0.0,
    ("sum", "i"): 0,
    ("max", "f"): float("-inf"),
    ("max", "i"): -(2**31),
    ("min", "f"): float("inf"),
    ("min", "i"): 2**31 - 1,
}


def _run_reduce(rand, op, dt, axis, keep, shape):
    M, N = shape
    x = rand((M, N), dt, -50, 50) if np.dtype(dt).kind == "i" else rand((M, N), dt)
    ref = getattr(np, op)(x.astype(f32) if dt == f16 else x, axis=axis, keepdims=keep)
    # Reductions keep the input dtype (fp16 sums stay fp16); the output array takes
    # the result in a wider dtype where useful so the store itself loses nothing.
    out = np.zeros(np.shape(ref) if np.ndim(ref) else (1,), f32 if dt == f16 else dt)
    _reduce_kernel[(1,)](
        x, out, M, N, x.strides[0] // x.itemsize,
        OP=op, AXIS=axis, KEEP=keep, FILL=_IDENTITY[(op, np.dtype(dt).kind)], BM=BM, BN=BN,
    )
    ref = np.reshape(ref, out.shape)
    if dt == i32:
        np.testing.assert_array_equal(out, ref)
    elif dt == f16 and op == "sum":
        # fp16 accumulation in any order: error grows with the number of terms.
        np.testing.assert_allclose(out, ref, rtol=1e-2, atol=0.05 * np.sqrt(M * N))
    else:
        np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


# Every dtype on a partial block; the other shapes (a single element, an exactly full
# block) on fp32 only, which is enough to reach their specializations.
_BUILTIN_CASES = [(dt, (7, 50)) for dt in (f16, i32)] + [(f32, shape) for shape in SHAPES]


@pytest.mark.parametrize(
    "dt,shape", _BUILTIN_CASES, ids=[f"{np.dtype(d).name}-{s[0]}x{s[1]}" for d, s in _BUILTIN_CASES]
)
@pytest.mark.parametrize("axis", [0, 1, None])
@pytest.mark.parametrize("op", ["sum", "max", "min"])
def test_reduce_builtin(rand, op, dt, axis, shape):
    _run_reduce(rand, op, dt, axis, False, shape)


@pytest.mark.parametrize("shape", [(7, 50)], ids=["7x50"])
@pytest.mark.parametrize("axis", [0, 1, None])
@pytest.mark.parametrize("op,dt", [("sum", f32), ("max", i32)], ids=["sum-f32", "max-i32"])
def test_reduce_keep_dims(rand, op, dt, axis, shape):
    _run_reduce(rand, op, dt, axis, True, shape)


@triton.jit
def _row_sum_method_kernel(x_ptr, out_ptr, N, BN: tl.constexpr):
    # Reductions as tensor methods, and a reduction of a 1-D block to a scalar.
    row = tl.program_id(0)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + row * N + rn, mask=rn < N, other=0.0)
    tl.store(out_ptr + row, x.sum(0) + x.max(axis=0) - x.min(0))


def test_reduce_methods(rand):
    M, N = 5, 40
    x = rand((M, N), f32)
    out = np.empty(M, f32)
    _row_sum_method_kernel[(M,)](x, out, N, BN=64)
    # Masked lanes hold 0.0, so max/min over the padded block see an extra 0.
    padded = np.concatenate([x, np.zeros((M, 1), f32)], axis=1)
    ref = x.sum(1) + padded.max(1) - padded.min(1)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------
# tl.reduce with custom combine functions
# ---------------------------------------------------------------------------


@triton.jit
def _mul_combine(a, b):
    return a * b


@triton.jit
def _argmin_combine(value_a, index_a, value_b, index_b):
    # Ties go to the smaller index, so the result does not depend on the tree order.
    take_a = (value_a < value_b) | ((value_a == value_b) & (index_a < index_b))
    return tl.where(take_a, value_a, value_b), tl.where(take_a, index_a, index_b)


@triton.jit
def _custom_reduce_kernel(x_ptr, prod_ptr, min_ptr, argmin_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    offs = rm[:, None] * N + rn[None, :]
    ones = tl.load(x_ptr + offs, mask=mask, other=1.0)
    prod = tl.reduce(ones, 1, _mul_combine)
    tl.store(prod_ptr + rm, prod, mask=rm < M)

    x = tl.load(x_ptr + offs, mask=mask, other=float("inf"))
    idx = tl.broadcast_to(rn[None, :], (BM, BN))
    value, index = tl.reduce((x, idx), 1, _argmin_combine)
    tl.store(min_ptr + rm, value, mask=rm < M)
    tl.store(argmin_ptr + rm, index, mask=rm < M)


@pytest.mark.parametrize("shape", [(1, 1), (7, 50), (32, 64)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_reduce_custom_combine(rand, rng, shape):
    M, N = shape
    # Values near 1 keep the product of up to 64 terms well scaled.
    x = rand((M, N), f32, 0.9, 1.1)
    # Repeat each row's minimum at a later column to exercise the tie rule.
    if N > 1:
        first = x.argmin(1)
        later = rng.integers(0, N, size=M)
        later = np.where(later == first, (first + 1) % N, later)
        x[np.arange(M), later] = x[np.arange(M), first]
    prod = np.empty(M, f32)
    mins = np.empty(M, f32)
    argmins = np.empty(M, i32)
    _custom_reduce_kernel[(1,)](x, prod, mins, argmins, M, N, BM=32, BN=64)
    np.testing.assert_allclose(prod, np.prod(x.astype(np.float64), axis=1), rtol=1e-5)
    np.testing.assert_array_equal(mins, x.min(1))
    np.testing.assert_array_equal(argmins, x.argmin(1))  # numpy returns the first occurrence


@triton.jit
def _loop_sums(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # Triton's tutorial pattern: blocks accumulated across the row's chunks (one of them squares a value it uses
    # twice), summed once after the loop; one is also stored as a block.
    acc = tl.zeros([BLOCK], dtype=x_ptr.dtype.element_ty)
    sq = tl.zeros([BLOCK], dtype=x_ptr.dtype.element_ty)
    for off in range(0, n, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + cols, mask=cols < n, other=0)
        acc += x
        sq += x * x
    tl.store(out_ptr, tl.sum(acc, axis=0))
    tl.store(out_ptr + 1, tl.sum(sq, axis=0))
    tl.store(out_ptr + 2 + tl.arange(0, BLOCK), sq)


@pytest.mark.parametrize("n", [1, 64, 100, 1000])
@pytest.mark.parametrize("dt", [f32, i32], ids=["f32", "i32"])
def test_sums_of_blocks_carried_across_a_loop(rng, dt, n):
    x = (rng.standard_normal(n) * 4).astype(dt) if dt == f32 else rng.integers(-50, 50, n).astype(dt)
    out = np.zeros(2 + 64, dt)
    _loop_sums[(1,)](x, out, n, BLOCK=64)
    x64 = x.astype(np.float64)
    pad = np.zeros(-(-n // 64) * 64)
    pad[:n] = x64
    per_lane = (pad.reshape(-1, 64) ** 2).sum(axis=0)
    if dt == f32:
        np.testing.assert_allclose(out[:2], [x64.sum(), (x64 ** 2).sum()], rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(out[2:], per_lane, rtol=1e-5)
    else:
        np.testing.assert_array_equal(out[:2], [x64.sum(), (x64 ** 2).sum()])
        np.testing.assert_array_equal(out[2:], per_lane)
