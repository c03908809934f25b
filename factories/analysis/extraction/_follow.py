"""Following a stub from its creation: aliases, helpers, fixtures, callers, returns.

The object is followed through local aliases and through helper functions that build and
``return`` it (also inside a returned tuple), into every caller in the same module, and into
a same-module helper it is passed to (``_refresh(worker)``), whose sets and calls are the
stub's too.  A stub handed to other code *escapes*.
"""

from __future__ import annotations

import ast

import attrs

from factories.analysis._walk import walk
from factories.analysis.class_refs import NamedClass
from factories.analysis.extraction._cases import Bindings, CaseReader
from factories.analysis.extraction._events import EventRecorder, Track
from factories.analysis.extraction._model import Stub
from factories.analysis.extraction._scope import ModuleScope
from factories.analysis.extraction._syntax import FUNCTION_DEFS, passed_parameters

# How many function boundaries (a helper the stub is passed to, a caller it is returned to,
# a fixture's user) one stub is followed across.
MAX_FUNCTION_HOPS = 4
# Calls that look at an object without handing it to code that could read its fields.
_INSPECTING = frozenset(
    {"isinstance", "type", "id", "repr", "str", "print", "hasattr", "callable", "len", "vars"}
)


@attrs.frozen
class Route:
    """What a stub is followed under: the ``bindings`` in force, and ``export``, the stub as
    created when a module-level function returning it may serve other test modules (None
    where a caller chose its class, or for a stub already imported from another module)."""

    bindings: Bindings
    export: Stub | None = None

    def with_bindings(self, bindings: Bindings) -> Route:
        return attrs.evolve(self, bindings=bindings)


