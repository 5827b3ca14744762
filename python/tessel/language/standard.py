"""The DSL's standard library, written in the DSL itself: reductions as @jit combine functions passed to the generic
`reduce`, `cdiv`, `softmax`. They compile like user code, so what they do is readable here. Plain Python helpers
(no @jit) compute compile-time values from dtypes; kernels may call such helpers with compile-time arguments.
"""
from __future__ import annotations

from ..runtime.jit import jit
from . import core

# ---------------------------------------------------------------------------------------------- compile-time helpers


def _sum_dtype(in_dtype: core.dtype, dtype: core.dtype | None) -> core.dtype | None:
    """Integers narrower than 32 bits are summed in 32 bits of the same signedness, as Triton does."""
    if dtype is not None:
        return dtype
    if in_dtype.is_int_signed() and in_dtype.int_bitwidth < 32:
        return core.int32
    if in_dtype.is_int_unsigned() and in_dtype.int_bitwidth < 32:
        return core.uint32
    return None


def _minmax_dtype(in_dtype: core.dtype) -> core.dtype | None:
    """Triton computes max/min of types narrower than 32 bits in fp32 (floats) or int32 (ints); the result keeps that
    type, which later arithmetic sees, so we do the same."""
    if in_dtype.primitive_bitwidth < 32:
        return core.float32 if in_dtype.is_floating() else core.int32
    return None


def _other_axes(rank: int, axis: int) -> tuple[int, ...]:
    axis = axis + rank if axis < 0 else axis
    return tuple(d for d in range(rank) if d != axis)


def _axis_length(shape: list[int], axis: int) -> int:
    """The length of `shape` along `axis` (negative counts from the end); an axis out of range is an error here,
    before the index block is built (the reduction itself would reject it too, later)."""
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise TypeError(f"the axis must be a compile-time integer, got {axis!r}")
    if not -len(shape) <= axis < len(shape):
        raise ValueError(f"reduce: axis {axis} out of range for a block of shape {list(shape)} "
                         f"(rank {len(shape)})")
    return shape[axis]


# -------------------------------------------------------------------------------------------------- combine functions


@jit
def _sum_combine(a, b):
    return a + b


@jit
def _max_combine(a, b):
    return core.maximum(a, b)


@jit
def _min_combine(a, b):
    return core.minimum(a, b)


@jit
def _argmax_combine(value1, index1, value2, index2, tie_break_left: core.constexpr):
    if tie_break_left:
        tie = value1 == value2 and index1 < index2
    else:
        tie = False
    gt = value1 > value2 or tie
    return core.where(gt, value1, value2), core.where(gt, index1, index2)


@jit
def _argmax_combine_tie_break_left(value1, index1, value2, index2):
    return _argmax_combine(value1, index1, value2, index2, True)


@jit
def _argmax_combine_tie_break_fast(value1, index1, value2, index2):
    return _argmax_combine(value1, index1, value2, index2, False)


@jit
def _argmin_combine(value1, index1, value2, index2, tie_break_left: core.constexpr):
    if tie_break_left:
        tie = value1 == value2 and index1 < index2
    else:
        tie = False
    lt = value1 < value2 or tie
    return core.where(lt, value1, value2), core.where(lt, index1, index2)


@jit
def _argmin_combine_tie_break_left(value1, index1, value2, index2):
    return _argmin_combine(value1, index1, value2, index2, True)


@jit
def _argmin_combine_tie_break_fast(value1, index1, value2, index2):
    return _argmin_combine(value1, index1, value2, index2, False)


@jit
def _reduce_with_indices(input, axis: core.constexpr, combine_fn: core.constexpr, keep_dims: core.constexpr):
    """Reduces (value, index) pairs, the index being the position along `axis`; returns (values, indices)."""
    index = core.arange(0, _axis_length(input.shape, axis))
    if len(input.shape) > 1:
        index = core.expand_dims(index, _other_axes(len(input.shape), axis))
        index = core.broadcast_to(index, input.shape)
    return core.reduce((input, index), axis, combine_fn, keep_dims=keep_dims)


# --------------------------------------------------------------------------------------------------------- reductions


