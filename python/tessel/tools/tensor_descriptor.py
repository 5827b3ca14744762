"""Host-side tensor descriptors, as `triton.tools.tensor_descriptor`: `TensorDescriptor(base, shape, strides,
block_shape, padding)`, or `TensorDescriptor.from_tensor(array, block_shape)`, passed to a kernel whose parameter is
then used like a `tl.make_tensor_descriptor` one (`desc.load(offsets)`, `desc.store(offsets, value)`).

The base is a torch tensor or an array (numpy, or on the GPU `__cuda_array_interface__`); shape and strides count elements. The checks are Triton's (1 to 5
dimensions, a 16-byte aligned base, strides but the last 16-byte multiples, the last 1, power-of-two blocks), raised
as ValueError; the launcher checks again what a kernel relies on, for descriptors of other classes (Triton's own)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List

_MAX_RANK = 5


def _address(base: Any) -> int:
    if hasattr(base, "data_ptr"):
        return int(base.data_ptr())
    for protocol in ("__cuda_array_interface__", "__array_interface__"):
        interface = getattr(base, protocol, None)
        if interface is not None:
            return int(interface["data"][0])
    raise TypeError(f"TensorDescriptor: base must be a torch tensor or an array (numpy, __cuda_array_interface__), "
                    f"got {type(base).__name__}")


def _item_size(base: Any) -> int:
    dtype = base.dtype
    return int(dtype.itemsize)


def _is_floating(base: Any) -> bool:
    dtype = base.dtype
    if hasattr(dtype, "is_floating_point"):  # torch
        return bool(dtype.is_floating_point)
    return getattr(dtype, "kind", "") == "f"  # numpy


@dataclass
class TensorDescriptor:
    base: Any
    shape: List[int]
    strides: List[int]
    block_shape: List[int]
    padding: str = "zero"

    def __post_init__(self) -> None:
        self.shape = [int(s) for s in self.shape]
        self.strides = [int(s) for s in self.strides]
        self.block_shape = [int(s) for s in self.block_shape]
        rank = len(self.shape)
        if not 1 <= rank <= _MAX_RANK:
            raise ValueError(f"TensorDescriptor: 1 to {_MAX_RANK} dimensions, got a shape of {rank}")
        if len(self.strides) != rank or len(self.block_shape) != rank:
            raise ValueError(f"TensorDescriptor: {rank} dimensions in shape, but {len(self.strides)} strides and "
                             f"{len(self.block_shape)} block dimensions")
        if _address(self.base) % 16:
            raise ValueError("TensorDescriptor: the base's address must be a multiple of 16 bytes")
        for d, size in enumerate(self.block_shape):
            if size < 1 or size & (size - 1):
                raise ValueError(f"TensorDescriptor: block dimension {d} must be a power of 2, got {size}")
        item = _item_size(self.base)
        for d, stride in enumerate(self.strides[:-1]):
            if stride * item % 16:
                raise ValueError(f"TensorDescriptor: strides[{d}] must be a multiple of 16 bytes, got {stride} "
                                 f"elements of {item} bytes")
        for d, size in enumerate(self.shape):
            if size <= 0:
                raise ValueError(f"TensorDescriptor: shape[{d}] must be positive, got {size}")
        if self.strides[-1] != 1:
            raise ValueError(f"TensorDescriptor: the last dimension must be contiguous (stride 1), got "
                             f"{self.strides[-1]}")
        if self.padding not in ("zero", "nan"):
            raise ValueError(f"TensorDescriptor: padding is 'zero' or 'nan', got {self.padding!r}")
        if self.padding == "nan" and not _is_floating(self.base):
            raise ValueError(f"TensorDescriptor: padding 'nan' needs a floating-point array, got {self.base.dtype}")

    @staticmethod
    def from_tensor(tensor: Any, block_shape: List[int], padding: str = "zero") -> "TensorDescriptor":
        """The descriptor of a whole torch tensor or numpy array (strides in elements)."""
        if callable(getattr(tensor, "stride", None)):  # torch: strides in elements
            strides = list(tensor.stride())
        else:  # numpy: strides in bytes
            item = _item_size(tensor)
            if any(s % item for s in tensor.strides):
                raise ValueError("TensorDescriptor.from_tensor: the array's strides are not whole elements")
            strides = [s // item for s in tensor.strides]
        return TensorDescriptor(tensor, list(tensor.shape), strides, block_shape, padding)
