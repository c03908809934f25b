"""A handler per statement kind (``stmt_<NodeName>``), and stores.

Each handler takes the state before the statement and returns the state after it (None: the
path ends there).  Kinds without a handler walk their child expressions (``stmt_other``).
"""

from __future__ import annotations

import ast

import attrs

from factories.analysis._walk import child_nodes, walk, walk_all
from factories.analysis.classes import FunctionRef, MemberKind, ModuleRef
from factories.analysis.readset._chains import ELEMENT, slot_link
from factories.analysis.readset._model import (
    HELD_ITEMS,
    WRITTEN_MARK,
    AttributeAccess,
    ParamAccess,
    State,
    meet,
    unaliased,
)
from factories.analysis.readset._returned import filtered_items
from factories.analysis.readset._syntax import as_load, handler, is_type_test, paired, sized
from factories.analysis.values import NotNone, Obj, Truth, compare, enum_member, truthy
from factories.errors import SourceError


class StatementHandlers:
    """The statement half of ``Walker`` (its state lives there)."""

    def stmt(self, node: ast.stmt, state: frozenset[str]) -> State:
        return handler(type(self), "stmt_", type(node))(self, node, state)

    def stmt_other(self, node: ast.stmt, state: frozenset[str]) -> State:
        for child in child_nodes(node):  # Expr, ...
            if isinstance(child, ast.expr):
                state = self.expr(child, state)
        return state

    def stmt_Assign(self, node: ast.Assign, state: frozenset[str]) -> State:
        state = self.expr(node.value, state)
        for target in node.targets:
            state = self.store(target, state, node.value)
        return state

    def stmt_AnnAssign(self, node: ast.AnnAssign, state: frozenset[str]) -> State:
        if node.value is None:
            return state
        state = self.expr(node.value, state)
        return self.store(node.target, state, node.value)

    def stmt_AugAssign(self, node: ast.AugAssign, state: frozenset[str]) -> State:
        state = self.expr(node.value, state)
        state = self.expr(as_load(node.target), state)
        return self.store(node.target, state, None)

    def stmt_Delete(self, node: ast.Delete, state: frozenset[str]) -> State:
        for target in node.targets:
            if self.is_self_attr(target):
                state = unaliased(state - {target.attr}, target.attr)  # type: ignore[attr-defined]
            else:
                state = self.expr(target, state)
        return state

    def stmt_If(self, node: ast.If, state: frozenset[str]) -> State:
        before = self.mark()
        verdict, when_true, when_false = self.branch(node.test, state)
        if verdict is None:
            verdict = self.ruled_out_return(node)
        if verdict is None:
            verdict = self.ruled_out_bare_return(node)
        if verdict is None and HELD_ITEMS in self.name_consts:
            verdict = self.ruled_out_empty(node)
        if verdict is None and self.entry and self.context.called_arms:
            verdict = self.called_arm(node)
        if verdict is True:
            return self.block(node.body, when_true)
        if verdict is False:
            return self.block(node.orelse, when_false)
        if is_type_test(node.test):
            self.analyzer.blocks.type_tested(node.body, node.orelse)
        new_guard = self.placed(before)
        if new_guard and self.context.stated_locals:
            self.rec.unprepared.extend(self.analyzer.blocks.arms(node.body, node.orelse))
        out = self.both_arms(node.body, when_true, node.orelse, when_false, new_guard)
        if out is not None and self.context.stated_locals:
            self.narrow_filled(node)
        return out

    def narrow_filled(self, node: ast.If) -> None:
        """``if not layers: raise ValueError(...)``: past it, the parameter ``layers`` is
        true, and where it holds the items of a list or tuple the test built (an object
        whose element, ``ELEMENT``, is a stand-in: the audit builds such a holder only for
        a display or a list the test grew with ``append``), true means it has an item, so a
        comprehension over it surely runs its first (``Decisions.iterations``).  Only where
        the ``if`` has no ``else``, its body surely leaves (ends in ``raise`` or ``return``,
        no ``break``/``continue``), and the function never binds the name again nor uses it
        but to test, size, index or iterate it (nothing it calls can empty it)."""
        test = node.test
        if node.orelse or not (
            isinstance(test, ast.UnaryOp)
            and isinstance(test.op, ast.Not)
            and isinstance(test.operand, ast.Name)
        ):
            return
        name = test.operand.id
        value = self.name_consts.get(name)
        if not (
            isinstance(value, Obj)
            and value.truthy is None
            and value.field(ELEMENT)
            and name in self.params
            and isinstance(node.body[-1], (ast.Raise, ast.Return))
            and not any(isinstance(n, (ast.Break, ast.Continue)) for n in walk_all(node.body))
            and _only_inspected(self.func, name)
        ):
            return
        self.name_consts[name] = attrs.evolve(value, truthy=True)

    def ruled_out_return(self, node: ast.If) -> bool | None:
        """The verdict the test's assertion on the analysed call's result gives an ``if`` one
        arm of which is only ``return K`` (``CallContext.returns``): that arm does not run
        where ``K`` is known and is not the value the test asserts (``None`` where it asserts
        only that the result is not ``None``).  Only the analysed call's
        own ``return`` is its result (not a method it calls)."""
        if not (self.entry and self.context.returns):
            return None
        expected = self.context.returns[0]
        for arm, verdict in ((node.body, False), (node.orelse, True)):
            if len(arm) == 1 and isinstance(arm[0], ast.Return) and arm[0].value is not None:
                known = self.known(arm[0].value) or empty_display(arm[0].value)
                if not known:
                    continue
                if isinstance(expected, Truth):
                    ruled_out = truthy(known[0]) is (not expected.value)
                elif isinstance(expected, NotNone):
                    ruled_out = known[0] is None
                else:
                    ruled_out = compare(ast.Eq(), known[0], expected) is False
                if ruled_out:
                    return verdict
        return None

    def ruled_out_empty(self, node: ast.If) -> bool | None:
        """The verdict of ``if not kept:`` (or ``if kept:``), a statement of the method's
        body, where ``kept`` is bound once, by a statement of the body before it, to ``[v
        for v in p.items if v.field]`` of a parameter ``p`` that holds, while the method
        runs, a list with an item whose ``field`` is true (``HELD_ITEMS``, the test's
        assertion on the analysed call's result: ``CallContext.result_items``), and the
        method only tests, sizes, indexes or iterates ``kept`` (nothing empties it): the
        list has an item."""
        test, negated = node.test, False
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test, negated = test.operand, True
        if not isinstance(test, ast.Name) or test.id in self.params:
            return None
        body = self.func.body
        at = next((i for i, stmt in enumerate(body) if stmt is node), None)
        if at is None:
            return None
        held: dict[str, set[tuple[str, str]]] = {}
        for parameter, items, field in self.name_consts[HELD_ITEMS]:  # type: ignore[union-attr]
            held.setdefault(parameter, set()).add((items, field))
        for stmt in body[:at]:
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
                and stmt.targets[0].id == test.id
            ):
                if filtered_items(stmt.value, held) and _only_inspected(
                    self.func, test.id, stmt.targets[0]
                ):
                    return not negated
                return None
        return None

    def ruled_out_bare_return(self, node: ast.If) -> bool | None:
        """The verdict the test's assertions after the analysed call give an ``if`` of the
        call's own body one arm of which is only a bare ``return`` (``CallContext.
        asserted_stores``): that arm does not run where the test asserts a field the call
        must have stored on a namespace of ``self`` and nothing before the ``return`` could
        have (``_leaves_unstored``)."""
        stores = self.context.asserted_stores
        if not (self.entry and stores and self.self_name):
            return None
        if isinstance(self.func, ast.AsyncFunctionDef) or self.analyzer.is_generator(self.func):
            return None  # the call only makes a coroutine or generator: its body has not run
        body = self.func.body
        at = next((i for i, stmt in enumerate(body) if stmt is node), None)
        if at is None:
            return None
        for arm, verdict in ((node.body, False), (node.orelse, True)):
            if (
                len(arm) == 1
                and isinstance(arm[0], ast.Return)
                and (arm[0].value is None or _is_none(arm[0].value))
                and _leaves_unstored(
                    [*body[:at], node.test], stores, self.context.nested, self.self_name
                )
            ):
                return verdict
        return None

    def called_arm(self, node: ast.If) -> bool | None:
        """The arm of an ``if`` of the analysed call's own body that alone can run a mock
        the test asserts was called (``CallContext.called_arms``), or None."""
        where = (node.lineno, node.col_offset)
        for line, column, arm in self.context.called_arms:
            if (line, column) == where:
                return arm
        return None

    def stmt_For(self, node: ast.For | ast.AsyncFor, state: frozenset[str]) -> State:
        state = self.expr(node.iter, state)
        state = self.store(node.target, state, None)
        self.element_bound(node, state)
        if self.context.stated_locals:
            self.forget_rebound(node)
            self.forget_empty_in(node)
        stated = self.context.stated_locals and isinstance(node, ast.For)
        count = self.iterations(node.iter) if stated else None
        items = self.container_items(node.iter, node.target) if stated else None
        if items is not None:
            name, root, at_least = items
            self.aliases[name] = root  # each item is one of the stand-ins returned
            self.name_consts.pop(name, None)
            count = at_least or count
        with self.guarded(loop=node, runs=bool(count)):
            self.block(node.body, state)
        if count:
            self.forget_rebound(node, fields=True)  # what the first pass bound is not the last's
        with self.guarded():
            return meet(state, self.block(node.orelse, state))

    stmt_AsyncFor = stmt_For

    def stmt_While(self, node: ast.While, state: frozenset[str]) -> State:
        if self.context.stated_locals:
            self.forget_rebound(node)
            self.forget_empty_in(node)
        state = self.expr(node.test, state)
        with self.guarded(loop=node):
            self.block(node.body, state)
        with self.guarded():
            return meet(state, self.block(node.orelse, state))

    def unpacked(self, target: ast.expr, held: str | None) -> None:
        """``req, blocks = <chain>`` (or a loop's ``for k, (req, blocks) in ...``) where the
        chain reaches a tuple the test wrote out (``CallContext.tuples``): each name holds
        the item at its position (``slot_link``).  Not past a starred name, whose items'
        positions the text does not settle; elsewhere what unpacking gives is not known."""
        if not (
            self.context.chains
            and held is not None
            and isinstance(target, (ast.Tuple, ast.List))
            and not any(isinstance(e, ast.Starred) for e in target.elts)
        ):
            return
        if held not in self.context.tuples:
            return
        for i, elt in enumerate(target.elts):
            path = f"{held}.{slot_link(i)}"
            if isinstance(elt, ast.Name):
                self.aliases[elt.id] = path
            else:
                self.unpacked(elt, path)

    def element_bound(self, node: ast.For | ast.AsyncFor, state: frozenset[str]) -> None:
        """``for layer in self.model.layers`` (or ``for i, layer in enumerate(...)``) over
        a chain on a stand-in: the loop's name holds an element of it (``ELEMENT``), as
        ``layer = self.model.layers[i]`` does."""
        if not self.context.chains:
            return
        iterated, target = node.iter, node.target
        if (
            isinstance(iterated, ast.Call)
            and isinstance(iterated.func, ast.Name)
            and iterated.func.id == "enumerate"
            and len(iterated.args) == 1
            and not iterated.keywords
            and isinstance(target, ast.Tuple)
            and len(target.elts) == 2
        ):
            iterated, target = iterated.args[0], target.elts[1]
        if (
            isinstance(iterated, ast.Call)
            and isinstance(iterated.func, ast.Attribute)
            and iterated.func.attr in ("items", "values")
            and not iterated.args
            and not iterated.keywords
        ):
            # ``for k, (req, blocks) in self.reqs.items()``: the values are its elements
            if iterated.func.attr == "items":
                if not (isinstance(target, ast.Tuple) and len(target.elts) == 2):
                    return
                target = target.elts[1]
            element = self.element_of(iterated.func.value, state)
        else:
            element = self.element_of(iterated, state)
        if isinstance(target, ast.Name) and element is not None:
            self.aliases[target.id] = element
        elif element is not None:
            self.unpacked(target, element)

    def element_of(self, iterated: ast.expr, state: frozenset[str]) -> str | None:
        """The chain an item of ``iterated`` stands for, where it is a chain on a stand-in
        (``self.layers``) or a name holding one (a parameter handed a list of them); a value
        of a keyed container (``.items()``, ``.values()``) is such an element too."""
        if not isinstance(iterated, (ast.Attribute, ast.Name)):
            return None
        chain = self.chain_of(iterated, state)
        if chain is None or (not chain[1] and not isinstance(iterated, ast.Name)):
            return None
        return ".".join((chain[0], *chain[1], ELEMENT))

    def container_items(self, iterated: ast.expr, target: ast.expr) -> tuple[str, str, int] | None:
        """``for k, item in box.items()`` or ``for item in box.values()`` over a container a
        replaced function returned (``containers``): the local each item is bound to, the
        root it stands for, how many items there surely are."""
        if not (
            isinstance(iterated, ast.Call)
            and isinstance(iterated.func, ast.Attribute)
            and isinstance(iterated.func.value, ast.Name)
            and not iterated.args
        ):
            return None
        held = self.containers.get(iterated.func.value.id)
        if held is None:
            return None
        if iterated.func.attr == "items":
            if not (isinstance(target, ast.Tuple) and len(target.elts) == 2):
                return None
            target = target.elts[1]
        elif iterated.func.attr != "values":
            return None
        return (target.id, *held) if isinstance(target, ast.Name) else None

    def _patchable_callee(self, value: ast.AST | None) -> str | None:
        """The text of the function ``value`` calls (``f``, ``mod.f``), where the test
        replaced functions with ones returning stand-ins (``CallContext.returned``) and the
        call names its function plainly; None otherwise."""
        if not (
            self.context.returned
            and isinstance(value, ast.Call)
            and isinstance(value.func, (ast.Name, ast.Attribute))
        ):
            return None
        return ast.unparse(value.func)

    def returned_container(self, value: ast.expr | None) -> tuple[str, int] | None:
        """The root and item count of the container a call of a replaced function returns
        (``CallContext.returned``), where ``value`` is such a call."""
        text = self._patchable_callee(value)
        if text is None:
            return None
        keys = {f"{self.module.name}.{text}"} if "." not in text else set()
        try:
            target = self.index.resolve(self.module, text, self.local_imports)
        except SourceError:
            target = None
        if isinstance(target, FunctionRef):
            keys.add(f"{target.module.name}.{target.node.name}")
        for key, root, count in self.context.returned:
            if key in keys and count >= 0:
                return root, count
        return None

    def returned_itself(self, value: ast.AST | None) -> str | None:
        """The root of the stand-in a call of a replaced function returns itself
        (``CallContext.returned`` with -1 items), where ``value`` is such a call: named as
        this module binds the function (``f()`` of the module the test patched, ``mod.f()``
        of a module it imports), not through where the function is defined, since a
        ``monkeypatch.setattr(mod, "f", ...)`` replaces only ``mod``'s name."""
        text = self._patchable_callee(value)
        if text is None:
            return None
        if "." not in text:
            if text in self.params or text in self.locals or text in self.local_imports:  # type: ignore[attr-defined]
                return None  # a name the function binds itself, not the module's replaced one
            key = f"{self.module.name}.{text}"
        else:
            owner, _, name = text.rpartition(".")
            try:
                target = self.index.resolve(self.module, owner, self.local_imports)
            except SourceError:
                return None
            if not isinstance(target, ModuleRef):
                return None
            key = f"{target.module.name}.{name}"
        for known, root, count in self.context.returned:
            if known == key and count < 0:
                return root
        return None

    def forget_rebound(
        self, loop: ast.For | ast.AsyncFor | ast.While, fields: bool = False
    ) -> None:
        """A loop's body (and a ``while``'s test) runs again after the body rebinds a local:
        a value known before the loop is not what a later iteration sees, so the locals the
        loop rebinds are unknown in it (and after it).  ``fields``: also the fields of
        ``self`` it stores, after a body walked as surely run (its first pass's values).
        Where locals keep what the test states (``CallContext.stated_locals``): the stub
        audit's output is pinned to the releases."""
        for name in self.analyzer.rebound(loop):
            base, _, attr = name.partition(".")
            if not attr:
                self.name_consts.pop(name, None)
            elif fields and base == self.self_name:
                self.consts.pop(attr, None)

    def stmt_Try(self, node: ast.Try, state: frozenset[str]) -> State:
        body_state = self.block(node.body, state)
        body_state = self.block(node.orelse, body_state) if body_state is not None else None
        result = body_state
        with self.guarded():
            for handler_ in node.handlers:
                result = meet(result, self.block(handler_.body, state))
        if body_state is None and result is not None and self.context.stated_locals:
            # The body never goes on past the ``try`` (it returns or raises on every path):
            # what follows runs only where a handler caught something, on some runs.
            self.certain = False
            self.chain = None
        if node.finalbody:
            final_in = result if result is not None else state
            final = self.block(node.finalbody, final_in)
            return None if result is None or final is None else final
        return result

    stmt_TryStar = stmt_Try

    def stmt_With(self, node: ast.With | ast.AsyncWith, state: frozenset[str]) -> State:
        for item in node.items:
            state = self.expr(item.context_expr, state)
            if item.optional_vars is not None:
                state = self.store(item.optional_vars, state, None)
        return self.block(node.body, state)

    stmt_AsyncWith = stmt_With

    def stmt_Return(self, node: ast.Return, state: frozenset[str]) -> State:
        if node.value is not None:
            state = self.expr(node.value, state)
        self.returns.append(self.known(node.value) if node.value is not None else (None,))
        chain = self.held_path(node.value, state) if node.value is not None else None
        self.return_chains.append(chain if chain is not None and "." in chain else None)
        self.returned = meet(self.returned, state)
        self.exits += 1
        return None

    def stmt_Raise(self, node: ast.Raise, state: frozenset[str]) -> State:
        for child in child_nodes(node):
            state = self.expr(child, state)
        # Else not what the test expects: a failure, not the test's path.
        if not self.context.patches_raise and not self.foreign_raise(node):
            self.raised = True
            if self.context.expect_raise:
                self.exits += 1
        return None

    def foreign_raise(self, node: ast.Raise) -> bool:
        """Whether ``node`` builds an exception of a class this module names (``raise
        ValueError(...)``, ``raise errors.Bad``) where the test expects a class its own
        module defines (``CallContext.test_exception``): never an instance of that class.
        Not a bare ``raise``, nor one of a name the function binds or is handed (a caught
        exception, a parameter, ``self.error``), nor a name the test patched, any of which
        may be the test's own exception."""
        if not self.context.test_exception or node.exc is None:
            return False
        target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        while isinstance(target, ast.Attribute):
            target = target.value
        if not isinstance(target, ast.Name):
            return False
        name = target.id
        if name in self.local_imports:
            return True  # ``from vllm.x import Bad`` inside the function: vLLM's class
        if name in self.locals or name in self.aliases or name in _bound_names(self.func):
            return False
        return not any(p.rpartition(".")[2] == name for p in self.context.patched_functions)

    def stmt_Break(self, node: ast.Break | ast.Continue, state: frozenset[str]) -> State:
        self.jumps += 1
        return None

    stmt_Continue = stmt_Break

    def stmt_Match(self, node: ast.Match, state: frozenset[str]) -> State:
        state = self.expr(node.subject, state)
        result: State = state  # no case may match
        with self.guarded():
            for case in node.cases:
                case_state = state if case.guard is None else self.expr(case.guard, state)
                result = meet(result, self.block(case.body, case_state))
        return result

    def stmt_FunctionDef(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, state: frozenset[str]
    ) -> State:
        """A nested def may run later or never: its reads count, its writes do not."""
        returned, returns = self.returned, list(self.returns)
        with self.guarded(keep_exits=True):
            for child in node.body:
                self.stmt(child, state)
        self.returned, self.ended, self.returns = returned, False, returns
        return state

    stmt_AsyncFunctionDef = stmt_ClassDef = stmt_FunctionDef

    def stmt_Pass(self, node: ast.stmt, state: frozenset[str]) -> State:
        return state

    stmt_Import = stmt_ImportFrom = stmt_Global = stmt_Nonlocal = stmt_Pass

    def stmt_Assert(self, node: ast.Assert, state: frozenset[str]) -> State:
        """The message runs only when the assertion fails, and then the test fails anyway.
        Where the test's values are followed (``CallContext.stated_locals``) and make the
        assertion false, it is recorded (``Walker.false_asserts``): an arm of an undecided
        ``if`` that surely reaches it fails the test (``Walker.surely_fails``)."""
        state = self.expr(node.test, state)
        if (
            self.context.stated_locals
            and not self.context.expect_raise
            and self.truth(node.test) is False
        ):
            self.false_asserts.add(id(node))
        return state | self.guards(node.test, state)[0]

    # -- stores -------------------------------------------------------------------------

    def stated_field(self, value: ast.expr | None) -> bool:
        """Whether ``value`` is a field of an object the test built and states
        (``metadata.num_prefills`` of ``Metadata(num_prefills=0)``, ``self.window`` the test
        set to ``None``): a value the test gave, not a local that later code may change as a
        literal ``n = 0`` counter is; also a field of ``self`` whose value the walk knows
        (``index_group = self.index_group`` of a stand-in's ``index_group=None``)."""
        if self.is_self_attr(value):
            return value.attr in self.consts  # type: ignore[union-attr]
        return isinstance(value, ast.Attribute) and bool(
            (owner := self.known(value.value)) and isinstance(owner[0], Obj)
        )

    def bound_literal(self, value: ast.expr | None) -> bool:
        """Whether ``value`` is a literal (``cache = None``, ``n = 0``) or an enum member
        (``route = Route.PLAIN``) the code binds a local to.  Where the test's values are
        followed (``CallContext.stated_locals``), a loop forgets the locals it rebinds and a
        branch those either arm rebinds, so one bound on the call's straight line holds it
        until the code binds it again, and decides the branches it guards
        (``if cache is not None:`` after ``cache = None``)."""
        return isinstance(value, ast.Constant) or (
            isinstance(value, ast.Attribute) and enum_member(value) is not None
        )

    def stored_value(self, name: str, value: ast.expr) -> None:
        """``self.<name> = value`` on the real object a constructor builds
        (``CallContext.real_self``), or where the test's values are followed
        (``CallContext.stated_locals``: a namespace made ``self``), on every run: a value the
        test states (a literal, a field of an object it built, the object itself, what a
        predicate returns for them), or the verdict of a condition over such values
        (``self.off = self.mode == "off"``), is what the field holds from here on, and
        decides the branches that test it as a stub's literal field does."""
        known = self.known(value)
        if known:
            self.consts[name] = known[0]
        elif isinstance(value, (ast.BoolOp, ast.Compare, ast.UnaryOp)):
            verdict = self.truth(value)
            if verdict is not None:
                self.consts[name] = verdict

    def stored_verdict(self, name: str, value: ast.expr) -> None:
        """``with_decode = runner.max_num_reqs >= 2``: a local bound to a condition the
        test's values decide (a comparison, ``not``) holds that verdict, one bound to an
        ``and``/``or`` the operand it evaluates to (``operand_value``), and decides the
        branches it guards as the condition would in their place.
        Only where the test states the values (``CallContext.stated_locals``), and only on
        the call's straight line: a value bound on some runs is none the others see."""
        if isinstance(value, ast.BoolOp):
            known = self.operand_value(value)
            if known:
                self.name_consts[name] = known[0]
        elif isinstance(value, ast.Compare) or (
            isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not)
        ):
            verdict = self.truth(value)
            if verdict is not None:
                self.name_consts[name] = verdict

    def operand_value(self, node: ast.BoolOp) -> tuple[object] | tuple[()]:
        """The value ``a and b``/``a or b`` evaluates to, as Python picks it: the first
        operand that decides (false for ``and``, true for ``or``), else the last; known only
        where each operand up to it is (``self.quant_config and ...`` with a ``None``
        ``quant_config`` is ``None``)."""
        deciding = not isinstance(node.op, ast.And)
        for operand in node.values:
            known = self.known(operand)
            if not known and (
                isinstance(operand, ast.Compare)
                or (isinstance(operand, ast.UnaryOp) and isinstance(operand.op, ast.Not))
            ):
                verdict = self.truth(operand)  # a comparison evaluates to a bool
                known = (verdict,) if verdict is not None else ()
            if not known:
                return ()
            if operand is node.values[-1] or truthy(known[0]) is deciding:
                return known
            if truthy(known[0]) is None:
                return ()
        return ()

    def restate_field(self, target: ast.Attribute, value: ast.expr | None) -> None:
        """``self.cfg.on = v``, ``metadata.n = v``: the known object the chain's root holds
        (a stub's field, a parameter or local the test states) holds ``v`` there from here
        on where it is known and the store runs on every run, else nothing known, as the
        field a walk stores on ``self`` does.  Where the test's values are followed
        (``stated_locals``): the stub audit's output is pinned to the releases."""
        path: list[str] = []
        node: ast.expr = target
        while isinstance(node, ast.Attribute) and not self.is_self_attr(node):
            path.append(node.attr)
            node = node.value
        known = self.known(value) if value is not None and self.certain else ()
        if self.is_self_attr(node):
            field = node.attr  # type: ignore[attr-defined]
            if isinstance(self.consts.get(field), Obj):
                self.consts[field] = _restated(self.consts[field], path[::-1], known)
        elif isinstance(node, ast.Name) and isinstance(self.name_consts.get(node.id), Obj):
            self.name_consts[node.id] = _restated(self.name_consts[node.id], path[::-1], known)

    def restores(self, value: ast.expr | None, path: str) -> bool:
        """``runner.field = saved`` where ``saved = runner.field`` was bound before any write
        replaced that chain (``saved``): the stand-in's own object is back, so what is read
        under it is the stand-in's again (a save-and-restore around a temporary value)."""
        return (
            isinstance(value, ast.Name)
            and value.id in self.saved
            and self.aliases.get(value.id) == path
        )

    def store(
        self, target: ast.expr, state: frozenset[str], value: ast.expr | None
    ) -> frozenset[str]:
        if self.is_self_attr(target):
            name = target.attr  # type: ignore[attr-defined]
            member = self.index.lookup(self.cls, name) if not self.context.bare_self else None
            if member is not None and member.kind is MemberKind.PROPERTY:
                if member.setter is not None:
                    out = self.follow(member, state, body=member.setter).state
                    return out if out is not None else state
                return state
            self.rec.writes.append(AttributeAccess(name, self.loc(target), self.qualname))
            self.consts.pop(name, None)
            if (
                (self.context.real_self or self.context.stated_locals)
                and self.certain
                and value is not None
            ):
                self.stored_value(name, value)
            return self.field_stored(target, value, state | {name})
        if isinstance(target, (ast.Tuple, ast.List)):
            parts = (
                paired(target, value) if self.context.stated_locals or self.context.chains else None
            )
            for i, elt in enumerate(target.elts):
                state = self.store(elt, state, parts[i] if parts else None)
            if not (parts and any(p is not None for p in parts)):
                self.unpacked(target, self.held_path(value, state) if value is not None else None)
            return state
        if isinstance(target, ast.Starred):
            return self.store(target.value, state, None)
        if isinstance(target, ast.Name):
            self.name_consts.pop(target.id, None)
            value_known = self.known(value) if value is not None else ()
            if (
                value_known
                and self.certain
                and (
                    isinstance(value_known[0], Obj)
                    or sized(value) is not None
                    or (
                        self.context.stated_locals
                        and (
                            self.stated_field(value)
                            or self.bound_literal(value)
                            or isinstance(value, ast.Await)  # an ``AsyncMock``'s stated value
                        )
                    )
                    or isinstance(value, ast.Call)  # a predicate's or a stated lambda's value
                )
            ):
                # ``meta = attn_metadata.prefill``, ``num_reqs = idx_mapping.shape[0]``,
                # ``n = metadata.num_prefills`` of a ``Metadata(num_prefills=0)`` the test built,
                # ``cache = None`` on the straight line, ``d = is_decode(metadata)`` it decides
                self.name_consts[target.id] = value_known[0]
            elif (
                (self.context.stated_locals or self.context.chains)
                and self.certain
                and value is not None
            ):
                self.stored_verdict(target.id, value)
            held = self.returned_container(value)
            if held is not None:
                self.containers[target.id] = held
            else:
                self.containers.pop(target.id, None)
            self.maybe_roots.pop(target.id, None)
            path = self.held_path(value, state) if value is not None else None
            if path is not None:
                self.aliases[target.id] = path
                self.saved.discard(target.id)
                if not replaced(state, path):
                    self.saved.add(target.id)
            else:
                self.saved.discard(target.id)
                self.aliases.pop(target.id, None)
                if target.id in self.params:
                    self.shadowed.add(target.id)
            return state
        if isinstance(target, ast.Attribute):
            if self.context.stated_locals:
                self.restate_field(target, value)
            path = self.param_path(target)
            if path is not None:
                self.rec.params.append(ParamAccess(path, self.loc(target), write=True))
                if self.restores(value, path):
                    return state - {WRITTEN_MARK + path}
                return self.chain_written(target, state)
            return self.chain_written(target, self.expr(target.value, state))
        if isinstance(target, ast.Subscript):
            state = self.expr(target.value, state)
            return self.expr(target.slice, state)
        return state


