"""The kernel front end: walks a @jit function's `ast` and calls the IR builder (`tessel._C.Builder`).

A value in a kernel is either a `tl.tensor` (known at run time, held by the builder) or a plain Python value (known
at compile time: constexpr parameters, literals, dtypes, tuples, @jit functions, ...). Operations on Python values
are evaluated here, in Python; anything touching a tensor goes to the builder, which owns every semantic rule.

Control flow: an `if` on a compile-time condition generates only the taken branch; on a tensor it becomes a builder
if/else whose results are the variables both branches leave defined. `for ... in range(...)` and `while` become
builder loops that carry the variables their body assigns; `tl.static_range` and tuples are unrolled here; `break`
and `continue` are rewritten into flags first (loop_exits.py). Calls to
other @jit functions are inlined: their body is walked in a scope of their own. A @jit(noinline=True) function is
generated once per specialization (its arguments' types and compile-time values) as a function of its own, which
each call calls.

Every exception raised while generating a node becomes a `CompilationError` showing that node's source line.
"""
from __future__ import annotations

import ast
import builtins
import inspect
import numbers
import operator
import os
import types
import warnings
from typing import Any, Callable

from .. import _C
from ..language import core
from ..language.core import tensor
from ..language.tensor_descriptor import host_descriptor_type
from ..language.constexpr_function import ConstexprFunction
from ..language.tuples import tuple as core_tuple
from ..runtime import tuple_args
from ..runtime.jit import JITFunction
from . import loop_exits
from .errors import (CompilationError, CompileTimeAssertionFailure, UnsupportedError,
                     UnsupportedLanguageConstruct)

# Inlining a @jit function that calls itself would never end: past this depth it is reported as an error.
_MAX_INLINE_DEPTH = 64

# Python builtins a kernel may call. They run on compile-time values; min, max and abs also look at tensors; print()
# is tl.device_print (it prints at run time, as in Triton).
_PYTHON_BUILTINS = {name: getattr(builtins, name) for name in (
    "min", "max", "len", "range", "int", "float", "bool", "isinstance", "print", "abs", "tuple", "list", "getattr",
    "enumerate", "zip")}

# ast operator -> (tensor method, reflected tensor method, Python operator for compile-time operands).
_BINARY_OPS: dict[type, tuple[str | None, str | None, Callable[[Any, Any], Any]]] = {
    ast.Add: ("__add__", "__radd__", operator.add),
    ast.Sub: ("__sub__", "__rsub__", operator.sub),
    ast.Mult: ("__mul__", "__rmul__", operator.mul),
    ast.Div: ("__truediv__", "__rtruediv__", operator.truediv),
    ast.FloorDiv: ("__floordiv__", "__rfloordiv__", operator.floordiv),
    ast.Mod: ("__mod__", "__rmod__", operator.mod),
    ast.BitAnd: ("__and__", "__rand__", operator.and_),
    ast.BitOr: ("__or__", "__ror__", operator.or_),
    ast.BitXor: ("__xor__", "__rxor__", operator.xor),
    ast.LShift: ("__lshift__", "__rlshift__", operator.lshift),
    ast.RShift: ("__rshift__", "__rrshift__", operator.rshift),
    # Only on compile-time values, as in Triton: tensors have no ** or @ (tl.dot is the matrix product).
    ast.Pow: (None, None, operator.pow),
    ast.MatMult: (None, None, operator.matmul),
}
_OPERATOR_SYMBOLS = {ast.Pow: "**", ast.MatMult: "@"}

# Attributes of a scalar tensor that a Python number in a kernel has too (Triton makes such numbers tensors).
_SCALAR_TENSOR_ATTRIBUTES = frozenset({"dtype", "type", "to", "cast", "item"})

# ast comparison -> (tensor method, method to call on the right operand when only it is a tensor, Python operator).
_COMPARE_OPS: dict[type, tuple[str, str, Callable[[Any, Any], Any]]] = {
    ast.Eq: ("__eq__", "__eq__", operator.eq),
    ast.NotEq: ("__ne__", "__ne__", operator.ne),
    ast.Lt: ("__lt__", "__gt__", operator.lt),
    ast.LtE: ("__le__", "__ge__", operator.le),
    ast.Gt: ("__gt__", "__lt__", operator.gt),
    ast.GtE: ("__ge__", "__le__", operator.ge),
}

_UNARY_OPS: dict[type, tuple[str, Callable[[Any], Any]]] = {
    ast.USub: ("__neg__", operator.neg),
    ast.UAdd: ("__pos__", operator.pos),
    ast.Invert: ("__invert__", operator.invert),
    ast.Not: ("__not__", operator.not_),
}

_UNSUPPORTED: dict[type, str] = {
    ast.Break: "'break' outside a loop",
    ast.Continue: "'continue' outside a loop",
    ast.Try: "try/except is not supported in a kernel",
    ast.TryStar: "try/except* is not supported in a kernel",
    ast.Raise: "'raise' is not supported in a kernel (use tl.static_assert for compile-time checks)",
    ast.With: "'with' is not supported in a kernel",
    ast.AsyncWith: "'async with' is not supported in a kernel",
    ast.AsyncFor: "'async for' is not supported in a kernel",
    ast.Lambda: "lambda is not supported in a kernel (define a @tessel.jit function)",
    ast.FunctionDef: "nested function definitions are not supported in a kernel (define a @tessel.jit function)",
    ast.AsyncFunctionDef: "nested function definitions are not supported in a kernel",
    ast.ClassDef: "class definitions are not supported in a kernel",
    ast.Global: "'global' is not supported in a kernel",
    ast.Nonlocal: "'nonlocal' is not supported in a kernel",
    ast.Yield: "'yield' is not supported in a kernel",
    ast.YieldFrom: "'yield from' is not supported in a kernel",
    ast.Await: "'await' is not supported in a kernel",
    ast.Delete: "'del' is not supported in a kernel",
    ast.Import: "'import' is not supported in a kernel (import at module level)",
    ast.ImportFrom: "'import' is not supported in a kernel (import at module level)",
    ast.SetComp: "set comprehensions are not supported in a kernel",
    ast.DictComp: "dict comprehensions are not supported in a kernel",
    ast.Dict: "dict literals are not supported in a kernel",
    ast.Set: "set literals are not supported in a kernel",
    ast.NamedExpr: "assignment expressions (:=) are not supported in a kernel",
    ast.Match: "'match' is not supported in a kernel",
    ast.Starred: "'*' unpacking is only supported in call arguments",
}


