"""Find ``object.__new__`` stubs in test files and what each one sets and calls.

A stub is an ``object.__new__(Cls)`` call.  Its *events* are, in source order, the attributes
the test puts on the object (plain and augmented assignment, ``setattr``/``monkeypatch.setattr``
/``patch.object`` with a literal name, ``__dict__.update``/``vars(x).update`` with a literal dict
or keywords) and the methods it calls on it (with the call's shape).  The object is followed
through local aliases and through helper functions that build and ``return`` it (also inside a
returned tuple), into every caller in the same module, and into a same-module helper it is
passed to (``_refresh(worker)``), whose sets and calls are the stub's too.  A stub handed to
other code *escapes*: its missing reads are still checked for the calls the test makes, but
stale-field warnings are suppressed, since something else may read those fields.  The test's own
loads of a stub field (``stub.x`` in an assertion or a closure the code calls back) are ``read``
events: a field the test itself reads is not stale.
"""

from __future__ import annotations

import ast
import enum
import re
from pathlib import Path

import attrs

from factories.analysis.findings import Location
from factories.analysis.signatures import CallShape
from factories.analysis.source_tree import ImportTarget, ModuleInfo, collect_imports
from factories.analysis.values import Obj, is_exception_expr, raises_when_called, test_value

# Calls that look at an object without handing it to code that could read its fields.
_INSPECTING = frozenset(
    {"isinstance", "type", "id", "repr", "str", "print", "hasattr", "callable", "len", "vars"}
)
_MAX_HELPER_DEPTH = 4
# ``object.__new__(X)`` spellings whose class is the one the enclosing method runs on.
_SELF_CLASS = frozenset({"cls", "type(self)", "self.__class__"})
_CALLED_NAME = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")


class EventKind(enum.Enum):
    """What a test does to a stub; an enum so that the audit's dispatch on it cannot misspell."""

    SET = "set"  # puts attribute ``name`` on the stub
    READ = "read"  # the test itself loads ``name`` (the field is not stale)
    CALL = "call"  # calls method ``name`` with ``shape``


@attrs.frozen
class StubEvent:
    """``set`` of attribute ``name``, ``call`` of method ``name`` (with ``shape``), or ``read`` of
    attribute ``name`` by the test itself (it keeps the field from being stale)."""

    kind: EventKind
    name: str
    location: Location
    shape: CallShape | None = None
    value: object = None
    has_value: bool = False
    # A call inside ``with pytest.raises(...)``: the test expects it to raise, so the path
    # may end at any ``raise`` it meets.
    expect_raise: bool = False
    # ``monkeypatch.setattr(stub, "n", v)`` / ``patch.object(stub, "n")``: raises
    # AttributeError unless ``n`` already exists (no ``raising=False``/``create=True``).
    must_exist: bool = False
    # A coroutine call handed to ``asyncio.create_task``/``ensure_future``: the test may cancel
    # the task at any ``await``.
    detached: bool = False
    # The pytest test the call runs in (``Class::test_x[case]``, the case id where the test is
    # parametrized with values the analysis bound): a finding about the call names it.
    test: str | None = None
    # ``Cls.method(stub, ...)`` (or a module alias of ``Cls.method``): the class the test
    # names; the call runs that class's method, the stub being ``self``.
    via: str | None = None


@attrs.frozen
class Stub:
    """One way an ``object.__new__`` stub is used: creation site, scope imports, events."""

    class_expr: str
    location: Location
    module: ModuleInfo = attrs.field(eq=False, repr=False)
    local_imports: dict[str, ImportTarget] = attrs.field(eq=False, repr=False, factory=dict)
    events: tuple[StubEvent, ...] = ()
    escapes: bool = False
    opaque: bool = False
    patched: tuple[str, ...] = ()
    # The subset of ``patched`` whose replacement raises on every call (``Mock(side_effect=
    # SomeError)``, a local ``def`` that ends in ``raise``): a call to it ends the path.
    raising: tuple[str, ...] = ()
    # The test module that made the calls, where it is not ``module`` (a helper of
    # ``tests/.../utils.py`` returned the stub to a test of another module): the names of its
    # patches and of ``Cls.method(stub)`` calls resolve there.
    scope_module: ModuleInfo | None = attrs.field(default=None, eq=False, repr=False)
    # A class the test defines inside a function (``class StubSpeculator(Base): ...``), with
    # the prefix of its qualified name (``test_x.<locals>.``): the stub's class.
    local_class: ast.ClassDef | None = attrs.field(default=None, eq=False, repr=False)
    local_scope: str = ""
    # Why the class expression could not be settled from what the test states (the note of
    # an unresolved stub says it).
    why: str | None = None

    @property
    def calls(self) -> tuple[StubEvent, ...]:
        return tuple(e for e in self.events if e.kind is EventKind.CALL)


@attrs.define
class _Track:
    events: list[StubEvent] = attrs.field(factory=list)
    escapes: bool = False
    opaque: bool = False
    patched: list[str] = attrs.field(factory=list)  # "Cls.method" replaced by the test
    raising: list[str] = attrs.field(factory=list)  # those of ``patched`` that always raise
    # ``object.__new__(cls)``: the class is whichever class the classmethod is called on.
    dynamic_class: bool = False
    # That class, when a caller names it (``Sub.fresh()``); None: the defining class.
    class_expr: str | None = None

    def signature(self) -> tuple:
        """What the audit reads of this track, the parametrize case it names left out."""
        return (
            tuple(
                (
                    e.kind,
                    e.name,
                    e.location,
                    e.shape,
                    e.shape.positional_literals if e.shape else None,
                    e.shape.keyword_literals if e.shape else None,
                    repr(e.value),
                    e.has_value,
                    e.expect_raise,
                    e.must_exist,
                    e.detached,
                    e.via,
                )
                for e in self.events
            ),
            self.escapes,
            self.opaque,
            tuple(self.patched),
            tuple(self.raising),
            self.class_expr,
        )

    def copy(self) -> _Track:
        return self.then(_Track())

    def then(self, cont: _Track) -> _Track:
        """This track followed by ``cont`` (the stub continuing in a caller or a fixture user)."""
        return _Track(
            events=self.events + cont.events,
            escapes=self.escapes or cont.escapes,
            opaque=self.opaque or cont.opaque,
            patched=self.patched + cont.patched,
            raising=self.raising + cont.raising,
            dynamic_class=self.dynamic_class,
            class_expr=self.class_expr or cont.class_expr,
        )


def _own_nodes(scope: ast.AST) -> list[ast.AST]:
    """Nodes of ``scope`` in source order, nested defs included (closures may use the stub)."""
    body = scope.body  # type: ignore[attr-defined]
    nodes: list[ast.AST] = []
    for stmt in body:
        if isinstance(scope, ast.Module) and isinstance(
            stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        ):
            continue  # module scope: functions are their own scopes
        nodes.extend(ast.walk(stmt))
    nodes.sort(key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)))
    return nodes


def is_object_new(node: ast.AST) -> bool:
    """``object.__new__(X, ...)``: the one spelling of a stub this analyzer and its tools see."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "__new__"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "object"
        and len(node.args) >= 1
    )


def str_literal(node: ast.AST | None) -> str | None:
    """The value of a string literal, else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


