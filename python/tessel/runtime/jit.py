"""`@jit` and `JITFunction`: source capture, argument binding, specialization, the in-memory kernel cache, launch."""
from __future__ import annotations

import ast
import functools
import hashlib
import inspect
import os
import pathlib
import re
import sys
import textwrap
import types
from typing import Any, Callable, Sequence

from .. import _C
from ..knobs import knobs
from ..language import core, target_info
from ..language.constexpr_function import ConstexprFunction
from . import cache as kernel_cache
from . import compiled_kernel, driver, errors, tuple_args

# Launch options of Triton's `kernel[grid](..., num_warps=4)` (and of autotuning Configs), in Triton's order. They
# are compile options: part of the kernel's key, handed to its target (the CPU has no warps, pipeline stages,
# clusters or registers, and compiles the same code for any value).
LAUNCH_OPTIONS = ("num_warps", "num_ctas", "num_stages", "maxnreg")
# The compile options Triton takes as keywords of a launch.
COMPILE_OPTIONS = LAUNCH_OPTIONS + ("enable_fp_fusion", "debug")
# Launch options of other backends, accepted and not compiled in: AMD's tuning (waves per execution unit, the MFMA
# instruction's size, operand packing, scheduling hints) and NVIDIA's launch mechanics (cooperative and dependent
# launches). They change no result, so kernels tuned for those GPUs run unchanged on every target.
IGNORED_OPTIONS = ("waves_per_eu", "matrix_instr_nonkdim", "kpack", "schedule_hint", "launch_cooperative_grid",
                   "launch_pdl")
# Every keyword a launch accepts besides the kernel's parameters.
ACCEPTED_OPTIONS = COMPILE_OPTIONS + IGNORED_OPTIONS


class _Sources:
    """How many times any @jit function's source was replaced (`_unsafe_update_src`): the kernels of every function
    that reaches it may have changed, so each function starts afresh when it sees a new count."""
    generation = 0


def _is_constexpr_annotation(annotation: Any) -> bool:
    if annotation is core.constexpr:
        return True
    # String annotations come from `from __future__ import annotations` or quoting: "tl.constexpr", "constexpr".
    return isinstance(annotation, str) and annotation.strip().split(".")[-1] == "constexpr"


# Triton's spellings of a parameter's type annotation, canonical: int -> i32, tl.float16 -> fp16, "*fp32", ...
_ANNOTATION_NAMES = {"bool": "u1", "int1": "u1", "i1": "u1", "int8": "i8", "int16": "i16", "int": "i32",
                     "int32": "i32", "int64": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
                     "float8e4nv": "fp8e4nv", "float8e5": "fp8e5", "float8e4b8": "fp8e4b8",
                     "float8e5b16": "fp8e5b16", "float8e4b15": "fp8e4b15", "float16": "fp16", "half": "fp16",
                     "bfloat16": "bf16", "float": "fp32", "float32": "fp32", "double": "fp64", "float64": "fp64"}


def _annotation_text(annotation: Any) -> str:
    """A parameter's annotation as Triton's KernelParam.annotation spells it ("" when there is none)."""
    if annotation is inspect.Parameter.empty or annotation is None:
        return ""
    if isinstance(annotation, core.pointer_type):
        return "*" + _annotation_text(annotation.element_ty)
    if annotation is core.constexpr:
        return "constexpr"
    if isinstance(annotation, core.dtype):
        text = annotation.name
    elif isinstance(annotation, type):
        text = annotation.__name__
    else:
        text = str(annotation).strip()
        if text.startswith("const "):
            return "*k" + _annotation_text(text.removeprefix("const").strip()).lstrip("*")
        if text.endswith("*"):
            return "*" + _annotation_text(text[:-1])
        if text.startswith("*"):
            return "*" + _annotation_text(text[1:])
        text = text.removeprefix("tl.")
    return _ANNOTATION_NAMES.get(text.replace("_t", ""), text)


