"""Tuple arguments of a kernel (tuples, named tuples, torch.Size, nested): how the launcher splits one into its
compile-time leaves and its run-time leaves, and how the code generator rebuilds it inside the kernel.

A tuple parameter's part of the specialization key is `(template, tags)`: the template keeps the tuple's types and
its compile-time leaves (None, tl.constexpr values, @jit functions, dtypes, strings and the fields of a named tuple
annotated tl.constexpr); `tags` has one type tag per run-time leaf, in order, as for any argument (an int equal to
1 is specialized, tag "=1", and becomes a compile-time 1 like a top-level one)."""
from __future__ import annotations

import typing
from typing import Any, Iterator

from ..language import core

# Template nodes: ("tuple", type, (children...)), ("const", type, value) or _RUNTIME (a run-time leaf).
_RUNTIME = ("arg",)
CONST_ONE_TAG = "=1"


def _is_compile_time(value: Any) -> bool:
    from ..language.constexpr_function import ConstexprFunction
    from .jit import JITFunction  # jit imports this module
    return value is None or isinstance(value, (core.constexpr, core.dtype, str, JITFunction, ConstexprFunction))


def _constexpr_fields(cls: type) -> frozenset[str]:
    """The fields of a named tuple class annotated tl.constexpr."""
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # unresolvable string annotations: read them as written
        hints = getattr(cls, "__annotations__", {})
    from .jit import _is_constexpr_annotation
    return frozenset(name for name, hint in hints.items() if _is_constexpr_annotation(hint))


def split(name: str, value: tuple) -> tuple[Any, list[tuple[str, Any]]]:
    """(template, [(leaf name, value) for each run-time leaf]) of a tuple argument named `name`."""
    leaves: list[tuple[str, Any]] = []

    def walk(path: str, v: Any, compile_time: bool) -> Any:
        if isinstance(v, tuple):
            fields = getattr(type(v), "_fields", None)
            const_fields = _constexpr_fields(type(v)) if fields else frozenset()
            children = tuple(walk(f"{path}.{fields[i]}" if fields else f"{path}[{i}]", item,
                                  compile_time or bool(fields and fields[i] in const_fields))
                             for i, item in enumerate(v))
            return ("tuple", type(v), children)
        if compile_time or _is_compile_time(v):
            v = core._unwrap(v)
            return ("const", type(v), v)
        leaves.append((path, v))
        return _RUNTIME

    return walk(name, value, False), leaves


def is_tuple_type(arg_type: Any) -> bool:
    """Whether an argument's type (as the launcher hands it to the compiler) is a tuple's `(template, tags)`."""
    return isinstance(arg_type, tuple)


def runtime_types(arg_type: tuple) -> list[str]:
    """The type tags of the leaves passed at run time (those not specialized to 1)."""
    return [tag for tag in arg_type[1] if tag != CONST_ONE_TAG]


def rebuild(arg_type: tuple, values: Iterator[Any]) -> Any:
    """The tuple inside the kernel: its compile-time leaves as they were, each run-time leaf the next of `values`
    (or 1 where it was specialized)."""
    template, tags = arg_type
    tag_iter = iter(tags)

    def build(node: Any) -> Any:
        if node[0] == "arg":
            return 1 if next(tag_iter) == CONST_ONE_TAG else next(values)
        if node[0] == "const":
            return node[2]
        items = [build(child) for child in node[2]]
        cls = node[1]
        if hasattr(cls, "_fields"):
            return cls(*items)
        return tuple(items) if cls is tuple or not _rebuildable(cls) else cls(items)

    return build(template)


def _rebuildable(cls: type) -> bool:
    """Tuple subclasses other than named tuples are rebuilt as themselves when they take an iterable (torch.Size
    does), else as plain tuples."""
    try:
        cls(())
        return True
    except Exception:
        return False


def describe(arg_type: tuple) -> str:
    """A process-independent text of a tuple argument's type, for the on-disk key."""
    from .jit import _stable_repr
    template, tags = arg_type
    tag_iter = iter(tags)

    def text(node: Any) -> str:
        if node[0] == "arg":
            return next(tag_iter)
        if node[0] == "const":
            return f"{node[1].__name__}:{_stable_repr(node[2])}"
        cls = node[1]
        return f"{cls.__module__}.{cls.__qualname__}(" + ",".join(text(c) for c in node[2]) + ")"

    return text(template)
