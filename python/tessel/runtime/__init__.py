"""Launching kernels: `JITFunction` (binding, specialization, cache) and the driver (argument types, backend)."""
from . import driver
from .errors import InterpreterError, OutOfResources, PTXASError
from .jit import JITFunction, jit
from .autotuner import AutotunerError

__all__ = ["AutotunerError", "InterpreterError", "JITFunction", "OutOfResources", "PTXASError", "driver", "jit"]
