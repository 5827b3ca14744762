"""`tl.extra.cuda`: NVIDIA's namespace (its libdevice, on every target), and the program's shape as Triton's
NVIDIA utilities give it: `num_warps()` (the num_warps the kernel is compiled with) and `num_threads()` (32 threads
per warp), compile-time values."""
from . import libdevice
from ...constexpr_function import constexpr_function
from ... import target_info


@constexpr_function
def num_warps() -> int:
    """The warps of each program of the kernel being compiled."""
    return target_info.current_num_warps()


@constexpr_function
def num_threads() -> int:
    """The threads of each program: 32 per warp, as on NVIDIA's GPUs."""
    return target_info.current_num_warps() * 32


__all__ = ["libdevice", "num_threads", "num_warps"]
