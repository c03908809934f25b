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
from collections.abc import Mapping

import attrs

from factories.analysis._walk import child_nodes, statements, walk
from factories.analysis.binding import CallShape, Unheard
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
    ITSELF,
    SOMETIMES,
    Callee,
    Meeting,
    MeetingHow,
    StandIn,
    StandInField,
    StandInKind,
)
from factories.analysis.extraction._standin_sites import (
    MOCK_CLASSES as _MOCKS,
)
from factories.analysis.extraction._standin_sites import (
    dotted_name,
    is_autospec,
    literal_dict_items,
    spec_names,
)
from factories.analysis.extraction._standin_variants import (
    Variant,
    VariantFinder,
    never_none,
    plain_object,
    stated,
    stored_names,
)
from factories.analysis.extraction._syntax import (
    FUNCTION_DEFS,
    callee,
    is_attr_of,
    is_name_in,
    is_parameter,
)
from factories.analysis.extraction._syntax import str_literal as _str
from factories.analysis.readset._chains import ELEMENT, slot_link
from factories.analysis.source_tree import ModuleInfo
from factories.analysis.values import (
    EnumMember,
    Obj,
    built_array,
    compare,
    empty_display,
    returning,
    truthy,
)


def _stated(
    known: tuple[object] | tuple[()], value: ast.expr, children: tuple[StandIn, ...]
) -> tuple[object] | tuple[()]:
    """What a stand-in's field states, beyond what its children say: a value ``stated``
    keeps (a literal, a lambda whose value the test states), an enum member
    (``Backend.TRITON``), a dict display with literal keys (its items, where stated), and
    the result of arithmetic (``qlen - 1``) or an array the test builds (``torch.full(shape,
    -1)``), never ``None`` whatever their operands (``values.Obj``, of unknown truth)."""
    if known:
        if children:
            return ()
        if isinstance(known[0], Obj) and known[0].items is not None:
            return known  # a dict display with literal keys (``{"backend": "x"}``)
        return known if stated(known[0]) or isinstance(known[0], EnumMember) else ()
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
    # Whether the followed object came back from a call of the helper that built it (each
    # call builds another one): what a caller sets on it is that caller's
    # (``StandInField.test``).
    returned: bool = False
    # The runs the stand-in stands for (``Variant``): the values to read its fields under,
    # the calls of its helper it returns to, the test its meetings are in.
    variant: Variant = attrs.field(factory=Variant)
    # The calls of same-module helpers the stand-in was passed into, innermost last: an
    # object a helper builds from it returns to that call only (``_ctor_held``).
    # (With whether returns continued into callers there, and the hops made by then.)
    entered: tuple[tuple[ast.Call, bool, int], ...] = ()
    # Following an object built with the stand-in as this constructor keyword argument
    # (``_ctor_held``): ``x.<field>`` handed on is the stand-in itself.
    holding: str | None = None

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
    # The names the test loads from the object itself (``StandIn.read``).
    read: set[str] = attrs.field(factory=set)
    # ``f(ns.cfg)``: ``(("cfg",), meeting)``, a meeting of the stand-in that field holds.
    through: list[tuple[tuple[str, ...], Meeting]] = attrs.field(factory=list)
    # ``StandIn.test_reads`` and ``StandIn.loose``.
    test_reads: set[tuple[str, ...]] = attrs.field(factory=set)
    loose: set[tuple[str, ...]] = attrs.field(factory=set)


#: ``Meeting.via`` of ``f(x.coord)`` while ``_ctor_held`` follows ``x``: the stand-in itself.
_HELD = "<held>"

#: The nodes ``_follow_names`` acts on besides a load of a followed name: what may store
#: on the object, drop a field of it, rebind the name, or hand the object on.
_FOLLOWED_NODES = (ast.Assign, ast.Delete, ast.AugAssign, ast.AnnAssign, ast.Call)


