"""Launching kernels: `JITFunction` (binding, specialization, cache) and the driver (argument types, backend)."""
from . import driver
from .jit import JITFunction, jit

__all__ = ["JITFunction", "driver", "jit"]
