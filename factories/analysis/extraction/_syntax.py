"""Small questions about test syntax that every part of the extraction asks."""

from __future__ import annotations

import ast

FUNCTION_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def callee(func: ast.expr) -> str:
    """The last name of a callee: ``f`` of ``f(...)`` and of ``mod.f(...)``."""
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def is_parameter(func: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    args = func.args
    return any(a.arg == name for a in args.posonlyargs + args.args + args.kwonlyargs)


def first_line(stmt: ast.stmt) -> int:
    """The line a definition's text starts on: its first decorator's."""
    decorators = getattr(stmt, "decorator_list", [])
    return min([stmt.lineno] + [d.lineno for d in decorators])


def is_name_in(node: ast.AST | None, names: set[str]) -> bool:
    return isinstance(node, ast.Name) and node.id in names


def is_attr_of(node: ast.AST, names: set[str]) -> bool:
    return isinstance(node, ast.Attribute) and is_name_in(node.value, names)


def str_literal(node: ast.AST | None) -> str | None:
    """The value of a string literal, else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def literal_defaults(
    func: ast.FunctionDef | ast.AsyncFunctionDef, nodes: list[ast.AST]
) -> dict[str, tuple[object]]:
    """Each parameter of ``func`` with a plain literal default (a bool, number, string or
    None) that no node of its body (``nodes``: nested defs included) rebinds: what the
    parameter holds throughout the body on a call that leaves it out."""
    args = func.args
    positional = [*args.posonlyargs, *args.args]
    defaults: dict[str, ast.expr | None] = dict(
        zip([p.arg for p in positional[len(positional) - len(args.defaults) :]], args.defaults)
    )
    defaults.update(zip([p.arg for p in args.kwonlyargs], args.kw_defaults))
    rebound = {
        node.id
        for node in nodes
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)
    }
    return {
        name: (default.value,)
        for name, default in defaults.items()
        if name not in rebound
        and isinstance(default, ast.Constant)
        and isinstance(default.value, (bool, int, float, str, type(None)))
    }


def passed_parameters(
    func: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call
) -> set[str] | None:
    """The parameters of ``func`` that ``call`` passes a value to; None where unpacking
    (``*a``, ``**m``) makes that unknown."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return None
    positional = [*func.args.posonlyargs, *func.args.args]
    return {p.arg for p in positional[: len(call.args)]} | {
        k.arg for k in call.keywords if k.arg is not None
    }