class StandInExtractor:
    """Extracts the stand-ins of one parsed test module; each top-level stand-in once, nested
    ones as children of the stand-in they are a field of."""

    def __init__(
        self, module: ModuleInfo, scope: ModuleScope | None = None, reader: CaseReader | None = None
    ) -> None:
        """``scope`` and ``reader`` (of ``scope``): the module's, shared with its other
        extractions; else its own."""
        self.module = module
        self.scope = scope or ModuleScope(module)
        self.reader = reader or CaseReader(self.scope)
        recorder = EventRecorder(self.scope, self.reader)
        self.sites = StandInSites(self.scope, self.reader)
        self.meet = MeetingMaker(self.scope, self.reader, recorder, self.sites)
        self.variants = VariantFinder(self.scope, self.reader, self.sites)
        self._as_child: set[int] = set()
        self._stored: dict[str, dict[str, int]] = {}
        self._func_stores: dict[int, tuple[frozenset[str], Mapping[str, frozenset[str]]]] = {}

    def _stored_names(self, cls: str) -> dict[str, int]:
        """``stored_names`` of the module for objects of ``cls``, made on first use
        (``plain_object``)."""
        if cls not in self._stored:
            self._stored[cls] = stored_names(self.module.tree, cls)
        return self._stored[cls]

    def standins(self) -> list[StandIn]:
        """Each top-level creation's stand-in, or one per ``Variant`` where its runs state
        other fields (``VariantFinder.variants``)."""
        nested = self.sites.nested()
        # Creations that following showed to be a field of another stand-in (``setattr(stub,
        # "cfg", cfg)``) are children there, not stand-ins of their own.
        self._as_child.clear()
        built = [
            (call, self._build(call, _Route(variant=variant)))
            for call in self.sites.calls
            if id(call) not in nested
            for variant in self.variants.variants(call) or [Variant()]
        ]
        return [standin for call, standin in built if id(call) not in self._as_child]

    # -- sites ----------------------------------------------------------------------------

    def _build(self, call: ast.Call, route: _Route) -> StandIn:
        kind, ref = self.sites.kind_of(call)  # type: ignore[misc]
        mock = kind is StandInKind.SPEC_MOCK
        route = attrs.evolve(route, building=route.building | {id(call)})
        found = _Found()
        named, found.opaque = self.variants.creation_fields(call, kind, route.variant.bindings)
        for name, value, where in named:
            found.fields.append(self._field(name, value, where, route, created=True))
        self._where(call, found, route)
        fields = found.fields
        for path, field in found.deep:
            fields = _set_through(fields, path, field)
        for path, meeting in found.through:
            fields = _met_through(fields, path, _in_variant(meeting, route.variant))
        return StandIn(
            kind=kind,
            location=self.scope.loc(call),
            fields=tuple(fields),
            class_ref=ref,
            opaque=found.opaque,
            # A helper several calls share reaches the same place once per call.
            meetings=tuple(dict.fromkeys(_in_variant(m, route.variant) for m in found.meetings)),
            dropped=frozenset(found.dropped),
            possible=route.possible,
            spec_names=spec_names(call) if mock else None,
            autospec=mock and is_autospec(call),
            read=frozenset(found.read) if mock else frozenset(),
            per_test=self._per_test(call),
            test_reads=frozenset(found.test_reads),
            loose=frozenset(found.loose),
            column=call.col_offset,
        )

    def _per_test(self, node: ast.AST) -> bool:
        """Whether every run of a test builds its own object at ``node``: it lies in a
        function, and each function around it is a plain one or a fixture of the default
        (function) scope, none decorated otherwise (a cache would hand out one object)."""
        scope = self.scope.enclosing_scope(node)
        if not isinstance(scope, FUNCTION_DEFS):
            return False
        while isinstance(scope, FUNCTION_DEFS):
            for deco in scope.decorator_list:
                target = deco.func if isinstance(deco, ast.Call) else deco
                name = getattr(target, "attr", None) or getattr(target, "id", None)
                if name == "fixture" and isinstance(deco, ast.Call):
                    scoped = next((k.value for k in deco.keywords if k.arg == "scope"), None)
                    if scoped is not None and _str(scoped) != "function":
                        return False
                elif name != "fixture" and "mark" not in ast.unparse(target).split("."):
                    return False
            scope = self.scope.enclosing_scope(scope)
        return True

    def _field(
        self, name: str, value: ast.expr, where: ast.AST, route: _Route, created: bool = False
    ) -> StandInField:
        """A field set to ``value``: its stated value (``_stated``: a literal, an enum member,
        an object the test built, a callable whose result the test states) under the
        variant's bindings, which every run of the variant shares for the creation's own
        fields and, where it stands for one run, for later sets too."""
        variant = route.variant
        bindings = variant.bindings if created or variant.exact else NO_BINDINGS
        slots = self._slots(value, route)
        if slots is not None:  # ``pair=(ns, [0])``: the field holds a tuple read by position
            return StandInField(
                name,
                self.scope.loc(where),
                children=(slots,),
                test=self._caller_set(where) if route.returned else None,
            )
        children = tuple(self._children(value, route))
        known = _stated(self.reader.value_of(value, bindings), value, children)
        if not known and not children:
            known = plain_object(
                value,
                self.module.tree,
                lambda arg: self.reader.value_of(arg, bindings),
                self._stored_names,
            )
        if not known and not children:
            resolve = self.reader.resolver(bindings)
            known = returning(value, resolve) or never_none(
                self.reader.value_of(value, bindings), value, resolve
            )
        if not children and empty_display(value, self.reader.resolver(bindings)):
            # ``failed=set()``: nothing is in it (``Obj.empty``), whatever else is known
            held = known[0] if known and isinstance(known[0], Obj) else Obj()
            known = (attrs.evolve(held, empty=True),)
        return StandInField(
            name,
            self.scope.loc(where),
            value=known[0] if known else None,
            has_value=bool(known),
            children=children,
            test=self._caller_set(where) if route.returned else None,
            items=bool(children) and self._display(value),
        )

    def _slots(self, value: ast.expr, route: _Route) -> StandIn | None:
        """A field set to a tuple display (or a local bound to one) with a stand-in among its
        items and an item that builds none (``pair=(ns, [0])``): a holder of its items by
        position (``slot_link``), as a stub's field set so is (``_item_set``), since code
        reaches each item by its position (``x.pair[1].append``, ``ns, blocks = x.pair``)
        and an element of it may be the other item, which the stand-in is not.  Where every
        item builds one (or one is starred), any element is one of them (``_children``)."""
        if isinstance(value, ast.Name):
            bound = self.reader.resolve_local(value, NO_BINDINGS)
            value = bound if isinstance(bound, ast.expr) else value
        if not (
            route.fields
            and isinstance(value, ast.Tuple)
            and not any(isinstance(e, ast.Starred) for e in value.elts)
            and any(self._builds(e) for e in value.elts)
            and not all(self._builds(e) for e in value.elts)
        ):
            return None
        fields = []
        for i, elt in enumerate(value.elts):
            children = tuple(self._children(elt, route))
            if children:
                fields.append(
                    StandInField(
                        slot_link(i),
                        self.scope.loc(elt),
                        children=children,
                        items=self._display(elt),
                    )
                )
        return StandIn(StandInKind.HOLDER, self.scope.loc(value), fields=tuple(fields))

    def _display(self, value: ast.expr) -> bool:
        """Whether ``value`` is (or is a local bound to) a list, tuple, set or dict display:
        what the field holds is the container, and its stand-ins are items of it."""
        if isinstance(value, ast.Name):
            bound = self.reader.resolve_local(value, NO_BINDINGS)
            value = bound if isinstance(bound, ast.expr) else value
        return isinstance(value, (ast.List, ast.Tuple, ast.Set, ast.Dict, *_COMPREHENSIONS)) or (
            _collected(value) is not None
        )

    def _caller_set(self, where: ast.AST) -> str | None:
        """The test whose own body's statement ``where`` is (a plain statement of the test
        function, run once on every run of it), else None."""
        parent = self.scope.parents.get(where)
        if not (isinstance(parent, FUNCTION_DEFS) and any(where is s for s in parent.body)):
            return None
        if not isinstance(self.scope.parents.get(parent), (ast.Module, ast.ClassDef)):
            return None  # a function nested in the test runs when (and as often as) called
        return self.reader.test_of(where, NO_BINDINGS)

    def _children(self, value: ast.expr, route: _Route) -> list[StandIn]:
        """Stand-ins built as ``value`` or inside it (a list of them), or named by it.  One
        that is an argument of a call in the value (``wrap(SimpleNamespace(...))``) is
        handed to that call, which the field holds the result of: ``loose``."""
        out: list[StandIn] = []
        if not route.fields:
            return out
        pending: list[tuple[ast.AST, bool]] = [(value, False)]
        while pending:
            node, in_call = pending.pop(0)
            target = node
            if isinstance(node, ast.Name):
                bound = self.reader.resolve_local(node, NO_BINDINGS)
                target = bound if bound is not None else node
            if self.sites.kind_of(target) is not None:
                if id(target) not in route.building:
                    self._as_child.add(id(target))
                    child = self._build(target, route)  # type: ignore[arg-type]
                    if in_call:
                        child = attrs.evolve(child, loose=child.loose | {()})
                    out.append(child)
                continue
            if isinstance(node, ast.IfExp):
                sides, possible = self._alternatives(node)
                alternative = attrs.evolve(route, possible=route.possible or possible)
                for side in sides:
                    if self._builds(side):
                        out.extend(self._children(side, alternative))
            elif isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.keyword)):
                pending.extend((child, in_call) for child in child_nodes(node))
            elif isinstance(node, _COMPREHENSIONS):
                pending.append((node.elt, in_call))  # ``[Ns(i) for i in ...]``: its items
            elif (comprehension := _collected(node)) is not None:
                pending.append((comprehension, in_call))  # ``tuple(Ns(i) for i in ...)``
            elif isinstance(node, ast.Call):
                pending.extend((arg, True) for arg in node.args)
                pending.extend((kw, True) for kw in node.keywords)
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
                elif not isinstance(target, ast.Name):
                    found.loose.add(())  # ``d["k"] = ns``, ``a, b = ns, x``
                    self._keyed(value, found, route)
            names = {t.id for t in targets if isinstance(t, ast.Name)}
            if names:
                if not isinstance(scope, FUNCTION_DEFS):
                    found.loose.add(())  # a module's or class's name: read from anywhere
                self._follow_names(scope, names, parent, found, route)
                if scope is self.module.tree and self.scope.parents.get(parent) is scope:
                    self._global(names, parent, found, route)
                klass = self.scope.parents.get(parent)
                if isinstance(klass, ast.ClassDef) and len(names) == 1:
                    self._class_attribute(klass, next(iter(names)), found, route)
            for target in targets:
                if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                    self._contained(target.value.id, parent, scope, found, route)
        elif (
            isinstance(parent, (ast.DictComp, ast.ListComp))
            and value is (parent.value if isinstance(parent, ast.DictComp) else parent.elt)
            and isinstance(stmt := self.scope.parents.get(parent), ast.Assign)
            and stmt.value is parent
        ):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    self._contained(target.id, stmt, scope, found, route)
        elif isinstance(parent, (ast.List, ast.Tuple)) and _set_as_display(
            parent, self.scope.parents.get(parent)
        ):
            self._item_set(parent, scope, found, route, value)  # ``stub.caches = [Ns(...)]``
        elif (
            isinstance(parent, (ast.DictComp, ast.ListComp))
            and value is (parent.value if isinstance(parent, ast.DictComp) else parent.elt)
            and isinstance(self.scope.parents.get(parent), ast.Return)
        ):
            found.loose.add(())
            self._container_returned(scope, found, route)  # ``return {k: Ns() for k in ks}``
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
            else:
                found.loose.add(())
        elif isinstance(parent, (ast.List, ast.Tuple)):
            if not self._parametrized(value, found, route):
                found.loose.add(())
                self._keyed(value, found, route)
        elif isinstance(parent, ast.Attribute) and route.fields:
            found.loose.add(())  # ``make().request``: where the object goes is not followed,
            self._field_handed(parent, found, route)  # where its field's value may be:
            # handed to code (``f(make().cfg)``) or stored under a key
        elif not isinstance(parent, ast.Expr):
            found.loose.add(())  # anywhere else: where it goes is not followed

    def _global(self, names: set[str], stmt: ast.stmt, found: _Found, route: _Route) -> None:
        """A stand-in bound to a module-level name (``_SPEC = SimpleNamespace(...)``) is the
        one object every function of the module that loads the name sees: followed into each
        function that does not bind the name itself, and into each parameter the name is the
        default of (``def _make(spec=_SPEC)``), which holds it on every call that leaves the
        parameter out.  Only where nothing in the module sets a field through the name, nor
        binds it again, nor hands it to ``setattr``-like code: the object then holds what its
        creation states on every test's run, whichever tests ran before."""
        if route.depth >= MAX_FUNCTION_HOPS or any(
            _global_written(self.module.tree, name, stmt) for name in names
        ):
            return
        for func in self.module.tree.body:
            if not isinstance(func, FUNCTION_DEFS):
                continue
            self.scope.ensure_indexed(func)
            params = [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]
            own = {p.arg for p in params} | {
                p.arg for p in (func.args.vararg, func.args.kwarg) if p is not None
            }
            positional = [*func.args.posonlyargs, *func.args.args]
            defaults = [
                *zip(positional[len(positional) - len(func.args.defaults) :], func.args.defaults),
                *zip(func.args.kwonlyargs, func.args.kw_defaults),
            ]
            for param, default in defaults:
                if is_name_in(default, names) and self._omitted(func, param):
                    self._follow_names(func, {param.arg}, func.args, found, route.hop(False))
            if names & own or _binds(func, names):
                continue
            used = {
                n.id
                for n in walk(func)
                if isinstance(n, ast.Name) and n.id in names and isinstance(n.ctx, ast.Load)
            }
            if used:
                self._follow_names(func, used, func.args, found, route.hop(False))

    def _class_attribute(
        self, klass: ast.ClassDef, field: str, found: _Found, route: _Route
    ) -> None:
        """``class Loader: cfg = SimpleNamespace(...)`` in the test module, then ``loader =
        Loader()``: the instance holds the stand-in as its field ``cfg`` (a class attribute)
        and goes on as a holder of it (``_held_at``: ``Cls.m(loader)``, ``f(loader)``).  Only
        for a class with no base and none of the methods that could put another object
        there first (``__init__``, ``__new__``, ``__getattr__``, ``__getattribute__``,
        ``__init_subclass__``), built in the function that defines it or, for a module's
        class, in the module's functions."""
        special = {"__init__", "__new__", "__getattr__", "__getattribute__", "__init_subclass__"}
        if (
            klass.bases
            or klass.keywords
            or klass.decorator_list
            or any(isinstance(n, FUNCTION_DEFS) and n.name in special for n in klass.body)
        ):
            return
        scope = self.scope.enclosing_scope(klass)
        if isinstance(scope, FUNCTION_DEFS):
            scopes: list[ast.AST] = [scope]
        elif scope is self.module.tree and self.scope.parents.get(klass) is scope:
            scopes = [f for f in self.module.tree.body if isinstance(f, FUNCTION_DEFS)]
        else:
            return
        for where in scopes:
            self.scope.ensure_indexed(where)
            for node in self.scope.nodes(where):
                if (
                    isinstance(node, ast.Assign)
                    and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name)
                    and isinstance(node.value, ast.Call)
                    and is_name_in(node.value.func, {klass.name})
                ):
                    self._held_at(node.targets[0], (field,), node, where, found, route)

    def _omitted(self, func: ast.AST, param: ast.arg) -> bool:
        """Whether some call of the module's function ``func`` leaves ``param`` out: no
        positional argument reaches it, no keyword names it, nothing is unpacked."""
        name = getattr(func, "name", None)
        params = [*func.args.posonlyargs, *func.args.args]  # type: ignore[attr-defined]
        index = next((i for i, p in enumerate(params) if p is param), None)
        for call in walk(self.module.tree):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
                continue
            if call.func.id != name:
                continue
            if any(isinstance(a, ast.Starred) for a in call.args) or any(
                kw.arg is None for kw in call.keywords
            ):
                continue
            if index is not None and len(call.args) > index:
                continue
            if any(kw.arg == param.arg for kw in call.keywords):
                continue
            return True
        return False

    def _contained(
        self, name: str, stmt: ast.stmt, scope: ast.AST, found: _Found, route: _Route
    ) -> None:
        """The stand-in is an item of the local container ``name`` (``layers[k] = ns``,
        ``layers = {k: ns for k in ...}``): where the test then replaces a function with one
        returning that container (``monkeypatch.setattr(mod, "f", lambda *_: layers)``,
        ``patch.object(mod, "f", return_value=layers)``), vLLM code that calls the function
        meets it (``MeetingHow.RETURNED``), with how many items the container surely holds."""
        if not isinstance(scope, FUNCTION_DEFS) or route.depth >= MAX_FUNCTION_HOPS:
            return
        count = self._items_built(stmt, scope)
        for node in self.scope.nodes_after(scope, (stmt.lineno, stmt.col_offset)):
            if not (isinstance(node, ast.Name) and node.id == name):
                continue
            if isinstance(node.ctx, ast.Store):
                return  # rebound: a later patch returns another object
            patch = self._returned_by(node)
            if patch is None:
                continue
            found.meetings.append(self._patch_meeting(patch, count, route))

    def _container_returned(self, scope: ast.AST, found: _Found, route: _Route) -> None:
        """The stand-in is an item of the container a helper of the module returns (``return
        {name: SimpleNamespace(...) for name in names}``): in each caller that binds the
        result to a local (``layers = _layers(...)``), it is an item of that local
        (``_contained``: a patch returning it hands it to vLLM code)."""
        if not isinstance(scope, FUNCTION_DEFS) or route.depth >= MAX_FUNCTION_HOPS:
            return
        for call, _ in self.scope.callers(scope):
            stmt = self.scope.parents.get(call)
            if (
                isinstance(stmt, ast.Assign)
                and stmt.value is call
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
            ):
                where = self.scope.enclosing_scope(call)
                self._contained(stmt.targets[0].id, stmt, where, found, route.hop())

    def _returned_by(self, use: ast.Name) -> tuple[ast.Call, str] | None:
        """The patch whose replacement returns ``use`` and the dotted function it replaces:
        ``lambda ...: use`` as the replacement of ``monkeypatch.setattr(obj, "f", ...)``/
        ``("pkg.mod.f", ...)`` or ``patch.object(obj, "f", ...)``, or ``return_value=use`` of
        such a patch (of ``patch("pkg.mod.f", ...)`` too, or of a mock it installs)."""
        parent = self.scope.parents.get(use)
        replacement: ast.AST | None = None
        if isinstance(parent, ast.Lambda) and parent.body is use:
            replacement = parent
            call = self.scope.parents.get(parent)
        elif isinstance(parent, ast.keyword) and parent.arg == "return_value":
            call = self.scope.parents.get(parent)
            outer = self.scope.parents.get(call) if isinstance(call, ast.Call) else None
            if (
                isinstance(call, ast.Call)
                and callee(call.func) in _MOCKS
                and isinstance(outer, ast.Call)
            ):
                replacement, call = call, outer
        else:
            return None
        if not isinstance(call, ast.Call):
            return None
        return self._patch_of(replacement, call)

    def _patch_of(self, replacement: ast.AST | None, call: ast.Call) -> tuple[ast.Call, str] | None:
        """The patch ``call`` and the dotted function it replaces, where ``replacement`` (if
        given) is the value it installs."""
        name = callee(call.func)
        imports = self.sites.imports(call)
        args = call.args
        if replacement is not None and replacement not in args:
            return None
        if name in ("setattr", "object") and len(args) >= 2 and _str(args[1]) is not None:
            owner = dotted_name(args[0], imports)
            return (call, f"{owner}.{_str(args[1])}") if owner else None
        if name in ("setattr", "patch") and args and _str(args[0]) and "." in _str(args[0]):
            return call, _str(args[0])  # type: ignore[return-value]
        return None

    def _mock_returning(self, use: ast.Name) -> tuple[ast.Call, str] | None:
        """The patch that installs a mock returning ``use``: ``monkeypatch.setattr(mod, "f",
        Mock(return_value=use))``, or with the mock bound to a local first: ``make =
        Mock(return_value=use)``, then ``monkeypatch.setattr(mod, "f", make)`` (or
        ``patch.object(mod, "f", make)``).  For a local: only where the function binds
        the local once, to that mock, and every other use of it reads it (``make.call_args``,
        ``make.assert_called_once()``) without storing into it (``make.return_value =
        other``, ``make.side_effect = ...``) or touching what it returns (``_MOCK_CONFIG``),
        which may change that; and the mock states no ``side_effect`` (nor ``wraps``), whose
        value it would give instead."""
        keyword = self.scope.parents.get(use)
        if not (isinstance(keyword, ast.keyword) and keyword.arg == "return_value"):
            return None
        mock = self.scope.parents.get(keyword)
        stmt = self.scope.parents.get(mock)
        if not (
            isinstance(mock, ast.Call)
            and callee(mock.func) in _MOCKS
            and not any(k.arg in ("side_effect", "wraps", None) for k in mock.keywords)
        ):
            return None
        if isinstance(stmt, ast.Call):
            return self._returned_by(use)  # the mock is the patch's replacement itself
        if not (
            isinstance(stmt, ast.Assign)
            and stmt.value is mock
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
        ):
            return None
        name = stmt.targets[0].id
        scope = self.scope.enclosing_scope(stmt)
        if not isinstance(scope, FUNCTION_DEFS):
            return None
        found: tuple[ast.Call, str] | None = None
        for node in self.scope.nodes(scope):
            if not (isinstance(node, ast.Name) and node.id == name) or node is stmt.targets[0]:
                continue
            if not isinstance(node.ctx, ast.Load):
                return None  # rebound
            parent = self.scope.parents.get(node)
            if isinstance(parent, ast.Attribute):
                if not isinstance(parent.ctx, ast.Load) or parent.attr in _MOCK_CONFIG:
                    return None
                continue  # ``make.call_args``, ``make.assert_called_once()``
            if isinstance(parent, ast.Call) and node in parent.args and found is None:
                found = self._patch_of(node, parent)
                if found is not None and (parent.lineno, parent.col_offset) > (
                    stmt.lineno,
                    stmt.col_offset,
                ):
                    continue
            return None  # handed elsewhere: what it returns there is not followed
        return found

    def _items_built(self, stmt: ast.stmt, scope: ast.AST) -> int:
        """How many items the container surely holds once ``stmt`` ran: a comprehension
        over a display the test writes out (``{k: ns for k in ("a", "b")}``: 2), one
        ``d[k] = ns`` of the function's own body (1), or one in the body of a loop of it over
        items the test states (``for name in zip(specs, sizes)``); 0 where not known."""
        value = stmt.value if isinstance(stmt, ast.Assign) else None
        if isinstance(value, (ast.DictComp, ast.ListComp)):
            gens = value.generators
            if len(gens) == 1 and not gens[0].ifs:
                return self._count(gens[0].iter)
            return 0
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
            return self._items_returned(value)
        parent = self.scope.parents.get(stmt)
        if parent is scope:
            return 1
        if (
            isinstance(parent, ast.For)
            and any(stmt is s for s in parent.body)
            and self.scope.parents.get(parent) is scope
        ):
            return 1 if self._count(parent.iter) else 0
        return 0

    def _count(self, node: ast.expr, depth: int = 0, call: ast.Call | None = None) -> int:
        """How many items iterating ``node`` yields, where the test writes them out: a
        display, a local bound to one, a parameter every call passes one
        (``_count_passed``; ``call``: the one call of the function ``node`` is in that the
        count is for), ``zip``/``enumerate``/``list``/``tuple`` of such, a dict's
        ``items()``/``keys()``/``values()``; 0 where not known."""
        if depth > 4:
            return 0
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            starred = any(isinstance(e, ast.Starred) for e in node.elts)
            return 0 if starred else len(node.elts)
        if isinstance(node, ast.Dict):
            return 0 if None in node.keys else len(node.keys)
        if isinstance(node, ast.Name):
            bound = self.reader.resolve_local(node, NO_BINDINGS)
            if bound is None:
                return self._count_passed(node, depth, call)
            return self._count(bound, depth + 1) if bound is not None else 0
        if not isinstance(node, ast.Call) or node.keywords:
            return 0
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in ("items", "keys", "values"):
            return 0 if node.args else self._count(func.value, depth + 1)
        if isinstance(func, ast.Name) and self.scope.local_def(func) is None:
            if func.id == "zip" and node.args:
                return min(self._count(a, depth + 1, call) for a in node.args)
            if func.id in ("enumerate", "list", "tuple") and len(node.args) == 1:
                return self._count(node.args[0], depth + 1, call)
        return 0

    def _items_returned(self, made: ast.Call) -> int:
        """How many items the container a helper of the module returns surely holds, for
        the call ``made`` of it (``layers = _layers([64, 64])``, ``def _layers(heads): return
        {f"l{i}": Ns(h) for i, h in enumerate(heads)}``): a helper whose one ``return`` is
        the last statement of its body and returns a comprehension over what ``_count``
        knows, its parameters bound to ``made``'s arguments; 0 where not known."""
        func = self.scope.local_def(made.func)  # type: ignore[arg-type]
        if not isinstance(func, ast.FunctionDef) or not func.body or func.decorator_list:
            return 0  # a coroutine's call returns a coroutine; a decorator, what it makes
        self.scope.ensure_indexed(func)
        own = [n for n in self.scope.nodes(func) if self.scope.enclosing_scope(n) is func]
        if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in own):
            return 0  # a generator function's call returns a generator
        returns = [n for n in own if isinstance(n, ast.Return)]
        last = func.body[-1]
        if returns != [last] or not isinstance(last.value, (ast.DictComp, ast.ListComp)):
            return 0
        gens = last.value.generators
        if len(gens) != 1 or gens[0].ifs or gens[0].is_async:
            return 0
        return self._count(gens[0].iter, 1, made)

    def _count_passed(self, name: ast.Name, depth: int, call: ast.Call | None) -> int:
        """How many items the parameter ``name`` surely holds: what ``call`` passes it,
        where ``call`` is a call of the function the parameter is of; else the fewest any
        call of the function passes, where the module is all that calls it (a private
        helper of a test module, ``_callers_known``, loaded only to be called) and the
        function binds the name nowhere else and calls no method of it.  An argument left
        out is the default's."""
        func = self.scope.enclosing_scope(name)
        if (
            depth > 4
            or not isinstance(func, FUNCTION_DEFS)
            or not is_parameter(func, name.id)
            or any(
                (isinstance(n, ast.Name) and n.id == name.id and not isinstance(n.ctx, ast.Load))
                or (isinstance(n, ast.Attribute) and is_name_in(n.value, {name.id}))
                for n in self.scope.nodes(func)
            )
        ):
            return 0  # rebound, or a method of it called (``heads.clear()``)
        if call is not None and self._calls(call, func):
            calls = [call]
        else:
            if (
                not isinstance(func, ast.FunctionDef)
                or func.decorator_list
                or not self._callers_known(func)
            ):
                return 0  # a decorator (a fixture's, a wrapper's) may pass something else
            calls = [c for c, _ in self.scope.callers(func)]
            named = [
                n
                for stmt in self.module.tree.body
                for n in walk(stmt)
                if isinstance(n, ast.Name) and n.id == func.name
            ]
            if (
                not calls
                or len(named) != len(calls)
                or not all(self._calls(c, func) for c in calls)
            ):
                return 0  # handed somewhere, rebound, or called as a method
        counts = []
        for each in calls:
            binding = call_binding(func, each)
            arg = binding.get(name.id) if binding is not None else None
            counts.append(self._count(arg, depth + 1) if arg is not None else 0)
        return min(counts)

    def _calls(self, call: ast.Call, func: ast.AST) -> bool:
        """Whether ``call`` calls ``func`` by its name."""
        return isinstance(call.func, ast.Name) and self.scope.local_def(call.func) is func

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
            if isinstance(node, ast.Name):
                if node.id not in names or not isinstance(node.ctx, ast.Load):
                    continue
            elif not isinstance(node, _FOLLOWED_NODES):
                continue  # asked first: most nodes are neither, and _never_run climbs
            if getattr(node, "lineno", 0) <= end_line and id(node) in inside:
                continue
            if self._never_run(node, names, scope):
                continue
            if isinstance(node, ast.Name):
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
                        found.test_reads.add((name,))  # and the test read it
                    found.fields.append(field)
            elif isinstance(node, ast.Call):
                self._call_sets(node, names, found, route)

    def _never_run(self, node: ast.AST, names: set[str], scope: ast.AST) -> bool:
        """Whether ``node`` lies in the body of an ``if`` that never runs while a followed
        name holds the object: ``if ns is None:`` (an object the test built is never
        ``None``), as a helper's default is written (``if coord is None: coord =
        _default()``).  Its rebinding of the name, and its uses of what the name then holds,
        are another object's.  Not ``if not ns:``: a mock or a real container the test built
        may be false."""
        child, current = node, self.scope.parents.get(node)
        while current is not None and current is not scope:
            if isinstance(current, ast.If) and any(child is s for s in current.body):
                if _none_test(current.test, names):
                    return True
            child, current = current, self.scope.parents.get(current)
        return False

    def _assignment(self, node: ast.Assign, names: set[str], found: _Found, route: _Route) -> None:
        for target in node.targets:
            if is_attr_of(target, names) or (
                isinstance(target, ast.Attribute) and _type_of(target.value, names)
            ):
                # ``type(m).x = PropertyMock(...)``: its class answers ``x`` from now on.
                found.fields.append(self._field(target.attr, node.value, node, route))  # type: ignore[attr-defined]
            elif isinstance(target, ast.Attribute) and (route.depth == 0 or route.returned):
                # Where it is built, or by a caller of the helper that built it
                # (``cfg = make(); cfg.cache.n = 1``), whose own statement's set only its own
                # calls find (``StandInField.test``); not by a helper it is passed to.
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
        if isinstance(func, ast.Attribute) and is_name_in(func.value, names):
            self._mock_sets(call, fname, found, route)
        elif fname == "delattr" and len(call.args) == 2 and is_name_in(call.args[0], names):
            name = _str(call.args[1])
            if name is not None:
                found.dropped.add(name)
        elif (
            fname == "object" and _is_patch(func) and call.args and is_name_in(call.args[0], names)
        ):
            # ``patch.object(m, "f", ...)`` reads ``m.f`` first: the object holds ``f``.
            name = _str(call.args[1]) if len(call.args) > 1 else None
            if name is None:
                found.opaque = True
            elif len(call.args) > 2:
                found.fields.append(self._field(name, call.args[2], call, route))
            else:
                found.fields.append(StandInField(name, self.scope.loc(call)))
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

    def _mock_sets(self, call: ast.Call, fname: str, found: _Found, route: _Route) -> None:
        """A mock's own methods that set attributes on it: ``m.configure_mock(a=1)`` (a
        dotted key, ``**{"a.b": 1}``, sets ``a``'s child, which ``a`` then holds) and
        ``m.attach_mock(child, "a")``; ``m.mock_add_spec(...)`` changes what it answers:
        opaque, as a computed name is."""
        if fname == "configure_mock":
            items: list[tuple[str, ast.expr, ast.AST]] = []
            for kw in call.keywords:
                named = [(kw.arg, kw.value)] if kw.arg is not None else literal_dict_items(kw.value)
                if named is None:
                    found.opaque = True
                items.extend((key, value, kw) for key, value in named or ())
            for key, value, where in items:
                head, dot, _ = key.partition(".")
                if dot:  # ``a.return_value``: ``a`` is what it was, with a child set
                    found.read.add(head)
                else:
                    found.fields.append(self._field(key, value, where, route))
        elif fname == "attach_mock" and len(call.args) == 2:
            name = _str(call.args[1])
            if name is None:
                found.opaque = True
            else:
                found.fields.append(self._field(name, call.args[0], call, route))
        elif fname == "mock_add_spec":
            found.opaque = True

    def _name_use(self, node: ast.Name, scope: ast.AST, found: _Found, route: _Route) -> None:
        parent = self.scope.parents.get(node)
        if isinstance(parent, ast.Assign) and parent.value is node:
            for target in parent.targets:
                if isinstance(target, ast.Attribute):
                    self._put_on(target, parent, scope, found, route)
                elif not isinstance(target, ast.Name):
                    found.loose.add(())  # a name bound to it is followed (``_assignment``)
                    self._keyed(node, found, route)
        elif isinstance(parent, (ast.List, ast.Tuple)) and _set_as_display(
            parent, self.scope.parents.get(parent)
        ):
            self._item_set(parent, scope, found, route, node)  # ``stub.caches = [cache]``
        elif isinstance(parent, ast.Return) or (
            isinstance(parent, ast.Yield) and _is_fixture(scope)
        ):
            self._follow_return(scope, found, route)
        elif isinstance(parent, ast.Tuple) and isinstance(
            self.scope.parents.get(parent), ast.Return
        ):
            self._follow_return(scope, found, route, parent.elts.index(node))
        elif isinstance(parent, ast.keyword) and (patch := self._mock_returning(node)):
            # ``monkeypatch.setattr(mod, "f", Mock(return_value=ns))``, or the mock bound to
            # a local first (``_mock_returning``): vLLM code that calls ``f`` gets the
            # stand-in itself, as from ``lambda *_: ns``
            self._returned_itself(patch, ITSELF, found, route)
        elif isinstance(parent, ast.keyword) or (
            isinstance(parent, ast.Call) and node in parent.args
        ):
            call = parent if isinstance(parent, ast.Call) else self.scope.parents.get(parent)
            if isinstance(call, ast.Call) and self.sites.kind_of(call) is not None:
                field = parent.arg if isinstance(parent, ast.keyword) else None
                found.meetings.append(self.meet.attribute(call, field, call, route.cases))
                if field is None:
                    found.loose.add(())  # ``SimpleNamespace(**vars(ns))``, a positional
            elif isinstance(call, ast.Call):
                self._argument(call, node, found, route)
            else:
                found.loose.add(())
        elif isinstance(parent, ast.Lambda) and (patch := self._returned_by(node)) is not None:
            # ``monkeypatch.setattr(mod, "f", lambda *_: ns)``: vLLM code that calls ``f``
            # gets the stand-in itself (``ITSELF``); what else reads it is not followed.
            self._returned_itself(patch, ITSELF, found, route)
        elif (
            _last_of_or(parent, node)
            and isinstance(self.scope.parents.get(parent), ast.Lambda)
            and (patch := self._returned_by(parent)) is not None  # type: ignore[arg-type]
        ):
            # ``lambda **kw: seen.update(kw) or ns``: it returns ``ns`` on some calls only
            self._returned_itself(patch, SOMETIMES, found, route)
        elif isinstance(parent, ast.Attribute) and not route.fields:
            self._method_of_holder(parent, found, route)
            if route.holding is not None and parent.attr == route.holding:
                self._held_field_handed(parent, found, route)
            elif route.holding is not None:
                self._bound_out(node, parent, found, route)
        elif isinstance(parent, ast.Attribute):
            if isinstance(parent.ctx, ast.Load):
                if not self.meet.recorder.expects_raise(parent):
                    found.read.add(parent.attr)
                self._field_handed(parent, found, route)
            self._test_use(parent, found)
        elif not _looks_only(parent, node):
            found.loose.add(())
            if isinstance(parent, ast.Tuple):
                self._keyed(node, found, route)  # ``stub.reqs["r"] = (ns, blocks)``

    def _installed(self, call: ast.Call, field: str, found: _Found, route: _Route) -> None:
        """``monkeypatch.setattr(mod, "current_platform", ns)`` in a function, ``mod`` a name
        its imports give: the code of the calls the function then makes (``mod.Runner()``)
        meets ``ns`` where ``mod``'s functions read that global, as that of a function the
        test replaced meets what it returns (``_returned_itself`` with ``Meeting.installed``;
        whether ``mod`` is a module of the tree, the audit decides)."""
        func = call.func
        if not (
            isinstance(func, ast.Attribute)
            and func.attr == "setattr"
            and isinstance(self.scope.enclosing_scope(call), FUNCTION_DEFS)
            and route.fields
            and route.holding is None
        ):
            return
        owner = dotted_name(call.args[0], self.sites.imports(call))
        if owner is not None:
            self._returned_itself((call, f"{owner}.{field}"), ITSELF, found, route, True)

    def _patch_meeting(self, patch: tuple[ast.Call, str], count: int, route: _Route) -> Meeting:
        """The ``RETURNED`` meeting at the patch ``patch`` (the patching call, the dotted name
        of the function it replaces): the stand-in, or ``count`` items of a container holding
        it, is what calling that function gives vLLM code."""
        call, target = patch
        return attrs.evolve(
            self.meet.attribute(call, None, call, route.cases),
            how=MeetingHow.RETURNED,
            owner=None,
            owner_kind=None,
            owner_class=None,
            callee=Callee(ast.unparse(call.func), target),
            count=count,
        )

    def _returned_itself(
        self,
        patch: tuple[ast.Call, str],
        count: int,
        found: _Found,
        route: _Route,
        installed: bool = False,
        field: str | None = None,
    ) -> None:
        """The stand-in is what the test's replacement of the function ``patch`` names
        returns (``count``: ``ITSELF``, or ``SOMETIMES`` after an ``or``): a ``RETURNED``
        meeting at the patch, which the audit pairs with each call it judges where the patch
        holds (``standin_audit._with_returned``).  Where the patch is a statement of a
        function, each call that function makes after it, of code its imports name, is one
        to judge even if the test hands it nothing (``method.load()``, whose code calls the
        function): a ``RETURNED`` meeting there too, naming the function replaced
        (``Meeting.replaced``).  What else reads the stand-in is not followed.  ``installed``:
        the patch sets a module's global to the stand-in (``Meeting.installed``); ``field``:
        the replacement of a method sets that field of its object to it (``Meeting.field``)."""
        if not installed and field is None:
            found.loose.add(())
        call, target = patch
        found.meetings.append(
            attrs.evolve(self._patch_meeting(patch, count, route), installed=installed, field=field)
        )
        where = self.scope.enclosing_scope(call)
        if not isinstance(where, FUNCTION_DEFS):
            return
        inside = {id(node) for node in walk(call)}
        for node in self.scope.nodes_after(where, (call.lineno, call.col_offset)):
            if (
                not isinstance(node, ast.Call)
                or id(node) in inside
                or self.scope.enclosing_scope(node) is not where
            ):
                continue
            later = self.meet.call(MeetingHow.RETURNED, node, node, route.cases, node.func)
            if later.callee is None or later.callee.dotted is None:
                continue
            found.meetings.append(
                attrs.evolve(later, replaced=target, count=count, installed=installed, field=field)
            )

    def _field_path(self, attr: ast.Attribute) -> tuple[tuple[str, ...], ast.expr]:
        """The fields ``ns.cfg.sub`` names below the stand-in (``("cfg", "sub")``) and the
        outermost attribute node of that chain, from its first link ``attr``."""
        path: list[str] = [attr.attr]
        top: ast.expr = attr
        parent = self.scope.parents.get(attr)
        while isinstance(parent, ast.Attribute) and parent.value is top:
            path.append(parent.attr)
            top, parent = parent, self.scope.parents.get(parent)
        return tuple(path), top

    def _field_handed(self, attr: ast.Attribute, found: _Found, route: _Route) -> None:
        """``f(ns.cfg)``, ``f(x=ns.cfg.sub)``, ``f(make().cfg)``: a field's value handed to
        code the test's imports name (not a helper of the module, which would follow it as
        the stand-in): a meeting of the stand-in that field holds, where it holds one
        (``_met_through``).  Else, where it is stored under a key (``_field_stored``)."""
        path, top = self._field_path(attr)
        meeting = self._handed_to_code(top, route)
        if meeting is not None:
            found.through.append((path, meeting))
        else:
            self._field_stored(attr, found, route)

    def _field_stored(self, attr: ast.Attribute, found: _Found, route: _Route) -> None:
        """``stub.reqs["r"] = (out.request, blocks)``, ``... = make().request``: a field's
        value stored under a key of a stub's container (``_keyed``): a meeting of the
        stand-in that field holds, where it holds one (``_met_through``)."""
        path, top = self._field_path(attr)
        if not (isinstance(attr.ctx, ast.Load) and self._only_read_through(attr.value)):
            return
        meeting = self._keyed_meeting(top, route)
        if meeting is not None:
            found.through.append((path, meeting))

    def _only_read_through(self, owner: ast.expr) -> bool:
        """Whether the object ``owner`` names still holds, wherever it is read, the field
        values it was built with: a call's result read at once (``make().request``), or a
        local of a function that binds it once and only ever reads fields of it
        (``out.request``), never handing it on (``fill(out)``, ``out.update()``) nor setting
        a field of it (``out.request = other``), which may change what the field holds."""
        if isinstance(owner, ast.Call):
            return True
        scope = self.scope.enclosing_scope(owner)
        if not isinstance(owner, ast.Name) or not isinstance(scope, FUNCTION_DEFS):
            return False
        binds = 0
        for node in self.scope.nodes(scope):
            if not (isinstance(node, ast.Name) and node.id == owner.id):
                continue
            if not isinstance(node.ctx, ast.Load):
                binds += 1
                continue
            parent = self.scope.parents.get(node)
            if not (isinstance(parent, ast.Attribute) and isinstance(parent.ctx, ast.Load)):
                return False
            user = self.scope.parents.get(parent)
            if isinstance(user, ast.Call) and user.func is parent:
                return False  # ``out.update(...)``: a method of it may change it
        return binds == 1

    def _handed_to_code(self, arg: ast.expr, route: _Route) -> Meeting | None:
        """The meeting of ``arg`` where it is an argument (``f(arg)``, ``f(x=arg)``) of code
        the test's imports name: not a helper of the module (which follows it itself), nor a
        call that makes it ``self``, builds a stand-in or only inspects it."""
        parent = self.scope.parents.get(arg)
        call = self.scope.parents.get(parent) if isinstance(parent, ast.keyword) else parent
        if not isinstance(call, ast.Call) or not (
            arg in call.args or isinstance(parent, ast.keyword)
        ):
            return None
        func = call.func
        if isinstance(func, ast.Name) and self.scope.local_def(func) is not None:
            return None
        if self.meet.self_shape(call, arg)[0] is not None or self.sites.kind_of(call) is not None:
            return None
        fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if fname in _INSPECTING or fname in ("getattr", "hasattr", "delattr", "setattr"):
            return None
        meeting = self.meet.call(MeetingHow.ARGUMENT, call, arg, route.cases, func)
        return self._bound_in_helper(call, meeting, route)

    def _test_use(self, attr: ast.Attribute, found: _Found) -> None:
        """``ns.a.b`` in the test itself: a read of the chain (a store reads the links above
        the one it sets), and where the object it ends at goes on as a value (``f(ns.cfg)``,
        ``x = ns.cfg``), one no meeting follows: ``loose`` (harmless where it is a plain
        value).  A dunder (``ns.__dict__``) hands on the object itself."""
        path: tuple[str, ...] = ()
        top: ast.expr = attr.value
        while isinstance(self.scope.parents.get(top), ast.Attribute):
            parent = self.scope.parents[top]
            if parent.value is not top:  # type: ignore[attr-defined]
                break
            name = parent.attr  # type: ignore[attr-defined]
            if name.startswith("__") and name.endswith("__"):
                found.loose.add(path)
                return
            path, top = (*path, name), parent  # type: ignore[assignment]
        outer = self.scope.parents.get(top)
        if not isinstance(top.ctx, ast.Load):  # type: ignore[attr-defined]
            if path[:-1]:
                found.test_reads.add(path[:-1])
            if isinstance(outer, ast.AugAssign) and outer.target is top:
                found.test_reads.add(path)
            return
        found.test_reads.add(path)
        if not (isinstance(outer, ast.Call) and outer.func is top):
            found.loose.add(path)  # a field called (``ns.hook()``) gets no owner

    def _held_field_handed(self, attr: ast.Attribute, found: _Found, route: _Route) -> None:
        """``f(x.coord)``, ``x`` the object ``_ctor_held`` follows: the stand-in itself
        handed to code the test's imports name (``via`` starts with ``_HELD``, which
        ``_ctor_held`` drops)."""
        meeting = self._handed_to_code(attr, route)
        if meeting is not None:
            found.meetings.append(attrs.evolve(meeting, via=(_HELD,)))

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

    def _bound_out(self, holder: ast.Name, value: ast.expr, found: _Found, route: _Route) -> None:
        """``y = getattr(x, name)`` (or ``y = x.attr``), then ``y.m(...)``; or
        ``x.attr.m(...)``: ``x`` the object ``_ctor_held`` follows.  Where ``x``'s class hands
        out its method ``m`` bound to the object (``weight_loader=self.weight_loader``, as a
        layer gives its parameters their loader: ``standin_audit._hands_out`` checks it), the
        call runs ``m`` on ``x``, as ``x.m(...)`` would (``MeetingMaker.bound_out``).  Only a
        local bound once in its function, on which the test sets nothing, called after that
        binding in the same function; ``getattr`` with exactly two arguments."""
        name: str | None
        if isinstance(value, ast.Call):
            func = value.func
            if not (
                isinstance(func, ast.Name)
                and func.id == "getattr"
                and func.id not in self.sites.imports(value)
                and self.scope.local_def(func) is None
                and len(value.args) == 2
                and not value.keywords
                and value.args[0] is holder
            ):
                return
            name = _str(value.args[1])
        elif isinstance(value, ast.Attribute) and isinstance(value.ctx, ast.Load):
            name = value.attr
        else:
            return
        parent = self.scope.parents.get(value)
        calls: list[ast.Call] = []
        if isinstance(parent, ast.Attribute) and parent.value is value:
            outer = self.scope.parents.get(parent)
            if isinstance(outer, ast.Call) and outer.func is parent:
                calls.append(outer)
        elif (
            isinstance(parent, ast.Assign)
            and parent.value is value
            and len(parent.targets) == 1
            and isinstance(parent.targets[0], ast.Name)
        ):
            calls.extend(self._calls_on_local(parent, parent.targets[0].id))
        for call in calls:
            meeting = self.meet.bound_out(call, holder, name, route.cases)
            if meeting is not None:
                found.meetings.append(meeting)

    def _calls_on_local(self, assign: ast.Assign, name: str) -> list[ast.Call]:
        """The calls ``name.m(...)`` of the function of ``assign`` (not of a function nested
        in it) after it, where ``assign`` is the one binding of ``name`` there (no parameter,
        loop target, ``global`` or import of it) and the function sets no attribute on it
        (``name.m = ...``, ``setattr(name, ...)``): each runs what ``assign`` bound."""
        scope = self.scope.enclosing_scope(assign)
        if not isinstance(scope, FUNCTION_DEFS):
            return []
        args = scope.args
        params = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
        if any(p is not None and p.arg == name for p in params):
            return []
        binds = 0
        calls: list[ast.Call] = []
        end = assign.end_lineno or assign.lineno
        for node in self.scope.nodes(scope):
            if isinstance(node, ast.Name) and node.id == name:
                binds += not isinstance(node.ctx, ast.Load)
            elif isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
                return []
            elif isinstance(node, ast.ExceptHandler) and node.name == name:
                return []
            elif isinstance(node, ast.alias) and (node.asname or node.name) == name:
                return []
            elif (
                isinstance(node, ast.Attribute)
                and is_name_in(node.value, {name})
                and not isinstance(node.ctx, ast.Load)
            ):
                return []
            elif isinstance(node, ast.Call):
                func = node.func
                fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if fname in ("setattr", "__setattr__", "object") and any(
                    is_name_in(a, {name}) for a in node.args[:1]
                ):
                    return []
                if (
                    isinstance(func, ast.Attribute)
                    and is_name_in(func.value, {name})
                    and node.lineno > end
                    and self.scope.enclosing_scope(node) is scope
                ):
                    calls.append(node)
        return calls if binds == 1 else []

    def _item_set(
        self, display: ast.expr, scope: ast.AST, found: _Found, route: _Route, item: ast.expr
    ) -> None:
        """``owner.field = [a, ns]``: the stand-in ``item`` is an item of the container the
        field holds, met on ``owner`` (``_put_on`` with ``item``).  Of a tuple display with
        an item that builds no stand-in (``(ns, blocks)``), the item at its position
        (``Meeting.slot``): an element of it may be that other item, which the stand-in is
        not; where every item builds one, any element is one of them."""
        slot = None
        if (
            isinstance(display, ast.Tuple)
            and not any(isinstance(e, ast.Starred) for e in display.elts)
            and not all(self._builds(e) for e in display.elts)
        ):
            slot = display.elts.index(item)
        stmt = self.scope.parents[display]
        for target in stmt.targets:  # type: ignore[attr-defined]
            self._put_on(target, stmt, scope, found, route, item=True, slot=slot)

    def _keyed(self, value: ast.expr, found: _Found, route: _Route) -> None:
        """``owner.field[key] = ns`` or ``owner.field[key] = (ns, blocks)``, the only target
        of a plain assignment: the stand-in is (item ``slot`` of the tuple display that is)
        the value stored under ``key`` in the container ``owner.field`` holds, met on
        ``owner`` (``Meeting.keyed``).  Only on a stub's field: where ``owner`` is another
        object, where that goes is not followed."""
        meeting = self._keyed_meeting(value, route)
        if meeting is not None:
            found.meetings.append(meeting)

    def _keyed_meeting(self, value: ast.expr, route: _Route) -> Meeting | None:
        """The meeting ``_keyed`` finds for ``value`` (the stand-in, or a chain of fields
        that reaches one, ``make().request``), or None."""
        parent = self.scope.parents.get(value)
        slot = None
        if isinstance(parent, ast.Tuple) and not any(
            isinstance(e, ast.Starred) for e in parent.elts
        ):
            slot, value = parent.elts.index(value), parent
            parent = self.scope.parents.get(parent)
        if not (
            isinstance(parent, ast.Assign)
            and parent.value is value
            and len(parent.targets) == 1
            and isinstance(parent.targets[0], ast.Subscript)
            and not isinstance(parent.targets[0].slice, ast.Slice)
            and isinstance(parent.targets[0].value, ast.Attribute)
        ):
            return None
        target = parent.targets[0].value
        meeting = self.meet.attribute(target.value, target.attr, parent, route.cases)
        if meeting.owner_kind is None and self._parameter(target.value):
            # ``def _add(scheduler): scheduler.reqs["r"] = ...``: the set is the stub's
            # wherever a stub's events pass this statement (``StubStandIns`` is keyed by it).
            meeting = attrs.evolve(meeting, owner_kind=StandInKind.OBJECT_NEW)
        if meeting.owner_kind is not StandInKind.OBJECT_NEW:
            return None
        return attrs.evolve(meeting, item=True, keyed=True, slot=slot)

    def _parameter(self, owner: ast.expr) -> bool:
        """Whether ``owner`` is a parameter of the function it is read in that the function
        never binds again."""
        scope = self.scope.enclosing_scope(owner)
        if not isinstance(owner, ast.Name) or not isinstance(scope, FUNCTION_DEFS):
            return False
        args = scope.args
        if owner.id not in {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}:
            return False
        return not any(
            isinstance(n, ast.Name) and n.id == owner.id and not isinstance(n.ctx, ast.Load)
            for n in self.scope.nodes(scope)
        )

    def _put_on(
        self,
        target: ast.Attribute,
        stmt: ast.stmt,
        scope: ast.AST,
        found: _Found,
        route: _Route,
        item: bool = False,
        slot: int | None = None,
    ) -> None:
        """``owner.field = <the stand-in>``: a meeting on ``owner``; where ``owner`` is no
        stand-in (a plain ``MagicMock``, an object built some other way, ``app.state``), the
        stand-in also goes wherever that object goes next, as its field (``_held``).
        ``item``: the field is set to a list or tuple the stand-in is an item of
        (``Meeting.item``), reached through an element of the field (``slot``: its position
        in a tuple)."""
        meeting = self.meet.attribute(target.value, target.attr, stmt, route.cases)
        found.meetings.append(attrs.evolve(meeting, item=item, slot=slot))
        if meeting.owner_kind is None:
            self._held(target.value, target.attr, stmt, scope, found, route, item)
            if not item:
                self._set_by_replacement(target, stmt, found, route)

    def _set_by_replacement(
        self, target: ast.Attribute, stmt: ast.stmt, found: _Found, route: _Route
    ) -> None:
        """``def fake_init(runner, *a, **k): runner.transform = ns`` in a test function that
        then replaces a method with it (``monkeypatch.setattr(MoERunner, "__init__",
        fake_init)``, a statement of its own body): the object the replaced method runs on
        holds ``ns`` as that field afterwards, for the calls the test makes where the patch
        holds (``_returned_itself`` with ``Meeting.field``).  Only a plain store among the
        replacement's own top-level statements, on its first parameter."""
        func = self.scope.parents.get(stmt)
        if not (
            isinstance(func, FUNCTION_DEFS)
            and any(s is stmt for s in func.body)
            and isinstance(target.value, ast.Name)
            and route.fields
            and route.holding is None
        ):
            return
        args = func.args
        first = (args.posonlyargs + args.args)[:1]
        if not first or first[0].arg != target.value.id:
            return
        test = self.scope.enclosing_scope(func)
        if not isinstance(test, FUNCTION_DEFS):
            return
        for node in test.body:
            call = node.value if isinstance(node, ast.Expr) else None
            if not (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and call.func.attr == "setattr"
                and len(call.args) == 3
                and isinstance(call.args[2], ast.Name)
                and call.args[2].id == func.name
                and _str(call.args[1]) is not None
            ):
                continue
            owner = dotted_name(call.args[0], self.sites.imports(call))
            if owner is not None:
                replaced = f"{owner}.{_str(call.args[1])}"
                self._returned_itself(
                    (call, replaced), ITSELF, found, route, installed=False, field=target.attr
                )

    def _held(
        self,
        owner: ast.expr,
        field: str,
        stmt: ast.AST,
        scope: ast.AST,
        found: _Found,
        route: _Route,
        item: bool = False,
    ) -> None:
        """``runner.cfg = ns`` (or ``app.state.args = ns``, ``object.__setattr__(runner,
        "cfg", ns)``), then ``f(runner)``: the holder's later hand-overs in its scope (into
        helpers, out of returns, as a stand-in is followed) are the stand-in's, each with the
        fields that lead to it (``Meeting.via``; ``item``: then an element of that field,
        ``runner.caches = [ns]``)."""
        path: tuple[str, ...] = (field, ELEMENT) if item else (field,)
        while isinstance(owner, ast.Attribute):
            path, owner = (owner.attr, *path), owner.value
        if isinstance(owner, ast.Name):
            self._held_at(owner, path, stmt, scope, found, route)

    def _held_at(
        self,
        owner: ast.Name,
        path: tuple[str, ...],
        stmt: ast.AST,
        scope: ast.AST,
        found: _Found,
        route: _Route,
        grown: bool = False,
    ) -> None:
        """The stand-in is held at ``owner.<path>`` from ``stmt`` on (``_held``): the later
        hand-overs of the locals holding it are its own, through ``path``.  ``grown``: the
        holder is a list the test grows (``layers.append(ns)``), whose display (``layers =
        []``) states no value of what the call is handed (``_unstated``)."""
        if route.depth >= MAX_FUNCTION_HOPS:
            return
        for name, via in self._holders(owner, path):
            held = _Found()
            hop = attrs.evolve(route.hop(), fields=False)
            self._follow_names(scope, {name}, stmt, held, hop)
            found.meetings.extend(
                _unstated(attrs.evolve(meeting, via=(*meeting.via, *via)), grown)
                for meeting in held.meetings
                if meeting.how is not MeetingHow.ATTRIBUTE
            )

    def _holders(self, owner: ast.Name, path: tuple[str, ...]) -> list[tuple[str, tuple[str, ...]]]:
        """The locals that hold the stand-in set at ``owner.<path>``, each with the fields
        that lead to it: ``owner`` itself, and where ``owner`` is a local last bound to a
        field of another local (``model_config = vllm_config.model_config``, so
        ``model_config.hf_text_config = ns`` sets it on ``vllm_config.model_config`` too),
        that local, through the field (``("model_config", "hf_text_config")``), and so on up.
        Only a plain attribute chain: the object a call or a subscript gives may be a new
        one."""
        out = [(owner.id, path)]
        seen = {owner.id}
        current = owner
        while len(out) <= MAX_FUNCTION_HOPS:
            bound = self.reader.resolve_local(current, NO_BINDINGS)
            fields: list[str] = []
            while isinstance(bound, ast.Attribute):
                fields.insert(0, bound.attr)
                bound = bound.value
            if not fields or not isinstance(bound, ast.Name) or bound.id in seen:
                break
            path = (*fields, *path)
            out.append((bound.id, path))
            seen.add(bound.id)
            current = bound
        return out

    def _follow_return(
        self, scope: ast.AST, found: _Found, route: _Route, position: int | None = None
    ) -> None:
        """A returned (or yielded) stand-in continues in every caller or fixture user.  Where
        they may not all be in this module (a helper or fixture other modules can import or
        use, a method, a nested def), or are not followed, it is ``loose``."""
        if route.holding is not None and route.entered and position is None:
            # an object a helper built from the stand-in goes back to the call that passed it
            call, follow, depth = route.entered[-1]
            back = attrs.evolve(
                route, entered=route.entered[:-1], depth=depth, follow_returns=follow
            )
            self._where(call, found, back)
            return
        if not (route.follow_returns and isinstance(scope, FUNCTION_DEFS)):
            found.loose.add(())
            return
        if route.depth >= MAX_FUNCTION_HOPS:
            found.loose.add(())
            return
        if not self._callers_known(scope):
            found.loose.add(())  # still followed where its users here take it
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
        returned = attrs.evolve(route, returned=True)
        only = route.variant.only
        for call, _ in self.scope.callers(scope):
            if only is not None and only[0] == id(scope) and id(call) not in only[1]:
                continue  # a variant returns to the calls that give it its fields
            if position is None:
                self._where(call, found, returned.hop())
                continue
            parent = self.scope.parents.get(call)
            if not (isinstance(parent, ast.Assign) and parent.value is call):
                found.loose.add(())
                continue
            for target in parent.targets:
                if isinstance(target, (ast.Tuple, ast.List)) and position < len(target.elts):
                    elt = target.elts[position]
                    if isinstance(elt, ast.Name) and elt.id != "_":
                        caller_scope = self.scope.enclosing_scope(call)
                        self._follow_names(caller_scope, {elt.id}, parent, found, returned.hop())
                    elif not isinstance(elt, ast.Name):
                        found.loose.add(())
                else:
                    found.loose.add(())

    def _callers_known(self, scope: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """Whether every user of what ``scope`` returns is in this test module: a fixture of
        a test module (pytest offers it to that module's tests only, unless one asks for it by
        name, ``request.getfixturevalue``), or a module-level function of a test module whose
        name is private to it.  A helper of a shared module (``utils.py``, ``conftest.py``),
        a public one another test module may import, a method or a nested def may hand what
        it returns to code this extraction never reads."""
        name = self.module.path.name
        if not (name.startswith("test_") or name.endswith("_test.py")):
            return False
        if _is_fixture(scope):
            return "getfixturevalue" not in "\n".join(self.module.lines)
        return self.scope.parents.get(scope) is self.module.tree and scope.name.startswith("_")

    def _parametrized(self, value: ast.expr, found: _Found, route: _Route) -> bool:
        """A stand-in written as a parametrize value reaches the test under that case;
        whether ``value`` is one (the test's parameter it is followed under)."""
        current = self.scope.parents.get(value)
        while current is not None and not isinstance(current, ast.stmt):
            deco, current = current, self.scope.parents.get(current)
        if not isinstance(current, FUNCTION_DEFS):
            return False
        followed = False
        for deco in current.decorator_list:
            if not isinstance(deco, ast.Call) or getattr(deco.func, "attr", "") != "parametrize":
                continue
            indirect = next((kw.value for kw in deco.keywords if kw.arg == "indirect"), None)
            if indirect is not None and not (
                isinstance(indirect, ast.Constant) and indirect.value is False
            ):
                found.loose.add(())  # a fixture takes the value: the test gets what it makes
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
                            followed = True
        return followed

    # -- meetings -------------------------------------------------------------------------

    def _argument(self, call: ast.Call, arg: ast.expr, found: _Found, route: _Route) -> None:
        """``arg`` (the stand-in) handed to ``call``: as ``self``, into a same-module helper
        (followed there), or as an argument of other code."""
        func = call.func
        fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if fname in _INSPECTING or fname in ("getattr", "hasattr", "delattr"):
            if fname == "getattr" and route.holding is not None and isinstance(arg, ast.Name):
                self._bound_out(arg, call, found, route)
            self._probed(call, fname, arg, found)
            return
        if fname in ("setattr", "__setattr__"):  # ``object.__setattr__(obj, "f", ns)`` too
            if len(call.args) > 2 and call.args[2] is arg:
                field = _str(call.args[1])
                meeting = self.meet.attribute(call.args[0], field, call, route.cases)
                found.meetings.append(meeting)
                if meeting.owner_kind is None and field is not None:
                    self._set_on_local(call, field, found, route)
                    self._installed(call, field, found, route)
            elif not (call.args and call.args[0] is arg):
                found.loose.add(())
            return
        if fname == "update" and isinstance(func, ast.Attribute) and _is_dict_of(func.value, set()):
            found.loose.add(())
            return
        if (
            fname == "append"
            and isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and call.args == [arg]
            and isinstance(parent := self.scope.parents.get(call), ast.Expr)
        ):
            # ``layers.append(layer)``: an item of the local list, which goes on wherever the
            # list goes next, behind an element (``ELEMENT``)
            scope = self.scope.enclosing_scope(call)
            if not _written_through(scope, func.value.id):
                self._held_at(func.value, (ELEMENT,), parent, scope, found, route, grown=True)
            return
        shape, callee = self.meet.self_shape(call, arg)
        if shape is not None:
            found.meetings.append(
                self.meet.call(MeetingHow.SELF, call, arg, route.cases, callee, shape)
            )
            return
        if any(isinstance(a, ast.Starred) for a in call.args) or any(
            kw.arg is None for kw in call.keywords
        ):
            found.loose.add(())  # where the call's parameters take it is not read here
        if isinstance(func, ast.Name) and route.depth < MAX_FUNCTION_HOPS:
            helper = self.scope.local_def(func)
            param = _bound_parameter(helper, call, arg) if helper is not None else None
            if helper is not None and param is not None:
                if self.module.functions.get(helper.name) is helper:
                    self.scope.ensure_indexed(helper)
                inner = attrs.evolve(
                    route.hop(False),
                    entered=(*route.entered, (call, route.follow_returns, route.depth)),
                )
                self._follow_names(helper, {param.arg}, param, found, inner)
                return
        for named in self._callees(func):
            meeting = self.meet.call(MeetingHow.ARGUMENT, call, arg, route.cases, named)
            if named is not func and meeting.callee is not None:
                # The call as written (``builder_cls(cfg)``), running what ``named`` names.
                callee = attrs.evolve(meeting.callee, text=ast.unparse(func))
                meeting = attrs.evolve(meeting, callee=callee)
            found.meetings.append(self._bound_in_helper(call, meeting, route))
            if named is func and route.fields:
                self._ctor_held(call, meeting, found, route)

    def _bound_in_helper(self, call: ast.Call, meeting: Meeting, route: _Route) -> Meeting:
        """A meeting in a same-module helper the stand-in was followed into from a test's
        call of it (``_resolve(thread, req)`` in ``test_x``, ``def _resolve(thread, req):
        f(thread.coord, req)``): the call's shape with what that test's call passes for the
        helper's parameters (``req = ReqMeta(..., publish=True)``), which decides the
        callee's branches as an argument written in the test does, and the test it runs in
        (with the patches that test makes).  Only where that call is the test's own, outside
        ``pytest.raises``, in a test patching nothing by a computed name, and binds every
        argument plainly; of an argument the helper or the test stores fields on
        (``req.puts = ...``), not those fields.  Unchanged where the binding states
        nothing more of the arguments beside the stand-in (each test's call would be judged
        again for nothing)."""
        if not route.entered or meeting.test is not None or meeting.shape is None:
            return meeting
        entry = route.entered[-1][0]
        helper = self.scope.enclosing_scope(call)
        if not (
            isinstance(helper, FUNCTION_DEFS)
            and isinstance(entry.func, ast.Name)
            and self.scope.local_def(entry.func) is helper
            and isinstance(caller := self.scope.enclosing_scope(entry), FUNCTION_DEFS)
            and caller.name.startswith("test")
            and not self.meet.recorder.expects_raise(entry)
            and not self.meet._unnamed_patch(entry)
        ):
            return meeting
        binding = call_binding(helper, entry)
        test = self.reader.test_of(entry, NO_BINDINGS)
        if binding is None or test is None:
            return meeting
        # A parameter the helper rebinds (``if req is None: req = ...``) holds the call's
        # value on some paths only.
        rebound, stored = self._stores_of(helper)
        binding = {p: v for p, v in binding.items() if p not in rebound}
        bindings = NO_BINDINGS.with_case(helper, ParamCase(None, binding))
        shape = self.meet.recorder.shape_of(call, bindings)
        if shape.star_args:
            return meeting
        stored = dict(stored)
        in_test = self._stores_of(caller)[1]
        for param, expr in binding.items():  # ``req.f = ...`` in the test, then ``_resolve(req)``
            if isinstance(expr, ast.Name) and expr.id in in_test:
                stored[param] = stored.get(param, frozenset()) | in_test[expr.id]
        shape = _unstored(shape, call, stored)
        if _others(shape, meeting) == _others(meeting.shape, meeting):
            return meeting  # nothing more stated beside the stand-in itself
        patched = dict(meeting.patched)
        entry_patched = self.meet._patches(entry)
        for target, raises in entry_patched:
            patched[target] = patched.get(target, False) or raises
        heard = self.meet._unheard(entry) if entry_patched else ()
        return attrs.evolve(
            meeting,
            shape=shape,
            test=test,
            patched=tuple(sorted(patched.items())),
            unheard=_merged_unheard(meeting.patched, meeting.unheard, entry_patched, heard),
        )

    def _stores_of(self, func: ast.AST) -> tuple[frozenset[str], Mapping[str, frozenset[str]]]:
        """The names ``func`` binds and the fields it stores on each (``_fields_stored``),
        walked once per function (``_bound_in_helper``)."""
        if id(func) not in self._func_stores:
            names = frozenset(
                n.id
                for n in walk(func)
                if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
            )
            self._func_stores[id(func)] = (names, _fields_stored(func))
        return self._func_stores[id(func)]

    def _ctor_held(self, call: ast.Call, meeting: Meeting, found: _Found, route: _Route) -> None:
        """``x = Cls(..., coord=ns)`` (in the test, or in a helper that returns ``x`` to the
        call that passed ``ns`` in), then ``x.m()`` or ``f(x.coord)``: where ``Cls.__init__``
        stores the parameter as ``self.coord`` (which the analyzer checks:
        ``Meeting.stored``), ``m`` reads the stand-in through that field, and ``x.coord`` is
        the stand-in.  Only a keyword argument (the field is guessed by its name), a callee
        the imports name, and an object bound to a plain local name or returned (a return
        goes where the stand-in's own would: ``_follow_return``)."""
        callee = meeting.callee
        keyword = meeting.keyword
        if keyword is None or callee is None or callee.dotted is None or callee.method:
            return
        if callee.instance or callee.self_arg or route.depth >= MAX_FUNCTION_HOPS:
            return
        stmt = self.scope.parents.get(call)
        scope = self.scope.enclosing_scope(call)
        if not isinstance(scope, FUNCTION_DEFS):
            return
        held = _Found()
        hop = attrs.evolve(route.hop(route.follow_returns), fields=False, holding=keyword)
        if isinstance(stmt, ast.Return):
            self._follow_return(scope, held, hop)  # ``return Cls(coord=ns)``
        elif (
            isinstance(stmt, ast.Assign)
            and stmt.value is call
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
        ):
            self._follow_names(scope, {stmt.targets[0].id}, stmt, held, hop)
        else:
            return
        stored = (callee.dotted, keyword)
        for got in held.meetings:
            if got.how is MeetingHow.ATTRIBUTE:
                continue
            via = got.via[1:] if got.via[:1] == (_HELD,) else (keyword, *got.via)
            found.meetings.append(attrs.evolve(got, via=via, stored=stored))

    def _set_on_local(self, call: ast.Call, field: str, found: _Found, route: _Route) -> None:
        """``setattr(owner, "f", ns)``, ``object.__setattr__(owner, "f", ns)`` as a statement
        of its own, ``owner`` a chain on a local of the function (not a module it imports,
        nor a stand-in): the set ``owner.f = ns`` is, followed the same way (``_held``)."""
        stmt = self.scope.parents.get(call)
        head = call.args[0]
        while isinstance(head, ast.Attribute):
            head = head.value
        if not (isinstance(stmt, ast.Expr) and stmt.value is call and isinstance(head, ast.Name)):
            return
        if head.id in self.sites.imports(call):
            return
        scope = self.scope.enclosing_scope(call)
        if isinstance(scope, FUNCTION_DEFS):
            self._held(call.args[0], field, stmt, scope, found, route)

    def _probed(self, call: ast.Call, fname: str, arg: ast.expr, found: _Found) -> None:
        """``arg`` (the stand-in) handed to a builtin that looks at it: ``isinstance``,
        ``type``, ``id``, ``callable``, ``len`` keep nothing; ``getattr``/``hasattr`` with a
        literal name read that field (what ``getattr`` gives goes on); ``delattr`` drops one
        (``StandIn.dropped``); ``vars``, ``repr``, ``print`` and a computed name see every
        field."""
        if fname in ("isinstance", "type", "id", "callable", "len"):
            return
        first = bool(call.args) and call.args[0] is arg
        name = _str(call.args[1]) if first and len(call.args) > 1 else None
        if fname in ("getattr", "hasattr") and name is not None:
            found.test_reads.add((name,))
            if fname == "getattr":
                found.loose.add((name,))
            return
        if fname == "delattr" and first:
            return
        found.loose.add(())

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


#: Comprehensions whose items are their element's values, one per pass.
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp)


