"""Block pointers: `tl.make_block_ptr(base, shape, strides, offsets, block_shape, order)`, moved by `tl.advance(ptr,
offsets)` (or `ptr.advance(offsets)`) and read and written by `tl.load(ptr, boundary_check=, padding_option=)` and
`tl.store(ptr, value, boundary_check=)`, as Triton 3.6 defines them (Triton has since removed them; many published
kernels still use them).

A block pointer names the block of `block_shape` elements at `offsets` (element indices per dimension, negative
allowed) in a strided array of `shape` elements at `base`. It is a value of the frontend, not of the IR: its base, its
shape and strides (int64, as Triton converts them) and its offsets (int32) are scalars the code generator carries
through ifs and loops leaf by leaf, so a loop that advances a block pointer carries its offsets. A load or a store
becomes the pointer arithmetic base + sum((offset_d + i_d) * stride_d), in int64, and a masked access that leaves out
the indices outside [0, shape_d) of the dimensions in `boundary_check`; the other dimensions are not checked (as in
Triton, an access outside the array there is the kernel's error). `order` is kept and checked, never needed: the
strides say where each element is.
"""
from __future__ import annotations

import numbers
from typing import Any, Sequence

from ..runtime.jit import jit
from . import core
from .core import _describe, _unwrap, builtin, tensor

_INT64_RANGE = (-2**63, 2**63)
_INT32_RANGE = (-2**31, 2**31)


def _scalar(value: Any, wide: bool, _builder: Any) -> tensor:
    """A shape, stride (wide: int64) or offset (int32) as a scalar tensor of that type, with Triton's checks."""
    value = _unwrap(value)
    if isinstance(value, tensor):
        if value.shape:
            raise ValueError(f"Expected a scalar in shape/strides/offsets, got {_describe(value)}")
        if not value.dtype.is_int() or value.dtype.is_bool():
            raise TypeError(f"Expected an integer scalar type in shape/strides/offsets, got {_describe(value)}")
        if not wide and value.dtype.int_bitwidth == 64:
            raise TypeError("Block pointers only support 32 bit `offsets/block_shape`, add a `.to(tl.int32)` or use "
                            f"regular indexing for 64 bit support (got {_describe(value)})")
        return core.cast(value, core.int64 if wide else core.int32, _builder=_builder)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"Unsupported element type in shape/strides/offsets: {_describe(value)}")
    low, high = _INT64_RANGE if wide else _INT32_RANGE
    if not low <= value < high:
        what = "64 bit `shape/strides`" if wide else "32 bit `offsets/block_shape`"
        raise ValueError(f"Block pointers only support {what}, got a value {value} which is out of the range")
    return core.full([], int(value), core.int64 if wide else core.int32, _builder=_builder)


def _sequence(value: Any) -> list[Any]:
    value = _unwrap(value)
    return list(value) if isinstance(value, (tuple, list)) else [value]