class StubExtractor:
    """Extracts the stubs of one parsed test module."""

    def __init__(self, module: ModuleInfo) -> None:
        self.module = module
        self.path = str(module.path)
        # Only top-level statements whose text mentions what we look for are walked: a vLLM
        # test file can hold thousands of lines that never touch a stub.
        self._texts = [
            "\n".join(module.lines[_first_line(s) - 1 : (s.end_lineno or s.lineno)])
            for s in module.tree.body
        ]
        self.parents: dict[ast.AST, ast.AST] = {}
        self._indexed: set[int] = set()
        self._nodes_cache: dict[int, list[ast.AST]] = {}
        self._imports_cache: dict[int, dict[str, ImportTarget]] = {}
        self._patch_cache: dict[tuple, list[tuple[str, bool]]] = {}
        self._may_patch_cache: dict[int, bool] = {}
        self._cases_cache: dict[int, list[tuple[str | None, dict[str, ast.expr]]]] = {}
        # The parametrize case each test function is being followed under (by ``id``).
        self._bound: dict[int, tuple[str | None, dict[str, ast.expr]]] = {}
        # Stubs that a module-level function returns, for callers in other test modules:
        # (function name, the stub as created, its track up to the ``return``).
        self.exports: list[tuple[str, Stub, _Track]] = []
        self._base: Stub | None = None
        # A helper followed for one of its calls only (by ``id``): the call whose arguments
        # chose the stub's class.
        self._only_caller: dict[int, ast.Call] = {}

    def _index(self, needle: str) -> list[ast.stmt]:
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
            for parent in ast.walk(stmt):
                for child in ast.iter_child_nodes(parent):
                    self.parents[child] = parent
        return hits

    def loc(self, node: ast.AST) -> Location:
        return Location(self.path, getattr(node, "lineno", 0))

    def nodes(self, scope: ast.AST) -> list[ast.AST]:
        if id(scope) not in self._nodes_cache:
            self._nodes_cache[id(scope)] = _own_nodes(scope)
        return self._nodes_cache[id(scope)]

    def scope_imports(self, node: ast.AST) -> dict[str, ImportTarget]:
        """Imports visible at ``node``: those of each enclosing function, innermost last."""
        chain: list[ast.AST] = []
        current: ast.AST | None = node
        while current is not None:
            if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef)):
                chain.append(current)
            current = self.parents.get(current)
        table: dict[str, ImportTarget] = {}
        for func in reversed(chain):
            if id(func) not in self._imports_cache:
                own: dict[str, ImportTarget] = {}
                for sub in ast.walk(func):
                    if isinstance(sub, (ast.Import, ast.ImportFrom)):
                        own.update(collect_imports([sub], self.module.name, self.module.is_package))
                self._imports_cache[id(func)] = own
            table.update(self._imports_cache[id(func)])
        return table

    def enclosing_scope(self, node: ast.AST) -> ast.AST:
        current = self.parents.get(node)
        while current is not None and not isinstance(
            current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)
        ):
            current = self.parents.get(current)
        return current or self.module.tree

    def stubs(self) -> list[Stub]:
        found: list[Stub] = []
        sites = [n for stmt in self._index("object.__new__(") for n in ast.walk(stmt)]
        for node in sites:
            if not is_object_new(node):
                continue
            assert isinstance(node, ast.Call)
            computed = self.computed_classes(node)
            if computed is None:
                imported = self.imported_class(node.args[0])
                found.extend(self._stubs_at(node, imported or self.class_of(node)))
                continue
            for choice in computed:
                self._bound.update(choice.bound)
                self._only_caller.update(choice.only_caller)
                try:
                    found.extend(self._stubs_at(node, choice.class_expr, choice))
                finally:
                    for key in choice.bound:
                        del self._bound[key]
                    for key in choice.only_caller:
                        del self._only_caller[key]
        return found

    def _stubs_at(
        self, node: ast.Call, class_expr: str, choice: _ClassChoice | None = None
    ) -> list[Stub]:
        dynamic = ast.unparse(node.args[0]) in _SELF_CLASS and class_expr not in _SELF_CLASS
        local = choice.local_class if choice is not None else None
        base = Stub(
            class_expr=class_expr,
            location=self.loc(node),
            module=self.module,
            local_imports=self.scope_imports(node),
            local_class=local,
            local_scope=self._qualified_prefix(local) if local is not None else "",
            why=choice.why if choice is not None else None,
        )
        # A class a caller chose is that caller's: the helper is not exported to other modules.
        self._base = base if choice is None or not choice.only_caller else None
        return [
            attrs.evolve(
                base,
                class_expr=track.class_expr or class_expr,
                events=tuple(track.events),
                escapes=track.escapes,
                opaque=track.opaque,
                patched=tuple(sorted(set(track.patched))),
                raising=tuple(sorted(set(track.raising))),
            )
            for track in self.follow_value(node, 0, dynamic)
        ]

    def computed_classes(self, call: ast.Call) -> list[_ClassChoice] | None:
        """``object.__new__(X)`` where ``X`` is computed in the function around it: a local
        name (``worker_cls = Push if push_pp else Pull``), a parameter (also one a parametrize
        decorator lists classes for), a conditional, ``getattr(module, name)``,
        ``import_module(f"vllm.{model}.x").Cls``, or a class the function defines.  The
        class is what the test's values make of it: as the function stands (under each of its
        parametrize cases), else, for a helper, under each same-module call of it, that call's
        arguments bound to the helper's parameters (the stub then continues into that caller
        only).
        None when ``X`` is not computed here (names resolve through imports as before); one
        choice with ``why`` when nothing settles it."""
        arg = call.args[0]
        func = self.enclosing_scope(call)
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        if ast.unparse(arg) in _SELF_CLASS and self._enclosing_class(call) is not None:
            return None  # the class the method runs on (``class_of``)
        if not self._computed_here(arg):
            return None
        settled = self._settled_by_cases(func, {}, arg)
        if settled is not None:
            return settled
        out: list[_ClassChoice] = []
        if self.parents.get(func) is self.module.tree:
            for caller, _ in self.callers(func):
                binding = _call_binding(func, caller)
                if binding is None:
                    continue
                outer = self.enclosing_scope(caller)
                choices = self._settled_by_cases(outer, {id(func): (None, binding)}, arg)
                for choice in choices or []:
                    out.append(attrs.evolve(choice, only_caller={id(func): caller}))
        if out:
            return out
        why = (
            f"the class {ast.unparse(arg)} is computed in {func.name}() from values that no "
            f"parametrize case or same-module call of it settles"
        )
        return [_ClassChoice(class_expr=ast.unparse(arg), why=why)]

    def _settled_by_cases(
        self, func: ast.AST, bound: dict[int, tuple], arg: ast.expr
    ) -> list[_ClassChoice] | None:
        """The class ``arg`` names with ``bound`` in force, under each parametrize case of
        ``func`` (a case is kept bound only where the cases name different classes); None
        when some case leaves it unsettled."""
        cases = self.param_cases(func) if id(func) not in self._bound else []
        if not cases and id(func) not in self._bound and bound == {}:
            cases = self._class_decorator_cases(func, arg)
        found: list[tuple[dict[int, tuple], tuple[str, ast.ClassDef | None]]] = []
        for case in cases or [None]:
            binding = dict(bound) if case is None else {**bound, id(func): case}
            self._bound.update(binding)
            try:
                text = self.class_text(arg)
            finally:
                for key in binding:
                    self._bound.pop(key, None)
            if text is None:
                return None
            found.append((binding, text))
        # Cases that leave the class as it is are followed as usual (one stub); a class named
        # by a parameter a case binds is that case's, each case its own stub.
        used = {n.id for n in ast.walk(arg) if isinstance(n, ast.Name)}
        by_case = any(case and used & set(case[1]) for case in cases or [])
        if not by_case and len({text for _, text in found}) == 1:
            return [
                _ClassChoice(
                    bound=dict(bound), class_expr=found[0][1][0], local_class=found[0][1][1]
                )
            ]
        return [
            _ClassChoice(bound=binding, class_expr=text, local_class=local)
            for binding, (text, local) in found
        ]

    def _class_decorator_cases(self, func: ast.AST, arg: ast.expr) -> list[tuple]:
        """Where a test's parametrize decorators multiply into too many cases to follow one by
        one, the cases of the one decorator that lists the parameters ``arg`` uses (their
        pytest ids then are not known: the other decorators' parts are missing)."""
        used = {n.id for n in ast.walk(arg) if isinstance(n, ast.Name)}
        for deco in getattr(func, "decorator_list", []):
            if not (
                isinstance(deco, ast.Call) and getattr(deco.func, "attr", None) == "parametrize"
            ):
                continue
            values = _parametrize_values(deco)
            if values and used & set(values[0][1]) and len(values) <= _MAX_CASES:
                return [(None, bound) for _, bound in values]
        return []

    def _computed_here(self, expr: ast.expr) -> bool:
        """Whether the class expression depends on the function around it: a conditional, a
        ``getattr``, or a name (the head of ``a.b.C``) that is a parameter, a local
        variable or a class defined there rather than an import."""
        if isinstance(expr, ast.IfExp):
            return True
        if isinstance(expr, ast.Call):
            return _callee(expr.func) == "getattr"
        while isinstance(expr, ast.Attribute):
            expr = expr.value
        if isinstance(expr, ast.Call) and _callee(expr.func) == "import_module":
            # ``import_module(name).Cls``: computed when the name depends on the function's values
            return any(
                self._computed_here(n)
                for arg in expr.args
                for n in ast.walk(arg)
                if isinstance(n, ast.Name)
            )
        if not isinstance(expr, ast.Name):
            return False
        if self._local_class(expr) is not None:
            return True
        current = self.parents.get(expr)
        while current is not None:
            if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if _is_parameter(current, expr.id):
                    return True
                if any(
                    isinstance(n, ast.Name) and n.id == expr.id and isinstance(n.ctx, ast.Store)
                    for n in self.nodes(current)
                ):
                    return True
            current = self.parents.get(current)
        return False

    def class_text(self, expr: ast.expr, depth: int = 0) -> tuple[str, ast.ClassDef | None] | None:
        """The class ``expr`` names under the values bound now: a dotted name (the head of
        a function-local import spelled out, ``vllm.x.mod.Cls``), and the ``ClassDef`` when
        it is a class defined in an enclosing function; None when the values do not settle
        it (an undecided condition, a parameter no case binds)."""
        if depth > _MAX_HELPER_DEPTH * 2:
            return None
        if isinstance(expr, ast.IfExp):
            known = self.value_of(expr.test)
            if not known:
                return None
            return self.class_text(expr.body if known[0] else expr.orelse, depth + 1)
        if isinstance(expr, ast.Name):
            bound = self._resolve_local(expr)
            if bound is not None:
                return self.class_text(bound, depth + 1)
            local = self._local_class(expr)
            if local is not None:
                return expr.id, local
            if self._is_unbound_parameter(expr):
                return None
            target = self.scope_imports(expr).get(expr.id)
            return (target.dotted if target is not None else expr.id), None
        if isinstance(expr, ast.Attribute):
            imported = self.imported_class(expr)
            if imported is not None:
                return imported, None
            head = self.class_text(expr.value, depth + 1)
            if head is None or head[1] is not None:
                return None
            return f"{head[0]}.{expr.attr}", None
        if isinstance(expr, ast.Call) and len(expr.args) == 2 and not expr.keywords:
            if _callee(expr.func) != "getattr":
                return None
            name = self.text_of(expr.args[1])
            head = self.class_text(expr.args[0], depth + 1)
            if name is None or not name.isidentifier() or head is None or head[1] is not None:
                return None
            return f"{head[0]}.{name}", None
        if isinstance(expr, ast.Call) and _callee(expr.func) == "import_module":
            module = self.text_of(expr.args[0]) if len(expr.args) == 1 else None
            if module is not None and all(p.isidentifier() for p in module.split(".")):
                return module, None
        return None

    def _is_unbound_parameter(self, name: ast.Name) -> bool:
        """A parameter of an enclosing function that no case or caller binds."""
        current = self.parents.get(name)
        while current is not None:
            if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef)) and _is_parameter(
                current, name.id
            ):
                return True
            current = self.parents.get(current)
        return False

    def _local_class(self, name: ast.Name) -> ast.ClassDef | None:
        """The class ``name`` refers to when an enclosing function defines it (before
        ``name``), innermost first."""
        current = self.parents.get(name)
        while current is not None:
            if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found = [
                    n
                    for n in ast.walk(current)
                    if isinstance(n, ast.ClassDef) and n.name == name.id and n.lineno < name.lineno
                ]
                if found:
                    return found[-1]
            current = self.parents.get(current)
        return None

    def _qualified_prefix(self, node: ast.AST) -> str:
        """Python's ``__qualname__`` prefix of a definition: ``Test.test_x.<locals>.``."""
        parts: list[str] = []
        current = self.parents.get(node)
        while current is not None and current is not self.module.tree:
            if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef)):
                parts.append(f"{current.name}.<locals>.")
            elif isinstance(current, ast.ClassDef):
                parts.append(f"{current.name}.")
            current = self.parents.get(current)
        return "".join(reversed(parts))

    def imported_class(self, expr: ast.expr) -> str | None:
        """``mod.Cls`` with ``mod = importlib.import_module("vllm.x.y")`` (or
        ``import_module(name).Cls``), the module's name a literal or an f-string of values the
        test states: the dotted ``vllm.x.y.Cls``.  None for any other expression."""
        if not isinstance(expr, ast.Attribute):
            return None
        head = expr.value
        if isinstance(head, ast.Name):
            head = self._resolve_local(head)
        if not (
            isinstance(head, ast.Call)
            and _callee(head.func) == "import_module"
            and len(head.args) == 1
        ):
            return None
        module = self.text_of(head.args[0])
        if module is None or not all(p.isidentifier() for p in module.split(".")):
            return None
        return f"{module}.{expr.attr}"

    def text_of(self, node: ast.expr | None) -> str | None:
        """A string the test states: a literal, an f-string of known values, or a name bound
        to one (a parametrize value of the case being followed included)."""
        if isinstance(node, ast.Name):
            return self.text_of(self._resolve_local(node))
        if isinstance(node, ast.JoinedStr):
            parts = []
            for part in node.values:
                if isinstance(part, ast.Constant):
                    parts.append(str(part.value))
                elif isinstance(part, ast.FormattedValue) and part.format_spec is None:
                    known = self.value_of(part.value)
                    if not known or not isinstance(known[0], (str, int)):
                        return None
                    parts.append(str(known[0]))
                else:
                    return None
            return "".join(parts)
        return str_literal(node)

    def class_of(self, call: ast.Call) -> str:
        """The class expression of ``object.__new__(X)``; ``cls`` in a classmethod (and
        ``type(self)``/``self.__class__`` in a method) is the class that defines it."""
        expr = call.args[0]
        text = ast.unparse(expr)
        if text not in _SELF_CLASS:
            return text
        current = self.parents.get(call)
        while current is not None and not isinstance(current, ast.ClassDef):
            current = self.parents.get(current)
        return current.name if isinstance(current, ast.ClassDef) else text

    # -- following the object -------------------------------------------------------------

    def follow_value(self, value: ast.AST, depth: int, dynamic: bool = False) -> list[_Track]:
        """Tracks of the object produced by expression ``value`` (a creation or helper call);
        ``dynamic``: created as ``object.__new__(cls)``, so its class is the caller's choice."""
        parent = self.parents.get(value)
        scope = self.enclosing_scope(value)
        track = _Track(dynamic_class=dynamic)
        if isinstance(parent, ast.Attribute) and parent.value is value:
            self.chained_use(parent, track)
            return [track]
        if isinstance(parent, ast.Assign) and parent.value is value:
            names = [t.id for t in parent.targets if isinstance(t, ast.Name)]
            if names:
                return self.follow_names(scope, set(names), parent, track, depth)
            track.escapes = True
            return [track]
        if isinstance(parent, ast.Return) or (isinstance(parent, ast.Yield) and _is_fixture(scope)):
            return self.follow_return(scope, track, depth)
        if isinstance(parent, ast.Expr):
            return [track]
        track.escapes = True
        return [track]

    def follow_element(self, call: ast.Call, index: int, depth: int) -> list[_Track]:
        """Tracks of element ``index`` of the tuple a helper call returns."""
        parent = self.parents.get(call)
        scope = self.enclosing_scope(call)
        track = _Track()
        if isinstance(parent, ast.Assign) and parent.value is call:
            for target in parent.targets:
                if isinstance(target, (ast.Tuple, ast.List)) and index < len(target.elts):
                    elt = target.elts[index]
                    if isinstance(elt, ast.Name) and elt.id != "_":
                        return self.follow_names(scope, {elt.id}, parent, track, depth)
                    return [track]
        if isinstance(parent, ast.Subscript) and _literal_int(parent.slice) == index:
            return self.follow_value(parent, depth)
        return [track]

    def follow_names(
        self,
        scope: ast.AST,
        names: set[str],
        start: ast.stmt | ast.arg,
        track: _Track,
        depth: int,
        follow_returns: bool = True,
    ) -> list[_Track]:
        """Events on ``names`` in ``scope`` after ``start``.  ``follow_returns=False`` inside a
        helper the stub was passed to: the caller goes on following its own name, so a
        ``return`` of the parameter ends the helper's part instead of fanning out to callers.

        A test parametrized with values written out (``@pytest.mark.parametrize("n", [0, 1])``)
        is followed once per case, each parameter bound to its value: the values decide the
        path as literals do, and each case's findings name that case."""
        cases = self.param_cases(scope) if follow_returns and id(scope) not in self._bound else []
        if not cases:
            return self._follow_names(scope, names, start, track, depth, follow_returns)
        per_case: list[list[_Track]] = []
        for case in cases:
            self._bound[id(scope)] = case
            try:
                per_case.append(
                    self._follow_names(scope, names, start, track.copy(), depth, follow_returns)
                )
            finally:
                del self._bound[id(scope)]
        first = [t.signature() for t in per_case[0]]
        if all([t.signature() for t in tracks] == first for tracks in per_case[1:]):
            # The values changed nothing the audit sees: one track for the whole test.
            return self._follow_names(scope, names, start, track, depth, follow_returns)
        return [t for tracks in per_case for t in tracks]

    def param_cases(self, func: ast.AST) -> list[tuple[str | None, dict[str, ast.expr]]]:
        """``(pytest id, {parameter: value expression})`` for each case of a test whose
        ``parametrize`` decorators spell their argument names and value lists out; ``[]`` when
        it has none, one cannot be read, or the cases are too many to follow one by one."""
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return []
        if id(func) not in self._cases_cache:
            self._cases_cache[id(func)] = _param_cases(func)
        return self._cases_cache[id(func)]

    def _follow_names(
        self,
        scope: ast.AST,
        names: set[str],
        start: ast.stmt | ast.arg,
        track: _Track,
        depth: int,
        follow_returns: bool,
    ) -> list[_Track]:
        start_key = (start.lineno, start.col_offset)
        end_line = getattr(start, "end_lineno", start.lineno)
        names = set(names)
        for target, raises in self.class_patches(scope, names):
            track.patched.append(target)
            if raises:
                track.raising.append(target)
        for node in self.nodes(scope):
            if (getattr(node, "lineno", 0), getattr(node, "col_offset", 0)) <= start_key:
                continue
            if getattr(node, "lineno", 0) <= end_line and node is not start:
                if self._inside(node, start):
                    continue
            if isinstance(node, ast.Assign):
                self.assignment(node, names, track)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                target = node.target
                if _is_attr_of(target, names) and (
                    isinstance(node, ast.AugAssign) or node.value is not None
                ):
                    name = target.attr  # type: ignore[attr-defined]
                    track.events.append(StubEvent(EventKind.SET, name, self.loc(node)))
            elif isinstance(node, ast.Call):
                self.call_event(node, names, track)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                if _is_attr_of(node, names) and not self._is_callee(node):
                    track.events.append(StubEvent(EventKind.READ, node.attr, self.loc(node)))
            elif isinstance(node, ast.Name) and node.id in names and isinstance(node.ctx, ast.Load):
                outcome = self.name_use(node, names, track, depth)
                if outcome is not False:
                    if not follow_returns:
                        return [track]
                    return self.follow_return(scope, track, depth, outcome)
        return [track]

    def _is_callee(self, node: ast.Attribute) -> bool:
        parent = self.parents.get(node)
        return isinstance(parent, ast.Call) and parent.func is node

    @staticmethod
    def _inside(node: ast.AST, container: ast.AST) -> bool:
        return any(sub is node for sub in ast.walk(container))

    def value_of(self, node: ast.expr | None) -> tuple[object] | tuple[()]:
        """What the test's expression ``node`` is known to be (``factories.analysis.values``),
        following a local name to the last plain assignment before it in the same function."""
        return test_value(node, self._resolve_local)

    def _resolve_local(self, name: ast.Name) -> ast.expr | None:
        scope = self.enclosing_scope(name)
        if isinstance(scope, ast.Module):
            return None
        bound = None
        for node in self.nodes(scope):
            if getattr(node, "lineno", 0) >= name.lineno:
                break
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == name.id
            ):
                bound = node.value
        if bound is None:
            bound = self._parameter_value(name)
        return bound

    def _parameter_value(self, name: ast.Name) -> ast.expr | None:
        """The value a parametrize case binds to ``name``, a parameter of an enclosing test."""
        current = self.parents.get(name)
        while current is not None:
            if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef)):
                case = self._bound.get(id(current))
                if case is not None and name.id in case[1] and _is_parameter(current, name.id):
                    return case[1][name.id]
            current = self.parents.get(current)
        return None

    def test_of(self, node: ast.AST) -> str | None:
        """The pytest test ``node`` runs in: ``test_x``, ``TestCls::test_x``, with ``[id]``
        when it is followed under one parametrize case; None outside a test function."""
        current = self.parents.get(node)
        found: ast.FunctionDef | ast.AsyncFunctionDef | None = None
        owner: ast.ClassDef | None = None
        while current is not None:
            if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found, owner = current, None
            elif isinstance(current, ast.ClassDef) and found is not None and owner is None:
                owner = current
            current = self.parents.get(current)
        if found is None or not found.name.startswith("test"):
            return None
        name = f"{owner.name}::{found.name}" if owner is not None else found.name
        case = self._bound.get(id(found))
        return f"{name}[{case[0]}]" if case is not None and case[0] is not None else name

    def replacement_raises(self, patch: ast.Call, replacement: ast.expr | None) -> bool:
        """Whether a patch installs something that raises on every call: a mock whose
        ``side_effect`` is an exception (as the replacement or as ``patch.object``'s keyword),
        or a function of the test whose body ends in ``raise``."""
        if any(k.arg == "side_effect" and is_exception_expr(k.value) for k in patch.keywords):
            return True
        if replacement is None:
            return False
        if raises_when_called(replacement, self._resolve_local):
            return True
        if isinstance(replacement, ast.Name):
            bound = self._resolve_local(replacement)
            if bound is not None:
                return raises_when_called(bound, self._resolve_local)
            func = self._local_def(replacement)
            return func is not None and bool(func.body) and isinstance(func.body[-1], ast.Raise)
        return False

    def _local_def(self, name: ast.Name) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The ``def`` that ``name`` refers to: in an enclosing function, else the module's."""
        current = self.parents.get(name)
        while current is not None:
            if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for stmt in ast.walk(current):
                    if (
                        isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
                        and stmt is not current
                        and stmt.name == name.id
                    ):
                        return stmt
            current = self.parents.get(current)
        return self.module.functions.get(name.id)

    def shape_of(self, call: ast.Call) -> CallShape:
        """The call's shape with what the test states about each argument as its values."""
        shape = CallShape.of(call)
        if shape.star_args:
            return shape
        return attrs.evolve(
            shape,
            positional_literals=tuple(self.value_of(a) for a in call.args),
            keyword_literals=tuple(
                (k.arg, known[0])
                for k in call.keywords
                if k.arg is not None and (known := self.value_of(k.value))
            ),
        )

    def is_detached(self, call: ast.Call) -> bool:
        """``asyncio.create_task(stub.m())``: the coroutine runs as a task the test may
        cancel, so the method need not run past its first ``await``."""
        parent = self.parents.get(call)
        return isinstance(parent, ast.Call) and getattr(
            parent.func, "attr", getattr(parent.func, "id", "")
        ) in ("create_task", "ensure_future", "run_coroutine_threadsafe")

    def expects_raise(self, node: ast.AST) -> bool:
        """Whether ``node`` runs inside ``with pytest.raises(...)`` (or ``assertRaises``)."""
        current = self.parents.get(node)
        while current is not None and not isinstance(
            current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)
        ):
            if isinstance(current, (ast.With, ast.AsyncWith)):
                for item in current.items:
                    expr = item.context_expr
                    if isinstance(expr, ast.Call) and getattr(expr.func, "attr", "") in (
                        "raises",
                        "assertRaises",
                        "assertRaisesRegex",
                    ):
                        return True
            current = self.parents.get(current)
        return False

    def assignment(self, node: ast.Assign, names: set[str], track: _Track) -> None:
        literal = self.value_of(node.value)
        for target in node.targets:
            for sub in ast.walk(target):
                if _is_attr_of(sub, names) and isinstance(sub.ctx, ast.Store):  # type: ignore[attr-defined]
                    track.events.append(
                        StubEvent(
                            EventKind.SET,
                            sub.attr,  # type: ignore[attr-defined]
                            self.loc(node),
                            value=literal[0] if literal else None,
                            has_value=bool(literal) and sub is target,
                        )
                    )
            if isinstance(target, ast.Name):
                if isinstance(node.value, ast.Name) and node.value.id in names:
                    names.add(target.id)  # alias
                elif target.id in names:
                    names.discard(target.id)  # rebound to something else

    def method_call(
        self,
        method: str,
        call: ast.Call,
        shape: CallShape | None = None,
        via: str | None = None,
    ) -> StubEvent:
        """The event of ``call`` running ``method`` on the stub: its shape (unless the caller
        adjusted it), and what the test around it says (``pytest.raises``, a detached task, the
        test and case it runs in)."""
        return StubEvent(
            EventKind.CALL,
            method,
            self.loc(call),
            self.shape_of(call) if shape is None else shape,
            expect_raise=self.expects_raise(call),
            detached=self.is_detached(call),
            test=self.test_of(call),
            via=via,
        )

    def call_event(self, node: ast.Call, names: set[str], track: _Track) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and _is_name_in(func.value, names):
            track.events.append(self.method_call(func.attr, node))
            return
        first = node.args[0] if node.args else None
        fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        # setattr(x, "n", v), monkeypatch.setattr(x, "n", v), patch.object(x, "n") and the
        # unbound ``object.__setattr__(x, "n", v)`` that nn.Module stubs need.
        if fname in ("setattr", "object", "__setattr__") and _is_name_in(first, names):
            literal = str_literal(node.args[1]) if len(node.args) > 1 else None
            if literal is not None:
                replacement = node.args[2] if len(node.args) > 2 else None
                value = self.value_of(replacement)
                if self.replacement_raises(node, replacement):
                    value = (Obj(truthy=True, raises=True),)
                track.events.append(
                    StubEvent(
                        EventKind.SET,
                        literal,
                        self.loc(node),
                        value=value[0] if value else None,
                        has_value=bool(value) and fname != "object",
                        must_exist=fname in ("setattr", "object")
                        and isinstance(func, ast.Attribute)
                        and not _creates(node),
                    )
                )
            else:
                track.opaque = True
            return
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "update"
            and _is_dict_of(func.value, names)
        ):
            keys = [k.arg for k in node.keywords if k.arg]
            if any(k.arg is None for k in node.keywords):
                track.opaque = True
            for arg in node.args:
                if isinstance(arg, ast.Dict) and all(str_literal(k) for k in arg.keys):
                    keys.extend(str_literal(k) for k in arg.keys)  # type: ignore[misc]
                else:
                    track.opaque = True
            for key in keys:
                track.events.append(StubEvent(EventKind.SET, key, self.loc(node)))

    def class_patches(
        self, scope: ast.AST, names: set[str], depth: int = 0, seen: frozenset[int] = frozenset()
    ) -> list[tuple[str, bool]]:
        """``(Cls.m, raises)`` for each ``monkeypatch.setattr(Cls, "m", ...)``/
        ``patch.object(Cls, "m")``
        anywhere in ``scope``, and the dotted ``"pkg.mod.Cls.m"`` of ``monkeypatch.setattr("...",
        v)``/``patch("...")`` (also as a decorator): the test replaced that method for every
        instance, the stub's too, so the audit must not follow the real one.

        Tests factor such patches into helpers (``_mock_base_model_load(monkeypatch)``), so the
        same-module functions ``scope`` calls are searched too (a few levels deep)."""
        key = (id(scope), frozenset(names))
        if key in self._patch_cache:
            return self._patch_cache[key]
        out = []
        helpers: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        decorators = [
            sub for deco in getattr(scope, "decorator_list", []) for sub in ast.walk(deco)
        ]
        for node in decorators + self.nodes(scope):
            if not isinstance(node, ast.Call):
                continue
            target = _dotted_patch_target(node)
            if target is not None:
                out.append((target, self.replacement_raises(node, _nth(node, 1))))
                continue
            if isinstance(node.func, ast.Name):
                helper = self.module.functions.get(node.func.id)
                if (
                    helper is not None
                    and id(helper) not in seen
                    and helper is not scope
                    and self._may_patch(helper)
                ):
                    helpers.append(helper)
                continue
            if not isinstance(node.func, ast.Attribute):
                continue
            if node.func.attr not in ("setattr", "object") or len(node.args) < 2:
                continue
            first, literal = node.args[0], str_literal(node.args[1])
            if literal is not None and not _is_name_in(first, names):
                raises = self.replacement_raises(node, _nth(node, 2))
                out.append((f"{ast.unparse(first)}.{literal}", raises))
        if depth < _MAX_HELPER_DEPTH:
            inner = seen | {id(scope)} | {id(h) for h in helpers}
            for helper in dict.fromkeys(helpers):
                out.extend(self.class_patches(helper, set(), depth + 1, inner))
        self._patch_cache[key] = out
        return out

    def _may_patch(self, func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """Whether ``func``, or a same-module function it calls, mentions a patch: a text
        test, so the many helpers that only build inputs are never walked for patches."""
        key = id(func)
        if key in self._may_patch_cache:
            return self._may_patch_cache[key]
        self._may_patch_cache[key] = False  # recursion guard
        text = "\n".join(self.module.lines[_first_line(func) - 1 : func.end_lineno or func.lineno])
        found = "setattr" in text or ".object(" in text
        if not found:
            for name in set(_CALLED_NAME.findall(text)):
                callee = self.module.functions.get(name)
                if callee is not None and callee is not func and self._may_patch(callee):
                    found = True
                    break
        self._may_patch_cache[key] = found
        return found

    def name_use(
        self, node: ast.Name, names: set[str], track: _Track, depth: int = 0
    ) -> int | bool | None:
        """Classify a bare load of the stub; returns a return-position when it is returned."""
        parent = self.parents.get(node)
        if isinstance(parent, ast.Attribute):
            return False  # attribute access, handled as set/call or a plain read
        if isinstance(parent, ast.Assign) and parent.value is node:
            return False  # alias, handled by assignment()
        if isinstance(parent, ast.Return) or (
            isinstance(parent, ast.Yield) and _is_fixture(self.enclosing_scope(node))
        ):
            return None  # returned, or yielded by a fixture: followed into its users
        if isinstance(parent, ast.Tuple) and isinstance(self.parents.get(parent), ast.Return):
            return parent.elts.index(node)
        if isinstance(parent, ast.Call):
            fname = getattr(parent.func, "id", getattr(parent.func, "attr", ""))
            if fname == "getattr" and self.dynamic_call(parent, node, track):
                return False
            if fname in _INSPECTING or fname in ("setattr", "object", "getattr", "__setattr__"):
                return False
            if isinstance(parent.func, ast.Attribute) and parent.func.attr == "update":
                return False
            if self.unbound_call(parent, node, track):
                return False
            if self.follow_helper(parent, node, track, depth):
                return False
        if isinstance(parent, (ast.Compare, ast.Assert)):
            return False
        track.escapes = True
        return False

    def dynamic_call(self, lookup: ast.Call, arg: ast.Name, track: _Track) -> bool:
        """``getattr(stub, name)(...)`` where the test states ``name`` (a literal, or a
        parametrize value of the case being followed): a call of that method."""
        call = self.parents.get(lookup)
        if not (
            isinstance(call, ast.Call)
            and call.func is lookup
            and len(lookup.args) >= 2
            and lookup.args[0] is arg
        ):
            return False
        known = self.value_of(lookup.args[1])
        if not known or not isinstance(known[0], str) or not known[0].isidentifier():
            return False
        track.events.append(self.method_call(known[0], call))
        return True

    def unbound_call(self, call: ast.Call, arg: ast.Name, track: _Track) -> bool:
        """``Worker.start(stub, ...)`` or ``_real_start(stub, ...)`` with a module-level
        ``_real_start = Worker.start``: a call of the method on the stub (as ``self``).  The
        stub still counts as handed out (the audit keeps the call only where ``Worker`` is a
        class of the stub's hierarchy with the same method)."""
        if not call.args or call.args[0] is not arg:
            return False
        if any(isinstance(a, ast.Starred) for a in call.args):
            return False
        target = self.unbound_target(call.func)
        if target is None:
            return False
        owner, method = target
        shape = self.shape_of(call)
        shape = attrs.evolve(
            shape,
            n_positional=shape.n_positional - 1,
            positional_literals=shape.positional_literals[1:],
        )
        track.events.append(self.method_call(method, call, shape=shape, via=owner))
        track.escapes = True
        return True

    def unbound_target(self, func: ast.expr) -> tuple[str, str] | None:
        """``(class expression, method)`` for a callee spelled ``Cls.method``/``mod.Cls.method``
        (a capitalised class name), or a module-level name bound to one."""
        if isinstance(func, ast.Name):
            bound = _module_alias(self.module.tree, func.id)
            return self.unbound_target(bound) if isinstance(bound, ast.Attribute) else None
        if not isinstance(func, ast.Attribute):
            return None
        owner = func.value
        parts = []
        while isinstance(owner, ast.Attribute):
            parts.append(owner.attr)
            owner = owner.value
        if not isinstance(owner, ast.Name):
            return None
        parts.append(owner.id)
        last = parts[0]
        if not last[:1].isupper() or last.isupper():
            return None
        return ".".join(reversed(parts)), func.attr

    def follow_helper(self, call: ast.Call, arg: ast.Name, track: _Track, depth: int) -> bool:
        """``helper(stub)`` for a function of this module: the helper's sets and calls on its
        parameter are the stub's.  False (the stub escapes) when the argument does not bind to
        one named parameter or the helper nesting is too deep."""
        if not isinstance(call.func, ast.Name) or depth >= _MAX_HELPER_DEPTH:
            return False
        helper = self.module.functions.get(call.func.id)
        if helper is None:
            return False
        param = _bound_parameter(helper, call, arg)
        if param is None:
            return False
        self._ensure_indexed(helper)
        sub = _Track()
        self.follow_names(helper, {param.arg}, param, sub, depth + 1, follow_returns=False)
        track.events.extend(sub.events)
        track.escapes = track.escapes or sub.escapes
        track.opaque = track.opaque or sub.opaque
        track.patched.extend(sub.patched)
        track.raising.extend(sub.raising)
        return True

    def _ensure_indexed(self, stmt: ast.AST) -> None:
        """Parent links for a top-level definition that no text needle has indexed yet."""
        if id(stmt) in self._indexed:
            return
        self._indexed.add(id(stmt))
        self.parents.setdefault(stmt, self.module.tree)
        for parent in ast.walk(stmt):
            for child in ast.iter_child_nodes(parent):
                self.parents[child] = parent

    def chained_use(self, attr: ast.Attribute, track: _Track) -> None:
        parent = self.parents.get(attr)
        if isinstance(parent, ast.Call) and parent.func is attr:
            track.events.append(self.method_call(attr.attr, parent))

    def follow_fixture(
        self, fixture: ast.FunctionDef | ast.AsyncFunctionDef, track: _Track, depth: int
    ) -> list[_Track]:
        """A pytest fixture's value reaches every function of this module that names the
        fixture as a parameter (tests, and fixtures that take it, followed in turn)."""
        name = _fixture_name(fixture)
        out: list[_Track] = []
        for stmt in self._index(name):
            for func in ast.walk(stmt):
                if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                if func is fixture:
                    continue
                args = func.args
                for param in list(args.posonlyargs) + list(args.args) + list(args.kwonlyargs):
                    if param.arg != name:
                        continue
                    self._ensure_indexed(stmt)
                    sub = _Track()
                    conts = self.follow_names(func, {name}, param, sub, depth + 1)
                    for cont in conts:
                        out.append(track.then(cont))
        return out

    def follow_return(
        self, scope: ast.AST, track: _Track, depth: int, position: int | bool | None = None
    ) -> list[_Track]:
        """Continue a returned stub into every caller of ``scope`` in this module."""
        if position is False:
            return [track]
        is_function = isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef))
        if not is_function or depth >= _MAX_HELPER_DEPTH:
            return [track]
        callers = self.callers(scope)
        only = self._only_caller.get(id(scope))
        if only is not None:
            callers = [(call, named) for call, named in callers if call is only]
        if (
            position is None
            and self._base is not None
            and self.parents.get(scope) is self.module.tree
        ):
            self.exports.append((scope.name, self._base, track.copy()))
        out: list[_Track] = []
        if position is None and _is_fixture(scope):
            out.extend(self.follow_fixture(scope, track, depth))
        if not callers:
            return out or [track]
        for call, named_class in callers:
            if position is None:
                continuations = self.follow_value(call, depth + 1)
            else:
                continuations = self.follow_element(call, position, depth + 1)
            for cont in continuations:
                if track.dynamic_class and named_class is not None:
                    cont.class_expr = named_class
                out.append(track.then(cont))
        return out

    def imported_uses(self, module: str, function: str, base: Stub, track: _Track) -> list[Stub]:
        """The stub ``function`` of test module ``module`` returns, followed into this
        module's calls of it (``from .utils import make_worker``)."""
        source = Path(base.location.path).resolve()
        local = [
            name
            for name, target in self.module.imports.items()
            if target.name == function
            and (
                target.module == module or _relative_file(self.module.path, target.module) == source
            )
        ]
        out: list[Stub] = []
        self._base = None  # a helper returning it again is not exported a second time
        for name in local:
            for stmt in self._index(name + "("):
                for call in ast.walk(stmt):
                    if not (isinstance(call, ast.Call) and getattr(call.func, "id", None) == name):
                        continue
                    for cont in self.follow_value(call, 1):
                        both = track.then(cont)
                        out.append(
                            attrs.evolve(
                                base,
                                class_expr=both.class_expr or base.class_expr,
                                events=tuple(both.events),
                                escapes=both.escapes,
                                opaque=both.opaque,
                                patched=tuple(sorted(set(both.patched))),
                                raising=tuple(sorted(set(both.raising))),
                                scope_module=self.module,
                            )
                        )
        return out

    def callers(
        self, func: ast.FunctionDef | ast.AsyncFunctionDef
    ) -> list[tuple[ast.Call, str | None]]:
        """The calls of ``func`` in this module, each with the class a method call names.

        A module-level function is called by name.  A method of a module-level class ``C``
        (a classmethod building the stub, a test class's helper) is called as ``C.m()`` or
        ``Sub.m()`` for a same-module subclass ``Sub`` (named: the call's class), or as
        ``self.m()``/``cls.m()`` inside ``C`` or such a subclass (the class is not named)."""
        owner = self.parents.get(func)
        if isinstance(owner, ast.ClassDef) and self.parents.get(owner) is self.module.tree:
            family = self._subclasses(owner.name)
            out: list[tuple[ast.Call, str | None]] = []
            for stmt in self._index("." + func.name + "("):
                for n in ast.walk(stmt):
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
                    elif receiver in ("self", "cls") and self._enclosing_class(n) in family:
                        out.append((n, None))
            return out
        if owner is not self.module.tree:
            return []
        return [
            (n, None)
            for stmt in self._index(func.name + "(")
            for n in ast.walk(stmt)
            if isinstance(n, ast.Call) and getattr(n.func, "id", None) == func.name
        ]

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

    def _enclosing_class(self, node: ast.AST) -> str | None:
        current = self.parents.get(node)
        while current is not None and not isinstance(current, ast.ClassDef):
            current = self.parents.get(current)
        return current.name if isinstance(current, ast.ClassDef) else None