class KernelParam:
    """One parameter of a @jit function, as Triton describes it (`JITFunction.params`)."""

    def __init__(self, num: int, param: inspect.Parameter, do_not_specialize: bool,
                 do_not_specialize_on_alignment: bool) -> None:
        self.num = num
        self._param = param
        self.do_not_specialize = do_not_specialize
        self.do_not_specialize_on_alignment = do_not_specialize_on_alignment

    @functools.cached_property
    def name(self) -> str:
        return self._param.name

    @functools.cached_property
    def annotation(self) -> str:
        return _annotation_text(self._param.annotation)

    @functools.cached_property
    def annotation_type(self) -> str:
        """The annotation when it names an element type or a pointer to one ("i32", "*fp16"), else ""."""
        text = self.annotation
        bare = text[2:] if text.startswith("*k") else text[1:] if text.startswith("*") else text
        return text if bare in set(_ANNOTATION_NAMES.values()) else ""

    @functools.cached_property
    def is_constexpr(self) -> bool:
        return _is_constexpr_annotation(self._param.annotation) or "constexpr" in self.annotation

    @functools.cached_property
    def is_const(self) -> bool:
        return not self.is_constexpr and ("const" in self.annotation or self.annotation.startswith("*k"))

    @property
    def default(self) -> Any:
        return self._param.default

    @property
    def has_default(self) -> bool:
        return self._param.default is not inspect.Parameter.empty

    def __repr__(self) -> str:
        return f"KernelParam({self.num}, {self.name!r})"


