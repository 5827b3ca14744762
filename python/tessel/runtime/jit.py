"""`@jit` and `JITFunction`: source capture, argument binding, specialization, the in-memory kernel cache, launch."""
from __future__ import annotations

import ast
import functools
import hashlib
import inspect
import os
import pathlib
import sys
import textwrap
import types
from typing import Any, Callable, Sequence

from .. import _C
from ..knobs import knobs
from ..language import core
from . import driver

# Launch options of Triton's `kernel[grid](..., num_warps=4)`: accepted so GPU code runs unchanged; the CPU backend
# has no warps, pipeline stages or clusters.
_LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas")


def _is_constexpr_annotation(annotation: Any) -> bool:
    if annotation is core.constexpr:
        return True
    # String annotations come from `from __future__ import annotations` or quoting: "tl.constexpr", "constexpr".
    return isinstance(annotation, str) and annotation.strip().split(".")[-1] == "constexpr"


class JITFunction:
    """A function compiled by tessel: a kernel when launched with `fn[grid](...)`, inlined when called from another
    @jit function."""

    __name__: str  # set from the function by functools.update_wrapper

    def __init__(self, fn: Callable[..., Any], do_not_specialize: Sequence[Any] = (),
                 do_not_specialize_on_alignment: Sequence[Any] = (), debug: bool | None = None,
                 noinline: bool = False) -> None:
        # debug and noinline are Triton's options, accepted for source compatibility: every call is inlined.
        self.fn = fn
        functools.update_wrapper(self, fn)
        self.signature = inspect.signature(fn)
        self.arg_names = list(self.signature.parameters)
        for param in self.signature.parameters.values():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise TypeError(f"@jit function {fn.__name__} cannot take *{param.name} or **{param.name}")
        self.constexpr_names = frozenset(name for name, param in self.signature.parameters.items()
                                         if _is_constexpr_annotation(param.annotation))
        # Specialization opt-outs, by name or position: no value specialization at all, or no alignment marks.
        self.do_not_specialize = self._parameter_names(do_not_specialize, "do_not_specialize")
        self.do_not_specialize_on_alignment = self.do_not_specialize | self._parameter_names(
            do_not_specialize_on_alignment, "do_not_specialize_on_alignment")
        # Launches bind arguments by hand (inspect's bind costs microseconds per launch) when every parameter is a
        # plain positional-or-keyword one; other signatures go through inspect.
        self._plain_signature = all(p.kind == p.POSITIONAL_OR_KEYWORD for p in self.signature.parameters.values())
        self._defaults = {name: p.default for name, p in self.signature.parameters.items()
                          if p.default is not p.empty}
        try:
            lines, self.first_line = inspect.getsourcelines(fn)
        except (OSError, TypeError) as e:
            raise OSError(f"@jit needs the source of {fn.__qualname__} (define it in a file): {e}") from e
        self.file = os.path.abspath(inspect.getsourcefile(fn) or fn.__code__.co_filename)
        # Columns in the parsed (dedented) source are shifted by the indentation of the function in its file.
        self.indent = len(lines[0]) - len(lines[0].lstrip())
        self.src = textwrap.dedent("".join(lines))
        self.src_lines = self.src.splitlines()
        tree = ast.parse(self.src)
        if not tree.body or not isinstance(tree.body[0], ast.FunctionDef):
            raise TypeError(f"@jit applies to a plain `def` function, not to {fn.__qualname__}")
        self.definition: ast.FunctionDef = tree.body[0]
        self.cache: dict[Any, Any] = {}
        self._deps: _Dependencies | None = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{self.__name__} is a @tessel.jit function: launch it with {self.__name__}[grid](...) "
                           "or call it from another @tessel.jit function")

    def __getitem__(self, grid: Any) -> Callable[..., Any]:
        return lambda *args, **kwargs: self.run(*args, grid=grid, warmup=False, **kwargs)

    def __repr__(self) -> str:
        return f"JITFunction({self.fn.__module__}:{self.fn.__qualname__})"

    def warmup(self, *args: Any, grid: Any = (1,), **kwargs: Any) -> Any:
        """Compiles for these arguments without running. A dtype (tl.float32, torch.float16, numpy.dtype) may stand
        for an array of that element type."""
        names = self.arg_names
        args = tuple(_DtypeOnlyArray(a) if _is_dtype(a) and i < len(names) and names[i] not in self.constexpr_names
                     else a for i, a in enumerate(args))
        kwargs = {k: _DtypeOnlyArray(v) if _is_dtype(v) and k not in self.constexpr_names else v
                  for k, v in kwargs.items()}
        return self.run(*args, grid=grid, warmup=True, **kwargs)

    def run(self, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
        """Binds the arguments, compiles on a cache miss and, unless `warmup`, launches the grid. Returns the
        compiled kernel (`.asm` holds every stage's text)."""
        if kwargs:
            for option in _LAUNCH_OPTIONS:
                if option not in self.signature.parameters:
                    kwargs.pop(option, None)
        values = self._bind(args, kwargs)
        arg_types: list[str] = []
        arg_values: list[Any] = []
        constexprs: dict[str, Any] = {}
        for name, value in zip(self.arg_names, values):
            # None passed for any parameter is a compile-time None (Triton's rule), so `if ptr is not None:` folds.
            if name in self.constexpr_names or value is None:
                constexprs[name] = core._unwrap(value)
            else:
                arg_type, arg_value = driver.kernel_arg(name, value)
                arg_type = driver.specialize(arg_type, arg_value, name not in self.do_not_specialize,
                                             name not in self.do_not_specialize_on_alignment)
                if arg_type is None:
                    # An int equal to 1 is compiled in as a constant (Triton's rule).
                    constexprs[name] = 1
                    continue
                arg_types.append(arg_type)
                arg_values.append(arg_value)
        key = (specialization_key(arg_types, constexprs), self._global_values())
        kernel = self.cache.get(key)
        if kernel is None:
            kernel = self._compile(arg_types, constexprs)
            self.cache[key] = kernel
        if not warmup:
            grid_3d = _grid_3d(grid, self.arg_names, values)
            if all(grid_3d):
                kernel.run(grid_3d, arg_values)
        return kernel

    def _parameter_names(self, items: Sequence[Any], option: str) -> frozenset[str]:
        names = set()
        for item in items:
            if isinstance(item, int) and not isinstance(item, bool) and 0 <= item < len(self.arg_names):
                names.add(self.arg_names[item])
            elif isinstance(item, str) and item in self.arg_names:
                names.add(item)
            else:
                raise ValueError(f"{option}: {item!r} is not a parameter (name or index) of {self.fn.__name__}")
        return frozenset(names)

    def _bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        """The argument of every parameter, in order, defaults applied."""
        names = self.arg_names
        if not self._plain_signature or len(args) > len(names):
            bound = self.signature.bind(*args, **kwargs)
            bound.apply_defaults()
            return list(bound.arguments.values())
        values = list(args)
        for name in names[len(args):]:
            if name in kwargs:
                values.append(kwargs.pop(name))
            elif name in self._defaults:
                values.append(self._defaults[name])
            else:
                raise TypeError(f"{self.__name__}() missing required argument '{name}'")
        if kwargs:
            name = next(iter(kwargs))
            problem = "got multiple values for argument" if name in names else "got an unexpected keyword argument"
            raise TypeError(f"{self.__name__}() {problem} '{name}'")
        return values

    def _compile(self, arg_types: list[str], constexprs: dict[str, Any]) -> Any:
        """The kernel for this specialization: from the on-disk cache, else compiled and added to it."""
        cache = _C.KernelCache(str(knobs.cache_dir))
        key = self.cache_key(arg_types, constexprs)
        kernel = cache.load(key)
        if kernel is not None:
            return kernel
        # Imported here: the compiler imports this module (for JITFunction), and the language's standard library,
        # itself built with @jit, is imported before the compiler exists.
        from ..compiler.code_generator import generate
        builder = _C.Builder()
        generate(self, builder, arg_types, constexprs)
        kernel = _C.compile(builder, {})
        cache.store(key, kernel)
        if knobs.cache_max_bytes:
            cache.evict_to_size(knobs.cache_max_bytes)
        return kernel

    def cache_key(self, arg_types: Sequence[str], constexprs: dict[str, Any]) -> str:
        """The on-disk cache key: the compiler (its build id, tessel's own Python), the target, this kernel's source
        and everything it reaches (@jit functions, constexpr globals), the specialization and the constexprs."""
        parts = [f"python:{_package_hash()}", f"target:cpu:{_C.host_target()}", *self._dependencies().sources,
                 *(f"global:{name}={_stable_repr(value)}" for name, value in self._global_values()),
                 "args:" + ",".join(arg_types),
                 *(f"constexpr:{name}={type(v).__name__}:{_stable_repr(v)}" for name, v in constexprs.items())]
        return _C.cache_key(parts)

    def _dependencies(self) -> "_Dependencies":
        if self._deps is None:
            self._deps = _Dependencies(self)
        return self._deps

    def _global_values(self) -> tuple:
        """The current values of the constexpr globals this kernel reaches: part of both cache keys, so that
        changing one recompiles instead of running stale code."""
        deps = self._dependencies()
        if not deps.globals:
            return ()
        return tuple((name, core._unwrap(scope.get(name))) for scope, name in deps.globals)


class _Dependencies:
    """What a kernel's code depends on besides its arguments: the sources of it and of every @jit function it
    reaches through its globals (recursively), and the constexpr globals they read."""

    def __init__(self, root: JITFunction) -> None:
        self.sources: list[str] = []
        self.globals: list[tuple[dict[str, Any], str]] = []
        seen: set[int] = set()
        pending = [root]
        while pending:
            fn = pending.pop()
            if id(fn) in seen:
                continue
            seen.add(id(fn))
            # Content, not where it was imported from: the source holds the function's name.
            self.sources.append(f"jit:{fn.src}")
            scope = fn.fn.__globals__
            for node in ast.walk(fn.definition):
                value = _resolve(node, scope)
                if isinstance(value, JITFunction):
                    pending.append(value)
                elif isinstance(value, core.constexpr) and isinstance(node, ast.Name):
                    self.globals.append((scope, node.id))
        self.globals.sort(key=lambda g: g[1])


def _resolve(node: ast.AST, scope: dict[str, Any]) -> Any:
    """The global a Name or a module attribute (a.b.c) refers to, if any."""
    if isinstance(node, ast.Name):
        return scope.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, scope)
        if isinstance(base, types.ModuleType):
            return getattr(base, node.attr, None)
    return None


