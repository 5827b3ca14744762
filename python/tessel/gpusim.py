"""Run NVIDIA PTX on the CPU: Tessel's PTX simulator.

``launch(ptx, kernel_name, grid, num_warps=4, shared_bytes=0, args=[...])``
executes the kernel ``kernel_name`` of the PTX text over ``grid`` CTAs of
``num_warps * 32`` threads, warp by warp with the GPU's semantics. Arrays
(numpy arrays, CPU torch tensors) are copied into simulated global memory,
each into its own allocation, and copied back after the launch, so an access
outside every array is reported instead of corrupting anything. Ints, floats,
bools and None (a null pointer) are passed by value. Returns the counters as
a dict: warp instructions by class, global requests and 32-byte sectors,
shared-memory requests and bank-conflict wavefronts, barriers.

Every problem (PTX the simulator does not know, out-of-bounds or misaligned
accesses, shared-memory races between barriers, divergent barriers) raises
``SimulatorError`` naming the CTA, thread, PTX line and instruction.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

import numpy as np

from . import _C

SimulatorError = _C.GPUSimError

__all__ = ["launch", "SimulatorError"]


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
           instruction_limit: int = 20_000_000_000) -> dict:
    """Runs ``kernel_name`` from ``ptx``; returns the counters.

    ``block`` overrides ``num_warps`` with explicit CTA dimensions.
    ``shared_bytes`` is the dynamic shared memory per CTA (Triton's
    ``metadata.shared``).
    """
    if isinstance(ptx, bytes):
        ptx = ptx.decode()
    grid_dims = _dims(grid, "grid")
    if block is None:
        if isinstance(num_warps, bool) or not isinstance(num_warps, int) or not 1 <= num_warps <= 32:
            raise SimulatorError(f"num_warps must be an int in [1, 32], got {num_warps!r}")
        block_dims = [num_warps * 32]
    else:
        block_dims = _dims(block, "block")
    if isinstance(shared_bytes, bool) or not isinstance(shared_bytes, int) or shared_bytes < 0:
        raise SimulatorError(f"shared_bytes must be a non-negative int, got {shared_bytes!r}")
    converted = [_argument(a, i) for i, a in enumerate(args)]
    return _C.gpusim_launch(ptx, kernel_name, grid_dims, block_dims, shared_bytes, converted,
                            race_check, instruction_limit)
