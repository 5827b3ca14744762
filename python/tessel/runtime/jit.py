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
from . import cache as kernel_cache
from . import driver

# Launch options of Triton's `kernel[grid](..., num_warps=4)` (and of autotuning Configs), in Triton's order. They
# are compile options: part of the kernel's key, handed to its target (the CPU has no warps, pipeline stages,
# clusters or registers, and compiles the same code for any value).
LAUNCH_OPTIONS = ("num_warps", "num_ctas", "num_stages", "maxnreg")
# Every option a launch accepts: the launch options and the other compile options Triton takes as keywords.
COMPILE_OPTIONS = LAUNCH_OPTIONS + ("enable_fp_fusion", "debug")


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
        # noinline is Triton's option, accepted for source compatibility: every call is inlined. debug=True compiles
        # the kernel with the debug option (device assertions) unless a launch says otherwise.
        self.fn = fn
        self.debug = debug
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
        for param in self.signature.parameters.values():
            if param.kind in (param.POSITIONAL_ONLY, param.KEYWORD_ONLY):
                raise TypeError(f"@jit function {fn.__name__}: parameter {param.name} must be positional-or-keyword")
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
        # Compiled kernels by target, then by specialization (the launcher's key); a launcher per target.
        self.caches: dict[str, dict[Any, Any]] = {}
        self._deps: _Dependencies | None = None
        self._launchers: dict[str, Any] = {}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{self.__name__} is a @tessel.jit function: launch it with {self.__name__}[grid](...) "
                           "or call it from another @tessel.jit function")

    def __getitem__(self, grid: Any) -> Callable[..., Any]:
        # Straight into the C++ launch path: no Python frame between the call and the launch.
        return functools.partial(self._get_launcher().launch, grid, False)

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
        compiled kernel (`.asm` holds every stage's text). The work is done in C++ (`_C.Launcher`), which calls
        back into Python only to compile, for unusual arguments and for grid callables."""
        return self._get_launcher().launch(grid, warmup, *args, **kwargs)

    @property
    def cache(self) -> dict[Any, Any]:
        """The kernels compiled for the current target (knobs.target), by specialization."""
        return self.caches.setdefault(knobs.target, {})

    def _get_launcher(self) -> Any:
        target = knobs.target
        # Kernels compiled under knobs.runtime.debug are kept apart from the others.
        context = (target, knobs.runtime.debug)
        launcher = self._launchers.get(context)
        if launcher is None:
            # Made at the first launch, not at decoration: the @jit functions and globals a kernel reaches may be
            # defined after it in its module.
            # Device targets (cuda) read device arrays and launch on the caller's stream; the others read host
            # arrays and run before the launch returns.
            device = driver.runs_on_device(target)
            launcher = self._launchers[context] = _C.Launcher(
                self.__name__, self.arg_names, [n in self.constexpr_names for n in self.arg_names], self._defaults,
                [n not in self.do_not_specialize for n in self.arg_names],
                [n not in self.do_not_specialize_on_alignment for n in self.arg_names],
                self.caches.setdefault(target if not context[1] else f"{target}:debug", {}),
                functools.partial(self._compile_specialization, target, context[1]),
                driver.device_kernel_arg if device else driver.kernel_arg,
                self._global_values if self._dependencies().globals else None, COMPILE_OPTIONS,
                device, driver.current_stream if device else None)
        return launcher

    def _compile_specialization(self, target: str, debug: bool, arg_types: list[str], constexprs: dict[str, Any],
                                options: dict[str, Any]) -> Any:
        options = {name: core._unwrap(v) for name, v in options.items()}
        # The default a launch does not override: @jit(debug=...) or knobs.runtime.debug.
        if options.get("debug") is None and (self.debug or debug):
            options["debug"] = True
        return self._compile(arg_types, {name: core._unwrap(v) for name, v in constexprs.items()}, target, options)

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

    def _compile(self, arg_types: list[str], constexprs: dict[str, Any], target: str,
                 options: dict[str, Any]) -> Any:
        """The kernel for this specialization, target and options: from the kernel cache (on disk, then shared),
        else compiled and added to it."""
        key = self.cache_key(arg_types, constexprs, target, options)
        kernel = kernel_cache.load(key)
        if kernel is not None:
            return kernel
        # Imported here: the compiler imports this module (for JITFunction), and the language's standard library,
        # itself built with @jit, is imported before the compiler exists.
        from ..compiler.code_generator import generate
        builder = _C.Builder()
        builder.set_debug(bool(options.get("debug")))
        generate(self, builder, arg_types, constexprs)
        try:
            kernel = _C.compile(builder, target, options)
        except _C.BackendError as e:
            # A diagnostic at a line of the kernel (or of a @jit function it calls) is that line's error.
            from ..compiler.backend_errors import located_backend_error
            located = located_backend_error(self.__name__, e)
            if located is None:
                raise
            raise located from e
        kernel_cache.store(key, kernel)
        return kernel

    def cache_key(self, arg_types: Sequence[str], constexprs: dict[str, Any], target: str,
                  options: dict[str, Any]) -> str:
        """The on-disk cache key: the compiler (its build id, tessel's own Python), the target (all that changes its
        code) and the compile options, this kernel's source and everything it reaches (@jit functions, constexpr
        globals), the specialization and the constexprs. With debug, also where those functions are: device
        assertions name their file and line."""
        locations = self._dependencies().locations if options.get("debug") else []
        parts = [f"python:{_package_hash()}", f"target:{_C.parse_target(target)}:{_C.target_description(target)}",
                 f"options:{_C.compile_options(options)}", *self._dependencies().sources, *locations,
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
        self.locations: list[str] = []  # file and first line of each function
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
            self.locations.append(f"at:{fn.file}:{fn.first_line}")
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
