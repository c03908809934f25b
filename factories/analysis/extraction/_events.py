"""Recording what the test does to a stub: sets, calls, reads, patches.

Each event carries what the test states around it (literal values, ``pytest.raises``, a
detached task, the test and parametrize case it runs in), read under the ``Bindings`` the
stub is followed with.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

import attrs

from factories.analysis._walk import walk
from factories.analysis.binding import CallShape, Unheard
from factories.analysis.class_refs import NamedClass
from factories.analysis.extraction._cases import NO_BINDINGS, Bindings, CaseReader
from factories.analysis.extraction._model import EventKind, StubEvent
from factories.analysis.extraction._scope import ModuleScope
from factories.analysis.extraction._syntax import (
    FUNCTION_DEFS,
    is_attr_of,
    is_name_in,
    literal_defaults,
    str_literal,
)
from factories.analysis.values import (
    Obj,
    built_array,
    is_exception_expr,
    mock_runs_nothing,
    raises_when_called,
    returning,
)

# Keywords of a mock or patch that make it run something it is handed or given.
_RUNS_GIVEN = frozenset({"side_effect", "wraps", "new_callable"})
# How many levels of same-module helpers are searched for the patches a test applies.
_MAX_PATCH_HELPER_DEPTH = 4
_CALLED_NAME = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")


@attrs.define
class Track:
    """What the test does to one stub along one path, in order."""

    events: list[StubEvent] = attrs.field(factory=list)
    escapes: bool = False
    opaque: bool = False
    patched: list[str] = attrs.field(factory=list)  # "Cls.method" replaced by the test
    raising: list[str] = attrs.field(factory=list)  # those of ``patched`` that always raise
    # ``object.__new__(cls)``: the class is whichever class the classmethod is called on.
    dynamic_class: bool = False
    # That class, when a caller names it (``Sub.fresh()``); None: the defining class.
    caller_class: NamedClass | None = None

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
            self.caller_class,
        )

    def copy(self) -> Track:
        return self.then(Track())

    def then(self, cont: Track) -> Track:
        """This track followed by ``cont`` (the stub continuing in a caller or a fixture user)."""
        return Track(
            events=self.events + cont.events,
            escapes=self.escapes or cont.escapes,
            opaque=self.opaque or cont.opaque,
            patched=self.patched + cont.patched,
            raising=self.raising + cont.raising,
            dynamic_class=self.dynamic_class,
            caller_class=self.caller_class or cont.caller_class,
        )

    def settled(self, func: ast.AST, passed: set[str] | None) -> Track:
        """This track as it goes on past one call of ``func``, the helper it leaves by a
        ``return``: each set of a parameter of ``func`` left at its literal default
        (``StubEvent.pending_default``) states that default where the call does not pass
        the parameter (``passed``; None: unknown, so nothing is stated)."""
        line = getattr(func, "lineno", None)
        events = [
            e
            if e.pending_default is None or e.pending_default[0] != line
            else attrs.evolve(
                e,
                pending_default=None,
                stated=(e.pending_default[2],)
                if passed is not None and e.pending_default[1] not in passed and not e.stated
                else e.stated,
            )
            for e in self.events
        ]
        return attrs.evolve(self, events=events)

    def absorb(self, sub: Track) -> None:
        """Take in what a helper the stub was passed to did to it."""
        self.events.extend(sub.events)
        self.escapes = self.escapes or sub.escapes
        self.opaque = self.opaque or sub.opaque
        self.patched.extend(sub.patched)
        self.raising.extend(sub.raising)


class EventRecorder:
    """Turns the test's statements about a tracked name into events on a ``Track``."""

    def __init__(self, scope: ModuleScope, reader: CaseReader) -> None:
        self.scope = scope
        self.reader = reader
        self._patch_cache: dict[tuple, list[tuple[str, bool]]] = {}
        self._may_patch_cache: dict[int, bool] = {}
        self._unheard_cache: dict[int, list[tuple[str, Unheard | None]]] = {}

    def record(self, node: ast.AST, names: set[str], track: Track, bindings: Bindings) -> None:
        """The events of one node of the scope: assignments, calls, the test's own reads."""
        if isinstance(node, ast.Assign):
            self.assignment(node, names, track, bindings)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            target = node.target
            if is_attr_of(target, names) and (
                isinstance(node, ast.AugAssign) or node.value is not None
            ):
                name = target.attr  # type: ignore[attr-defined]
                track.events.append(StubEvent(EventKind.SET, name, self.scope.loc(node)))
        elif isinstance(node, ast.Call):
            self.call_event(node, names, track, bindings)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            if is_attr_of(node, names) and not self.scope.is_callee(node):
                track.events.append(StubEvent(EventKind.READ, node.attr, self.scope.loc(node)))

    def shape_of(self, call: ast.Call, bindings: Bindings) -> CallShape:
        """The call's shape with what the test states about each argument as its values."""
        shape = CallShape.of(call)
        if shape.star_args:
            return shape
        return attrs.evolve(
            shape,
            positional_literals=tuple(self.reader.value_of(a, bindings) for a in call.args),
            keyword_literals=tuple(
                (k.arg, known[0])
                for k in call.keywords
                if k.arg is not None and (known := self.reader.value_of(k.value, bindings))
            ),
        )

    def is_detached(self, call: ast.Call) -> bool:
        """``asyncio.create_task(stub.m())``: the coroutine runs as a task the test may
        cancel, so the method need not run past its first ``await``."""
        parent = self.scope.parents.get(call)
        return isinstance(parent, ast.Call) and getattr(
            parent.func, "attr", getattr(parent.func, "id", "")
        ) in ("create_task", "ensure_future", "run_coroutine_threadsafe")

    def expects_raise(self, node: ast.AST) -> bool:
        """Whether ``node`` runs inside ``with pytest.raises(...)`` (or ``assertRaises``)."""
        return self._raises_around(node) is not None

    def _raises_around(self, node: ast.AST) -> ast.Call | None:
        """The ``pytest.raises(...)`` (or ``assertRaises``) call of the ``with`` that holds
        ``node``, the innermost one."""
        current = self.scope.parents.get(node)
        while current is not None and not isinstance(current, (*FUNCTION_DEFS, ast.Module)):
            if isinstance(current, (ast.With, ast.AsyncWith)):
                for item in current.items:
                    expr = item.context_expr
                    if isinstance(expr, ast.Call) and getattr(expr.func, "attr", "") in (
                        "raises",
                        "assertRaises",
                        "assertRaisesRegex",
                    ):
                        return expr
            current = self.scope.parents.get(current)
        return None

    def raise_owned(self, node: ast.AST) -> bool:
        """Whether the exception the ``pytest.raises`` around ``node`` expects is one only the
        test's patches raise (``patch(..., side_effect=Stop)`` with ``class Stop(Exception)``
        of the test module): vLLM code cannot raise it, so the call ends where such a patch
        runs, which the walk knows (``CallContext.raising``), and nowhere else on a path
        that passes the test."""
        expect = self._raises_around(node)
        if expect is None or not expect.args or not isinstance(expect.args[0], ast.Name):
            return False
        return self.scope.patch_only_exception(expect.args[0].id)

    def raise_tested(self, node: ast.AST) -> bool:
        """Whether the exception the ``pytest.raises`` around ``node`` expects is a class
        the test module defines (``ModuleScope.test_exception``; each of a tuple of them):
        a ``raise`` of vLLM code that builds an exception of a class vLLM names cannot be
        it, so a path through one fails the test rather than ending where it passes."""
        expect = self._raises_around(node)
        if expect is None or not expect.args:
            return False
        first = expect.args[0]
        names = first.elts if isinstance(first, ast.Tuple) else [first]
        return bool(names) and all(
            isinstance(n, ast.Name) and self.scope.test_exception(n.id) for n in names
        )

    def assignment(
        self, node: ast.Assign, names: set[str], track: Track, bindings: Bindings
    ) -> None:
        literal = self.reader.value_of(node.value, bindings)
        for target in node.targets:
            for sub in walk(target):
                if is_attr_of(sub, names) and isinstance(sub.ctx, ast.Store):  # type: ignore[attr-defined]
                    track.events.append(
                        StubEvent(
                            EventKind.SET,
                            sub.attr,  # type: ignore[attr-defined]
                            self.scope.loc(node),
                            value=literal[0] if literal else None,
                            has_value=bool(literal) and sub is target,
                            stated=self._stated(node.value, bindings) if sub is target else (),
                            pending_default=self._pending_default(node, bindings)
                            if sub is target and not literal
                            else None,
                        )
                    )
            if isinstance(target, ast.Name):
                if isinstance(node.value, ast.Name) and node.value.id in names:
                    names.add(target.id)  # alias
                elif target.id in names:
                    names.discard(target.id)  # rebound to something else

    def _pending_default(
        self, node: ast.Assign, bindings: Bindings
    ) -> tuple[int, str, object] | None:
        """``StubEvent.pending_default`` of ``stub.f = p``: ``p`` a parameter of the function
        the set lies in (no parametrize case or caller bound for it) with a literal default
        that function never rebinds."""
        value = node.value
        func = self.scope.enclosing_scope(node)
        if not isinstance(value, ast.Name) or not isinstance(func, FUNCTION_DEFS):
            return None
        if bindings.binds(func):
            return None
        default = literal_defaults(func, self.scope.nodes(func)).get(value.id)
        return None if default is None else (func.lineno, value.id, default[0])

    def _stated(self, value: ast.expr, bindings: Bindings) -> tuple[object] | tuple[()]:
        """``StubEvent.stated``: an array the test builds, of any size (never ``None``), and
        a callable whose result its text states (``values.returning``)."""
        called = returning(value, self.reader.resolver(bindings))
        if called:
            return called
        return (Obj(),) if built_array(value) and not self.reader.value_of(value, bindings) else ()

    def method_call(
        self,
        method: str,
        call: ast.Call,
        bindings: Bindings,
        shape: CallShape | None = None,
        via: str | None = None,
    ) -> StubEvent:
        """The event of ``call`` running ``method`` on the stub: its shape (unless the caller
        adjusted it), and what the test around it says (``pytest.raises``, a detached task, the
        test and case it runs in)."""
        return StubEvent(
            EventKind.CALL,
            method,
            self.scope.loc(call),
            self.shape_of(call, bindings) if shape is None else shape,
            expect_raise=self.expects_raise(call),
            detached=self.is_detached(call),
            test=self.reader.test_of(call, bindings),
            via=via,
        )

    def call_event(self, node: ast.Call, names: set[str], track: Track, bindings: Bindings) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and is_name_in(func.value, names):
            track.events.append(self.method_call(func.attr, node, bindings))
            return
        first = node.args[0] if node.args else None
        fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        # setattr(x, "n", v), monkeypatch.setattr(x, "n", v), patch.object(x, "n") and the
        # unbound ``object.__setattr__(x, "n", v)`` that nn.Module stubs need.
        if fname in ("setattr", "object", "__setattr__") and is_name_in(first, names):
            literal = str_literal(node.args[1]) if len(node.args) > 1 else None
            if literal is not None:
                replacement = node.args[2] if len(node.args) > 2 else None
                value = self.reader.value_of(replacement, bindings)
                if self.replacement_raises(node, replacement, bindings):
                    value = (Obj(truthy=True, raises=True),)
                track.events.append(
                    StubEvent(
                        EventKind.SET,
                        literal,
                        self.scope.loc(node),
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
                track.events.append(StubEvent(EventKind.SET, key, self.scope.loc(node)))

    def dynamic_call(
        self, lookup: ast.Call, arg: ast.Name, track: Track, bindings: Bindings
    ) -> bool:
        """``getattr(stub, name)(...)`` where the test states ``name`` (a literal, or a
        parametrize value of the case being followed): a call of that method."""
        call = self.scope.parents.get(lookup)
        if not (
            isinstance(call, ast.Call)
            and call.func is lookup
            and len(lookup.args) >= 2
            and lookup.args[0] is arg
        ):
            return False
        known = self.reader.value_of(lookup.args[1], bindings)
        if not known or not isinstance(known[0], str) or not known[0].isidentifier():
            return False
        track.events.append(self.method_call(known[0], call, bindings))
        return True

    def unbound_call(self, call: ast.Call, arg: ast.Name, track: Track, bindings: Bindings) -> bool:
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
        shape = self.shape_of(call, bindings)
        shape = attrs.evolve(
            shape,
            n_positional=shape.n_positional - 1,
            positional_literals=shape.positional_literals[1:],
        )
        track.events.append(self.method_call(method, call, bindings, shape=shape, via=owner))
        track.escapes = True
        return True

    def unbound_target(self, func: ast.expr) -> tuple[str, str] | None:
        """``(class expression, method)`` for a callee spelled ``Cls.method``/``mod.Cls.method``
        (a capitalised class name), or a module-level name bound to one."""
        if isinstance(func, ast.Name):
            bound = _module_alias(self.scope.module.tree, func.id)
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

    def chained_use(self, attr: ast.Attribute, track: Track, bindings: Bindings) -> None:
        parent = self.scope.parents.get(attr)
        if isinstance(parent, ast.Call) and parent.func is attr:
            track.events.append(self.method_call(attr.attr, parent, bindings))

    # -- patches --------------------------------------------------------------------------

    def replacement_raises(
        self, patch: ast.Call, replacement: ast.expr | None, bindings: Bindings
    ) -> bool:
        """Whether a patch installs something that raises on every call: a mock whose
        ``side_effect`` is an exception (as the replacement or as ``patch.object``'s keyword),
        or a function of the test whose body ends in ``raise``."""
        if any(k.arg == "side_effect" and is_exception_expr(k.value) for k in patch.keywords):
            return True
        if replacement is None:
            return False
        resolve = self.reader.resolver(bindings)
        if raises_when_called(replacement, resolve):
            return True
        if isinstance(replacement, ast.Name):
            bound = resolve(replacement)
            if bound is not None:
                return raises_when_called(bound, resolve)
            func = self.scope.local_def(replacement)
            return func is not None and bool(func.body) and isinstance(func.body[-1], ast.Raise)
        return False

    def class_patches(
        self,
        scope: ast.AST,
        names: set[str],
        bindings: Bindings,
        depth: int = 0,
        seen: frozenset[int] = frozenset(),
    ) -> list[tuple[str, bool]]:
        """``(Cls.m, raises)`` for each ``monkeypatch.setattr(Cls, "m", ...)``/
        ``patch.object(Cls, "m")`` anywhere in ``scope``, and the dotted ``"pkg.mod.Cls.m"`` of
        ``monkeypatch.setattr("...", v)``/``patch("...")`` (also as a decorator): the test
        replaced that method for every instance, the stub's too, so the audit must not follow
        the real one.

        Tests factor such patches into helpers (``_mock_base_model_load(monkeypatch)``), so the
        same-module functions ``scope`` calls are searched too (a few levels deep).  The
        answer for a scope is the one found first, whatever case is bound then."""
        key = (id(scope), frozenset(names))
        if key in self._patch_cache:
            return self._patch_cache[key]
        out = []
        helpers: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        for node, target, replacement in self._patch_calls(scope, names, seen, helpers):
            out.append((target, self.replacement_raises(node, replacement, bindings)))
        if depth < _MAX_PATCH_HELPER_DEPTH:
            inner = seen | {id(scope)} | {id(h) for h in helpers}
            for helper in dict.fromkeys(helpers):
                out.extend(self.class_patches(helper, set(), bindings, depth + 1, inner))
        self._patch_cache[key] = out
        return out

    def replacements(
        self, scope: ast.AST, depth: int = 0, seen: frozenset[int] = frozenset()
    ) -> list[tuple[str, Unheard | None]]:
        """``(target, unheard)`` of each patch ``class_patches`` finds in ``scope`` (no
        name left out), with what its replacement never reads of the arguments a call hands
        it (``unheard``): once per function."""
        key = id(scope)
        if key in self._unheard_cache:
            return self._unheard_cache[key]
        out: list[tuple[str, Unheard | None]] = []
        helpers: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        for node, target, replacement in self._patch_calls(scope, set(), seen, helpers):
            out.append((target, self.unheard(node, replacement)))
        if depth < _MAX_PATCH_HELPER_DEPTH:
            inner = seen | {id(scope)} | {id(h) for h in helpers}
            for helper in dict.fromkeys(helpers):
                out.extend(self.replacements(helper, depth + 1, inner))
        self._unheard_cache[key] = out
        return out

    def unheard(self, patch: ast.Call, replacement: ast.expr | None) -> Unheard | None:
        """What the replacement a patch installs never reads of its arguments: a lambda or
        a function the test defines (``Unheard.of``), or a mock it builds in the patch
        itself with nothing to run (no ``side_effect``/``wraps``, and no ``side_effect``
        the function making the patch sets later); None where it is not known."""
        if replacement is None or any(k.arg in _RUNS_GIVEN for k in patch.keywords):
            return None
        if isinstance(replacement, ast.Name):
            bound = self.reader.resolve_local(replacement, NO_BINDINGS)
            if bound is None:
                func = self.scope.local_def(replacement)
                return Unheard.of(func) if func is not None else None
            replacement = bound
        if isinstance(replacement, ast.Lambda):
            return Unheard.of(replacement)
        if mock_runs_nothing(replacement) and not any(
            isinstance(n, ast.Attribute) and n.attr in _RUNS_GIVEN
            for n in self.scope.nodes(self.scope.enclosing_scope(patch))
        ):
            return Unheard.deaf()
        return None

    def _patch_calls(
        self,
        scope: ast.AST,
        names: set[str],
        seen: frozenset[int],
        helpers: list[ast.FunctionDef | ast.AsyncFunctionDef],
    ) -> Iterator[tuple[ast.Call, str, ast.expr | None]]:
        """``(patch, target as written, replacement)`` of each patch written in ``scope``
        (its decorators too) whose target is written out and not on a name of ``names``;
        the same-module functions it calls that may patch go to ``helpers``."""
        decorators = [sub for deco in getattr(scope, "decorator_list", []) for sub in walk(deco)]
        for node in decorators + self.scope.nodes(scope):
            if not isinstance(node, ast.Call):
                continue
            target = _dotted_patch_target(node)
            if target is not None:
                yield node, target, _nth(node, 1)
                continue
            if isinstance(node.func, ast.Name):
                helper = self.scope.module.functions.get(node.func.id)
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
            if literal is not None and not is_name_in(first, names):
                yield node, f"{ast.unparse(first)}.{literal}", _nth(node, 2)

    def _may_patch(self, func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """Whether ``func``, or a same-module function it calls, mentions a patch: a text
        test, so the many helpers that only build inputs are never walked for patches."""
        key = id(func)
        if key in self._may_patch_cache:
            return self._may_patch_cache[key]
        self._may_patch_cache[key] = False  # recursion guard
        text = self.scope.text_of_function(func)
        found = "setattr" in text or ".object(" in text
        if not found:
            for name in set(_CALLED_NAME.findall(text)):
                callee = self.scope.module.functions.get(name)
                if callee is not None and callee is not func and self._may_patch(callee):
                    found = True
                    break
        self._may_patch_cache[key] = found
        return found


def _module_alias(tree: ast.Module, name: str) -> ast.expr | None:
    """The value of the one top-level ``name = value`` assignment, if there is exactly one."""
    found = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
    ]
    return found[0] if len(found) == 1 else None


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


def _is_dict_of(node: ast.AST, names: set[str]) -> bool:
    """``x.__dict__`` or ``vars(x)`` for a tracked name ``x``."""
    if isinstance(node, ast.Attribute) and node.attr == "__dict__":
        return is_name_in(node.value, names)
    return (
        isinstance(node, ast.Call)
        and getattr(node.func, "id", None) == "vars"
        and len(node.args) == 1
        and is_name_in(node.args[0], names)
    )
