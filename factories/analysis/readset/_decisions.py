"""What the test's known values decide: the value of an expression when the test states it,
the verdict of a branch condition, and what ``hasattr`` guards establish.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterable

import attrs

from factories.analysis._walk import walk
from factories.analysis.classes import ClassInfo, FunctionRef, MemberKind
from factories.analysis.readset._chains import ELEMENT
from factories.analysis.readset._syntax import getattr_probe, literal_name, sized
from factories.analysis.values import (
    EnumMember,
    Obj,
    Truth,
    compare,
    enum_member,
    instance_of,
    length_of,
    truthy,
)
from factories.errors import SourceError

#: The values a literal display may hold for ``Decisions.in_display`` (their ``==`` is
#: Python's own, across ``bool``/``int``/``float``).
_PLAIN = (bool, int, float, str, bytes, type(None))

_NO_GUARDS: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())

#: The prefix of a predicate's entry in a walk's call stack (``Decisions.call_value``).
PREDICATE_FRAME = "pred:"


def _self_rooted(func: ast.expr, self_name: str | None) -> bool:
    """Whether a call's function is a method reached from ``self`` (``self.m``,
    ``self.cfg.m``) or ``super().m``."""
    node = func
    while isinstance(node, ast.Attribute):
        node = node.value
    if isinstance(node, ast.Name):
        return node.id == self_name and node is not func
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"
    )


def _predicate(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a function's body is one ``return`` of a ``bool``-valued condition."""
    if isinstance(node, ast.AsyncFunctionDef):
        return False
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    return (
        len(body) == 1
        and isinstance(body[0], ast.Return)
        and body[0].value is not None
        and _boolean(body[0].value)
    )


def _boolean(node: ast.expr) -> bool:
    """Whether ``node``'s value is a ``bool`` whatever it evaluates (not an operand ``and``
    or ``or`` hands back)."""
    if isinstance(node, ast.Compare):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return True
    if isinstance(node, ast.BoolOp):
        return all(_boolean(v) for v in node.values)
    if isinstance(node, ast.Constant):
        return isinstance(node.value, bool)
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("isinstance", "issubclass", "hasattr", "callable")
    )