def _restated(obj: Obj, path: list[str], known: tuple[object] | tuple[()]) -> Obj:
    """``obj`` with the field at ``path`` (a chain of fields below it) holding ``known``'s
    value, or no known value."""
    if not path:
        return obj
    name, rest = path[0], path[1:]
    kept = tuple((k, v) for k, v in obj.fields if k != name)
    current = obj.field(name)
    if rest:
        if not (current and isinstance(current[0], Obj)):
            return attrs.evolve(obj, fields=kept) if current else obj
        return attrs.evolve(obj, fields=(*kept, (name, _restated(current[0], rest, known))))
    return attrs.evolve(obj, fields=(*kept, (name, known[0])) if known else kept)


def empty_display(node: ast.expr) -> tuple[Obj] | tuple[()]:
    """``(Obj,)`` of no items for an empty list, tuple, set or dict display (``return []``):
    false, whatever it holds later, where the test asserts the result has items."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and not node.elts:
        return (Obj(truthy=False, length=0),)
    if isinstance(node, ast.Dict) and not node.keys:
        return (Obj(truthy=False, length=0),)
    return ()


def replaced(state: frozenset[str], path: str) -> bool:
    """Whether the walk wrote ``path`` or a link above it on every path so far."""
    parts = path.split(".")
    return any(
        WRITTEN_MARK + ".".join(parts[:length]) in state for length in range(2, len(parts) + 1)
    )


def _bound_names(func: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Every parameter of ``func`` (``self`` too) and every name an ``except ... as`` in it
    binds: the names a ``raise`` may re-raise a caller's or the test's exception by."""
    args = func.args
    names = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    names |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    names |= {n.name for n in walk(func) if isinstance(n, ast.ExceptHandler) and n.name}
    return names


