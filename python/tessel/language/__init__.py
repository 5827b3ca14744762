"""`tessel.language` (imported as `tl`): the kernel DSL, source-compatible with `triton.language`."""
from . import core, extra, math, random, standard, target_info
from .core import (TRITON_MAX_TENSOR_NUMEL, PropagateNan, abs, add, arange, associative_scan, assume, atomic_add,
                   atomic_and, atomic_cas, atomic_max, atomic_min, atomic_or, atomic_xchg, atomic_xor, bfloat16,
                   block_type, broadcast, broadcast_to, cast, ceil, clamp, condition, const, constexpr, constexpr_type,
                   cos, debug_barrier, device_assert, device_print, div_rn, dot, dtype, erf, exp, exp2, expand_dims,
                   extern_elementwise, fdiv, float16, float32, float64, float8e4b8, float8e4b15, float8e4nv, float8e5,
                   float8e5b16, floor, fma, full, gather, inline_asm_elementwise, int1, int16, int32, int64, int8, load,
                   log, log2, map_elementwise, max_constancy, max_contiguous, maximum, minimum, mul, multiple_of,
                   num_programs, permute, pi32_t, pointer_type, program_id, range, reduce, reshape, rsqrt, sigmoid, sin,
                   sqrt, sqrt_rn, static_assert, static_print, static_range, store, sub, tensor, to_tensor, trans,
                   uint16, uint32, uint64, uint8, view, where, zeros, zeros_like)
from .block_pointer import advance, make_block_ptr
from .dot_scaled import dot_scaled
from .joining import cat, interleave, join, split
from .random import (pair_uniform_to_normal, philox, philox_impl, rand, rand4x, randint, randint4x, randn, randn4x,
                     uint_to_uniform_float)
from .sorting import bitonic_merge, sort, topk
from .standard import (argmax, argmin, cdiv, cumprod, cumsum, flip, histogram, max, min, ravel, reduce_or, softmax, sum,
                       swizzle2d, umulhi, xor_sum)
from .tensor_descriptor import (load_tensor_descriptor, make_tensor_descriptor, store_tensor_descriptor,
                                tensor_descriptor)
from .tuples import tuple

__all__ = [
    "abs", "add", "advance", "arange", "argmax", "argmin", "associative_scan", "assume", "atomic_add", "atomic_and",
    "atomic_cas", "atomic_max", "atomic_min", "atomic_or", "atomic_xchg", "atomic_xor", "bfloat16", "bitonic_merge",
    "block_type", "broadcast", "broadcast_to", "cast", "cat", "cdiv", "ceil", "clamp", "condition", "const",
    "constexpr", "constexpr_type", "core", "cos", "cumprod", "cumsum", "debug_barrier", "device_assert", "device_print",
    "div_rn", "dot", "dot_scaled", "dtype", "erf", "exp", "exp2", "expand_dims", "extern_elementwise", "extra", "fdiv",
    "flip", "float16", "float32", "float64", "float8e4b15", "float8e4b8", "float8e4nv", "float8e5", "float8e5b16",
    "floor", "fma", "full", "gather", "histogram", "inline_asm_elementwise", "int1", "int16", "int32", "int64", "int8",
    "interleave", "join", "load", "load_tensor_descriptor", "log", "log2", "make_block_ptr", "make_tensor_descriptor",
    "map_elementwise", "math", "max", "max_constancy", "max_contiguous", "maximum", "min", "minimum", "mul",
    "multiple_of", "num_programs", "pair_uniform_to_normal", "permute", "philox", "philox_impl", "pi32_t",
    "pointer_type", "program_id", "PropagateNan", "rand", "rand4x", "randint", "randint4x", "randn", "randn4x",
    "random", "range", "ravel", "reduce", "reduce_or", "reshape", "rsqrt", "sigmoid", "sin", "softmax", "sort", "split",
    "sqrt", "sqrt_rn", "standard", "static_assert", "static_print", "static_range", "store", "store_tensor_descriptor",
    "sub", "sum", "swizzle2d", "target_info", "tensor", "tensor_descriptor", "to_tensor", "topk", "trans",
    "TRITON_MAX_TENSOR_NUMEL", "tuple", "uint16", "uint32", "uint64", "uint8", "uint_to_uniform_float", "umulhi",
    "view", "where", "xor_sum", "zeros", "zeros_like",
]
# Debugging and extension builtins, and tl.add/sub/mul (whose sanitize_overflow debug kernels check).
__all__ += ["add", "device_assert", "device_print", "extern_elementwise", "inline_asm_elementwise", "mul", "sub"]