@jit
def sum(input, axis=None, keep_dims=False, dtype: core.constexpr = None):
    out_dtype: core.constexpr = _sum_dtype(input.dtype, dtype)
    if out_dtype is not None:
        input = input.to(out_dtype)
    return core.reduce(input, axis, _sum_combine, keep_dims=keep_dims)


@jit
def max(input, axis=None, return_indices=False, return_indices_tie_break_left=True, keep_dims=False):
    if input.dtype == core.bfloat16:
        input = input.to(core.float32)
    if return_indices:
        if return_indices_tie_break_left:
            return _reduce_with_indices(input, axis, _argmax_combine_tie_break_left, keep_dims)
        else:
            return _reduce_with_indices(input, axis, _argmax_combine_tie_break_fast, keep_dims)
    compute_dtype: core.constexpr = _minmax_dtype(input.dtype)
    if compute_dtype is not None:
        input = input.to(compute_dtype)
    return core.reduce(input, axis, _max_combine, keep_dims=keep_dims)


@jit
def min(input, axis=None, return_indices=False, return_indices_tie_break_left=True, keep_dims=False):
    if input.dtype == core.bfloat16:
        input = input.to(core.float32)
    if return_indices:
        if return_indices_tie_break_left:
            return _reduce_with_indices(input, axis, _argmin_combine_tie_break_left, keep_dims)
        else:
            return _reduce_with_indices(input, axis, _argmin_combine_tie_break_fast, keep_dims)
    compute_dtype: core.constexpr = _minmax_dtype(input.dtype)
    if compute_dtype is not None:
        input = input.to(compute_dtype)
    return core.reduce(input, axis, _min_combine, keep_dims=keep_dims)


@jit
def argmax(input, axis, tie_break_left=True, keep_dims=False):
    _, index = max(input, axis, return_indices=True, return_indices_tie_break_left=tie_break_left,
                   keep_dims=keep_dims)
    return index


@jit
def argmin(input, axis, tie_break_left=True, keep_dims=False):
    _, index = min(input, axis, return_indices=True, return_indices_tie_break_left=tie_break_left,
                   keep_dims=keep_dims)
    return index


# -------------------------------------------------------------------------------------------------------------- scans


@jit
def _prod_combine(a, b):
    return a * b


@jit
def cumsum(input, axis=0, reverse=False, dtype: core.constexpr = None):
    if input.dtype == core.bfloat16:
        input = input.to(core.float32)
    out_dtype: core.constexpr = _sum_dtype(input.dtype, dtype)
    if out_dtype is not None:
        input = input.to(out_dtype)
    return core.associative_scan(input, axis, _sum_combine, reverse)


@jit
def cumprod(input, axis=0, reverse=False):
    if input.dtype == core.bfloat16:
        input = input.to(core.float32)
    return core.associative_scan(input, axis, _prod_combine, reverse)


# --------------------------------------------------------------------------------------------------------------- math


@jit
def cdiv(x, div):
    """Ceiling division; on compile-time integers it folds in Python."""
    return (x + div - 1) // div


@jit
def softmax(x, dim=None, keep_dims=False, ieee_rounding=False):
    # Same definition as Triton's, including its use of keep_dims for the intermediate max and sum.
    if dim is None:
        _dim: core.constexpr = 0
    else:
        _dim: core.constexpr = dim
    z = x - max(x, _dim, keep_dims=keep_dims)
    num = core.exp(z)
    den = sum(num, _dim, keep_dims=keep_dims)
    return core.fdiv(num, den, ieee_rounding)


# ------------------------------------------------------------------------------------------------------------ scalars


@jit
def _first_combine(a, b):
    return a


@jit
def item(input):
    """The value of a one-element block as a scalar (`x.item()`); a scalar is returned as it is."""
    core.static_assert(input.numel == 1, "item() needs a tensor of one element")
    if len(input.shape) == 0:
        return input
    return core.reduce(input, None, _first_combine)


# Tensor methods: `x.sum(1)`, `x.max(0, keep_dims=True)`, ... (the code generator binds `x` as the first argument).
for _fn in (sum, max, min, argmax, argmin, cumsum, cumprod, cdiv, softmax, item):
    setattr(core.tensor, _fn.__name__, _fn)
del _fn