class Decisions:
    """The known-value half of ``Walker``: reads ``consts`` and ``name_consts`` there."""

    def known(self, node: ast.expr) -> tuple[object] | tuple[()]:
        """``(value,)`` when ``node`` is a literal, a known stub field, a known parameter or
        local, an attribute the test gave a known object (``metadata.num_actual_tokens`` of
        ``SimpleNamespace(num_actual_tokens=0)``, also as ``getattr(metadata, "n", default)``,
        which is that field where the test gave it), what calling such a field returns where
        it is a lambda of a stated value (``Obj.returns``), or an enum member
        (``Kind.DECODER``)."""
        if isinstance(node, ast.Constant):
            return (node.value,)
        if self.is_self_attr(node) and node.attr in self.consts:  # type: ignore[attr-defined]
            return (self.consts[node.attr],)  # type: ignore[attr-defined]
        if isinstance(node, ast.Name) and node.id in self.name_consts:
            return (self.name_consts[node.id],)
        if isinstance(node, ast.Name) and node.id in self.asserted_locals:
            held = self.asserted_locals[node.id]
            return () if isinstance(held, Truth) else (held,)
        if (
            isinstance(node, ast.Name)
            and self.context.stated_locals
            and node.id not in self.locals
            and node.id not in self.params
        ):
            return self.module_constant(node.id)
        probed = getattr_probe(node)
        if probed is not None:
            owner = self.known(probed[0])
            return owner[0].field(probed[1]) if owner and isinstance(owner[0], Obj) else ()
        length = sized(node)
        if length is not None:
            owner = self.known(length)
            return length_of(owner[0]) if owner else ()
        if isinstance(node, ast.Call):
            if self.context.stated_locals:
                if id(node) in self.call_values:  # a function of the tree walked here
                    return self.call_values[id(node)]
                looked_up = self.dict_get(node)
                if looked_up is not None:
                    return looked_up
                # ``self.manager.needs_capture()`` of a lambda the test states, ``self._metadata()``
                # of ``_metadata=lambda: (a, b)`` (``Obj.returns``): what the test made it return
                called = self.known(node.func)
                if called and isinstance(called[0], Obj):
                    return called[0].returns
                literal = self.literal_return(node)
                if literal:
                    return literal
            return self.call_value(node)
        if isinstance(node, ast.Subscript) and self.context.stated_locals:
            owner, key = self.known(node.value), self.known(node.slice)
            if owner and key and isinstance(owner[0], Obj) and owner[0].items is not None:
                return owner[0].keyed(key[0]) or ()
            return ()
        if isinstance(node, ast.IfExp) and self.context.stated_locals:
            verdict = self.truth(node.test)
            return () if verdict is None else self.known(node.body if verdict else node.orelse)
        if isinstance(node, ast.Await) and self.context.stated_locals:
            awaited = self.awaited_mock(node)
            return awaited.awaits if awaited is not None else ()
        if isinstance(node, ast.Attribute):
            owner = self.known(node.value)
            if owner and isinstance(owner[0], Obj):
                return owner[0].field(node.attr)
            root = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and (
                root.id == self.self_name or root.id in self.params or root.id in self.locals
            ):
                return ()
            member = enum_member(node)
            return (member,) if member is not None else ()
        return ()

    def literal_return(self, call: ast.Call) -> tuple[object] | tuple[()]:
        """``obj.get_name()`` where ``obj`` is an object of a class of the tree the test built
        (``Obj.cls``) and the method that class finds (a plain, class or static method, no
        other decorator) is one ``return`` of a plain literal (``return "fp8"``), called with
        no arguments where it takes none: that literal.  Not where the class or its bases
        define ``__getattribute__``, have a base outside the tree, store an attribute of
        that name (which an object's own ``__dict__`` would answer first), or the test
        patched the method."""
        func = call.func
        if not isinstance(func, ast.Attribute) or call.args or call.keywords:
            return ()
        owner = self.known(func.value)
        if not (owner and isinstance(owner[0], Obj) and owner[0].cls is not None):
            return ()
        cls = self.index.resolve_absolute(owner[0].cls)  # type: ignore[attr-defined]
        if cls is None:
            return ()
        chain, external = self.index.mro(cls)  # type: ignore[attr-defined]
        if external:
            return ()
        for klass in chain:
            written = self.index.stores(klass)  # type: ignore[attr-defined]
            if written.getattribute or written.fields.get(func.attr):
                return ()
        member = self.index.lookup(cls, func.attr)  # type: ignore[attr-defined]
        if member is None or not isinstance(member.node, ast.FunctionDef):
            return ()
        replaced = self.context.replaced
        if (member.owner.qualname, func.attr) in replaced or (cls.qualname, func.attr) in replaced:
            return ()
        node = member.node
        kinds = {
            MemberKind.METHOD: (),
            MemberKind.CLASSMETHOD: ("classmethod",),
            MemberKind.STATICMETHOD: ("staticmethod",),
        }
        if member.kind not in kinds:
            return ()
        if [ast.unparse(d) for d in node.decorator_list] != list(kinds[member.kind]):
            return ()
        args = node.args
        params = [*args.posonlyargs, *args.args]
        own = 0 if member.kind is MemberKind.STATICMETHOD else 1
        if len(params) < own or len(params) - own > len(args.defaults):
            return ()
        if any(d is None for d in args.kw_defaults):
            return ()
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # the docstring
        if len(body) != 1 or not isinstance(body[0], ast.Return):
            return ()
        value = body[0].value
        if isinstance(value, ast.Constant) and isinstance(
            value.value, (bool, int, float, str, type(None))
        ):
            return (value.value,)
        return ()

    def call_value(self, call: ast.Call) -> tuple[bool] | tuple[()]:
        """What a call of a predicate of the tree returns (``predicate_of``: a function whose
        body is one ``return`` of a condition, ``is_decode_batch(metadata)``), where the
        values it is called with decide that condition (``SimpleNamespace(num_decode_tokens=1,
        num_actual_tokens=2)``: ``False``).  The condition is evaluated as a branch of the
        function would be, with the call's known arguments bound to its parameters.  Only
        where the test's values are followed (``CallContext.stated_locals``), and not for a
        function the test patched."""
        if not self.context.stated_locals:
            return ()
        if any(isinstance(a, ast.Starred) for a in call.args) or any(
            k.arg is None for k in call.keywords
        ):
            return ()
        target = self.predicate_of(call)
        if target is None:
            return ()
        node = target.node
        frame = f"{PREDICATE_FRAME}{target.module.name}.{node.name}:{node.lineno}"
        if frame in self.stack or sum(f.startswith(PREDICATE_FRAME) for f in self.stack) > 1:
            return ()
        patched = self.context.patched_functions
        if f"{target.module.name}.{node.name}" in patched or (
            isinstance(call.func, ast.Name) and f"{self.module.name}.{call.func.id}" in patched
        ):
            return ()
        params = self.literal_shape(call).bind_literals(node, bound=False)  # type: ignore[attr-defined]
        evaluator = type(self)(
            self.analyzer,  # type: ignore[attr-defined]
            self.context,
            None,
            None,
            node,
            {},
            (*self.stack, frame),  # type: ignore[attr-defined]
            {},
            params,
            True,
            module=target.module,
        )
        verdict = evaluator.truth(node.body[-1].value)  # type: ignore[attr-defined]
        return (verdict,) if verdict is not None else ()

    def predicate_of(self, call: ast.Call) -> FunctionRef | None:
        """The function of the tree ``call`` calls where its body (past a docstring) is one
        ``return`` of a condition whose value is a ``bool`` (comparisons, ``not``,
        ``and``/``or`` of those, ``isinstance``), resolved once per call node."""
        cache = self.analyzer.predicates  # type: ignore[attr-defined]
        key = id(call)
        if key not in cache:
            cache[key] = None
            func = call.func
            text = ast.unparse(func) if isinstance(func, (ast.Name, ast.Attribute)) else ""
            head = text.split(".")[0]
            if text and head not in (self.self_name, *self.params, *self.locals):  # type: ignore[attr-defined]
                try:
                    target = self.index.resolve(self.module, text, self.local_imports)  # type: ignore[attr-defined]
                except SourceError:
                    target = None
                if isinstance(target, FunctionRef) and _predicate(target.node):
                    cache[key] = target
        return cache[key]

    def dict_get(self, call: ast.Call) -> tuple[object] | tuple[()] | None:
        """``d.get(key[, default])`` of a dict display the test states with literal keys:
        the value, or the default where the key is not there; None for any other call."""
        func = call.func
        if not (
            isinstance(func, ast.Attribute)
            and func.attr == "get"
            and 1 <= len(call.args) <= 2
            and not call.keywords
        ):
            return None
        owner, key = self.known(func.value), self.known(call.args[0])
        if not (owner and key and isinstance(owner[0], Obj) and owner[0].items is not None):
            return None
        found = owner[0].keyed(key[0])
        if found is not None:
            return found
        return self.known(call.args[1]) if len(call.args) == 2 else (None,)

    def module_constant(self, name: str) -> tuple[object] | tuple[()]:
        """A name of the walked function's module bound once, at its top level, to a
        literal (``AUTO = "auto"``, ``AUTO, SPECIALIZED = "auto", "x"``), and nowhere
        rebound (no ``global`` of it): its value.  Where the test's values are followed."""
        return self.analyzer.module_constant(self.module, name)

    def awaited_mock(self, node: ast.Await) -> Obj | None:
        """``await self.check(x)`` where the test made ``check`` an ``AsyncMock``
        (``Obj.awaits``): the await gives what the test states, without suspending."""
        call = node.value
        if not isinstance(call, ast.Call):
            return None
        called = self.known(call.func)
        if called and isinstance(called[0], Obj) and called[0].awaits:
            return called[0]
        return None

    def truth(self, test: ast.expr, state: frozenset[str] | None = None) -> bool | None:
        """The value of a branch condition over known literal attributes, or None if unknown.
        ``state``: the walk's where the condition is met, which settles ``isinstance`` of a
        stub the test put in a namespace (``typed_instance``)."""
        if isinstance(test, ast.Constant):
            return bool(test.value)
        if isinstance(test, ast.Name) and isinstance(self.asserted_locals.get(test.id), Truth):
            return self.asserted_locals[test.id].value  # type: ignore[attr-defined]
        known = self.known(test)
        if known:
            return truthy(known[0])
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self.truth(test.operand, state)
            return None if inner is None else not inner
        if isinstance(test, ast.BoolOp):
            values = [self.truth(v, state) for v in test.values]
            if isinstance(test.op, ast.And):
                if False in values:
                    return False
                return True if all(v is True for v in values) else None
            if True in values:
                return True
            return False if all(v is False for v in values) else None
        if isinstance(test, ast.Call) and self.context.stated_locals:
            return self.type_verdict(test, state)
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            displayed = self.in_display(test)
            if displayed is not None:
                return displayed
            if self.empty_member(test):
                return isinstance(test.ops[0], ast.NotIn)
            left_known, right_known = self.known(test.left), self.known(test.comparators[0])
            if not (left_known and right_known):
                return None
            if isinstance(test.ops[0], (ast.In, ast.NotIn)) and self.context.stated_locals:
                return self.membership(test.ops[0], left_known[0], right_known[0])
            return compare(test.ops[0], left_known[0], right_known[0])
        return None

    def in_display(self, test: ast.Compare) -> bool | None:
        """``x in ("ray", "external_launcher")``, ``x not in (None, bs)``: the code's own
        tuple, list or set display of plain literals holds exactly those values, so where the
        test states ``x`` as a plain literal too, Python's ``==`` of each decides it.  Where
        the test's values are followed (``stated_locals``); None when either side is not so
        known (a member that is a name, an item that is an object or an enum member)."""
        op, display = test.ops[0], test.comparators[0]
        if not (
            self.context.stated_locals
            and isinstance(op, (ast.In, ast.NotIn))
            and isinstance(display, (ast.Tuple, ast.List, ast.Set))
            and all(
                isinstance(e, ast.Constant) and isinstance(e.value, _PLAIN) for e in display.elts
            )
        ):
            return None
        item = self.known(test.left)
        if not item or not isinstance(item[0], _PLAIN):
            return None
        found = any(e.value == item[0] for e in display.elts)  # type: ignore[attr-defined]
        return found if isinstance(op, ast.In) else not found

    def empty_member(self, test: ast.Compare) -> bool:
        """``x in self.ids`` (or ``not in``) where the namespace made ``self`` holds an empty
        container the test wrote in place (``ids=set()``: ``Obj.empty``) and nothing since
        may have put an item in it (``forget_empty``): nothing is in it, whatever ``x`` is.
        Where the test's values are followed (``CallContext.stated_locals``)."""
        container = test.comparators[0]
        if not (
            self.context.stated_locals
            and isinstance(test.ops[0], (ast.In, ast.NotIn))
            and self.is_self_attr(container)
        ):
            return False
        return self.known_empty(container.attr)  # type: ignore[attr-defined]

    def known_empty(self, name: str | None = None) -> bool:
        """Whether the field ``name`` (None: any field) is known empty (``Obj.empty``)."""
        if name is not None:
            held = self.consts.get(name)
            return isinstance(held, Obj) and held.empty
        return any(isinstance(v, Obj) and v.empty for v in self.consts.values())

    def forget_empty(self, names: Iterable[str] | None = None) -> None:
        """The fields of ``names`` (None: every field) no longer known empty: code used the
        container otherwise than to ask what is in it (``self.ids.add(r)``, ``f(self.ids)``),
        ran a method that may have, or was handed ``self``."""
        for name in self.consts.keys() if names is None else names:
            held = self.consts.get(name)
            if isinstance(held, Obj) and held.empty:
                self.consts[name] = attrs.evolve(held, empty=False)

    def asks_only(self, node: ast.AST) -> bool:
        """Whether ``node`` (a load of ``self.<field>``) is the container a membership test
        asks about (``x in self.ids``), which leaves it as it is."""
        parent = self.analyzer.parents(self.func).get(node)
        return (
            isinstance(parent, ast.Compare)
            and len(parent.ops) == 1
            and isinstance(parent.ops[0], (ast.In, ast.NotIn))
            and parent.comparators[0] is node
        )

    def forget_empty_in(self, loop: ast.For | ast.AsyncFor | ast.While) -> None:
        """Entering a loop: a later pass sees what the body does to a container known empty
        (``if r in self.ids: ...; self.ids.add(r)``), so where the loop's text uses such a
        field otherwise than in a membership test, calls a method on ``self`` or hands
        ``self`` on, none is known empty in it."""
        if not self.known_empty():
            return
        for node in walk(loop):
            if isinstance(node, ast.Call) and (
                _self_rooted(node.func, self.self_name)
                or any(
                    isinstance(a, ast.Name) and a.id == self.self_name
                    for a in (*node.args, *(k.value for k in node.keywords))
                )
            ):
                self.forget_empty()
                return
            if (
                self.is_self_attr(node)
                and node.attr in self.consts  # type: ignore[attr-defined]
                and not self.asks_only(node)
            ):
                self.forget_empty((node.attr,))  # type: ignore[attr-defined]

    @staticmethod
    def membership(op: ast.cmpop, item: object, container: object) -> bool | None:
        """``item in container`` where the test states both: a plain literal in a display of
        plain literals (``"weights" in ["kv_cache"]``), or a key of a dict display with
        literal keys."""
        if not isinstance(container, Obj) or isinstance(item, (Obj, EnumMember)):
            return None
        if container.members is not None:
            found = any(type(m) is type(item) and m == item for m in container.members)
        elif container.items is not None:
            found = container.keyed(item) is not None
        else:
            return None
        return found if isinstance(op, ast.In) else not found

    def iterations(self, node: ast.expr) -> int | None:
        """How many items iterating ``node`` yields, where the test's values state it: a
        container or array of known length (``values.length_of``), ``range`` of known ints,
        and ``enumerate``, ``reversed``, ``list``, ``tuple``, ``zip`` of such.  A loop over
        one with items runs its body (``Walker.guarded``'s ``runs``)."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            name, args = node.func.id, node.args
            if name in self.locals or name in self.params or name in self.module.functions:
                return None
            if any(isinstance(a, ast.Starred) for a in args):
                return None
            if name == "range" and 1 <= len(args) <= 3:
                bounds = [self.known(a) for a in args]
                if all(b and type(b[0]) is int for b in bounds) and (
                    len(bounds) < 3 or bounds[2][0] != 0
                ):
                    return len(range(*(b[0] for b in bounds)))  # type: ignore[misc]
                return None
            if name in ("enumerate", "reversed", "list", "tuple") and len(args) == 1:
                return self.iterations(args[0])
            if name == "zip" and args:
                counts = [self.iterations(a) for a in args]
                return None if None in counts else min(counts)  # type: ignore[type-var]
            return None
        known = self.known(node)
        length = length_of(known[0]) if known else ()
        if not length and known and _filled_holder(known[0]):
            return 1  # at least one (``Statements.narrow_filled``)
        return length[0] if length else None

    def type_verdict(self, call: ast.Call, state: frozenset[str] | None = None) -> bool | None:
        """``isinstance(x, dict)`` (a tuple of types too) where the test states what ``x``
        is: a literal, ``None``, a container display (``{"swa": metadata}``), a namespace,
        an object it built with the class named (``values.instance_of``).  A builtin's name
        must be the builtin (not shadowed by the module), and no name a local or a
        parameter; a class name is the one the module imports or defines.  Asked where
        the test's values are followed (``CallContext.stated_locals``), as the other rules
        on what the test states beyond literals: the stub audit's output is pinned."""
        if not (
            isinstance(call.func, ast.Name)
            and call.func.id == "isinstance"
            and len(call.args) == 2
            and not call.keywords
        ):
            return None
        spec = call.args[1]
        parts = spec.elts if isinstance(spec, ast.Tuple) else [spec]
        if not parts or not all(isinstance(p, ast.Name) for p in parts):
            return None
        names = tuple(p.id for p in parts)  # type: ignore[attr-defined]
        if any(n in self.locals or n in self.params for n in names):
            return None
        builtin_names = [n for n in names if n in dir(builtins)]
        if any(
            n in self.module.classes
            or n in self.module.functions
            or n in self.module.assigned
            or n in self.module.imports
            for n in builtin_names
        ):
            return None
        known = self.known(call.args[0])
        if not known:
            return None if state is None else self.typed_instance(call.args[0], names, state)
        verdict = instance_of(known[0], names)
        if verdict is None and self.no_tree_instance(known[0], names):
            return False
        return verdict

    def typed_instance(
        self, node: ast.expr, names: tuple[str, ...], state: frozenset[str]
    ) -> bool | None:
        """``isinstance(x, Cls)`` where ``x`` is a chain at which the call's namespaces hold
        an ``object.__new__`` stub of a class of the tree (``CallContext.typed``): true where
        one of ``names`` is a class of the tree in that class's MRO (an object is an instance
        of each class its MRO holds); not decided otherwise (a metaclass may widen it)."""
        chain = self.chain_of(node, state) if self.context.typed else None
        cls = self.typed_class(chain, state) if chain is not None else None
        if cls is None:
            return None
        mro = {c.qualname for c in self.index.mro(cls)[0]}
        for name in names:
            try:
                target = self.index.resolve(self.module, name, self.local_imports)
            except SourceError:
                continue
            if isinstance(target, ClassInfo) and target.qualname in mro:
                return True
        return None

    def no_tree_instance(self, value: object, names: tuple[str, ...]) -> bool:
        """Whether a literal ``value`` (``None``, a number, a string) is an instance of none
        of ``names``: builtin types it is not, and classes of the tree whose ``isinstance``
        is plain (``plain_class``).  ``isinstance(index_group, HiSparseGroup)`` with the
        test's ``index_group=None`` is false."""
        if value is not None and type(value) not in (int, float, str, bool):
            return False
        for name in names:
            if name in dir(builtins):
                kind = getattr(builtins, name)
                if not isinstance(kind, type) or isinstance(value, kind):
                    return False
                continue
            try:
                target = self.index.resolve(self.module, name, self.local_imports)
            except SourceError:
                return False
            if not isinstance(target, ClassInfo) or not self.plain_class(target):
                return False
        return True

    def plain_class(self, cls: ClassInfo) -> bool:
        """Whether instances of ``cls`` are only what its constructor builds: every class of
        its MRO is in the tree, none a ``Protocol`` (which a literal may satisfy), none with a
        metaclass other than ``ABCMeta`` or a hook that widens ``isinstance``."""
        chain, external = self.index.mro(cls)
        if external:
            return False
        for klass in chain:
            node = klass.node
            if any("Protocol" in ast.unparse(base) for base in node.bases):
                return False
            if any(
                kw.arg != "metaclass" or ast.unparse(kw.value) not in ("ABCMeta", "abc.ABCMeta")
                for kw in node.keywords
            ):
                return False
            hooks = ("__subclasshook__", "__instancecheck__")
            if any(
                isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name in hooks
                for stmt in node.body
            ):
                return False
        return True

    def branch(
        self, test: ast.expr, state: frozenset[str]
    ) -> tuple[bool | None, frozenset[str], frozenset[str]]:
        """Evaluate a branch condition once for ``if`` and ``x if c else y`` alike: its literal
        verdict (None when undecided) and the state each arm starts from (reads in the test,
        plus what ``hasattr`` guards establish on that arm)."""
        state = self.expr(test, state)
        on_true, on_false = self.guards(test, state)
        return self.truth(test, state), state | on_true, state | on_false

    def guards(
        self, test: ast.expr, state: frozenset[str]
    ) -> tuple[frozenset[str], frozenset[str]]:
        """Attributes that ``hasattr(self, "x")`` tests prove present when ``test`` is true
        and when it is false: ``if not hasattr(self, "_cache"): self._cache = ...`` followed
        by a read of ``self._cache`` needs nothing from the stub.  ``state``: what the fields
        of ``self`` hold there (a guard on ``self.cfg`` guards the stand-in it holds)."""
        if (
            isinstance(test, ast.Call)
            and isinstance(test.func, ast.Name)
            and test.func.id == "hasattr"
            and len(test.args) == 2
        ):
            if isinstance(test.args[0], ast.Name) and test.args[0].id == self.self_name:
                literal = literal_name(test.args[1])
                return (frozenset({literal}), frozenset()) if literal else _NO_GUARDS
            return self.chain_guard(test, state), frozenset()  # ``hasattr(metadata, "x")``
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            on_true, on_false = self.guards(test.operand, state)
            return on_false, on_true
        if isinstance(test, ast.BoolOp):
            parts = [self.guards(v, state) for v in test.values]
            if isinstance(test.op, ast.And):
                return frozenset().union(*(p[0] for p in parts)), frozenset()
            return frozenset(), frozenset().union(*(p[1] for p in parts))
        return _NO_GUARDS


def _filled_holder(value: object) -> bool:
    """A list or tuple of stand-ins the test built (an object whose element, ``ELEMENT``,
    the audit knows) that the code has shown true: it holds an item."""
    return isinstance(value, Obj) and value.truthy is True and bool(value.field(ELEMENT))