def _stable_repr(value: Any) -> str:
    """A repr that is the same in every process (cache keys are shared across runs)."""
    if isinstance(value, JITFunction):
        return f"jit:{hashlib.sha256(value.src.encode()).hexdigest()}"
    if callable(value) and hasattr(value, "__qualname__"):
        return f"callable:{getattr(value, '__module__', '')}.{value.__qualname__}"
    return repr(value)


@functools.lru_cache(maxsize=None)
def _package_hash() -> str:
    """Hash of tessel's Python sources: the code generator and the DSL's standard library shape every kernel."""
    root = pathlib.Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def specialization_key(arg_types: Sequence[str], constexprs: dict[str, Any]) -> tuple:
    """The in-memory cache key of a compiled kernel: argument types plus constexpr values. Constexprs are keyed by
    type and repr, so that 1, 1.0 and True (equal in Python) compile separately."""
    return tuple(arg_types), tuple((name, type(v), repr(v)) for name, v in constexprs.items())


def _grid_3d(grid: Any, names: list[str], values: list[Any]) -> tuple[int, int, int]:
    if callable(grid):
        grid = grid(dict(zip(names, values)))
    if type(grid) is tuple and 1 <= len(grid) <= 3 and all(type(d) is int and d >= 0 for d in grid):
        return (grid + (1, 1))[:3]  # the common case, kept cheap: this runs every launch
    grid = core._unwrap(grid)
    if not isinstance(grid, (tuple, list)):
        grid = (grid,)
    if not 1 <= len(grid) <= 3:
        raise ValueError(f"grid must have 1 to 3 dimensions, got {grid!r}")
    dims = tuple(int(core._unwrap(d)) for d in grid)
    if any(d < 0 for d in dims):
        raise ValueError(f"grid dimensions must be >= 0, got {grid!r}")
    return (dims + (1, 1))[:3]


def _is_dtype(value: Any) -> bool:
    if isinstance(value, core.dtype):
        return True
    # Only look for numpy/torch dtypes when those libraries are loaded: tessel depends on neither.
    torch = sys.modules.get("torch")
    numpy = sys.modules.get("numpy")
    return (torch is not None and isinstance(value, torch.dtype)) or \
        (numpy is not None and isinstance(value, numpy.dtype))


class _DtypeOnlyArray:
    """An array of which only the element type is known (for `warmup`): a null pointer of that type."""

    def __init__(self, dtype: Any) -> None:
        self.dtype = dtype

    def data_ptr(self) -> int:
        return 0


def jit(fn: Callable[..., Any] | None = None, *, do_not_specialize: Sequence[Any] = (),
        do_not_specialize_on_alignment: Sequence[Any] = (), debug: bool | None = None,
        noinline: bool = False) -> Any:
    """`@jit` or `@jit(...)`: compile `fn` with tessel."""
    def decorator(f: Callable[..., Any]) -> JITFunction:
        return JITFunction(f, do_not_specialize=do_not_specialize,
                           do_not_specialize_on_alignment=do_not_specialize_on_alignment, debug=debug,
                           noinline=noinline)
    return decorator if fn is None else decorator(fn)
