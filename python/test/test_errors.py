"""Invalid kernels fail at launch with tessel.CompilationError, and the message shows
the offending source line so the user can find it without a debugger."""
import warnings

import numpy as np
import pytest

import tessel as triton
import tessel.language as tl
from tessel import _C

# Read by _global_read_kernel: a plain global, not a tl.constexpr, so a kernel may not
# depend on it (its value could change after the kernel was compiled).
_NOT_CONSTEXPR_SCALE = 3.0


@triton.jit
def _pointer_plus_pointer_kernel(x_ptr, y_ptr, out_ptr):
    bad = x_ptr + y_ptr
    tl.store(out_ptr, tl.load(bad))


@triton.jit
def _store_shape_mismatch_kernel(out_ptr):
    offs = tl.arange(0, 64)
    tl.store(out_ptr + offs, tl.zeros((32,), dtype=tl.float32))


@triton.jit
def _unknown_builtin_kernel(x_ptr):
    x = tl.load(x_ptr)
    tl.store(x_ptr, tl.no_such_function(x))


@triton.jit
def _undefined_name_kernel(x_ptr):
    x = tl.load(x_ptr)
    tl.store(x_ptr, no_such_helper(x))  # noqa: F821 -- deliberately undefined


@triton.jit
def _try_kernel(x_ptr):
    try:
        tl.store(x_ptr, 1.0)
    except Exception:
        pass


@triton.jit
def _global_read_kernel(x_ptr):
    tl.store(x_ptr, tl.load(x_ptr) * _NOT_CONSTEXPR_SCALE)


def _f32(n):
    return np.ones(n, np.float32)


