"""The values a stand-in is built with on each run: one ``Variant`` per distinct set of fields.

A namespace built from values the test only states per run (a parametrize value,
``SimpleNamespace(kv_cache_dtype=cache_dtype)``; a helper's argument,
``SimpleNamespace(speculator=speculator)``; a helper's ``**kwargs`` merged into its defaults,
``SimpleNamespace(**defaults)`` after ``defaults.update(kwargs)``) holds other fields, or other
values, on each of those runs.  ``VariantFinder.variants`` binds the values of each run (a
parametrize case of the test building it, a same-module call of the helper building it, under
each case of the test making that call) as stub extraction binds them (``Bindings``), and
groups the runs by the fields the creation then states (``creation_fields``, nested creations
included): one group, the same fields as without the bindings, is no variant at all; else
each group is followed as a stand-in of its own, into its own cases and callers.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Callable, Mapping

import attrs

from factories.analysis._walk import child_nodes, link_parents, walk
from factories.analysis.binding import literal_value
from factories.analysis.extraction._cases import (
    NO_BINDINGS,
    Bindings,
    CaseReader,
    ParamCase,
    parametrize_values,
)
from factories.analysis.extraction._class_choice import call_binding, positional_binding
from factories.analysis.extraction._scope import ModuleScope
from factories.analysis.extraction._standin_index import StandInSites
from factories.analysis.extraction._standin_model import StandInKind
from factories.analysis.extraction._standin_sites import creation_fields
from factories.analysis.extraction._syntax import FUNCTION_DEFS
from factories.analysis.extraction._syntax import str_literal as _str
from factories.analysis.values import Obj, built_object

#: How many distinct stand-ins one creation may become; past it, one stand-in for all runs.
MAX_VARIANTS = 32
#: How deep mappings (``**defaults``) and nested creations are looked through.
_MAX_DEPTH = 4
_LITERALS = (int, float, complex, str, bytes, bool, type(None))


def stated(value: object) -> bool:
    """Whether a value ``CaseReader.value_of`` found is one a field keeps as stated: a plain
    literal, or a lambda whose value the test states (``Obj.returns``: ``needs=lambda:
    captured``), which decides the branches on its call.  Other objects the test built are
    not kept (their length or truth would decide branches no stand-in's field decided so
    far, and single out others as the ones the test prepared)."""
    if isinstance(value, _LITERALS):
        return True
    return isinstance(value, Obj) and bool(value.returns)


def never_none(
    known: tuple[object] | tuple[()],
    value: ast.expr | None,
    resolve: Callable[[ast.Name], ast.expr | None],
) -> tuple[object] | tuple[()]:
    """``(Obj(),)`` where a field's value is an object the test built (``values.Obj``: a
    container, a mock, a constructed object; ``values.built_object``: ``Cls(...)``,
    ``Cls.__new__(Cls)``, a local bound to one, under a helper's call the argument it
    passes) and ``stated`` keeps nothing else of it: only that it is not ``None``, which
    decides ``ns.f is None`` as the test's objects do (``SimpleNamespace(speculator=spec)``
    with ``spec = Cls.__new__(Cls)``), never its truth, type or fields."""
    if (known and isinstance(known[0], Obj)) or built_object(value, resolve):
        return (Obj(),)
    return ()


def plain_object(
    value: ast.expr | None,
    module: ast.Module,
    value_of: Callable[[ast.expr], tuple[object] | tuple[()]],
    stored: Callable[[str], Mapping[str, int]],
) -> tuple[object] | tuple[()]:
    """``(Obj,)`` of an object the test builds with a plain class of its own module
    (``_FakeKVTransferConfig(kv_role=kv_role)``), with the fields its ``__init__`` surely
    stores from its parameters (``self.kv_role = kv_role``), each the plain literal the call
    passes for it or its literal default (``value_of``: what the test states of an argument
    of the call): the class's own text says what the object holds when the test hands it
    on.  A class with no bases, decorators or attribute hooks (``__setattr__``,
    ``__getattr__``, ``__slots__``): its objects are plain and true unless it defines
    ``__bool__`` or ``__len__``.  A field only where nothing else in the module may change
    it: one store of that name in the whole module (an attribute store, a ``setattr`` or
    ``monkeypatch.setattr`` of a literal name), none in the class body, and the store on
    ``__init__``'s straight line before any ``return`` (``stored``: the module's counts,
    ``stored_names``, made once per module and class).  ``()`` for anything else."""
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Name):
        return ()
    cls = _module_class(module, value.func.id)
    if cls is None:
        return ()
    init = [n for n in cls.body if isinstance(n, FUNCTION_DEFS) and n.name == "__init__"]
    if len(init) != 1 or not init[0].args.args:
        return ()
    stores = _plain_stores(init[0])
    if not stores:
        return ()
    # ``self`` takes a place of its own: the call's arguments bind the parameters after it.
    args = [ast.Constant(None), *value.args]
    call = ast.Call(func=value.func, args=args, keywords=value.keywords)
    bound = call_binding(init[0], call)
    if bound is None:
        return ()
    passed = {id(a) for a in value.args} | {id(k.value) for k in value.keywords}
    counts = stored(cls.name)
    own = {t for stmt in cls.body for t in _bound_targets(stmt)}
    fields = []
    for attr, param in stores.items():
        if counts.get(attr, 0) != 1 or attr in own or param not in bound:
            continue
        expr = bound[param]
        known = value_of(expr) if id(expr) in passed else literal_value(expr)
        if known and isinstance(known[0], _LITERALS):
            fields.append((attr, known[0]))
    names = {n.name for n in cls.body if isinstance(n, FUNCTION_DEFS)}
    truth = None if names & {"__bool__", "__len__"} else True
    return (Obj(tuple(fields), truthy=truth),) if fields else ()


#: Names whose definition in a class body makes its objects' attributes other than stored.
_ATTRIBUTE_HOOKS = frozenset({"__setattr__", "__getattr__", "__getattribute__", "__slots__"})


def _module_class(module: ast.Module, name: str) -> ast.ClassDef | None:
    """The plain class ``name`` binds at the module's top level, where that is its one
    binding there: no bases, keywords, decorators or attribute hooks."""
    bound = [stmt for stmt in module.body if name in _bound_targets(stmt)]
    if len(bound) != 1 or not isinstance(bound[0], ast.ClassDef):
        return None
    cls = bound[0]
    if cls.bases or cls.keywords or cls.decorator_list:
        return None
    if any(_ATTRIBUTE_HOOKS & set(_bound_targets(stmt)) for stmt in cls.body):
        return None
    return cls


def _bound_targets(stmt: ast.stmt) -> list[str]:
    """The names a statement of a module or class body binds at that level."""
    if isinstance(stmt, (*FUNCTION_DEFS, ast.ClassDef)):
        return [stmt.name]
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).partition(".")[0] for a in stmt.names]
    targets = (
        stmt.targets
        if isinstance(stmt, ast.Assign)
        else [stmt.target]
        if isinstance(stmt, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor))
        else []
    )
    return [n.id for t in targets for n in walk(t) if isinstance(n, ast.Name)]


def _plain_stores(init: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, str]:
    """``attr -> parameter`` of each ``self.attr = parameter`` on ``__init__``'s straight
    line (its top-level statements before the first that holds a ``return``), of a
    parameter ``__init__`` never rebinds."""
    args = init.args
    self_name = args.args[0].arg
    params = {a.arg for a in (*args.posonlyargs, *args.args[1:], *args.kwonlyargs)}
    rebound = {
        n.id for n in walk(init) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
    }
    out: dict[str, str] = {}
    for stmt in init.body:
        if any(isinstance(n, ast.Return) for n in walk(stmt)):
            break
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
            continue
        target, source = stmt.targets[0], stmt.value
        if (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id == self_name
            and isinstance(source, ast.Name)
            and source.id in params - rebound
        ):
            out[target.attr] = source.id
    return out


def stored_names(module: ast.Module, cls: str) -> dict[str, int]:
    """How often the module may store each attribute name on an object of class ``cls``:
    ``x.name = ...`` (and ``del``, augmented assignment), ``setattr(x, "name", ...)``,
    ``monkeypatch.setattr(x, "name", ...)``; a ``setattr`` whose name is not a literal
    counts against every name (then nothing is counted).  Not a store on a local bound once
    in its function to an object built there (``_fresh_locals``): another object than any
    built elsewhere (``worker = object.__new__(W); worker.kv_role = ...``, ``cfg =
    _Other()``)."""
    counts: dict[str, int] = {}
    builders = _FRESH | _own_classes(module) | {cls}
    fresh: dict[int, frozenset[str]] = {}
    parents: dict[ast.AST, ast.AST] = {}
    nodes = link_parents(module, parents)

    def built_here(node: ast.AST, name: ast.expr | None) -> bool:
        if not isinstance(name, ast.Name):
            return False
        scope = parents.get(node)
        while scope is not None and not isinstance(scope, (*FUNCTION_DEFS, ast.Lambda)):
            scope = parents.get(scope)
        if scope is None:
            return False
        if id(scope) not in fresh:
            fresh[id(scope)] = _fresh_locals(scope, builders)
        return name.id in fresh[id(scope)]

    for node in nodes:
        if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
            if not built_here(node, node.value):
                counts[node.attr] = counts.get(node.attr, 0) + 1
        elif isinstance(node, ast.Call) and _callee_name(node.func) in ("setattr", "delattr"):
            first = node.args[0] if node.args else None
            if built_here(node, first):
                continue
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                # ``monkeypatch.setattr("pkg.mod.name", value)``
                name = first.value.rpartition(".")[2]
                counts[name] = counts.get(name, 0) + 1
                continue
            for arg in node.args[1:2] or [None]:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    counts[arg.value] = counts.get(arg.value, 0) + 1
                else:
                    counts["*"] = counts.get("*", 0) + 1
    return {} if counts.get("*") else counts


def _own_classes(module: ast.Module) -> frozenset[str]:
    """The classes the module binds once at its top level, none defining ``__new__``: a
    call of one builds a new object of it."""
    classes = [stmt for stmt in module.body if isinstance(stmt, ast.ClassDef)]
    return frozenset(
        cls.name
        for cls in classes
        if sum(cls.name in _bound_targets(stmt) for stmt in module.body) == 1
        and "__new__" not in {t for stmt in cls.body for t in _bound_targets(stmt)}
    )


#: Calls that build a new object whatever their arguments: ``object.__new__(C)``,
#: namespaces, mocks, modules.
_FRESH = frozenset(
    {
        "__new__",
        "SimpleNamespace",
        "Mock",
        "MagicMock",
        "NonCallableMock",
        "NonCallableMagicMock",
        "ModuleType",
    }
)


def _fresh_locals(func: ast.AST, builders: frozenset[str]) -> frozenset[str]:
    """The names ``func`` (nested defs included) binds once, by a plain assignment of an
    object built there: a call of one of ``builders`` (``_FRESH``, the module's own
    classes)."""
    values: dict[str, list[ast.expr | None]] = {}
    for node in walk(func):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            values.setdefault(node.id, []).append(None)
        elif isinstance(node, ast.arg):
            values.setdefault(node.arg, []).append(None)
    for node in walk(func):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            bound = values[node.targets[0].id]
            bound[bound.index(None)] = node.value
    return frozenset(
        name
        for name, bound in values.items()
        if len(bound) == 1
        and isinstance(bound[0], ast.Call)
        and _callee_name(bound[0].func) in builders
    )


def _callee_name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


@attrs.frozen
class Variant:
    """The runs one stand-in stands for: ``bindings`` to read its values under (those of every
    run where ``exact``, else only its creation's fields, which all its runs share), the
    calls of the helper building it that it returns to (``only``: the helper's id and theirs),
    the parametrize case ids it is followed under, and the test it is built for where all its
    runs share one (with the case id where one case is all)."""

    bindings: Bindings = NO_BINDINGS
    exact: bool = True
    only: tuple[int, frozenset[int]] | None = None
    cases: tuple[str, ...] = ()
    test: str | None = None
    # The test function every run lies in, its cases aside (``test`` without the case id,
    # also where the runs are several cases of it): the test ``cases`` are ids of.
    function: str | None = None


@attrs.frozen
class _Run:
    bindings: Bindings
    caller: ast.Call | None = None
    case: str | None = None
    test: str | None = None


class VariantFinder:
    """The variants of one module's creations, and their fields under a run's values."""

    def __init__(self, scope: ModuleScope, reader: CaseReader, sites: StandInSites) -> None:
        self.scope = scope
        self.reader = reader
        self.sites = sites

    # -- fields ---------------------------------------------------------------------------

    def creation_fields(
        self, call: ast.Call, kind: StandInKind, bindings: Bindings
    ) -> tuple[list[tuple[str, ast.expr, ast.AST]], bool]:
        """``(name, value, where)`` of each field the creation call sets, and whether it also
        sets fields no literal names: ``creation_fields`` of the sites, with each mapping it
        unpacks read through its binding (``mapping_items``; a key set again holds its last
        value)."""

        def read(mapping: ast.expr) -> list[tuple[str, ast.expr, ast.AST]] | None:
            named = self.mapping_items(mapping, bindings)
            return None if named is None else list({item[0]: item for item in named}.values())

        return creation_fields(call, kind, read)

    def mapping_items(
        self, node: ast.expr, bindings: Bindings, depth: int = 0
    ) -> list[tuple[str, ast.expr, ast.AST]] | None:
        """The items of a mapping the test states, in the order they land: a dict display
        (``**`` entries too), ``dict(...)``, a local bound to one and then only updated in
        the function's own statements (``d.update(m)``, ``d["k"] = v``), a helper's
        ``**kwargs`` under the binding of its call, a parametrize value; None for anything
        else."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(node, ast.Dict):
            out: list[tuple[str, ast.expr, ast.AST]] = []
            for key, value in zip(node.keys, node.values):
                if key is None:
                    inner = self.mapping_items(value, bindings, depth + 1)
                    if inner is None:
                        return None
                    out.extend(inner)
                elif _str(key) is not None:
                    out.append((_str(key), value, value))  # type: ignore[arg-type]
                else:
                    return None
            return out
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "dict"
        ):
            if self.scope.local_def(node.func) is not None or len(node.args) > 1:
                return None
            out = []
            for arg in node.args:
                inner = self.mapping_items(arg, bindings, depth + 1)
                if inner is None:
                    return None
                out.extend(inner)
            for kw in node.keywords:
                if kw.arg is None:
                    inner = self.mapping_items(kw.value, bindings, depth + 1)
                    if inner is None:
                        return None
                    out.extend(inner)
                else:
                    out.append((kw.arg, kw.value, kw))
            return out
        if isinstance(node, ast.Name):
            return self._name_items(node, bindings, depth)
        return None

    def _name_items(
        self, name: ast.Name, bindings: Bindings, depth: int
    ) -> list[tuple[str, ast.expr, ast.AST]] | None:
        scope = self.scope.enclosing_scope(name)
        if not isinstance(scope, FUNCTION_DEFS):
            return None
        kwarg = scope.args.kwarg
        if kwarg is not None and kwarg.arg == name.id:
            case = bindings.cases.get(id(scope))
            given = case.values.get(name.id) if case is not None else None
            if given is None or _rebound(self.scope.nodes(scope), name):
                return None
            return self.mapping_items(given, bindings, depth + 1)
        bound = self.scope.assigned_before(scope, name)
        if bound is None:
            value = self.reader.parameter_value(name, bindings)
            return self.mapping_items(value, bindings, depth + 1) if value is not None else None
        assign = self.scope.parents.get(bound)
        if not isinstance(assign, ast.Assign) or self.scope.parents.get(assign) is not scope:
            return None
        out = self.mapping_items(bound, bindings, depth + 1)
        if out is None:
            return None
        start, end = (assign.end_lineno or assign.lineno), name.lineno
        for node in self.scope.nodes(scope):
            line = getattr(node, "lineno", 0)
            if not (start < line < end or (line == end and node is not name)):
                continue
            if not (isinstance(node, ast.Name) and node.id == name.id):
                continue
            more = self._update(node, scope, bindings, depth)
            if more is None:
                return None
            out.extend(more)
        return out

    def _update(
        self, use: ast.Name, scope: ast.AST, bindings: Bindings, depth: int
    ) -> list[tuple[str, ast.expr, ast.AST]] | None:
        """What one later use of a mapping's local adds to it: ``d.update(m)`` (``m`` a
        mapping it states, or keywords) or ``d["k"] = v``, each a statement of the function
        itself (run once on every run of it); None for any other use."""
        parent = self.scope.parents.get(use)
        if isinstance(parent, ast.Attribute) and parent.attr == "update":
            call = self.scope.parents.get(parent)
            stmt = self.scope.parents.get(call) if isinstance(call, ast.Call) else None
            if not (isinstance(stmt, ast.Expr) and self.scope.parents.get(stmt) is scope):
                return None
            assert isinstance(call, ast.Call)
            out: list[tuple[str, ast.expr, ast.AST]] = []
            for arg in call.args:
                inner = self.mapping_items(arg, bindings, depth + 1)
                if inner is None:
                    return None
                out.extend(inner)
            for kw in call.keywords:
                if kw.arg is None:
                    return None
                out.append((kw.arg, kw.value, kw))
            return out
        if isinstance(parent, ast.Subscript) and isinstance(parent.ctx, ast.Store):
            stmt = self.scope.parents.get(parent)
            key = _str(parent.slice)
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and key is not None
                and self.scope.parents.get(stmt) is scope
            ):
                return [(key, stmt.value, stmt)]
        return None

    # -- variants -------------------------------------------------------------------------

    def variants(self, call: ast.Call) -> list[Variant]:
        """The stand-ins one top-level creation becomes (``[]``: one, as without bindings):
        its runs grouped by the fields it states on them."""
        scope = self.scope.enclosing_scope(call)
        if not isinstance(scope, FUNCTION_DEFS):
            return []
        runs = self._case_runs(scope, call)
        if not runs:
            runs = self._caller_runs(scope)
        if not runs or len(runs) > MAX_VARIANTS * 2:
            return []
        groups: dict[object, list[_Run]] = {}
        for run in runs:
            groups.setdefault(self.signature(call, run.bindings), []).append(run)
        if len(groups) > MAX_VARIANTS or (
            len(groups) == 1 and self.signature(call, NO_BINDINGS) in groups
        ):
            return []
        return [_variant(scope, members) for members in groups.values()]

    def _case_runs(self, func: ast.AST, call: ast.Call) -> list[_Run]:
        """A test's parametrize cases, as far as they give the creation's names values: every
        case where the test has few enough (``param_cases``, pytest's ids), else the cases of
        the decorators that bind a name the creation uses (no id: several of pytest's cases
        each)."""
        cases = self.reader.param_cases(func)
        if cases:
            return [
                _Run(b, case=c.id, test=self.reader.test_of(call, b))
                for c in cases
                for b in [NO_BINDINGS.with_case(func, c)]
            ]
        decorators = [
            d
            for d in getattr(func, "decorator_list", [])
            if isinstance(d, ast.Call) and getattr(d.func, "attr", None) == "parametrize"
        ]
        used = {n.id for n in walk(call) if isinstance(n, ast.Name)}
        lists = [parametrize_values(d) for d in decorators]
        lists = [values for values in lists if values and used & set(values[0].values)]
        if not lists:
            return []
        out: list[_Run] = []
        for combo in itertools.product(*lists):
            merged: dict[str, ast.expr] = {}
            for part in combo:
                merged.update(part.values)
            out.append(_Run(NO_BINDINGS.with_case(func, ParamCase(None, merged))))
            if len(out) > MAX_VARIANTS * 2:
                return []
        return out

    def _caller_runs(self, func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[_Run]:
        """A module-level helper's same-module calls (not a fixture's), each under every case
        of the test making it: its parameters bound to what the call passes (its ``**kwargs``
        to the keywords no parameter takes, as a dict display)."""
        if self.scope.parents.get(func) is not self.scope.module.tree or _decorated(func):
            return []
        out: list[_Run] = []
        for caller, _ in self.scope.callers(func):
            outer = self.scope.enclosing_scope(caller)
            cases = self.reader.param_cases(outer) or [None]
            for case in cases:
                at = NO_BINDINGS if case is None else NO_BINDINGS.with_case(outer, case)
                binding = self._bind(func, caller, at)
                if binding is None:
                    return []
                bound = at.with_case(func, ParamCase(None, binding)).with_caller(func, caller)
                out.append(_Run(bound, caller, test=self.reader.test_of(caller, at)))
        return out

    def _bind(
        self, func: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call, at: Bindings
    ) -> dict[str, ast.expr] | None:
        """Each parameter of ``func`` to what ``call`` passes (or its default), its
        ``**kwargs`` to a dict display of the rest; a ``**m`` of the call read as the mapping
        it states under ``at``; None where that is not known (``*args``, an unknown ``**m``,
        a keyword no parameter takes without a ``**kwargs``)."""
        if any(isinstance(a, ast.Starred) for a in call.args):
            return None
        args = func.args
        if len(call.args) > len(args.posonlyargs) + len(args.args):
            return None
        bound, named = positional_binding(func, call)
        keys: list[ast.expr | None] = []
        values: list[ast.expr] = []
        for kw in call.keywords:
            if kw.arg is not None:
                items = [(kw.arg, kw.value)]
            else:
                unpacked = self.mapping_items(kw.value, at)
                if unpacked is None:
                    return None
                items = [(key, value) for key, value, _ in unpacked]
            for key, value in items:
                if key in named:
                    bound[key] = value
                elif args.kwarg is not None:
                    keys.append(ast.Constant(key))
                    values.append(value)
                else:
                    return None
        if args.kwarg is not None:
            bound[args.kwarg.arg] = ast.Dict(keys=keys, values=values)
        return bound

    def signature(self, call: ast.Call, bindings: Bindings, depth: int = 0) -> object:
        """What the creation states under ``bindings``: each field's name and stated value
        (``stated``), with the signatures of the creations its value holds."""
        site = self.sites.kind_of(call)
        if site is None:
            return None
        named, opaque = self.creation_fields(call, site[0], bindings)
        resolve = self.reader.resolver(bindings)
        out: list[object] = [opaque]
        for name, value, _ in named:
            known = self.reader.value_of(value, bindings)
            if known and stated(known[0]):
                kept = known[0]
            else:
                kept = next(iter(never_none(known, value, resolve)), _UNKNOWN)
            inner = (
                tuple(self.signature(c, bindings, depth + 1) for c in self._creations_in(value))
                if depth < _MAX_DEPTH
                else ()
            )
            out.append((name, _key(kept), inner))
        return tuple(out)

    def _creations_in(self, value: ast.expr) -> list[ast.Call]:
        """The creations a field's value is or holds, as ``_children`` finds them."""
        out: list[ast.Call] = []
        pending: list[ast.AST] = [value]
        while pending:
            node = pending.pop(0)
            target = node
            if isinstance(node, ast.Name):
                bound = self.reader.resolve_local(node, NO_BINDINGS)
                target = bound if bound is not None else node
            if self.sites.kind_of(target) is not None:
                out.append(target)  # type: ignore[arg-type]
                continue
            if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.keyword, ast.IfExp)):
                pending.extend(child_nodes(node))
            elif isinstance(node, ast.Call):
                pending.extend(node.args)
                pending.extend(node.keywords)
        return out


