"""Errors of a target's compiler that it locates in a kernel's source, raised as CompilationErrors at that line.

A target reports what only it can refuse (inline assembly the CPU cannot run, a function a library does not have)
as an MLIR diagnostic at the op's location, which the builder took from the kernel's line:
`path/to/file.py:LINE:COL: message`. The launch shows it as any other compile error: the kernel, the line, a caret.
"""
from __future__ import annotations

import linecache
import os
import re

from .errors import CompilationError

_DIAGNOSTIC = re.compile(r"^(?P<file>[^\n]+?):(?P<line>\d+):(?P<col>\d+): (?P<message>[^\n]*)$", re.M)


def located_backend_error(kernel_name: str, error: Exception) -> CompilationError | None:
    """The first diagnostic of `error` at a line of a source file, as a CompilationError there (with the notes that
    follow it); None when no diagnostic is located in a file."""
    text = str(error)
    for found in _DIAGNOSTIC.finditer(text):
        file = found.group("file")
        if not os.path.isfile(file):
            continue
        line = int(found.group("line"))
        source = linecache.getline(file, line).rstrip()
        stripped = source.lstrip()
        col = max(int(found.group("col")) - 1 - (len(source) - len(stripped)), 0)
        message = found.group("message")
        for note in text[found.end():].splitlines()[1:]:
            if not note.startswith("  note: "):
                break
            message += "\n" + note.strip()
        return CompilationError(kernel_name, file, line, col, stripped, message)
    return None
