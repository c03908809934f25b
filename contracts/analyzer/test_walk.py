"""``factories.analysis._walk`` against ``ast.walk``: the same nodes in the same order (a caller
that stops at the first match must find the same node), on inline modules that hold every kind
of statement holder and on this project's own analyzer sources."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from factories.analysis._walk import link_parents, statements, walk, walk_all

_HOLDERS = (ast.stmt, ast.excepthandler, ast.match_case)

_CASES = {
    "nested defs and classes": """
        import os
        @deco(arg=f(x))
        def outer(a, b=g()):
            from m import n
            class Inner(Base, metaclass=M):
                def method(self):
                    return [y for y in self.items if y]
            return Inner
    """,
    "try, with, loops": """
        try:
            with open(p) as f, ctx() as g:
                for i in range(3):
                    while i:
                        i -= 1
                    else:
                        pass
        except (ValueError, KeyError) as exc:
            raise RuntimeError() from exc
        else:
            x = lambda q: q + 1
        finally:
            del x
    """,
    "match and async": """
        async def run(cmd):
            match cmd:
                case {"go": where} if where:
                    await move(where)
                case [first, *rest]:
                    async with lock:
                        async for item in rest:
                            yield item
                case _:
                    import sys
    """,
    "one line, several statements": "a = f(1); assert a == 2; b = g(a)\n",
}

_OWN = sorted((Path(__file__).resolve().parents[2] / "factories" / "analysis").rglob("*.py"))


def _trees() -> list[tuple[str, ast.Module]]:
    inline = [(name, ast.parse(textwrap.dedent(src))) for name, src in _CASES.items()]
    own = [(path.name, ast.parse(path.read_text(encoding="utf-8"))) for path in _OWN]
    return inline + own


@pytest.mark.parametrize(("name", "tree"), _trees(), ids=[name for name, _ in _trees()])
def test_walks_match_ast_walk(name: str, tree: ast.Module) -> None:
    roots: list[ast.AST] = [tree, *tree.body]
    if name in _CASES:  # every nested def too; the own sources' are covered by their module's
        roots += [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    for root in roots:
        expected = list(ast.walk(root))
        assert [id(n) for n in walk(root)] == [id(n) for n in expected]
        assert [id(n) for n in statements(root)] == [
            id(n) for n in expected if n is root or isinstance(n, _HOLDERS)
        ]
        # As the loop it replaces builds them (a shared ``ast.Load()`` keeps its last parent).
        linked: dict[ast.AST, ast.AST] = {}
        for parent in expected:
            for child in ast.iter_child_nodes(parent):
                linked[child] = parent
        parents: dict[ast.AST, ast.AST] = {}
        link_parents(root, parents)
        assert [(id(c), id(p)) for c, p in parents.items()] == [
            (id(c), id(p)) for c, p in linked.items()
        ]
    # Sibling statements walked together: the order a walk of their module meets them in.
    below = [n for n in ast.walk(tree) if n is not tree and not isinstance(n, ast.type_ignore)]
    assert [id(n) for n in walk_all(tree.body)] == [id(n) for n in below]
