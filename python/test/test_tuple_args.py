"""Tuples as kernel arguments (plain, nested, named tuples, torch.Size) and tl.tuple inside kernels, on every target,
against numpy: run-time leaves are arguments, compile-time leaves (None, tl.constexpr, @jit functions, named-tuple
fields annotated tl.constexpr) and ints equal to 1 are specialized, and each structure compiles its own kernel."""
from typing import NamedTuple

import numpy as np
import pytest
import torch

import tessel as triton
import tessel.language as tl
from tessel.tools.tensor_descriptor import TensorDescriptor


@triton.jit
def _plus_one(values):
    return tl.tuple([v + 1 for v in values])


@triton.jit
def _store_each(ptrs, values):
    for i in tl.static_range(len(values)):
        tl.store(ptrs[i], values[i])


@triton.jit
def _index_kernel(a, ptrs, b: tl.constexpr, values, c):
    _store_each(ptrs, _plus_one(values))


@pytest.mark.parametrize("size", [0, 1, 2, 3, 5])
def test_tuple_of_arrays_and_ints(size):
    values = tuple(range(7, 7 + size))
    outs = tuple(np.zeros(1, np.float32) for _ in values)
    _index_kernel[(1,)](0, outs, 0, values, 0)
    assert [float(o[0]) for o in outs] == [v + 1 for v in values]


@triton.jit
def _unpack_kernel(xs, ys, values):
    x0, x1 = xs
    a, b, nothing = values
    tl.static_assert(nothing is None)
    tl.store(x0, a)
    tl.store(x1, b)
    y0, y1, y2 = ys
    y = (a * 2, 10, b - a)
    tl.store(y0, y[0])
    tl.store(y1, y[1])
    tl.store(y2, y[2])


def test_unpacking():
    xs = tuple(np.zeros(1, np.float32) for _ in range(2))
    ys = tuple(np.zeros(1, np.float32) for _ in range(3))
    _unpack_kernel[(1,)](xs, ys, (2.5, 3.25, None))
    assert [x[0] for x in xs] == [2.5, 3.25]
    assert [y[0] for y in ys] == [5.0, 10.0, 0.75]


@triton.jit
def _is_compile_time(v):
    # A compile-time int satisfies static_assert; a run-time one is a tensor.
    return not isinstance(v, tl.tensor)


@triton.jit
def _inner(out, c: tl.constexpr, t):
    tl.static_assert(t[1] is None)
    tl.store(out + 5, c)
    tl.store(out + 6, t[0])
    tl.store(out + 7, tl.load(t[2][0]))
    tl.store(out + 8, t[2][1][0])
    tl.store(out + 9, tl.load(t[2][1][2]))


@triton.jit
def _nested_kernel(out, none_arg, t1, c1: tl.constexpr, v1, t2):
    tl.static_assert(none_arg is None)
    tl.static_assert(t1[1][1] is None)
    tl.static_assert(t1[1][3] == 4)
    tl.static_assert(_is_compile_time(t1[1][0]))  # 1: specialized, as a top-level int would be
    tl.store(out + 0, tl.load(t1[0]))
    tl.store(out + 1, t1[1][0])
    tl.store(out + 2, tl.load(t1[1][2]))
    tl.store(out + 3, c1 + v1)
    tl.store(out + 4, tl.load(t2[0]))
    _inner(out, 15, (-1, None, t1))


def test_nested_with_compile_time_leaves():
    x0, x1, y0 = (np.array([v], np.int32) for v in (8, 12, 10))
    out = np.zeros(10, np.int32)
    _nested_kernel[(1,)](out, None, (x0, (1, None, x1, tl.constexpr(4))), 20, 1, (y0,))
    np.testing.assert_array_equal(out, [8, 1, 12, 21, 10, 15, -1, 8, 1, 12])


class Function(NamedTuple):
    fn: tl.constexpr
    captured: tuple


class Matrix(NamedTuple):
    ptr: object
    shape: tuple
    stride: tuple


@triton.jit
def _make_matrix(shape, ptr, stride):
    return Matrix(shape=shape, ptr=ptr, stride=stride)


@triton.jit
def _matrix_mask(m, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)[:, None]
    cols = tl.arange(0, BN)[None, :]
    return (rows < m.shape[0]) & (cols < m.shape[1])


