"""Errors of the kernel compiler, shown with the kernel's source line and a caret under the offending column.

The classes are Triton's (triton.compiler.errors): CompilationError derives from TritonError, a failed
tl.static_assert is a CompileTimeAssertionFailure and a Python construct kernels cannot use is an
UnsupportedLanguageConstruct, both CompilationErrors."""
from __future__ import annotations

from ..errors import TritonError


class CompilationError(TritonError):
    """A kernel failed to compile. `str()` gives

        at kernel_name (path/to/file.py:LINE):
            <the source line>
            <caret under the column>
        <the original message>

    The exception that caused it, if any, is kept as `__cause__` (Triton's tests read the builder's message there).
    `message` is the whole text, as in Triton."""

    def __init__(self, kernel_name: str, file: str, line: int, col: int, source_line: str,
                 error_message: str) -> None:
        self.kernel_name = kernel_name
        self.file = file
        self.line = line
        self.col = col
        self.source_line = source_line
        self.error_message = error_message
        self.message = self._format()
        super().__init__(self.message)

    def _format(self) -> str:
        return (f"at {self.kernel_name} ({self.file}:{self.line}):\n"
                f"    {self.source_line}\n"
                f"    {' ' * self.col}^\n"
                f"{self.error_message}")

    def __str__(self) -> str:
        return self.message

    # An exception whose __init__ takes several arguments cannot be unpickled by default; test runners that report
    # across processes pickle it.
    def __reduce__(self) -> tuple:
        return (type(self), (self.kernel_name, self.file, self.line, self.col, self.source_line,
                             self.error_message))


class CompileTimeAssertionFailure(CompilationError):
    """A `tl.static_assert` (or a compile-time `assert`) failed; its message is the assertion's. It has no
    `__cause__`, as in Triton."""


class UnsupportedLanguageConstruct(CompilationError):
    """The kernel uses a Python construct kernels do not support (try/except, lambda, a comprehension ...)."""


class UnsupportedError(Exception):
    """Raised by the code generator itself (a construct or a use it rejects); its message is shown as is. At the
    kernel's line it becomes an UnsupportedLanguageConstruct."""

