"""Calls: ``getattr``/``setattr`` on ``self``, methods of the class (followed), calls out of it
(recorded as ``CallSite``), and what the test arranged to raise (``CallContext``).
"""

from __future__ import annotations

import ast
import builtins

import attrs

from factories.analysis._walk import statements
from factories.analysis.binding import CallShape, Unheard
from factories.analysis.classes import ClassInfo, FunctionRef, Member, MemberKind
from factories.analysis.readset._chains import bound_name
from factories.analysis.readset._handovers import plain_function
from factories.analysis.readset._model import (
    CALL_SHAPE,
    HELD_ITEMS,
    AttributeAccess,
    CallSite,
    State,
    shaped,
)
from factories.analysis.readset._returned import keeps_items, stored_away
from factories.analysis.readset._syntax import forwards, forwards_only, literal_name
from factories.analysis.values import Obj
from factories.errors import SourceError

_BUILTINS = frozenset(dir(builtins))
_CLASS_FUNCTIONS = (MemberKind.STATICMETHOD, MemberKind.CLASSMETHOD)


class CallHandlers:
    """The call half of ``Walker`` (its state lives there)."""

    def call(self, node: ast.Call, state: frozenset[str]) -> frozenset[str]:
        func = node.func
        unheard = self.unheard_by(node) if self.context.unheard else None
        starred = False
        for i, arg in enumerate(node.args):
            starred = starred or isinstance(arg, ast.Starred)
            if unheard_lambda(arg, unheard, None if starred else i, None):
                continue
            state = self.expr(arg.value if isinstance(arg, ast.Starred) else arg, state)
        for kw in node.keywords:
            if unheard_lambda(kw.value, unheard, None, kw.arg):
                continue
            state = self.expr(kw.value, state)
        state = self.chain_probe(node, state)
        if (
            self.context.stated_locals
            and any(
                isinstance(a, ast.Name) and a.id == self.self_name
                for a in (*node.args, *(k.value for k in node.keywords))
            )
            and self.known_empty()
        ):
            self.forget_empty()  # ``f(self)`` may fill a container of it

        # getattr/setattr with a literal name on self
        if isinstance(func, ast.Name) and func.id in ("getattr", "setattr", "hasattr"):
            if (
                node.args
                and isinstance(node.args[0], ast.Name)
                and node.args[0].id == self.self_name
            ):
                literal = literal_name(node.args[1] if len(node.args) > 1 else None)
                if literal is not None:
                    if func.id == "setattr":
                        self.rec.writes.append(
                            AttributeAccess(literal, self.loc(node), self.qualname)
                        )
                        self.consts.pop(literal, None)
                        return state | {literal}
                    if func.id == "getattr" and len(node.args) == 2:
                        out = self.read_attr(literal, node, state)
                        return out if out is not None else state
                    self.rec.reads.append(AttributeAccess(literal, self.loc(node), self.qualname))
                    return state

        # self.m(...): a method of the class, or a callable stored on the instance
        if self.is_self_attr(func):
            name = func.attr  # type: ignore[attr-defined]
            stored = self.consts.get(name)
            if name in state and isinstance(stored, Obj) and stored.raises:
                self.end_path()  # the test put a mock that raises there
                return state
            bound = self.bound_method(stored) if name in state else None
            if bound is not None:
                # ``ns.f = types.MethodType(Cls.m, ns)``: ``Cls.m`` runs on this object
                self.read_attr(name, func, state)
                return self.call_method(bound, node, state)
            member = self.index.lookup(self.cls, name) if name not in state else None
            if self.context.bare_self and member is not None:
                # A namespace made ``self`` lacks it: a missing read, and a method walked
                # with this call's arguments as it runs once the test gives it one.
                out = self.read_attr(name, func, state)
                if member.kind is MemberKind.METHOD:
                    aliases, params = self.bindings(member, node, state)
                    self.as_given(member, state, aliases, params)
                return out if out is not None else state
            if member is not None and member.kind is MemberKind.METHOD:
                return self.call_method(member, node, state)
            out = self.read_attr(name, func, state)
            if member is None:
                self.rec.calls.append(CallSite(f"self.{name}", self.loc(node), CallShape.of(node)))
                if name in state:
                    self.test_code_may_raise(func)  # a callable the test put on the object
            out = out if out is not None else state
            if member is not None and member.kind in _CLASS_FUNCTIONS:
                return self.pass_on(node, out)  # ``self.make(cfg)``: static or class method
            return out

        # super().m(...)
        if (
            self.cls is not None
            and isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Call)
            and isinstance(func.value.func, ast.Name)
            and func.value.func.id == "super"
        ):
            member = self.index.lookup(self.cls, func.attr, after=self.owner)
            if member is not None and member.kind is MemberKind.METHOD:
                return self.call_method(member, node, state, after=self.owner)
            return state

        return self.call_out(node, state)

    def unheard_by(self, node: ast.Call) -> Unheard | None:
        """What the function ``node`` calls never reads of its arguments, where the test
        replaced it with one of its own (``CallContext.unheard``): a global of this module
        by its name here (``make_layers(...)``; the module's own binding is what the call
        looks up, what ``monkeypatch.setattr(mod, "make_layers", ...)`` replaced), a name
        this function imports when it runs, or an attribute of a module (``mod.f(...)``)."""
        func = node.func
        if isinstance(func, ast.Name):
            if func.id in self.params or func.id in self.aliases:
                return None
            if func.id in self.local_imports:
                key = self.call_target(func)
            elif func.id in self.locals:
                return None
            else:
                key = f"{self.module.name}.{func.id}"
        elif isinstance(func, ast.Attribute):
            key = self.call_target(func)
        else:
            return None
        return next((heard for name, heard in self.context.unheard if name == key), None)

    def bound_method(self, stored: object) -> Member | None:
        """The method a field holds bound to the object walked (``Obj.bound``), where the
        tree shows it as a plain method of its class: what a call of the field runs."""
        if not isinstance(stored, Obj) or stored.bound is None:
            return None
        head, _, name = stored.bound.rpartition(".")
        try:
            owner = self.index.resolve_absolute(head)
        except SourceError:
            return None
        if not isinstance(owner, ClassInfo):
            return None
        member = self.index.lookup(owner, name)
        if member is None or member.kind is not MemberKind.METHOD:
            return None
        return member

    def call_out(self, node: ast.Call, state: frozenset[str]) -> frozenset[str]:
        """A call of something outside the instance: recorded, and, when the test arranged
        for it (``CallContext``), where the expected exception may come from."""
        func = node.func
        target = self.call_target(func)
        if target is not None:
            self.rec.calls.append(CallSite(target, self.loc(node), CallShape.of(node)))
        state = self.expr(func, state)
        state = self.named_by_helper(node, state)
        context = self.context
        if self.param_path(func) is not None or self.on_nested(func):
            self.test_code_may_raise(func)  # a callable a stand-in holds: the test's own code
        if context.expect_raise and not context.patches_raise and self.function_raises(func):
            self.raised = True
            self.certain = False  # the expected exception may come from this function
        if context.patched_functions:
            keys = {target} if target is not None else set()
            if isinstance(func, ast.Name):
                keys.add(f"{self.module.name}.{func.id}")
            if keys & context.raising:
                self.end_path()
            elif (
                keys & context.patched_functions
                and context.expect_raise
                and not self.silent_patch(keys & context.patched_functions)
            ):
                self.raised = True
                self.certain = False  # the test's replacement may be what raises
        if isinstance(func, ast.Attribute) and context.typed:
            held = self.chain_of(func, state)
            if held is not None:  # ``ns.stub.m(...)``: the stub's class's method runs
                state = self.typed_member(held, state, call=node)
        return self.pass_on(node, state)

    def silent_patch(self, keys: set[str]) -> bool:
        """Whether every one of ``keys`` (functions the test replaced) was replaced with one
        that never raises (``Unheard.silent``: ``lambda *a, **k: None``): the exception
        ``pytest.raises`` expects does not come from calling it."""
        silent = {name for name, heard in self.context.unheard if heard.silent}
        return bool(keys) and keys <= silent

    def named_by_helper(self, node: ast.Call, state: frozenset[str]) -> frozenset[str]:
        """``refill_derived(self, "w", x)``: code handed ``self`` together with a string that
        names an attribute (as ``setattr`` is) may set that attribute on it; from here on it
        counts as written, so a later read of it is not one the object lacks.  Where the
        stand-in audit walks (``CallContext.chains``, ``bare_self``): the stub audit's
        output is pinned to the releases."""
        if not (self.context.chains or self.context.bare_self) or self.self_name is None:
            return state
        if not any(isinstance(a, ast.Name) and a.id == self.self_name for a in node.args):
            return state
        named = {
            value.value
            for value in (*node.args, *(k.value for k in node.keywords))
            if isinstance(value, ast.Constant)
            and isinstance(value.value, str)
            and value.value.isidentifier()
        }
        return state | named if named else state

    def call_method(
        self,
        member: Member,
        call: ast.Call,
        state: frozenset[str],
        after: ClassInfo | None = None,
    ) -> State:
        """``self.m(...)``/``super().m(...)``: followed into ``m`` with the parameter paths and
        literal values the call passes."""
        aliases, params = self.bindings(member, call, state)
        held = self.held_items(member, call) if self.context.result_items else ()
        if held:
            params = {**params, HELD_ITEMS: held}
        before = len(self.rec.writes)
        read_before = len(self.rec.reads)
        walked = self.follow(member, state, aliases=aliases, params=params, after=after)
        if self.context.stated_locals and self.known_empty():  # what it read it may fill
            read = {r.name for r in self.rec.reads[read_before:]}
            self.forget_empty(None if walked.skipped else read)
        if not walked.skipped and plain_function(member.node):
            self.followed.update(bound_arguments(member.node, call, aliases))
        if walked.value:
            self.call_values[id(call)] = walked.value  # what the call evaluates to
        if walked.chain is not None and self.context.chains:
            self.call_chains[id(call)] = walked.chain  # ``return self.caches[i]``
        for write in self.rec.writes[before:]:
            self.consts.pop(write.name, None)
        self.consts.update(walked.stored)
        if walked.state is None:
            self.end_path()
            return state
        if walked.raised:
            self.raised = True
            if self.context.expect_raise:
                self.certain = False  # the expected exception may have come from that call
        return walked.state

    def held_items(self, member: Member, call: ast.Call) -> tuple[tuple[str, str, str], ...]:
        """``HELD_ITEMS`` of a method of ``self`` the analysed call calls (``CallContext.
        result_items``): ``(parameter, items, field)`` where the call is a statement of the
        analysed call's body of its own, after the one binding of the local every ``return``
        gives (``_returned.returned_local``), it hands that local to ``parameter``, the
        analysed call stores the local into no attribute or subscript, and neither the rest
        of its body nor the whole method can change which items its ``items`` holds or
        their ``field`` (``_returned.keeps_items``).  The test asserts such an item at the
        ``return``, so the list held one all the while the method ran."""
        if not (self.entry and self.self_name and member.kind is MemberKind.METHOD):
            return ()
        found = self.analyzer.returned_local(self.func)
        callee = member.node
        if found is None or not isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return ()
        name, bound_at = found
        body = self.func.body
        at = next(
            (i for i, stmt in enumerate(body) if isinstance(stmt, ast.Expr) and stmt.value is call),
            None,
        )
        if at is None or at <= bound_at or stored_away(self.func, name):
            return ()
        positional = [a.arg for a in (*callee.args.posonlyargs, *callee.args.args)][1:]
        handed = {
            positional[i]
            for i, arg in enumerate(call.args)
            if isinstance(arg, ast.Name) and arg.id == name and i < len(positional)
        } | {
            k.arg
            for k in call.keywords
            if k.arg is not None and isinstance(k.value, ast.Name) and k.value.id == name
        }
        if not handed:
            return ()
        out: list[tuple[str, str, str]] = []
        for items, field in self.context.result_items:
            if keeps_items(
                body[at + 1 :], self.func, frozenset({name}), items, field, self.plain_method
            ) and keeps_items(
                callee.body, callee, frozenset(handed), items, field, self.plain_method
            ):
                out.extend((parameter, items, field) for parameter in handed)
        return tuple(sorted(out))

    def plain_method(self, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The plain method of the walked class ``self.<name>(...)`` runs, else None."""
        member = self.index.lookup(self.cls, name) if self.cls is not None else None
        if member is None or member.kind is not MemberKind.METHOD:
            return None
        node = member.node
        return node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None

    def test_code_may_raise(self, func: ast.expr) -> None:
        """A call of code the test wrote (a callable it put on a stand-in or on the object),
        under ``pytest.raises``: what the test expects may come from it, on some calls
        only, so what follows is not certain (``Walker.past_raise``); not a callable whose
        result the test's text states (``lambda: None``, ``Mock(return_value=1)``:
        ``values.returning``), which returns it.  Where the test's values are followed
        (``stated_locals``): the stub audit's output is pinned."""
        context = self.context
        known = self.known(func)
        if known and isinstance(known[0], Obj) and (known[0].returns or known[0].awaits):
            return
        if context.expect_raise and context.stated_locals and not context.patches_raise:
            self.raised = True
            self.certain = False

    def on_nested(self, func: ast.expr) -> bool:
        """``self.cfg.f`` where ``cfg`` is a namespace the test set on the object
        (``CallContext.nested``)."""
        while isinstance(func, ast.Attribute) and not self.is_self_attr(func):
            func = func.value
        return self.is_self_attr(func) and func.attr in self.context.nested  # type: ignore[attr-defined]

    def bindings(
        self, member: Member, call: ast.Call, state: frozenset[str]
    ) -> tuple[dict[str, str], dict[str, object]]:
        """What ``self.m(...)`` binds ``m``'s parameters to: the parameter paths and stand-in
        chains it passes (``aliases``), and the literal values (``params``)."""
        callee = member.node
        assert isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef))
        positional = [a.arg for a in list(callee.args.posonlyargs) + list(callee.args.args)][1:]
        aliases: dict[str, str] = {}
        for name, arg in zip(positional, call.args):
            path = self.held_path(arg, state)
            if path is not None and not isinstance(arg, ast.Starred):
                aliases[name] = path
        for kw in call.keywords:
            path = self.held_path(kw.value, state) if kw.arg else None
            if path is not None:
                aliases[kw.arg] = path  # type: ignore[index]
        for where, text in self.spread(call):  # ``super().__init__(*args, **kwargs)``
            name = bound_name(callee, 1, where)
            if name is not None:
                aliases.setdefault(name, text)
        shape = self.forwarded_shape(call)
        if shape is None:
            return aliases, self.literal_shape(call).bind_literals(callee, bound=True)
        params = shape.bind_literals(callee, bound=True)
        if forwards_only(callee):
            params[CALL_SHAPE] = shaped(shape)
        return aliases, params

    def forwarded_shape(self, call: ast.Call) -> CallShape | None:
        """The call this function was called with (``CALL_SHAPE``, where the test's values
        are followed), where ``call`` hands its ``*args``/``**kwargs`` on unchanged
        (``forwards_only``): ``super().__init__(*args, **kwargs)`` binds the callee's
        parameters to what the test passed, its stated values included."""
        held = self.name_consts.get(CALL_SHAPE)
        if not isinstance(held, tuple) or not forwards(self.func, call):
            return None
        return held[0]

    def literal_shape(self, call: ast.Call) -> CallShape:
        """The call's shape with what is known here of its arguments as their literals."""
        shape = CallShape.of(call)
        if shape.star_args:
            return shape
        return attrs.evolve(
            shape,
            positional_literals=tuple(
                self.known(a) for a in call.args if not isinstance(a, ast.Starred)
            ),
            keyword_literals=tuple(
                (k.arg, self.known(k.value)[0])
                for k in call.keywords
                if k.arg and self.known(k.value)
            ),
        )

    def function_raises(self, func: ast.expr) -> bool:
        """Whether ``func`` is a function of the tree whose body holds a ``raise``."""
        text = ast.unparse(func) if isinstance(func, (ast.Name, ast.Attribute)) else ""
        if not text or text.split(".")[0] in (self.self_name, *self.params):
            return False
        try:
            target = self.index.resolve(self.module, text, self.local_imports)
        except SourceError:
            return False  # only a hint for placing reads; the module's own users report it
        if not isinstance(target, FunctionRef):
            return False
        key = id(target.node)
        cache = self.analyzer.raises_cache
        if key not in cache:
            cache[key] = any(isinstance(n, ast.Raise) for n in statements(target.node))
        return cache[key]

    def call_target(self, func: ast.expr) -> str | None:
        """Dotted, import-resolved name of a callee outside the instance, or None."""
        suffix: list[str] = []
        node: ast.expr = func
        while True:
            if isinstance(node, ast.Attribute):
                suffix.append(node.attr)
                node = node.value
            elif isinstance(node, ast.Call):
                suffix.append("()")
                node = node.func
            else:
                break
        if not isinstance(node, ast.Name) or node.id == self.self_name:
            return None
        name = node.id
        if name in self.params or name in self.aliases:
            return None  # a parameter's method: recorded as a parameter path
        if name in self.local_imports:
            head = self.local_imports[name].dotted
        elif name in self.locals:
            return None
        elif name in self.module.imports:
            head = self.module.imports[name].dotted
        elif (
            name in self.module.classes
            or name in self.module.functions
            or name in self.module.assigned
        ):
            head = f"{self.module.name}.{name}"
        elif name in _BUILTINS:
            return None
        else:
            head = name
        text = head
        for part in reversed(suffix):
            text += part if part == "()" else f".{part}"
        return text


