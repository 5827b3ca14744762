"""Run GPU code on the CPU: Tessel's GPU simulator, for NVIDIA PTX and AMD's AMDGCN.

``launch(ptx, kernel_name, grid, num_warps=4, shared_bytes=0, args=[...])``
executes the kernel ``kernel_name`` of the PTX text over ``grid`` CTAs of
``num_warps * 32`` threads, warp by warp with the GPU's semantics. Given the
AMDGCN assembly of LLVM's AMDGPU backend instead (a hip target's
``asm["amdgcn"]``, Triton's for a gfx chip), it runs workgroups of
``num_warps`` waves of 64 lanes (wave64, CDNA: gfx90a, gfx942, gfx950); its
kernels' arguments are the explicit ones (Triton's trailing scratch pointers
included: pass None). Arrays
(numpy arrays, CPU torch tensors) are copied into simulated global memory,
each into its own allocation, and copied back after the launch, so an access
outside every array is reported instead of corrupting anything. Ints, floats,
bools and None (a null pointer) are passed by value. Returns the counters as
a dict: warp instructions by class, global requests and 32-byte sectors,
shared-memory requests and bank-conflict wavefronts, barriers.

Every problem (PTX the simulator does not know, out-of-bounds or misaligned
accesses, shared-memory races between barriers, divergent barriers) raises
``SimulatorError`` naming the CTA, thread, PTX line and instruction.

``TensorMap(array, box_shape, swizzle=..)`` is a tensor map (CUtensorMap) over
an array for TMA (``cp.async.bulk.tensor``): passed as an argument, it becomes
the kernel's 128-byte by-value parameter and its array gets its own simulated
allocation (shared with an earlier argument passing the same array), copied
back after the launch. The encoding is the simulator's own
(include/tessel/GPUSim/TensorMap.h); device code may also build one with
``tensormap.replace``.
"""

from __future__ import annotations

import struct
from typing import Any, Iterable, Sequence

import numpy as np

from . import _C

SimulatorError = _C.GPUSimError

__all__ = ["launch", "SimulatorError", "TensorMap"]

# PTX tensormap.replace .elemtype codes (TensorMap.h) and their sizes.
_ELEM_TYPES = {"u8": (0, 1), "u16": (1, 2), "u32": (2, 4), "s32": (3, 4), "u64": (4, 8), "s64": (5, 8),
               "f16": (6, 2), "f32": (7, 4), "f32.ftz": (8, 4), "f64": (9, 8), "bf16": (10, 2), "tf32": (11, 4),
               "tf32.ftz": (12, 4)}
_NUMPY_ELEM_TYPES = {"u1": "u8", "i1": "u8", "b1": "u8", "u2": "u16", "i2": "u16", "f2": "f16", "u4": "u32",
                     "i4": "s32", "f4": "f32", "u8": "u64", "i8": "s64", "f8": "f64"}
_SWIZZLES = {None: 0, 0: 0, 32: 1, 64: 2, 128: 3}


class TensorMap:
    """A tensor map over a whole C-contiguous array (1 to 5 dimensions).

    ``box_shape`` and ``element_strides`` are in the array's index order
    (outermost first), like Triton's ``block_shape``; ``swizzle`` is the
    swizzle span in bytes (None/0, 32, 64 or 128); ``elem_type`` overrides the
    element type taken from the dtype (e.g. ``"bf16"`` for a uint16 array of
    bfloat16 bits); ``fill`` is ``"zero"`` or ``"nan"`` for elements of a box
    outside the array.
    """

    def __init__(self, array: Any, box_shape: Sequence[int], *, swizzle: int | None = None,
                 element_strides: Sequence[int] | None = None, elem_type: str | None = None,
                 fill: str = "zero") -> None:
        if type(array).__module__.startswith("torch") and str(array.dtype) == "torch.bfloat16":
            # numpy has no bfloat16: the same bits as int16 (the simulator only moves them).
            array = array.view(getattr(__import__("torch"), "int16"))
            elem_type = elem_type or "bf16"
        array = _argument(array, 0)
        if not isinstance(array, np.ndarray):
            raise SimulatorError("TensorMap: expected an array")
        rank = array.ndim
        if not 1 <= rank <= 5:
            raise SimulatorError(f"TensorMap: arrays of 1 to 5 dimensions, not {rank}")
        box = [int(b) for b in box_shape]
        strides = [1] * rank if element_strides is None else [int(e) for e in element_strides]
        if len(box) != rank or len(strides) != rank:
            raise SimulatorError("TensorMap: box_shape and element_strides need one entry per dimension")
        if elem_type is None:
            key = array.dtype.kind + str(array.dtype.itemsize)
            if key not in _NUMPY_ELEM_TYPES:
                raise SimulatorError(f"TensorMap: no TMA element type for {array.dtype}")
            elem_type = _NUMPY_ELEM_TYPES[key]
        if elem_type not in _ELEM_TYPES:
            raise SimulatorError(f"TensorMap: unknown element type {elem_type!r}")
        code, size = _ELEM_TYPES[elem_type]
        if size != array.dtype.itemsize:
            raise SimulatorError(f"TensorMap: {elem_type} elements are {size} bytes, the array's {array.itemsize}")
        if swizzle not in _SWIZZLES:
            raise SimulatorError(f"TensorMap: swizzle is None, 32, 64 or 128, not {swizzle!r}")
        if fill not in ("zero", "nan"):
            raise SimulatorError(f"TensorMap: fill is 'zero' or 'nan', not {fill!r}")
        self.array, self.box_shape, self.element_strides = array, box, strides
        self.swizzle, self.elem_type = swizzle or 0, elem_type
        dims = list(reversed(array.shape))
        gstrides = list(reversed(array.strides))[1:]
        blob = bytearray(128)
        struct.pack_into("<QIBBBBB", blob, 0, 0, 0x4D545354, rank, code, 0, _SWIZZLES[swizzle],
                         1 if fill == "nan" else 0)
        struct.pack_into("<5I", blob, 20, *(dims + [0] * (5 - rank)))
        struct.pack_into("<4Q", blob, 40, *(gstrides + [0] * (4 - len(gstrides))))
        struct.pack_into("<5I", blob, 72, *(list(reversed(box)) + [0] * (5 - rank)))
        struct.pack_into("<5I", blob, 92, *(list(reversed(strides)) + [0] * (5 - rank)))
        self._blob = bytes(blob)

    @classmethod
    def from_triton(cls, desc: Any, meta: dict) -> "TensorMap":
        """The tensor map Triton's launcher makes for a host-side
        ``triton.tools.tensor_descriptor.TensorDescriptor`` given the kernel's
        ``metadata.tensordesc_meta`` entry (box and swizzle)."""
        swizzle = {0: None, 1: 32, 2: 64, 3: 128}[meta["swizzle"]]
        codes = {v[0]: k for k, v in _ELEM_TYPES.items()}
        return cls(desc.base, meta["block_size"], swizzle=swizzle, elem_type=codes[meta["elem_type"]],
                   fill="nan" if getattr(desc, "padding", "zero") == "nan" else "zero")

    def _launch_value(self) -> tuple:
        return (self._blob, self.array, 0)


