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
