"""A handler per expression kind (``expr_<NodeName>``), and reads of ``self``.

Each handler takes the state before the expression and returns it after (an expression never
ends a path by itself; a call that always raises marks ``ended`` instead).  Kinds without a
handler walk their children in order (``expr_other``).
"""

from __future__ import annotations

import ast

from factories.analysis._walk import child_nodes
from factories.analysis.classes import ClassInfo, MemberKind
from factories.analysis.readset._model import AttributeAccess, ParamAccess, State
from factories.analysis.readset._returned import stores_as_given
from factories.analysis.readset._syntax import handler
from factories.errors import SourceError

# What every instance of a class without ``__slots__`` has, whatever its ``__init__`` did.
_OBJECT_ATTRIBUTES = frozenset(dir(object)) | {"__dict__", "__weakref__", "__module__"}
# Builtins that take at least the first item of an iterable they are handed (``any`` and
# ``all`` stop early, but never before it).
_CONSUMERS = frozenset(
    {"any", "all", "list", "tuple", "set", "frozenset", "sorted", "sum", "min", "max", "dict"}
)


class ExpressionHandlers:
    """The expression half of ``Walker`` (its state lives there)."""

    def expr(self, node: ast.expr, state: frozenset[str]) -> frozenset[str]:
        return handler(type(self), "expr_", type(node))(self, node, state)

    def expr_other(self, node: ast.expr, state: frozenset[str]) -> frozenset[str]:
        for child in child_nodes(node):
            if isinstance(child, ast.expr):
                state = self.expr(child, state)
            elif isinstance(child, ast.comprehension):
                state = self.expr(child.iter, state)
                for cond in child.ifs:
                    state = self.expr(cond, state)
        return state

    def expr_Attribute(self, node: ast.Attribute, state: frozenset[str]) -> frozenset[str]:
        if not isinstance(node.ctx, ast.Load):
            return self.expr_other(node, state)
        if self.is_self_attr(node):
            out = self.read_attr(node.attr, node, state)
            return out if out is not None else state
        path = self.param_path(node)
        if path is not None:
            self.rec.params.append(ParamAccess(path, self.loc(node), write=False))
            self.chain_attribute(node, state)
            return state
        if self.maybe_attribute(node, state):
            return state
        if isinstance(node.value, (ast.Attribute, ast.Subscript)) and self.chain_attribute(
            node, state
        ):
            # ``self.mla_dims.v_head_dim``; ``self.model.layers[i].ffn``, a field of an element
            # of a stand-in's container, whose subscript (and what is below it) runs too
            base = node.value
            while isinstance(base, ast.Attribute) and not self.is_self_attr(base):
                base = base.value
            return self.expr(base, state)
        if isinstance(node.value, ast.Name) and self.installed(node.value.id):
            self.chain_attribute(node, state)  # ``current_platform.x``: a global the test set
        return self.expr(node.value, state)

    def expr_Name(self, node: ast.Name, state: frozenset[str]) -> frozenset[str]:
        if self.param_path(node) is not None and isinstance(node.ctx, ast.Load):
            root = self.aliases.get(node.id, node.id)
            self.rec.params.append(ParamAccess(root, self.loc(node), write=False))
        return state

    def expr_Call(self, node: ast.Call, state: frozenset[str]) -> frozenset[str]:
        if self.context.stated_locals and self.consumes_first(node):
            self.consumed.add(id(node.args[0]))
        held = self.asserted_fields(node) if self.context.result_fields and self.entry else {}
        if not held:
            return self.call(node, state)
        before = self.asserted_locals
        self.asserted_locals = {**before, **held}
        try:
            return self.call(node, state)
        finally:
            self.asserted_locals = before

    def asserted_fields(self, node: ast.Call) -> dict[str, object]:
        """The locals ``node`` hands a field of the object the analysed call returns, and
        the value the test asserts that field holds (``CallContext.result_fields``): what
        each held when ``node`` ran, as the test passes (``_returned``)."""
        found = self.analyzer.returned_build(self.func)
        if found is None or found[0] is not node:
            return {}
        root = node.func
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name) or root.id in self.locals or root.id in self.params:
            return {}
        try:
            cls = self.index.resolve(self.module, ast.unparse(node.func), self.local_imports)
        except SourceError:
            return {}
        if not isinstance(cls, ClassInfo):
            return {}
        asserted = dict(self.context.result_fields)
        held: dict[str, object] = {}
        for local, fields in found[1].items():
            for field in fields:
                if field in asserted and stores_as_given(self.index, cls, field):
                    held[local] = asserted[field]
        return held

    def consumes_first(self, node: ast.Call) -> bool:
        """Whether ``node`` is a builtin that takes at least the first item of the generator
        expression it is handed alone (``any(l.x for l in layers)``, ``list(...)``,
        ``max(...)``): that item's part runs wherever the generator yields one.  Not a name
        this code binds itself."""
        func = node.func
        return (
            isinstance(func, ast.Name)
            and func.id in _CONSUMERS
            and len(node.args) == 1
            and not node.keywords
            and isinstance(node.args[0], ast.GeneratorExp)
            and func.id not in self.locals
            and func.id not in self.params
            and func.id not in self.module.functions
            and func.id not in self.module.imports
            and func.id not in self.local_imports
        )

    def expr_Await(self, node: ast.Await, state: frozenset[str]) -> frozenset[str]:
        state = self.expr(node.value, state)
        if self.context.detached and not (
            self.context.stated_locals and self.awaited_mock(node) is not None
        ):
            # a task the test may cancel while it waits here (an ``AsyncMock`` the test
            # built does not suspend: its await runs through)
            self.certain = False
        return state

    def expr_Lambda(self, node: ast.Lambda, state: frozenset[str]) -> frozenset[str]:
        with self.guarded():
            self.expr(node.body, state)
        return state

    def expr_ListComp(
        self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp, state
    ) -> frozenset[str]:
        """The first iterable runs; the rest runs once per element, maybe never.  A target
        bound to the items of a chain on a stand-in stands for an element of it
        (``[layer.x for layer in layers]``), in the comprehension only; so does one bound to
        the items of a container a replaced function returned (``for layer in
        layers.values()``: ``container_items``)."""
        state = self.expr(node.generators[0].iter, state)
        saved = dict(self.aliases)
        runs = False
        for i, gen in enumerate(node.generators):
            element = self.element_of(gen.iter, state) if self.context.chains else None
            items = None
            if element is None and self.context.stated_locals:
                items = self.container_items(gen.iter, gen.target)
                element = items[1] if items is not None else None
            if i == 0 and self.surely_taken(node):
                runs = bool((items[2] if items is not None else 0) or self.iterations(gen.iter))
            if isinstance(gen.target, ast.Name):
                if element is not None:
                    self.aliases[gen.target.id] = element
                else:
                    self.aliases.pop(gen.target.id, None)
        try:
            self.comprehension_parts(node, state, runs)
        finally:
            self.aliases.clear()
            self.aliases.update(saved)
        return state

    def surely_taken(
        self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp
    ) -> bool:
        """Whether the first item a comprehension's one iterable yields surely runs its
        part, where the test's values are followed: no condition, no second iterable, and
        built whole (a list, set or dict comprehension) or taken by a builtin that takes
        its first item (``consumes_first``)."""
        return (
            bool(self.context.stated_locals)
            and len(node.generators) == 1
            and not node.generators[0].ifs
            and not node.generators[0].is_async
            and (not isinstance(node, ast.GeneratorExp) or id(node) in self.consumed)
        )

    def comprehension_parts(
        self,
        node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp,
        state,
        runs: bool = False,
    ) -> None:
        """The parts of a comprehension past its first iterable, each run maybe never; on
        the walk's straight line (``runs``) where its iterable surely yields an item
        (``Decisions.iterations``, a returned container's known items) and the first one
        surely runs them (``surely_taken``)."""
        with self.guarded(runs=runs):
            for gen in node.generators[1:]:
                self.expr(gen.iter, state)
            for gen in node.generators:
                for cond in gen.ifs:
                    self.expr(cond, state)
            for part in (
                getattr(node, "elt", None),
                getattr(node, "key", None),
                getattr(node, "value", None),
            ):
                if part is not None:
                    self.expr(part, state)

    expr_SetComp = expr_GeneratorExp = expr_DictComp = expr_ListComp

    def expr_IfExp(self, node: ast.IfExp, state: frozenset[str]) -> frozenset[str]:
        verdict, when_true, when_false = self.branch(node.test, state)
        if verdict is True:
            return self.expr(node.body, when_true)
        if verdict is False:
            return self.expr(node.orelse, when_false)
        with self.guarded():
            return self.expr(node.body, when_true) & self.expr(node.orelse, when_false)

    def expr_BoolOp(self, node: ast.BoolOp, state: frozenset[str]) -> frozenset[str]:
        """``a and b``/``a or b`` as Python runs it: an operand runs only when the ones before
        it did not decide the result, so an operand after a known-false ``and`` (known-true
        ``or``) operand is not read; only the first operand's writes are certain.  An
        operand after one that reads a field the stub lacks runs as surely as that one: the
        stub fails there already, and the condition was written with both in mind
        (``self.owns_indexer or meta.epoch != self.index_epoch``, both new)."""
        first, *rest = node.values
        since = self.mark()
        out = self.expr(first, state)
        current, previous = out, first
        is_and = isinstance(node.op, ast.And)
        was, chain = self.certain, self.chain
        for value in rest:
            verdict = self.truth(previous)
            if verdict is (not is_and):
                break
            if verdict is None and not self.placed(since):
                self.certain = False  # this operand runs on some runs only
            since = self.mark()
            current = current | self.guards(previous, current)[0 if is_and else 1]
            current = self.expr(value, current)
            previous = value
        self.certain, self.chain = was, chain
        return out

    # -- self and parameters ------------------------------------------------------------

    def is_self_attr(self, node: ast.AST) -> bool:
        return (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == self.self_name
        )

    def param_path(self, node: ast.AST | None) -> str | None:
        """``metadata.prefill.x`` for an attribute chain rooted at a parameter or its alias."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        if node.id in self.aliases:
            root = self.aliases[node.id]
        elif node.id in self.params and node.id not in self.shadowed:
            root = node.id
        else:
            return None
        return ".".join([root] + list(reversed(parts)))

    def as_given(
        self,
        member,
        state: frozenset[str],
        aliases: dict[str, str] | None = None,
        params: dict[str, object] | None = None,
    ) -> None:
        """A method or property a namespace made ``self`` lacks (``CallContext.bare_self``),
        walked as it runs once the test gives the namespace one (``ns.m = lambda:
        Cls.m(ns)``), with what the call binds (``aliases``, ``params``): what it reads is
        off the path the test takes now, so on no certain path and in no block the test
        prepared."""
        read_before = len(self.rec.reads)
        with self.guarded():
            walked = self.follow(member, state, aliases=aliases, params=params)
        if self.context.stated_locals and self.known_empty():  # what it read it may fill
            read = {r.name for r in self.rec.reads[read_before:]}
            self.forget_empty(None if walked.skipped else read)

    def read_attr(self, name: str, node: ast.AST, state: frozenset[str]) -> State:
        """``self.<name>`` read here: required unless written, universal or defined by the
        class (only where ``self`` is an instance of it: a namespace made ``self`` holds none
        of its members, ``CallContext.bare_self``); a property is followed into its getter."""
        access = AttributeAccess(name, self.loc(node), self.qualname, self.certain, self.chain)
        self.rec.reads.append(access)
        if self.known_empty(name) and not self.asks_only(node):
            self.forget_empty((name,))  # ``self.ids.add(r)`` may fill an empty container
        if name in state or name in _OBJECT_ATTRIBUTES:
            return state
        member = self.index.lookup(self.cls, name)
        if self.context.bare_self:  # a namespace has none of the class's members
            self.rec.required.append(access)
            if member is not None and member.kind is MemberKind.PROPERTY:
                self.as_given(member, state)
            return state
        if member is None:
            if not self.context.real_self:  # a real object's own business
                self.rec.required.append(access)
            return state
        if member.kind is MemberKind.PROPERTY:
            read_before = len(self.rec.reads)
            walked = self.follow(member, state)
            if self.context.stated_locals and self.known_empty():  # what it read it may fill
                read = {r.name for r in self.rec.reads[read_before:]}
                self.forget_empty(None if walked.skipped else read)
            return walked.state if walked.state is not None else state
        return state
