"""Host side of a launch: each kernel argument's type string (the binding contract's: "*fp32", "i32", ...) and the
value the launcher receives; and `driver.active`, the backend of the current target as Triton's programs ask for it
(`triton.runtime.driver.active.get_active_torch_device()`, `.get_current_target()`, `.utils.get_device_properties`).

Arrays are read from `data_ptr()` and `dtype` (torch), `__cuda_array_interface__` (CuPy, Numba), DLPack
(`__dlpack__`) or `__array_interface__` (numpy). Targets that run kernels in this process (cpu, sim) take host
memory and refuse device memory here with a clear message instead of handing a device address to CPU code; the
cuda targets take device memory, and the launcher refuses, naming the argument, an address the GPU cannot reach.
"""
from __future__ import annotations

import ctypes
import numbers
import sys
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
    if hasattr(value, "__dlpack__") and hasattr(value, "__dlpack_device__"):
        return _host_dlpack_arg
    raise TypeError(f"argument '{name}' of type {type(value).__name__} is not supported: pass an array (numpy, "
                    "torch, or anything with data_ptr() and dtype), a Python int/float/bool, or make the parameter "
                    "tl.constexpr")


_READERS: dict[type, Any] = {bool: _bool_arg, int: _int_arg, float: _float_arg}


def device_kernel_arg(name: str, value: Any) -> tuple[str, int | float | bool]:
    """`kernel_arg` for the targets whose arrays live in GPU memory (cuda): CUDA tensors, `__cuda_array_interface__`
    and DLPack arrays give their device address. Host arrays give theirs too (a warmup compiles from their types);
    launching with one is refused by the launcher, which asks the driver whether the GPU can address it."""
    reader = _DEVICE_READERS.get(type(value))
    if reader is None:
        reader = _device_reader_for(name, value)
        _DEVICE_READERS[type(value)] = reader
    return reader(name, value)


def _device_reader_for(name: str, value: Any) -> Any:
    if hasattr(value, "data_ptr") and hasattr(value, "dtype"):
        return _device_data_ptr_arg
    if hasattr(value, "__cuda_array_interface__"):
        return _cuda_array_interface_arg
    if hasattr(value, "__dlpack__") and hasattr(value, "__dlpack_device__"):
        return _dlpack_arg
    return _reader_for(name, value)


_DEVICE_READERS: dict[type, Any] = {bool: _bool_arg, int: _int_arg, float: _float_arg}


def _device_data_ptr_arg(name: str, value: Any) -> tuple[str, int]:
    return "*" + _element_type(name, value.dtype), value.data_ptr()


def _cuda_array_interface_arg(name: str, value: Any) -> tuple[str, int]:
    interface = value.__cuda_array_interface__
    element = _TYPESTRS.get(interface["typestr"][1:])
    if element is None or (interface["typestr"][0] == ">" and interface["typestr"][2:] != "1"):
        raise TypeError(f"argument '{name}': arrays of type {interface['typestr']!r} are not supported")
    return "*" + element, interface["data"][0]


# DLPack's C structures (dlpack.h, the ABI every producer shares): the capsule "dltensor" holds a DLManagedTensor,
# which starts with the DLTensor read here.
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


# DLDataTypeCode (int 0, uint 1, float 2, bfloat 4, bool 6) and bits -> element type.
_DLPACK_TYPES = {(0, 8): "i8", (0, 16): "i16", (0, 32): "i32", (0, 64): "i64", (1, 8): "u8", (1, 16): "u16",
                 (1, 32): "u32", (1, 64): "u64", (2, 16): "fp16", (2, 32): "fp32", (2, 64): "fp64",
                 (4, 16): "bf16", (6, 8): "i1"}
# kDLCPU; kDLCUDA, kDLCUDAHost (pinned), kDLROCM, kDLROCMHost, kDLCUDAManaged
_DLPACK_CPU, _DLPACK_CUDA_DEVICES = 1, (2, 3, 10, 11, 13)
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype, _capsule_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]


def _dlpack_arg(name: str, value: Any) -> tuple[str, int]:
    """The element type and address of a DLPack array; its capsule is not consumed (it frees its DLManagedTensor
    when collected) and the array itself keeps the memory alive during the launch."""
    capsule = value.__dlpack__()
    tensor = _DLTensor.from_address(_capsule_pointer(capsule, b"dltensor"))
    element = _DLPACK_TYPES.get((tensor.dtype.code, tensor.dtype.bits))
    if element is None or tensor.dtype.lanes != 1:
        raise TypeError(f"argument '{name}': DLPack arrays of type code {tensor.dtype.code}, "
                        f"{tensor.dtype.bits} bits, {tensor.dtype.lanes} lanes are not supported")
    return "*" + element, (tensor.data or 0) + tensor.byte_offset


def _host_dlpack_arg(name: str, value: Any) -> tuple[str, int]:
    device_type = value.__dlpack_device__()[0]
    if device_type != _DLPACK_CPU:
        raise _device_memory_error(name, "GPU" if device_type in _DLPACK_CUDA_DEVICES else f"DLPack device "
                                   f"{device_type}")
    return _dlpack_arg(name, value)


def runs_on_device(target: str) -> bool:
    """Whether kernels of `target` take device memory and launch on a stream (cuda), not host memory (cpu, sim)."""
    from .. import backends
    return backends.for_target(target).device_memory


def current_stream() -> int:
    """The CUstream launches go to: torch's current stream of its current device when torch has started CUDA,
    else 0 (the default stream)."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_initialized():
        return 0
    return torch.cuda.current_stream().cuda_stream


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