def generate(fn: JITFunction, builder: Any, arg_types: list[str], constexprs: dict[str, Any],
             name: str | None = None) -> None:
    """Generates the kernel `fn` into `builder`, named `name` (the function's name by default): the parameters
    named in `constexprs` are compile-time values, the others take `arg_types` in order."""
    CodeGenerator(fn, builder, {}, is_kernel=True, depth=0, loc=None, callees={}).generate_kernel(
        arg_types, constexprs, name)


class _BoundJITMethod:
    """`x.sum` for a tensor `x`: a @jit tensor method waiting for its call, with `x` as its first argument."""

    def __init__(self, fn: JITFunction, receiver: tensor) -> None:
        self.fn = fn
        self.receiver = receiver


class _Slot:
    """One variable (or a return value) flowing out of an if or around a loop, flattened into leaves. A leaf is a
    tensor or a Python value; `tensors[i]` is that leaf as a tensor (Python numbers made constants) or None for a
    Python value that cannot become one (None, a dtype, a string ...)."""

    def __init__(self, value: Any, leaves: list[Any], tree: Any, tensors: list[tensor | None]) -> None:
        self.value = value
        self.leaves = leaves
        self.tree = tree
        self.tensors = tensors


class CodeGenerator(ast.NodeVisitor):
    """Generates one function body: the kernel itself, or one inlined call of a @jit function."""

    def __init__(self, fn: JITFunction, builder: Any, scope: dict[str, Any], *, is_kernel: bool, depth: int,
                 loc: tuple[str, int, int] | None, callees: dict[Any, Any]) -> None:
        self.fn = fn
        # The kernel's @jit(noinline=True) functions generated so far, by specialization: (name, result tree,
        # result leaves: _RESULT for each tensor, the Python values as they are).
        self.callees = callees
        self.builder = builder
        self.scope = scope
        self.is_kernel = is_kernel
        self.depth = depth
        self.returned = False
        self.ret_value: Any = None
        self.loop_depth = 0
        # The call of the expression statement being generated: a call whose value is dropped.
        self._unused_call: ast.Call | None = None
        # Names that went out of scope at the end of a run-time if or loop, and why: for a helpful NameError.
        self._out_of_scope: dict[str, str] = {}
        self._loc = loc
        self._globals = fn.fn.__globals__
        self._nonlocals = inspect.getclosurevars(fn.fn).nonlocals

    # ------------------------------------------------------------------------------------ locations and errors

    def _node_loc(self, node: ast.AST) -> tuple[str, int, int]:
        return (self.fn.file, self.fn.first_line + node.lineno - 1, self.fn.indent + node.col_offset + 1)

    def _set_loc(self, loc: tuple[str, int, int]) -> None:
        self._loc = loc
        self.builder.set_loc(*loc)

    def _at(self, node: ast.AST, fn: Callable[..., Any], *args: Any) -> Any:
        """Runs fn(*args) with the builder's location at `node`; any error becomes a CompilationError there."""
        outer = self._loc
        self._set_loc(self._node_loc(node))
        try:
            return fn(*args)
        except CompilationError:
            raise  # already located, at the innermost node (possibly in an inlined callee)
        except core.StaticAssertionFailure as e:
            # The assertion's own message says it all: no cause, as in Triton.
            raise self._error(node, e) from None
        except Exception as e:
            raise self._error(node, e) from e
        finally:
            if outer is not None:
                self._set_loc(outer)

    def _error(self, node: ast.AST, error: Exception) -> CompilationError:
        if isinstance(error, (_C.CompileError, UnsupportedError, core.StaticAssertionFailure)):
            message = str(error)
        else:
            message = f"{type(error).__name__}: {error}"
        # Triton's classes: a failed static assertion and an unsupported construct have their own.
        kind = CompileTimeAssertionFailure if isinstance(error, core.StaticAssertionFailure) else \
            UnsupportedLanguageConstruct if isinstance(error, UnsupportedError) else CompilationError
        lines = self.fn.src_lines
        source_line = lines[node.lineno - 1].rstrip() if node.lineno <= len(lines) else ""
        return kind(self.fn.__name__, self.fn.file, self.fn.first_line + node.lineno - 1, node.col_offset,
                    source_line, message)

    def visit(self, node: ast.AST) -> Any:
        if not hasattr(node, "lineno"):
            return super().visit(node)
        return core._unwrap(self._at(node, super().visit, node))

    def generic_visit(self, node: ast.AST) -> Any:
        raise UnsupportedError(_UNSUPPORTED.get(type(node),
                                                f"unsupported Python construct in a kernel: {type(node).__name__}"))

    # ---------------------------------------------------------------------------------------------- functions

    def generate_kernel(self, arg_types: list[str], constexprs: dict[str, Any], name: str | None = None) -> None:
        definition = self.fn.definition
        # A pointer parameter annotated tl.const is a constant pointer ("*k"): stores through it are errors.
        const = {p.name for p in self.fn.params if p.is_const}
        runtime = [n for n in self.fn.arg_names if n not in constexprs]
        arg_types = ["*k" + t[1:] if n in const and t.startswith("*") and not t.startswith("*k") else t
                     for n, t in zip(runtime, arg_types)] + list(arg_types[len(runtime):])
        # A tensor descriptor argument is passed as several (its base, shape and strides).
        # A tuple argument by its run-time leaves (runtime/tuple_args.py).
        descriptors = [None if tuple_args.is_tuple_type(t) else host_descriptor_type.parse(t) for t in arg_types]
        flat = [part for t, d in zip(arg_types, descriptors)
                for part in (tuple_args.runtime_types(t) if tuple_args.is_tuple_type(t) else
                             d.arg_types if d else [t])]
        handles = self._at(definition, self.builder.create_function, name or self.fn.__name__, flat)
        arguments = iter(enumerate(handles))
        types = iter(zip(arg_types, descriptors))
        for name in self.fn.arg_names:
            if name in constexprs:
                self.scope[name] = constexprs[name]
                continue
            arg_type, descriptor = next(types)
            if tuple_args.is_tuple_type(arg_type):
                self.scope[name] = tuple_args.rebuild(arg_type, (tensor(h) for _, h in arguments))
            elif descriptor is not None:
                parts = [next(arguments) for _ in descriptor.arg_types]
                self.scope[name] = descriptor.make([tensor(h) for _, h in parts], parts[0][0])
            else:
                self.scope[name] = tensor(next(arguments)[1])
        self._walk(definition.body)
        self._at(definition, self.builder.finish_function)

    def call_jit_function(self, fn: JITFunction, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """Inlines a call of `fn`; returns what it returns (a tensor, a Python value, a tuple or None)."""
        if self.depth >= _MAX_INLINE_DEPTH:
            raise UnsupportedError(f"@jit calls nested deeper than {_MAX_INLINE_DEPTH}: is {fn.__name__} recursive?")
        try:
            bound = fn.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{fn.__name__}(): {e}") from None
        bound.apply_defaults()
        scope = {}
        for name, value in bound.arguments.items():
            value = core._unwrap(value)
            if name in fn.constexpr_names and _contains_tensor(value):
                raise UnsupportedError(f"argument '{name}' of {fn.__name__} is tl.constexpr, but the value passed is "
                                       f"{core._describe(value)}")
            scope[name] = value
        # A combine or map_elementwise body runs per element: calls there are inlined.
        if fn.noinline and not self.builder.inside_element_region():
            called = self._call_function(fn, scope)
            if called is not _MISSING:
                return called
        return self._walk_callee(fn, scope).ret_value

    def _walk_callee(self, fn: JITFunction, scope: dict[str, Any]) -> CodeGenerator:
        """Generates `fn`'s body with its parameters bound as `scope`, at the insertion point."""
        callee = CodeGenerator(fn, self.builder, scope, is_kernel=False, depth=self.depth + 1, loc=self._loc,
                               callees=self.callees)
        error: Exception | None = None
        try:
            callee._walk(fn.definition.body)
        except CompilationError as e:
            if not _is_library_file(e.file):
                raise
            # An error inside tessel's own @jit library (tl.sum, tl.argmax, ...) is the caller's: report it at the
            # call, one level up at a time until the line is the user's, with the original message.
            error = e.__cause__ if isinstance(e.__cause__, Exception) else \
                core.StaticAssertionFailure(e.error_message) if isinstance(e, CompileTimeAssertionFailure) else \
                UnsupportedError(e.error_message)
        if error is not None:
            raise error
        return callee

    def _call_function(self, fn: JITFunction, scope: dict[str, Any]) -> Any:
        """A call of a @jit(noinline=True) function: the arguments' tensors are passed, everything else (Python
        values, the shape of tuples and aggregates) specializes the function, which is generated once per
        specialization. Returns _MISSING for arguments that cannot be keyed (unhashable Python values, objects of
        tensors that are not aggregates): that call is inlined."""
        names = list(scope)
        leaves, tree = _flatten(tuple(scope[name] for name in names))
        static = tuple(None if isinstance(leaf, tensor) else leaf for leaf in leaves)
        types = tuple(leaf.handle.dtype + str(leaf.shape) if isinstance(leaf, tensor) else None for leaf in leaves)
        key = (fn, tuple(names), tree, types, tuple(type(leaf) for leaf in static), static)
        try:
            hash(key)
        except TypeError:
            return _MISSING
        if any(_holds_tensors(leaf) for leaf in static):
            return _MISSING  # an object of the caller's tensors that is not an aggregate: inlined
        args = [leaf.handle for leaf in leaves if isinstance(leaf, tensor)]
        if key in self.callees and self.callees[key] is None:
            raise UnsupportedError(f"{fn.__name__} calls itself with the same argument types: recursion is not "
                                   "supported")
        if key not in self.callees:
            if self.depth >= _MAX_INLINE_DEPTH:
                raise UnsupportedError(f"@jit calls nested deeper than {_MAX_INLINE_DEPTH}: is {fn.__name__} "
                                       "recursive?")
            self.callees[key] = None  # being generated
            name = f"{fn.__name__}_{len(self.callees) - 1}"
            params = iter(self.builder.begin_callee(name, args))
            bound = _unflatten(tree, iter([tensor(next(params)) if isinstance(leaf, tensor) else leaf
                                           for leaf in leaves]))
            callee = self._walk_callee(fn, dict(zip(names, bound)))
            ret_leaves, ret_tree = _flatten(callee.ret_value)
            self.builder.finish_callee([leaf.handle for leaf in ret_leaves if isinstance(leaf, tensor)])
            self.callees[key] = (name, ret_tree, [_RESULT if isinstance(leaf, tensor) else leaf
                                                  for leaf in ret_leaves])
        name, ret_tree, ret_static = self.callees[key]
        results = iter(self.builder.call(name, args))
        return _unflatten(ret_tree, iter([tensor(next(results)) if leaf is _RESULT else leaf
                                          for leaf in ret_static]))

    # --------------------------------------------------------------------------------------------- statements

    def _walk(self, statements: list[ast.stmt]) -> None:
        """Generates a statement list, stopping at a `return`.

        A compile-time `if` is replaced by its taken branch in the list being walked, so that a `return` inside it
        ends this function and the statements after the `if` run only when it does not. A run-time `if` that
        contains a `return` takes the rest of the list into both of its branches (the IR's if has no early exit)."""
        pending = list(statements)
        i = 0
        while i < len(pending) and not self.returned:
            statement = pending[i]
            if isinstance(statement, ast.If):
                taken = self._at(statement, self._visit_if, statement, pending[i + 1:])
                if taken is not None:
                    pending[i:i + 1] = taken
                    continue
            else:
                self.visit(statement)
            i += 1

    def _visit_if(self, node: ast.If, rest: list[ast.stmt]) -> list[ast.stmt] | None:
        """Returns the taken branch of a compile-time `if`; generates a run-time one and returns None."""
        cond = self.visit(node.test)
        if not isinstance(cond, tensor):
            return node.body if cond else node.orelse
        if _contains_return(node):
            if self.loop_depth:
                raise UnsupportedError("'return' inside a loop is not supported")
            self._runtime_if(node, cond, node.body + rest, node.orelse + rest, tail=True)
        else:
            self._runtime_if(node, cond, node.body, node.orelse, tail=False)
        return None

    def _runtime_if(self, node: ast.If, cond: tensor, then_body: list[ast.stmt], else_body: list[ast.stmt],
                    tail: bool) -> None:
        """An if on a tensor. With `tail`, both branches run to the end of the function and the if yields the
        return value; otherwise it yields the variables assigned in a branch that both branches leave defined."""
        names = [] if tail else _assigned_names(then_body + else_body)
        saved = self.scope
        self.builder.begin_if(cond.handle)
        then_scope, then_ret = self._walk_branch(saved, then_body)
        then_slots = self._slots(then_scope, names, then_ret, tail)
        self.builder.begin_else()
        else_scope, else_ret = self._walk_branch(saved, else_body)
        else_slots = self._slots(else_scope, names, else_ret, tail)

        merged: dict[str, Any] = {}
        then_yields: list[Any] = []
        else_yields: list[Any] = []
        pending: list[tuple[str, _Slot, list[Any]]] = []
        for key in [k for k in then_slots if k in else_slots]:
            then_slot, else_slot = then_slots[key], else_slots[key]
            if then_slot.value is else_slot.value:
                merged[key] = then_slot.value
                continue
            label = "the return value" if key == _RETURN else _TERNARY_LABEL if key == _TERNARY else f"'{key}'"
            leaves = self._merge_leaves(label, then_slot, else_slot, then_yields, else_yields)
            pending.append((key, then_slot, leaves))
        results = [tensor(h) for h in self.builder.end_if([t.handle for t in then_yields],
                                                          [t.handle for t in else_yields])]
        for key, slot, leaves in pending:
            merged[key] = _unflatten(slot.tree, iter(results[x] if isinstance(x, _Result) else x for x in leaves))

        self.scope = dict(saved)
        if tail:
            self.returned = True
            self.ret_value = merged[_RETURN]
        else:
            # A name defined in one branch only is not available after the if (as in Triton).
            self.scope.update(merged)
            line = self.fn.first_line + node.lineno - 1
            for name in names:
                if name not in self.scope:
                    self._out_of_scope[name] = f"it is assigned in only one branch of the if at line {line}"

    def _walk_branch(self, saved: dict[str, Any], body: list[ast.stmt]) -> tuple[dict[str, Any], Any]:
        self.scope = dict(saved)
        self.returned = False
        self.ret_value = None
        self._walk(body)
        result = self.scope, self.ret_value
        self.returned = False
        self.ret_value = None
        return result

    def _slots(self, scope: dict[str, Any], names: list[str], ret: Any, tail: bool) -> dict[str, _Slot]:
        """The branch's values of `names` (or its return value), with Python numbers made constants in the branch:
        until the other branch is generated we cannot know whether they will have to be yielded."""
        values = {_RETURN: ret} if tail else {name: scope[name] for name in names if name in scope}
        return {key: self._slot(value) for key, value in values.items()}

    def _slot(self, value: Any) -> _Slot:
        leaves, tree = _flatten(value)
        return _Slot(value, leaves, tree, [leaf if isinstance(leaf, tensor) else self._constant(leaf)
                                           if _is_number(leaf) else None for leaf in leaves])

    def _constant(self, value: bool | int | float) -> tensor:
        python_value = value if isinstance(value, bool) else \
            int(value) if isinstance(value, numbers.Integral) else float(value)
        return tensor(self.builder.constant(python_value, _C.literal_type(python_value)))

    def _merge_leaves(self, label: str, then_slot: _Slot, else_slot: _Slot, then_yields: list[tensor],
                      else_yields: list[tensor]) -> list[Any]:
        """Leaves of a variable after the if: a Python value when both branches agree on it, else a `_Result`
        standing for the if result that carries it."""
        if then_slot.tree != else_slot.tree:
            raise UnsupportedError(f"{label} has a different structure in the two branches of the if: "
                                   f"{then_slot.value!r} and {else_slot.value!r}")
        leaves: list[Any] = []
        for then_leaf, else_leaf, then_t, else_t in zip(then_slot.leaves, else_slot.leaves, then_slot.tensors,
                                                        else_slot.tensors):
            if not isinstance(then_leaf, tensor) and not isinstance(else_leaf, tensor) and \
                    _same_value(then_leaf, else_leaf):
                leaves.append(then_leaf)
            elif then_t is not None and else_t is not None:
                if _type_of(then_t) != _type_of(else_t):
                    # Triton's words first (its test suites match on them), then ours.
                    types = f"{_type_of(then_t)} and {_type_of(else_t)}"
                    triton = "Ternary expression with dynamic condition has inconsistent types " + types \
                        if label == _TERNARY_LABEL else "Inconsistent return types: " + types \
                        if label == "the return value" else \
                        f"Mismatched type for {label.strip(chr(39))} between then block ({_type_of(then_t)}) and " \
                        f"else block ({_type_of(else_t)})"
                    raise UnsupportedError(f"{triton}: {label} is {_type_of(then_t)} in the then-branch and "
                                           f"{_type_of(else_t)} in the else-branch of the if: both must have the "
                                           "same type (use .to())")
                leaves.append(_Result(len(then_yields)))
                then_yields.append(then_t)
                else_yields.append(else_t)
            else:
                raise UnsupportedError(f"{label} is {then_leaf!r} in one branch of the if and {else_leaf!r} in the "
                                       "other: a compile-time value cannot depend on a run-time condition")
        return leaves

    def visit_For(self, node: ast.For) -> None:
        if node.orelse:
            raise UnsupportedError("'for ... else' is not supported in a kernel")
        if loop_exits.has_exit(node.body):
            self._walk(loop_exits.rewrite(node))
            return
        bounds, values = self._loop_iteration(node.iter)
        if bounds is not None:
            self._runtime_for(node, *bounds)
            return
        self.loop_depth += 1
        for value in values:
            self._assign(node.target, value)
            self._walk(node.body)
        self.loop_depth -= 1

    def visit_ListComp(self, node: ast.ListComp) -> list[Any]:
        return self._comprehension(node)

    def visit_GeneratorExp(self, node: ast.GeneratorExp) -> list[Any]:
        # Evaluated at once, into a list: what a kernel does with one (tuple(...), tl.tuple(...), len, unpacking)
        # takes a list as well.
        return self._comprehension(node)

    def _comprehension(self, node: ast.ListComp | ast.GeneratorExp) -> list[Any]:
        """A comprehension unrolled at compile time: its loops run over tuples, lists and ranges with compile-time
        bounds, its conditions are compile-time; its variables are its own, as in Python."""
        results: list[Any] = []
        targets = {n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
        saved = {name: self.scope[name] for name in targets if name in self.scope}

        def run(level: int) -> None:
            if level == len(node.generators):
                results.append(self.visit(node.elt))
                return
            generator = node.generators[level]
            if generator.is_async:
                raise UnsupportedError("async comprehensions are not supported in a kernel")
            bounds, values = self._loop_iteration(generator.iter)
            if bounds is not None:
                if not all(isinstance(b, int) for b in bounds):
                    raise UnsupportedError("a comprehension is unrolled at compile time: its range needs "
                                           f"compile-time bounds, not {ast.unparse(generator.iter)}")
                values = builtins.range(*bounds)
            for value in values:
                self._assign(generator.target, value)
                conditions = [self.visit(c) for c in generator.ifs]
                if any(isinstance(c, tensor) for c in conditions):
                    raise UnsupportedError("a comprehension's 'if' needs a compile-time condition, not a tensor")
                if all(conditions):
                    run(level + 1)

        try:
            run(0)
        finally:
            for name in targets:
                if name in saved:
                    self.scope[name] = saved[name]
                else:
                    self.scope.pop(name, None)
        return results

    def _loop_iteration(self, iterable: ast.expr) -> tuple[tuple[Any, Any, Any, int | None] | None, Any]:
        """((start, end, step, num_stages), None) for `range(...)` / `tl.range(...)`, which become run-time loops
        (num_stages: tl.range's, or None), or
        (None, values) for what is unrolled: `tl.static_range(...)` and compile-time tuples and lists."""
        if isinstance(iterable, ast.Call):
            fn = self.visit(iterable.func)
            if fn is builtins.range or fn is core.range or fn is core.static_range:
                args = [self.visit(a) for a in iterable.args]
                kwargs = {kw.arg: self.visit(kw.value) for kw in iterable.keywords}
                if fn is core.static_range:
                    bounds = core.static_range(*args, **kwargs).args
                    return None, builtins.range(*(core._int_arg(b, "tl.static_range() bound") for b in bounds))
                if fn is builtins.range and (kwargs or not 1 <= len(args) <= 3):
                    raise TypeError(f"range() takes 1 to 3 positional arguments: {ast.unparse(iterable)}")
                loop = core.range(*args, **kwargs)
                args = list(loop.args)
                start, end, step = [0, *args, 1] if len(args) == 1 else [*args, 1] if len(args) == 2 else args
                return (start, end, step, loop.num_stages), None
        value = self.visit(iterable)
        if isinstance(value, (tuple, list, builtins.range)):
            return None, value
        raise UnsupportedError(f"a kernel's 'for' must iterate over range(...), tl.range(...), "
                               f"tl.static_range(...) or a compile-time tuple, not {core._describe(value)}")

    def _runtime_for(self, node: ast.For, start: Any, end: Any, step: Any, num_stages: int | None) -> None:
        if not isinstance(node.target, ast.Name):
            raise UnsupportedError("the target of a run-time 'for' must be a single name")
        reverse = False
        if not isinstance(step, tensor):
            if step == 0:
                raise ValueError("range() step must not be zero")
            # The IR loop needs a positive step: iterate i over range(end, start, -step) and use end - i + start.
            if step < 0:
                reverse = True
                start, end, step = end, start, -step
        saved = self.scope
        inits = self._loop_inits(node.body)
        iv, region_args = self.builder.begin_for(core._operand(start, "range() start"),
                                                 core._operand(end, "range() end"),
                                                 core._operand(step, "range() step"),
                                                 _handles(inits), num_stages)
        self._bind_carried(saved, inits, region_args)
        index = tensor(iv)
        if reverse:
            index = core._binary("add", core._binary("sub", end, index, self.builder, False), start, self.builder,
                                 False)
        self.scope[node.target.id] = index
        self._walk_loop_body(node.body)
        self._end_loop(node, saved, inits, self.builder.end_for(self._loop_yields(inits)))

    def visit_While(self, node: ast.While) -> None:
        if node.orelse:
            raise UnsupportedError("'while ... else' is not supported in a kernel")
        node = self._strip_condition(node)
        if loop_exits.has_exit(node.body):
            self._walk(loop_exits.rewrite(node))
            return
        saved = self.scope
        inits = self._loop_inits(node.body)
        self._bind_carried(saved, inits, self.builder.begin_while(_handles(inits)))
        # The condition is evaluated in the loop header, on the carried values of the current iteration.
        cond = self.visit(node.test)
        self._bind_carried(saved, inits, self.builder.while_condition(core._operand(cond, "while condition")))
        self._walk_loop_body(node.body)
        self._end_loop(node, saved, inits, self.builder.end_while(self._loop_yields(inits)))

    def _strip_condition(self, node: ast.While) -> ast.While:
        """`while tl.condition(c, disable_licm=...)`: the loop of `c` (disable_licm, a scheduling hint that changes
        no result, is accepted and not acted on)."""
        test = node.test
        if not (isinstance(test, ast.Call) and self.visit(test.func) is core.condition):
            return node
        if len(test.args) != 1 or any(k.arg != "disable_licm" for k in test.keywords):
            raise TypeError(f"tl.condition(cond, disable_licm=False) takes one condition: {ast.unparse(test)}")
        return ast.copy_location(ast.While(test=test.args[0], body=node.body, orelse=[]), node)

    def _loop_inits(self, body: list[ast.stmt]) -> dict[str, _Slot]:
        """The loop-carried variables: those the body assigns that exist before the loop, flattened, with Python
        numbers made constants (before the loop, so that the loop can carry them)."""
        return {name: self._slot(self.scope[name]) for name in _assigned_names(body) if name in self.scope}

    def _bind_carried(self, saved: dict[str, Any], inits: dict[str, _Slot], handles: list[Any]) -> None:
        """Starts a new scope from `saved` where the carried variables are `handles` (a region's arguments or the
        loop's results); their compile-time leaves stay as they were."""
        self.scope = dict(saved)
        values = iter(tensor(h) for h in handles)
        for name, slot in inits.items():
            self.scope[name] = _unflatten(slot.tree, iter(next(values) if t is not None else leaf
                                                          for leaf, t in zip(slot.leaves, slot.tensors)))

    def _walk_loop_body(self, body: list[ast.stmt]) -> None:
        self.loop_depth += 1
        self._walk(body)
        self.loop_depth -= 1

    def _end_loop(self, node: ast.stmt, saved: dict[str, Any], inits: dict[str, _Slot], results: list[Any]) -> None:
        line = self.fn.first_line + node.lineno - 1
        for name in self.scope.keys() - saved.keys():
            self._out_of_scope[name] = f"it is only defined inside the loop at line {line}"
        self._bind_carried(saved, inits, results)

    def _loop_yields(self, inits: dict[str, _Slot]) -> list[Any]:
        """The handles a loop body yields: each carried variable's value at the end of the body."""
        return [t.handle for name, init in inits.items()
                for t in self._carried_yields(name, init, self._slot(self.scope[name]))]

    def _carried_yields(self, name: str, init: _Slot, final: _Slot) -> list[tensor]:
        """The values of a loop-carried variable at the end of the body, checked against its value before."""
        if init.tree != final.tree:
            raise UnsupportedError(f"loop-carried variable '{name}' changes structure in the loop: {init.value!r} "
                                   f"before it, {final.value!r} at the end of its body")
        yields = []
        for init_leaf, init_t, final_leaf, final_t in zip(init.leaves, init.tensors, final.leaves, final.tensors):
            if init_t is None:
                if isinstance(final_leaf, tensor) or not _same_value(init_leaf, final_leaf):
                    raise UnsupportedError(f"loop-carried variable '{name}' is the compile-time value {init_leaf!r} "
                                           f"before the loop and {final_leaf!r} in it; it cannot change in a "
                                           "run-time loop")
                continue
            if final_t is None or _type_of(final_t) != _type_of(init_t):
                final_type = _type_of(final_t) if final_t is not None else repr(final_leaf)
                raise UnsupportedError(f"loop-carried variable '{name}' is {_type_of(init_t)} before the loop and "
                                       f"{final_type} at the end of its body: it must keep its type across "
                                       "iterations (use .to() or initialize it with the right type)")
            yields.append(final_t)
        return yields

    def visit_Return(self, node: ast.Return) -> None:
        if self.loop_depth:
            raise UnsupportedError("'return' inside a loop is not supported")
        value = None if node.value is None else self.visit(node.value)
        if self.is_kernel and value is not None:
            raise UnsupportedError("a kernel cannot return a value")
        self.ret_value = value
        self.returned = True

    def visit_Assign(self, node: ast.Assign) -> None:
        value = self.visit(node.value)
        for target in node.targets:
            self._assign(target, value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is None:
            return
        value = self.visit(node.value)
        annotation = node.annotation
        text = annotation.value if isinstance(annotation, ast.Constant) else ast.unparse(annotation)
        if isinstance(text, str) and text.strip().split(".")[-1] == "constexpr" and _contains_tensor(value):
            raise UnsupportedError(f"'{ast.unparse(node.target)}' is annotated tl.constexpr, but its value is "
                                   f"{core._describe(value)}")
        self._assign(node.target, value)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if not isinstance(node.target, ast.Name):
            raise UnsupportedError(f"augmented assignment to {ast.unparse(node.target)} is not supported: only to a "
                                   "name (tensors are values, not containers)")
        current = self._load(node.target.id)
        self.scope[node.target.id] = self._binary(node.op, current, self.visit(node.value))

    def _assign(self, target: ast.expr, value: Any) -> None:
        if isinstance(target, ast.Name):
            self.scope[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            if any(isinstance(t, ast.Starred) for t in target.elts):
                raise UnsupportedError("starred assignment (a, *b = ...) is not supported in a kernel")
            if isinstance(value, tensor):
                raise UnsupportedError(f"cannot unpack {value!r} into {len(target.elts)} names")
            values = list(value)
            if len(values) != len(target.elts):
                raise ValueError(f"cannot unpack {len(values)} values into {len(target.elts)} names")
            for t, v in zip(target.elts, values):
                self._assign(t, v)
        elif isinstance(target, ast.Subscript):
            raise UnsupportedError(f"assignment to {ast.unparse(target)} is not supported: tensors are values, not "
                                   "containers (build a new one, e.g. with tl.where)")
        else:
            raise UnsupportedError(f"assignment to {ast.unparse(target)} is not supported in a kernel")

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Call):
            self._unused_call = node.value
        self.visit(node.value)

    def visit_Pass(self, node: ast.Pass) -> None:
        pass

    def visit_Assert(self, node: ast.Assert) -> None:
        cond = self.visit(node.test)
        if isinstance(cond, tensor):
            # A run-time condition is a device assertion (checked in kernels compiled with debug), as in Triton; without
            # a message, the condition's source says what failed.
            message = self.visit(node.msg) if node.msg is not None else ast.unparse(node.test)
            core.device_assert(cond, message, _builder=self.builder)
            return
        if not cond:
            raise core.StaticAssertionFailure(self.visit(node.msg) if node.msg is not None else
                                              ast.unparse(node.test))

    # -------------------------------------------------------------------------------------------- expressions

    def visit_Constant(self, node: ast.Constant) -> Any:
        return node.value

    def visit_Name(self, node: ast.Name) -> Any:
        return self._load(node.id)

    def _load(self, name: str) -> Any:
        if name in self.scope:
            return self.scope[name]
        for namespace in (self._nonlocals, self._globals):
            if name in namespace:
                return _global_value(name, namespace[name], namespace is self._nonlocals,
                                     _annotated_constexpr(self._globals, name) and namespace is self._globals)
        if name in _PYTHON_BUILTINS:
            return _PYTHON_BUILTINS[name]
        if hasattr(builtins, name):
            raise UnsupportedError(f"the Python builtin '{name}' is not supported in a kernel")
        reason = self._out_of_scope.get(name)
        raise NameError(f"name '{name}' is not defined" + (f": {reason}" if reason else ""))

    def visit_Tuple(self, node: ast.Tuple) -> tuple:
        return tuple(self.visit(e) for e in node.elts)

    def visit_List(self, node: ast.List) -> list:
        return [self.visit(e) for e in node.elts]

    def visit_JoinedStr(self, node: ast.JoinedStr) -> str:
        return "".join(str(self.visit(v)) for v in node.values)

    def visit_FormattedValue(self, node: ast.FormattedValue) -> str:
        value = self.visit(node.value)
        if node.conversion != -1:
            value = {ord("s"): str, ord("r"): repr, ord("a"): ascii}[node.conversion](value)
        return format(value, self.visit(node.format_spec) if node.format_spec is not None else "")

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        return self._binary(node.op, self.visit(node.left), self.visit(node.right))

    def _binary(self, op: ast.operator, lhs: Any, rhs: Any) -> Any:
        method, reflected, python_op = _BINARY_OPS[type(op)]
        if isinstance(lhs, tensor) or isinstance(rhs, tensor):
            if method is None:
                raise UnsupportedError(f"operator {_OPERATOR_SYMBOLS[type(op)]} is not supported on tensors"
                                       + (" (use tl.dot)" if isinstance(op, ast.MatMult) else ""))
            if isinstance(lhs, tensor):
                return getattr(lhs, method)(rhs, _builder=self.builder)
            return getattr(rhs, reflected)(lhs, _builder=self.builder)
        return python_op(lhs, rhs)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Any:
        operand = self.visit(node.operand)
        method, python_op = _UNARY_OPS[type(node.op)]
        if isinstance(operand, tensor):
            return getattr(operand, method)(_builder=self.builder)
        return python_op(operand)

    def visit_BoolOp(self, node: ast.BoolOp) -> Any:
        """`and`/`or` as Triton's code generator does them: the operands are walked in order; a compile-time one ends
        the walk and is the result where Python's short circuit stops (`False and ...`, `True or ...`), and is dropped
        otherwise; the tensors left are combined from the right with logical_and/logical_or, which take booleans only
        (the builder checks). On blocks Triton deprecates them with a warning (use `&`/`|`): given here too."""
        is_and = isinstance(node.op, ast.And)
        tensors = []
        value = None
        for value_node in node.values:
            value = self.visit(value_node)
            if not isinstance(value, tensor):
                if bool(value) != is_and:
                    return value
                continue
            if value.handle.is_block:
                warnings.warn_explicit("Logical operators 'and' and 'or' are deprecated for non-scalar tensors; please "
                                       "use '&' or '|' instead", category=UserWarning, filename=self.fn.file,
                                       lineno=self.fn.first_line + node.lineno - 1, source=ast.unparse(node))
            tensors.append(value)
        if not tensors:
            return value  # every operand was a compile-time value that did not stop the walk: the last one
        result = tensors.pop()
        while tensors:
            lhs = tensors.pop()
            result = lhs.logical_and(result, _builder=self.builder) if is_and else \
                lhs.logical_or(result, _builder=self.builder)
        return result

    def visit_Compare(self, node: ast.Compare) -> Any:
        """Chained comparisons `a < b < c` mean `a < b and b < c`, with `b` evaluated once."""
        left = self.visit(node.left)
        result: Any = None
        for op, comparator in zip(node.ops, node.comparators):
            if result is not None and not isinstance(result, tensor) and not result:
                return result
            right = self.visit(comparator)
            value = self._compare(op, left, right)
            result = value if result is None or not isinstance(result, tensor) else \
                result.logical_and(value, _builder=self.builder)
            left = right
        return result

    def _compare(self, op: ast.cmpop, lhs: Any, rhs: Any) -> Any:
        if isinstance(op, ast.Is):
            return lhs is rhs
        if isinstance(op, ast.IsNot):
            return lhs is not rhs
        if isinstance(op, (ast.In, ast.NotIn)):
            if _contains_tensor(lhs) or _contains_tensor(rhs):
                raise UnsupportedError("'in' is only supported on compile-time values")
            return (lhs in rhs) if isinstance(op, ast.In) else (lhs not in rhs)
        method, reflected, python_op = _COMPARE_OPS[type(op)]
        if isinstance(lhs, tensor):
            return getattr(lhs, method)(rhs, _builder=self.builder)
        if isinstance(rhs, tensor):
            return getattr(rhs, reflected)(lhs, _builder=self.builder)
        return python_op(lhs, rhs)

    def visit_IfExp(self, node: ast.IfExp) -> Any:
        cond = self.visit(node.test)
        if isinstance(cond, tensor) and cond.shape:
            # A block condition picks per element: both sides are computed.
            return core.where(cond, self.visit(node.body), self.visit(node.orelse), _builder=self.builder)
        if isinstance(cond, tensor):
            # A run-time scalar condition runs one side only, as an if (Triton's): a side may store, or be None.
            def assign(value: ast.expr) -> list[ast.stmt]:
                target = ast.copy_location(ast.Name(id=_TERNARY, ctx=ast.Store()), value)
                return [ast.copy_location(ast.Assign(targets=[target], value=value), value)]
            saved = self.scope.get(_TERNARY, _MISSING)
            self._runtime_if(ast.copy_location(ast.If(test=node.test, body=[], orelse=[]), node), cond,
                             assign(node.body), assign(node.orelse), tail=False)
            result = self.scope.pop(_TERNARY)
            self._out_of_scope.pop(_TERNARY, None)
            if saved is not _MISSING:
                self.scope[_TERNARY] = saved
            return result
        return self.visit(node.body) if cond else self.visit(node.orelse)

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        obj = self.visit(node.value)
        if isinstance(obj, tensor):
            return self._tensor_attribute(obj, node.attr)
        if node.attr == "value" and not hasattr(obj, "value"):
            return obj  # `BLOCK.value` on a constexpr, which the generator holds unwrapped (Triton compatibility)
        if _is_number(obj) and node.attr in _SCALAR_TENSOR_ATTRIBUTES:
            # A Python number assigned in a kernel is a scalar tensor in Triton: `x = 1; x.dtype` is int32 and
            # `x.to(tl.float16)` a cast. Its type is the literal's (int32, int64 or uint64; fp32 or fp64; int1).
            if node.attr == "dtype":
                return core.dtype_from_ir(_C.literal_type(obj if isinstance(obj, bool) else
                                                          int(obj) if isinstance(obj, numbers.Integral) else
                                                          float(obj)))
            return self._tensor_attribute(self._constant(obj), node.attr)
        return getattr(obj, node.attr)

    def _tensor_attribute(self, obj: tensor, name: str) -> Any:
        if name == "T":
            return core.permute(obj, list(reversed(range(len(obj.shape)))), _builder=self.builder)
        value = getattr(obj, name)
        return _BoundJITMethod(value, obj) if isinstance(value, JITFunction) else value

    def visit_Subscript(self, node: ast.Subscript) -> Any:
        obj = self.visit(node.value)
        index = self.visit(node.slice)
        if isinstance(obj, tensor):
            return obj.__getitem__(index, _builder=self.builder)
        if _contains_tensor(index):
            raise UnsupportedError("indexing a tuple or list needs a compile-time index, not a tensor")
        return obj[index]

    def visit_Slice(self, node: ast.Slice) -> slice:
        return slice(*(None if part is None else self.visit(part) for part in (node.lower, node.upper, node.step)))

    def visit_Call(self, node: ast.Call) -> Any:
        fn = self.visit(node.func)
        must_use = getattr(fn, "_must_use_result", None)
        if must_use and node is self._unused_call:
            why = f" {must_use}" if isinstance(must_use, str) else ""
            raise UnsupportedError(f"The result of {ast.unparse(node.func)} is not being used.{why}")
        args: list[Any] = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                values = self.visit(arg.value)
                if isinstance(values, tensor):
                    raise UnsupportedError(f"cannot unpack {values!r} with '*'")
                args.extend(values)
            else:
                args.append(self.visit(arg))
        kwargs: dict[str, Any] = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                kwargs.update(self.visit(keyword.value))
            else:
                kwargs[keyword.arg] = self.visit(keyword.value)
        return self.call(fn, args, kwargs)

    def call(self, fn: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if isinstance(fn, JITFunction):
            return self.call_jit_function(fn, args, kwargs)
        if isinstance(fn, _BoundJITMethod):
            return self.call_jit_function(fn.fn, [fn.receiver, *args], kwargs)
        if core.is_builtin(fn):
            if getattr(fn, core._NEEDS_GENERATOR_ATTR):
                kwargs["_generator"] = self
            return fn(*args, _builder=self.builder, **kwargs)
        has_tensor = _contains_tensor(args) or _contains_tensor(list(kwargs.values()))
        if isinstance(fn, ConstexprFunction) and has_tensor:
            raise UnsupportedError(f"{fn.__qualname__} is a constexpr function: it takes compile-time values, not "
                                   "tensors (their values are only known at run time)")
        if fn is builtins.min or fn is builtins.max:
            return self._min_max(fn, args, kwargs) if has_tensor else fn(*args, **kwargs)
        if fn is builtins.abs and has_tensor:
            return core.abs(*args, _builder=self.builder, **kwargs)
        if fn is builtins.print:
            # As in Triton, print() in a kernel prints at run time (tl.static_print prints while compiling).
            return core.device_print(*args, _builder=self.builder, **kwargs)
        if has_tensor and not _is_structural(fn):
            if any(fn is b for b in _PYTHON_BUILTINS.values()):
                raise UnsupportedError(f"{fn.__name__}() needs compile-time values, but got a tensor (its value is "
                                       "only known at run time)")
            raise UnsupportedError(f"{getattr(fn, '__qualname__', fn)!s} is a Python function; it cannot take "
                                   "tensors (only tl.* builtins and @tessel.jit functions can)")
        # A Python function of compile-time values (a constexpr function, `math.log2(BLOCK)`): it runs now.
        return fn(*args, **kwargs)

    def _min_max(self, fn: Any, args: list[Any], kwargs: dict[str, Any]) -> tensor:
        if kwargs or len(args) < 2:
            raise UnsupportedError(f"{fn.__name__}() of tensors takes two or more positional arguments")
        combine = core.minimum if fn is builtins.min else core.maximum
        result = args[0]
        for arg in args[1:]:
            result = combine(result, arg, _builder=self.builder)
        return result


# -------------------------------------------------------------------------------------------------------- helpers

_RETURN = "<return>"  # the key of a function's return value among the variables an if yields
_TERNARY = "<ternary>"  # the variable a run-time conditional expression's if yields
_TERNARY_LABEL = "the conditional expression"
_MISSING = object()
_RESULT = object()  # a called function's result that is a tensor (returned by the call)


class _Result:
    """Placeholder for the i-th result of an if, until the builder returns it."""

    def __init__(self, index: int) -> None:
        self.index = index

    def __index__(self) -> int:
        return self.index


def _global_value(name: str, value: Any, captured: bool = False, annotated: bool = False) -> Any:
    """A global (or closure variable) read by a kernel: only values that cannot change behind a compiled kernel's
    back (tl.constexpr values, and globals annotated `X: tl.constexpr = ...`, as in Triton 3.6), or that are code
    (modules, functions, dtypes)."""
    if isinstance(value, core.constexpr):
        return value.value
    if isinstance(value, (types.ModuleType, JITFunction, core.dtype, types.BuiltinFunctionType)) or \
            core.is_builtin(value) or _is_tessel_object(value) or _is_named_tuple_class(value) or \
            isinstance(value, ConstexprFunction):
        return value
    if annotated:
        return value
    if isinstance(value, (bool, int, float, str)):
        # Triton's words ("global variable", "is not defined") first, then why.
        what = f"{name} is not defined in the kernel: the variable it captures, {name} = {value!r}," if captured \
            else f"global variable {name} = {value!r}"
        raise UnsupportedError(f"{what} is a plain Python value, which may change after the kernel is compiled; make "
                               f"it a compile-time constant: {name} = tl.constexpr({value!r})")
    raise UnsupportedError(f"{'variable' if captured else 'global variable'} {name} ({type(value).__name__}) cannot "
                           "be used in a kernel: only tl.constexpr values, modules, @jit functions, builtins, "
                           "named tuple classes and dtypes can")


def _annotated_constexpr(scope: dict[str, Any], name: str) -> bool:
    """Whether the module annotates the global `name` as a tl.constexpr (`X: tl.constexpr = 42`)."""
    from ..runtime.jit import _is_constexpr_annotation
    return _is_constexpr_annotation(scope.get("__annotations__", {}).get(name))


_PACKAGE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "")


def _is_library_file(file: str) -> bool:
    """Whether `file` is part of tessel itself (its language library), not user code."""
    return os.path.realpath(file).startswith(_PACKAGE_DIR)


def _is_tessel_object(value: Any) -> bool:
    """Classes and functions of tessel itself (tl.tensor, tl.static_range, tessel.cdiv, standard-library helpers)."""
    module = getattr(value, "__module__", None) or ""
    return module == "tessel" or module.startswith("tessel.")


def _is_named_tuple_class(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, tuple) and hasattr(value, "_fields")


def _is_structural(fn: Any) -> bool:
    """Builtins that only move values around (len of a tuple of tensors, isinstance(x, tl.tensor), ...), tl.tuple
    and named tuple classes."""
    if fn is core_tuple or _is_named_tuple_class(fn):
        return True
    return any(fn is _PYTHON_BUILTINS[name] for name in ("len", "isinstance", "tuple", "list", "getattr",
                                                         "enumerate", "zip"))


def _contains_tensor(value: Any) -> bool:
    if isinstance(value, tensor):
        return True
    if isinstance(value, (tuple, list)):
        return any(_contains_tensor(v) for v in value)
    return False


def _holds_tensors(value: Any) -> bool:
    """Whether an object's attributes hold tensors (or tuples of them)."""
    attributes = getattr(value, "__dict__", None)
    return isinstance(attributes, dict) and not isinstance(value, type) and \
        any(_contains_tensor(v) for v in attributes.values())


def _contains_return(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Return) for n in ast.walk(node))


def _assigned_names(statements: list[ast.stmt]) -> list[str]:
    """Names the statements assign anywhere (nested blocks included), in source order."""
    first_seen: dict[str, tuple[int, int]] = {}
    for statement in statements:
        for node in ast.walk(statement):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                position = (node.lineno, node.col_offset)
                if node.id not in first_seen or position < first_seen[node.id]:
                    first_seen[node.id] = position
    return sorted(first_seen, key=first_seen.__getitem__)


def _flatten(value: Any) -> tuple[list[Any], Any]:
    """(leaves, tree) of a value: tuples (named ones too), lists and aggregates (block pointers) are walked,
    anything else is a leaf."""
    if type(value) in (tuple, list) or (isinstance(value, tuple) and hasattr(type(value), "_fields")):
        leaves: list[Any] = []
        subtrees = []
        for item in value:
            item_leaves, subtree = _flatten(item)
            leaves.extend(item_leaves)
            subtrees.append(subtree)
        return leaves, (type(value), tuple(subtrees))
    if isinstance(value, core.aggregate):
        parts, structure = value._flatten()
        leaves, subtree = _flatten(tuple(parts))
        return leaves, (type(value), structure, subtree)
    return [value], None


def _unflatten(tree: Any, leaves: Any) -> Any:
    if tree is None:
        return next(leaves)
    if len(tree) == 3:
        kind, structure, subtree = tree
        return kind._unflatten(structure, _unflatten(subtree, leaves))
    kind, subtrees = tree
    items = [_unflatten(subtree, leaves) for subtree in subtrees]
    return kind(*items) if hasattr(kind, "_fields") else kind(items)  # named tuples take their fields


def _handles(slots: dict[str, _Slot]) -> list[Any]:
    return [t.handle for slot in slots.values() for t in slot.tensors if t is not None]


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real)


def _same_value(a: Any, b: Any) -> bool:
    if a is b:
        return True
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


def _type_of(t: tensor) -> str:
    return t._type_str()