class JITFunction:
    """A function compiled by tessel: a kernel when launched with `fn[grid](...)`, inlined when called from another
    @jit function.

    Triton's surface is here too: `src` (the source from `def`, replaced only through `_unsafe_update_src`),
    `params`, `arg_names`, `constexprs`, `cache_key`, `warmup`, `run`, `add_pre_run_hook`, and the options of
    `@jit(...)`."""

    __name__: str  # set from the function by functools.update_wrapper

    def __init__(self, fn: Callable[..., Any], version: Any = None, do_not_specialize: Sequence[Any] | None = None,
                 do_not_specialize_on_alignment: Sequence[Any] | None = None, debug: bool | None = None,
                 noinline: bool | None = None, repr: Callable[..., str] | None = None,
                 launch_metadata: Callable[..., Any] | None = None) -> None:
        # noinline: each call of the function calls one function generated per specialization (the code generator's
        # _call_function), instead of inlining the body at the call. debug=True compiles the kernel with the debug option (device assertions) unless a launch
        # says otherwise.
        self.fn = fn
        functools.update_wrapper(self, fn)
        self.module = fn.__module__
        self.__globals__ = fn.__globals__
        self.version = version
        self.debug = debug
        self.noinline = noinline
        # repr(specialization) names the kernel in profiles; launch_metadata(grid, metadata, args) adds to what a
        # profiler records of each launch (Triton's hooks). Kept for the tools that read them.
        self._repr = repr
        self.launch_metadata = launch_metadata
        self.signature = inspect.signature(fn)
        self.arg_names = list(self.signature.parameters)
        for param in self.signature.parameters.values():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise TypeError(f"@jit function {fn.__name__} cannot take *{param.name} or **{param.name}")
        self.constexpr_names = frozenset(name for name, param in self.signature.parameters.items()
                                         if _is_constexpr_annotation(param.annotation))
        # Specialization opt-outs, by name or position: no value specialization at all, or no alignment marks.
        self.do_not_specialize = self._parameter_names(do_not_specialize or (), "do_not_specialize")
        no_alignment = self._parameter_names(do_not_specialize_on_alignment or (), "do_not_specialize_on_alignment")
        self.do_not_specialize_on_alignment = self.do_not_specialize | no_alignment
        for param in self.signature.parameters.values():
            if param.kind in (param.POSITIONAL_ONLY, param.KEYWORD_ONLY):
                raise TypeError(f"@jit function {fn.__name__}: parameter {param.name} must be positional-or-keyword")
        # Each parameter's own marks, as given (Triton's KernelParam).
        self.params = [KernelParam(i, param, name in self.do_not_specialize, name in no_alignment)
                       for i, (name, param) in enumerate(self.signature.parameters.items())]
        self.constexprs = [p.num for p in self.params if p.name in self.constexpr_names]
        self._defaults = {name: p.default for name, p in self.signature.parameters.items()
                          if p.default is not p.empty}
        try:
            self.raw_src, self.starting_line_number = inspect.getsourcelines(fn)
        except (OSError, TypeError) as e:
            raise OSError(f"@jit needs the source of {fn.__qualname__} (define it in a file): {e}") from e
        self.file = os.path.abspath(inspect.getsourcefile(fn) or fn.__code__.co_filename)
        # Columns in the parsed (dedented) source are shifted by the indentation of the function in its file.
        lines = self.raw_src
        self.indent = len(lines[0]) - len(lines[0].lstrip())
        # The source from `def` on, as Triton's `src`: decorators are not part of it.
        source = textwrap.dedent("".join(lines))
        start = re.search(r"^def\s+\w+\s*\(", source, re.MULTILINE)
        if start is None:
            raise TypeError(f"@jit applies to a plain `def` function, not to {fn.__qualname__}")
        # The file's line of the source's first line (the `def`).
        self.first_line = self.starting_line_number + source[:start.start()].count("\n")
        self.hash: str | None = None
        self._set_source(source[start.start():])
        # Compiled kernels by context (target and the knobs that change code), then by specialization (the
        # launcher's key); a launcher per context.
        self.caches: dict[Any, dict[Any, Any]] = {}
        self._deps: _Dependencies | None = None
        self._launchers: dict[Any, Any] = {}
        self._generation = _Sources.generation
        self.pre_run_hooks: list[Callable[..., Any]] = []

    # ------------------------------------------------------------------------------------------------- source

    @property
    def src(self) -> str:
        """The function's source, from its `def` line (dedented)."""
        return self._src

    @src.setter
    def src(self, value: str) -> None:
        raise AttributeError("cannot set the source of a @jit function directly: use _unsafe_update_src(new_src)")

    def _unsafe_update_src(self, new_src: str) -> None:
        """Replaces the function's source (Triton's test suites build kernels from a template this way). The new
        source must define the same parameters. What was compiled from the old source is forgotten, by this
        function and by every @jit function that calls it."""
        self._set_source(new_src)
        self.hash = None
        _Sources.generation += 1

    def _set_source(self, src: str) -> None:
        tree = ast.parse(src)
        if not tree.body or not isinstance(tree.body[0], ast.FunctionDef):
            raise TypeError(f"the source of a @jit function must be one plain `def`, not:\n{src}")
        definition: ast.FunctionDef = tree.body[0]
        args = definition.args
        names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
        if names != self.arg_names or args.vararg or args.kwarg:
            raise ValueError(f"the new source of {self.__name__} takes ({', '.join(names)}); the function takes "
                             f"({', '.join(self.arg_names)})")
        self._src = src
        self.src_lines = src.splitlines()
        self.definition = definition

    @property
    def cache_key(self) -> str:
        """A hash of what the function's code depends on: its source, the sources of the @jit functions it reaches
        and the values of the constexpr globals they read."""
        self._check_generation()
        deps = self._dependencies()
        text = "\n".join([*deps.sources, *(f"global:{name}={_stable_repr(value)}"
                                           for name, value in self._global_values())])
        self.hash = hashlib.sha256(text.encode()).hexdigest()
        return self.hash

    def _check_generation(self) -> None:
        """Forgets what was built from sources that have been replaced since."""
        if self._generation != _Sources.generation:
            self._generation = _Sources.generation
            self._deps = None
            self.caches = {}
            self._launchers = {}

    # ------------------------------------------------------------------------------------------------- launch

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{self.__name__} is a @tessel.jit function: launch it with {self.__name__}[grid](...) "
                           "or call it from another @tessel.jit function")

    def __getitem__(self, grid: Any) -> Callable[..., Any]:
        if self.pre_run_hooks:
            return functools.partial(self.run, grid=grid, warmup=False)
        # Straight into the C++ launch path: no Python frame between the call and the launch.
        return functools.partial(self._get_launcher().launch, grid, False)

    def __repr__(self) -> str:
        return f"JITFunction({self.fn.__module__}:{self.fn.__qualname__})"

    def repr(self, specialization: Any) -> str:
        """The kernel's name for profilers: `@jit(repr=...)`'s, else the function's full name."""
        return f"{self.fn.__module__}.{self.fn.__qualname__}" if self._repr is None else self._repr(specialization)

    def add_pre_run_hook(self, hook: Callable[..., Any]) -> None:
        """`hook(*args, **kwargs)` runs before every launch, with the launch's arguments."""
        if not callable(hook):
            raise TypeError(f"add_pre_run_hook: {hook!r} is not callable")
        self.pre_run_hooks.append(hook)

    def warmup(self, *args: Any, grid: Any = (1,), **kwargs: Any) -> Any:
        """Compiles for these arguments without running; returns the compiled kernel. A dtype (tl.float32,
        torch.float16, numpy.dtype) may stand for an array of that element type."""
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
        for hook in self.pre_run_hooks:
            hook(*args, **kwargs)
        return self._get_launcher().launch(grid, warmup, *args, **kwargs)

    @property
    def cache(self) -> dict[Any, Any]:
        """The kernels compiled for the current target (knobs.target) and knobs, by specialization."""
        self._check_generation()
        return self.caches.setdefault(_context(), {})

    def _get_launcher(self, context: tuple | None = None) -> Any:
        if self._generation != _Sources.generation:
            self._check_generation()
        context = _context() if context is None else context
        launcher = self._launchers.get(context)
        if launcher is None:
            # Made at the first launch, not at decoration: the @jit functions and globals a kernel reaches may be
            # defined after it in its module.
            # Device targets (cuda) read device arrays and launch on the caller's stream; the others read host
            # arrays and run before the launch returns.
            target = context[0]
            device = driver.runs_on_device(target)
            launcher = self._launchers[context] = _C.Launcher(
                self.__name__, self.arg_names, [n in self.constexpr_names for n in self.arg_names], self._defaults,
                [n not in self.do_not_specialize for n in self.arg_names],
                [n not in self.do_not_specialize_on_alignment for n in self.arg_names],
                self.caches.setdefault(context, {}), functools.partial(self._compile_specialization, context),
                driver.device_kernel_arg if device else driver.kernel_arg,
                self._global_values if self._dependencies().globals else None, ACCEPTED_OPTIONS,
                device, driver.current_stream if device else None, tuple_args.split,
                (JITFunction, ConstexprFunction))
        return launcher

    def _compile_specialization(self, context: tuple, arg_types: list[str], constexprs: dict[str, Any],
                                options: dict[str, Any]) -> Any:
        target, fp32_default, default_fp_fusion, debug = context
        given = options
        options = {name: core._unwrap(v) for name, v in options.items() if name not in IGNORED_OPTIONS}
        warps = options.get("num_warps")
        if isinstance(warps, int) and not isinstance(warps, bool) and (warps < 1 or warps & (warps - 1)):
            raise errors.LaunchOptionError(f"num_warps must be a power of 2, got {warps}")
        # The defaults a launch does not override: @jit(debug=...) or knobs.runtime.debug, and
        # knobs.language.default_fp_fusion.
        if options.get("debug") is None and (self.debug or debug):
            options["debug"] = True
        if options.get("enable_fp_fusion") is None and not default_fp_fusion:
            options["enable_fp_fusion"] = False
        key, kernel = self._compile(arg_types, {name: core._unwrap(v) for name, v in constexprs.items()}, target,
                                    options, fp32_default)
        # `kernel[grid](...)` (Triton's compiled kernels) launches through this launcher with these options.
        compiled_kernel.register(kernel, self, context, given, key)
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

    def _compile(self, arg_types: list[str], constexprs: dict[str, Any], target: str, options: dict[str, Any],
                 fp32_default: str | None = None) -> tuple[str, Any]:
        """The cache key and the kernel for this specialization, target and options: from the kernel cache (on disk,
        then shared), else compiled and added to it."""
        key = self._kernel_key(arg_types, constexprs, target, options, fp32_default)
        kernel = kernel_cache.load(key)
        if kernel is None:
            # Imported here: the compiler imports this module (for JITFunction), and the language's standard library,
            # itself built with @jit, is imported before the compiler exists.
            from ..compiler.code_generator import generate
            builder = _C.Builder()
            builder.set_debug(bool(options.get("debug")))
            with knobs.language.scope(), target_info.compiling(target, int(options.get("num_warps") or 4)):
                knobs.language.fp32_default = fp32_default
                generate(self, builder, arg_types, constexprs, self._kernel_name(arg_types, constexprs))
            kernel = _compile_module(builder, target, options, self.__name__)
            kernel_cache.store(key, kernel)
        return key, kernel

    def _kernel_name(self, arg_types: Sequence[str], constexprs: dict[str, Any]) -> str | None:
        """`@jit(repr=...)`'s name for this specialization (as a symbol: other characters become '_'), or None.
        It is given Triton's view of the specialization: `signature` (each parameter's type string, "constexpr"
        for compile-time ones) and `constants` (the compile-time values by name, specialized 1s included)."""
        if self._repr is None:
            return None
        runtime = iter(arg_types)
        # Types without their specialization (Triton keeps divisibility apart: "i64:16" is "i64" here).
        signature = {name: "constexpr" if name in constexprs else str(next(runtime, "")).split(":")[0]
                     for name in self.arg_names}
        spec = types.SimpleNamespace(signature=signature, constants=dict(constexprs), name=self.__name__)
        name = re.sub(r"[^A-Za-z0-9_]", "_", str(self._repr(spec)))
        return name if name and not name[0].isdigit() else f"_{name}"

    def _kernel_key(self, arg_types: Sequence[str], constexprs: dict[str, Any], target: str,
                    options: dict[str, Any], fp32_default: str | None = None) -> str:
        """The on-disk cache key: the compiler (its version, build id and tessel's own Python), the target (all that changes its
        code) and the compile options, this kernel's source and everything it reaches (@jit functions, constexpr
        globals), the specialization and the constexprs. With debug, also where those functions are: device
        assertions name their file and line."""
        locations = self._dependencies().locations if options.get("debug") else []
        parts = [f"tessel:{_version()}", f"python:{_package_hash()}", f"target:{_C.parse_target(target)}:{_C.target_description(target)}",
                 f"options:{_C.compile_options(options, target)}", *self._dependencies().sources, *locations,
                 *(f"global:{name}={_stable_repr(value)}" for name, value in self._global_values()),
                 "args:" + ",".join(tuple_args.describe(t) if tuple_args.is_tuple_type(t) else t
                                    for t in arg_types),
                 *(f"constexpr:{name}={type(v).__name__}:{_stable_repr(v)}" for name, v in constexprs.items())]
        if fp32_default is not None:
            parts.append(f"fp32_default:{fp32_default}")
        if self._repr is not None:
            parts.append(f"name:{self._kernel_name(arg_types, constexprs)}")
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


