"""Errors of the runtime, under Triton's names and with its attributes (triton.runtime.errors)."""
from __future__ import annotations

from typing import Any

from ..errors import TritonError


class InterpreterError(TritonError):
    """Raised by Triton's interpreter (TRITON_INTERPRET=1); Tessel compiles every kernel, but code that catches it
    imports it from here."""

    def __init__(self, error_message: str | None = None) -> None:
        super().__init__(error_message)
        self.error_message = error_message

    def __str__(self) -> str:
        return self.error_message or ""


class OutOfResources(TritonError):
    """A kernel needs more of a resource of its target than one program may have: `name` ("shared memory",
    "threads"), `required` and the hardware `limit`."""

    def __init__(self, required: Any, limit: Any, name: str) -> None:
        super().__init__(required, limit, name)
        self.required = required
        self.limit = limit
        self.name = name

    def __str__(self) -> str:
        return (f"out of resource: {self.name}, Required: {self.required}, Hardware limit: {self.limit}. "
                "Reducing block sizes or `num_stages` may help.")

    def __reduce__(self) -> tuple:
        return (type(self), (self.required, self.limit, self.name))


class PTXASError(TritonError):
    """ptxas rejected the PTX of a kernel."""

    def __init__(self, error_message: str | None = None) -> None:
        super().__init__(error_message)
        self.error_message = error_message

    def __str__(self) -> str:
        return f"PTXAS error: {self.error_message or ''}"


class AutotunerError(TritonError):
    """An autotuning run could not choose a config."""

    def __init__(self, error_message: str | None = None) -> None:
        super().__init__(error_message)
        self.error_message = error_message

    def __str__(self) -> str:
        return f"Autotuner error: {self.error_message or ''}"


class LaunchOptionError(TritonError, ValueError, AssertionError):
    """A launch or compile option out of its range (num_warps not a power of 2): Triton's options assert it
    (AssertionError, with its words), and it is a ValueError too."""
