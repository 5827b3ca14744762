"""Axes out of range are compile errors at the user's line, whichever entry point takes the axis (tl.sum, tl.max,
tl.argmax, tensor methods, tl.reduce, keep_dims, tl.expand_dims): never silently wrapped around (tl.sum(x, -3) on a
2-D block used to reduce axis 1), and never reported inside tessel's own library. Triton's interpreter rejects the
same kernels; valid negative axes still reduce the right axis (checked against numpy)."""
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

R, C = 4, 8


def _add(a, b):
    return a + b


def _bad_axis_kernel(x_ptr, out_ptr, CASE: tl.constexpr, AXIS: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :])
    if CASE == "sum":
        v = tl.sum(x, AXIS)
    elif CASE == "max":
        v = tl.max(x, AXIS)
    elif CASE == "min keep_dims":
        v = tl.min(x, AXIS, keep_dims=True)
    elif CASE == "max return_indices":
        v, i = tl.max(x, AXIS, return_indices=True)
    elif CASE == "argmax":
        v = tl.argmax(x, AXIS)
    elif CASE == "argmin":
        v = tl.argmin(x, axis=AXIS)
    elif CASE == "method":
        v = x.sum(AXIS)
    elif CASE == "reduce":
        v = tl.reduce(x, AXIS, _add_combine)
    elif CASE == "softmax":
        v = tl.softmax(x, AXIS)
    else:
        v = tl.expand_dims(x, AXIS)
    tl.store(out_ptr + tl.arange(0, 1), tl.sum(tl.reshape(v, (v.numel,)).to(tl.float32), 0))


CASES = ["sum", "max", "min keep_dims", "max return_indices", "argmax", "argmin", "method", "reduce", "softmax",
         "expand_dims"]


def _with_language(fn, language, **extra):
    scope = dict(fn.__globals__, tl=language, **extra)
    clone = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)
    clone.__annotations__ = dict(fn.__annotations__)
    return clone


_tessel_bad_axis = tessel.jit(_with_language(_bad_axis_kernel, tl, _add_combine=tessel.jit(_add)))
_triton_bad_axis = triton.jit(_with_language(_bad_axis_kernel, ttl, _add_combine=triton.jit(_add)))


def _kernel_line(error):
    return error.source_line.strip()


@pytest.mark.parametrize("axis", [-3, 2, 5])
@pytest.mark.parametrize("case", CASES)
def test_axis_out_of_range_is_an_error_at_the_users_line(case, axis):
    if case == "expand_dims" and axis in (-3, 2):
        axis = {-3: -4, 2: 3}[axis]  # expand_dims of a 2-D block takes axes -3..2
    x = np.ones((R, C), np.float32)
    with pytest.raises(Exception):
        _triton_bad_axis[(1,)](torch.from_numpy(x), torch.zeros(1), CASE=case, AXIS=axis)
    with pytest.raises(tessel.CompilationError) as info:
        _tessel_bad_axis[(1,)](x, np.zeros(1, np.float32), CASE=case, AXIS=axis)
    error = info.value
    assert error.file == __file__, str(error)
    assert _kernel_line(error).startswith("v = " if case != "max return_indices" else "v, i = "), str(error)
    assert f"axis {axis}" in error.error_message and "out of range" in error.error_message, str(error)


@tessel.jit
def _expand_dims_axes_kernel(x_ptr, AXES: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 4))
    y = tl.expand_dims(x, AXES)
    tl.store(x_ptr + tl.arange(0, 4), tl.reshape(y, (4,)))


@pytest.mark.parametrize("axes,message", [((0, -4), r"invalid axis -4. Expected -3 <= axis < 3 \(axis out of range"),
                                          ((3, 0), r"invalid axis 3. Expected -3 <= axis < 3 \(axis out of range"),
                                          ((1, -2), r"duplicate axes, normalized axes = \[1, 1\]")])
def test_expand_dims_several_axes_checked(axes, message):
    """Several axes index the result (rank 3 here): each must be in range and they must differ."""
    with pytest.raises(tessel.CompilationError, match=message) as info:
        _expand_dims_axes_kernel[(1,)](np.zeros(4, np.float32), AXES=axes)
    assert _kernel_line(info.value).startswith("y = tl.expand_dims(x, AXES)")


@tessel.jit
def _expand_scalar_kernel(out_ptr, N: tl.constexpr, AXIS: tl.constexpr):
    scalar = tl.sum(tl.arange(0, N))
    t = tl.expand_dims(scalar, AXIS)
    tl.static_assert(t.shape == [1])
    u = tl.expand_dims(N, -1)  # a Python int is a scalar of its own type, as in Triton
    tl.static_assert(u.shape == [1])
    tl.store(out_ptr + tl.arange(0, 1), t + u)


@pytest.mark.parametrize("axis", [0, -1, 1, -2])
def test_expand_dims_of_a_scalar(axis):
    """A scalar has rank 0: axes 0 and -1 give a block of one element, others are out of range (Triton's words)."""
    out = np.zeros(1, np.int32)
    if axis in (0, -1):
        _expand_scalar_kernel[(1,)](out, N=8, AXIS=axis)
        assert out[0] == sum(range(8)) + 8
    else:
        with pytest.raises(tessel.CompilationError, match=f"invalid axis {axis}") as info:
            _expand_scalar_kernel[(1,)](out, N=8, AXIS=axis)
        assert _kernel_line(info.value).startswith("t = tl.expand_dims(scalar, AXIS)")


@tessel.jit
def _helper_with_bad_axis(x):
    return tl.sum(x, 5)


@tessel.jit
def _calls_helper_kernel(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 4)[:, None] + tl.arange(0, 4)[None, :])
    tl.store(x_ptr + tl.arange(0, 4), _helper_with_bad_axis(x))


def test_error_in_a_users_jit_helper_points_into_the_helper():
    """Only tessel's own library is skipped over: a user's @jit helper is user code, its line is shown."""
    with pytest.raises(tessel.CompilationError, match="axis 5 out of range") as info:
        _calls_helper_kernel[(1,)](np.zeros(16, np.float32))
    assert info.value.kernel_name == "_helper_with_bad_axis"
    assert _kernel_line(info.value) == "return tl.sum(x, 5)"


@tessel.jit
def _negative_axes_kernel(x_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :])
    rows = tl.sum(x, -1)
    cols = tl.max(x, -2, keep_dims=True)
    first = tl.argmin(x, -2)
    tl.store(out_ptr + tl.arange(0, R), rows)
    tl.store(out_ptr + R + tl.arange(0, C)[None, :], cols)
    tl.store(out_ptr + R + C + tl.arange(0, C), first.to(tl.float32))


def test_negative_axes_in_range_reduce_the_right_axis(rand):
    x = rand((R, C), np.float32)
    out = np.zeros(R + 2 * C, np.float32)
    _negative_axes_kernel[(1,)](x, out, R=R, C=C)
    np.testing.assert_allclose(out[:R], x.sum(axis=1), rtol=1e-6)
    np.testing.assert_array_equal(out[R:R + C], x.max(axis=0))
    np.testing.assert_array_equal(out[R + C:], x.argmin(axis=0))
