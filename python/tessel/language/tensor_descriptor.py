"""Tensor descriptors made inside a kernel: `tl.make_tensor_descriptor(base, shape, strides, block_shape)`, read
and written a block at a time with `desc.load(offsets)` / `desc.store(offsets, value)` (also
`tl.load_tensor_descriptor` / `tl.store_tensor_descriptor`), as in Triton 3.6.

A descriptor may also come from the host as a kernel argument (`tessel.tools.tensor_descriptor.TensorDescriptor`, or
Triton's): the launcher checks it and passes it as its base, its shape (int32 each) and its strides but the last (int64
each; the last is 1, compiled in), with the block shape and the padding in its type (`host_descriptor_type`).

A descriptor names a strided array of `shape` elements at `base` (the last dimension contiguous). A block starts at
`offsets` (element indices, negative allowed): the elements inside the array are read and written, the rest read as
zero (or NaN with `padding_option="nan"`) and are not written. Accesses are `tile.descriptor_load` /
`tile.descriptor_store` (the builder checks and converts their operands: int32 sizes and offsets, int64 strides);
`tile-lower-descriptors` makes them masked loads and stores of base + sum(index_d * stride_d).
"""
from __future__ import annotations

import numbers
import re
from typing import Any, Sequence

from . import core
from .core import _describe, _unwrap, builtin, tensor

_MAX_RANK = 5


def _index_arg(value: Any, what: str) -> Any:
    """A Python int or an integer scalar tensor (a shape, a stride or an offset)."""
    value = _unwrap(value)
    if isinstance(value, tensor):
        if value.shape or not value.dtype.is_int() or value.dtype.is_bool():
            raise TypeError(f"{what} must be an integer scalar, got {_describe(value)}")
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{what} must be an integer, got {_describe(value)}")
    return int(value)


class tensor_descriptor(core.aggregate):
    """A descriptor of a strided global array and the block shape its loads and stores move. As an aggregate its
    leaves are the base, the shape and the strides (loops carry them; a @jit(noinline=True) function takes them)."""

    def __init__(self, base: tensor, shape: list[Any], strides: list[Any], block_shape: list[int],
                 padding: str, tensor_map: int | None = None) -> None:
        self.base = base
        self.shape = shape
        self.strides = strides
        self.block_shape = block_shape
        self.padding = padding
        # The kernel argument a host-made descriptor came in (its base), which a target may read as a tensor map.
        self.tensor_map = tensor_map

    def _flatten(self) -> tuple[list[Any], Any]:
        return [self.base, *self.shape, *self.strides], (len(self.shape), tuple(self.block_shape), self.padding,
                                                         self.tensor_map)

    @classmethod
    def _unflatten(cls, structure: Any, leaves: Sequence[Any]) -> "tensor_descriptor":
        rank, block_shape, padding, tensor_map = structure
        leaves = list(leaves)
        return cls(leaves[0], leaves[1:1 + rank], leaves[1 + rank:], list(block_shape), padding, tensor_map)

    @property
    def dtype(self) -> core.dtype:
        return self.base.dtype.element_ty

    @property
    def block_type(self) -> core.block_type:
        return core.block_type(self.dtype, self.block_shape)

    def __repr__(self) -> str:
        return f"tensor_descriptor({self.dtype}{self.block_shape})"

    def _offsets(self, offsets: Any, what: str) -> list[Any]:
        offsets = _unwrap(offsets)
        if not isinstance(offsets, (tuple, list)):
            offsets = [offsets]
        # The builder checks them (integer scalars or ints, int32).
        return [core._operand(offset, f"{what}: offset {d}") for d, offset in enumerate(offsets)]

    def _operands(self, offsets: Any, what: str) -> tuple[Any, ...]:
        """The builder's operands: base, shape, strides but the last, offsets."""
        return (self.base.handle, [core._operand(s, what) for s in self.shape],
                [core._operand(s, what) for s in self.strides[:-1]], self._offsets(offsets, what))

    @builtin
    def load(self, offsets: Sequence[Any], _builder: Any = None) -> tensor:
        what = "tensor descriptor load"
        return tensor(_builder.descriptor_load(*self._operands(offsets, what), self.block_shape,
                                               self.padding == "nan", self.tensor_map))

    @builtin
    def store(self, offsets: Sequence[Any], value: Any, _builder: Any = None) -> None:
        what = "tensor descriptor store"
        _builder.descriptor_store(*self._operands(offsets, what), core._operand(value, what), self.block_shape,
                                  self.tensor_map)


