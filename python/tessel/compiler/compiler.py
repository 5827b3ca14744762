"""`triton.compile(triton.compiler.ASTSource(fn, signature, constexprs))`: compiling a @jit function for given
argument types without launching it, as Triton's tools and tests do. The kernel comes from (and goes to) the same
caches as launches'."""
from __future__ import annotations

from typing import Any

from .. import _C
from ..knobs import knobs

# The compiled kernel's class (Triton's CompiledKernel): the C++ kernel, with Triton's attributes
# (tessel.runtime.compiled_kernel).
CompiledKernel = _C.Kernel


class ASTSource:
    """A @jit function and the types of its arguments: `signature` maps each parameter's name to a type string
    ("i32", "fp32", "*fp16", "constexpr"); `constexprs` gives the compile-time values, by name or by position
    (Triton's `(index,)` paths); `attrs` (Triton's divisibility marks) is accepted."""

    def __init__(self, fn: Any, signature: dict[Any, str], constexprs: dict[Any, Any] | None = None,
                 attrs: dict[Any, Any] | None = None) -> None:
        self.fn = fn
        self.signature = {self._name(key): value for key, value in signature.items()}
        self.constexprs = {self._name(key): value for key, value in (constexprs or {}).items()}
        self.attrs = attrs or {}

    def _name(self, key: Any) -> str:
        if isinstance(key, tuple) and len(key) == 1:
            key = key[0]
        if isinstance(key, int) and not isinstance(key, bool):
            return self.fn.arg_names[key]
        if isinstance(key, str) and key in self.fn.arg_names:
            return key
        raise KeyError(f"ASTSource: {key!r} is not a parameter of {self.fn.__name__}")

    def arg_types(self) -> tuple[list[str], dict[str, Any]]:
        """The runtime arguments' type strings, in order, and the constexprs (defaults filled in)."""
        types, constexprs = [], {}
        for name in self.fn.arg_names:
            if name in self.constexprs:
                constexprs[name] = self.constexprs[name]
                continue
            text = self.signature.get(name)
            if text is None or text == "constexpr":
                if name not in self.fn._defaults:
                    raise TypeError(f"ASTSource: no type and no value for parameter '{name}' of {self.fn.__name__}")
                constexprs[name] = self.fn._defaults[name]
                continue
            types.append(_type_string(text))
        return types, constexprs


def _type_string(text: str) -> str:
    """Triton's signature strings as Tessel's: a const pointer ("*k") is a pointer, "u1" is "i1"."""
    text = text.strip()
    if text.startswith("*k"):
        text = "*" + text[2:]
    return {"u1": "i1", "*u1": "*i1"}.get(text, text)


def _target_name(target: Any) -> str:
    """A target name: None for knobs.target, a name as is, or Triton's GPUTarget (backend, arch)."""
    if target is None:
        return knobs.target
    if isinstance(target, str):
        return target
    backend, arch = getattr(target, "backend", None), getattr(target, "arch", None)
    if backend == "cpu":
        return "cpu"
    if backend == "cuda" and arch:
        return f"cuda:{arch}a" if int(arch) >= 90 else f"cuda:{arch}"
    raise ValueError(f"compile: cannot compile for {target!r}")


def compile(src: ASTSource, target: Any = None, options: dict[str, Any] | None = None) -> Any:
    """Compiles `src` for `target` (default: knobs.target) with the launch options `options` (num_warps, ...);
    returns the compiled kernel. Bad kernels raise CompilationError, as launches do."""
    from ..runtime.jit import _context
    arg_types, constexprs = src.arg_types()
    # Compiled as a launch with these options would be (`kernel[grid](...)` launches it the same way).
    context = (_target_name(target), *_context()[1:])
    return src.fn._compile_specialization(context, arg_types, constexprs, dict(options or {}))
