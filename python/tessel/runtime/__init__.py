"""Launching kernels: `JITFunction` (binding, specialization, cache), the driver (argument types, backend), the
autotuner and the runtime's errors; the names Triton's `triton.runtime` has. (`tessel.runtime.jit` is the module,
as in Triton; the decorator is `tessel.jit`.)"""
from . import driver
from .autotuner import Autotuner, AutotunerError, Config, Heuristics, autotune, heuristics
from .errors import InterpreterError, OutOfResources, PTXASError
from .jit import JITFunction, KernelParam, MockTensor, TensorWrapper, reinterpret

__all__ = ["Autotuner", "AutotunerError", "Config", "Heuristics", "InterpreterError", "JITFunction", "KernelParam",
           "MockTensor", "OutOfResources", "PTXASError", "TensorWrapper", "autotune", "driver", "heuristics",
           "reinterpret"]
