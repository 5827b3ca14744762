"""libdevice's functions (`from triton.language.extra import libdevice`, `tl.extra.cuda.libdevice`) on every target:
each name is the tessel.language.math function that computes the same operation, so kernels written against
NVIDIA's libdevice run unchanged on the CPU and on GPUs. The `fast_*` variants, approximations on NVIDIA GPUs, are
the full-precision functions here (within the approximations' tolerance). A libdevice function with no tl.math
counterpart yet is missing here, and using it is an error that names it.
"""
from __future__ import annotations

from typing import Any

from .. import core as _core
from .. import math as _math

# libdevice's names (NVIDIA's, as Triton 3.6 exposes them).
_LIBDEVICE_NAMES = (
    "clz", "popc", "byte_perm", "mulhi", "mul24", "brev", "sad", "abs", "floor", "rcp64h", "rsqrt", "ceil", "trunc",
    "exp2", "saturatef", "fma_rn", "fma_rz", "fma_rd", "fma_ru", "fast_dividef", "div_rn", "div_rz", "div_rd",
    "div_ru", "rcp_rn", "rcp_rz", "rcp_rd", "rcp_ru", "sqrt_rn", "sqrt_rz", "sqrt_rd", "sqrt_ru", "sqrt", "add_rn",
    "add_rz", "add_rd", "add_ru", "mul_rn", "mul_rz", "mul_rd", "mul_ru", "double2float_rn", "double2float_rz",
    "double2float_rd", "double2float_ru", "double2int_rn", "double2int_rz", "double2int_rd", "double2int_ru",
    "double2uint_rn", "double2uint_rz", "double2uint_rd", "double2uint_ru", "int2double_rn", "uint2double_rn",
    "float2int_rn", "float2int_rz", "float2int_rd", "float2int_ru", "float2uint_rn", "float2uint_rz",
    "float2uint_rd", "float2uint_ru", "int2float_rn", "int2float_rz", "int2float_rd", "int2float_ru",
    "uint2float_rn", "uint2float_rz", "uint2float_rd", "uint2float_ru", "hiloint2double", "double2loint",
    "double2hiint", "float2ll_rn", "float2ll_rz", "float2ll_rd", "float2ll_ru", "float2ull_rn", "float2ull_rz",
    "float2ull_rd", "float2ull_ru", "double2ll_rn", "double2ll_rz", "double2ll_rd", "double2ll_ru", "double2ull_rn",
    "double2ull_rz", "double2ull_rd", "double2ull_ru", "ll2float_rn", "ll2float_rz", "ll2float_rd", "ll2float_ru",
    "ull2float_rn", "ull2float_rz", "ull2float_rd", "ull2float_ru", "ll2double_rn", "ll2double_rz", "ll2double_rd",
    "ll2double_ru", "ull2double_rn", "ull2double_rz", "ull2double_rd", "ull2double_ru", "int_as_float",
    "float_as_int", "uint_as_float", "float_as_uint", "longlong_as_double", "double_as_longlong", "fast_sinf",
    "fast_cosf", "fast_log2f", "fast_logf", "fast_expf", "fast_tanf", "fast_exp10f", "fast_log10f", "fast_powf",
    "hadd", "rhadd", "sub_rn", "sub_rz", "sub_rd", "sub_ru", "rsqrt_rn", "ffs", "rint", "llrint", "nearbyint",
    "isnan", "signbit", "copysign", "finitef", "isinf", "nextafter", "sin", "cos", "sinpi", "cospi", "tan", "log2",
    "exp", "exp10", "cosh", "sinh", "tanh", "atan2", "atan", "asin", "acos", "log", "log10", "log1p", "acosh",
    "asinh", "atanh", "expm1", "hypot", "rhypot", "norm3d", "rnorm3d", "norm4d", "rnorm4d", "cbrt", "rcbrt", "j0",
    "j1", "y0", "y1", "yn", "jn", "cyl_bessel_i0", "cyl_bessel_i1", "erf", "erfinv", "erfc", "erfcx", "erfcinv",
    "normcdfinv", "normcdf", "lgamma", "ldexp", "scalbn", "fmod", "remainder", "fma", "pow", "tgamma", "round",
    "llround", "fdim", "ilogb", "logb", "isfinited"
)

# libdevice name -> the tl.math function of the same operation, where the names differ.
_ALIASES = {"fast_expf": "exp", "fast_logf": "log", "fast_log2f": "log2", "fast_sinf": "sin", "fast_cosf": "cos",
            "fast_dividef": "fdiv", "fma_rn": "fma"}

# Float functions of one or two arguments that have no tl.math counterpart: called as libdevice's own
# (__nv_<name>f on fp32, __nv_<name> on fp64) through tl.extern_elementwise, which NVIDIA targets link from libdevice
# and the CPU computes with the C library's function of the same meaning.
_UNARY_EXTERN = ("tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "cbrt", "expm1",
                 "log1p", "log10", "exp10", "erfc", "lgamma", "tgamma", "logb", "j0", "j1", "y0", "y1")
_BINARY_EXTERN = ("atan2", "pow", "hypot", "fmod", "remainder", "fdim", "nextafter")


def _extern(name: str, arity: int) -> Any:
    def call(*args: Any, _builder: Any = None, _semantic: Any = None) -> Any:
        if len(args) != arity:
            raise TypeError(f"libdevice.{name}() takes {arity} argument{'s' if arity > 1 else ''}, got {len(args)}")
        symbols = {(_core.float32,) * arity: (f"__nv_{name}f", _core.float32),
                   (_core.float64,) * arity: (f"__nv_{name}", _core.float64)}
        return _core.extern_elementwise("libdevice", "", list(args), symbols, is_pure=True,
                                        _builder=_builder if _builder is not None else _semantic)
    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"libdevice's {name} on fp32 and fp64 (__nv_{name}f, __nv_{name}), element by element."
    return _core.builtin(call)


_EXTERN = {name: 1 for name in _UNARY_EXTERN} | {name: 2 for name in _BINARY_EXTERN}
__all__ = [name for name in _LIBDEVICE_NAMES if hasattr(_math, _ALIASES.get(name, name)) or name in _EXTERN]
globals().update({name: getattr(_math, _ALIASES.get(name, name)) if hasattr(_math, _ALIASES.get(name, name))
                  else _extern(name, _EXTERN[name]) for name in __all__})


def __getattr__(name: str) -> Any:
    if name in _LIBDEVICE_NAMES:
        raise AttributeError(f"libdevice.{name} is not available in Tessel yet (available: {', '.join(__all__)})")
    raise AttributeError(f"module 'libdevice' has no attribute {name!r}")