def _context() -> tuple:
    """What, besides a kernel's arguments and options, changes the code compiled for it: the target and the knobs
    read while compiling. Kernels are kept apart by it in memory (and on disk, through their keys)."""
    language = knobs.language
    return (knobs.target, language.fp32_default, language.default_fp_fusion, knobs.runtime.debug)


def _compile_module(builder: Any, target: str, options: dict[str, Any], kernel_name: str) -> Any:
    """The builder's kernel compiled for the target; a kernel that needs more shared memory than the GPU has is an
    OutOfResources error, as in Triton; a diagnostic at a line of the kernel (or of a @jit function it calls) is a
    CompilationError at that line."""
    try:
        return _C.compile(builder, target, options)
    except _C.BackendError as e:
        found = re.search(r"needs (\d+) bytes of (?:LDS \()?shared memory\)? per program; \S+ has (\d+)", str(e))
        if found is not None:
            raise errors.OutOfResources(int(found.group(1)), int(found.group(2)), "shared memory") from e
        from ..compiler.backend_errors import located_backend_error
        located = located_backend_error(kernel_name, e)
        if located is None:
            raise
        raise located from e


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
            # A @jit function defined in another function may call the @jit functions it closes over.
            nonlocals = inspect.getclosurevars(fn.fn).nonlocals
            for node in ast.walk(fn.definition):
                value = nonlocals[node.id] if isinstance(node, ast.Name) and node.id in nonlocals else \
                    _resolve(node, scope)
                if isinstance(value, JITFunction):
                    pending.append(value)
                elif isinstance(value, ConstexprFunction) and f"constexpr_function:{value.src}" not in self.sources:
                    self.sources.append(f"constexpr_function:{value.src}")
                elif isinstance(node, ast.Name) and (isinstance(value, core.constexpr) or (
                        node.id not in nonlocals and node.id in scope and
                        _is_constexpr_annotation(scope.get("__annotations__", {}).get(node.id)))):
                    # tl.constexpr values, and globals annotated `X: tl.constexpr = ...`.
                    self.globals.append((nonlocals if node.id in nonlocals else scope, node.id))
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
        return f"jit:{value.cache_key}"  # its source and everything it reaches
    if isinstance(value, ConstexprFunction):
        return f"constexpr_function:{hashlib.sha256(value.src.encode()).hexdigest()}"
    if callable(value) and hasattr(value, "__qualname__"):
        return f"callable:{getattr(value, '__module__', '')}.{value.__qualname__}"
    return repr(value)


