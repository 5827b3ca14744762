"""`break` and `continue` in kernels (beyond Triton), as a rewrite of the loop's `ast` before it is generated.

The IR's loops have no early exits, so a loop whose body (not counting nested loops) breaks or continues gets two
flags: `continue` sets one and ends the statement list it is in; the statements after an `if` that may set a
flag run under `if not (flags)`; the continue flag is cleared at the start of every iteration. After a `break`, a
`for` loop runs its remaining iterations with nothing to do (the body is guarded by the break flag); a `while`
loop also stops: its condition becomes `not broke and condition`. The flags are ordinary variables, so on
compile-time conditions (unrolled loops) the guards fold away.
"""
from __future__ import annotations

import ast
import itertools

_ids = itertools.count()


def has_exit(statements: list[ast.stmt], kinds: tuple[type, ...] = (ast.Break, ast.Continue)) -> bool:
    """Whether the statements break or continue their loop (nested loops' own exits do not count)."""
    for statement in statements:
        for node in _walk_same_loop(statement):
            if isinstance(node, kinds):
                return True
    return False


def _walk_same_loop(node: ast.AST):
    """The nodes of `node` that belong to the loop it is in: not inside nested loops or function definitions."""
    yield node
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.For, ast.While, ast.AsyncFor, ast.FunctionDef, ast.AsyncFunctionDef,
                              ast.Lambda)):
            continue
        yield from _walk_same_loop(child)


def rewrite(loop: ast.For | ast.While) -> list[ast.stmt]:
    """The statements that replace `loop`: flag initializations, then the loop without break or continue."""
    uid = next(_ids)
    broke = f"_tessel_broke_{uid}" if has_exit(loop.body, (ast.Break,)) else None
    skipped = f"_tessel_continued_{uid}" if has_exit(loop.body, (ast.Continue,)) else None
    flags = [name for name in (broke, skipped) if name is not None]

    def assign(name: str, value: bool, at: ast.AST) -> ast.stmt:
        return ast.copy_location(ast.Assign(targets=[ast.Name(name, ast.Store())], value=ast.Constant(value)), at)

    def none_set(at: ast.AST) -> ast.expr:
        names = [ast.Name(name, ast.Load()) for name in flags]
        any_set = names[0] if len(names) == 1 else ast.BoolOp(ast.Or(), names)
        return ast.copy_location(ast.UnaryOp(ast.Not(), any_set), at)

    def guarded(statements: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for i, statement in enumerate(statements):
            if isinstance(statement, ast.Break):
                out.append(assign(broke, True, statement))
                return out  # the rest of the list cannot run
            if isinstance(statement, ast.Continue):
                out.append(assign(skipped, True, statement))
                return out
            if isinstance(statement, ast.If) and has_exit([statement]):
                out.append(ast.copy_location(ast.If(statement.test, guarded(statement.body) or [ast.Pass()],
                                                    guarded(statement.orelse)), statement))
                rest = statements[i + 1:]
                if rest:
                    out.append(ast.copy_location(ast.If(none_set(rest[0]), guarded(rest), []), rest[0]))
                return out
            out.append(statement)
        return out

    body = guarded(loop.body)
    before = [assign(name, False, loop) for name in flags]
    if skipped:
        body = [assign(skipped, False, loop.body[0])] + body
    if isinstance(loop, ast.While):
        test = loop.test
        if broke:
            test = ast.copy_location(ast.BoolOp(ast.And(), [ast.UnaryOp(ast.Not(), ast.Name(broke, ast.Load())),
                                                            test]), loop.test)
        new_loop = ast.While(test=test, body=body, orelse=loop.orelse)
    else:
        if broke:
            not_broke = ast.copy_location(ast.UnaryOp(ast.Not(), ast.Name(broke, ast.Load())), loop)
            body = [ast.copy_location(ast.If(not_broke, body, []), loop)]
        new_loop = ast.For(target=loop.target, iter=loop.iter, body=body, orelse=loop.orelse,
                           type_comment=loop.type_comment)
    ast.copy_location(new_loop, loop)
    statements = before + [new_loop]
    for statement in statements:
        ast.fix_missing_locations(statement)
    return statements