@triton.jit
def _offsets(m, BM: tl.constexpr, BN: tl.constexpr):
    return m.ptr + tl.arange(0, BM)[:, None] * m.stride[0] + tl.arange(0, BN)[None, :] * m.stride[1]


@triton.jit
def _apply_kernel(closure, src, dst, BM: tl.constexpr, BN: tl.constexpr):
    X = _make_matrix(src.shape, src.ptr, src.stride)
    x = tl.load(_offsets(X, BM, BN), mask=_matrix_mask(X, BM, BN), other=0)
    y = closure.fn(x, *closure.captured)
    tl.store(_offsets(dst, BM, BN), y, mask=_matrix_mask(dst, BM, BN))


@triton.jit
def _scale_shift(x, scale_ptr, shift):
    return x * tl.load(scale_ptr) + shift


def _elements(a):
    return tuple(s // a.itemsize for s in a.strides)


def test_named_tuples(rng):
    x = rng.standard_normal((24, 20)).astype(np.float32)
    y = np.full((16, 12), -7, np.float32)
    scale = np.array([1.75], np.float32)
    closure = Function(_scale_shift, (scale, 0.5))
    _apply_kernel[(1,)](closure, Matrix(x, x.shape, _elements(x)), Matrix(y, y.shape, _elements(y)), 32, 32)
    np.testing.assert_allclose(y, x[:16, :12] * np.float32(1.75) + np.float32(0.5), rtol=1e-6, atol=1e-6)  # fused or not
    # A transposed view: the same kernel reads through the tuple's strides.
    xt = x.T
    y2 = np.zeros((16, 12), np.float32)
    _apply_kernel[(1,)](closure, Matrix(xt, xt.shape, _elements(xt)), Matrix(y2, y2.shape, _elements(y2)), 32, 32)
    np.testing.assert_allclose(y2, xt[:16, :12] * np.float32(1.75) + np.float32(0.5), rtol=1e-6, atol=1e-6)  # fused or not


@triton.jit
def _power_kernel(X, shape: tl.constexpr, strides, m_n):
    offs = X + tl.arange(0, shape[0])[:, None] * strides[0] + tl.arange(0, shape[1])[None, :] * strides[1]
    data = tl.load(offs)
    for _ in tl.range(0, m_n[1]):
        data = m_n[0] * data
    tl.store(offs, data)


def test_torch_size_and_strides():
    x = torch.arange(0, 64).reshape(8, 8)
    want = x * 8
    _power_kernel[(1,)](x, x.shape, x.stride(), (2, 3))
    torch.testing.assert_close(x, want, rtol=0, atol=0)
    # Transposed: stride (1, 8), the specialized leaf moves.
    xt = torch.arange(0, 64).reshape(8, 8).T
    want = xt * 4
    _power_kernel[(1,)](xt, xt.shape, xt.stride(), (2, 2))
    torch.testing.assert_close(xt, want, rtol=0, atol=0)


@triton.jit
def _stride_kernel(out, strides, N: tl.constexpr):
    tl.static_assert(_is_compile_time(strides[1]))
    tl.store(out + tl.arange(0, N) * strides[0], tl.arange(0, N) * strides[1])


@triton.jit(do_not_specialize=["strides"])
def _stride_kernel_unspecialized(out, strides, N: tl.constexpr):
    tl.static_assert(not _is_compile_time(strides[1]))
    tl.store(out + tl.arange(0, N) * strides[0], tl.arange(0, N) * strides[1])


def test_specialization_of_ones():
    out = np.zeros(16, np.int32)
    _stride_kernel[(1,)](out, (2, 1), 8)
    np.testing.assert_array_equal(out[::2], np.arange(8))
    out = np.zeros(16, np.int32)
    _stride_kernel_unspecialized[(1,)](out, (2, 1), 8)
    np.testing.assert_array_equal(out[::2], np.arange(8))
    with pytest.raises(triton.CompilationError, match="static_assert"):
        _stride_kernel[(1,)](out, (2, 3), 8)


@triton.jit
def _sum_kernel(out, t):
    a, (b, c) = t
    tl.store(out, tl.load(a) + tl.load(b) * c)


def test_each_structure_compiles_its_own_kernel():
    f32 = np.array([1.5], np.float32)
    f16 = np.array([2.0], np.float16)
    out = np.zeros(1, np.float32)
    _sum_kernel[(1,)](out, (f32, (f32, 3)))
    assert out[0] == 1.5 + 1.5 * 3
    _sum_kernel[(1,)](out, (f32, (f32, 2**33)))  # an i64 scalar
    assert out[0] == np.float32(1.5 + 1.5 * 2**33)
    _sum_kernel[(1,)](out, (f32, (f16, 3)))  # an fp16 pointer: fp16 * i32 is fp16, as in Triton
    assert out[0] == 1.5 + 6.0
    _sum_kernel[(1,)](out, (f32, (f16, 2.25)))  # a float scalar
    assert out[0] == 1.5 + 2.0 * 2.25
    _sum_kernel[(1,)](out, (f32, (f32, 1)))  # specialized 1
    assert out[0] == 3.0
    assert len(_sum_kernel.cache) == 5


@triton.jit
def _carried_kernel(out, m, n):
    acc = Matrix(m.ptr, (0, 0), m.stride)
    for i in range(n):
        acc = Matrix(acc.ptr, (acc.shape[0] + tl.load(acc.ptr + i), acc.shape[1] + 1), acc.stride)
    tl.store(out, acc.shape[0])
    tl.store(out + 1, acc.shape[1])


def test_named_tuple_carried_by_a_loop():
    data = np.array([3, 5, 7, 9], np.int32)
    out = np.zeros(2, np.int32)
    _carried_kernel[(1,)](out, Matrix(data, (4,), (1,)), 4)
    np.testing.assert_array_equal(out, [24, 4])


def test_grid_callable_sees_the_tuple():
    outs = tuple(np.zeros(1, np.float32) for _ in range(3))
    seen = []

    def grid(meta):
        seen.append(meta["values"])
        return (1,)

    _index_kernel[grid](0, outs, 0, (1.0, 2.0, 3.0), 0)
    assert seen == [(1.0, 2.0, 3.0)]
    assert [o[0] for o in outs] == [2.0, 3.0, 4.0]


@triton.jit
def _tuple_ops_kernel(out):
    tl.store(out + 0, (1, 2) == (1, 2))
    tl.store(out + 1, (1, 2) == (1, 1))
    tl.store(out + 2, tl.tuple((1, 2)) == (1, 2))
    t = tl.tuple((4, 5)) + (6, 7)
    for i in tl.static_range(4):
        tl.store(out + 3 + i, t[i])
    tl.static_assert(isinstance(t, tl.tuple))


def test_tl_tuple_in_kernels():
    out = np.zeros(7, np.int32)
    _tuple_ops_kernel[(1,)](out)
    np.testing.assert_array_equal(out, [1, 0, 1, 4, 5, 6, 7])


def test_tuples_are_immutable():
    @triton.jit
    def set_item():
        t = tl.tuple([5, 6, 7])
        t[0] = 0

    with pytest.raises(triton.CompilationError):
        set_item[(1,)]()


def test_bad_leaves_are_named():
    out = np.zeros(1, np.float32)
    with pytest.raises(TypeError, match=r"t\[1\]\[0\]"):
        _sum_kernel[(1,)](out, (out, (object(), 2)))
    desc = TensorDescriptor.from_tensor(np.zeros((16, 16), np.float32), [16, 16])
    with pytest.raises(TypeError, match="tensor descriptor inside a tuple"):
        _sum_kernel[(1,)](out, (out, (desc, 2)))


@triton.jit
def _double(x):
    return x * 2


@triton.jit
def _negate(x):
    return -x


@triton.jit
def _apply_fn_kernel(out, fn, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out + offs, fn(tl.load(out + offs)))


def test_jit_function_arguments_are_compile_time():
    # As in Triton, a @jit function passed to a parameter not annotated tl.constexpr is a compile-time value: each
    # function compiles its own kernel.
    out = np.arange(8, dtype=np.float32)
    _apply_fn_kernel[(1,)](out, _double, 8)
    np.testing.assert_array_equal(out, np.arange(8) * 2)
    _apply_fn_kernel[(1,)](out, _negate, 8)
    np.testing.assert_array_equal(out, -np.arange(8) * 2)
    _apply_fn_kernel[(1,)](out, fn=_double, N=8)
    np.testing.assert_array_equal(out, -np.arange(8) * 4)