def _only_inspected(func: ast.AST, name: str, bound: ast.AST | None = None) -> bool:
    """Whether ``func`` uses ``name`` only to test, size, index or iterate it (``not name``,
    ``len(name)``, ``name[i]``, ``for x in name``, a comprehension over it), never binding
    (but at ``bound``), deleting or handing it on, nor calling a method on it."""
    for parent in walk(func):
        for child in child_nodes(parent):
            if isinstance(child, (ast.Global, ast.Nonlocal)) and name in child.names:
                return False
            if isinstance(child, ast.arg) and child.arg == name and parent is not func.args:
                return False  # a nested function's or lambda's own parameter of that name
            if not (isinstance(child, ast.Name) and child.id == name):
                continue
            if not isinstance(child.ctx, ast.Load):
                if child is bound:
                    continue
                return False
            inspected = (
                (isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not))
                or (isinstance(parent, (ast.If, ast.While)) and parent.test is child)
                or (isinstance(parent, ast.Subscript) and parent.value is child)
                or (isinstance(parent, (ast.For, ast.comprehension)) and parent.iter is child)
                or (
                    isinstance(parent, ast.Call)
                    and isinstance(parent.func, ast.Name)
                    and parent.func.id == "len"
                    and parent.args == [child]
                )
            )
            if not inspected:
                return False
    return True


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


