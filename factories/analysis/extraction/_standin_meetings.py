"""Meetings: the ``Meeting`` value of one hand-over, with what the test states around it.

Which spelling makes a stand-in ``self``, what the callee names through the test's imports
(or which stub's method it is), the owner of an attribute, and the test, parametrize cases
and ``pytest.raises`` around the place.
"""

from __future__ import annotations

import ast

import attrs

from factories.analysis._walk import walk
from factories.analysis.binding import Unheard
from factories.analysis.extraction._cases import NO_BINDINGS, CaseReader
from factories.analysis.extraction._events import EventRecorder, _is_dict_of, _module_alias
from factories.analysis.extraction._follow import MAX_FUNCTION_HOPS, _fixture_name, _is_fixture
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
    literal_defaults,
    passed_parameters,
    str_literal,
)
from factories.analysis.values import EnumMember, Obj, built_array, returning, truthy

_SELF_SHAPES_BY_ATTR = {
    "__get__": SelfShape.DESCRIPTOR_GET,
    "fget": SelfShape.PROPERTY_FGET,
    "fset": SelfShape.PROPERTY_FGET,
    "fdel": SelfShape.PROPERTY_FGET,
}

#: Statements and expressions that may run their body more than once.
_LOOPS = (
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)

#: Calls that set an attribute named by their second argument on their first.
_SETTERS = frozenset({"setattr", "__setattr__", "object"})


#: The most modules a computed module name may be one of (``_string_choices``).
MAX_MODULE_CHOICES = 4
#: The most expressions a computed module name is followed through (``_string_choices``).
MAX_STRING_STEPS = 8


