"""The stand-in extractor: every stand-in a test module builds, its fields and its meetings.

A stand-in is followed as a stub is (``_follow``): through local aliases, into a same-module
helper it is passed to, out of a helper or fixture that returns or yields it (a returned
tuple's element too) into every caller or user, and into a test from the parametrize case
that holds it.  What the test sets on it is a field; a stand-in built as (or inside) a field's
value is a child under that field.  Every other hand-over is a ``Meeting``.  The pieces it
shares with the stub extraction (``ModuleScope``, ``CaseReader``, ``EventRecorder``'s
questions about calls, ``_follow``'s parameter binding and fixture rules) are used as they are.
"""

from __future__ import annotations

import ast

import attrs

from factories.analysis._walk import statements, walk
from factories.analysis.extraction._cases import (
    NO_BINDINGS,
    Bindings,
    CaseReader,
    ParamCase,
    parametrize_values,
)
from factories.analysis.extraction._class_choice import call_binding
from factories.analysis.extraction._events import EventRecorder, _is_dict_of
from factories.analysis.extraction._follow import (
    _INSPECTING,
    MAX_FUNCTION_HOPS,
    _bound_parameter,
    _fixture_name,
    _is_fixture,
)
from factories.analysis.extraction._scope import ModuleScope
from factories.analysis.extraction._standin_index import StandInSites
from factories.analysis.extraction._standin_meetings import MeetingMaker
from factories.analysis.extraction._standin_model import (
    Meeting,
    MeetingHow,
    StandIn,
    StandInField,
)
from factories.analysis.extraction._standin_sites import (
    creation_fields,
    dotted_name,
    literal_dict_items,
)
from factories.analysis.extraction._syntax import (
    FUNCTION_DEFS,
    is_attr_of,
    is_name_in,
    is_parameter,
)
from factories.analysis.extraction._syntax import str_literal as _str
from factories.analysis.source_tree import ModuleInfo
from factories.analysis.values import (
    EnumMember,
    Obj,
    built_array,
    compare,
    returning,
    truthy,
)

_LITERALS = (int, float, complex, str, bytes, bool, type(None))


def _stated(
    known: tuple[object] | tuple[()], value: ast.expr, children: tuple[StandIn, ...]
) -> tuple[object] | tuple[()]:
    """What a stand-in's field states, beyond what its children say: a literal, an enum
    member (``Backend.TRITON``), a dict display with literal keys (its items, where
    stated), and the result of arithmetic (``qlen - 1``) or an array
    the test builds (``torch.full(shape, -1)``), never ``None`` whatever their operands
    (``values.Obj``, of unknown truth)."""
    if known:
        if isinstance(known[0], Obj) and known[0].items is not None and not children:
            return known  # a dict display with literal keys (``{"backend": "x"}``)
        return known if isinstance(known[0], (*_LITERALS, EnumMember)) else ()
    if (isinstance(value, ast.BinOp) or built_array(value)) and not children:
        return (Obj(),)
    return ()


@attrs.frozen
class _Route:
    """What a stand-in is followed under: function hops so far, the parametrize case ids in
    force, the creations being built (a stand-in set on itself ends there), and whether a
    ``return`` continues into callers (not inside a helper it was passed to)."""

    depth: int = 0
    cases: tuple[str, ...] = ()
    building: frozenset[int] = frozenset()
    follow_returns: bool = True
    # Whether stand-ins built as the followed object's fields are its children: not while
    # following an object that only holds the stand-in (``_held``), whose other fields are
    # stand-ins of their own.
    fields: bool = True
    # Whether the stand-ins built here are one alternative the test may not take
    # (``StandIn.possible``).
    possible: bool = False

    def hop(self, follow_returns: bool = True) -> _Route:
        return attrs.evolve(self, depth=self.depth + 1, follow_returns=follow_returns)


@attrs.define
class _Found:
    """What following one stand-in collects, in source order."""

    fields: list[StandInField] = attrs.field(factory=list)
    meetings: list[Meeting] = attrs.field(factory=list)
    opaque: bool = False
    dropped: set[str] = attrs.field(factory=set)
    # ``ns.cfg.n = v`` where ``ns`` is built: ``(("cfg",), field)`` for each field set
    # through a field's value.
    deep: list[tuple[tuple[str, ...], StandInField]] = attrs.field(factory=list)