@builtin
def make_tensor_descriptor(base: tensor, shape: Sequence[Any], strides: Sequence[Any], block_shape: Sequence[Any],
                           padding_option: str = "zero", _builder: Any = None) -> tensor_descriptor:
    base = core._tensor_arg(base, "tl.make_tensor_descriptor(): base")
    if base.shape or not base.dtype.is_ptr():
        raise TypeError(f"tl.make_tensor_descriptor(): base must be a pointer, got {_describe(base)}")
    shape, strides, block = (list(_unwrap(s)) if isinstance(_unwrap(s), (tuple, list)) else None
                             for s in (shape, strides, block_shape))
    if shape is None or strides is None or block is None:
        raise TypeError("tl.make_tensor_descriptor(): shape, strides and block_shape are lists, one entry per "
                        "dimension")
    rank = len(shape)
    if not 1 <= rank <= _MAX_RANK:
        raise ValueError(f"tl.make_tensor_descriptor(): a descriptor has 1 to {_MAX_RANK} dimensions, got {rank}")
    if len(strides) != rank or len(block) != rank:
        raise ValueError(f"tl.make_tensor_descriptor(): {rank} dimensions in shape, but {len(strides)} strides and "
                         f"{len(block)} block dimensions")
    block = core._shape_arg(block, "tl.make_tensor_descriptor(): block_shape")
    for d, size in enumerate(block):
        if size < 1 or size & (size - 1):
            raise ValueError(f"tl.make_tensor_descriptor(): block dimension {d} must be a power of 2, got {size}")
    element = base.dtype.element_ty
    if block[-1] * element.primitive_bitwidth < 128:
        raise ValueError(f"tl.make_tensor_descriptor(): the block's last dimension must span at least 16 bytes, got "
                         f"{block[-1]} x {element.primitive_bitwidth // 8}")
    last_stride = _unwrap(strides[-1])
    if isinstance(last_stride, tensor) or last_stride != 1:
        raise ValueError("tl.make_tensor_descriptor(): the last dimension must be contiguous (stride 1, a "
                         f"compile-time constant), got {_describe(last_stride)}")
    padding = core._str_arg(padding_option, "tl.make_tensor_descriptor(): padding_option") or "zero"
    if padding not in ("zero", "nan"):
        raise ValueError(f"tl.make_tensor_descriptor(): padding_option is 'zero' or 'nan', got {padding!r}")
    if padding == "nan" and not element.is_floating():
        raise ValueError(f"tl.make_tensor_descriptor(): padding_option 'nan' needs a floating-point array, got "
                         f"{element}")
    shape = [_index_arg(s, f"tl.make_tensor_descriptor(): shape[{d}]") for d, s in enumerate(shape)]
    strides = [_index_arg(s, f"tl.make_tensor_descriptor(): strides[{d}]") for d, s in enumerate(strides)]
    # The base and the strides but the last are 16-byte multiples: constants are checked here, multiples of a
    # runtime argument by the launcher.
    _builder.check_descriptor_alignment(base.handle, [core._operand(s, "tl.make_tensor_descriptor()")
                                                      for s in strides])
    return tensor_descriptor(base, shape, strides, block, padding)


@builtin
def load_tensor_descriptor(desc: tensor_descriptor, offsets: Sequence[Any], _builder: Any = None) -> tensor:
    return _descriptor_arg(desc, "tl.load_tensor_descriptor()").load(offsets, _builder=_builder)


@builtin
def store_tensor_descriptor(desc: tensor_descriptor, offsets: Sequence[Any], value: Any,
                            _builder: Any = None) -> None:
    _descriptor_arg(desc, "tl.store_tensor_descriptor()").store(offsets, value, _builder=_builder)


def _descriptor_arg(desc: Any, what: str) -> tensor_descriptor:
    desc = _unwrap(desc)
    if not isinstance(desc, tensor_descriptor):
        raise TypeError(f"{what}: expected a tensor descriptor (tl.make_tensor_descriptor), got {_describe(desc)}")
    return desc


# The launcher's type tag of a descriptor argument (runtime::descriptorTag): element type, block, padding, then the
# type tags of the arguments it is passed as.
_HOST_TAG = re.compile(r"tensordesc<(\w+)\[([0-9,]+)\](,nan)?>\((.*)\)")


class host_descriptor_type:
    """A descriptor kernel argument's type: the runtime arguments it is passed as (`arg_types`) and how they make the
    descriptor in the kernel (`make`)."""

    def __init__(self, block_shape: list[int], padding: str, arg_types: list[str]) -> None:
        self.block_shape = block_shape
        self.padding = padding
        self.arg_types = arg_types

    @classmethod
    def parse(cls, tag: str) -> "host_descriptor_type | None":
        """The type of a descriptor's tag; None for other arguments' tags."""
        match = _HOST_TAG.fullmatch(tag)
        if match is None:
            return None
        block = [int(size) for size in match.group(2).split(",")]
        return cls(block, "nan" if match.group(3) else "zero", match.group(4).split(","))

    def make(self, values: list[tensor], first: int) -> tensor_descriptor:
        """The descriptor whose arguments, from kernel argument `first` on, are `values`."""
        rank = len(self.block_shape)
        base, shape, strides = values[0], values[1:1 + rank], values[1 + rank:]
        return tensor_descriptor(base, list(shape), [*strides, 1], self.block_shape, self.padding, first)