def _version() -> str:
    """tessel.__version__ (the package metadata's version when installed)."""
    import tessel
    return tessel.__version__


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


def jit(fn: Callable[..., Any] | None = None, *, version: Any = None, repr: Callable[..., str] | None = None,
        launch_metadata: Callable[..., Any] | None = None, do_not_specialize: Sequence[Any] | None = None,
        do_not_specialize_on_alignment: Sequence[Any] | None = None, debug: bool | None = None,
        noinline: bool | None = None) -> Any:
    """`@jit` or `@jit(...)`: compile `fn` with tessel. The options are Triton's (see JITFunction)."""
    def decorator(f: Callable[..., Any]) -> JITFunction:
        if not callable(f):
            raise TypeError(f"@jit applies to a function, not to {f!r}")
        return JITFunction(f, version=version, do_not_specialize=do_not_specialize,
                           do_not_specialize_on_alignment=do_not_specialize_on_alignment, debug=debug,
                           noinline=noinline, repr=repr, launch_metadata=launch_metadata)
    return decorator if fn is None else decorator(fn)


class MockTensor:
    """Stands for an array of which only the element type (and a shape) is known, in `kernel.warmup(...)`: a null
    pointer of that type, as Triton's."""

    @staticmethod
    def wrap_dtype(arg: Any) -> Any:
        return MockTensor(arg) if _is_dtype(arg) and not isinstance(arg, core.dtype) else arg

    def __init__(self, dtype: Any, shape: Sequence[int] | None = None) -> None:
        self.dtype = dtype
        self.shape = list(shape) if shape is not None else [1]

    def stride(self) -> tuple[int, ...]:
        strides = [1]
        for size in reversed(self.shape[1:]):
            strides.append(strides[-1] * size)
        return tuple(reversed(strides))

    @staticmethod
    def data_ptr() -> int:
        return 0


