"""Tessel: a Triton-compatible kernel compiler. `import tessel as triton; import tessel.language as tl` runs kernels
written for Triton 3.x."""
from __future__ import annotations

from typing import Any

# The language comes first: its standard library is built with @jit, which the runtime provides; the compiler,
# imported last, uses both.
from . import language
# The settings object (tessel.knobs.cache_dir = ...), in place of the module that defines it.
from .knobs import knobs
from .errors import TritonError
from .runtime import JITFunction
from .runtime.errors import InterpreterError, OutOfResources
from .runtime.jit import KernelParam, MockTensor, TensorWrapper, jit, reinterpret
from .runtime.allocation import set_allocator
from .compiler import CompilationError, compile
from .language.constexpr_function import constexpr_function, must_use_result
# A device assertion (tl.device_assert) failed while a kernel ran.
from ._C import DeviceAssertionError
from .runtime.autotuner import Config, autotune, heuristics
from . import runtime, testing

__version__ = "0.1.0"

__all__ = ["CompilationError", "Config", "DeviceAssertionError", "InterpreterError", "JITFunction", "KernelParam",
           "MockTensor", "OutOfResources", "TensorWrapper", "TritonError", "autotune", "cdiv", "compile",
           "constexpr_function", "heuristics", "jit", "knobs", "language", "must_use_result", "next_power_of_2",
           "reinterpret", "runtime", "set_allocator", "testing"]


def cdiv(x: Any, y: Any) -> Any:
    """Ceiling division on the host: the number of blocks of size y that cover x."""
    return (x + y - 1) // y


def next_power_of_2(n: int) -> int:
    """The smallest power of 2 >= n (0 for n <= 0, as in Triton)."""
    n = int(n)
    return 1 << (n - 1).bit_length() if n > 0 else 0
