"""`tl.math`: the math functions under Triton's `triton.language.math` names (the same objects as `tl.exp` ...)."""
from .core import (abs, ceil, cos, div_rn, erf, exp, exp2, fdiv, floor, fma, log, log2, maximum, minimum, rsqrt,
                   sigmoid, sin, sqrt, sqrt_rn)
from .standard import cdiv, softmax, umulhi

__all__ = ["abs", "cdiv", "ceil", "cos", "div_rn", "erf", "exp", "exp2", "fdiv", "floor", "fma", "log", "log2",
           "maximum", "minimum", "rsqrt", "sigmoid", "sin", "softmax", "sqrt", "sqrt_rn", "umulhi"]
