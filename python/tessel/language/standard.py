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


def _umulhi_dtype(x: core.dtype, y: core.dtype) -> core.dtype:
    """The type tl.umulhi computes in: the operands' common type under Triton's integer promotion (the wider one; of
    two as wide, the unsigned one). Only 32- and 64-bit integers are allowed, as in Triton."""
    allowed = ("int32", "int64", "uint32", "uint64")
    for t in (x, y):
        if t.name not in allowed:
            raise ValueError(f"tl.umulhi(): expected dtype {list(allowed)} but got {t.name}")
    if x.int_bitwidth != y.int_bitwidth:
        return x if x.int_bitwidth > y.int_bitwidth else y
    return x if x.is_int_unsigned() else y


def _signed_int_of_width(bits: int) -> core.dtype:
    """The signed integer type as wide as `bits` (int1 for 1: a bool)."""
    return {1: core.int1, 8: core.int8, 16: core.int16, 32: core.int32, 64: core.int64}[bits]


def _flip_axis(shape: list[int], dim: int | None) -> int:
    """The axis tl.flip reverses: the last one by default; it must be a power of 2 long (blocks are)."""
    rank = len(shape)
    if dim is None:
        dim = rank - 1
    if isinstance(dim, bool) or not isinstance(dim, int) or not -rank <= dim < rank:
        raise ValueError(f"tl.flip(): dim {dim!r} is not an axis of a block of shape {list(shape)}")
    return dim + rank if dim < 0 else dim


def _log2(n: int) -> int:
    return n.bit_length() - 1


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
def _xor_combine(a, b):
    return a ^ b


@jit
def _or_combine(a, b):
    return a | b


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
def xor_sum(input, axis=None, keep_dims=False):
    core.static_assert(input.type.scalar.is_int(), "xor_sum only supported for integers")
    return core.reduce(input, axis, _xor_combine, keep_dims=keep_dims)


@jit
def reduce_or(input, axis, keep_dims=False):
    core.static_assert(input.type.scalar.is_int(), "reduce_or only supported for integers")
    return core.reduce(input, axis, _or_combine, keep_dims=keep_dims)


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


@jit
def histogram(input, num_bins: core.constexpr, mask=None):
    """Counts of the values 0 .. num_bins - 1 in a 1-D integer block (int32; other values and masked-off elements
    are not counted): the block compared with every bin, summed over the elements."""
    core.static_assert(len(input.shape) == 1, "histogram only supports 1D input")
    core.static_assert(input.dtype.is_int(), "histogram only supports integer input")
    hit = core.expand_dims(input, 1) == core.expand_dims(core.arange(0, num_bins), 0)
    if mask is not None:
        hit = hit & core.expand_dims(core.broadcast_to(mask, input.shape), 1)
    return sum(hit.to(core.int32), axis=0)


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
def umulhi(x, y):
    """The high half of the 2N-bit product of two N-bit integers (N = 32 or 64) read as unsigned, in their common
    type. The product is exact on every target: 32-bit operands multiply in 64 bits, 64-bit ones as four products
    of their 32-bit halves."""
    x = core.to_tensor(x)
    y = core.to_tensor(y)
    dtype: core.constexpr = _umulhi_dtype(x.dtype, y.dtype)
    if dtype.int_bitwidth == 32:
        a = x.to(dtype).to(core.uint32, bitcast=True).to(core.uint64)
        b = y.to(dtype).to(core.uint32, bitcast=True).to(core.uint64)
        high = ((a * b) >> 32).to(core.uint32)
    else:
        a = x.to(dtype).to(core.uint64, bitcast=True)
        b = y.to(dtype).to(core.uint64, bitcast=True)
        a_lo = a & 0xFFFFFFFF
        a_hi = a >> 32
        b_lo = b & 0xFFFFFFFF
        b_hi = b >> 32
        lo_lo = a_lo * b_lo
        hi_lo = a_hi * b_lo
        lo_hi = a_lo * b_hi
        # The middle column: at most 2 (2^32 - 1) + (2^32 - 1)^2 = 2^64 - 1, so it does not wrap.
        middle = (lo_lo >> 32) + (hi_lo & 0xFFFFFFFF) + lo_hi
        high = a_hi * b_hi + (hi_lo >> 32) + (middle >> 32)
    return high.to(dtype, bitcast=True)


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


# ------------------------------------------------------------------------------------------------- shape and indices


@jit
def ravel(x, can_reorder=False):
    """The block's elements as a 1-D block, in row-major order."""
    return core.reshape(x, [x.numel], can_reorder=can_reorder)


@jit
def flip(x, dim=None):
    """The block reversed along `dim` (the last axis by default). The axis, 2^k long, is viewed as k axes of 2;
    swapping the two halves of each (x ^ the xor of the pair) reverses every bit of the index."""
    axis: core.constexpr = _flip_axis(x.shape, dim)
    steps: core.constexpr = _log2(x.shape[axis])
    bits = x.to(_signed_int_of_width(x.dtype.primitive_bitwidth), bitcast=True)
    y = core.reshape(bits, x.shape[:axis] + [2] * steps + x.shape[axis + 1:])
    for i in core.static_range(steps):
        y = y ^ xor_sum(y, axis + i, True)
    return core.reshape(y, x.shape).to(x.dtype, bitcast=True)


@jit
def swizzle2d(i, j, size_i, size_j, size_g):
    """Maps the row-major index (i, j) of a size_i x size_j grid to the index that visits it column-major within
    groups of size_g rows (the last group may have fewer): programs that run together then share rows and
    columns (L2 reuse in matmuls)."""
    linear = i * size_j + j
    group_size = size_g * size_j
    first_row = (linear // group_size) * size_g
    rows = core.minimum(size_i - first_row, size_g)  # the last group's rows
    in_group = linear % group_size
    return first_row + in_group % rows, in_group // rows


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
for _fn in (sum, max, min, argmax, argmin, cumsum, cumprod, cdiv, softmax, xor_sum, reduce_or, ravel, flip, histogram,
            item):
    setattr(core.tensor, _fn.__name__, _fn)
del _fn
