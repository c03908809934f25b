"""Small questions about the shape of an AST node, independent of any walk."""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable

from factories.analysis._walk import link_parents, walk
from factories.analysis.binding import CallShape
from factories.analysis.values import Obj


def compared_to_true(node: ast.AST) -> ast.expr | None:
    """``x`` of ``x is True`` or ``x == True``, which hold where ``x`` is true (the spelling
    tests and comprehension filters use for a flag); None for any other node."""
    if (
        isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and isinstance(node.ops[0], (ast.Is, ast.Eq))
        and isinstance(node.comparators[0], ast.Constant)
        and node.comparators[0].value is True
    ):
        return node.left
    return None


def sized(node: ast.expr | None) -> ast.expr | None:
    """``x`` of ``len(x)``, ``x.shape[0]`` or ``x.size(0)``: the expressions whose value is
    the length of ``x``."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "len"
        and len(node.args) == 1
        and not node.keywords
    ):
        return node.args[0]
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "shape"
        and isinstance(node.slice, ast.Constant)
        and node.slice.value == 0
    ):
        return node.value.value
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "size"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Constant)
        and node.args[0].value == 0
    ):
        return node.func.value
    return None


def as_load(node: ast.expr) -> ast.expr:
    """The target of ``x.a += 1`` as the read it also is."""
    if isinstance(node, ast.Attribute):
        return ast.copy_location(ast.Attribute(node.value, node.attr, ast.Load()), node)
    if isinstance(node, ast.Name):
        return ast.copy_location(ast.Name(node.id, ast.Load()), node)
    return node


def literal_name(node: ast.AST | None) -> str | None:
    """The text of a string literal (``getattr(self, "x")``), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def getattr_probe(node: ast.AST | None) -> tuple[ast.expr, str] | None:
    """``(obj, "n")`` of ``getattr(obj, "n")`` or ``getattr(obj, "n", default)``."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "getattr"
        and len(node.args) in (2, 3)
        and not node.keywords
    ):
        name = literal_name(node.args[1])
        return (node.args[0], name) if name is not None else None
    return None


@functools.cache
def handler(walker: type, prefix: str, kind: type) -> Callable:
    """The walker's method for a node kind, pyflakes-style: ``<prefix><NodeName>`` (``stmt_If``,
    ``expr_Call``), else ``<prefix>other``; looked up once per kind."""
    return getattr(walker, prefix + kind.__name__, None) or getattr(walker, prefix + "other")


def is_type_test(test: ast.expr) -> bool:
    """Whether a branch condition tests a value's type (``isinstance(q, tuple)``, also
    negated or among ``and``/``or`` operands): which way it goes is the type of what is
    passed, not a value the test states."""
    return any(
        isinstance(sub, ast.Call)
        and isinstance(sub.func, ast.Name)
        and sub.func.id in ("isinstance", "issubclass")
        for sub in walk(test)
    )


def paired(target: ast.Tuple | ast.List, value: ast.expr | None) -> list[ast.expr | None]:
    """The value each name of ``a, b = x, y`` gets, when the text pairs them one to one; else
    None for each.  Not when a value reads a name the assignment binds (``a, b = b, a``): all
    values are computed before any is bound, which stores in order would not see."""
    unknown: list[ast.expr | None] = [None] * len(target.elts)
    if not isinstance(value, (ast.Tuple, ast.List)) or len(value.elts) != len(target.elts):
        return unknown
    if any(isinstance(e, ast.Starred) for e in (*target.elts, *value.elts)):
        return unknown
    bound = {n.id for n in walk(target) if isinstance(n, ast.Name)}
    if any(isinstance(n, ast.Name) and n.id in bound for n in walk(value)):
        return unknown
    return list(value.elts)


def forwards_only(func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether ``func`` takes nothing past ``self`` but ``*args``/``**kwargs`` and uses them
    only to hand them on whole (``def __init__(self, *args, **kwargs): super().__init__(*args,
    **kwargs)``): no other read, no store, no ``kwargs.pop``.  What it hands on is then the
    very call it was called with."""
    args = func.args
    variadic = {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    if len(args.posonlyargs) + len(args.args) != 1 or args.kwonlyargs or not variadic:
        return False
    handed: set[int] = set()
    for node in walk(func):
        if isinstance(node, ast.Call) and forwards(func, node):
            handed.update(id(arg.value) for arg in node.args)  # type: ignore[attr-defined]
            handed.update(id(kw.value) for kw in node.keywords)
    return all(
        id(node) in handed
        for node in walk(func)
        if isinstance(node, ast.Name) and node.id in variadic
    )


def forwards(func: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call) -> bool:
    """Whether ``call`` hands ``func``'s own ``*args`` and ``**kwargs`` on and nothing else:
    ``f(*args, **kwargs)`` (``f(*args)`` where ``func`` takes no ``**kwargs``)."""
    args = func.args
    star = [ast.Starred] if args.vararg is not None else []
    if len(call.args) != len(star) or len(call.keywords) != (args.kwarg is not None):
        return False
    if args.vararg is not None:
        first = call.args[0]
        if not (
            isinstance(first, ast.Starred)
            and isinstance(first.value, ast.Name)
            and first.value.id == args.vararg.arg
        ):
            return False
    if args.kwarg is not None:
        keyword = call.keywords[0]
        if not (
            keyword.arg is None
            and isinstance(keyword.value, ast.Name)
            and keyword.value.id == args.kwarg.arg
        ):
            return False
    return True


def gathered_keywords(
    func: ast.FunctionDef | ast.AsyncFunctionDef, call: CallShape
) -> dict[str, object]:
    """``{kwargs: dict}`` where ``func`` takes ``**kwargs`` and ``call`` (the test's call, no
    ``**`` of its own) passes keywords no named parameter takes: they are that dict's items,
    each with the value the call states (``Obj.items``), so ``kwargs["vllm_config"]`` is the
    namespace the test handed (``run_engine_core(vllm_config=ns)``) and its stated fields
    decide branches as a named parameter's do.  Only where ``func`` reads the dict by key and
    nothing else (``kwargs[k]``, ``kwargs.get(k)``, ``**kwargs`` handed on, which copies it):
    a store, ``pop``, or the dict handed to other code may change what it holds."""
    var = func.args.kwarg
    if var is None or call.star_kwargs:
        return {}
    named = {a.arg for a in (*func.args.args, *func.args.kwonlyargs)}
    extra = [k for k in call.keywords if k not in named]
    if not extra or not _read_only(func, var.arg):
        return {}
    stated = dict(call.keyword_literals)
    items = tuple((k, (stated[k],) if k in stated else ()) for k in extra)
    return {var.arg: Obj(truthy=True, length=len(extra), kind="dict", items=items)}


def _read_only(func: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    """Every use of ``name`` in ``func`` (nested functions included) reads the dict it holds
    by key or hands it on unpacked, and nothing rebinds it."""
    parents: dict[ast.AST, ast.AST] = {}
    for node in link_parents(func, parents):
        if isinstance(node, ast.arg) and node.arg == name and parents.get(node) is not func.args:
            return False  # a nested function's parameter of the same name
        if not (isinstance(node, ast.Name) and node.id == name):
            continue
        if not isinstance(node.ctx, ast.Load):
            return False
        parent = parents.get(node)
        if isinstance(parent, ast.Subscript) and parent.value is node:
            if not isinstance(parent.ctx, ast.Load):
                return False
            continue
        if isinstance(parent, ast.keyword) and parent.arg is None:
            continue  # ``f(**kwargs)``: the callee gets a copy
        user = parents.get(parent) if parent is not None else None
        if (
            isinstance(parent, ast.Attribute)
            and parent.attr == "get"
            and isinstance(user, ast.Call)
            and user.func is parent
        ):
            continue
        return False
    return True