# (kernel, its arguments, text of the line the error must show)
CASES = {
    "pointer-plus-pointer": (_pointer_plus_pointer_kernel, lambda: (_f32(1), _f32(1), _f32(1)), "bad = x_ptr + y_ptr"),
    "store-shape-mismatch": (
        _store_shape_mismatch_kernel,
        lambda: (np.zeros(64, np.int32),),
        "tl.store(out_ptr + offs, tl.zeros((32,), dtype=tl.float32))",
    ),
    "unknown-builtin": (_unknown_builtin_kernel, lambda: (_f32(1),), "tl.store(x_ptr, tl.no_such_function(x))"),
    "undefined-function": (_undefined_name_kernel, lambda: (_f32(1),), "tl.store(x_ptr, no_such_helper(x))"),
    "try-block": (_try_kernel, lambda: (_f32(1),), "try:"),
    "non-constexpr-global": (
        _global_read_kernel,
        lambda: (_f32(1),),
        "tl.store(x_ptr, tl.load(x_ptr) * _NOT_CONSTEXPR_SCALE)",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_compilation_error_shows_source_line(case):
    kernel, make_args, line = CASES[case]
    with pytest.raises(triton.CompilationError) as excinfo:
        kernel[(1,)](*make_args())
    message = str(excinfo.value)
    assert line in message, f"the error does not show the offending line {line!r}:\n{message}"


@triton.jit
def _fill_kernel(out_ptr, N: tl.constexpr):
    tl.store(out_ptr + tl.arange(0, 32), tl.zeros((N,), dtype=tl.float32) + 1)


def test_kernel_still_usable_after_a_failed_compile():
    # A failed specialization must not poison the kernel's cache: the same kernel
    # with a valid constexpr compiles and runs afterwards.
    with pytest.raises(triton.CompilationError):
        _fill_kernel[(1,)](np.zeros(64, np.float32), N=64)
    out = np.zeros(64, np.float32)
    _fill_kernel[(1,)](out, N=32)
    np.testing.assert_array_equal(out, np.r_[np.ones(32), np.zeros(32)])


# ---------------------------------------------------------------------------
# Errors Triton 3.6 raises, with its words (checked against its interpreter and
# code generator), each shown at the kernel's line.
# ---------------------------------------------------------------------------


@triton.jit
def _literal_kernel(x_ptr, out_ptr, OP: tl.constexpr):
    offs = tl.arange(0, 8)
    x = tl.load(x_ptr + offs)
    if OP == "x + 300":
        z = x + 300
    elif OP == "300 - x":
        z = 300 - x
    elif OP == "x * -129":
        z = x * -129
    elif OP == "x / 300":
        z = x / 300
    elif OP == "x // 128":
        z = x // 128
    elif OP == "x % 300":
        z = x % 300
    elif OP == "x & 255":
        z = x & 255
    elif OP == "x | -129":
        z = x | -129
    elif OP == "x ^ 256":
        z = x ^ 256
    elif OP == "x << 300":
        z = x << 300
    elif OP == "x >> 128":
        z = x >> 128
    elif OP == "tl.where(x > 0, x, 300)":
        z = tl.where(x > 0, x, 300)
    elif OP == "x + -1":
        z = x + -1
    elif OP == "x - 256":
        z = x - 256
    elif OP == "tl.where(x > 0, -1, x)":
        z = tl.where(x > 0, -1, x)
    elif OP == "x + 40000":
        z = x + 40000
    elif OP == "x + 2147483648":
        z = x + 2147483648
    elif OP == "x * -1":
        z = x * -1
    elif OP == "x + 9223372036854775808":
        z = x + 9223372036854775808
    elif OP == "x + 18446744073709551616":
        z = x + 18446744073709551616
    # Legal: the literal fits the tensor's type, or the operation gives the literal its own type.
    elif OP == "x + 127":
        z = x + 127
    elif OP == "x + -128":
        z = x + -128
    elif OP == "x - 127":
        z = x - 127
    elif OP == "x + 255":
        z = x + 255
    elif OP == "x * 0":
        z = x * 0
    elif OP == "tl.where(x > 0, x, 127)":
        z = tl.where(x > 0, x, 127)
    elif OP == "x < 300":
        z = x < 300
    elif OP == "x > -1":
        z = x > -1
    elif OP == "x == 300":
        z = x == 300
    elif OP == "x != -129":
        z = x != -129
    elif OP == "tl.maximum(x, 300)":
        z = tl.maximum(x, 300)
    elif OP == "tl.minimum(x, -300)":
        z = tl.minimum(x, -300)
    elif OP == "tl.maximum(x, -1)":
        z = tl.maximum(x, -1)
    elif OP == "x < 0.1":
        z = x < 0.1
    elif OP == "tl.maximum(x, 0.0)":
        z = tl.maximum(x, 0.0)
    elif OP == "x + 1e300":
        z = x + 1e300
    elif OP == "x > 1e-50":
        z = x > 1e-50
    elif OP == "x * 0x9E3779B97F4A7C15":
        z = x * 0x9E3779B97F4A7C15
    elif OP == "x & 0xFFFFFFFFFFFFFFFF":
        z = x & 0xFFFFFFFFFFFFFFFF
    elif OP == "x < 9223372036854775808":
        z = x < 9223372036854775808
    else:
        tl.static_assert(OP == "x + 4294967295")
        z = x + 4294967295
    # The host allocates the output with the type Triton gives the result.
    tl.static_assert(z.dtype == out_ptr.dtype.element_ty)
    tl.store(out_ptr + offs, z)


_OUT_OF_RANGE = "Scalar {} is out of range for type {}"
_NEGATIVE = "Cannot perform a binary operation between an unsigned tensor and a negative scalar"

# (expression, tensor dtype, Triton's message): a Python int takes the type of the integer tensor it meets in
# arithmetic, bitwise operations and tl.where, so it must be a value of that type (not just fit its bits: int8 & 255
# is refused), and not negative if the type is unsigned.
_LITERAL_ERRORS = [
    ("x + 300", np.int8, _OUT_OF_RANGE.format(300, "int8")),
    ("300 - x", np.int8, _OUT_OF_RANGE.format(300, "int8")),
    ("x * -129", np.int8, _OUT_OF_RANGE.format(-129, "int8")),
    ("x / 300", np.int8, _OUT_OF_RANGE.format(300, "int8")),  # checked before / goes to fp32
    ("x // 128", np.int8, _OUT_OF_RANGE.format(128, "int8")),
    ("x % 300", np.int8, _OUT_OF_RANGE.format(300, "int8")),
    ("x + 255", np.int8, _OUT_OF_RANGE.format(255, "int8")),  # uint8's range does not count
    ("x & 255", np.int8, _OUT_OF_RANGE.format(255, "int8")),
    ("x | -129", np.int8, _OUT_OF_RANGE.format(-129, "int8")),
    ("x ^ 256", np.uint8, _OUT_OF_RANGE.format(256, "uint8")),
    ("x << 300", np.int8, _OUT_OF_RANGE.format(300, "int8")),
    ("x >> 128", np.int8, _OUT_OF_RANGE.format(128, "int8")),
    ("tl.where(x > 0, x, 300)", np.int8, _OUT_OF_RANGE.format(300, "int8")),
    ("x + -1", np.uint8, _NEGATIVE),
    ("x - 256", np.uint8, _OUT_OF_RANGE.format(256, "uint8")),
    ("tl.where(x > 0, -1, x)", np.uint8, _NEGATIVE),
    ("x + 40000", np.int16, _OUT_OF_RANGE.format(40000, "int16")),
    ("x + 2147483648", np.int32, _OUT_OF_RANGE.format(2147483648, "int32")),
    ("x * -1", np.uint32, _NEGATIVE),
    ("x * -1", np.uint64, _NEGATIVE),
    # An int from 2**63 to 2**64 - 1 is a uint64 literal: only uint64 holds it (before, it became a float).
    ("x + 9223372036854775808", np.int64, _OUT_OF_RANGE.format(2**63, "int64")),
    ("x + 18446744073709551616", np.uint64, "Nonrepresentable integer 18446744073709551616"),
]


@pytest.mark.parametrize("expr, dtype, message", _LITERAL_ERRORS,
                         ids=[f"{e}-{np.dtype(d)}" for e, d, _ in _LITERAL_ERRORS])
def test_a_literal_out_of_the_tensors_range_is_an_error(expr, dtype, message):
    with pytest.raises(triton.CompilationError) as excinfo:
        _literal_kernel[(1,)](np.zeros(8, dtype), np.zeros(8, dtype), OP=expr)
    text = str(excinfo.value)
    assert message in text
    assert f"z = {expr}" in text, f"the error does not show the offending line:\n{text}"


_X = {
    np.int8: [-128, -3, -1, 0, 1, 2, 100, 127], np.uint8: [0, 1, 2, 3, 100, 128, 254, 255],
    np.int32: [-7, -1, 0, 1, 2, 3, 1000, 2**31 - 1], np.uint32: [0, 1, 2, 3, 5, 2**31, 2**32 - 2, 2**32 - 1],
    # fp16(0.1) is below 0.1: Triton compares it with the fp32 literal in fp32 (true), not in fp16 (false).
    np.float16: [np.float16(0.1), -2, -0.5, 0, 0.25, 1, 3, 65504],
    np.float64: [0, 1e-60, -1e-50, 1e-50, 2e-50, 1, -1, 3],
    np.uint64: [0, 1, 2, 3, 2**32, 2**63 - 1, 2**63, 2**64 - 1], np.int64: [-2**63, -1, 0, 1, 2, 3, 5, 2**63 - 1],
}

# (expression, tensor dtype, result dtype, numpy reference). Comparisons and tl.maximum/minimum give a literal its
# own type (int32, fp32; fp64 if fp32 cannot hold it), which then widens the tensor like any value.
_LITERAL_LEGAL = [
    ("x + 127", np.int8, np.int8, lambda x: x + np.int8(127)),
    ("x + -128", np.int8, np.int8, lambda x: x + np.int8(-128)),
    ("x - 127", np.int8, np.int8, lambda x: x - np.int8(127)),
    ("x + 255", np.uint8, np.uint8, lambda x: x + np.uint8(255)),
    ("x * 0", np.uint8, np.uint8, lambda x: x * np.uint8(0)),
    ("tl.where(x > 0, x, 127)", np.int8, np.int8, lambda x: np.where(x > 0, x, np.int8(127))),
    ("x + 4294967295", np.uint32, np.uint32, lambda x: x + np.uint32(2**32 - 1)),
    ("x < 300", np.int8, np.bool_, lambda x: x.astype(np.int32) < 300),
    ("x > -1", np.uint8, np.bool_, lambda x: x.astype(np.int32) > -1),
    ("x == 300", np.int8, np.bool_, lambda x: x.astype(np.int32) == 300),
    ("x != -129", np.int8, np.bool_, lambda x: x.astype(np.int32) != -129),
    ("x > -1", np.uint32, np.bool_, lambda x: x > np.uint32(2**32 - 1)),  # C rules: -1 becomes uint32's maximum
    ("tl.maximum(x, 300)", np.int8, np.int32, lambda x: np.maximum(x.astype(np.int32), 300)),
    ("tl.minimum(x, -300)", np.int8, np.int32, lambda x: np.minimum(x.astype(np.int32), -300)),
    ("tl.maximum(x, -1)", np.uint8, np.int32, lambda x: np.maximum(x.astype(np.int32), -1)),
    ("x < 0.1", np.float16, np.bool_, lambda x: x.astype(np.float32) < np.float32(0.1)),
    ("tl.maximum(x, 0.0)", np.float16, np.float32, lambda x: np.maximum(x.astype(np.float32), 0)),
    ("x + 1e300", np.int32, np.float64, lambda x: x.astype(np.float64) + 1e300),
    ("x > 1e-50", np.float64, np.bool_, lambda x: x > 1e-50),
    ("x * 0x9E3779B97F4A7C15", np.uint64, np.uint64, lambda x: x * np.uint64(0x9E3779B97F4A7C15)),
    ("x & 0xFFFFFFFFFFFFFFFF", np.uint64, np.uint64, lambda x: x),
    ("x < 9223372036854775808", np.int64, np.bool_, lambda x: x.astype(np.uint64) < np.uint64(2**63)),  # as uint64
]


@pytest.mark.parametrize("expr, dtype, out_dtype, ref", _LITERAL_LEGAL,
                         ids=[f"{e}-{np.dtype(d)}" for e, d, _, _ in _LITERAL_LEGAL])
def test_a_literal_the_operation_can_hold_is_legal(expr, dtype, out_dtype, ref):
    x = np.array(_X[dtype], dtype)
    out = np.zeros(8, out_dtype)
    with np.errstate(over="ignore"):
        expected = ref(x).astype(out_dtype)
    _literal_kernel[(1,)](x, out, OP=expr)
    np.testing.assert_array_equal(out, expected)


def test_the_types_of_literals_beyond_int64_and_fp32():
    # Triton's to_tensor: ints up to 2**64 - 1 (uint64), floats fp32 unless fp32 flushes or overflows them (fp64).
    assert [_C.literal_type(v) for v in (2**63 - 1, 2**63, 2**64 - 1)] == ["i64", "u64", "u64"]
    assert [_C.literal_type(v) for v in (1.5, 2.0**-126, 1e-50, 1e300, 0.0, float("inf"))] == \
        ["fp32", "fp32", "fp64", "fp64", "fp32", "fp32"]


@triton.jit
def _bool_op_kernel(x_ptr, y_ptr, out_ptr, n, OP: tl.constexpr):
    offs = tl.arange(0, 8)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    if OP == "and":
        z = (x > 0) and (y > 0)
    elif OP == "or":
        z = (x > 0) or (y > 0)
    elif OP == "scalars":
        z = ((n > 0) and (n < 10)) | (x > 100)
    else:
        tl.static_assert(OP == "ints")
        z = x and y
    tl.store(out_ptr + offs, z)


_BOOL_OP_WARNING = ("Logical operators 'and' and 'or' are deprecated for non-scalar tensors; please use '&' or '|' "
                    "instead")


def _line_of(text):
    """The line number of `text` in this file."""
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


@pytest.mark.parametrize("op, line, ref", [
    ("and", "z = (x > 0) and (y > 0)", np.logical_and), ("or", "z = (x > 0) or (y > 0)", np.logical_or),
])
def test_and_or_on_blocks_warn_as_in_triton(op, line, ref, monkeypatch, tmp_path):
    # Compiled afresh (the warning comes with the compile, not from a cached kernel).
    from tessel import knobs
    monkeypatch.setattr(knobs, "cache_dir", tmp_path)
    x = np.array([-2, -1, 0, 1, 2, 3, -5, 5], np.int32)
    y = np.array([1, -1, 1, -1, 0, 4, 0, -3], np.int32)
    out = np.zeros(8, np.bool_)
    with pytest.warns(UserWarning) as record:
        _bool_op_kernel[(1,)](x, y, out, 1, OP=op)
    ours = [w for w in record if str(w.message) == _BOOL_OP_WARNING]
    # One per block operand, at the kernel's line (as Triton's code generator warns).
    assert len(ours) == 2, [str(w.message) for w in record]
    assert all(w.filename == __file__ and w.lineno == _line_of(line) for w in ours)
    np.testing.assert_array_equal(out, ref(x > 0, y > 0))


def test_and_or_on_scalars_do_not_warn(monkeypatch, tmp_path):
    from tessel import knobs
    monkeypatch.setattr(knobs, "cache_dir", tmp_path)
    x = np.array([-2, -1, 0, 1, 2, 3, 101, 5], np.int32)
    out = np.zeros(8, np.bool_)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        for n, expected in ((3, np.ones(8, np.bool_)), (30, x > 100)):
            _bool_op_kernel[(1,)](x, x, out, n, OP="scalars")
            np.testing.assert_array_equal(out, expected)


def test_and_or_take_booleans():
    # Triton bitcasts the operands to int1, which only a 1-bit value survives.
    with pytest.raises(triton.CompilationError) as excinfo, pytest.warns(UserWarning, match="deprecated"):
        _bool_op_kernel[(1,)](np.ones(8, np.int32), np.ones(8, np.int32), np.zeros(8, np.int32), 1, OP="ints")
    text = str(excinfo.value)
    assert "Cannot bitcast data-type of size 32 to data-type of size 1" in text
    assert "z = x and y" in text, text


@triton.jit
def _shape_kernel(x_ptr, out_ptr, OP: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 4))
    if OP == "broadcast_to":
        z = tl.broadcast_to(x[:, None], (4, 3))
    elif OP == "reshape":
        z = tl.reshape(x, (2, 3))
    elif OP == "view":
        z = x.view(12)
    elif OP == "full":
        z = tl.full((4, 6), 1, tl.int32)
    else:
        tl.static_assert(OP == "scalar broadcast_to")
        z = tl.broadcast_to(tl.load(x_ptr), (5,))
    tl.store(out_ptr + tl.arange(0, 4), tl.sum(z))


@pytest.mark.parametrize("op, line, message", [
    ("broadcast_to", "z = tl.broadcast_to(x[:, None], (4, 3))", "Shape element 1 must be a power of 2"),
    ("reshape", "z = tl.reshape(x, (2, 3))", "Shape element 1 must be a power of 2"),
    ("view", "z = x.view(12)", "Shape element 0 must be a power of 2"),
    ("full", "z = tl.full((4, 6), 1, tl.int32)", "Shape element 1 must be a power of 2"),
    ("scalar broadcast_to", "z = tl.broadcast_to(tl.load(x_ptr), (5,))", "Shape element 0 must be a power of 2"),
])
def test_block_shapes_are_powers_of_two(op, line, message):
    with pytest.raises(triton.CompilationError) as excinfo:
        _shape_kernel[(1,)](np.zeros(4, np.int32), np.zeros(4, np.int32), OP=op)
    text = str(excinfo.value)
    assert message in text
    assert line in text, text
