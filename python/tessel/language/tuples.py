"""`tl.tuple`: Triton's tuple of kernel values. Inside a kernel a tuple is a plain Python tuple (the code generator
walks tuples when a variable flows out of an if or around a loop), so `tl.tuple(...)` makes one and
`isinstance(x, tl.tuple)` is true of every tuple."""
from __future__ import annotations

import builtins
from typing import Any, Iterable


class _TupleMeta(type):
    def __instancecheck__(cls, value: Any) -> bool:
        return isinstance(value, builtins.tuple)

    def __subclasscheck__(cls, subclass: type) -> bool:
        return issubclass(subclass, builtins.tuple)


class tuple(metaclass=_TupleMeta):  # noqa: A001 (Triton's name)
    """`tl.tuple(iterable)`: a tuple of the values (tensors, Python values, nested tuples). `type` (Triton's
    tuple_type) is accepted and not needed: each element carries its own type."""

    def __new__(cls, args: Iterable[Any] = (), type: Any = None) -> builtins.tuple:  # noqa: A002
        return builtins.tuple(args)
