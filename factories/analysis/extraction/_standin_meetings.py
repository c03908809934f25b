"""Meetings: the ``Meeting`` value of one hand-over, with what the test states around it.

Which spelling makes a stand-in ``self``, what the callee names through the test's imports
(or which stub's method it is), the owner of an attribute, and the test, parametrize cases
and ``pytest.raises`` around the place.
"""

from __future__ import annotations

import ast

import attrs

from factories.analysis.extraction._cases import NO_BINDINGS, CaseReader
from factories.analysis.extraction._events import EventRecorder, _is_dict_of, _module_alias
from factories.analysis.extraction._follow import MAX_FUNCTION_HOPS
from factories.analysis.extraction._scope import ModuleScope
from factories.analysis.extraction._standin_index import Site, StandInSites
from factories.analysis.extraction._standin_model import (
    Callee,
    Meeting,
    MeetingHow,
    SelfShape,
    StandInKind,
)
from factories.analysis.extraction._standin_sites import dotted_name
from factories.analysis.extraction._syntax import (
    FUNCTION_DEFS,
    callee,
    is_attr_of,
    is_name_in,
    str_literal,
)
from factories.analysis.values import EnumMember, Obj, built_array, returning

_SELF_SHAPES_BY_ATTR = {
    "__get__": SelfShape.DESCRIPTOR_GET,
    "fget": SelfShape.PROPERTY_FGET,
    "fset": SelfShape.PROPERTY_FGET,
    "fdel": SelfShape.PROPERTY_FGET,
}

#: Calls that set an attribute named by their second argument on their first.
_SETTERS = frozenset({"setattr", "__setattr__", "object"})


