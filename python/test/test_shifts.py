"""Shifts on every pair of integer types, checked against OpenAI Triton's interpreter (the semantic oracle).

`>>` is arithmetic when the value being shifted is signed, whatever the type of the shift amount and whatever type
the operands are promoted to (int8 -128 >> uint8 1 is 0xC0 = 192 as uint8, not 64); the result has the promoted
type. The same kernel source runs under Triton's interpreter (on torch CPU tensors) and under tessel; values and
result dtypes must agree."""
import os
import types

import numpy as np
import pytest

# Triton reads this when a kernel is decorated; set it before importing triton. Only the tests import triton.
os.environ["TRITON_INTERPRET"] = "1"
torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
import triton.language as ttl  # noqa: E402

import tessel  # noqa: E402
import tessel.language as tl  # noqa: E402

N = 16
INT_TYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]

# Result dtypes Triton reports (kernels below note them here while running under its interpreter).
_SEEN = types.ModuleType("_seen_dtypes")
_SEEN.dtypes = []
_SEEN.note = _SEEN.dtypes.append


def _shift_kernel(x_ptr, y_ptr, out_ptr, N: tl.constexpr, OP: tl.constexpr, EXPECTED: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    if OP == ">>":
        z = x >> y
    else:
        z = x << y
    if EXPECTED is None:
        _SEEN.note(z.dtype)
    else:
        tl.static_assert(z.dtype == EXPECTED, "result dtype differs from Triton's")
    tl.store(out_ptr + offs, z)


def _shift_by_literal_kernel(x_ptr, out_ptr, N: tl.constexpr, OP: tl.constexpr, LIT: tl.constexpr,
                             EXPECTED: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    if OP == ">>":
        z = x >> LIT
    elif OP == "<<":
        z = x << LIT
    elif OP == "literal >>":
        z = LIT >> x
    else:
        z = LIT << x
    if EXPECTED is None:
        _SEEN.note(z.dtype)
    else:
        tl.static_assert(z.dtype == EXPECTED, "result dtype differs from Triton's")
    tl.store(out_ptr + offs, z)


def _with_language(fn, language):
    """`fn` with `tl` bound to `language` (the same code object, so the same source and line numbers)."""
    scope = dict(fn.__globals__, tl=language)
    clone = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)
    clone.__annotations__ = dict(fn.__annotations__)
    return clone


_TRITON = {fn.__name__: triton.jit(_with_language(fn, ttl)) for fn in (_shift_kernel, _shift_by_literal_kernel)}
_TESSEL = {fn.__name__: tessel.jit(fn) for fn in (_shift_kernel, _shift_by_literal_kernel)}


def _values(rng, name):
    """N values of the type: its extremes, -1, 0, 1 and random ones."""
    info = np.iinfo(name)
    special = [info.min, info.max, 0, 1, info.max // 3, -1 if info.min else 2, info.min // 2]
    rest = rng.integers(info.min, info.max, size=N - len(special), dtype=name, endpoint=True)
    return np.concatenate([np.array(special, dtype=name), rest])


def _amounts(rng, name):
    """Shift amounts 0..7: valid for every type (a shift by the width or more is undefined, in Triton too)."""
    return np.concatenate([np.arange(8), rng.integers(0, 8, size=N - 8)]).astype(name)


def _run_both(kernel, arrays, **constexprs):
    """Runs `kernel` on the numpy `arrays` (plus an output, its last argument) under Triton's interpreter, then
    under tessel, which must give the result the dtype Triton reported. Returns (dtype, Triton's, tessel's)."""
    def triton_run(out):
        del _SEEN.dtypes[:]
        _TRITON[kernel][(1,)](*[torch.from_numpy(a.copy()) for a in arrays], out, **constexprs, EXPECTED=None)
        (dtype,) = set(str(d) for d in _SEEN.dtypes)
        return dtype

    # A first run learns the result dtype; the second stores into an output of exactly that type.
    result = triton_run(torch.zeros(N, dtype=torch.int64))
    out_triton = torch.zeros(N, dtype=getattr(torch, result))
    assert triton_run(out_triton) == result
    out_tessel = np.zeros(N, dtype=result)
    _TESSEL[kernel][(1,)](*arrays, out_tessel, **constexprs, EXPECTED=getattr(tl, result))
    return result, out_triton.numpy(), out_tessel


@pytest.mark.parametrize("op", [">>", "<<"])
@pytest.mark.parametrize("y_type", INT_TYPES)
@pytest.mark.parametrize("x_type", INT_TYPES)
def test_shift_tensor_by_tensor(x_type, y_type, op, rng):
    x, y = _values(rng, x_type), _amounts(rng, y_type)
    result, expected, got = _run_both("_shift_kernel", [x, y], N=N, OP=op)
    np.testing.assert_array_equal(got, expected, err_msg=f"{x_type} {op} {y_type} -> {result}, x={x}, y={y}")


@pytest.mark.parametrize("literal", [1, 3, 7])
@pytest.mark.parametrize("op", [">>", "<<"])
@pytest.mark.parametrize("x_type", INT_TYPES)
def test_shift_tensor_by_literal(x_type, op, literal, rng):
    x = _values(rng, x_type)
    result, expected, got = _run_both("_shift_by_literal_kernel", [x], N=N, OP=op, LIT=literal)
    np.testing.assert_array_equal(got, expected, err_msg=f"{x_type} {op} {literal} -> {result}, x={x}")


@pytest.mark.parametrize("op", ["literal >>", "literal <<"])
@pytest.mark.parametrize("y_type", INT_TYPES)
def test_shift_literal_by_tensor(y_type, op, rng):
    # Literals that fit the tensor's type (Triton rejects the others).
    for literal in ([-100, 100] if y_type.startswith("int") else [100, 200]):
        y = _amounts(rng, y_type)
        result, expected, got = _run_both("_shift_by_literal_kernel", [y], N=N, OP=op, LIT=literal)
        np.testing.assert_array_equal(got, expected, err_msg=f"{literal} {op[-2:]} {y_type} -> {result}, y={y}")


def test_signed_value_shifted_by_unsigned_amount():
    """The case of the issue, with its numbers, independently of Triton: int8 -128 >> uint8 1 is 0xC0 (192 as
    uint8, the promoted type), -1 >> 3 stays all ones."""
    x = np.array([-128, -1, 64, -2] * (N // 4), dtype=np.int8)
    y = np.array([1, 3, 1, 1] * (N // 4), dtype=np.uint8)
    out = np.zeros(N, np.uint8)
    _TESSEL["_shift_kernel"][(1,)](x, y, out, N=N, OP=">>", EXPECTED=tl.uint8)
    np.testing.assert_array_equal(out, np.array([192, 255, 32, 255] * (N // 4), dtype=np.uint8))
