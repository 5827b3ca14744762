"""Backend descriptors: what the Python side knows of each backend (its devices, its compile options, the target of
this machine), one subpackage per backend. The compiler side of a backend is C++ behind the target seam
(`tessel._C.compile(builder, target, options)`); adding a backend is a folder here, one in the C++ tree, and one
registration on each side.
"""
from __future__ import annotations

from typing import Any

from .. import _C
from .amd import HipBackend, HipSimBackend
from .cpu import CPUBackend
from .nvidia import CudaBackend, SimBackend

# Every backend descriptor of this build, by backend name (the part of a target name before ':').
BACKENDS: dict[str, Any] = {backend.name: backend for backend in (CPUBackend(), CudaBackend(), SimBackend(), HipBackend())
                            if backend.name in _C.available_backends()}


def for_target(target: str) -> Any:
    """The descriptor of the backend that compiles for `target` ("cpu", "cpu:x86-64-v3", "cuda:90a", ...)."""
    canonical = _C.parse_target(target)  # raises BackendError for unknown or unavailable targets
    backend, _, arch = canonical.partition(":")
    if backend == "sim" and arch.startswith("gfx"):
        return _HIP_SIM  # the simulator running AMD code
    return BACKENDS[backend]


_HIP_SIM = HipSimBackend()
