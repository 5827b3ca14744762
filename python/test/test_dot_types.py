"""The result type of tl.dot, and integer dots: int8 operands accumulate in int32 and return int32 whatever
out_dtype says (a sum of 16 products 3*5 is 240, never truncated to int8). Values are checked against numpy's
int32/float64 matmul; which (operand, out_dtype, acc) combinations are accepted, and the result dtypes, against
Triton's interpreter."""
import os
import types

import numpy as np
import pytest

os.environ["TRITON_INTERPRET"] = "1"  # read by triton when a kernel is decorated; only the tests import triton
torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
import triton.language as ttl  # noqa: E402

import tessel  # noqa: E402
import tessel.language as tl  # noqa: E402
from tessel import _C  # noqa: E402
from tessel.compiler.code_generator import generate  # noqa: E402

M, N, K = 16, 16, 32

_SEEN = types.ModuleType("_seen_dtypes")
_SEEN.dtypes = []
_SEEN.note = _SEEN.dtypes.append


def _dot_kernel(a_ptr, b_ptr, acc_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                IN: tl.constexpr, OUT: tl.constexpr, ACC: tl.constexpr, NOTE: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :]).to(IN)
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :]).to(IN)
    if ACC is None:
        if OUT is None:
            c = tl.dot(a, b)
        else:
            c = tl.dot(a, b, out_dtype=OUT)
    else:
        acc = tl.load(acc_ptr + rm[:, None] * N + rn[None, :]).to(ACC)
        if OUT is None:
            c = tl.dot(a, b, acc)
        else:
            c = tl.dot(a, b, acc, out_dtype=OUT)
    if NOTE:
        _SEEN.note(c.dtype)
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], c.to(tl.float32))


def _with_language(fn, language):
    scope = dict(fn.__globals__, tl=language)
    clone = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)
    clone.__annotations__ = dict(fn.__annotations__)
    return clone


_triton_dot = triton.jit(_with_language(_dot_kernel, ttl))
_tessel_dot = tessel.jit(_dot_kernel)


def _inputs(rng, int_range):
    low, high = (-128, 128) if int_range else (-4, 5)
    # Held in fp32 (exact: small integers) and converted in the kernel.
    a = rng.integers(low, high, size=(M, K)).astype(np.float32)
    b = rng.integers(low, high, size=(K, N)).astype(np.float32)
    acc = rng.integers(-1000, 1000, size=(M, N)).astype(np.float32)
    return a, b, acc


def _triton(a, b, acc, IN, OUT, ACC):
    """Triton's result dtype name, or None when Triton rejects the combination."""
    del _SEEN.dtypes[:]
    out = torch.zeros((M, N), dtype=torch.float32)
    dt = lambda name: None if name is None else getattr(ttl, name)  # noqa: E731
    try:
        _triton_dot[(1,)](*(torch.from_numpy(x) for x in (a, b, acc)), out, M=M, N=N, K=K, IN=dt(IN), OUT=dt(OUT),
                          ACC=dt(ACC), NOTE=True)
    except Exception:
        return None
    return str(_SEEN.dtypes[0])


def _tessel(a, b, acc, IN, OUT, ACC):
    out = np.zeros((M, N), np.float32)
    dt = lambda name: None if name is None else getattr(tl, name)  # noqa: E731
    _tessel_dot[(1,)](a, b, acc, out, M=M, N=N, K=K, IN=dt(IN), OUT=dt(OUT), ACC=dt(ACC), NOTE=False)
    return out


def _tessel_dtype(IN, OUT, ACC):
    """The result dtype tessel gives (read from the kernel's tile IR, without compiling it), or None when it rejects
    the combination."""
    constexprs = dict(M=M, N=N, K=K, IN=getattr(tl, IN), OUT=None if OUT is None else getattr(tl, OUT),
                      ACC=None if ACC is None else getattr(tl, ACC), NOTE=False)
    builder = _C.Builder()
    try:
        generate(_tessel_dot, builder, ["*fp32"] * 4, constexprs)
    except tessel.CompilationError:
        return None
    dot_line = next(line for line in builder.module_str().splitlines() if "tile.dot" in line)
    return dot_line.rsplit("x", 1)[-1].rstrip(">").strip()


# Triton's dtype names -> the element type in tessel's IR.
_IR_ELEMENT = {"int32": "i32", "fp32": "f32", "fp16": "f16", "fp64": "f64"}

OUT_DTYPES = [None, "int8", "int32", "int64", "float16", "float32", "bfloat16"]


@pytest.mark.parametrize("operands,out", [
    (operands, out) for operands in ["int8", "float16", "bfloat16", "float32", "float64"] for out in OUT_DTYPES])
def test_dot_result_dtype_matches_triton(operands, out, rng):
    """Without an accumulator: tessel accepts what Triton accepts, with the same result dtype and numpy's values."""
    a, b, acc = _inputs(rng, int_range=operands == "int8")
    expected = _triton(a, b, acc, operands, out, None)
    if operands == "float16" and out in ("int8", "int32", "int64"):
        # Triton builds an fp32 zero accumulator and gives the result out_dtype's type: an int block holding floats
        # that only its interpreter lets through. tessel rejects the combination.
        expected = None
    got = _tessel_dtype(operands, out, None)
    assert got == (None if expected is None else _IR_ELEMENT[expected]), \
        f"dot of {operands} with out_dtype={out}: Triton gives {expected}, tessel {got}"
    if expected is None:
        return
    result = _tessel(a, b, acc, operands, out, None)
    reference = a.astype(np.float64) @ b  # exact: small integers, sums below 2^24
    if expected == "fp16":  # fp16 sums round
        np.testing.assert_allclose(result, reference, rtol=1e-3)
    else:
        np.testing.assert_array_equal(result, reference)


@pytest.mark.parametrize("acc,out", [("int32", None), ("int32", "int32"), ("int32", "int8"), ("int32", "float32"),
                                     ("int8", None), ("int8", "int8"), ("int64", "int64"), ("float32", None)])
def test_int8_dot_accumulator(acc, out, rng):
    """An int8 dot accumulates onto an int32 block only; out_dtype, when given, must be the accumulator's type (as
    in Triton, which asserts it). An int8 accumulator is an error, not a silently narrowed sum."""
    a, b, c = _inputs(rng, int_range=True)
    valid = acc == "int32" and out in (None, "int32")
    if not valid:
        with pytest.raises(tessel.CompilationError, match="dot"):
            _tessel(a, b, c, "int8", out, acc)
        return
    np.testing.assert_array_equal(_tessel(a, b, c, "int8", out, acc), c + a.astype(np.float64) @ b)


@pytest.mark.parametrize("operands", ["uint8", "int16", "int32", "int64"])
def test_dot_other_integer_operands_are_errors(operands, rng):
    """Triton's integer dot takes int8 only; other integer operands are a compile error naming the type."""
    a, b, c = _inputs(rng, int_range=False)
    assert _triton(a, b, c, operands, None, None) is None
    with pytest.raises(tessel.CompilationError, match="integer operands must be int8"):
        _tessel(a, b, c, operands, None, None)


def test_int8_dot_does_not_truncate_to_out_dtype():
    """The issue's case: 16 products of 3 * 5 with out_dtype=tl.int8 give 240 (an int32), not -16."""
    a = np.full((M, K), 3, np.float32)
    a[:, 16:] = 0
    b = np.full((K, N), 5, np.float32)
    out = _tessel(a, b, np.zeros((M, N), np.float32), "int8", "int8", None)
    np.testing.assert_array_equal(out, np.full((M, N), 240.0))