def _collected(node: ast.AST) -> ast.expr | None:
    """The comprehension ``tuple(...)``, ``list(...)`` or ``set(...)`` collects, where
    ``node`` is such a call of it alone: its items are the comprehension's."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("tuple", "list", "set")
        and len(node.args) == 1
        and not node.keywords
        and isinstance(node.args[0], _COMPREHENSIONS)
    ):
        return node.args[0]
    return None


def _none_test(test: ast.expr, names: set[str]) -> bool:
    """Whether ``test`` is ``x is None`` or ``x == None``, ``x`` one of ``names``: a
    condition false for any object the test built."""
    return (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.Is, ast.Eq))
        and is_name_in(test.left, names)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    )


def _type_of(expr: ast.expr, names: set[str]) -> bool:
    """Whether ``expr`` is ``type(x)``, ``x`` one of ``names``."""
    return (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Name)
        and expr.func.id == "type"
        and len(expr.args) == 1
        and is_name_in(expr.args[0], names)
    )


def _is_patch(func: ast.expr) -> bool:
    """``patch.object`` (``mock.patch.object``): sets the attribute its second argument names
    on its first while it is in force."""
    return isinstance(func, ast.Attribute) and callee(func.value) == "patch"


def _in_variant(meeting: Meeting, variant: Variant) -> Meeting:
    """A meeting of a variant's stand-in, in the test the variant is built for: a meeting
    no test holds (in the helper building it) is that test's, and one in that test is in its
    case, where the variant stands for one.  A meeting in the test function all the
    variant's runs lie in is in the cases it stands for (``Meeting.cases``: those runs build
    it, the others another variant); elsewhere its cases are left unknown (empty), as a case
    id alone does not name its test."""
    if variant.cases and meeting.cases:
        mine = meeting.test is not None and meeting.test.partition("[")[0] == variant.function
        cases = tuple(c for c in meeting.cases if c in variant.cases) if mine else ()
        meeting = attrs.evolve(meeting, cases=cases)
    test = variant.test
    if test is None or (meeting.test is not None and meeting.test != test.partition("[")[0]):
        return meeting
    return attrs.evolve(meeting, test=test)


def _met_through(
    fields: list[StandInField], path: tuple[str, ...], meeting: Meeting
) -> list[StandInField]:
    """``fields`` with ``meeting`` added to the stand-in at ``path`` below them (``f(ns.cfg)``
    meets the namespace ``ns.cfg`` holds); unchanged where ``path`` does not end at the one
    namespace the field holds at the meeting (``field_at``'s rule: the meeting's test's own
    last set before it, else the one set it may find)."""
    named = [i for i, f in enumerate(fields) if f.name == path[0] and f.visible_to(meeting.test)]
    own = [i for i in named if fields[i].test is not None]
    own = [i for i in own if fields[i].location.line <= meeting.location.line]
    if own:
        at = own[-1]
    elif len(named) == 1:
        at = named[0]
    else:
        return fields
    if len(fields[at].children) != 1:
        return fields
    child = fields[at].children[0]
    if child.kind not in (StandInKind.SIMPLE_NAMESPACE, StandInKind.ARGPARSE_NAMESPACE):
        return fields
    if len(path) == 1:
        child = attrs.evolve(child, meetings=(*child.meetings, meeting))
    else:
        child = attrs.evolve(
            child, fields=tuple(_met_through(list(child.fields), path[1:], meeting))
        )
    out = list(fields)
    out[at] = attrs.evolve(fields[at], children=(child,))
    return out


def _written_through(scope: ast.AST, name: str) -> bool:
    """Whether ``scope`` sets a field on an item of the list ``name`` (``name[-1].f = v``,
    ``setattr(name[0], "f", v)``, or on a loop's name over it): what its items hold is then
    more than their creations say."""
    looped = {
        node.target.id
        for node in walk(scope)
        if isinstance(node, (ast.For, ast.comprehension))
        and isinstance(node.iter, ast.Name)
        and node.iter.id == name
        and isinstance(node.target, ast.Name)
    }
    for node in walk(scope):
        target: ast.AST | None = None
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
            target = node.value
        elif isinstance(node, ast.Call) and callee(node.func) == "setattr" and node.args:
            target = node.args[0]
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            if target.value.id == name:
                return True
        elif isinstance(target, ast.Name) and target.id in looped:
            return True
    return False


def _global_written(tree: ast.Module, name: str, creation: ast.stmt) -> bool:
    """Whether the module binds ``name`` anywhere but at ``creation`` (or declares it
    ``global``), sets or deletes a field through it (``name.f = v``, ``name.a.f = v``), or
    hands it first to code that may set one (``setattr``, ``monkeypatch.setattr``,
    ``patch.object``, ``vars``, ``__dict__``): then what the object holds on a test's run
    depends on which ran before."""
    for node in walk(tree):
        if isinstance(node, ast.Global) and name in node.names:
            return True
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            if not (isinstance(creation, ast.Assign) and any(t is node for t in creation.targets)):
                return True
        if isinstance(node, ast.Attribute):
            top: ast.expr = node
            while isinstance(top, ast.Attribute):
                if top is not node and top.attr == "__dict__":
                    return True
                top = top.value
            if isinstance(top, ast.Name) and top.id == name:
                if not isinstance(node.ctx, ast.Load) or node.attr == "__dict__":
                    return True
        if isinstance(node, ast.Call) and node.args:
            first = node.args[0]
            while isinstance(first, ast.Attribute):
                first = first.value
            fname = callee(node.func) or ""
            if (
                isinstance(first, ast.Name)
                and first.id == name
                and fname.rpartition(".")[2] in ("setattr", "object", "vars", "__setattr__")
            ):
                return True
    return False


def _binds(func: ast.AST, names: set[str]) -> bool:
    """Whether ``func`` binds one of ``names`` itself (a local of that name, an import)."""
    for node in walk(func):
        if isinstance(node, ast.Name) and node.id in names and not isinstance(node.ctx, ast.Load):
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any(
            (a.asname or a.name.partition(".")[0]) in names for a in node.names
        ):
            return True
        if isinstance(node, FUNCTION_DEFS + (ast.ClassDef,)) and node is not func:
            if node.name in names:
                return True
    return False


def _unstated(meeting: Meeting, grown: bool) -> Meeting:
    """``meeting`` of a list the test grew after building it (``layers = []``, then
    ``layers.append(ns)``): the argument it is states no value (not the empty display)."""
    shape = meeting.shape
    if not grown or shape is None:
        return meeting
    if meeting.position is not None and meeting.position < len(shape.positional_literals):
        literals = list(shape.positional_literals)
        literals[meeting.position] = ()
        shape = attrs.evolve(shape, positional_literals=tuple(literals))
    elif meeting.keyword is not None:
        kept = tuple((k, v) for k, v in shape.keyword_literals if k != meeting.keyword)
        shape = attrs.evolve(shape, keyword_literals=kept)
    return attrs.evolve(meeting, shape=shape)


def _set_as_display(display: ast.expr, stmt: ast.AST | None) -> bool:
    """Whether ``display`` (a list or tuple) is the whole value a plain assignment to
    attributes sets (``stub.caches = [cache]``), not unpacked into several targets."""
    return (
        isinstance(stmt, ast.Assign)
        and stmt.value is display
        and all(isinstance(t, ast.Attribute) for t in stmt.targets)
    )


def _looks_only(parent: ast.AST | None, node: ast.expr) -> bool:
    """Whether the test's use of a stand-in as ``parent``'s part ``node`` neither reads a
    field nor hands it on: its truth, ``is``/``is not``, an expression statement."""
    if isinstance(parent, ast.Compare):
        return all(isinstance(op, (ast.Is, ast.IsNot)) for op in parent.ops)
    if isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)):
        return parent.test is node
    if isinstance(parent, ast.UnaryOp):
        return isinstance(parent.op, ast.Not)
    return isinstance(parent, ast.Expr)


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


#: The attributes of a mock through which a test may change what calling it returns.
_MOCK_CONFIG = frozenset({"return_value", "side_effect", "configure_mock", "reset_mock"})


def _last_of_or(parent: ast.AST | None, node: ast.expr) -> bool:
    """Whether ``node`` is the last operand of an ``or`` (``a or node``): its value where
    every operand before it is falsy."""
    return (
        isinstance(parent, ast.BoolOp)
        and isinstance(parent.op, ast.Or)
        and parent.values[-1] is node
    )


def _fields_stored(func: ast.AST) -> dict[str, frozenset[str]]:
    """The fields ``func`` stores on each of its names (``req.puts = ...``, ``del
    req.puts``, ``setattr(req, "puts", ...)``; ``req.sub.x = ...`` changes ``sub``; ``"*"``
    for a name not written out)."""
    out: dict[str, set[str]] = {}
    for node in walk(func):
        if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
            first = node  # ``req.sub.x = ...`` changes what ``req.sub`` holds
            while isinstance(first.value, ast.Attribute):
                first = first.value
            if isinstance(first.value, ast.Name):
                out.setdefault(first.value.id, set()).add(first.attr)
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "id", getattr(node.func, "attr", "")) in ("setattr", "delattr")
            and node.args
            and isinstance(node.args[0], ast.Name)
        ):
            name = _str(node.args[1]) if len(node.args) > 1 else None
            out.setdefault(node.args[0].id, set()).add(name or "*")
    return {name: frozenset(fields) for name, fields in out.items()}


def _merged_unheard(
    first: tuple[tuple[str, bool], ...],
    first_unheard: tuple[tuple[str, Unheard], ...],
    second: tuple[tuple[str, bool], ...],
    second_unheard: tuple[tuple[str, Unheard], ...],
) -> tuple[tuple[str, Unheard], ...]:
    """``Meeting.unheard`` of two sets of patches that both hold at a call (a helper's and
    its test's): a target's, where each set that patches it states the same (which of two
    different replacements holds there is not known)."""
    heard = [dict(first_unheard), dict(second_unheard)]
    patched = [dict(first), dict(second)]
    out: dict[str, Unheard] = {}
    for target, unheard in (*first_unheard, *second_unheard):
        if all(target not in p or h.get(target) == unheard for p, h in zip(patched, heard)):
            out[target] = unheard
    return tuple(sorted(out.items()))


def _unstored(shape: CallShape, call: ast.Call, stored: Mapping[str, frozenset[str]]) -> CallShape:
    """``shape`` of ``call`` without the fields its function stores on an argument's name
    before the call may run (``_fields_stored``): what the test stated of them may not
    hold any more (none of the object's fields where the name is not written out)."""

    def strip(arg: ast.expr, known: tuple[object] | tuple[()]) -> tuple[object] | tuple[()]:
        fields = stored.get(arg.id, frozenset()) if isinstance(arg, ast.Name) else frozenset()
        if not fields or not known or not isinstance(known[0], Obj):
            return known
        if "*" in fields:
            return ()
        obj = known[0]
        return (attrs.evolve(obj, fields=tuple(f for f in obj.fields if f[0] not in fields)),)

    positional = tuple(
        strip(arg, known) for arg, known in zip(call.args, shape.positional_literals, strict=True)
    )
    by_name = {k.arg: k.value for k in call.keywords if k.arg is not None}
    keywords = tuple(
        (name, kept[0])
        for name, value in shape.keyword_literals
        if (kept := strip(by_name[name], (value,)))
    )
    return attrs.evolve(shape, positional_literals=positional, keyword_literals=keywords)


def _others(shape: CallShape, meeting: Meeting) -> tuple[object, ...]:
    """What ``shape`` states of the arguments other than the one ``meeting``'s stand-in
    is (its own position or keyword): the stand-in's fields are judged as the test built
    it anyway (``standin_audit.stated_shape``)."""
    return (
        tuple(v for i, v in enumerate(shape.positional_literals) if i != meeting.position),
        tuple(kv for kv in shape.keyword_literals if kv[0] != meeting.keyword),
    )