_UNKNOWN = object()


def _key(value: object) -> object:
    """A value as a signature holds it: itself where hashable (a lambda's with what it
    returns, which its equality leaves out), its text else."""
    if isinstance(value, Obj):
        return (value, tuple(_key(v) for v in value.returns))
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def _rebound(nodes: list[ast.AST], name: ast.Name) -> bool:
    """Whether the function stores to ``name`` anywhere (then its value is not the call's)."""
    return any(
        isinstance(n, ast.Name) and n.id == name.id and isinstance(n.ctx, ast.Store) for n in nodes
    )


def _decorated(func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A decorated helper (a fixture, a cache) does not hand each call its own object."""
    return bool(func.decorator_list)


def _variant(scope: ast.AST, runs: list[_Run]) -> Variant:
    first = runs[0]
    callers = [r.caller for r in runs if r.caller is not None]
    only = (id(scope), frozenset(id(c) for c in callers)) if callers else None
    cases = tuple(dict.fromkeys(r.case for r in runs if r.case is not None))
    tests = {r.test for r in runs}
    test = tests.pop() if len(tests) == 1 else None
    if test is not None and len(runs) > 1:
        test = test.partition("[")[0]
    functions = {r.test.partition("[")[0] if r.test is not None else None for r in runs}
    function = functions.pop() if len(functions) == 1 else None
    return Variant(first.bindings, len(runs) == 1, only, cases, test, function)