class TensorWrapper:
    """An array seen as another element type of the same width (`reinterpret`): kernels receive its address with
    `dtype`, a tessel.language dtype. Wraps torch tensors and numpy arrays."""

    def __init__(self, base: Any, dtype: core.dtype) -> None:
        self.dtype = dtype
        self.base = base
        self.shape = tuple(base.shape)
        self.device = getattr(base, "device", "cpu")
        if hasattr(base, "data"):
            self.data = base.data

    @property
    def is_cpu(self) -> bool:
        return bool(getattr(self.base, "is_cpu", not hasattr(self.base, "__cuda_array_interface__")))

    @property
    def is_cuda(self) -> bool:
        return bool(getattr(self.base, "is_cuda", hasattr(self.base, "__cuda_array_interface__")))

    def data_ptr(self) -> int:
        if hasattr(self.base, "data_ptr"):
            return self.base.data_ptr()
        return self.base.__array_interface__["data"][0]

    def stride(self, *args: Any) -> Any:
        if hasattr(self.base, "stride") and callable(self.base.stride):
            return self.base.stride(*args)
        strides = tuple(s // self.base.itemsize for s in self.base.strides)
        return strides[args[0]] if args else strides

    def element_size(self) -> int:
        return self.dtype.primitive_bitwidth // 8

    def numel(self) -> int:
        return functools.reduce(lambda a, b: a * b, self.shape, 1)

    def __str__(self) -> str:
        return f"TensorWrapper[{self.dtype}]({self.base})"

    def cpu(self) -> TensorWrapper:
        return TensorWrapper(self.base.cpu() if hasattr(self.base, "cpu") else self.base, self.dtype)

    def copy_(self, other: TensorWrapper) -> None:
        self.base.copy_(other.base)

    def clone(self) -> TensorWrapper:
        return TensorWrapper(self.base.clone() if hasattr(self.base, "clone") else self.base.copy(), self.dtype)

    def to(self, device: Any) -> TensorWrapper:
        return TensorWrapper(self.base.to(device), self.dtype)

    def new_empty(self, sizes: Any) -> TensorWrapper:
        return TensorWrapper(self.base.new_empty(sizes), self.dtype)


def reinterpret(tensor: Any, dtype: core.dtype) -> Any:
    """`tensor` seen by kernels as an array of `dtype` (same element width): e.g. an int8 torch tensor as fp8, or
    a signed one as unsigned. Reinterpreting a wrapper as its base's own type gives the base back."""
    if isinstance(tensor, TensorWrapper):
        if dtype == tensor.base.dtype:
            return tensor.base
        return TensorWrapper(tensor.base, dtype)
    if hasattr(tensor, "data_ptr") or hasattr(tensor, "__array_interface__"):
        return TensorWrapper(tensor, dtype)
    raise TypeError(f"Cannot reinterpret a {type(tensor)}.")