class block_pointer(core.aggregate):
    """A pointer to a block of a strided array (`tl.make_block_ptr`)."""

    def __init__(self, base: tensor, shape: list[tensor], strides: list[tensor], offsets: list[tensor],
                 block_shape: tuple[int, ...], order: tuple[int, ...]) -> None:
        self.base = base
        self.shape = shape
        self.strides = strides
        self.offsets = offsets
        self.block_shape = block_shape
        self.order = order

    @property
    def dtype(self) -> core.dtype:
        """The type of the elements a load gives: the base's, int8 for a bool array (as Triton reads them)."""
        element = self.base.dtype.element_ty
        return core.int8 if element.is_bool() else element

    @property
    def type(self) -> core.pointer_type:
        return core.pointer_type(core.block_type(self.dtype, list(self.block_shape)))

    def __repr__(self) -> str:
        return f"block_pointer({self.dtype}{list(self.block_shape)})"

    # The code generator carries a block pointer through ifs and loops as its scalars.
    def _flatten(self) -> tuple[list[Any], Any]:
        return [self.base, *self.shape, *self.strides, *self.offsets], (self.block_shape, self.order)

    @classmethod
    def _unflatten(cls, structure: Any, leaves: Sequence[Any]) -> "block_pointer":
        block_shape, order = structure
        rank = len(block_shape)
        base, rest = leaves[0], list(leaves[1:])
        return cls(base, rest[:rank], rest[rank:2 * rank], rest[2 * rank:], block_shape, order)

    @builtin
    def advance(self, offsets: Sequence[Any], _builder: Any = None) -> "block_pointer":
        """The block pointer moved by `offsets` (one per dimension); this one is unchanged."""
        offsets = _sequence(offsets)
        if len(offsets) != len(self.offsets):
            raise ValueError(f"tl.advance(): {len(offsets)} offsets for a block pointer of {len(self.offsets)} "
                             "dimensions")
        moved = [core._binary("add", old, _scalar(step, False, _builder), _builder)
                 for old, step in zip(self.offsets, offsets)]
        return block_pointer(self.base, self.shape, self.strides, moved, self.block_shape, self.order)

    advance._must_use_result = ("Note that tl.advance does not have any side effects. To move the block pointer, "
                                "you need to assign the result of tl.advance to a variable.")

    def _boundary_check(self, boundary_check: Any) -> tuple[int, ...]:
        """Triton's canonical boundary_check: sorted distinct dimensions of the block."""
        boundary_check = _unwrap(boundary_check)
        if boundary_check is None or boundary_check == () or boundary_check == []:
            return ()
        dims = [_unwrap(d) for d in _sequence(boundary_check)]
        rank = len(self.block_shape)
        for d in dims:
            if isinstance(d, bool) or not isinstance(d, int) or not 0 <= d < rank:
                raise ValueError(f"boundary_check: {_describe(d)} is not a dimension of the block (0 to {rank - 1})")
        if len(set(dims)) != len(dims):
            raise ValueError(f"Duplicate dimension in `boundary_check`: {tuple(dims)}")
        return tuple(sorted(dims))


@builtin
def make_block_ptr(base: tensor, shape: Sequence[Any], strides: Sequence[Any], offsets: Sequence[Any],
                   block_shape: Sequence[Any], order: Sequence[Any], _builder: Any = None) -> block_pointer:
    base = _unwrap(base)
    if isinstance(base, block_pointer) or not isinstance(base, tensor) or base.shape or not base.dtype.is_ptr():
        raise ValueError("Expected `base` to be a pointer type (but not a block pointer type or others), got "
                         f"{_describe(base)}")
    block = [_unwrap(d) for d in _sequence(block_shape)]
    if not all(isinstance(d, int) and not isinstance(d, bool) and _INT32_RANGE[0] <= d < _INT32_RANGE[1]
               for d in block):
        raise TypeError(f"Expected a list of constant integers (`int32_t` range) in `block_shape`, got {block}")
    for i, d in enumerate(block):
        if d < 1 or d & (d - 1):
            raise ValueError(f"Shape element {i} must be a power of 2: block_shape is {block}")
    order = [_unwrap(d) for d in _sequence(order)]
    if not all(isinstance(d, int) and not isinstance(d, bool) for d in order) or \
            sorted(order) != list(range(len(order))):
        raise ValueError(f"Expected a permutation of (0, 1, ..., len(order)-1) in order, got {tuple(order)}")
    shape, strides, offsets = _sequence(shape), _sequence(strides), _sequence(offsets)
    if not len(shape) == len(strides) == len(offsets) == len(order) == len(block):
        raise ValueError("Expected shape/strides/offsets/block_shape to have the same length, got "
                         f"{len(shape)}/{len(strides)}/{len(offsets)}/{len(block)} (and order {len(order)})")
    return block_pointer(base, [_scalar(s, True, _builder) for s in shape],
                         [_scalar(s, True, _builder) for s in strides],
                         [_scalar(o, False, _builder) for o in offsets], tuple(block), tuple(order))


@builtin
def advance(base: block_pointer, offsets: Sequence[Any], _builder: Any = None) -> block_pointer:
    return _block_pointer_arg(base, "tl.advance()").advance(offsets, _builder=_builder)


advance._must_use_result = block_pointer.advance._must_use_result


