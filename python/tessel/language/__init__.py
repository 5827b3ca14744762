"""`tessel.language` (imported as `tl`): the kernel DSL, source-compatible with `triton.language`."""
from . import core, math, standard
from .core import (abs, arange, associative_scan, assume, bfloat16, block_type, broadcast_to, cast, ceil, constexpr, cos, div_rn, dot, dtype,
                   erf, exp, exp2, expand_dims, fdiv, float8e4nv, float8e5, float16, float32,
                   float64, floor, full, int1, int8, int16, int32,
                   int64, load, log, log2, max_constancy, max_contiguous, maximum, minimum, multiple_of, num_programs,
                   permute, pointer_type, program_id, range, reduce, reshape, rsqrt, sigmoid, sin, sqrt, sqrt_rn,
                   static_assert, static_print, static_range, store, tensor, trans, uint8, uint16, uint32, uint64,
                   view, where, zeros, zeros_like)
from .core import add, device_assert, device_print, extern_elementwise, inline_asm_elementwise, mul, sub
from .joining import cat, interleave, join, split
from .standard import argmax, argmin, cdiv, cumprod, cumsum, max, min, softmax, sum
from .tensor_descriptor import (load_tensor_descriptor, make_tensor_descriptor, store_tensor_descriptor,
                                tensor_descriptor)

__all__ = [
    "abs", "arange", "argmax", "argmin", "associative_scan", "assume", "bfloat16", "block_type", "broadcast_to", "cast", "cat", "cdiv", "ceil",
    "constexpr", "core", "cos", "cumprod", "cumsum", "div_rn", "dot", "dtype", "erf", "exp", "exp2", "expand_dims", "fdiv", "float8e4nv", "float8e5", "float16",
    "float32", "float64", "floor", "full", "int1", "interleave", "int8", "int16", "int32", "int64", "join", "load", "load_tensor_descriptor",
    "log", "log2", "make_tensor_descriptor", "math",
    "max", "max_constancy", "max_contiguous", "maximum", "min", "minimum", "multiple_of", "num_programs", "permute",
    "pointer_type", "program_id", "range", "reduce", "reshape", "rsqrt", "sigmoid", "sin", "softmax", "split", "sqrt",
    "sqrt_rn", "standard", "static_assert", "static_print", "static_range", "store", "store_tensor_descriptor", "sum",
    "tensor", "tensor_descriptor", "trans",
    "uint8", "uint16", "uint32", "uint64", "view", "where", "zeros", "zeros_like",
]
# Debugging and extension builtins, and tl.add/sub/mul (whose sanitize_overflow debug kernels check).
__all__ += ["add", "device_assert", "device_print", "extern_elementwise", "inline_asm_elementwise", "mul", "sub"]
