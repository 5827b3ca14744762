"""Host side of a launch: each kernel argument's type string (the binding contract's: "*fp32", "i32", ...) and the
value the launcher receives; and `driver.active`, the backend of the current target as Triton's programs ask for it
(`triton.runtime.driver.active.get_active_torch_device()`, `.get_current_target()`, `.utils.get_device_properties`).

This build's backends run kernels on the CPU: every array argument must live in host memory, and device memory is
rejected here with a clear message instead of handing a device address to CPU code.
"""
from __future__ import annotations

import numbers
from typing import Any

from .. import _C
from ..knobs import knobs

# The element types' names as `str(dtype)` spells them for torch (after "torch."), numpy, and tessel.language itself,
# and `__array_interface__["typestr"]` without its byte-order character: all from the C++ table of element types.
_ELEMENT_TYPES = {name: t["name"] for t in _C.scalar_types() for name in (t["name"], t["triton_name"], *t["aliases"])}
_TYPESTRS = {t["numpy_typestr"]: t["name"] for t in _C.scalar_types() if t["numpy_typestr"]}


def argument_type(value: bool | int | float) -> str:
    """The type of a Python scalar passed as a kernel argument (Triton's rule for arguments): bool -> i1; int -> i32
    if it fits, else i64, else u64; float -> fp32. A literal inside a kernel follows another rule (_C.literal_type:
    2**31..2**32-1 is u32 there)."""
    if isinstance(value, bool):
        return "i1"
    if isinstance(value, numbers.Integral):
        v = int(value)
        if -2**31 <= v < 2**31:
            return "i32"
        if -2**63 <= v < 2**63:
            return "i64"
        if 0 <= v < 2**64:
            return "u64"
        raise OverflowError(f"integer {v} does not fit in 64 bits")
    if isinstance(value, numbers.Real):
        return "fp32"
    raise TypeError(f"expected a Python bool, int or float, got {type(value).__name__}")


def kernel_arg(name: str, value: Any) -> tuple[str, int | float | bool]:
    """(type string, launcher value) of a run-time argument: arrays become a typed pointer and their address."""
    # How to read an argument depends only on its type: the choice is made once per type (this runs every launch).
    reader = _READERS.get(type(value))
    if reader is None:
        reader = _reader_for(name, value)
        _READERS[type(value)] = reader
    return reader(name, value)


def _bool_arg(name: str, value: Any) -> tuple[str, bool]:
    return "i1", bool(value)


def _int_arg(name: str, value: Any) -> tuple[str, int]:
    return argument_type(value), int(value)


def _float_arg(name: str, value: Any) -> tuple[str, float]:
    return "fp32", float(value)


def _data_ptr_arg(name: str, value: Any) -> tuple[str, int]:
    """torch tensors and anything else with data_ptr() and dtype: the memory may be on a device, which is a property
    of the value (a torch tensor on the GPU has the same type as one on the CPU)."""
    device = getattr(value, "device", None)
    if getattr(value, "is_cuda", False) is True or hasattr(value, "__cuda_array_interface__") or \
            getattr(device, "type", "cpu") != "cpu":
        raise _device_memory_error(name, device)
    return "*" + _element_type(name, value.dtype), value.data_ptr()


def _array_interface_arg(name: str, value: Any) -> tuple[str, int | float | bool]:
    """numpy arrays (host memory by definition)."""
    interface = value.__array_interface__
    if interface["shape"] == ():  # a numpy scalar such as np.bool_: pass its Python value
        return kernel_arg(name, value.item())
    typestr = interface["typestr"]
    if typestr[0] == ">" and typestr[2:] != "1":
        # Kernels read memory in the host's (little-endian) byte order: the bytes would be misread.
        raise TypeError(f"argument '{name}': big-endian arrays ({typestr!r}) are not supported; convert it to the "
                        "native byte order first, e.g. a.astype(a.dtype.newbyteorder('='))")
    element = _TYPESTRS.get(typestr[1:])
    if element is None:
        raise TypeError(f"argument '{name}': arrays of type {interface['typestr']!r} are not supported")
    return "*" + element, interface["data"][0]


def _reader_for(name: str, value: Any) -> Any:
    if isinstance(value, bool):
        return _bool_arg
    if isinstance(value, numbers.Integral):
        return _int_arg
    if isinstance(value, numbers.Real):
        return _float_arg
    if hasattr(value, "data_ptr") and hasattr(value, "dtype"):
        return _data_ptr_arg
    if hasattr(value, "__cuda_array_interface__"):  # e.g. a CuPy array: device memory, whatever its value
        raise _device_memory_error(name, getattr(value, "device", None))
    if hasattr(value, "__array_interface__"):
        return _array_interface_arg
    raise TypeError(f"argument '{name}' of type {type(value).__name__} is not supported: pass an array (numpy, "
                    "torch, or anything with data_ptr() and dtype), a Python int/float/bool, or make the parameter "
                    "tl.constexpr")


_READERS: dict[type, Any] = {bool: _bool_arg, int: _int_arg, float: _float_arg}


def _element_type(name: str, dtype: Any) -> str:
    key = str(dtype).removeprefix("torch.")
    element = _ELEMENT_TYPES.get(key)
    if element is None:
        raise TypeError(f"argument '{name}': element type {dtype} is not supported")
    return element


def _device_memory_error(name: str, device: Any) -> RuntimeError:
    return RuntimeError(f"argument '{name}' is in {device or 'GPU'} memory, but kernels of the target "
                        f"{knobs.target!r} run on the CPU; pass a CPU array (e.g. tensor.cpu())")


class _Utils:
    """`driver.active.utils`."""

    def get_device_properties(self, device: Any = None) -> dict[str, int]:
        return _backend().device_properties(device)


class ActiveDriver:
    """`triton.runtime.driver.active`: the backend of the current target (`tessel.knobs.target`, TESSEL_TARGET)."""

    utils = _Utils()

    def get_current_target(self) -> Any:
        """Backend, arch and warp size, as Triton's GPUTarget."""
        return _backend().device_target()

    def get_active_torch_device(self) -> Any:
        return _backend().active_torch_device()

    def get_current_device(self) -> int:
        return 0

    def is_active(self) -> bool:
        return True


def _backend() -> Any:
    from .. import backends  # imported on use: backends needs the compiled core, which needs this module's readers
    return backends.for_target(knobs.target)


active = ActiveDriver()
