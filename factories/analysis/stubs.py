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

    def then(self, cont: _Track) -> _Track:
        """This track followed by ``cont`` (the stub continuing in a caller or a fixture user)."""
        return _Track(
            events=self.events + cont.events,
            escapes=self.escapes or cont.escapes,
            opaque=self.opaque or cont.opaque,
            patched=self.patched + cont.patched,
            raising=self.raising + cont.raising,
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
            class_expr = self.class_of(node)
            base = Stub(
                class_expr=class_expr,
                location=self.loc(node),
                module=self.module,
                local_imports=self.scope_imports(node),
            )
            for track in self.follow_value(node, 0):
                found.append(
                    attrs.evolve(
                        base,
                        events=tuple(track.events),
                        escapes=track.escapes,
                        opaque=track.opaque,
                        patched=tuple(sorted(set(track.patched))),
                        raising=tuple(sorted(set(track.raising))),
                    )
                )
        return found

    def class_of(self, call: ast.Call) -> str:
        """The class expression of ``object.__new__(X)``; ``cls`` in a classmethod (and
        ``type(self)``/``self.__class__`` in a method) is the class that defines it."""
        expr = call.args[0]
        text = ast.unparse(expr)
        if text not in ("cls", "type(self)", "self.__class__"):
            return text
        current = self.parents.get(call)
        while current is not None and not isinstance(current, ast.ClassDef):
            current = self.parents.get(current)
        return current.name if isinstance(current, ast.ClassDef) else text

    # -- following the object -------------------------------------------------------------

    def follow_value(self, value: ast.AST, depth: int) -> list[_Track]:
        """Tracks of the object produced by expression ``value`` (a creation or helper call)."""
        parent = self.parents.get(value)
        scope = self.enclosing_scope(value)
        track = _Track()
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
        ``return`` of the parameter ends the helper's part instead of fanning out to callers."""
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
        return bound

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

    def call_event(self, node: ast.Call, names: set[str], track: _Track) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and _is_name_in(func.value, names):
            track.events.append(
                StubEvent(
                    EventKind.CALL,
                    func.attr,
                    self.loc(node),
                    self.shape_of(node),
                    expect_raise=self.expects_raise(node),
                    detached=self.is_detached(node),
                )
            )
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
            if fname in _INSPECTING or fname in ("setattr", "object", "getattr", "__setattr__"):
                return False
            if isinstance(parent.func, ast.Attribute) and parent.func.attr == "update":
                return False
            if self.follow_helper(parent, node, track, depth):
                return False
        if isinstance(parent, (ast.Compare, ast.Assert)):
            return False
        track.escapes = True
        return False

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
            track.events.append(
                StubEvent(
                    EventKind.CALL,
                    attr.attr,
                    self.loc(parent),
                    self.shape_of(parent),
                    expect_raise=self.expects_raise(parent),
                    detached=self.is_detached(parent),
                )
            )

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
        callers = [
            n
            for stmt in self._index(scope.name + "(")
            for n in ast.walk(stmt)
            if isinstance(n, ast.Call) and getattr(n.func, "id", None) == scope.name
        ]
        out: list[_Track] = []
        if position is None and _is_fixture(scope):
            out.extend(self.follow_fixture(scope, track, depth))
        if not callers:
            return out or [track]
        for call in callers:
            if position is None:
                continuations = self.follow_value(call, depth + 1)
            else:
                continuations = self.follow_element(call, position, depth + 1)
            for cont in continuations:
                out.append(track.then(cont))
        return out


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
