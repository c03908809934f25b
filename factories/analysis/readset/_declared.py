"""What a parameter's annotation says the stand-in stands in for, and which names that class
declares: a chain read of a name the class declares but a stand-in lacks is drift; of a name it
does not declare, duck typing.
"""

from __future__ import annotations

import ast

from factories.analysis._walk import walk
from factories.analysis.classes import ClassIndex, ClassInfo
from factories.analysis.source_tree import ModuleInfo
from factories.errors import SourceError

#: Methods whose ``self.x = ...`` stores declare an instance attribute of their class.
_INITIALISERS = ("__init__", "__post_init__")


def annotation_class(
    index: ClassIndex, module: ModuleInfo, node: ast.expr | None
) -> ClassInfo | None:
    """The in-tree class an annotation names: ``X``, ``mod.X``, ``"X"``, ``X | None``,
    ``Optional[X]``, ``Union[X, None]``; None for anything else (several classes, generics,
    a class outside the tree)."""
    if node is None:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return annotation_class(index, module, ast.parse(node.value, mode="eval").body)
        except SyntaxError:
            return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _one_of(index, module, [node.left, node.right])
    if isinstance(node, ast.Subscript):
        base = ast.unparse(node.value).rsplit(".", 1)[-1]
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if base == "Optional" and len(parts) == 1:
            return annotation_class(index, module, parts[0])
        if base == "Union":
            return _one_of(index, module, parts)
        return None
    if not isinstance(node, (ast.Name, ast.Attribute)):
        return None
    try:
        found = index.resolve(module, ast.unparse(node))
    except SourceError:
        return None
    return found if isinstance(found, ClassInfo) else None


def _one_of(index: ClassIndex, module: ModuleInfo, parts: list[ast.expr]) -> ClassInfo | None:
    """The class of a union with ``None``: exactly one part that is not ``None``."""
    rest = [p for p in parts if not (isinstance(p, ast.Constant) and p.value is None)]
    return annotation_class(index, module, rest[0]) if len(rest) == 1 else None


def param_classes(
    index: ClassIndex, module: ModuleInfo, node: ast.FunctionDef | ast.AsyncFunctionDef, bound: bool
) -> tuple[tuple[str, ClassInfo], ...]:
    """``(parameter, class)`` for each parameter whose annotation names an in-tree class."""
    args = node.args
    positional = list(args.posonlyargs) + list(args.args)
    out = []
    for arg in positional[1 if bound else 0 :] + list(args.kwonlyargs):
        cls = annotation_class(index, module, arg.annotation)
        if cls is not None:
            out.append((arg.arg, cls))
    return tuple(out)


def declares(index: ClassIndex, cls: ClassInfo, name: str) -> bool:
    """Whether instances of ``cls`` are declared to have ``name``: a name a class body of its
    MRO defines or annotates (dataclass fields, properties, methods, class attributes), or an
    attribute its ``__init__``/``__post_init__`` stores on ``self``."""
    if name in index.members(cls):
        return True
    for klass in index.mro(cls)[0]:
        for node in klass.node.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                node.name in _INITIALISERS and node.args.args
            ):
                self_name = node.args.args[0].arg
                if any(
                    isinstance(sub, ast.Attribute)
                    and isinstance(sub.ctx, ast.Store)
                    and sub.attr == name
                    and isinstance(sub.value, ast.Name)
                    and sub.value.id == self_name
                    for sub in walk(node)
                ):
                    return True
    return False