@attrs.frozen
class _ClassChoice:
    """One class a computed ``object.__new__(X)`` names: the parametrize cases and helper
    arguments (by function ``id``) bound while its stub is followed, the caller a helper is
    followed into, and why nothing settled it (``class_expr`` then is the text as written)."""

    class_expr: str
    bound: dict[int, tuple] = attrs.field(factory=dict)
    only_caller: dict[int, ast.Call] = attrs.field(factory=dict)
    local_class: ast.ClassDef | None = None
    why: str | None = None


def _call_binding(
    func: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call
) -> dict[str, ast.expr] | None:
    """Each parameter of ``func`` to the expression ``call`` passes for it (or its default);
    None when the call unpacks arguments."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return None
    args = func.args
    positional = list(args.posonlyargs) + list(args.args)
    bound: dict[str, ast.expr] = {}
    for param, default in zip(positional[len(positional) - len(args.defaults) :], args.defaults):
        bound[param.arg] = default
    for param, default in zip(args.kwonlyargs, args.kw_defaults):
        if default is not None:
            bound[param.arg] = default
    for param, value in zip(positional, call.args):
        bound[param.arg] = value
    named = {p.arg for p in positional[len(args.posonlyargs) :]} | {p.arg for p in args.kwonlyargs}
    for kw in call.keywords:
        if kw.arg in named:
            bound[kw.arg] = kw.value
    return bound


def _bound_parameter(
    func: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call, arg: ast.expr
) -> ast.arg | None:
    """The parameter of ``func`` that ``arg`` (a positional or keyword argument of ``call``)
    binds to, or None when unpacking makes that unknowable."""
    params = list(func.args.posonlyargs) + list(func.args.args)
    for i, value in enumerate(call.args):
        if isinstance(value, ast.Starred):
            return None
        if value is arg:
            return params[i] if i < len(params) else None
    for kw in call.keywords:
        if kw.value is arg and kw.arg is not None:
            for param in params[len(func.args.posonlyargs) :] + list(func.args.kwonlyargs):
                if param.arg == kw.arg:
                    return param
    return None


_MAX_CASES = 16


def _param_cases(
    func: ast.FunctionDef | ast.AsyncFunctionDef,
) -> list[tuple[str | None, dict[str, ast.expr]]]:
    """The parametrize cases of ``func`` in pytest's order and with pytest's ids: the
    decorator nearest the ``def`` varies slowest and its id part comes first."""
    decorators = [
        d
        for d in func.decorator_list
        if isinstance(d, ast.Call) and getattr(d.func, "attr", None) == "parametrize"
    ]
    if not decorators:
        return []
    cases: list[tuple[str | None, dict[str, ast.expr]]] = [("", {})]
    for deco in reversed(decorators):
        values = _parametrize_values(deco)
        if not values:
            return []
        cases = [
            (_joined_id(cid, vid), {**bound, **more})
            for cid, bound in cases
            for vid, more in values
        ]
        if len(cases) > _MAX_CASES:
            return []
    used = {n.id for n in ast.walk(func) if isinstance(n, ast.Name)}
    if not any(name in used for name in cases[0][1]):
        return []
    return cases


def _joined_id(head: str | None, tail: str | None) -> str | None:
    """pytest's ``a-b`` id of a case; None when a part's id is not known from the text."""
    if head is None or tail is None:
        return None
    return f"{head}-{tail}" if head else tail


def _parametrize_values(deco: ast.Call) -> list[tuple[str | None, dict[str, ast.expr]]]:
    """``(id, {name: value})`` per value of one ``parametrize(names, values[, ids=...])``."""
    if len(deco.args) < 2:
        return []
    first, listed = deco.args[0], deco.args[1]
    if str_literal(first) is not None:
        names = [n.strip() for n in str_literal(first).split(",") if n.strip()]  # type: ignore[union-attr]
    elif isinstance(first, (ast.List, ast.Tuple)) and all(str_literal(e) for e in first.elts):
        names = [str_literal(e) for e in first.elts]  # type: ignore[misc]
    else:
        return []
    if not names or not isinstance(listed, (ast.List, ast.Tuple)):
        return []
    ids: list[str] | None = None
    for kw in deco.keywords:
        if kw.arg == "ids":
            if isinstance(kw.value, (ast.List, ast.Tuple)) and all(
                str_literal(e) is not None for e in kw.value.elts
            ):
                ids = [str_literal(e) for e in kw.value.elts]  # type: ignore[misc]
            else:
                return []  # ids from a function: the case ids cannot be spelled
    out: list[tuple[str | None, dict[str, ast.expr]]] = []
    for index, elt in enumerate(listed.elts):
        explicit = None
        if isinstance(elt, ast.Call) and getattr(elt.func, "attr", None) == "param":
            explicit = next((str_literal(k.value) for k in elt.keywords if k.arg == "id"), None)
            parts = list(elt.args)
        elif len(names) == 1:
            parts = [elt]
        elif isinstance(elt, (ast.Tuple, ast.List)):
            parts = list(elt.elts)
        else:
            return []
        if len(parts) != len(names) or any(isinstance(p, ast.Starred) for p in parts):
            return []
        case_id: str | None
        if ids is not None and index < len(ids):
            case_id = ids[index]
        elif explicit is not None:
            case_id = explicit
        else:
            id_parts = [_id_part(p) for p in parts]
            case_id = None if None in id_parts else "-".join(id_parts)  # type: ignore[arg-type]
        out.append((case_id, dict(zip(names, parts))))
    return out


def _id_part(value: ast.expr) -> str | None:
    """pytest's id for one parameter value where the text settles it (a plain literal), else
    None: an enum member's or an object's id depends on its runtime type."""
    if isinstance(value, ast.Constant) and isinstance(
        value.value, (bool, int, float, str, type(None))
    ):
        return str(value.value)
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
        if isinstance(value.operand, ast.Constant) and isinstance(
            value.operand.value, (int, float)
        ):
            return str(-value.operand.value)
    return None


def _relative_file(importer: Path, target: str) -> Path | None:
    """The file a relative ``from .mod import x`` in ``importer`` names (a test file outside
    the audited tree has no dotted name to resolve it by)."""
    if not target.startswith("."):
        return None
    rest = target.lstrip(".")
    base = Path(importer).resolve().parent
    for _ in range(len(target) - len(rest) - 1):
        base = base.parent
    return base.joinpath(*rest.split(".")).with_suffix(".py") if rest else base / "__init__.py"


def _callee(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _module_alias(tree: ast.Module, name: str) -> ast.expr | None:
    """The value of the one top-level ``name = value`` assignment, if there is exactly one."""
    found = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
    ]
    return found[0] if len(found) == 1 else None


def _is_parameter(func: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    args = func.args
    return any(a.arg == name for a in args.posonlyargs + args.args + args.kwonlyargs)


def _dotted_patch_target(call: ast.Call) -> str | None:
    """``"pkg.mod.Cls.m"`` of ``monkeypatch.setattr("pkg.mod.Cls.m", v)`` or
    ``[mock.]patch("pkg.mod.Cls.m", ...)``; None for any other call."""
    func = call.func
    fname = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
    dotted = str_literal(call.args[0]) if call.args else None
    if dotted is None or "." not in dotted:
        return None
    if fname == "patch" or (fname == "setattr" and len(call.args) == 2):
        return dotted
    return None


def _is_fixture(scope: ast.AST) -> bool:
    """A function decorated ``@pytest.fixture`` / ``@fixture`` (with or without arguments)."""
    for deco in getattr(scope, "decorator_list", []):
        target = deco.func if isinstance(deco, ast.Call) else deco
        if (getattr(target, "attr", None) or getattr(target, "id", None)) == "fixture":
            return True
    return False


def _fixture_name(fixture: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """The name tests request: ``@pytest.fixture(name="x")`` or the function's own."""
    for deco in fixture.decorator_list:
        if isinstance(deco, ast.Call):
            for kw in deco.keywords:
                if kw.arg == "name" and isinstance(kw.value, ast.Constant):
                    return str(kw.value.value)
    return fixture.name