class MeetingMaker:
    """Builds the meetings of one module's stand-ins."""

    def __init__(
        self, scope: ModuleScope, reader: CaseReader, recorder: EventRecorder, sites: StandInSites
    ) -> None:
        self.scope = scope
        self.reader = reader
        self.recorder = recorder
        self.sites = sites
        # Per function of the module, asked once though each of its calls asks again: the
        # patches it makes as written (``_scope_patches``) and whether one names no target.
        self._patches_of: dict[ast.AST, tuple[list[tuple[str, bool]], list[str]]] = {}
        self._unnamed_in: dict[ast.AST, bool] = {}
        # Per function of the module: each name's stores in it (``_stores_in``).
        self._stores: dict[ast.AST, dict[str, list[ast.Name]]] = {}
        # The tests of the module that request each of its fixtures (``_fixture_users``).
        self._users: dict[str, tuple[str, ...]] | None = None

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
        patched = self._patches(call)
        return attrs.evolve(
            self._context(call, cases),
            how=how,
            callee=made,
            patched=patched,
            unheard=self._unheard(call) if patched else (),
            self_shape=shape,
            position=position,
            keyword=keyword,
            shape=self.recorder.shape_of(call, NO_BINDINGS),
            unnamed_patch=self._unnamed_patch(call),
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
        elif isinstance(func, ast.Attribute):
            target = self._through_alias(func, imports)
        stub_class, method = None, None
        if isinstance(func, ast.Attribute):
            site = self.sites.site_of(func.value)
            if site is not None and site[0] is StandInKind.OBJECT_NEW:
                stub_class, method = site[1], func.attr
        made = Callee(ast.unparse(func), dotted_name(target, imports), stub_class, method)
        if made.dotted is None and method is None and isinstance(func, ast.Attribute):
            module = self.loaded_module_member(func)
            if module is not None:
                made = attrs.evolve(made, dotted=module)
            else:
                made = self._chosen_member(made, func)
        if made.dotted is None and method is None and isinstance(func, ast.Attribute):
            return self._on_instance(made, func, call, imports)
        if made.dotted is None and isinstance(func, ast.Call):
            # ``Backend.get_builder_cls()(ns)``: what the call returns is called
            built = self._built(func, call, 0)
            if built is not None:
                return attrs.evolve(
                    made, dotted=f"{built[0]}.__call__", instance=True, instance_fields=built[1]
                )
        if made.dotted is None and isinstance(func, ast.Name) and target is func:
            subclass = _test_subclass(self.scope.module.tree, func.id, imports)
            if subclass is not None:
                return attrs.evolve(made, dotted=subclass[0], overrides=subclass[1])
            # ``x = Cls(args); x(ns)``: the object called runs its class's ``__call__``
            built = self._built(func, call, 0)
            if built is not None:
                return attrs.evolve(
                    made, dotted=f"{built[0]}.__call__", instance=True, instance_fields=built[1]
                )
        return made

    def _through_alias(self, func: ast.Attribute, imports: dict) -> ast.expr:
        """``builder_cls.m`` where the function binds ``builder_cls`` once, to a class or
        module its imports name (``builder_cls = fi.FlashInferMetadataBuilder``; a module's one
        top-level ``name = value`` too): ``fi.FlashInferMetadataBuilder.m``, the code the call
        runs.  A name bound more than once (or to anything the imports do not name) leaves the
        callee unresolved, as before: which binding reaches the call is then not settled."""
        links: list[str] = []
        head: ast.expr = func
        while isinstance(head, ast.Attribute):
            links.append(head.attr)
            head = head.value
        if not isinstance(head, ast.Name) or head.id in imports:
            return func
        scope = self.scope.enclosing_scope(head)
        if isinstance(scope, ast.Module):
            bound = _module_alias(self.scope.module.tree, head.id)
        else:
            stores = [
                n
                for n in self.scope.nodes(scope)
                if isinstance(n, ast.Name) and n.id == head.id and not isinstance(n.ctx, ast.Load)
            ]
            bound = self.reader.resolve_local(head, NO_BINDINGS) if len(stores) == 1 else None
            if bound is None and not stores and not _is_param_of(scope, head.id):
                bound = _module_alias(self.scope.module.tree, head.id)
        if not isinstance(bound, (ast.Attribute, ast.Name)) or dotted_name(bound, imports) is None:
            return func
        for attr in reversed(links):
            bound = ast.Attribute(value=bound, attr=attr, ctx=ast.Load())
        return bound

    def loaded_module_member(self, func: ast.Attribute) -> str | None:
        """``mod.Cls`` (``mod.f``, ``mod.sub.Cls``) where ``mod`` is a local the function
        binds once to a module its text names, as a dotted name: a test that reloads a
        module to re-read the environment (``mod = importlib.reload(core_client)``, or
        ``mod = _reload()`` with a helper of the module ``return importlib.reload(
        importlib.import_module("vllm.x.core_client"))``) calls the module's code under
        that local (``_loaded_module``)."""
        local = self._local_head(func)
        if local is None:
            return None
        head, links = local
        module = self._loaded_module(head, 0)
        return ".".join([module, *links]) if module is not None else None

    def _local_head(self, func: ast.Attribute) -> tuple[ast.Name, list[str]] | None:
        """``(mod, ["sub", "Cls"])`` of ``mod.sub.Cls`` where ``mod`` is a name the imports
        do not bind (a local that may hold a module); None otherwise."""
        links: list[str] = []
        head: ast.expr = func
        while isinstance(head, ast.Attribute):
            links.append(head.attr)
            head = head.value
        if not isinstance(head, ast.Name) or head.id in self.sites.imports(head):
            return None
        return head, links[::-1]

    def _loaded_module(self, expr: ast.expr, depth: int) -> str | None:
        """The module ``expr`` evaluates to, where the text settles it: a name the imports
        bind to a module, ``importlib.import_module("vllm.x.y")`` (a literal absolute
        name), ``pytest.importorskip("vllm.x.y")``, ``importlib.reload(m)`` (which returns
        the module ``m`` it re-executes), a local bound once to one of those, and a call of
        a function of the module (no arguments) whose every ``return`` gives one and the
        same module.  None for anything else (a name bound twice, a parameter, a computed
        module name): which module reaches the call is then not settled."""
        if depth > MAX_FUNCTION_HOPS:
            return None
        imports = self.sites.imports(expr)
        if isinstance(expr, ast.Name):
            if expr.id in imports:
                return dotted_name(expr, imports)
            return self._module_local(self.scope.enclosing_scope(expr), expr.id, depth)
        if not isinstance(expr, ast.Call) or expr.keywords:
            return None
        called = dotted_name(expr.func, imports)
        if called in ("importlib.import_module", "pytest.importorskip") and len(expr.args) == 1:
            name = str_literal(expr.args[0])
            return name if name and not name.startswith(".") else None
        if called == "importlib.reload" and len(expr.args) == 1:
            return self._loaded_module(expr.args[0], depth + 1)
        helper = self.scope.local_def(expr.func) if isinstance(expr.func, ast.Name) else None
        if helper is None or expr.args or called is not None:
            return None
        found = {
            self._loaded_module(ret.value, depth + 1) if ret.value is not None else None
            for ret in self._returns_of(helper)
        }
        return found.pop() if len(found) == 1 else None

    def _chosen_member(self, made: Callee, func: ast.Attribute) -> Callee:
        """``mod.Cls`` where ``mod`` is a local bound once to a module the text narrows to a
        few candidates (``_chosen_modules``): the first candidate's ``Cls``, the others'
        as ``alternatives`` (each is judged: the test runs one of them, on some platform);
        ``unsettled`` where there are several, since a walk then follows one module of
        those that may run."""
        local = self._local_head(func)
        if local is None:
            return made
        head, links = local
        modules = self._chosen_modules(head, 0)
        if not modules:
            return made
        first, *others = sorted(modules)
        dotted = ".".join([first, *links])
        alternatives = tuple(".".join([other, *links]) for other in others)
        return attrs.evolve(
            made, dotted=dotted, unsettled=len(modules) > 1, alternatives=alternatives
        )

    def _chosen_modules(self, expr: ast.expr, depth: int) -> frozenset[str] | None:
        """The modules ``expr`` may evaluate to, where the text narrows them to a few: what
        ``_loaded_module`` settles; ``import_module(name)`` with ``name`` an f-string or
        conditional of literals and locals bound once to such (``_string_choices``: the test
        picks a module by platform, ``f"vllm.x.{'amd' if rocm else 'nvidia'}.mtp"``); and a
        local unpacked once from a fixture the function takes (``mtp, model = m3_modules``)
        whose every ``return`` is a tuple, the item at its position from each.  None where
        anything is left open."""
        if depth > MAX_FUNCTION_HOPS:
            return None
        settled = self._loaded_module(expr, depth)
        if settled is not None:
            return frozenset({settled})
        if isinstance(expr, ast.Call):
            imports = self.sites.imports(expr)
            called = dotted_name(expr.func, imports)
            if (
                called not in ("importlib.import_module", "pytest.importorskip")
                or expr.keywords
                or len(expr.args) != 1
            ):
                return None
            names = self._string_choices(expr.args[0], 0)
            if not names or any(name.startswith(".") for name in names):
                return None
            return names
        if not isinstance(expr, ast.Name):
            return None
        return self._local_modules(self.scope.enclosing_scope(expr), expr.id, depth)

    def _local_modules(self, scope: ast.AST, name: str, depth: int) -> frozenset[str] | None:
        """``_chosen_modules`` of the local ``name`` of the function ``scope``, bound once."""
        bound = self._bound_once(scope, name)
        if bound is None:
            return None
        target, value = bound
        if target is not None:
            return self._fixture_item(scope, value, target, depth + 1)
        return self._chosen_modules(value, depth + 1)

    def _stores_in(self, scope: ast.AST) -> dict[str, list[ast.Name]]:
        """Each name ``scope`` stores or deletes -> those ``Name`` nodes, in the order of
        ``ModuleScope.nodes``: read once per function, where ``_bound_once`` asks about the
        same few functions' names thousands of times."""
        found = self._stores.get(scope)
        if found is None:
            found = self._stores[scope] = {}
            for node in self.scope.nodes(scope):
                if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                    found.setdefault(node.id, []).append(node)
        return found

    def _bound_once(self, scope: ast.AST, name: str) -> tuple[int | None, ast.expr] | None:
        """The value a local ``name`` of the function ``scope`` gets from its one binding, a
        plain ``name = value`` (position None) or ``a, name = value`` (its position)."""
        if not isinstance(scope, FUNCTION_DEFS) or _is_param_of(scope, name):
            return None
        stores = self._stores_in(scope).get(name, ())
        if len(stores) != 1:
            return None
        parent = self.scope.parents.get(stores[0])
        if isinstance(parent, ast.Tuple) and isinstance(parent.ctx, ast.Store):
            assign = self.scope.parents.get(parent)
            if isinstance(assign, ast.Assign) and assign.targets == [parent]:
                if any(isinstance(elt, ast.Starred) for elt in parent.elts):
                    return None
                return parent.elts.index(stores[0]), assign.value
            return None
        if isinstance(parent, ast.Assign) and parent.targets == [stores[0]]:
            return None, parent.value
        return None

    def _fixture_item(
        self, scope: ast.AST, value: ast.expr, position: int, depth: int
    ) -> frozenset[str] | None:
        """The modules at ``position`` of what the fixture ``value`` names returns, where
        ``value`` is a parameter of ``scope`` (never rebound, not parametrized) and the module
        defines that fixture once at its top level, every ``return`` of it a tuple of that
        length (``_chosen_modules`` of each item, in the fixture)."""
        if not (isinstance(value, ast.Name) and _is_param_of(scope, value.id)):
            return None
        if any(
            isinstance(n, ast.Name) and n.id == value.id and not isinstance(n.ctx, ast.Load)
            for n in self.scope.nodes(scope)
        ):
            return None
        for deco in getattr(scope, "decorator_list", []):
            if isinstance(deco, ast.Call) and getattr(deco.func, "attr", "") == "parametrize":
                names = _argnames(deco)
                if names is None or value.id in names:
                    return None  # a case hands the parameter itself
        fixture = self.scope.module.functions.get(value.id)
        defs = [
            stmt
            for stmt in self.scope.module.tree.body
            if isinstance(stmt, FUNCTION_DEFS) and stmt.name == value.id
        ]
        if fixture is None or defs != [fixture] or not _is_fixture(fixture):
            return None
        if _fixture_name(fixture) != value.id:
            return None
        found: set[str] = set()
        returns = self._returns_of(fixture)
        if not returns or any(
            isinstance(node, (ast.Yield, ast.YieldFrom)) for node in self.scope.nodes(fixture)
        ):
            return None
        for ret in returns:
            if not (isinstance(ret.value, ast.Tuple) and len(ret.value.elts) > position):
                return None
            if any(isinstance(elt, ast.Starred) for elt in ret.value.elts):
                return None
            modules = self._chosen_modules(ret.value.elts[position], depth)
            if not modules:
                return None
            found |= modules
        return frozenset(found)

    def _string_choices(self, expr: ast.expr, depth: int) -> frozenset[str] | None:
        """The strings ``expr`` may be, where the text narrows them to a few: a literal, a
        conditional of such (``"amd" if rocm else "nvidia"``: either arm may run), an
        f-string of such (each combination), or a local bound once to one (``depth``: the
        expressions gone through, at most ``MAX_STRING_STEPS``)."""
        if depth > MAX_STRING_STEPS:
            return None
        if isinstance(expr, ast.Constant):
            return frozenset({expr.value}) if isinstance(expr.value, str) else None
        if isinstance(expr, ast.IfExp):
            body = self._string_choices(expr.body, depth + 1)
            orelse = self._string_choices(expr.orelse, depth + 1)
            return body | orelse if body and orelse else None
        if isinstance(expr, ast.JoinedStr):
            texts: frozenset[str] = frozenset({""})
            for part in expr.values:
                if isinstance(part, ast.FormattedValue):
                    if part.conversion != -1 or part.format_spec is not None:
                        return None
                    choices = self._string_choices(part.value, depth + 1)
                else:
                    choices = self._string_choices(part, depth + 1)
                if not choices:
                    return None
                texts = frozenset(t + c for t in texts for c in choices)
                if len(texts) > MAX_MODULE_CHOICES:
                    return None
            return texts
        if isinstance(expr, ast.Name):
            bound = self._bound_once(self.scope.enclosing_scope(expr), expr.id)
            if bound is None or bound[0] is not None:
                return None
            return self._string_choices(bound[1], depth + 1)
        return None

    def _module_local(self, scope: ast.AST, name: str, depth: int = 0) -> str | None:
        """The module a local ``name`` of the function ``scope`` holds, where the function
        binds it once, by a plain ``name = value`` the text settles (``_loaded_module``)."""
        bound = self._bound_once(scope, name)
        if bound is None or bound[0] is not None:
            return None
        return self._loaded_module(bound[1], depth + 1)

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
            built_values=self.built_values(func.value),
            fresh=self.fresh(func.value, call),
        )

    def fresh(self, expr: ast.expr, call: ast.Call) -> bool:
        """Whether ``call`` (``x.m(...)``) is the first thing its function does with the
        object the local ``x`` holds, past building it: ``x`` is bound once there, to a call
        of its class (not ``Cls.__new__(Cls)``, which runs no constructor, nor a helper,
        which may use the object before returning it), before ``call``;
        and every use of ``x`` written before ``call`` sets a field of it (``x.f = value``,
        ``monkeypatch.setattr(x, "f", value)``).  A read of it, a method call on it, handing
        it to code (a lambda or def that names it included) may change what its fields hold.
        In a loop, the first run of ``call`` is then the first use."""
        if not isinstance(expr, ast.Name):
            return False
        scope = self.scope.enclosing_scope(call)
        if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
        named = [n for n in self.scope.nodes(scope) if isinstance(n, ast.Name) and n.id == expr.id]
        binds = [n for n in named if not isinstance(n.ctx, ast.Load)]
        if len(binds) != 1:
            return False
        stmt = self.scope.parents.get(binds[0])
        built = stmt.value if isinstance(stmt, ast.Assign) else None
        if not (
            isinstance(stmt, ast.Assign)
            and stmt.targets == [binds[0]]
            and isinstance(built, ast.Call)
            and not (isinstance(built.func, ast.Attribute) and built.func.attr == "__new__")
            and self._dotted_through_local(built.func, self.sites.imports(built)) is not None
            and _position(stmt) < _position(call)
        ):
            return False  # not a call of the class itself (a helper may use the object)
        for node in named:
            if node is expr or node is binds[0] or _position(node) >= _position(call):
                continue
            parent = self.scope.parents.get(node)
            if isinstance(parent, ast.Attribute) and isinstance(parent.ctx, ast.Store):
                continue  # ``x.f = value``
            if (
                isinstance(parent, ast.Call)
                and parent.args
                and parent.args[0] is node
                and _monkeypatched(parent, scope)
            ):
                continue
            return False
        return True

    def bound_out(
        self, call: ast.Call, holder: ast.Name, field: str | None, cases: tuple[str, ...]
    ) -> Meeting | None:
        """``y.m(...)`` where ``y`` is the object ``holder`` names' attribute ``field`` (None:
        a name ``getattr`` computes), as a call of ``m`` on that object (``Callee.bound_out``:
        the audit keeps it where the class hands ``m`` out bound).  None where ``holder`` is
        no object the test built by calling its class (``_built``), or the test set that
        attribute on it (any, for a computed name): ``y`` is then the test's."""
        func = call.func
        if not isinstance(func, ast.Attribute):
            return None
        built = self._built(holder, call, 0)
        if built is None:
            return None
        cls, fields = built
        if (field is None and fields) or field in fields:
            return None
        made = Callee(
            ast.unparse(func),
            f"{cls}.{func.attr}",
            instance=True,
            instance_fields=fields,
            instance_values=self._values_on(holder, call),
            bound_out=True,
            built_values=self.built_values(holder),
        )
        patched = self._patches(call)
        return attrs.evolve(
            self._context(call, cases),
            how=MeetingHow.SELF,
            callee=made,
            patched=patched,
            unheard=self._unheard(call) if patched else (),
            shape=self.recorder.shape_of(call, NO_BINDINGS),
            unnamed_patch=self._unnamed_patch(call),
        )

    def built_values(self, expr: ast.expr, depth: int = 0) -> tuple[tuple[int | str, object], ...]:
        """What the test states of the arguments of the constructor call that built the
        object ``expr`` is (``Callee.built_values``): ``Cls(...)`` itself, a local last bound
        to one, or the call of a helper of the module whose one ``return`` is that call, the
        helper's parameters bound from the helper's call (``_left_at_default``).  Each
        argument by its position or keyword, where ``_argument_value`` knows it."""
        if isinstance(expr, ast.Name):
            bound = self.reader.resolve_local(expr, NO_BINDINGS)
            if bound is None or depth >= MAX_FUNCTION_HOPS:
                return ()
            return self.built_values(bound, depth + 1)
        if not isinstance(expr, ast.Call) or self.sites.kind_of(expr) is not None:
            return ()
        if self._constructor(expr):
            return self._arguments(expr, {})
        helper = self.scope.local_def(expr.func) if isinstance(expr.func, ast.Name) else None
        if helper is None:
            return ()
        returns = self._returns_of(helper)
        if len(returns) != 1 or not isinstance(returns[0].value, ast.Call):
            return ()
        built = returns[0].value
        if not self._constructor(built):
            return ()
        return self._arguments(built, self._left_at_default(helper, expr))

    def _returns_of(self, helper: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.Return]:
        """The ``return`` statements of a helper of the module, not of functions nested in it
        (indexed on first use: a top-level helper's nodes are walked lazily)."""
        if self.scope.module.functions.get(helper.name) is helper:
            self.scope.ensure_indexed(helper)
        return [
            node
            for node in self.scope.nodes(helper)
            if isinstance(node, ast.Return) and self.scope.enclosing_scope(node) is helper
        ]

    def _constructor(self, call: ast.Call) -> bool:
        """Whether ``call`` calls a name the imports settle (a class, which the audit checks)
        rather than ``Cls.__new__`` or a helper."""
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr == "__new__":
            return False
        return self._dotted_through_local(func, self.sites.imports(call)) is not None

    def _left_at_default(
        self, helper: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call
    ) -> dict[str, tuple[object] | tuple[()]]:
        """Each parameter of ``helper`` with what it holds in the helper's body on ``call``:
        its literal default where the call leaves it out and the body never rebinds it, else
        unknown (``()``: the caller's value, which this does not follow)."""
        args = helper.args
        every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
        env: dict[str, tuple[object] | tuple[()]] = {p.arg: () for p in every}
        passed = passed_parameters(helper, call)
        if passed is None:
            return env
        for name, default in literal_defaults(helper, self.scope.nodes(helper)).items():
            if name not in passed:
                env[name] = default
        return env

    def _arguments(
        self, call: ast.Call, env: dict[str, tuple[object] | tuple[()]]
    ) -> tuple[tuple[int | str, object], ...]:
        out: list[tuple[int | str, object]] = []
        for i, arg in enumerate(call.args):
            if isinstance(arg, ast.Starred):
                break  # the positions past it are not known
            known = self._argument_value(arg, env)
            if known:
                out.append((i, known[0]))
        for kw in call.keywords:
            if kw.arg is not None:
                known = self._argument_value(kw.value, env)
                if known:
                    out.append((kw.arg, known[0]))
        return tuple(out)

    def _argument_value(
        self, node: ast.expr, env: dict[str, tuple[object] | tuple[()]]
    ) -> tuple[object] | tuple[()]:
        """A constructor argument as the test states it: a plain literal, a parameter of the
        helper around the call (``env``), an object built by calling a name the imports
        settle (``Obj`` with ``cls``, and no fields or truth: what its class keeps of its
        arguments, and whether it is true, is its class's, which the audit reads), or ``a or
        b``/``a and b`` of those, as Python picks the operand."""
        if isinstance(node, ast.Constant):
            plain = isinstance(node.value, (bool, int, float, str, type(None)))
            return (node.value,) if plain else ()
        if isinstance(node, ast.Name):
            return env.get(node.id, ())
        if isinstance(node, ast.BoolOp):
            deciding = not isinstance(node.op, ast.And)
            for operand in node.values:
                known = self._argument_value(operand, env)
                if not known:
                    return ()
                if operand is node.values[-1]:
                    return known
                verdict = truthy(known[0])
                if verdict is None:
                    return ()
                if verdict is deciding:
                    return known
            return ()
        if isinstance(node, ast.Call) and self._constructor(node):
            dotted = self._dotted_through_local(node.func, self.sites.imports(node))
            name = (dotted or "").rpartition(".")[2]
            if name[:1].isupper():
                return (Obj(kind=name, cls=dotted),)
        return ()

    def _values_on(self, name: ast.Name, call: ast.Call) -> tuple[tuple[str, object], ...]:
        """The values the function making ``call`` gives fields of the local ``name`` before
        it, where it states them (``x.f = None``, ``x.src = Mock()``, ``x.buf =
        torch.full(shape, -1)``: ``_stated``; ``x.check = AsyncMock(return_value=None)``:
        ``values.returning``): a field it sets once, by a plain assignment
        on the function's straight line (no branch or loop around it), or by the test's
        ``monkeypatch.setattr(x, "f", value)`` there (``_monkeypatched``), and by no other
        means (``setattr``, ``patch.object``: those leave it unknown)."""
        scope = self.scope.enclosing_scope(call)
        counts: dict[str, int] = {}
        values: dict[str, tuple[object] | tuple[()]] = {}
        for node in self.scope.nodes(scope):
            if getattr(node, "lineno", call.lineno) >= call.lineno:
                continue
            if isinstance(node, ast.Call) and node.args and is_name_in(node.args[0], {name.id}):
                field = str_literal(node.args[1]) if len(node.args) > 1 else None
                if field is not None and _monkeypatched(node, scope):
                    # ``monkeypatch.setattr(x, "f", value)``: ``x.f = value`` until the
                    # test ends
                    counts[field] = counts.get(field, 0) + 1
                    plain = self._straight(self.scope.parents.get(node), scope)
                    value = node.args[2] if plain else None
                    resolve = self.reader.resolver(NO_BINDINGS)
                    values[field] = returning(value, resolve) or _stated(
                        self.reader.value_of(value, NO_BINDINGS), value
                    )
                elif field is not None:
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
        cls = self._dotted_through_local(func, self.sites.imports(expr))
        if cls is not None:
            return cls, ()
        helper = self.scope.local_def(func) if isinstance(func, ast.Name) else None
        if helper is None or depth >= MAX_FUNCTION_HOPS:
            return None
        returns = self._returns_of(helper)
        found = [
            self._built(ret.value, ret, depth + 1) if ret.value is not None else None
            for ret in returns
        ]
        if not found or any(f is None for f in found) or len({f[0] for f in found}) != 1:
            return None
        return found[0][0], tuple(dict.fromkeys(n for f in found for n in f[1]))

    def _dotted_through_local(self, func: ast.expr, imports: dict) -> str | None:
        """``dotted_name`` of ``func``, or where its head is a local last bound to a name the
        imports settle (``backend_cls = FlashMLASparseBackend``, then
        ``backend_cls.get_builder_cls()``), through that binding."""
        found = dotted_name(func, imports)
        if found is not None:
            return found
        parts: list[str] = []
        head = func
        while isinstance(head, ast.Attribute):
            parts.insert(0, head.attr)
            head = head.value
        if not parts or not isinstance(head, ast.Name):
            return None
        bound = self.reader.resolve_local(head, NO_BINDINGS)
        base = dotted_name(bound, imports) if isinstance(bound, (ast.Name, ast.Attribute)) else None
        return ".".join([base, *parts]) if base is not None else None

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
                    for sub in walk(target):
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
        scopes += [m for s in scopes if s is not None for m in self._own_methods_called(s)]
        imports = self.sites.imports(call)
        found: dict[str, bool] = {}
        for scope in scopes:
            if isinstance(scope, FUNCTION_DEFS):
                written, by_value = self._scope_patches(scope)
                for target, raises in written:
                    for key in self._written_targets(scope, target, imports):
                        found[key] = found.get(key, False) or raises
                for target in by_value:
                    head, _, rest = target.partition(".")
                    if head in imports and rest:
                        target = f"{imports[head].dotted}.{rest}"
                    found.setdefault(target, False)
        return tuple(sorted(found.items()))

    def _written_targets(self, scope: ast.AST, target: str, imports: dict) -> list[str]:
        """What a patch of ``scope`` written ``target`` replaces: through the test's imports
        (a function's own too: ``utils.helper`` imported inside the test is
        ``vllm.x.utils.helper``); through a local bound to a module the text names (``mod =
        importlib.reload(m)``), or to one of a few (``_local_modules``): patched under each,
        since whichever of them the test loaded is the one it patched."""
        head, _, rest = target.partition(".")
        if head in imports and rest:
            return [f"{imports[head].dotted}.{rest}"]
        if not rest:
            return [target]
        module = self._module_local(scope, head)
        if module is not None:
            return [f"{module}.{rest}"]
        chosen = sorted(self._local_modules(scope, head, 0) or ())
        return [*(f"{c}.{rest}" for c in chosen), target]

    def _unheard(self, call: ast.Call) -> tuple[tuple[str, Unheard], ...]:
        """``(target, unheard)`` of each function the function making ``call`` and its test
        replace (``_patches``'s scopes) with one that never reads some arguments a call hands
        it (``EventRecorder.unheard``), where every patch of that target they make is one
        such, the same (which of several holds at the call is not known)."""
        scopes = [self.scope.enclosing_scope(call), self._test_function(call)]
        scopes += [m for s in scopes if s is not None for m in self._own_methods_called(s)]
        imports = self.sites.imports(call)
        found: dict[str, set[Unheard | None]] = {}
        for scope in {id(s): s for s in scopes}.values():
            if not isinstance(scope, FUNCTION_DEFS):
                continue
            for target, unheard in self.recorder.replacements(scope):
                for key in self._written_targets(scope, target, imports):
                    found.setdefault(key, set()).add(unheard)
            looped = self._looped_replacements(scope)
            for target, unheard in looped:
                head, _, rest = target.partition(".")
                if head in imports and rest:
                    target = f"{imports[head].dotted}.{rest}"
                found.setdefault(target, set()).add(unheard)
            for target in self._scope_patches(scope)[1]:
                if any(target == written for written, _ in looped):
                    continue  # its replacement is known
                head, _, rest = target.partition(".")
                if head in imports and rest:
                    target = f"{imports[head].dotted}.{rest}"
                found.setdefault(target, set()).add(None)
        return tuple(
            sorted(
                (key, next(iter(heard)))
                for key, heard in found.items()
                if len(heard) == 1 and None not in heard
            )
        )

    def _looped_replacements(self, scope: ast.AST) -> list[tuple[str, Unheard | None]]:
        """``(target as written, unheard)`` of each patch in ``scope`` made in a loop over
        literal names (``for name in ("a", "b"): monkeypatch.setattr(mod, name, lambda *a,
        **k: None)``, ``_looped_names``): one replacement, the same for each name, whose
        arguments the recorder reads as a written patch's (``EventRecorder.unheard``)."""
        out: list[tuple[str, Unheard | None]] = []
        for node in self.scope.nodes(scope):
            if not (isinstance(node, ast.Call) and _names_no_target(node)):
                continue
            func, args = node.func, node.args
            if not (isinstance(func, ast.Attribute) and func.attr == "setattr" and len(args) > 2):
                continue
            if isinstance(args[0], ast.Constant):
                continue
            looped = self._looped_names(node, args[1])
            if not looped:
                continue
            unheard = self.recorder.unheard(node, args[2])
            out.extend((f"{ast.unparse(args[0])}.{name}", unheard) for name in looped)
        return out

    def _scope_patches(self, scope: ast.AST) -> tuple[list[tuple[str, bool]], list[str]]:
        """The patches function ``scope`` makes, as written (with whether each raises), and
        those its parametrize cases name (``_named_by_value``): once per function."""
        if scope not in self._patches_of:
            written = list(self.recorder.class_patches(scope, set(), NO_BINDINGS))
            self._patches_of[scope] = (written, self._named_by_value(scope))
        return self._patches_of[scope]

    def _unnamed_patch(self, call: ast.Call) -> bool:
        """Whether the function making ``call`` or its test (decorators too), or a method of
        the test's class that it calls on ``self`` (``_own_methods_called``), patches a target
        whose name is not written out (``patch.object(mod, name)``, ``monkeypatch.setattr(mod,
        name, v)``, ``patch(target)``) and that the test's parametrize cases do not all settle
        (``_named_by_value``): what it replaces is not known, so anything the callee runs may
        be it (``Meeting.unnamed_patch``)."""
        scopes = [self.scope.enclosing_scope(call), self._test_function(call)]
        scopes += [m for s in scopes if s is not None for m in self._own_methods_called(s)]
        return any(
            self._patches_unnamed(scope)
            for scope in {id(s): s for s in scopes}.values()
            if isinstance(scope, FUNCTION_DEFS)
        )

    def _patches_unnamed(self, scope: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """Whether function ``scope`` (its decorators too) makes a patch of a target whose
        name is not written out and that its cases do not all settle: once per function."""
        if scope not in self._unnamed_in:
            decorators = [sub for deco in scope.decorator_list for sub in walk(deco)]
            self._unnamed_in[scope] = any(
                isinstance(node, ast.Call)
                and _names_no_target(node)
                and self._case_targets(node, scope) is None
                for node in decorators + list(self.scope.nodes(scope))
            )
        return self._unnamed_in[scope]

    def _own_methods_called(self, scope: ast.AST) -> list[ast.AST]:
        """The methods of a test class that ``scope`` (one of its methods) calls on
        ``self`` (``self._patch_transports(monkeypatch)``): the patches they make hold
        around the calls ``scope`` makes after them, as a module helper's do."""
        if not isinstance(scope, FUNCTION_DEFS) or not scope.args.args:
            return []
        owner = self.scope.parents.get(scope)
        if not isinstance(owner, ast.ClassDef):
            return []
        own = {node.name: node for node in owner.body if isinstance(node, FUNCTION_DEFS)}
        me = scope.args.args[0].arg
        out: list[ast.AST] = []
        for node in self.scope.nodes(scope):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == me
                and node.func.attr in own
                and own[node.func.attr] is not scope
            ):
                out.append(own[node.func.attr])
        return list(dict.fromkeys(out))

    def _named_by_value(self, scope: ast.AST) -> list[str]:
        """The targets of the patches in ``scope`` whose name is not written out but that the
        test's parametrize cases all settle (``patch.object(mod, name)`` with ``name`` a
        parameter: ``mod.attr`` for each name the cases bind it to)."""
        out: list[str] = []
        for node in self.scope.nodes(scope):
            if isinstance(node, ast.Call) and _names_no_target(node):
                out.extend(self._case_targets(node, scope) or ())
        return out

    def _case_targets(self, node: ast.Call, scope: ast.AST) -> list[str] | None:
        """What a patch whose target's name is not a literal (``_names_no_target``) replaces
        on the runs of the test around ``scope``: the target each parametrize case names
        (``owner.attr`` of ``patch.object(owner, name)``, ``monkeypatch.setattr(owner, name,
        v)``), or each name of the loop around it (``_looped_names``); None where the cases do
        not all say."""
        test = self._test_function(scope) or (scope if isinstance(scope, FUNCTION_DEFS) else None)
        cases = self.reader.param_cases(test) if test is not None else []
        args, func = node.args, node.func
        # ``patch(target)``, ``monkeypatch.setattr(target, v)``: a dotted text, not an owner
        # and a name.
        owned = isinstance(func, ast.Attribute) and (
            func.attr == "object" or (func.attr == "setattr" and len(args) > 2)
        )
        if not owned or isinstance(args[0], ast.Constant):
            return None
        owner = ast.unparse(args[0])
        looped = self._looped_names(node, args[1])
        if looped is not None:
            return [f"{owner}.{name}" for name in looped]
        if not cases:
            return None
        names = {self.reader.text_of(args[1], NO_BINDINGS.with_case(test, c)) for c in cases}
        if None in names:
            return None
        return [f"{owner}.{name}" for name in sorted(names)]  # type: ignore[type-var]

    def _looped_names(self, node: ast.Call, name: ast.expr) -> list[str] | None:
        """The names a patch's ``name`` takes where it is the target of a ``for`` loop around
        the patch, in the same function, over a tuple, list or set display of string
        literals the loop's body never rebinds (``for name in ("a", "b"):
        monkeypatch.setattr(mod, name, stub)``): the loop patches each of them."""
        if not isinstance(name, ast.Name):
            return None
        current = self.scope.parents.get(node)
        while current is not None and not isinstance(current, FUNCTION_DEFS):
            if isinstance(current, (ast.For, ast.AsyncFor)) and (
                isinstance(current.target, ast.Name) and current.target.id == name.id
            ):
                if not isinstance(current.iter, (ast.Tuple, ast.List, ast.Set)):
                    return None
                names = [str_literal(e) for e in current.iter.elts]
                rebound = any(
                    isinstance(n, ast.Name) and n.id == name.id and not isinstance(n.ctx, ast.Load)
                    for stmt in current.body
                    for n in walk(stmt)
                )
                if not names or None in names or rebound:
                    return None
                return names  # type: ignore[return-value]
            current = self.scope.parents.get(current)
        return None

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
            requested_by=self._requested_by(node),
            cases=cases,
            expect_raise=self.recorder.expects_raise(node),
            arms=self._arms(node),
            raise_owned=self.recorder.raise_owned(node),
            raise_tested=self.recorder.raise_tested(node),
        )

    def _arms(self, node: ast.AST) -> tuple[tuple[int, int, int], ...]:
        """``Meeting.arms`` of a place written in a test function itself (not in a helper, a
        nested function or a lambda, which may run more than once): each ``if`` around it
        there, with the arm it lies in, but none inside a loop of the test (where both arms
        may run, one per iteration)."""
        test = self._test_function(node)
        if test is None or self.scope.enclosing_scope(node) is not test:
            return ()
        out: list[tuple[int, int, int]] = []
        child, current = node, self.scope.parents.get(node)
        while current is not None:
            if current is test:
                out.extend(_after_exits(current, child))
                break
            if isinstance(current, ast.Lambda):
                return ()
            if isinstance(current, _LOOPS):
                out.clear()  # the ``if``s met so far may take either arm on each iteration
            elif isinstance(current, ast.If) and child is not current.test:
                arm = 0 if any(child is stmt for stmt in current.body) else 1
                out.append((current.lineno, current.col_offset, arm))
            out.extend(_after_exits(current, child))
            child, current = current, self.scope.parents.get(current)
        return tuple(out)

    def _requested_by(self, node: ast.AST) -> tuple[str, ...] | None:
        """Where ``node`` lies in a fixture the module defines at its top level (not
        ``autouse``), the tests of the module that request it, directly or through its
        other fixtures (``_fixture_users``): it runs in those tests only.  None elsewhere,
        or where the module may request fixtures in ways its parameters do not show."""
        outer: ast.AST | None = None
        current = self.scope.parents.get(node)
        while current is not None:
            if isinstance(current, FUNCTION_DEFS):
                outer = current
            current = self.scope.parents.get(current)
        if (
            not isinstance(outer, FUNCTION_DEFS)
            or self.scope.parents.get(outer) is not self.scope.module.tree
            or not _is_fixture(outer)
            or _autouse(outer)
        ):
            return None
        return self._fixture_users().get(_fixture_name(outer))

    def _fixture_users(self) -> dict[str, tuple[str, ...]]:
        """The tests (``test_x``, ``TestCls::test_x``, as ``CaseReader.test_of`` names them)
        of the module that request each fixture name, through their parameters and those of
        the fixtures they request, transitively: once per module.  Empty where the module
        requests fixtures some other way (``usefixtures``, ``getfixturevalue``) or an
        ``autouse`` fixture requests others (they run in every test)."""
        if self._users is not None:
            return self._users
        self._users = {}
        if self.scope.mentions("usefixtures") or self.scope.mentions("getfixturevalue"):
            return self._users
        requests: dict[str, set[str]] = {}  # requester (test or fixture name) -> names
        tests: list[str] = []
        for stmt in self.scope.module.tree.body:
            owner = stmt.name if isinstance(stmt, ast.ClassDef) else None
            defs = stmt.body if isinstance(stmt, ast.ClassDef) else [stmt]
            for func in defs:
                if not isinstance(func, FUNCTION_DEFS):
                    continue
                params = {a.arg for a in (*func.args.args, *func.args.kwonlyargs)}
                if _is_fixture(func):
                    if _autouse(func):
                        return self._users
                    requests.setdefault(f"fixture:{_fixture_name(func)}", set()).update(params)
                elif func.name.startswith("test"):
                    name = f"{owner}::{func.name}" if owner is not None else func.name
                    tests.append(name)
                    requests.setdefault(name, set()).update(params)
        users: dict[str, set[str]] = {}
        for test in tests:
            todo, seen = list(requests[test]), set()
            while todo:
                name = todo.pop()
                if name in seen:
                    continue
                seen.add(name)
                users.setdefault(name, set()).add(test)
                todo.extend(requests.get(f"fixture:{name}", ()))
        self._users = {name: tuple(sorted(found)) for name, found in users.items()}
        return self._users

    def _test_function(self, node: ast.AST) -> ast.AST | None:
        found = None
        current = self.scope.parents.get(node)
        while current is not None:
            if isinstance(current, FUNCTION_DEFS):
                found = current
            current = self.scope.parents.get(current)
        return found if found is not None and found.name.startswith("test") else None