class MeetingMaker:
    """Builds the meetings of one module's stand-ins."""

    def __init__(
        self, scope: ModuleScope, reader: CaseReader, recorder: EventRecorder, sites: StandInSites
    ) -> None:
        self.scope = scope
        self.reader = reader
        self.recorder = recorder
        self.sites = sites

    def self_shape(self, call: ast.Call, arg: ast.expr) -> tuple[SelfShape | None, ast.expr]:
        """The spelling by which ``call`` makes ``arg`` ``self``, and the method it names."""
        func = call.func
        if any(kw.arg == "self" and kw.value is arg for kw in call.keywords):
            return SelfShape.SELF_KEYWORD, func
        first = call.args[0] if call.args else None
        fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if fname == "MethodType" and len(call.args) > 1 and call.args[1] is arg:
            return SelfShape.METHOD_TYPE, call.args[0]
        if first is not arg:
            return None, func
        if isinstance(func, ast.Attribute) and func.attr in _SELF_SHAPES_BY_ATTR:
            return _SELF_SHAPES_BY_ATTR[func.attr], func.value
        target = func
        if isinstance(func, ast.Name):
            bound = self.reader.resolve_local(func, NO_BINDINGS)
            target = bound if isinstance(bound, ast.Attribute) else func
        if self.recorder.unbound_target(target) is not None:
            return SelfShape.UNBOUND_CALL, func
        return None, func

    def call(
        self,
        how: MeetingHow,
        call: ast.Call,
        arg: ast.expr,
        cases: tuple[str, ...],
        callee: ast.expr,
        shape: SelfShape | None = None,
    ) -> Meeting:
        """``arg`` handed to ``call`` (``callee``: the code it runs, as written)."""
        position = next((i for i, a in enumerate(call.args) if a is arg), None)
        keyword = next((kw.arg for kw in call.keywords if kw.value is arg), None)
        made = self._callee(callee, call)
        if how is MeetingHow.ARGUMENT and position != 0:
            made = self._self_given(made, call)
        return attrs.evolve(
            self._context(call, cases),
            how=how,
            callee=made,
            patched=self._patches(call),
            self_shape=shape,
            position=position,
            keyword=keyword,
            shape=self.recorder.shape_of(call, NO_BINDINGS),
        )

    def attribute(
        self, owner: ast.expr, field: str | None, node: ast.AST, cases: tuple[str, ...]
    ) -> Meeting:
        """The stand-in put on ``owner`` (an expression, or the creation call of the stand-in
        it is a field of) as ``field``."""
        site: Site | None = self.sites.kind_of(owner)
        if site is not None:
            text = self.sites.owner_text(owner)  # type: ignore[arg-type]
        else:
            site, text = self.sites.site_of(owner), ast.unparse(owner)
        return attrs.evolve(
            self._context(node, cases),
            how=MeetingHow.ATTRIBUTE,
            owner=text,
            owner_kind=site[0] if site is not None else None,
            owner_class=site[1] if site is not None else None,
            field=field,
        )

    def _callee(self, func: ast.expr, call: ast.Call) -> Callee:
        imports = self.sites.imports(call)
        target = func
        if isinstance(func, ast.Name) and func.id not in imports:
            bound = self.reader.resolve_local(func, NO_BINDINGS)
            if bound is None:  # ``_plan = Builder.plan`` at module level
                bound = _module_alias(self.scope.module.tree, func.id)
            if isinstance(bound, ast.Attribute):
                target = bound
        stub_class, method = None, None
        if isinstance(func, ast.Attribute):
            site = self.sites.site_of(func.value)
            if site is not None and site[0] is StandInKind.OBJECT_NEW:
                stub_class, method = site[1], func.attr
        made = Callee(ast.unparse(func), dotted_name(target, imports), stub_class, method)
        if made.dotted is None and method is None and isinstance(func, ast.Attribute):
            return self._on_instance(made, func, call, imports)
        if made.dotted is None and isinstance(func, ast.Name) and target is func:
            subclass = _test_subclass(self.scope.module.tree, func.id, imports)
            if subclass is not None:
                return attrs.evolve(made, dotted=subclass[0], overrides=subclass[1])
        return made

    def _on_instance(
        self, made: Callee, func: ast.Attribute, call: ast.Call, imports: dict
    ) -> Callee:
        """``Cls(args).m(ns)``, or ``x.m(ns)`` where ``x`` is an object the test built by
        calling its class (``_built``): ``m`` of the class the test's imports name, called on
        the real object, with the attributes the test sets on it before the call."""
        built = self._built(func.value, call, 0)
        if built is None:
            return made
        cls, fields = built
        values = self._values_on(func.value, call) if isinstance(func.value, ast.Name) else ()
        return attrs.evolve(
            made,
            dotted=f"{cls}.{func.attr}",
            instance=True,
            instance_fields=fields,
            instance_values=values,
        )

    def _values_on(self, name: ast.Name, call: ast.Call) -> tuple[tuple[str, object], ...]:
        """The values the function making ``call`` gives fields of the local ``name`` before
        it, where it states them (``x.f = None``, ``x.src = Mock()``, ``x.buf =
        torch.full(shape, -1)``: ``_stated``; ``x.check = AsyncMock(return_value=None)``:
        ``values.returning``): a field it sets once, by a plain assignment
        on the function's straight line (no branch or loop around it), and by no other
        means (``setattr``, ``monkeypatch.setattr``: those leave it unknown)."""
        scope = self.scope.enclosing_scope(call)
        counts: dict[str, int] = {}
        values: dict[str, tuple[object] | tuple[()]] = {}
        for node in self.scope.nodes(scope):
            if getattr(node, "lineno", call.lineno) >= call.lineno:
                continue
            if isinstance(node, ast.Call) and node.args and is_name_in(node.args[0], {name.id}):
                field = str_literal(node.args[1]) if len(node.args) > 1 else None
                if field is not None:
                    counts[field] = counts.get(field, 0) + 2  # set some other way
            if not isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if not is_attr_of(target, {name.id}):
                    continue
                field = target.attr  # type: ignore[attr-defined]
                counts[field] = counts.get(field, 0) + 1
                plain = isinstance(node, ast.Assign) and self._straight(node, scope)
                value = node.value if plain else None
                resolve = self.reader.resolver(NO_BINDINGS)
                values[field] = returning(value, resolve) or _stated(
                    self.reader.value_of(value, NO_BINDINGS), value
                )
        return tuple(
            (field, known[0]) for field, known in values.items() if counts[field] == 1 and known
        )

    def _straight(self, node: ast.AST, scope: ast.AST) -> bool:
        """Whether ``node`` runs whenever its function runs to the end: no branch, loop,
        handler or nested function between them."""
        current = self.scope.parents.get(node)
        while current is not None and current is not scope:
            if not isinstance(current, (ast.With, ast.AsyncWith)):
                return False
            current = self.scope.parents.get(current)
        return current is scope

    def _built(self, expr: ast.expr, at: ast.AST, depth: int) -> tuple[str, tuple[str, ...]] | None:
        """The class (dotted through the test's imports) of the object ``expr`` is at ``at``,
        and the attributes the test set on it by then: ``Cls(args)`` or ``Cls.__new__(Cls)``,
        a local last bound to one in the function, or the call of a helper of the module
        whose every ``return`` gives one of the same class.  None for anything else, and for
        an object the test sets attributes on by names it computes."""
        if isinstance(expr, ast.Name):
            bound = self.reader.resolve_local(expr, NO_BINDINGS)
            fields = self._set_on(expr.id, at)
            inner = self._built(bound, bound, depth) if bound is not None else None
            if inner is None or fields is None:
                return None
            return inner[0], tuple(dict.fromkeys((*inner[1], *fields)))
        if not isinstance(expr, ast.Call) or self.sites.kind_of(expr) is not None:
            return None
        func = expr.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "__new__"
            and len(expr.args) == 1
            and ast.dump(expr.args[0]) == ast.dump(func.value)
        ):
            func = func.value
        cls = dotted_name(func, self.sites.imports(expr))
        if cls is not None:
            return cls, ()
        helper = self.scope.local_def(func) if isinstance(func, ast.Name) else None
        if helper is None or depth >= MAX_FUNCTION_HOPS:
            return None
        if self.scope.module.functions.get(helper.name) is helper:
            self.scope.ensure_indexed(helper)
        returns = [
            node
            for node in self.scope.nodes(helper)
            if isinstance(node, ast.Return) and self.scope.enclosing_scope(node) is helper
        ]
        found = [
            self._built(ret.value, ret, depth + 1) if ret.value is not None else None
            for ret in returns
        ]
        if not found or any(f is None for f in found) or len({f[0] for f in found}) != 1:
            return None
        return found[0][0], tuple(dict.fromkeys(n for f in found for n in f[1]))

    def _set_on(self, name: str, call: ast.Call) -> tuple[str, ...] | None:
        """The attributes the function making ``call`` sets on the local ``name`` before it
        (``x.f = v``, ``setattr(x, "f", v)``, ``monkeypatch.setattr(x, "f", v)``,
        ``patch.object(x, "f")``), or None where it sets some by a computed name."""
        scope = self.scope.enclosing_scope(call)
        out: dict[str, None] = {}
        for node in self.scope.nodes(scope):
            if getattr(node, "lineno", call.lineno) >= call.lineno:
                continue
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    for sub in ast.walk(target):
                        if is_attr_of(sub, {name}):
                            out[sub.attr] = None  # type: ignore[attr-defined]
            elif isinstance(node, ast.Call):
                func = node.func
                if isinstance(func, ast.Attribute) and _is_dict_of(func.value, {name}):
                    return None  # ``vars(x).update(...)``
                if callee(func) in _SETTERS and node.args and is_name_in(node.args[0], {name}):
                    field = str_literal(node.args[1]) if len(node.args) > 1 else None
                    if field is None:
                        return None
                    out[field] = None
        return tuple(out)

    def _self_given(self, callee: Callee, call: ast.Call) -> Callee:
        """``Builder.build(stub, ns)``: the callee as the method of the stand-in handed first
        (the stub's call, or the namespace's replay, judges ``ns`` with what ``self`` holds)."""
        if callee.method is not None or not call.args:
            return callee
        site = self.sites.site_of(call.args[0])
        target = self.recorder.unbound_target(call.func)
        if site is None or target is None or site[0] is StandInKind.SPEC_MOCK:
            return callee
        stub_class = site[1] if site[0] is StandInKind.OBJECT_NEW else None
        return attrs.evolve(callee, stub_class=stub_class, method=target[1], self_arg=True)

    def _patches(self, call: ast.Call) -> tuple[tuple[str, bool], ...]:
        """The patches of the function that makes ``call`` and of the test around it."""
        scopes = [self.scope.enclosing_scope(call), self._test_function(call)]
        imports = self.sites.imports(call)
        found: dict[str, bool] = {}
        for scope in scopes:
            if isinstance(scope, FUNCTION_DEFS):
                for target, raises in self.recorder.class_patches(scope, set(), NO_BINDINGS):
                    # Through the test's imports (a function's own too): ``utils.helper``
                    # imported inside the test is ``vllm.x.utils.helper``.
                    head, _, rest = target.partition(".")
                    if head in imports and rest:
                        target = f"{imports[head].dotted}.{rest}"
                    found[target] = found.get(target, False) or raises
        return tuple(sorted(found.items()))

    def _context(self, node: ast.AST, cases: tuple[str, ...]) -> Meeting:
        """A meeting at ``node`` with what the test states around it filled in."""
        if not cases:
            test = self._test_function(node)
            if test is not None:
                cases = tuple(c.id for c in self.reader.param_cases(test) if c.id is not None)
        return Meeting(
            how=MeetingHow.ARGUMENT,
            location=self.scope.loc(node),
            test=self.reader.test_of(node, NO_BINDINGS),
            cases=cases,
            expect_raise=self.recorder.expects_raise(node),
            raise_owned=self.recorder.raise_owned(node),
            branches=self.scope.branches(node),
        )

    def _test_function(self, node: ast.AST) -> ast.AST | None:
        found = None
        current = self.scope.parents.get(node)
        while current is not None:
            if isinstance(current, FUNCTION_DEFS):
                found = current
            current = self.scope.parents.get(current)
        return found if found is not None and found.name.startswith("test") else None