class Follower:
    """Follows stubs through one test module, recording their events."""

    def __init__(self, scope: ModuleScope, reader: CaseReader, recorder: EventRecorder) -> None:
        self.scope = scope
        self.reader = reader
        self.recorder = recorder
        # (function name, the stub as created, its track up to the ``return``) for each
        # module-level function that returns a stub, for callers in other test modules.
        self.exports: list[tuple[str, Stub, Track]] = []

    def follow_value(
        self, value: ast.AST, depth: int, route: Route, dynamic: bool = False
    ) -> list[Track]:
        """Tracks of the object produced by expression ``value`` (a creation or helper call);
        ``dynamic``: created as ``object.__new__(cls)``, so its class is the caller's choice."""
        parent = self.scope.parents.get(value)
        scope = self.scope.enclosing_scope(value)
        track = Track(dynamic_class=dynamic)
        if isinstance(parent, ast.Attribute) and parent.value is value:
            self.recorder.chained_use(parent, track, route.bindings)
            return [track]
        if isinstance(parent, ast.Assign) and parent.value is value:
            names = [t.id for t in parent.targets if isinstance(t, ast.Name)]
            if names:
                return self.follow_names(scope, set(names), parent, track, depth, route)
            track.escapes = True
            return [track]
        if isinstance(parent, ast.Return) or (isinstance(parent, ast.Yield) and _is_fixture(scope)):
            return self.follow_return(scope, track, depth, route)
        if isinstance(parent, ast.Expr):
            return [track]
        track.escapes = True
        return [track]

    def follow_element(self, call: ast.Call, index: int, depth: int, route: Route) -> list[Track]:
        """Tracks of element ``index`` of the tuple a helper call returns."""
        parent = self.scope.parents.get(call)
        scope = self.scope.enclosing_scope(call)
        track = Track()
        if isinstance(parent, ast.Assign) and parent.value is call:
            for target in parent.targets:
                if isinstance(target, (ast.Tuple, ast.List)) and index < len(target.elts):
                    elt = target.elts[index]
                    if isinstance(elt, ast.Name) and elt.id != "_":
                        return self.follow_names(scope, {elt.id}, parent, track, depth, route)
                    return [track]
        if isinstance(parent, ast.Subscript) and _literal_int(parent.slice) == index:
            return self.follow_value(parent, depth, route)
        return [track]

    def follow_names(
        self,
        scope: ast.AST,
        names: set[str],
        start: ast.stmt | ast.arg,
        track: Track,
        depth: int,
        route: Route,
        follow_returns: bool = True,
    ) -> list[Track]:
        """Events on ``names`` in ``scope`` after ``start``.  ``follow_returns=False`` inside a
        helper the stub was passed to: the caller goes on following its own name, so a
        ``return`` of the parameter ends the helper's part instead of fanning out to callers.

        A test parametrized with values written out (``@pytest.mark.parametrize("n", [0, 1])``)
        is followed once per case, each parameter bound to its value: the values decide the
        path as literals do, and each case's findings name that case."""
        cases = (
            self.reader.param_cases(scope)
            if follow_returns and not route.bindings.binds(scope)
            else []
        )
        if not cases:
            return self._follow_names(scope, names, start, track, depth, route, follow_returns)
        per_case: list[list[Track]] = []
        for case in cases:
            in_case = route.with_bindings(route.bindings.with_case(scope, case))
            per_case.append(
                self._follow_names(
                    scope, names, start, track.copy(), depth, in_case, follow_returns
                )
            )
        first = [t.signature() for t in per_case[0]]
        if all([t.signature() for t in tracks] == first for tracks in per_case[1:]):
            # The values changed nothing the audit sees: one track for the whole test.
            return self._follow_names(scope, names, start, track, depth, route, follow_returns)
        return [t for tracks in per_case for t in tracks]

    def _follow_names(
        self,
        scope: ast.AST,
        names: set[str],
        start: ast.stmt | ast.arg,
        track: Track,
        depth: int,
        route: Route,
        follow_returns: bool,
    ) -> list[Track]:
        start_key = (start.lineno, start.col_offset)
        end_line = getattr(start, "end_lineno", start.lineno)
        names = set(names)
        for target, raises in self.recorder.class_patches(scope, names, route.bindings):
            track.patched.append(target)
            if raises:
                track.raising.append(target)
        inside = {id(sub) for sub in walk(start)}
        for node in self.scope.nodes_after(scope, start_key):
            if getattr(node, "lineno", 0) <= end_line and node is not start:
                if id(node) in inside:
                    continue
            if isinstance(node, ast.Name) and node.id in names and isinstance(node.ctx, ast.Load):
                outcome = self.name_use(node, names, track, depth, route)
                if outcome is not False:
                    if not follow_returns:
                        return [track]
                    return self.follow_return(scope, track, depth, route, outcome)
            else:
                self.recorder.record(node, names, track, route.bindings)
        return [track]

    def name_use(
        self, node: ast.Name, names: set[str], track: Track, depth: int, route: Route
    ) -> int | bool | None:
        """Classify a bare load of the stub; returns a return-position when it is returned."""
        parent = self.scope.parents.get(node)
        if isinstance(parent, ast.Attribute):
            return False  # attribute access, handled as set/call or a plain read
        if isinstance(parent, ast.Assign) and parent.value is node:
            return False  # alias, handled by assignment()
        if isinstance(parent, ast.Return) or (
            isinstance(parent, ast.Yield) and _is_fixture(self.scope.enclosing_scope(node))
        ):
            return None  # returned, or yielded by a fixture: followed into its users
        if isinstance(parent, ast.Tuple) and isinstance(self.scope.parents.get(parent), ast.Return):
            return parent.elts.index(node)
        if isinstance(parent, ast.Call):
            fname = getattr(parent.func, "id", getattr(parent.func, "attr", ""))
            if fname == "getattr" and self.recorder.dynamic_call(
                parent, node, track, route.bindings
            ):
                return False
            if fname in _INSPECTING or fname in ("setattr", "object", "getattr", "__setattr__"):
                return False
            if isinstance(parent.func, ast.Attribute) and parent.func.attr == "update":
                return False
            if self.recorder.unbound_call(parent, node, track, route.bindings):
                return False
            if self.follow_helper(parent, node, track, depth, route):
                return False
        if isinstance(parent, (ast.Compare, ast.Assert)):
            return False
        track.escapes = True
        return False

    def follow_helper(
        self, call: ast.Call, arg: ast.Name, track: Track, depth: int, route: Route
    ) -> bool:
        """``helper(stub)`` for a function of this module: the helper's sets and calls on its
        parameter are the stub's.  False (the stub escapes) when the argument does not bind to
        one named parameter or the helper nesting is too deep."""
        if not isinstance(call.func, ast.Name) or depth >= MAX_FUNCTION_HOPS:
            return False
        helper = self.scope.module.functions.get(call.func.id)
        if helper is None:
            return False
        param = _bound_parameter(helper, call, arg)
        if param is None:
            return False
        self.scope.ensure_indexed(helper)
        sub = Track()
        self.follow_names(helper, {param.arg}, param, sub, depth + 1, route, follow_returns=False)
        track.absorb(sub)
        return True

    def follow_fixture(
        self,
        fixture: ast.FunctionDef | ast.AsyncFunctionDef,
        track: Track,
        depth: int,
        route: Route,
    ) -> list[Track]:
        """A pytest fixture's value reaches every function of this module that names the
        fixture as a parameter (tests, and fixtures that take it, followed in turn)."""
        name = _fixture_name(fixture)
        out: list[Track] = []
        for stmt in self.scope.index(name):
            for func in walk(stmt):
                if not isinstance(func, FUNCTION_DEFS) or func is fixture:
                    continue
                args = func.args
                for param in list(args.posonlyargs) + list(args.args) + list(args.kwonlyargs):
                    if param.arg != name:
                        continue
                    self.scope.ensure_indexed(stmt)
                    conts = self.follow_names(func, {name}, param, Track(), depth + 1, route)
                    for cont in conts:
                        out.append(track.then(cont))
        return out

    def follow_return(
        self,
        scope: ast.AST,
        track: Track,
        depth: int,
        route: Route,
        position: int | bool | None = None,
    ) -> list[Track]:
        """Continue a returned stub into every caller of ``scope`` in this module."""
        if position is False:
            return [track]
        if not isinstance(scope, FUNCTION_DEFS) or depth >= MAX_FUNCTION_HOPS:
            return [track]
        callers = self.scope.callers(scope)
        only = route.bindings.callers.get(id(scope))
        if only is not None:
            callers = [(call, named) for call, named in callers if call is only]
        if (
            position is None
            and route.export is not None
            and self.scope.parents.get(scope) is self.scope.module.tree
        ):
            self.exports.append((scope.name, route.export, track.settled(scope, None)))
        out: list[Track] = []
        if position is None and _is_fixture(scope):
            out.extend(self.follow_fixture(scope, track, depth, route))
        if not callers:
            return out or [track]
        for call, named_class in callers:
            if position is None:
                continuations = self.follow_value(call, depth + 1, route)
            else:
                continuations = self.follow_element(call, position, depth + 1, route)
            for cont in continuations:
                if track.dynamic_class and named_class is not None:
                    cont.caller_class = NamedClass(named_class)
                out.append(track.settled(scope, passed_parameters(scope, call)).then(cont))
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


def _literal_int(node: ast.AST) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    return None
