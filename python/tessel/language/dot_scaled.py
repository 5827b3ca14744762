"""`tl.dot_scaled`: the matrix product of blocks in microscaling formats (OCP MX: e2m1, e4m3, e5m2 elements with e8m0
scales, one per 32 elements along K; e4m3 scales, one per 16, for nvfp4; bf16 and fp16 without scales), as Triton
3.6 defines it. No target here has scaled matrix units, so it is decomposed as Triton decomposes it on Hopper: each
operand is widened to bf16, or to fp16 where either operand is fp16 (exact for the 4- and 8-bit formats),
multiplied by its scales, and an ordinary bf16 or fp16 `tl.dot` accumulates in fp32. Written in the DSL, so every target runs it as it runs those ops.
"""
from __future__ import annotations

from ..runtime.jit import jit
from . import core
from .joining import join

_FORMATS = ("e2m1", "e4m3", "e5m2", "bf16", "fp16")
# The element type a format's values are stored as (e2m1: two per uint8).
_STORAGE = {"e4m3": (core.float8e4nv, core.uint8), "e5m2": (core.float8e5, core.uint8),
            "bf16": (core.bfloat16, core.uint16), "fp16": (core.float16, core.uint16)}


def _check_format(fmt, operand: core.tensor, what: str) -> str:
    fmt = core._unwrap(fmt)
    if fmt not in _FORMATS:
        raise ValueError(f"NYI: {what}_format {fmt}")
    dt = operand.dtype
    if fmt == "e2m1":
        if dt != core.uint8:
            raise ValueError(f"e2m1 format must be packed as uint8. Got {dt}")
    elif dt not in _STORAGE[fmt]:
        raise ValueError(f"Unexpected dtype for {fmt}. Got {dt}")
    return fmt


def _scale_group(scale) -> int:
    """Elements along K per scale: 32 for e8m0 (uint8) scales, 16 for e4m3 ones (nvfp4)."""
    return 16 if scale.dtype == core.float8e4nv else 32


def _check_operands(lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, acc, lhs_k_pack, rhs_k_pack,
                    out_dtype) -> bool:
    """Triton's checks; returns whether the lhs is packed (its K doubled)."""
    out_dtype = core._unwrap(out_dtype)
    if out_dtype != core.float32:
        raise ValueError("Only float32 is supported for out_dtype at the moment")
    if not len(lhs.shape) == len(rhs.shape) in (2, 3):
        raise ValueError(f"Both inputs must be either 2D or 3D; (lhs: {lhs.shape} vs rhs: {rhs.shape})")
    if len(lhs.shape) == 3 and lhs.shape[0] != rhs.shape[0]:
        raise ValueError(f"3D inputs must have the same batch size; (lhs: {lhs.shape} vs rhs: {rhs.shape})")
    lf = _check_format(lhs_format, lhs, "lhs")
    rf = _check_format(rhs_format, rhs, "rhs")
    if not core._unwrap(lhs_k_pack) and lf != "e2m1" or not core._unwrap(rhs_k_pack) and rf != "e2m1":
        raise ValueError("only mxfp4 inputs can be packed along a dimension different than K")
    return True


def _k_of(x: core.tensor, fmt: str, k_pack: bool, k_axis: int) -> int:
    k = x.shape[k_axis]
    return 2 * k if fmt == "e2m1" and k_pack else k


def _mn_of(x: core.tensor, fmt: str, k_pack: bool, mn_axis: int) -> int:
    n = x.shape[mn_axis]
    return 2 * n if fmt == "e2m1" and not k_pack else n


