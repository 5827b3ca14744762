"""Tessel: a Triton-compatible kernel compiler. `import tessel as triton; import tessel.language as tl` runs kernels
written for Triton 3.x."""
from __future__ import annotations

from typing import Any

# The language comes first: its standard library is built with @jit, which the runtime provides; the compiler,
# imported last, uses both.
from . import language
# The settings object (tessel.knobs.cache_dir = ...), in place of the module that defines it.
from .knobs import knobs
from .runtime import JITFunction, jit
from .compiler import CompilationError
# A device assertion (tl.device_assert) failed while a kernel ran.
from ._C import DeviceAssertionError
from .runtime.autotuner import Config, autotune, heuristics
from . import testing

__version__ = "0.1.0"

__all__ = ["CompilationError", "Config", "DeviceAssertionError", "JITFunction", "autotune", "cdiv", "heuristics", "jit",
           "knobs", "language", "next_power_of_2", "testing"]


def cdiv(x: Any, y: Any) -> Any:
    """Ceiling division on the host: the number of blocks of size y that cover x."""
    return (x + y - 1) // y


def next_power_of_2(n: int) -> int:
    """The smallest power of 2 >= n (0 for n <= 0, as in Triton)."""
    n = int(n)
    return 1 << (n - 1).bit_length() if n > 0 else 0
