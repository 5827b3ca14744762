"""`@tessel.constexpr_function` (Triton's `triton.constexpr_function`): a plain Python function that kernels may call
on compile-time values; it runs while the kernel is compiled and its result is a compile-time value. Its source is
part of the keys of the kernels that call it, so that editing it recompiles them."""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

from . import core


class ConstexprFunction:
    """A Python function callable from kernels at compile time (and from host code as itself)."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # tl.constexpr wrappers (host code, constexpr globals) are unwrapped: the function sees plain values.
        return self.fn(*(core._unwrap(a) for a in args), **{k: core._unwrap(v) for k, v in kwargs.items()})

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        # A constexpr function defined in a class is a method of its instances.
        return self if obj is None else functools.partial(self.__call__, obj)

    @functools.cached_property
    def src(self) -> str:
        try:
            return inspect.getsource(self.fn)
        except (OSError, TypeError):
            code = self.fn.__code__
            return f"{self.fn.__module__}.{self.fn.__qualname__}:{code.co_code.hex()}:{code.co_consts!r}"

    def __repr__(self) -> str:
        return f"ConstexprFunction({self.fn.__module__}:{self.fn.__qualname__})"


def constexpr_function(fn: Callable[..., Any]) -> ConstexprFunction:
    """Makes `fn` callable from kernels on compile-time values (tl.constexpr parameters, literals, shapes, dtypes);
    called with a tensor it is a compile error at the call."""
    return ConstexprFunction(fn)


def must_use_result(fn: Any, message: Any = True) -> Any:
    """Marks a function (a @jit function or a builtin) whose result a kernel must use: a call of it as a statement
    is a compile error, with `message` when it is a string. `@must_use_result("why")` gives the message."""
    if isinstance(fn, str):
        return lambda f: must_use_result(f, fn)
    fn._must_use_result = message
    return fn