def _nth(call: ast.Call, index: int) -> ast.expr | None:
    return call.args[index] if len(call.args) > index else None


def _creates(call: ast.Call) -> bool:
    """``raising=False`` (monkeypatch) or ``create=True`` (patch.object): the name may be new."""
    for kw in call.keywords:
        if kw.arg == "raising" and isinstance(kw.value, ast.Constant) and not kw.value.value:
            return True
        if kw.arg == "create" and not (isinstance(kw.value, ast.Constant) and not kw.value.value):
            return True
    return False


def _first_line(stmt: ast.stmt) -> int:
    decorators = getattr(stmt, "decorator_list", [])
    return min([stmt.lineno] + [d.lineno for d in decorators])


def _is_name_in(node: ast.AST | None, names: set[str]) -> bool:
    return isinstance(node, ast.Name) and node.id in names


def _is_attr_of(node: ast.AST, names: set[str]) -> bool:
    return isinstance(node, ast.Attribute) and _is_name_in(node.value, names)


def _is_dict_of(node: ast.AST, names: set[str]) -> bool:
    """``x.__dict__`` or ``vars(x)`` for a tracked name ``x``."""
    if isinstance(node, ast.Attribute) and node.attr == "__dict__":
        return _is_name_in(node.value, names)
    return (
        isinstance(node, ast.Call)
        and getattr(node.func, "id", None) == "vars"
        and len(node.args) == 1
        and _is_name_in(node.args[0], names)
    )


def _literal_int(node: ast.AST) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    return None


def has_object_new(path: Path) -> bool:
    """Cheap text pre-filter used before parsing a whole test tree.

    An ``OSError`` propagates: a file that cannot be read must be reported, not passed off as
    one without stubs.  Any ASCII-compatible encoding shows the call, hence ``replace``.
    """
    return "object.__new__(" in path.read_text(encoding="utf-8", errors="replace")
