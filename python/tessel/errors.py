"""The root of Tessel's errors, under Triton's name: `except triton.TritonError` catches every error the compiler
and the runtime raise about a kernel (compilation errors, out-of-resource errors, ...)."""
from __future__ import annotations


class TritonError(Exception):
    """Base class of the errors raised about a kernel: CompilationError (tessel.compiler.errors) and the runtime's
    errors (tessel.runtime.errors)."""
