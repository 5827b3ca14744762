"""`tl.target_info`: what a kernel is being compiled for, as constexpr functions (Triton's module of the same name),
so that a kernel can choose code per target at compile time:

    if tl.target_info.cuda_capability_geq(9):
        ...  # Hopper and later

While a kernel is compiled they answer for its target (which is knobs.target at a launch, or the one given to
tessel.compile); elsewhere, for knobs.target. The simulators answer as the GPUs they simulate."""
from __future__ import annotations

import contextlib
from typing import Any, Iterator

from .constexpr_function import constexpr_function

# The targets of the kernels being compiled and their warps per program, innermost last.
_compiling: list[str] = []
_num_warps: list[int] = []


@contextlib.contextmanager
def compiling(target: str, num_warps: int = 4) -> Iterator[None]:
    """While a kernel is generated for `target`, with `num_warps` warps per program."""
    _compiling.append(target)
    _num_warps.append(num_warps)
    try:
        yield
    finally:
        _compiling.pop()
        _num_warps.pop()


def current_num_warps() -> int:
    """The warps of the program being compiled (the compile option num_warps; 4 outside a compilation)."""
    return _num_warps[-1] if _num_warps else 4


def current_target() -> Any:
    """The target as Triton's GPUTarget (backend, arch, warp_size): backend "cuda" with arch the compute capability
    (80, 90) on NVIDIA targets, "cpu" on the CPU."""
    from .. import backends, knobs
    target = _compiling[-1] if _compiling else knobs.target
    return backends.for_target(target).device_target(target)


@constexpr_function
def is_cuda() -> bool:
    return current_target().backend == "cuda"


@constexpr_function
def cuda_capability_geq(major: int, minor: int = 0) -> bool:
    """Whether the target is an NVIDIA GPU of compute capability at least (major, minor)."""
    target = current_target()
    return target.backend == "cuda" and int(target.arch) >= major * 10 + minor


@constexpr_function
def is_hip() -> bool:
    return current_target().backend == "hip"


@constexpr_function
def is_hip_cdna3() -> bool:
    target = current_target()
    return target.backend == "hip" and target.arch == "gfx942"


@constexpr_function
def is_hip_cdna4() -> bool:
    target = current_target()
    return target.backend == "hip" and target.arch == "gfx950"


__all__ = ["current_target"]
