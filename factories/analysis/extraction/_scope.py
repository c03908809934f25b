"""Where things are in one test module: parent links, scopes, imports, callers.

Shared by every part of the extraction, so that a module is indexed once however many stubs
it holds.  Nothing here depends on which parametrize case or caller a stub is followed under.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Callable, Iterable

from factories.analysis._walk import link_parents, statements, walk
from factories.analysis.extraction._syntax import FUNCTION_DEFS, first_line
from factories.analysis.findings import Location
from factories.analysis.source_tree import ImportTarget, ModuleInfo, function_imports


class ModuleScope:
    """The parsed test module with lazily built parent links and per-scope caches."""

    def __init__(self, module: ModuleInfo) -> None:
        self.module = module
        self.path = str(module.path)
        # Only top-level statements whose text mentions what we look for are walked: a vLLM
        # test file can hold thousands of lines that never touch a stub.
        self._texts = [
            "\n".join(module.lines[first_line(s) - 1 : (s.end_lineno or s.lineno)])
            for s in module.tree.body
        ]
        self.parents: dict[ast.AST, ast.AST] = {}
        self._indexed: set[int] = set()
        # id of an indexed statement -> its nodes in walk order (the parent links' queue).
        self._walked: dict[int, list[ast.AST]] = {}
        # id of a def -> ``callers`` of it (the same walk of the same statements each time).
        self._callers: dict[int, list[tuple[ast.Call, str | None]]] = {}
        self._nodes_cache: dict[int, list[ast.AST]] = {}
        self._keys_cache: dict[int, list[tuple[int, int]]] = {}
        self._imports_cache: dict[int, dict[str, ImportTarget]] = {}
        self._assigned_cache: dict[int, dict[str, tuple[list[int], list[ast.expr]]]] = {}
        self._patch_only_cache: dict[str, bool] = {}
        self._test_exception_cache: dict[str, bool] = {}
        # The whole module's parent links and its nodes in walk order, once for every name
        # ``patch_only_exception`` is asked about.
        self._linked_tree: tuple[dict[ast.AST, ast.AST], list[ast.AST]] | None = None
        self._classes: frozenset[str] | None = None  # names of the classes it defines

    def index(self, needle: str) -> list[ast.stmt]:
        """Top-level statements whose source contains ``needle``, with parent links built."""
        hits = []
        for stmt, text in zip(self.module.tree.body, self._texts):
            if needle not in text:
                continue
            hits.append(stmt)
            if id(stmt) in self._indexed:
                continue
            self._indexed.add(id(stmt))
            self.parents[stmt] = self.module.tree
            self._walked[id(stmt)] = link_parents(stmt, self.parents)
        return hits

    def ensure_indexed(self, stmt: ast.AST) -> None:
        """Parent links for a top-level definition that no text needle has indexed yet."""
        if id(stmt) in self._indexed:
            return
        self._indexed.add(id(stmt))
        self.parents.setdefault(stmt, self.module.tree)
        self._walked[id(stmt)] = link_parents(stmt, self.parents)

    def walk(self, node: ast.AST) -> Iterable[ast.AST]:
        """``walk(node)``: for a statement indexed here, the nodes its parent links met (in
        the same order), not a second walk; every part of the extraction asks about the same
        few statements (the needles' hits) again and again."""
        found = self._walked.get(id(node))
        return found if found is not None else walk(node)

    def mentions(self, word: str) -> bool:
        """Whether the module's text holds ``word`` anywhere at its top level's statements."""
        return any(word in text for text in self._texts)

    def text_of_function(self, func: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
        """The source text of a definition, decorators included."""
        return "\n".join(self.module.lines[first_line(func) - 1 : func.end_lineno or func.lineno])

    def loc(self, node: ast.AST) -> Location:
        return Location(self.path, getattr(node, "lineno", 0))

    def nodes(self, scope: ast.AST) -> list[ast.AST]:
        """Nodes of ``scope`` in source order, nested defs included (closures may use the
        stub); at module scope, functions and classes are their own scopes."""
        if id(scope) not in self._nodes_cache:
            nodes, keys = _own_nodes(scope, self.walk)
            self._nodes_cache[id(scope)], self._keys_cache[id(scope)] = nodes, keys
        return self._nodes_cache[id(scope)]

    def nodes_after(self, scope: ast.AST, key: tuple[int, int]) -> list[ast.AST]:
        """``nodes(scope)`` less those at or before ``key`` (``(lineno, col_offset)``): the
        nodes a follower looks at after the statement it starts from.  They are sorted by
        that key, so the ones left out are a prefix, found by bisection instead of a scan of
        the whole scope per followed name."""
        nodes = self.nodes(scope)
        return nodes[bisect.bisect_right(self._keys_cache[id(scope)], key) :]

    def assigned_before(self, scope: ast.AST, name: ast.Name) -> ast.expr | None:
        """The value of the last plain ``name = value`` of ``scope`` (nested defs included, in
        source order) on a line before ``name``'s; None when there is none. The assignments
        are indexed once per scope: a test's names are looked up thousands of times."""
        if id(scope) not in self._assigned_cache:
            table: dict[str, tuple[list[int], list[ast.expr]]] = {}
            for node in self.nodes(scope):
                if (
                    isinstance(node, ast.Assign)
                    and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name)
                ):
                    lines, values = table.setdefault(node.targets[0].id, ([], []))
                    lines.append(node.lineno)
                    values.append(node.value)
            self._assigned_cache[id(scope)] = table
        lines, values = self._assigned_cache[id(scope)].get(name.id, ((), ()))
        before = bisect.bisect_left(lines, name.lineno)
        return values[before - 1] if before else None

    def scope_imports(self, node: ast.AST) -> dict[str, ImportTarget]:
        """Imports visible at ``node``: those of each enclosing function, innermost last."""
        chain: list[ast.AST] = []
        current: ast.AST | None = node
        while current is not None:
            if isinstance(current, FUNCTION_DEFS):
                chain.append(current)
            current = self.parents.get(current)
        table: dict[str, ImportTarget] = {}
        for func in reversed(chain):
            if id(func) not in self._imports_cache:
                self._imports_cache[id(func)] = function_imports(
                    func, self.module.name, self.module.is_package
                )
            table.update(self._imports_cache[id(func)])
        return table

    def enclosing_scope(self, node: ast.AST) -> ast.AST:
        current = self.parents.get(node)
        while current is not None and not isinstance(current, (*FUNCTION_DEFS, ast.Module)):
            current = self.parents.get(current)
        return current or self.module.tree

    def enclosing_class(self, node: ast.AST) -> str | None:
        current = self.parents.get(node)
        while current is not None and not isinstance(current, ast.ClassDef):
            current = self.parents.get(current)
        return current.name if isinstance(current, ast.ClassDef) else None

    def qualified_prefix(self, node: ast.AST) -> str:
        """Python's ``__qualname__`` prefix of a definition: ``Test.test_x.<locals>.``."""
        parts: list[str] = []
        current = self.parents.get(node)
        while current is not None and current is not self.module.tree:
            if isinstance(current, FUNCTION_DEFS):
                parts.append(f"{current.name}.<locals>.")
            elif isinstance(current, ast.ClassDef):
                parts.append(f"{current.name}.")
            current = self.parents.get(current)
        return "".join(reversed(parts))

    def local_def(self, name: ast.Name) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The ``def`` that ``name`` refers to: in an enclosing function, else the module's."""
        current = self.parents.get(name)
        while current is not None:
            if isinstance(current, FUNCTION_DEFS):
                for stmt in statements(current):
                    if not isinstance(stmt, FUNCTION_DEFS) or stmt is current:
                        continue
                    if stmt.name == name.id:
                        return stmt
            current = self.parents.get(current)
        return self.module.functions.get(name.id)

    def is_callee(self, node: ast.Attribute) -> bool:
        parent = self.parents.get(node)
        return isinstance(parent, ast.Call) and parent.func is node

    def callers(
        self, func: ast.FunctionDef | ast.AsyncFunctionDef
    ) -> list[tuple[ast.Call, str | None]]:
        """The calls of ``func`` in this module, each with the class a method call names.

        A module-level function is called by name.  A method of a module-level class ``C``
        (a classmethod building the stub, a test class's helper) is called as ``C.m()`` or
        ``Sub.m()`` for a same-module subclass ``Sub`` (named: the call's class), or as
        ``self.m()``/``cls.m()`` inside ``C`` or such a subclass (the class is not named).
        Found once per ``func``: the answer depends on the module alone."""
        if id(func) not in self._callers:
            self._callers[id(func)] = self._find_callers(func)
        return list(self._callers[id(func)])

    def _find_callers(
        self, func: ast.FunctionDef | ast.AsyncFunctionDef
    ) -> list[tuple[ast.Call, str | None]]:
        owner = self.parents.get(func)
        if isinstance(owner, ast.ClassDef) and self.parents.get(owner) is self.module.tree:
            family = self._subclasses(owner.name)
            out: list[tuple[ast.Call, str | None]] = []
            for stmt in self.index("." + func.name + "("):
                for n in self.walk(stmt):
                    if not (
                        isinstance(n, ast.Call)
                        and isinstance(n.func, ast.Attribute)
                        and n.func.attr == func.name
                        and isinstance(n.func.value, ast.Name)
                    ):
                        continue
                    receiver = n.func.value.id
                    if receiver in family:
                        out.append((n, receiver))
                    elif receiver in ("self", "cls") and self.enclosing_class(n) in family:
                        out.append((n, None))
            return out
        if owner is not self.module.tree:
            return []
        return [
            (n, None)
            for stmt in self.index(func.name + "(")
            for n in self.walk(stmt)
            if isinstance(n, ast.Call) and getattr(n.func, "id", None) == func.name
        ]

    def patch_only_exception(self, name: str) -> bool:
        """Whether ``name`` is an exception class this module defines (at any level) that
        only the test's patches raise: every other mention of it is the
        ``side_effect=`` of a ``patch(...)``/``patch.object(...)`` call (the class itself or
        an instance of it), or the expected type of a ``pytest.raises(...)``.  A ``raise`` of
        it, a subclass of it, or a mock built with it anywhere else may raise it on some
        calls only, which no walk knows of.  Once per name."""
        cache = self._patch_only_cache
        if name not in cache and name not in self._class_names():
            cache[name] = False  # no class of that name here: not the module's exception
        if name not in cache:
            if self._linked_tree is None:
                parents: dict[ast.AST, ast.AST] = {}
                self._linked_tree = (parents, link_parents(self.module.tree, parents))
            cache[name] = _patch_only_exception(name, *self._linked_tree)
        return cache[name]

    def test_exception(self, name: str) -> bool:
        """Whether ``name`` is an exception class this module defines (at any level, once)
        and binds no other way (no import, assignment or ``def`` of that name): whatever
        raises it is the test's code (its own function, a callable it hands vLLM, a patch),
        never a ``raise`` of vLLM code building an exception of a class vLLM names, which
        is no instance of a class only the test defines."""
        cache = self._test_exception_cache
        if name not in cache and name not in self._class_names():
            cache[name] = False  # no class of that name here
        if name not in cache:
            module = self.module
            defs: list[ast.AST] = []
            for node in walk(module.tree):
                if isinstance(node, (*FUNCTION_DEFS, ast.ClassDef)) and node.name == name:
                    defs.append(node)
                elif isinstance(node, ast.Name) and node.id == name:
                    if not isinstance(node.ctx, ast.Load):
                        defs.append(node)  # bound some other way as well
                elif isinstance(node, ast.alias) and (node.asname or node.name) == name:
                    defs.append(node)
            cache[name] = len(defs) == 1 and isinstance(defs[0], ast.ClassDef)
        return cache[name]

    def _class_names(self) -> frozenset[str]:
        """The names of the classes the module defines at any level: ``class`` statements,
        found without walking an expression (``statements``)."""
        if self._classes is None:
            self._classes = frozenset(
                n.name for n in statements(self.module.tree) if isinstance(n, ast.ClassDef)
            )
        return self._classes

    def _subclasses(self, name: str) -> frozenset[str]:
        """``name`` and the module-level classes of this module that derive from it here."""
        family = {name}
        grew = True
        while grew:
            grew = False
            for cls_name, node in self.module.classes.items():
                if cls_name in family:
                    continue
                bases = {b.id for b in node.bases if isinstance(b, ast.Name)}
                if bases & family:
                    family.add(cls_name)
                    grew = True
        return frozenset(family)


_PATCH_CALLEES = frozenset({"patch", "object"})  # ``(mock.)patch(...)``, ``patch.object(...)``
_RAISES_CALLEES = frozenset({"raises", "assertRaises", "assertRaisesRegex"})


def _patch_only_exception(name: str, parents: dict[ast.AST, ast.AST], nodes: list[ast.AST]) -> bool:
    """``ModuleScope.patch_only_exception`` on a parsed module: its parent links and its
    nodes in ``walk`` order."""
    defined = False
    for node in nodes:
        if isinstance(node, ast.ClassDef) and node.name == name:
            defined = True
        if not (isinstance(node, ast.Name) and node.id == name):
            continue
        if not isinstance(node.ctx, ast.Load):
            return False  # rebound: not the class any more
        parent = parents.get(node)
        if isinstance(parent, ast.Call) and parent.func is node:
            node, parent = parent, parents.get(parent)  # ``side_effect=Stop("x")``
        if isinstance(parent, ast.keyword) and parent.arg == "side_effect":
            call = parents.get(parent)
            if isinstance(call, ast.Call) and _last_name(call.func) in _PATCH_CALLEES:
                continue
            return False
        if (
            isinstance(parent, ast.Call)
            and _last_name(parent.func) in _RAISES_CALLEES
            and parent.args
            and parent.args[0] is node
        ):
            continue
        return False
    return defined


def _last_name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _own_nodes(
    scope: ast.AST, walk: Callable[[ast.AST], Iterable[ast.AST]]
) -> tuple[list[ast.AST], list[tuple[int, int]]]:
    """The nodes of ``scope`` sorted by ``(lineno, col_offset)`` (stably: in walk order where
    those are equal), and those keys, in the same order (``nodes_after`` bisects them)."""
    body = scope.body  # type: ignore[attr-defined]
    nodes: list[ast.AST] = []
    for stmt in body:
        if isinstance(scope, ast.Module) and isinstance(stmt, (*FUNCTION_DEFS, ast.ClassDef)):
            continue
        nodes.extend(walk(stmt))
    keys = [(getattr(n, "lineno", 0), getattr(n, "col_offset", 0)) for n in nodes]
    order = sorted(range(len(nodes)), key=keys.__getitem__)
    return [nodes[i] for i in order], [keys[i] for i in order]
