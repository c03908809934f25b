"""The class a stub is of, as the test states it: a structured ``ClassRef``.

The extractor (``extraction``) settles what it can from the test's text (its imports, its
values, its parametrize cases and same-module calls) into one of these variants;
``ClassIndex.resolve_ref`` (``classes``) then finds the class in the vLLM tree, with no
re-parse of the text.  ``text`` of each variant is the class as the findings spell it.
"""

from __future__ import annotations

import ast

import attrs


@attrs.frozen
class NamedClass:
    """A dotted name (``Worker``, ``mod.Worker``, ``vllm.x.y.Worker``) that the test module's
    imports, or the tree itself for a full ``vllm.`` path, resolve."""

    dotted: str

    @property
    def text(self) -> str:
        return self.dotted


@attrs.frozen
class LocalClass:
    """A class the test defines inside a function (``class StubSpeculator(Base): ...``),
    with the prefix of its qualified name (``test_x.<locals>.``)."""

    name: str
    prefix: str
    node: ast.ClassDef = attrs.field(repr=False)

    @property
    def text(self) -> str:
        return self.name


@attrs.frozen
class RegistryClass:
    """``Owner.attr["key"]`` (``called``: ``Owner.attr["key"]()``), a registry holding
    classes or zero-argument loaders of them, filled by module-level registrations."""

    owner: str
    attr: str
    key: str
    called: bool = False

    @property
    def text(self) -> str:
        return f"{self.owner}.{self.attr}[{self.key!r}]" + ("()" if self.called else "")


@attrs.frozen
class ExpressionClass:
    """An expression no rule of the analyzer turns into a class (a call, a subscript, a
    position in ``__mro__``): the stub is not audited."""

    text: str


@attrs.frozen
class UnsettledClass:
    """A class the test computes from values that nothing it states settles; ``why`` is the
    note of the unresolved stub.  A name the test's imports bind is still resolved."""

    text: str
    why: str


ClassRef = NamedClass | LocalClass | RegistryClass | ExpressionClass | UnsettledClass


def ref_of_expression(expr: ast.expr) -> ClassRef:
    """The class an expression names as written, with no value of the test looked at."""
    if _is_dotted(expr):
        return NamedClass(ast.unparse(expr))
    registry = expr.func if isinstance(expr, ast.Call) else expr
    if (
        isinstance(registry, ast.Subscript)
        and isinstance(registry.value, ast.Attribute)
        and isinstance(registry.slice, ast.Constant)
        and isinstance(registry.slice.value, str)
        and (registry is expr or not (expr.args or expr.keywords))  # type: ignore[attr-defined]
    ):
        owner = ast.unparse(registry.value.value)
        if all(part.isidentifier() for part in owner.split(".")):
            called = registry is not expr
            return RegistryClass(owner, registry.value.attr, registry.slice.value, called)
    return ExpressionClass(ast.unparse(expr))


def _is_dotted(expr: ast.expr) -> bool:
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    return isinstance(expr, ast.Name)