_LITERALS = (int, float, complex, str, bytes, bool, type(None))


def _stated(known: tuple[object] | tuple[()], value: ast.expr | None) -> tuple[object] | tuple[()]:
    """What an assignment to a field of a real object the test built states of its value: a
    literal, an enum member, an object the test builds (``values.Obj``: a mock, a
    container, an array of any size), the result of arithmetic (never ``None``)."""
    if known:
        return known if isinstance(known[0], (*_LITERALS, Obj, EnumMember)) else ()
    if isinstance(value, ast.BinOp) or built_array(value):
        return (Obj(),)
    return ()


def _test_subclass(
    tree: ast.Module, name: str, imports: dict
) -> tuple[str, tuple[str, ...]] | None:
    """``class <name>(Base)`` of the test module, its one binding there: the base's dotted
    name and the methods the class defines, where calling it runs the base's constructor
    with those methods in place of the base's.  Only a body of plain methods (and
    annotations, a docstring, ``pass``): no constructor, no class attribute, decorator,
    keyword or metaclass that would change what the base's code reads or decides."""
    defs = [
        node
        for node in tree.body
        if (isinstance(node, ast.ClassDef) and node.name == name)
        or (
            isinstance(node, (ast.Assign, ast.AnnAssign, ast.FunctionDef, ast.AsyncFunctionDef))
            and name in _bound_names(node)
        )
    ]
    if len(defs) != 1 or not isinstance(defs[0], ast.ClassDef):
        return None
    cls = defs[0]
    if len(cls.bases) != 1 or cls.keywords or cls.decorator_list:
        return None
    base = dotted_name(cls.bases[0], imports)
    methods: list[str] = []
    for node in cls.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.decorator_list:
            if node.name in ("__init__", "__new__", "__init_subclass__", "__getattr__"):
                return None
            methods.append(node.name)
        elif not (
            isinstance(node, ast.Pass)
            or (isinstance(node, ast.AnnAssign) and node.value is None)
            or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
        ):
            return None
    return (base, tuple(methods)) if base is not None else None


def _bound_names(node: ast.stmt) -> set[str]:
    """The names a module-level statement binds."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return {node.name}
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
