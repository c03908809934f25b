"""``ast.walk`` without its per-node generators: the analyzer walks the same test and vLLM
trees many times (every scope, helper and needle asks for the nodes below it), and
``ast.walk`` spends most of its time in ``iter_child_nodes``/``iter_fields``, two generator
frames per node.  Same nodes, same (breadth-first) order, so a caller that stops at the first
match finds the same node.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes ``ast.walk(node)`` yields, in its order: a node's children are listed before
    the node is handed out, as there."""
    return walk_all((node,))


def walk_all(roots: Iterable[ast.AST]) -> Iterator[ast.AST]:
    """``walk`` of sibling nodes (top-level statements, in order) as one breadth-first walk:
    their nodes in the order ``ast.walk`` of their parent meets them."""
    todo = list(roots)
    append = todo.append
    for current in todo:  # a list iterator sees what is appended behind it: a queue
        for name in current._fields:
            value = getattr(current, name, None)
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        append(item)
            elif isinstance(value, ast.AST):
                append(value)
        yield current


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """``list(ast.iter_child_nodes(node))``, without its two generator frames: the read-set
    walker asks it of every expression it has no handler for."""
    out: list[ast.AST] = []
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, list):
            for item in value:
                if isinstance(item, ast.AST):
                    out.append(item)
        elif isinstance(value, ast.AST):
            out.append(value)
    return out


def link_parents(root: ast.AST, parents: dict[ast.AST, ast.AST]) -> list[ast.AST]:
    """``parents[child] = parent`` for every node below ``root``, entered in the order of
    ``for parent in ast.walk(root): for child in ast.iter_child_nodes(parent)``.  Returns the
    nodes it met, ``root`` first: ``list(walk(root))`` (the same queue), which a caller that
    walks ``root`` again can keep instead."""
    todo = [root]
    append = todo.append
    for current in todo:
        for name in current._fields:
            value = getattr(current, name, None)
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        parents[item] = current
                        append(item)
            elif isinstance(value, ast.AST):
                parents[value] = current
                append(value)
    return todo


#: The nodes that hold statements: statements, ``except`` clauses and ``match`` cases.
_HOLDERS = (ast.stmt, ast.excepthandler, ast.match_case)


def statements(node: ast.AST) -> Iterator[ast.AST]:
    """The statements (and the ``except``/``case`` clauses holding some) below ``node``, in
    the order ``ast.walk(node)`` meets them, without walking any expression: what a question
    about imports needs.  Each is at the depth a full walk finds it (a holder's parent is a
    holder), so the breadth-first order is that of the full walk, restricted."""
    todo = [node]
    append = todo.append
    for current in todo:
        for name in current._fields:
            value = getattr(current, name, None)
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, _HOLDERS):
                        append(item)
        yield current
