"""Where a test module builds stand-ins, and which stand-in a local name or call holds.

Found once per module (one walk of the statements whose text can build one), then asked by
the following (``_standins``) and by the meetings (``_standin_meetings``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from factories.analysis._walk import child_nodes, statements, walk
from factories.analysis.class_refs import ClassRef
from factories.analysis.extraction._cases import NO_BINDINGS, CaseReader
from factories.analysis.extraction._scope import ModuleScope
from factories.analysis.extraction._standin_model import StandInKind
from factories.analysis.extraction._standin_sites import (
    CREATING_NAMES,
    STANDIN_NEEDLES,
    loaded_modules,
    standin_kind,
)
from factories.analysis.extraction._syntax import callee
from factories.analysis.source_tree import ImportTarget

#: Statement text that may build a stand-in: the file needles, and a mock spec'd positionally.
_STATEMENT_NEEDLES = (*STANDIN_NEEDLES, "Mock(")

Site = tuple[StandInKind, "ClassRef | None"]


class StandInSites:
    """The creation calls of one module, each with its kind and class (or spec)."""

    def __init__(self, scope: ModuleScope, reader: CaseReader) -> None:
        self.scope = scope
        self.reader = reader
        self._kinds: dict[int, Site] = {}
        self.calls: list[ast.Call] = []
        self._module_imports = {**loaded_modules(scope.module.tree), **scope.module.imports}
        statements = {id(s): s for needle in _STATEMENT_NEEDLES for s in scope.index(needle)}
        for stmt in statements.values():
            for node in scope.walk(stmt):
                if not (isinstance(node, ast.Call) and callee(node.func) in CREATING_NAMES):
                    continue
                site = standin_kind(node, self.imports(node))
                if site is not None:
                    self.calls.append(node)
                    self._kinds[id(node)] = site
        self.calls.sort(key=lambda n: (n.lineno, n.col_offset))

    def imports(self, node: ast.AST) -> dict[str, ImportTarget]:
        """Names the test module imports, as seen at ``node`` (function-level imports too, and
        modules it loads by name, ``loaded_modules``)."""
        return {**self._module_imports, **self.scope.scope_imports(node)}

    def kind_of(self, node: ast.AST) -> Site | None:
        """The kind and class of the stand-in ``node`` builds, None if it builds none."""
        return self._kinds.get(id(node))

    def nested(self) -> set[int]:
        """Creations that are a field of another stand-in: written inside its call, assigned
        to a field of a local one (``ns.x = SimpleNamespace()``), or named in its call."""
        nested: set[int] = set()
        for call in self.calls:
            if self.owner_of(call) is not None:
                nested.add(id(call))
            parent = self.scope.parents.get(call)
            if isinstance(parent, ast.Assign) and any(
                isinstance(t, ast.Attribute) and self.site_of(t.value) is not None
                for t in parent.targets
            ):
                nested.add(id(call))
            for value in [*call.args, *(kw.value for kw in call.keywords)]:
                for name in _free_names(value):
                    if isinstance(name, ast.Name):
                        bound = self.reader.resolve_local(name, NO_BINDINGS)
                        if bound is not None and id(bound) in self._kinds:
                            nested.add(id(bound))
        return nested

    def owner_of(self, node: ast.AST) -> tuple[ast.Call, str | None] | None:
        """The creation call ``node`` is written inside, with the field it is (part of)."""
        field = None
        current = self.scope.parents.get(node)
        while current is not None and not isinstance(current, ast.stmt):
            if isinstance(current, ast.keyword):
                field = current.arg
            if isinstance(current, ast.Call) and id(current) in self._kinds:
                return current, field
            current = self.scope.parents.get(current)
        return None

    def site_of(self, expr: ast.expr) -> Site | None:
        """The stand-in a local name holds: built in this function, or returned by a helper
        of this module that builds it."""
        if not isinstance(expr, ast.Name):
            return None
        bound = self.reader.resolve_local(expr, NO_BINDINGS)
        if bound is None:
            return None
        if id(bound) in self._kinds:
            return self._kinds[id(bound)]
        if isinstance(bound, ast.Call) and isinstance(bound.func, ast.Name):
            helper = self.scope.module.functions.get(bound.func.id)
            for ret in statements(helper) if helper is not None else ():
                if isinstance(ret, ast.Return) and ret.value is not None:
                    if id(ret.value) in self._kinds:
                        return self._kinds[id(ret.value)]
                    if isinstance(ret.value, ast.Name):
                        self.scope.ensure_indexed(helper)  # type: ignore[arg-type]
                        inner = self.reader.resolve_local(ret.value, NO_BINDINGS)
                        if inner is not None and id(inner) in self._kinds:
                            return self._kinds[id(inner)]
        return None

    def owner_text(self, call: ast.Call) -> str:
        """How a meeting names a stand-in that owns another: the name it is assigned to."""
        parent = self.scope.parents.get(call)
        if isinstance(parent, ast.Assign) and parent.value is call:
            name = next((t for t in parent.targets if isinstance(t, ast.Name)), None)
            if name is not None:
                return name.id
        return ast.unparse(call.func) + "(...)"


def _free_names(node: ast.AST, bound: frozenset[str] = frozenset()) -> Iterator[ast.Name]:
    """The names ``node`` loads from its function: not a parameter of a lambda inside it,
    nor a comprehension's target (``lambda indices, metadata: f(metadata)`` names the
    lambda's own ``metadata``, not the test's local of that name)."""
    if isinstance(node, ast.Lambda):
        args = node.args
        params = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
        for default in [*args.defaults, *args.kw_defaults]:
            if default is not None:
                yield from _free_names(default, bound)
        yield from _free_names(node.body, bound | {p.arg for p in params if p is not None})
        return
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
        inner = bound
        for i, gen in enumerate(node.generators):
            yield from _free_names(gen.iter, bound if i == 0 else inner)
            inner = inner | {n.id for n in walk(gen.target) if isinstance(n, ast.Name)}
            for test in gen.ifs:
                yield from _free_names(test, inner)
        parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        for part in parts:
            yield from _free_names(part, inner)
        return
    if isinstance(node, ast.Name):
        if node.id not in bound:
            yield node
        return
    for child in child_nodes(node):
        yield from _free_names(child, bound)