def _block_pointer_arg(value: Any, what: str) -> block_pointer:
    value = _unwrap(value)
    if not isinstance(value, block_pointer):
        raise TypeError(f"{what}: expected a block pointer (tl.make_block_ptr), got {_describe(value)}")
    return value


# ------------------------------------------------------------------------------------------- loads and stores (DSL)


def _other_axes(rank: int, axis: int) -> tuple[int, ...]:
    return tuple(d for d in range(rank) if d != axis)


@jit
def _addresses(ptr, boundary_check: core.constexpr):
    """The block's pointers, and the mask of its elements inside the array along the checked dimensions (None when
    none is checked)."""
    rank: core.constexpr = len(ptr.block_shape)
    offset = 0
    mask = None
    for d in core.static_range(rank):
        index = core.arange(0, ptr.block_shape[d]).to(core.int64) + ptr.offsets[d]
        if rank > 1:
            index = core.expand_dims(index, _other_axes(rank, d))
        offset = offset + index * ptr.strides[d]
        if d in boundary_check:
            inside = (index >= 0) & (index < ptr.shape[d])
            if mask is None:
                mask = inside
            else:
                mask = mask & inside
    return ptr.base + offset, mask


@jit
def load_block(ptr, boundary_check: core.constexpr, padding_option: core.constexpr, cache_modifier: core.constexpr,
               eviction_policy: core.constexpr, volatile: core.constexpr):
    pointers, mask = _addresses(ptr, boundary_check)
    if mask is None:
        value = core.load(pointers, cache_modifier=cache_modifier, eviction_policy=eviction_policy,
                          volatile=volatile)
    elif padding_option == "nan":
        value = core.load(pointers, mask, float("nan"), cache_modifier=cache_modifier,
                          eviction_policy=eviction_policy, volatile=volatile)
    else:
        # "zero", and no padding: Triton leaves those elements undefined, here they are zero too.
        value = core.load(pointers, mask, 0, cache_modifier=cache_modifier, eviction_policy=eviction_policy,
                          volatile=volatile)
    if value.dtype == core.int1:
        value = value.to(core.int8)
    return value


@jit
def store_block(ptr, value, boundary_check: core.constexpr, cache_modifier: core.constexpr,
                eviction_policy: core.constexpr):
    pointers, mask = _addresses(ptr, boundary_check)
    core.store(pointers, value, mask, cache_modifier=cache_modifier, eviction_policy=eviction_policy)


def check_load(ptr: block_pointer, mask: Any, other: Any, boundary_check: Any, padding_option: Any) -> tuple:
    """tl.load's checks for a block pointer; returns (boundary_check, padding_option) canonical."""
    if _unwrap(mask) is not None or _unwrap(other) is not None:
        raise ValueError("`mask` and `other` arguments cannot be specified for loading block pointers (use "
                         "boundary_check and padding_option)")
    padding = core._str_arg(padding_option, "tl.load(): padding_option")
    if padding not in ("", "zero", "nan"):
        raise ValueError(f"Padding option {padding} not supported (the options are 'zero' and 'nan')")
    if padding == "nan" and not ptr.dtype.is_floating():
        raise ValueError(f"Padding option `nan` is not supported for integer block pointers ({ptr!r})")
    return ptr._boundary_check(boundary_check), padding


def check_store(ptr: block_pointer, value: Any, mask: Any, boundary_check: Any, _builder: Any) -> tuple:
    """tl.store's checks for a block pointer; returns (value broadcast to the block, boundary_check)."""
    if _unwrap(mask) is not None:
        raise ValueError("`mask` cannot be specified for storing to block pointers (use boundary_check)")
    value = core.to_tensor(value, _builder=_builder)
    block = list(ptr.block_shape)
    if not value.shape:
        value = core.broadcast_to(value, block, _builder=_builder)
    if value.shape != block:
        raise ValueError(f"Block shape({block}) and value shape({value.shape}) mismatch")
    if value.dtype != ptr.dtype:
        raise ValueError(f"Block element type({ptr.dtype}) and value element type({value.dtype}) mismatch")
    return value, ptr._boundary_check(boundary_check)