def _autouse(fixture: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """``@pytest.fixture(autouse=...)`` with anything but a literal false: it may run in
    every test of its scope."""
    return any(
        isinstance(deco, ast.Call)
        and any(
            k.arg == "autouse" and not (isinstance(k.value, ast.Constant) and not k.value.value)
            for k in deco.keywords
        )
        for deco in fixture.decorator_list
    )


def _names_no_target(call: ast.Call) -> bool:
    """A patch whose target's name is not a literal: ``[mock.]patch(x)``,
    ``patch.object(obj, x)``, ``monkeypatch.setattr(obj, x, v)`` or ``monkeypatch.setattr(x,
    v)`` (the builtin ``setattr`` sets a field, not a patch)."""
    func = call.func
    if isinstance(func, ast.Name):
        fname = func.id if func.id == "patch" else ""
    elif isinstance(func, ast.Attribute):
        fname = func.attr
    else:
        return False
    args = call.args
    if fname == "patch":
        return bool(args) and str_literal(args[0]) is None
    if fname == "object" and callee(func.value) == "patch":  # type: ignore[union-attr]
        return len(args) > 1 and str_literal(args[1]) is None
    if fname == "setattr" and isinstance(func, ast.Attribute):
        if len(args) == 2:
            return str_literal(args[0]) is None
        return len(args) > 2 and str_literal(args[1]) is None
    return False


def _after_exits(parent: ast.AST, child: ast.AST) -> list[tuple[int, int, int]]:
    """``Meeting.arms`` that ``child``'s place among its statements gives it: it follows an
    ``if`` one of whose arms always leaves the function (ends in ``return`` or ``raise``,
    ``if fail: with pytest.raises(E): f(ns); return``), so it runs only where the other arm
    was taken."""
    out: list[tuple[int, int, int]] = []
    for name in ("body", "orelse", "finalbody"):
        stmts = getattr(parent, name, None)
        if not isinstance(stmts, list) or not any(child is s for s in stmts):
            continue
        for before in stmts[: next(i for i, s in enumerate(stmts) if s is child)]:
            if not isinstance(before, ast.If):
                continue
            body, orelse = _exits(before.body), _exits(before.orelse)
            if body != orelse:
                out.append((before.lineno, before.col_offset, 1 if body else 0))
    return out


def _exits(stmts: list[ast.stmt]) -> bool:
    """Whether a block always leaves the function: its last statement returns or raises."""
    return bool(stmts) and isinstance(stmts[-1], (ast.Return, ast.Raise))


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
    return {n.id for t in targets for n in walk(t) if isinstance(n, ast.Name)}


def _argnames(deco: ast.Call) -> set[str] | None:
    """The names a ``parametrize`` call gives values (``"a,b"``, ``["a", "b"]``); None where
    no literal states them (any name may be one)."""
    first = deco.args[0] if deco.args else None
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return {part.strip() for part in first.value.split(",")}
    if isinstance(first, (ast.List, ast.Tuple)) and all(
        isinstance(elt, ast.Constant) and isinstance(elt.value, str) for elt in first.elts
    ):
        return {elt.value for elt in first.elts}  # type: ignore[union-attr]
    return None


def _is_param_of(scope: ast.AST, name: str) -> bool:
    """Whether ``name`` is a parameter of the function ``scope``."""
    if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        return False
    args = scope.args
    every = (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)
    return any(a is not None and a.arg == name for a in every)


def _monkeypatched(call: ast.Call, scope: ast.AST) -> bool:
    """Whether ``call`` is ``monkeypatch.setattr(x, "f", value)`` as a statement of a test
    function that takes pytest's ``monkeypatch`` fixture: it sets ``x.f`` to ``value`` from
    there to the end of the test, as ``x.f = value`` does."""
    func = call.func
    args = (
        [*scope.args.posonlyargs, *scope.args.args, *scope.args.kwonlyargs]
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef))
        else []
    )
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "setattr"
        and isinstance(func.value, ast.Name)
        and func.value.id == "monkeypatch"
        and any(a.arg == "monkeypatch" for a in args)
        and len(call.args) == 3
        and not call.keywords
    )


def _position(node: ast.AST) -> tuple[int, int]:
    """Where ``node`` starts in its file, to order two nodes of one function."""
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)
