"""`tl.extra.cuda`: NVIDIA's namespace. Its libdevice (on every target); the program's shape as Triton's NVIDIA
utilities give it, `num_warps()` (the num_warps the kernel is compiled with) and `num_threads()` (32 threads per
warp), compile-time values; and what reads NVIDIA's special registers or controls dependent launches, written as PTX
(NVIDIA targets only, as in Triton: elsewhere inline assembly is an error at the call's line): `globaltimer()`
(nanoseconds, int64), `smid()` (the multiprocessor running the program, int32), `gdc_wait()` and
`gdc_launch_dependents()` (sm_90's griddepcontrol)."""
from . import libdevice
from ...constexpr_function import constexpr_function
from ... import core, target_info


@core.builtin
def globaltimer(_builder=None):
    """The GPU's global nanosecond timer (%globaltimer), as an int64 scalar."""
    return core.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=core.int64, is_pure=False,
                                       pack=1, _builder=_builder)


@core.builtin
def smid(_builder=None):
    """The id of the multiprocessor running this program (%smid), as an int32 scalar."""
    return core.inline_asm_elementwise("mov.u32 $0, %smid;", "=r", [], dtype=core.int32, is_pure=True, pack=1,
                                       _builder=_builder)


def _griddepcontrol(what: str, _builder) -> None:
    target = target_info.current_target()
    if target.backend == "cuda" and int(target.arch) < 90:
        raise ValueError(f"tl.extra.cuda.gdc_{what}(): griddepcontrol needs sm_90 or later; the target is "
                         f"sm_{target.arch}")
    core.inline_asm_elementwise(f"griddepcontrol.{what}; // $0 unused", "=r", [], dtype=core.int32, is_pure=False,
                                pack=1, _builder=_builder)


@core.builtin
def gdc_wait(_builder=None):
    """Waits until the grids this one depends on (programmatic dependent launch, sm_90) have completed and their
    memory is visible; without a dependent launch it returns at once."""
    _griddepcontrol("wait", _builder)


@core.builtin
def gdc_launch_dependents(_builder=None):
    """Lets the grid launched to depend on this one start once every program has called this or ended (a hint;
    sm_90)."""
    _griddepcontrol("launch_dependents", _builder)


@constexpr_function
def num_warps() -> int:
    """The warps of each program of the kernel being compiled."""
    return target_info.current_num_warps()


@constexpr_function
def num_threads() -> int:
    """The threads of each program: 32 per warp, as on NVIDIA's GPUs."""
    return target_info.current_num_warps() * 32


__all__ = ["libdevice", "num_threads", "num_warps", "globaltimer", "smid", "gdc_wait", "gdc_launch_dependents"]
