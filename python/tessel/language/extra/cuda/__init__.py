"""`tl.extra.cuda`: NVIDIA's namespace. Its libdevice (on every target); the program's shape as Triton's NVIDIA
utilities give it, `num_warps()` (the num_warps the kernel is compiled with) and `num_threads()` (32 threads per
warp), compile-time values; and what reads NVIDIA's special registers or controls dependent launches, written as PTX
(NVIDIA targets only, as in Triton: elsewhere inline assembly is an error at the call's line): `globaltimer()`
(nanoseconds, int64), `smid()` (the multiprocessor running the program, int32), `gdc_wait()` and
`gdc_launch_dependents()` (sm_90's griddepcontrol); and Triton's fp8e4b15 conversions, on every target:
`convert_custom_float8_sm80(x, dst_ty, fp_downcast_rounding=None)` (and `_sm70`, the same numbers) takes fp8e4b15
codes to fp16 or fp32 exactly, and fp16 or fp32 (first to fp16 toward zero) to fp8e4b15: the magnitude clamped to
1.75 (NaN and infinities too), its 7 lowest fp16 bits rounded half up, the sign kept."""
from . import libdevice
from ...constexpr_function import constexpr_function
from ... import core, target_info
from ....runtime.jit import jit


def _nvidia_only(what: str) -> None:
    # The CPU refuses inline assembly at the line by itself; AMD's assembler would refuse the PTX without one.
    if target_info.current_target().backend == "hip":
        raise ValueError(f"tl.extra.cuda.{what}() reads an NVIDIA special register (PTX): the hip targets have "
                         "no such register")


@core.builtin
def globaltimer(_builder=None):
    """The GPU's global nanosecond timer (%globaltimer), as an int64 scalar."""
    _nvidia_only("globaltimer")
    return core.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=core.int64, is_pure=False,
                                       pack=1, _builder=_builder)


@core.builtin
def smid(_builder=None):
    """The id of the multiprocessor running this program (%smid), as an int32 scalar."""
    _nvidia_only("smid")
    return core.inline_asm_elementwise("mov.u32 $0, %smid;", "=r", [], dtype=core.int32, is_pure=True, pack=1,
                                       _builder=_builder)


def _griddepcontrol(what: str, _builder) -> None:
    target = target_info.current_target()
    if target.backend == "hip":
        raise ValueError(f"tl.extra.cuda.gdc_{what}(): griddepcontrol is NVIDIA's (sm_90 on); the hip targets have "
                         "no dependent launches")
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


@jit
def _e4b15_to_fp16(x):
    # The code's sign, then its 4 exponent and 3 mantissa bits where fp16 keeps them (the same bias, 15).
    bits = x.to(core.uint8, bitcast=True).to(core.uint16)
    return (((bits & 0x80) << 8) | ((bits & 0x7F) << 7)).to(core.float16, bitcast=True)


@jit
def _fp16_to_e4b15(x):
    bits = x.to(core.uint16, bitcast=True)
    magnitude = bits & 0x7FFF
    # At most 1.75 (fp16 0x3F00): positive fp16 values order as their bits, NaN's above every number.
    magnitude = core.where(magnitude < 0x3F00, magnitude, 0x3F00)
    code = ((magnitude + 0x40) >> 7) | ((bits >> 8) & 0x80)
    return code.to(core.uint8).to(core.float8e4b15, bitcast=True)


@jit
def _convert_custom_float8(arg, dst_ty: core.constexpr):
    if arg.dtype == core.float8e4b15:
        up = _e4b15_to_fp16(arg)
        if dst_ty == core.float32:
            return up.to(core.float32)
        core.static_assert(dst_ty == core.float16, "fp8e4b15 converts to fp16 or fp32")
        return up
    core.static_assert(dst_ty == core.float8e4b15, "convert_custom_float8 converts to and from fp8e4b15")
    core.static_assert(arg.dtype == core.float16 or arg.dtype == core.float32,
                       "convert_custom_float8 converts fp16 or fp32 to fp8e4b15")
    if arg.dtype == core.float32:
        return _fp16_to_e4b15(arg.to(core.float16, fp_downcast_rounding="rtz"))
    return _fp16_to_e4b15(arg)


@jit
def convert_custom_float8_sm80(arg, dst_ty: core.constexpr, fp_downcast_rounding: core.constexpr = None):
    return _convert_custom_float8(arg, dst_ty)


@jit
def convert_custom_float8_sm70(arg, dst_ty: core.constexpr, fp_downcast_rounding: core.constexpr = None):
    return _convert_custom_float8(arg, dst_ty)


__all__ = ["libdevice", "num_threads", "num_warps", "globaltimer", "smid", "gdc_wait", "gdc_launch_dependents",
           "convert_custom_float8_sm80", "convert_custom_float8_sm70"]
