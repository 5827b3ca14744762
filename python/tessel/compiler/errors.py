"""Errors of the kernel compiler, shown with the kernel's source line and a caret under the offending column."""
from __future__ import annotations


class CompilationError(Exception):
    """A kernel failed to compile. `str()` gives

        at kernel_name (path/to/file.py:LINE):
            <the source line>
            <caret under the column>
        <the original message>

    The exception that caused it, if any, is kept as `__cause__`."""

    def __init__(self, kernel_name: str, file: str, line: int, col: int, source_line: str,
                 error_message: str) -> None:
        self.kernel_name = kernel_name
        self.file = file
        self.line = line
        self.col = col
        self.source_line = source_line
        self.error_message = error_message
        super().__init__(self._format())

    def _format(self) -> str:
        return (f"at {self.kernel_name} ({self.file}:{self.line}):\n"
                f"    {self.source_line}\n"
                f"    {' ' * self.col}^\n"
                f"{self.error_message}")

    # An exception whose __init__ takes several arguments cannot be unpickled by default; test runners that report
    # across processes pickle it.
    def __reduce__(self) -> tuple:
        return (type(self), (self.kernel_name, self.file, self.line, self.col, self.source_line,
                             self.error_message))


class UnsupportedError(Exception):
    """Raised by the code generator itself (a construct or a use it rejects); its message is shown as is."""
