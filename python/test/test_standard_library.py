"""The library functions written in the DSL or over its builtins, on every target, against OpenAI Triton 3.6's
interpreter (and numpy where the interpreter is not the GPUs' semantics): tl.minimum / tl.maximum with
PropagateNan, tl.clamp, tl.flip, tl.swizzle2d, tl.where with scalars, tl.cdiv on tensors, tl.xor_sum,
tl.reduce_or, tl.ravel, tl.full / tl.zeros / tl.zeros_like."""
import warnings

import numpy as np
import pytest

from triton_oracle import Both

import tessel
import tessel.language as tl

FLOATS = ["float16", "bfloat16", "float32", "float64"]


def _floats(rng, dtype, n, nans=False):
    """n values of a float type as numpy holds them (bf16 as its uint16 bits), with ties, infinities, zeros and,
    with `nans`, NaNs."""
    values = np.round(rng.uniform(-4, 4, n), 1)
    values[:6] = [np.inf, -np.inf, 0.5, 0.5, 0.0, -2.0]
    if nans:
        values[6:12] = np.nan
    if dtype == "bfloat16":
        return (values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return values.astype(dtype)


def _as_float(a, dtype):
    """The values of an array made by _floats, as float64."""
    if dtype == "bfloat16":
        return (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return a.astype(np.float64)


# ----------------------------------------------------------------------------------------------- minimum, maximum


def _min_max_kernel(x_ptr, y_ptr, out_ptr, N: tl.constexpr, DTYPE: tl.constexpr, OP: tl.constexpr,
                    PROPAGATE: tl.constexpr, RESULT: tl.constexpr):
    i = tl.arange(0, N)
    x = tl.load(x_ptr + i)
    y = tl.load(y_ptr + i)
    if DTYPE == tl.bfloat16:
        x = x.to(tl.bfloat16, bitcast=True)
        y = y.to(tl.bfloat16, bitcast=True)
    if PROPAGATE:
        mode = tl.PropagateNan.ALL
    else:
        mode = tl.PropagateNan.NONE
    if OP == "max":
        r = tl.maximum(x, y, propagate_nan=mode)
    else:
        r = tl.minimum(x, y, mode)
    tl.static_assert(r.dtype == RESULT, "result type differs from Triton's")
    tl.store(out_ptr + i, r)


MIN_MAX = Both(_min_max_kernel)


@pytest.mark.parametrize("propagate", [False, True], ids=["NONE", "ALL"])
@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_float_minimum_maximum_match_triton(rng, dtype, op, propagate):
    n = 64
    x, y = _floats(rng, dtype, n), _floats(rng, dtype, n)[::-1].copy()
    result = tl.float32 if dtype == "bfloat16" else getattr(tl, dtype)  # Triton computes bf16 in fp32
    out = np.zeros(n, np.float32 if dtype == "bfloat16" else dtype)
    want, got = MIN_MAX.last((1,), x, y, out, N=n, DTYPE=getattr(tl, dtype), OP=op, PROPAGATE=propagate,
                             RESULT=result)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("propagate", [False, True], ids=["NONE", "ALL"])
@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_nan_operands(rng, dtype, op, propagate):
    """ALL: any NaN operand gives NaN (as Triton's interpreter and GPUs). NONE: the other operand, IEEE maxNum /
    minNum as on Triton's GPUs (numpy's fmax/fmin; Triton's interpreter propagates NaN there)."""
    n = 64
    x = _floats(rng, dtype, n, nans=True)
    y = _floats(rng, dtype, n, nans=True)
    y[8:16] = y[0:8]  # NaN against NaN, NaN against numbers and infinities, numbers against NaN
    y[16:20] = _floats(rng, dtype, n, nans=True)[6:10]
    out = np.zeros(n, np.float32 if dtype == "bfloat16" else dtype)
    result = tl.float32 if dtype == "bfloat16" else getattr(tl, dtype)
    want, got = MIN_MAX.last((1,), x, y, out, N=n, DTYPE=getattr(tl, dtype), OP=op, PROPAGATE=propagate,
                             RESULT=result)
    fx, fy = _as_float(x, dtype), _as_float(y, dtype)
    if propagate:
        expected = (np.maximum if op == "max" else np.minimum)(fx, fy)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    else:
        expected = (np.fmax if op == "max" else np.fmin)(fx, fy)
    np.testing.assert_array_equal(got.astype(np.float64), expected)


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int32", "uint32", "int64", "uint64"])
def test_integer_minimum_maximum_match_triton(rng, dtype):
    n = 64
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    y = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    x[:3] = [info.min, info.max, 0]
    for op in ("max", "min"):
        out = np.zeros(n, dtype)
        want, got = MIN_MAX.last((1,), x, y, out, N=n, DTYPE=getattr(tl, dtype), OP=op, PROPAGATE=True,
                                 RESULT=getattr(tl, dtype))
        np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------------------------------------------------- clamp


def _clamp_kernel(x_ptr, lo_ptr, hi_ptr, out_ptr, N: tl.constexpr, DTYPE: tl.constexpr, BOUNDS: tl.constexpr,
                  PROPAGATE: tl.constexpr, RESULT: tl.constexpr):
    i = tl.arange(0, N)
    x = tl.load(x_ptr + i)
    if DTYPE == tl.bfloat16:
        x = x.to(tl.bfloat16, bitcast=True)
    if BOUNDS == "literals":
        lo, hi = -1.5, 2.25
    elif BOUNDS == "scalars":
        lo, hi = tl.load(lo_ptr), tl.load(hi_ptr)
    else:
        lo, hi = tl.load(lo_ptr + i), tl.load(hi_ptr + i)
    if PROPAGATE:
        r = tl.clamp(x, lo, hi, propagate_nan=tl.PropagateNan.ALL)
    else:
        r = tl.clamp(x, lo, hi)
    tl.static_assert(r.dtype == RESULT, "result type differs from Triton's")
    tl.store(out_ptr + i, r)


CLAMP = Both(_clamp_kernel)


@pytest.mark.parametrize("bounds", ["literals", "scalars", "blocks"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_clamp_matches_triton(rng, dtype, bounds):
    n = 64
    x = _floats(rng, dtype, n)
    lo = np.minimum(rng.uniform(-3, 0, n), -0.5).astype(np.float32)
    hi = np.maximum(rng.uniform(0, 3, n), 0.5).astype(np.float32)
    # Bounds are fp32: an fp16 or fp64 x computes in the wider type; bf16 in fp32.
    result = {"float16": tl.float32, "bfloat16": tl.float32, "float32": tl.float32, "float64": tl.float64}[dtype]
    out = np.zeros(n, np.float64 if dtype == "float64" else np.float32)
    for propagate in (False, True):
        want, got = CLAMP.last((1,), x, lo, hi, out, N=n, DTYPE=getattr(tl, dtype), BOUNDS=bounds,
                               PROPAGATE=propagate, RESULT=result)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_clamp_of_nan(rng, dtype):
    """A NaN x is NaN with PropagateNan.ALL; with NONE it is clamped like a number below the range (maxNum(NaN, lo)
    is lo), on every target."""
    n = 32
    x = _floats(rng, dtype, n, nans=True)
    lo, hi = np.float32(-1.5), np.float32(2.25)
    for propagate in (False, True):
        out = np.zeros(n, np.float64 if dtype == "float64" else np.float32)
        CLAMP.tessel[(1,)](x, np.array([lo]), np.array([hi]), out, N=n, DTYPE=getattr(tl, dtype), BOUNDS="scalars",
                           PROPAGATE=propagate, RESULT=tl.float64 if dtype == "float64" else tl.float32)
        fx = x.astype(np.float64)
        expected = np.clip(fx, lo, hi) if propagate else np.fmin(np.fmax(fx, lo), hi)
        np.testing.assert_array_equal(out.astype(np.float64), expected)


@tessel.jit
def clamp_ints(x_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(x_ptr + i, tl.clamp(tl.load(x_ptr + i), 0, 5))


def test_clamp_of_integers_is_an_error():
    with pytest.raises(tessel.CompilationError, match="Unexpected dtype int32. Only floating point clamp is "
                       "supported") as info:
        clamp_ints[(1,)](np.zeros(16, np.int32), N=16)
    assert "tl.clamp(tl.load(x_ptr + i), 0, 5)" in str(info.value)


@tessel.jit
def bad_propagate(x_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(x_ptr + i, tl.maximum(tl.load(x_ptr + i), 1.0, propagate_nan=True))


def test_propagate_nan_takes_the_enum():
    with pytest.raises(tessel.CompilationError, match="propagate_nan must be tl.PropagateNan.NONE or "
                       "tl.PropagateNan.ALL, got bool True"):
        bad_propagate[(1,)](np.zeros(16, np.float32), N=16)


# ------------------------------------------------------------------------------------------------- flip, ravel


def _flip_kernel(x_ptr, out_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, DIM: tl.constexpr,
                 DTYPE: tl.constexpr):
    offsets = (tl.arange(0, A)[:, None, None] * (B * C) + tl.arange(0, B)[None, :, None] * C +
               tl.arange(0, C)[None, None, :])
    x = tl.load(x_ptr + offsets)
    if DTYPE == tl.int1:
        x = x != 0
    y = tl.flip(x, DIM)
    tl.store(out_ptr + tl.arange(0, A * B * C), tl.ravel(y).to(tl.int64 if DTYPE == tl.int1 else y.dtype))


FLIP = Both(_flip_kernel)


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
@pytest.mark.parametrize("dtype", ["float32", "float16", "int8", "int64", "uint32"])
def test_flip_matches_triton_and_numpy(rng, dtype, dim):
    shape = (4, 8, 2)
    if dtype.startswith("float"):
        x = rng.standard_normal(shape).astype(dtype)
    else:
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    out = np.zeros(x.size, dtype)
    want, got = FLIP.last((1,), x, out, A=4, B=8, C=2, DIM=dim, DTYPE=getattr(tl, dtype))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got.reshape(shape), np.flip(x, dim))


def test_flip_of_bools_and_of_length_one():
    x = np.array([1, 0, 0, 1, 1, 1, 0, 0] * 2, np.int8)
    out = np.zeros(16, np.int64)
    tessel.jit(_flip_kernel)[(1,)](x, out, A=1, B=16, C=1, DIM=1, DTYPE=tl.int1)
    np.testing.assert_array_equal(out, x[::-1])
    tessel.jit(_flip_kernel)[(1,)](x, out, A=1, B=16, C=1, DIM=0, DTYPE=tl.int1)
    np.testing.assert_array_equal(out, x)


@tessel.jit
def flip_methods(x_ptr, out_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    x = tl.load(x_ptr + i)
    tl.store(out_ptr + i, x.flip())  # the last axis by default
    block = tl.reshape(x, (4, N // 4))
    tl.store(out_ptr + N + i, block.flip(0).ravel())


def test_flip_and_ravel_as_methods(rng):
    x = rng.standard_normal(32).astype(np.float32)
    out = np.zeros(64, np.float32)
    flip_methods[(1,)](x, out, N=32)
    np.testing.assert_array_equal(out[:32], x[::-1])
    np.testing.assert_array_equal(out[32:], x.reshape(4, 8)[::-1].ravel())


# ---------------------------------------------------------------------------------------------------- swizzle2d


def _swizzle_kernel(out_ptr, SIZE_I: tl.constexpr, SIZE_J: tl.constexpr, SIZE_G: tl.constexpr,
                    BI: tl.constexpr, BJ: tl.constexpr):
    # Program ids (scalars), as matmuls use it, and whole index blocks.
    pid_i = tl.program_id(0)
    pid_j = tl.program_id(1)
    new_i, new_j = tl.swizzle2d(pid_i, pid_j, SIZE_I, SIZE_J, SIZE_G)
    tl.store(out_ptr + 2 * (pid_i * SIZE_J + pid_j), new_i)
    tl.store(out_ptr + 2 * (pid_i * SIZE_J + pid_j) + 1, new_j)
    # Indices past the grid repeat its last row and column (outside it the group may have no rows).
    i = tl.minimum(tl.arange(0, BI)[:, None], SIZE_I - 1)
    j = tl.minimum(tl.arange(0, BJ)[None, :], SIZE_J - 1)
    bi, bj = tl.swizzle2d(i, j, SIZE_I, SIZE_J, SIZE_G)
    base = out_ptr + 2 * SIZE_I * SIZE_J + 2 * (tl.arange(0, BI)[:, None] * BJ + tl.arange(0, BJ)[None, :])
    tl.store(base, bi)
    tl.store(base + 1, bj)


SWIZZLE = Both(_swizzle_kernel)


@pytest.mark.parametrize("size_i,size_j,size_g", [(4, 4, 2), (5, 3, 2), (7, 8, 3), (8, 8, 8), (3, 4, 5)])
def test_swizzle2d_matches_triton(size_i, size_j, size_g):
    out = np.full(2 * size_i * size_j + 2 * 8 * 8, -1, np.int32)
    want, got = SWIZZLE.last((size_i, size_j), out, SIZE_I=size_i, SIZE_J=size_j, SIZE_G=size_g, BI=8, BJ=8)
    np.testing.assert_array_equal(got, want)
    # It permutes the grid.
    pairs = got[:2 * size_i * size_j].reshape(-1, 2)
    assert sorted(map(tuple, pairs)) == [(a, b) for a in range(size_i) for b in range(size_j)]


# ---------------------------------------------------------------------------------------------- where, cdiv, full


def _scalars_kernel(x_ptr, y_ptr, out_ptr, N: tl.constexpr, CASE: tl.constexpr):
    i = tl.arange(0, N)
    x = tl.load(x_ptr + i)
    y = tl.load(y_ptr + i)
    if CASE == "where literals":
        r = tl.where(x > 0, 1.5, 0)
    elif CASE == "where literal int":
        r = tl.where(x > 0, 1, 2) + x * 0
    elif CASE == "where block literal":
        r = tl.where(x > 0, x, 2)
    elif CASE == "where literal block":
        r = tl.where(x > 0, -3.0, y)
    elif CASE == "where scalar condition":
        r = tl.where(tl.sum(x) > 0, x, y)
    elif CASE == "where scalar condition and values":
        r = tl.where(tl.sum(x) > 0, tl.max(x), 7.0) + x * 0
    elif CASE == "where python condition":
        r = tl.where(False, x, y)
    elif CASE == "where int condition":
        r = tl.where(i % 3, x, y)
    elif CASE == "cdiv block int":
        r = tl.cdiv(i * 5 + 3, 4) + x * 0
    elif CASE == "cdiv block block":
        r = tl.cdiv(i * 7, i + 1) + x * 0
    elif CASE == "cdiv int block":
        r = tl.cdiv(1000, i + 3) + x * 0
    elif CASE == "cdiv method":
        r = (i * 5).cdiv(3) + x * 0
    elif CASE == "full tuple":
        r = tl.full((N,), 3, tl.int16) + x
    elif CASE == "full list float":
        r = tl.full([N], 2.5, tl.float16) + x
    elif CASE == "full tensor value":
        r = tl.full([N], tl.sum(x), tl.int32) * 1.0
    elif CASE == "full bool":
        r = tl.full((N,), True, tl.int1) & (x > 0)
    elif CASE == "full 2-D":
        r = tl.sum(tl.full((4, N), -2, tl.int8), axis=0) + x
    elif CASE == "full scalar":
        r = tl.full((), 5, tl.int64) + x
    elif CASE == "zeros":
        r = tl.zeros((N,), dtype=tl.uint8) + x
    elif CASE == "zeros 2-D":
        r = tl.sum(tl.zeros([2, N], tl.float64), 0) + x
    elif CASE == "zeros_like":
        r = tl.zeros_like(x) - 1
    tl.store(out_ptr + i, r)


SCALARS = Both(_scalars_kernel)
SCALAR_CASES = ["where literals", "where literal int", "where block literal", "where literal block",
                "where scalar condition", "where scalar condition and values", "where python condition",
                "where int condition", "cdiv block int", "cdiv block block", "cdiv int block", "cdiv method",
                "full tuple", "full list float", "full tensor value", "full bool", "full 2-D", "full scalar", "zeros",
                "zeros 2-D", "zeros_like"]


@pytest.mark.parametrize("case", SCALAR_CASES)
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_where_cdiv_and_full_match_triton(rng, case, dtype):
    n = 32
    x = (rng.standard_normal(n) * 10).astype(dtype)
    y = (rng.standard_normal(n) * 10).astype(dtype)
    out = np.zeros(n, np.float64)  # wide enough for every result; the store converts
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "tl.where with a non-boolean condition")
        want, got = SCALARS.last((1,), x, y, out, N=n, CASE=case)
    np.testing.assert_array_equal(got, want)


@tessel.jit
def where_int_condition(x_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(x_ptr + i, tl.where(i % 2, 1, 2))


def test_a_non_boolean_where_condition_warns_as_in_triton(tmp_path, monkeypatch):
    from tessel import knobs
    monkeypatch.setattr(knobs, "cache_dir", tmp_path)  # compiled here, not read from the disk cache
    out = np.zeros(16, np.int32)
    with pytest.warns(UserWarning, match="tl.where with a non-boolean condition is deprecated and will error out in "
                      "a future triton release. Got int32"):
        tessel.jit(where_int_condition.fn)[(1,)](out, N=16)
    np.testing.assert_array_equal(out, [2, 1] * 8)


# ----------------------------------------------------------------------------------------- xor_sum, reduce_or


def _bit_reductions_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    tl.store(out_ptr + tl.arange(0, N), tl.xor_sum(x, 0))
    tl.store(out_ptr + N + tl.arange(0, M), tl.reduce_or(x, 1))
    tl.store(out_ptr + N + M + tl.arange(0, M)[:, None], x.xor_sum(axis=1, keep_dims=True))
    tl.store(out_ptr + N + 2 * M, tl.xor_sum(x))
    tl.store(out_ptr + N + 2 * M + 1, x.reduce_or(None))


BIT_REDUCTIONS = Both(_bit_reductions_kernel)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "uint32", "int64", "uint64"])
def test_xor_sum_and_reduce_or_match_triton_and_numpy(rng, dtype):
    M, N = 8, 16
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, (M, N), dtype=dtype, endpoint=True)
    x[3] = 0  # a row whose or is 0
    out = np.zeros(N + 2 * M + 2, dtype)
    want, got = BIT_REDUCTIONS.last((1,), x, out, M=M, N=N)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got[:N], np.bitwise_xor.reduce(x, axis=0))
    np.testing.assert_array_equal(got[N:N + M], np.bitwise_or.reduce(x, axis=1))
    np.testing.assert_array_equal(got[N + M:N + 2 * M], np.bitwise_xor.reduce(x, axis=1))
    assert got[N + 2 * M] == np.bitwise_xor.reduce(x, axis=None)
    assert got[N + 2 * M + 1] == np.bitwise_or.reduce(x, axis=None)


@tessel.jit
def xor_of_floats(x_ptr, N: tl.constexpr):
    tl.store(x_ptr, tl.xor_sum(tl.load(x_ptr + tl.arange(0, N))))


def test_xor_sum_of_floats_is_an_error():
    with pytest.raises(tessel.CompilationError, match="xor_sum only supported for integers") as info:
        xor_of_floats[(1,)](np.zeros(16, np.float32), N=16)
    assert "tl.xor_sum(tl.load(x_ptr + tl.arange(0, N)))" in str(info.value)