def bound_arguments(
    node: ast.AST, call: ast.Call, aliases: dict[str, str]
) -> list[tuple[int, int | str]]:
    """The arguments of ``self.m(...)`` that ``bindings`` bound to a parameter of ``m`` as a
    chain (``aliases``): positional ones before any ``*``, keywords that name one; not what
    ``*args``/``**kwargs`` collect."""
    assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    args = node.args
    positional = [a.arg for a in list(args.posonlyargs) + list(args.args)][1:]
    named = {a.arg for a in args.args} | {a.arg for a in args.kwonlyargs}
    out: list[tuple[int, int | str]] = []
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred) or i >= len(positional):
            break
        if positional[i] in aliases:
            out.append((id(call), i))
    out.extend((id(call), kw.arg) for kw in call.keywords if kw.arg in named and kw.arg in aliases)
    return out


def unheard_lambda(
    arg: ast.expr, unheard: Unheard | None, position: int | None, keyword: str | None
) -> bool:
    """Whether ``arg`` is a lambda handed to a parameter the test's replacement of the
    callee never reads (``Unheard.ignores``): it is never called, so its body is no code
    that runs (the layer factory handed to a ``make_layers`` the test replaced with
    ``lambda *_, **kw: (0, 0, [])``).  Making it reads nothing."""
    return (
        unheard is not None
        and isinstance(arg, ast.Lambda)
        and not arg.args.defaults
        and not any(arg.args.kw_defaults)
        and unheard.ignores(position, keyword)
    )