#: Calls that set or reach attributes by a name or a mapping they are handed.
_REFLECTIVE = frozenset({"setattr", "delattr", "__setattr__", "vars", "exec", "eval", "globals"})


def _leaves_unstored(
    nodes: list[ast.AST],
    stores: frozenset[tuple[str, str]],
    nested: frozenset[str],
    self_name: str,
) -> bool:
    """Whether running ``nodes`` (the statements before an ``if``, and its test) surely
    stores none of the names of ``stores`` on the namespaces under their fields of ``self``
    (or under any field the test set a stand-in on, ``nested``): no store (or ``del``) of
    an attribute of such a name, no nested def, lambda or class, no reflective call
    (``setattr``, ``vars``), no method called on ``self`` itself, no compound statement
    (whose bindings this scan does not follow), and no call handed ``self`` or anything
    reached through those fields (``self.<field>``, a local bound to an expression that
    holds one), as an argument or as the object whose method it calls."""
    fields = {field for field, _ in stores} | nested
    names = {name for _, name in stores}
    held: set[str] = set()

    def reaches(expr: ast.AST) -> bool:
        for sub in walk(expr):
            if isinstance(sub, ast.Name) and (sub.id in held or sub.id == self_name):
                if sub.id in held:
                    return True
                if not _is_value_of_attribute(sub, expr):
                    return True
            if (
                isinstance(sub, ast.Attribute)
                and isinstance(sub.value, ast.Name)
                and sub.value.id == self_name
                and sub.attr in fields
            ):
                return True
        return False

    for node in nodes:
        for sub in walk(node):
            if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                return False
            if isinstance(sub, ast.Attribute) and not isinstance(sub.ctx, ast.Load):
                if sub.attr in names:
                    return False
            if isinstance(sub, ast.Call):
                func = sub.func
                if getattr(func, "id", getattr(func, "attr", "")) in _REFLECTIVE:
                    return False
                if isinstance(func, ast.Attribute):
                    if isinstance(func.value, ast.Name) and func.value.id == self_name:
                        return False  # a method of ``self``: it may store anything there
                    if reaches(func.value):
                        return False
                elif reaches(func):
                    return False
                if any(reaches(a) for a in (*sub.args, *(k.value for k in sub.keywords))):
                    return False
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None:
            if reaches(node.value):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                held.update(n.id for t in targets for n in walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, ast.stmt) and not isinstance(node, _SIMPLE):
            return False  # a compound statement's bodies bind names this scan does not track
    return True


#: Statements with no body of their own.
_SIMPLE = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Pass, ast.Assert)


def _is_value_of_attribute(name: ast.Name, root: ast.AST) -> bool:
    """Whether ``name`` is the object of an attribute load within ``root`` (``self.x``)."""
    for sub in walk(root):
        if isinstance(sub, ast.Attribute) and sub.value is name:
            return True
    return False