def _dims(value: Any, what: str) -> list[int]:
    if isinstance(value, int):
        value = (value,)
    dims = list(value)
    if not 1 <= len(dims) <= 3:
        raise SimulatorError(f"{what} has 1 to 3 dimensions, got {value!r}")
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d <= 0:
            raise SimulatorError(f"{what} dimensions must be positive ints, got {value!r}")
    return [int(d) for d in dims]


def _argument(value: Any, index: int) -> Any:
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, TensorMap):
        return value._launch_value()
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    if isinstance(value, np.ndarray):
        if value.dtype.byteorder == ">":
            raise SimulatorError(f"argument {index}: big-endian arrays are not supported")
        if not value.flags.c_contiguous:
            raise SimulatorError(f"argument {index}: arrays must be C-contiguous")
        return value
    if type(value).__module__.startswith("torch"):
        if value.device.type != "cpu":
            raise SimulatorError(f"argument {index}: only CPU tensors can be simulated")
        if not value.is_contiguous():
            raise SimulatorError(f"argument {index}: tensors must be contiguous")
        return value.detach().numpy()  # shares memory: results land in the tensor
    raise SimulatorError(
        f"argument {index}: expected an array, int, float, bool or None, got {type(value).__name__}")


def launch(ptx: str, kernel_name: str, grid: int | Sequence[int], *, num_warps: int = 4,
           block: int | Sequence[int] | None = None, shared_bytes: int = 0,
           args: Iterable[Any] = (), race_check: bool = True,
           instruction_limit: int = 20_000_000_000, threads: int = 0,
           time_limit: float | None = 600.0) -> dict:
    """Runs ``kernel_name`` from ``ptx``; returns the counters.

    CTAs run on ``threads`` worker threads (0: one per hardware thread); the
    results, counters and errors (the lowest failing CTA's) do not depend on it.

    A runaway kernel stops with a ``SimulatorError`` after
    ``instruction_limit`` warp instructions or ``time_limit`` seconds of wall
    clock (None: no time limit), whichever comes first; Ctrl-C
    (KeyboardInterrupt) stops a launch within a few tens of milliseconds.

    ``block`` overrides ``num_warps`` with explicit CTA dimensions.
    ``shared_bytes`` is the dynamic shared memory per CTA (Triton's
    ``metadata.shared``).
    """
    if isinstance(ptx, bytes):
        ptx = ptx.decode()
    amdgcn = _is_amdgcn(ptx)
    grid_dims = _dims(grid, "grid")
    if block is None:
        most = 16 if amdgcn else 32
        if isinstance(num_warps, bool) or not isinstance(num_warps, int) or not 1 <= num_warps <= most:
            raise SimulatorError(f"num_warps must be an int in [1, {most}], got {num_warps!r}")
        block_dims = [num_warps * (64 if amdgcn else 32)]
    else:
        block_dims = _dims(block, "block")
    if isinstance(shared_bytes, bool) or not isinstance(shared_bytes, int) or shared_bytes < 0:
        raise SimulatorError(f"shared_bytes must be a non-negative int, got {shared_bytes!r}")
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 0:
        raise SimulatorError(f"threads must be a non-negative int, got {threads!r}")
    if time_limit is None:
        time_limit = 0.0  # the simulator's "no limit"
    elif isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or not 0 < time_limit < float("inf"):
        raise SimulatorError(f"time_limit must be a positive number of seconds or None, got {time_limit!r}")
    converted = [_argument(a, i) for i, a in enumerate(args)]
    return _C.gpusim_launch(ptx, kernel_name, grid_dims, block_dims, shared_bytes, converted,
                            race_check, instruction_limit, threads, float(time_limit), amdgcn)


def _is_amdgcn(code: str) -> bool:
    """AMDGCN assembly (LLVM's AMDGPU backend: Tessel's hip targets, Triton's asm["amdgcn"]) rather than PTX."""
    return ".amdgcn_target" in code or ".amdhsa_kernel" in code
