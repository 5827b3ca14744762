"""`triton.set_allocator(allocator)`: the allocator of global-memory scratch a kernel may need at launch.

In Triton, kernels that make tensor descriptors in the kernel (tl.make_tensor_descriptor) or that are profiled
call `allocator(size, alignment, stream)` before their launch for a workspace of global memory. Tessel's kernels
need none: a descriptor made in a kernel is a plain base, shape and strides on every target (the TMA descriptors
of sm_90 kernels are built on the host from the kernel's arguments). The allocator is kept and checked, so that
programs written for Triton run unchanged; it is not called."""
from __future__ import annotations

from contextvars import ContextVar
from typing import Any, Callable, Optional

Allocator = Callable[[int, int, Optional[int]], Any]

_allocator: ContextVar[Optional[Allocator]] = ContextVar("_allocator", default=None)


def set_allocator(allocator: Allocator | None) -> None:
    """Sets the allocator of launch-time scratch for this context (see the module's docstring): a callable
    `(size, alignment, stream) -> buffer with data_ptr()`, or None."""
    if allocator is not None and not callable(allocator):
        raise TypeError(f"set_allocator: expected a callable (size, alignment, stream) -> buffer, got {allocator!r}")
    _allocator.set(allocator)


def get_allocator() -> Allocator | None:
    """The allocator set by set_allocator in this context, or None."""
    return _allocator.get()
