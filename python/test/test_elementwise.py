"""Element-wise operators, math functions, selection and casts against numpy.

Each kernel selects its operation with a string constexpr, so one kernel covers many
operators and only the chosen branch is compiled. Kernels that produce a value check
its dtype at compile time against the element type of the output array: the host
allocates the output with the dtype Triton's promotion rules give, so a wrong
promotion fails in `tl.static_assert` instead of being hidden by the store's
implicit cast.
"""
import numpy as np
import pytest

import tessel as triton
import tessel.language as tl

BLOCK = 128
# Neither is a multiple of BLOCK: one partially masked program, and several programs
# with a partially masked last one. (n == 1, which the launcher specializes as a
# constant, is covered once per kernel shape in test_memory and test_kernels rather
# than once per operator here, to keep the number of compiled variants down.)
SIZES = [100, 1000]

f16, f32, i32, i64 = np.float16, np.float32, np.int32, np.int64


def _grid(n):
    return (triton.cdiv(n, BLOCK),)


def c_floordiv(x, y):
    """Integer division truncating toward zero (C, Triton), not numpy's floor."""
    return (x - np.fmod(x, y)) // y


# ---------------------------------------------------------------------------
# tensor (op) tensor
# ---------------------------------------------------------------------------


@triton.jit
def _arith_kernel(x_ptr, y_ptr, out_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    # Masked-off lanes still go through the arithmetic; other=1 keeps integer division
    # in those lanes well defined (on a CPU, integer division by zero traps).
    y = tl.load(y_ptr + offs, mask=mask, other=1)
    if OP == "+":
        z = x + y
    elif OP == "-":
        z = x - y
    elif OP == "*":
        z = x * y
    elif OP == "/":
        z = x / y
    elif OP == "//":
        z = x // y
    elif OP == "%":
        z = x % y
    elif OP == "&":
        z = x & y
    elif OP == "|":
        z = x | y
    elif OP == "^":
        z = x ^ y
    elif OP == "<<":
        z = x << y
    else:
        tl.static_assert(OP == ">>")
        z = x >> y
    tl.static_assert(z.dtype == out_ptr.dtype.element_ty)
    tl.store(out_ptr + offs, z, mask=mask)


_NP_ARITH = {
    "+": np.add,
    "-": np.subtract,
    "*": np.multiply,
    "/": np.true_divide,
    "//": c_floordiv,
    "%": np.fmod,  # C remainder: the sign follows the dividend
    "&": np.bitwise_and,
    "|": np.bitwise_or,
    "^": np.bitwise_xor,
    "<<": np.left_shift,
    ">>": np.right_shift,  # arithmetic shift for signed ints, in numpy and in Triton
}

# (op, x dtype, y dtype, result dtype). fp16 `/` and `%` are computed in fp32 (Triton
# has no native fp16 division), int / int is true division to fp32, and in mixed
# tensor-tensor operations the float operand wins (fp16 beats int32).
_ARITH_CASES = (
    [(op, f32, f32, f32) for op in ["+", "-", "*", "/", "%"]]
    + [(op, f16, f16, f16) for op in ["+", "-", "*"]]
    + [(op, f16, f16, f32) for op in ["/", "%"]]
    + [(op, i32, i32, i32) for op in ["+", "-", "*", "//", "%", "&", "|", "^", "<<", ">>"]]
    + [
        ("/", i32, i32, f32),
        ("+", f16, f32, f32),
        ("*", i32, f32, f32),
        ("-", f16, i32, f16),
        ("/", i32, f16, f32),
        ("+", i32, i64, i64),
    ]
)


def _operands(rand, op, xdt, ydt, n):
    if op in ("<<", ">>"):
        return rand(n, xdt, -1000, 1000), rand(n, ydt, 0, 16)
    x = rand(n, xdt, -100, 100) if np.dtype(xdt).kind == "i" else rand(n, xdt)
    if op in ("/", "//", "%"):
        if np.dtype(ydt).kind == "i":
            return x, rand(n, ydt, -9, 10, nonzero=True)
        # Keep float divisors away from zero so the quotient stays well conditioned.
        mag = rand(n, ydt, 0.5, 2)
        return x, np.where(rand(n, i32, 0, 2) == 1, mag, -mag).astype(ydt)
    y = rand(n, ydt, -100, 100) if np.dtype(ydt).kind == "i" else rand(n, ydt)
    return x, y


def _assert_close(out, ref):
    if out.dtype.kind in "iu":
        np.testing.assert_array_equal(out, ref)
    else:
        rtol = 1e-3 if out.dtype == np.float16 else 1e-6
        np.testing.assert_allclose(out, ref, rtol=rtol, atol=1e-6)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize(
    "op,xdt,ydt,odt", _ARITH_CASES, ids=[f"{c[0]}-{np.dtype(c[1])}-{np.dtype(c[2])}" for c in _ARITH_CASES]
)
def test_arith(rand, op, xdt, ydt, odt, n):
    x, y = _operands(rand, op, xdt, ydt, n)
    out = np.empty(n, odt)
    _arith_kernel[_grid(n)](x, y, out, n, OP=op, BLOCK=BLOCK)
    # The reference computes in the result dtype, as the kernel does.
    ref = _NP_ARITH[op](x.astype(odt), y.astype(odt))
    _assert_close(out, ref)


@triton.jit
def _compare_kernel(x_ptr, y_ptr, out_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    if OP == "<":
        z = x < y
    elif OP == "<=":
        z = x <= y
    elif OP == ">":
        z = x > y
    elif OP == ">=":
        z = x >= y
    elif OP == "==":
        z = x == y
    else:
        tl.static_assert(OP == "!=")
        z = x != y
    tl.static_assert(z.dtype == tl.int1)
    tl.store(out_ptr + offs, z.to(tl.int32), mask=mask)


_NP_COMPARE = {
    "<": np.less,
    "<=": np.less_equal,
    ">": np.greater,
    ">=": np.greater_equal,
    "==": np.equal,
    "!=": np.not_equal,
}


@pytest.mark.parametrize("n", [100])
@pytest.mark.parametrize(
    "xdt,ydt", [(f32, f32), (f16, f16), (i32, i32), (i32, f32)], ids=["f32", "f16", "i32", "i32-f32"]
)
@pytest.mark.parametrize("op", list(_NP_COMPARE))
def test_compare(rand, op, xdt, ydt, n):
    x = rand(n, xdt, -5, 5)
    y = rand(n, ydt, -5, 5)
    # Equal elements in every third position make ==, <= and >= meaningful.
    y[::3] = x[::3]
    out = np.empty(n, i32)
    _compare_kernel[_grid(n)](x, y, out, n, OP=op, BLOCK=BLOCK)
    common = np.result_type(xdt, ydt)
    np.testing.assert_array_equal(out, _NP_COMPARE[op](x.astype(common), y.astype(common)).astype(i32))


# ---------------------------------------------------------------------------
# tensor (op) Python literal
# ---------------------------------------------------------------------------


@triton.jit
def _literal_kernel(x_ptr, out_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if OP == "x + 1.5":
        z = x + 1.5
    elif OP == "1.5 - x":
        z = 1.5 - x
    elif OP == "x * 3":
        z = x * 3
    elif OP == "3 - x":
        z = 3 - x
    elif OP == "x / 2":
        z = x / 2
    elif OP == "x // 3":
        z = x // 3
    elif OP == "x // -3":
        z = x // -3
    elif OP == "x % 3":
        z = x % 3
    elif OP == "x % 2.5":
        z = x % 2.5
    elif OP == "x << 2":
        z = x << 2
    elif OP == "x >> 1":
        z = x >> 1
    elif OP == "x & 7":
        z = x & 7
    elif OP == "x | 8":
        z = x | 8
    elif OP == "x ^ 5":
        z = x ^ 5
    elif OP == "x > 0.5":
        c = x > 0.5
        tl.static_assert(c.dtype == tl.int1)
        z = c.to(tl.int32)
    elif OP == "x == 3":
        c = x == 3
        tl.static_assert(c.dtype == tl.int1)
        z = c.to(tl.int32)
    else:
        tl.static_assert(OP == "x < 1")
        c = x < 1
        tl.static_assert(c.dtype == tl.int1)
        z = c.to(tl.int32)
    tl.static_assert(z.dtype == out_ptr.dtype.element_ty)
    tl.store(out_ptr + offs, z, mask=mask)


# (expression, input dtype, result dtype, reference). A Python scalar of the same or a
# lower kind than the tensor does not widen it (fp16 + 1.5 stays fp16, int32 * 3 stays
# int32); a float literal with an int tensor gives fp32; / and % on fp16 go to fp32.
_LITERAL_CASES = [
    ("x + 1.5", f16, f16, lambda x: x + f16(1.5)),
    ("x + 1.5", f32, f32, lambda x: x + f32(1.5)),
    ("x + 1.5", i32, f32, lambda x: x.astype(f32) + f32(1.5)),
    ("1.5 - x", f32, f32, lambda x: f32(1.5) - x),
    ("x * 3", f16, f16, lambda x: x * f16(3)),
    ("x * 3", i32, i32, lambda x: x * 3),
    ("3 - x", i32, i32, lambda x: 3 - x),
    ("x / 2", i32, f32, lambda x: x.astype(f32) / f32(2)),
    ("x / 2", f16, f32, lambda x: x.astype(f32) / f32(2)),
    ("x // 3", i32, i32, lambda x: c_floordiv(x, 3)),
    ("x // -3", i32, i32, lambda x: c_floordiv(x, -3)),
    ("x % 3", i32, i32, lambda x: np.fmod(x, 3)),
    ("x % 2.5", f32, f32, lambda x: np.fmod(x, f32(2.5))),
    ("x << 2", i32, i32, lambda x: x << 2),
    ("x >> 1", i32, i32, lambda x: x >> 1),
    ("x & 7", i32, i32, lambda x: x & 7),
    ("x | 8", i32, i32, lambda x: x | 8),
    ("x ^ 5", i32, i32, lambda x: x ^ 5),
    ("x > 0.5", f32, i32, lambda x: (x > 0.5).astype(i32)),
    ("x == 3", i32, i32, lambda x: (x == 3).astype(i32)),
    ("x < 1", f16, i32, lambda x: (x < 1).astype(i32)),
]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize(
    "expr,xdt,odt,ref", _LITERAL_CASES, ids=[f"{c[0]}-{np.dtype(c[1])}" for c in _LITERAL_CASES]
)
def test_literal_operand(rand, expr, xdt, odt, ref, n):
    x = rand(n, xdt, -50, 50) if np.dtype(xdt).kind == "i" else rand(n, xdt)
    out = np.empty(n, odt)
    _literal_kernel[_grid(n)](x, out, n, OP=expr, BLOCK=BLOCK)
    _assert_close(out, ref(x).astype(odt))


# ---------------------------------------------------------------------------
# unary operators and math functions
# ---------------------------------------------------------------------------


@triton.jit
def _unary_kernel(x_ptr, out_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1)
    if OP == "neg":
        z = -x
    elif OP == "invert":
        z = ~x
    elif OP == "abs":
        z = tl.abs(x)
    elif OP == "exp":
        z = tl.exp(x)
    elif OP == "exp2":
        z = tl.exp2(x)
    elif OP == "log":
        z = tl.log(x)
    else:
        tl.static_assert(OP == "sqrt")
        z = tl.sqrt(x)
    tl.static_assert(z.dtype == x.dtype)
    tl.store(out_ptr + offs, z, mask=mask)


# (op, dtype, input range, reference). Triton's exp/exp2/log/sqrt accept fp32 (and
# fp64) only; fp16 users convert with .to(tl.float32) first, as test_math_on_fp16 does.
_UNARY_CASES = [
    ("neg", f32, (-4, 4), np.negative),
    ("neg", f16, (-4, 4), np.negative),
    ("neg", i32, (-1000, 1000), np.negative),
    ("invert", i32, (-1000, 1000), np.invert),
    ("abs", f32, (-4, 4), np.abs),
    ("abs", f16, (-4, 4), np.abs),
    ("abs", i32, (-1000, 1000), np.abs),
    ("exp", f32, (-10, 10), np.exp),
    ("exp2", f32, (-20, 20), np.exp2),
    ("log", f32, (1e-3, 1e3), np.log),
    ("sqrt", f32, (0, 1e4), np.sqrt),
]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("op,dt,rng_,ref", _UNARY_CASES, ids=[f"{c[0]}-{np.dtype(c[1])}" for c in _UNARY_CASES])
def test_unary(rand, op, dt, rng_, ref, n):
    x = rand(n, dt, *rng_)
    out = np.empty(n, dt)
    _unary_kernel[_grid(n)](x, out, n, OP=op, BLOCK=BLOCK)
    if np.dtype(dt).kind == "i":
        np.testing.assert_array_equal(out, ref(x))
    else:
        # Transcendentals may use vectorized polynomial approximations: a few ulp.
        np.testing.assert_allclose(out, ref(x), rtol=1e-5 if dt == f32 else 1e-3, atol=1e-6)


@triton.jit
def _softplus_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    z = tl.log(1.0 + tl.exp(x))
    tl.store(out_ptr + offs, z.to(tl.float16), mask=mask)


def test_math_on_fp16(rand):
    n = 300
    x = rand(n, f16, -6, 6)
    out = np.empty(n, f16)
    _softplus_kernel[_grid(n)](x, out, n, BLOCK=BLOCK)
    ref = np.log1p(np.exp(x.astype(np.float64)))
    np.testing.assert_allclose(out, ref, rtol=2e-3, atol=1e-3)


# ---------------------------------------------------------------------------
# where / maximum / minimum
# ---------------------------------------------------------------------------


@triton.jit
def _select_kernel(x_ptr, y_ptr, out_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    if OP == "where":
        z = tl.where(x > y, x, y * 2)
    elif OP == "where_literal":
        z = tl.where(x > 0, x, 0)
    elif OP == "maximum":
        z = tl.maximum(x, y)
    else:
        tl.static_assert(OP == "minimum")
        z = tl.minimum(x, y)
    tl.static_assert(z.dtype == out_ptr.dtype.element_ty)
    tl.store(out_ptr + offs, z, mask=mask)


_NP_SELECT = {
    "where": lambda x, y: np.where(x > y, x, y * 2),
    "where_literal": lambda x, y: np.where(x > 0, x, 0),
    "maximum": np.maximum,
    "minimum": np.minimum,
}


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dt", [f32, f16, i32], ids=["f32", "f16", "i32"])
@pytest.mark.parametrize("op", list(_NP_SELECT))
def test_select(rand, op, dt, n):
    x = rand(n, dt, -100, 100)
    y = rand(n, dt, -100, 100)
    out = np.empty(n, dt)
    _select_kernel[_grid(n)](x, y, out, n, OP=op, BLOCK=BLOCK)
    np.testing.assert_array_equal(out, _NP_SELECT[op](x, y).astype(dt))


# ---------------------------------------------------------------------------
# casts
# ---------------------------------------------------------------------------


@triton.jit
def _cast_kernel(x_ptr, out_ptr, n, HOW: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if HOW == "method":
        z = x.to(out_ptr.dtype.element_ty)
    elif HOW == "function":
        z = tl.cast(x, out_ptr.dtype.element_ty)
    else:
        tl.static_assert(HOW == "bitcast")
        z = x.to(out_ptr.dtype.element_ty, bitcast=True)
    tl.static_assert(z.dtype == out_ptr.dtype.element_ty)
    tl.store(out_ptr + offs, z, mask=mask)


# Float -> int truncates toward zero, int -> narrower int wraps, fp32 -> fp16 rounds to
# nearest even: numpy's astype does the same, so it is the reference.
_CAST_CASES = [
    ("method", f32, i32, (-1000, 1000)),
    ("function", i32, f32, (-100000, 100000)),
    ("method", f32, f16, (-1000, 1000)),
    ("method", f16, f32, (-1000, 1000)),
    ("function", f16, i32, (-1000, 1000)),
    ("method", i32, np.int8, (-1000, 1000)),
    ("bitcast", f32, i32, (-1000, 1000)),
    ("bitcast", i32, f32, (2**23, 2**30)),  # normal floats only: no denormal flushing
]


@pytest.mark.parametrize("n", [100])
@pytest.mark.parametrize(
    "how,src,dst,rng_", _CAST_CASES, ids=[f"{c[0]}-{np.dtype(c[1])}-{np.dtype(c[2])}" for c in _CAST_CASES]
)
def test_cast(rand, how, src, dst, rng_, n):
    x = rand(n, src, *rng_)
    out = np.empty(n, dst)
    _cast_kernel[_grid(n)](x, out, n, HOW=how, BLOCK=BLOCK)
    ref = x.view(dst) if how == "bitcast" else x.astype(dst)
    np.testing.assert_array_equal(out, ref)