class StandInExtractor:
    """Extracts the stand-ins of one parsed test module; each top-level stand-in once, nested
    ones as children of the stand-in they are a field of."""

    def __init__(self, module: ModuleInfo, scope: ModuleScope | None = None) -> None:
        self.module = module
        self.scope = scope or ModuleScope(module)
        self.reader = CaseReader(self.scope)
        recorder = EventRecorder(self.scope, self.reader)
        self.sites = StandInSites(self.scope, self.reader)
        self.meet = MeetingMaker(self.scope, self.reader, recorder, self.sites)
        self._as_child: set[int] = set()

    def standins(self) -> list[StandIn]:
        nested = self.sites.nested()
        # Creations that following showed to be a field of another stand-in (``setattr(stub,
        # "cfg", cfg)``) are children there, not stand-ins of their own.
        self._as_child.clear()
        built = [
            (call, self._build(call, _Route()))
            for call in self.sites.calls
            if id(call) not in nested
        ]
        return [standin for call, standin in built if id(call) not in self._as_child]

    # -- sites ----------------------------------------------------------------------------

    def _build(self, call: ast.Call, route: _Route) -> StandIn:
        kind, ref = self.sites.kind_of(call)  # type: ignore[misc]
        route = attrs.evolve(route, building=route.building | {id(call)})
        found = _Found()
        named, found.opaque = creation_fields(call, kind)
        for name, value, where in named:
            found.fields.append(self._field(name, value, where, route))
        self._where(call, found, route)
        fields = found.fields
        for path, field in found.deep:
            fields = _set_through(fields, path, field)
        return StandIn(
            kind=kind,
            location=self.scope.loc(call),
            fields=tuple(fields),
            class_ref=ref,
            opaque=found.opaque,
            # A helper several calls share reaches the same place once per call.
            meetings=tuple(dict.fromkeys(found.meetings)),
            dropped=frozenset(found.dropped),
            possible=route.possible,
        )

    def _field(self, name: str, value: ast.expr, where: ast.AST, route: _Route) -> StandInField:
        children = tuple(self._children(value, route))
        known = _stated(self.reader.value_of(value, NO_BINDINGS), value, children)
        if not known and not children:
            known = returning(value, self.reader.resolver(NO_BINDINGS))
        return StandInField(
            name,
            self.scope.loc(where),
            value=known[0] if known else None,
            has_value=bool(known),
            children=children,
        )

    def _children(self, value: ast.expr, route: _Route) -> list[StandIn]:
        """Stand-ins built as ``value`` or inside it (a list of them), or named by it."""
        out: list[StandIn] = []
        if not route.fields:
            return out
        pending: list[ast.AST] = [value]
        while pending:
            node = pending.pop(0)
            target = node
            if isinstance(node, ast.Name):
                bound = self.reader.resolve_local(node, NO_BINDINGS)
                target = bound if bound is not None else node
            if self.sites.kind_of(target) is not None:
                if id(target) not in route.building:
                    self._as_child.add(id(target))
                    out.append(self._build(target, route))  # type: ignore[arg-type]
                continue
            if isinstance(node, ast.IfExp):
                sides, possible = self._alternatives(node)
                alternative = attrs.evolve(route, possible=route.possible or possible)
                for side in sides:
                    if self._builds(side):
                        out.extend(self._children(side, alternative))
            elif isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.keyword)):
                pending.extend(ast.iter_child_nodes(node))
            elif isinstance(node, ast.Call):
                pending.extend(node.args)
                pending.extend(node.keywords)
        return out

    def _alternatives(self, node: ast.IfExp) -> tuple[list[ast.expr], bool]:
        """The alternatives of ``a if c else b`` the test may take, and whether a stand-in built
        as one is only possible (only a side that is a creation is one: a call that takes a
        namespace, ``make(cfg=ns)``, returns some other object).  Both where both build one
        (the value is a namespace either way); else those the test's values select under some
        case it runs (a parametrize case of its test, a same-module call of its helper): a
        read of that alternative's stand-in is one that case makes; else, where some case
        leaves the condition undecided, both, as possible (it may pick the other side,
        ``None`` say)."""
        sides = [node.body, node.orelse]
        if all(self._builds(side) for side in sides):
            return sides, False
        chosen: list[ast.expr] = []
        undecided = False
        for bound in self._value_cases(self.scope.enclosing_scope(node)) or [None]:
            taken = None if bound is None else self._condition(node.test, bound)
            if taken is None:
                undecided = True
                continue
            side = node.body if taken else node.orelse
            if side not in chosen:
                chosen.append(side)
        if any(self._builds(side) for side in chosen) or not undecided:
            return chosen, False
        return sides, True

    def _value_cases(self, func: ast.AST) -> list[Bindings] | None:
        """The values ``func`` runs under, one ``Bindings`` each: its parametrize cases; for a
        module-level helper, each same-module call's arguments under each case of the test
        making it; None where a call unpacks its arguments."""
        cases = self.reader.param_cases(func)
        if cases or not isinstance(func, FUNCTION_DEFS):
            return [NO_BINDINGS.with_case(func, case) for case in cases] or [NO_BINDINGS]
        if self.scope.parents.get(func) is not self.module.tree:
            return [NO_BINDINGS]
        out: list[Bindings] = []
        for caller, _ in self.scope.callers(func):
            binding = call_binding(func, caller)
            if binding is None:
                return None
            by_call = NO_BINDINGS.with_case(func, ParamCase(None, binding))
            outer = self.scope.enclosing_scope(caller)
            outer_cases = self.reader.param_cases(outer)
            out.extend([by_call.with_case(outer, case) for case in outer_cases] or [by_call])
        return out or [NO_BINDINGS]

    def _condition(self, test: ast.expr, bindings: Bindings) -> bool | None:
        """The truth of the test's condition ``test`` under ``bindings``: a value it states, or
        one comparison of two (``method is None``); None when they do not settle it."""
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            left = self.reader.value_of(test.left, bindings)
            right = self.reader.value_of(test.comparators[0], bindings)
            return compare(test.ops[0], left[0], right[0]) if left and right else None
        known = self.reader.value_of(test, bindings)
        return truthy(known[0]) if known else None

    def _builds(self, value: ast.expr) -> bool:
        """Whether ``value`` is a stand-in's creation, or a local name bound to one."""
        if isinstance(value, ast.Name):
            bound = self.reader.resolve_local(value, NO_BINDINGS)
            value = bound if bound is not None else value
        return self.sites.kind_of(value) is not None

    # -- following ------------------------------------------------------------------------

    def _where(self, value: ast.expr, found: _Found, route: _Route) -> None:
        """Where the object ``value`` (a creation, or a call returning it) goes."""
        parent = self.scope.parents.get(value)
        scope = self.scope.enclosing_scope(value)
        owner = self.sites.owner_of(value)
        if owner is not None:
            call, field = owner
            found.meetings.append(self.meet.attribute(call, field, call, route.cases))
        elif isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is value:
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            for target in targets:
                if isinstance(target, ast.Attribute):
                    self._put_on(target, parent, scope, found, route)
            names = {t.id for t in targets if isinstance(t, ast.Name)}
            if names:
                self._follow_names(scope, names, parent, found, route)
        elif isinstance(parent, ast.Return) or (
            isinstance(parent, ast.Yield) and _is_fixture(scope)
        ):
            self._follow_return(scope, found, route)
        elif isinstance(parent, ast.Call) and self._cast(parent, value):
            self._where(parent, found, route)  # ``typing.cast(T, ns)`` returns ``ns``
        elif isinstance(parent, ast.keyword) or (
            isinstance(parent, ast.Call) and value in parent.args
        ):
            call = parent if isinstance(parent, ast.Call) else self.scope.parents.get(parent)
            if isinstance(call, ast.Call):
                self._argument(call, value, found, route)
        elif isinstance(parent, (ast.List, ast.Tuple)):
            self._parametrized(value, found, route)

    def _cast(self, call: ast.Call, value: ast.expr) -> bool:
        """Whether ``call`` is ``typing.cast(T, value)``, which hands back ``value`` itself."""
        return (
            len(call.args) == 2
            and call.args[1] is value
            and dotted_name(call.func, self.module.imports) == "typing.cast"
        )

    def _follow_names(
        self, scope: ast.AST, names: set[str], start: ast.AST, found: _Found, route: _Route
    ) -> None:
        start_key = (getattr(start, "lineno", 0), getattr(start, "col_offset", 0))
        end_line = getattr(start, "end_lineno", None) or start_key[0]
        inside = {id(sub) for sub in walk(start)}
        names = set(names)
        for node in self.scope.nodes_after(scope, start_key):
            if getattr(node, "lineno", 0) <= end_line and id(node) in inside:
                continue
            if isinstance(node, ast.Name) and node.id in names and isinstance(node.ctx, ast.Load):
                self._name_use(node, scope, found, route)
            elif isinstance(node, ast.Assign):
                self._assignment(node, names, found, route)
            elif isinstance(node, ast.Delete):
                found.dropped.update(
                    t.attr  # type: ignore[attr-defined]
                    for t in node.targets
                    if is_attr_of(t, names)
                )
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                if is_attr_of(node.target, names) and node.value is not None:
                    name = node.target.attr  # type: ignore[attr-defined]
                    field = self._field(name, node.value, node, route)
                    if isinstance(node, ast.AugAssign):  # ``ns.n += 1``: the value is not 1
                        field = attrs.evolve(field, value=None, has_value=False)
                    found.fields.append(field)
            elif isinstance(node, ast.Call):
                self._call_sets(node, names, found, route)

    def _assignment(self, node: ast.Assign, names: set[str], found: _Found, route: _Route) -> None:
        for target in node.targets:
            if is_attr_of(target, names):
                found.fields.append(self._field(target.attr, node.value, node, route))  # type: ignore[attr-defined]
            elif isinstance(target, ast.Attribute) and route.depth == 0:
                # Only where it is built: a caller or test that sets more on a namespace a
                # helper built (``cfg = make(); cfg.cache.n = 1``) does so on its own path.
                path = _path_from(target.value, names)
                if path:
                    field = self._field(target.attr, node.value, node, route)
                    found.deep.append((path, field))
            elif isinstance(target, ast.Name):
                if is_name_in(node.value, names):
                    names.add(target.id)
                elif target.id in names:
                    names.discard(target.id)

    def _call_sets(self, call: ast.Call, names: set[str], found: _Found, route: _Route) -> None:
        """``setattr(ns, "f", v)`` (``monkeypatch.setattr`` too) and ``vars(ns).update(...)``/
        ``ns.__dict__.update(...)``: fields, or opaque where the names are computed."""
        func = call.func
        fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if fname == "delattr" and len(call.args) == 2 and is_name_in(call.args[0], names):
            name = _str(call.args[1])
            if name is not None:
                found.dropped.add(name)
        elif fname in ("setattr", "__setattr__") and call.args and is_name_in(call.args[0], names):
            name = _str(call.args[1]) if len(call.args) > 1 else None
            if name is None or len(call.args) < 3:
                found.opaque = True
            else:
                found.fields.append(self._field(name, call.args[2], call, route))
        elif (
            fname == "update" and isinstance(func, ast.Attribute) and _is_dict_of(func.value, names)
        ):
            for kw in call.keywords:
                if kw.arg is None:
                    found.opaque = True
                else:
                    found.fields.append(self._field(kw.arg, kw.value, kw, route))
            for arg in call.args:
                items = literal_dict_items(arg)
                if items is None:
                    found.opaque = True
                for key, value in items or ():
                    found.fields.append(self._field(key, value, value, route))

    def _name_use(self, node: ast.Name, scope: ast.AST, found: _Found, route: _Route) -> None:
        parent = self.scope.parents.get(node)
        if isinstance(parent, ast.Assign) and parent.value is node:
            for target in parent.targets:
                if isinstance(target, ast.Attribute):
                    self._put_on(target, parent, scope, found, route)
        elif isinstance(parent, ast.Return) or (
            isinstance(parent, ast.Yield) and _is_fixture(scope)
        ):
            self._follow_return(scope, found, route)
        elif isinstance(parent, ast.Tuple) and isinstance(
            self.scope.parents.get(parent), ast.Return
        ):
            self._follow_return(scope, found, route, parent.elts.index(node))
        elif isinstance(parent, ast.keyword) or (
            isinstance(parent, ast.Call) and node in parent.args
        ):
            call = parent if isinstance(parent, ast.Call) else self.scope.parents.get(parent)
            if isinstance(call, ast.Call) and self.sites.kind_of(call) is not None:
                field = parent.arg if isinstance(parent, ast.keyword) else None
                found.meetings.append(self.meet.attribute(call, field, call, route.cases))
            elif isinstance(call, ast.Call):
                self._argument(call, node, found, route)
        elif isinstance(parent, ast.Attribute) and not route.fields:
            self._method_of_holder(parent, found, route)

    def _method_of_holder(self, attr: ast.Attribute, found: _Found, route: _Route) -> None:
        """``holder.m(...)``, ``holder`` an object the test built by calling its class
        (``Callee.instance``) and set the followed stand-in on: the real object is ``self`` of
        ``m``, which reads the stand-in through the field it holds it in (``_held`` adds the
        fields, ``Meeting.via``)."""
        call = self.scope.parents.get(attr)
        if not (isinstance(call, ast.Call) and call.func is attr):
            return
        meeting = self.meet.call(MeetingHow.SELF, call, attr.value, route.cases, attr)
        if meeting.callee is not None and meeting.callee.instance:
            found.meetings.append(meeting)

    def _put_on(
        self, target: ast.Attribute, stmt: ast.stmt, scope: ast.AST, found: _Found, route: _Route
    ) -> None:
        """``owner.field = <the stand-in>``: a meeting on ``owner``; where ``owner`` is no
        stand-in (a plain ``MagicMock``, an object built some other way, ``app.state``), the
        stand-in also goes wherever that object goes next, as its field (``_held``)."""
        meeting = self.meet.attribute(target.value, target.attr, stmt, route.cases)
        found.meetings.append(meeting)
        if meeting.owner_kind is None:
            self._held(target, stmt, scope, found, route)

    def _held(
        self, target: ast.Attribute, stmt: ast.stmt, scope: ast.AST, found: _Found, route: _Route
    ) -> None:
        """``runner.cfg = ns`` (or ``app.state.args = ns``), then ``f(runner)``: the holder's
        later hand-overs in its scope (into helpers, out of returns, as a stand-in is followed)
        are the stand-in's, each with the fields that lead to it (``Meeting.via``)."""
        path: tuple[str, ...] = (target.attr,)
        owner = target.value
        while isinstance(owner, ast.Attribute):
            path, owner = (owner.attr, *path), owner.value
        if not isinstance(owner, ast.Name) or route.depth >= MAX_FUNCTION_HOPS:
            return
        held = _Found()
        self._follow_names(scope, {owner.id}, stmt, held, attrs.evolve(route.hop(), fields=False))
        found.meetings.extend(
            attrs.evolve(meeting, via=(*meeting.via, *path))
            for meeting in held.meetings
            if meeting.how is not MeetingHow.ATTRIBUTE
        )

    def _follow_return(
        self, scope: ast.AST, found: _Found, route: _Route, position: int | None = None
    ) -> None:
        """A returned (or yielded) stand-in continues in every caller or fixture user."""
        if not (route.follow_returns and isinstance(scope, FUNCTION_DEFS)):
            return
        if route.depth >= MAX_FUNCTION_HOPS:
            return
        if position is None and _is_fixture(scope):
            name = _fixture_name(scope)
            for stmt in self.scope.index(name):
                for func in statements(stmt):
                    if not isinstance(func, FUNCTION_DEFS) or func is scope:
                        continue
                    args = func.args
                    for param in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
                        if param.arg == name:
                            self.scope.ensure_indexed(stmt)
                            self._follow_names(func, {name}, param, found, route.hop())
        for call, _ in self.scope.callers(scope):
            if position is None:
                self._where(call, found, route.hop())
                continue
            parent = self.scope.parents.get(call)
            if not (isinstance(parent, ast.Assign) and parent.value is call):
                continue
            for target in parent.targets:
                if isinstance(target, (ast.Tuple, ast.List)) and position < len(target.elts):
                    elt = target.elts[position]
                    if isinstance(elt, ast.Name) and elt.id != "_":
                        caller_scope = self.scope.enclosing_scope(call)
                        self._follow_names(caller_scope, {elt.id}, parent, found, route.hop())

    def _parametrized(self, value: ast.expr, found: _Found, route: _Route) -> None:
        """A stand-in written as a parametrize value reaches the test under that case."""
        current = self.scope.parents.get(value)
        while current is not None and not isinstance(current, ast.stmt):
            deco, current = current, self.scope.parents.get(current)
        if not isinstance(current, FUNCTION_DEFS):
            return
        for deco in current.decorator_list:
            if not isinstance(deco, ast.Call) or getattr(deco.func, "attr", "") != "parametrize":
                continue
            for case in parametrize_values(deco):
                for name, expr in case.values.items():
                    if expr is not value:
                        continue
                    args = current.args
                    for param in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
                        if param.arg == name:
                            in_case = attrs.evolve(
                                route, cases=(case.id,) if case.id is not None else ()
                            )
                            self._follow_names(current, {name}, param, found, in_case)

    # -- meetings -------------------------------------------------------------------------

    def _argument(self, call: ast.Call, arg: ast.expr, found: _Found, route: _Route) -> None:
        """``arg`` (the stand-in) handed to ``call``: as ``self``, into a same-module helper
        (followed there), or as an argument of other code."""
        func = call.func
        fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if fname in _INSPECTING or fname in ("getattr", "hasattr", "delattr"):
            return
        if fname in ("setattr", "__setattr__"):  # ``object.__setattr__(obj, "f", ns)`` too
            if len(call.args) > 2 and call.args[2] is arg:
                found.meetings.append(
                    self.meet.attribute(call.args[0], _str(call.args[1]), call, route.cases)
                )
            return
        if fname == "update" and isinstance(func, ast.Attribute) and _is_dict_of(func.value, set()):
            return
        shape, callee = self.meet.self_shape(call, arg)
        if shape is not None:
            found.meetings.append(
                self.meet.call(MeetingHow.SELF, call, arg, route.cases, callee, shape)
            )
            return
        if isinstance(func, ast.Name) and route.depth < MAX_FUNCTION_HOPS:
            helper = self.scope.local_def(func)
            param = _bound_parameter(helper, call, arg) if helper is not None else None
            if helper is not None and param is not None:
                if self.module.functions.get(helper.name) is helper:
                    self.scope.ensure_indexed(helper)
                self._follow_names(helper, {param.arg}, param, found, route.hop(False))
                return
        for named in self._callees(func):
            meeting = self.meet.call(MeetingHow.ARGUMENT, call, arg, route.cases, named)
            if named is not func and meeting.callee is not None:
                # The call as written (``builder_cls(cfg)``), running what ``named`` names.
                callee = attrs.evolve(meeting.callee, text=ast.unparse(func))
                meeting = attrs.evolve(meeting, callee=callee)
            found.meetings.append(meeting)

    def _callees(self, func: ast.expr) -> list[ast.expr]:
        """What a call's callee ``func`` names: a parameter of the helper making the call
        (``def _build(builder_cls): builder_cls(cfg)``) is each expression the helper's
        same-module calls pass for it (under each case of the test making the call), so that
        each class the test hands in is met; else ``func`` as written."""
        helper = self.scope.enclosing_scope(func)
        if (
            not isinstance(func, ast.Name)
            or not isinstance(helper, FUNCTION_DEFS)
            or not is_parameter(helper, func.id)
            or self.reader.param_cases(helper)
        ):
            return [func]
        named: dict[str, ast.expr] = {}
        for bound in self._value_cases(helper) or []:
            value = self.reader.resolve_local(func, bound)
            seen = 0
            while isinstance(value, ast.Name) and seen < 4:
                further = self.reader.resolve_local(value, bound)
                if further is None:
                    break
                value, seen = further, seen + 1
            if value is not None:
                named.setdefault(ast.unparse(value), value)
        return list(named.values()) or [func]


def _path_from(expr: ast.expr, names: set[str]) -> tuple[str, ...]:
    """``("a", "b")`` for ``ns.a.b``, ``ns`` one of ``names``; empty for anything else."""
    path: list[str] = []
    while isinstance(expr, ast.Attribute):
        path.append(expr.attr)
        expr = expr.value
    return tuple(reversed(path)) if is_name_in(expr, names) else ()


def _set_through(
    fields: list[StandInField], path: tuple[str, ...], field: StandInField
) -> list[StandInField]:
    """``fields`` with ``field`` added to the stand-in at ``path`` below them (``ns.cfg.n =
    v`` sets ``n`` on the namespace ``ns.cfg`` holds); unchanged where ``path`` does not end
    at the one stand-in a field holds (a real object's field is its own business)."""
    at = next((i for i in range(len(fields) - 1, -1, -1) if fields[i].name == path[0]), None)
    if at is None or len(fields[at].children) != 1:
        return fields
    child = fields[at].children[0]
    if len(path) == 1:
        inner = [*child.fields, field]
    else:
        inner = _set_through(list(child.fields), path[1:], field)
    out = list(fields)
    out[at] = attrs.evolve(fields[at], children=(attrs.evolve(child, fields=tuple(inner)),))
    return out