def _verify_shapes(lhs, lhs_scale, lhs_format, lhs_k_pack, rhs, rhs_scale, rhs_format, rhs_k_pack, acc) -> None:
    lf, rf = core._unwrap(lhs_format), core._unwrap(rhs_format)
    lk, rk = core._unwrap(lhs_k_pack), core._unwrap(rhs_k_pack)
    K = _k_of(lhs, lf, lk, -1)
    if _k_of(rhs, rf, rk, -2) != K:
        raise ValueError(f"Reduction dimension should pack the same number of elements; "
                         f"(lhs: {lhs.shape} vs rhs: {rhs.shape})")
    M, N = _mn_of(lhs, lf, lk, -2), _mn_of(rhs, rf, rk, -1)
    batch = list(lhs.shape[:-2])
    for scale, rows, name in ((core._unwrap(lhs_scale), M, "lhs"), (core._unwrap(rhs_scale), N, "rhs")):
        if scale is None:
            continue
        want = [rows, K // _scale_group(scale)]
        # 3-D operands: one scale block for every batch (Triton's shape) or one per batch.
        if list(scale.shape) != want and list(scale.shape) != batch + want:
            raise ValueError(f"{name}_scale must be a tensor of shape {want}"
                             + (f" or {batch + want}" if batch else "") + f". Got {scale.shape}")
    acc = core._unwrap(acc)
    if acc is not None and (list(acc.shape) != batch + [M, N] or acc.dtype != core.float32):
        raise ValueError(f"acc must be a float32 block of shape {batch + [M, N]}, got {core._describe(acc)}")


@jit
def _e2m1_to_bf16(nibbles):
    """4-bit e2m1 codes (s e e m; exponent bias 1) as bf16: 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives."""
    code = nibbles.to(core.int16)
    magnitude = code & 7
    # Normal values (exponent field e >= 1): 2^(e - 1) * (1 + m / 2): bf16 exponent e - 1 + 127, top mantissa bit m.
    normal = (((magnitude >> 1) + 126) << 7) | ((magnitude & 1) << 6)
    bits = core.where(magnitude >= 2, normal, core.where(magnitude == 1, 0x3F00, 0).to(core.int16))
    bits = bits | ((code & 8) << 12)
    return bits.to(core.bfloat16, bitcast=True)


@jit
def _widen(x, FORMAT: core.constexpr, PACKED_AXIS: core.constexpr, COMPUTE: core.constexpr):
    """The operand's values as COMPUTE (bf16 or fp16: every e2m1, e4m3 and e5m2 value is exact in both); packed e2m1
    codes unpacked along PACKED_AXIS (0 or 1), low nibble first."""
    if FORMAT == "e2m1":
        lo = _e2m1_to_bf16(x & 15).to(COMPUTE)
        hi = _e2m1_to_bf16(x >> 4).to(COMPUTE)
        pairs = join(lo, hi)  # [R, C, 2]
        if PACKED_AXIS == 1:
            return core.reshape(pairs, [x.shape[0], 2 * x.shape[1]])
        else:
            return core.reshape(core.permute(pairs, 0, 2, 1), [2 * x.shape[0], x.shape[1]])
    elif FORMAT == "e4m3":
        return x.to(core.float8e4nv, bitcast=True).to(COMPUTE)
    elif FORMAT == "e5m2":
        return x.to(core.float8e5, bitcast=True).to(COMPUTE)
    elif FORMAT == "bf16":
        return x.to(core.bfloat16, bitcast=True).to(COMPUTE)
    else:
        return x.to(core.float16, bitcast=True).to(COMPUTE)


@jit
def _widen_any(x, FORMAT: core.constexpr, PACKED_AXIS: core.constexpr, COMPUTE: core.constexpr):
    """_widen of a 2-D operand, or of a 3-D one as its batches' rows stacked (packing never crosses a batch: along
    columns each row unpacks alone, along rows each batch's rows stay together)."""
    if len(x.shape) == 2:
        return _widen(x, FORMAT, PACKED_AXIS, COMPUTE)
    else:
        wide = _widen(core.reshape(x, [x.shape[0] * x.shape[1], x.shape[2]]), FORMAT, PACKED_AXIS, COMPUTE)
        return core.reshape(wide, [x.shape[0], wide.shape[0] // x.shape[0], wide.shape[1]])


@jit
def _scale_values(scale):
    """Scales as fp32 factors: e8m0 codes s are 2^(s - 127) (0 is 2^-127, 255 is NaN); e4m3 scales are values."""
    if scale.dtype == core.float8e4nv:
        return scale.to(core.float32)
    else:
        code = scale.to(core.int32)
        bits = core.where(code == 0, 0x00400000, code << 23)  # 2^-127 is an fp32 subnormal
        factor = bits.to(core.float32, bitcast=True)
        return core.where(code == 255, float("nan"), factor)


@jit
def _scale_rows(x, scale, COMPUTE: core.constexpr):
    """x [R, K] times scale [R, K / group], one factor per group of consecutive elements of a row, rounded to
    COMPUTE."""
    GROUP: core.constexpr = x.shape[1] // scale.shape[1]
    grouped = core.reshape(x.to(core.float32), [x.shape[0], x.shape[1] // GROUP, GROUP])
    scaled = grouped * core.expand_dims(_scale_values(scale), 2)
    return core.reshape(scaled, [x.shape[0], x.shape[1]]).to(COMPUTE)


@jit
def _scale_rows_any(x, scale, COMPUTE: core.constexpr):
    """_scale_rows of x [R, K] or [B, R, K], the scales [R, K / group] (shared by the batches) or [B, R, K / group]."""
    if len(x.shape) == 2:
        return _scale_rows(x, scale, COMPUTE)
    else:
        if len(scale.shape) == 2:
            scale = core.broadcast_to(core.expand_dims(scale, 0), [x.shape[0], scale.shape[0], scale.shape[1]])
        rows: core.constexpr = x.shape[0] * x.shape[1]
        scaled = _scale_rows(core.reshape(x, [rows, x.shape[2]]), core.reshape(scale, [rows, scale.shape[2]]),
                             COMPUTE)
        return core.reshape(scaled, [x.shape[0], x.shape[1], x.shape[2]])


@jit
def _transpose_last(x):
    if len(x.shape) == 2:
        return core.trans(x)
    else:
        return core.permute(x, 0, 2, 1)


@jit
def _dot_scaled(lhs, lhs_scale, lhs_format: core.constexpr, rhs, rhs_scale, rhs_format: core.constexpr, acc,
                lhs_k_pack: core.constexpr, rhs_k_pack: core.constexpr, COMPUTE: core.constexpr):
    # Packed along K: the lhs' last dimension, the rhs' next to last; otherwise along M or N.
    a = _widen_any(lhs, lhs_format, 1 if lhs_k_pack else 0, COMPUTE)  # [(B,) M, K]
    b = _widen_any(rhs, rhs_format, 0 if rhs_k_pack else 1, COMPUTE)  # [(B,) K, N]
    if lhs_scale is not None:
        a = _scale_rows_any(a, lhs_scale, COMPUTE)
    if rhs_scale is not None:
        # The rhs scales are given [(B,) N, K / group]: scale rhs^T's rows.
        b = _transpose_last(_scale_rows_any(_transpose_last(b), rhs_scale, COMPUTE))
    if acc is None:
        return core.dot(a, b, out_dtype=core.float32)
    else:
        return core.dot(a, b, acc, out_dtype=core.float32)


@core.builtin
def dot_scaled(lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, acc=None, fast_math=False, lhs_k_pack=True,
               rhs_k_pack=True, out_dtype=core.float32, _builder=None, _generator=None):
    """Triton's tl.dot_scaled (see the module's docstring). `fast_math` changes nothing here: NaN scales give NaN
    either way."""
    lhs = core._tensor_arg(lhs, "tl.dot_scaled(): lhs")
    rhs = core._tensor_arg(rhs, "tl.dot_scaled(): rhs")
    _check_operands(lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, acc, lhs_k_pack, rhs_k_pack,
                    out_dtype)
    _verify_shapes(lhs, lhs_scale, lhs_format, lhs_k_pack, rhs, rhs_scale, rhs_format, rhs_k_pack, acc)
    # Triton's decomposition multiplies in fp16 where an operand is fp16, else in bf16.
    compute = core.float16 if "fp16" in (core._unwrap(lhs_format), core._unwrap(rhs_format)) else core.bfloat16
    return _generator.call_jit_function(
        _dot_scaled, [lhs, core._unwrap(lhs_scale), core._unwrap(lhs_format), rhs, core._unwrap(rhs_scale),
                      core._unwrap(rhs_format), core._unwrap(acc), bool(core._unwrap(lhs_k_pack)),
                      bool(core._unwrap(rhs_k_pack)), compute], {})
