"""What a test module states about a call's result and arguments, for the stand-in audit.

A test that asserts the result of a call says which way the call went (``CallContext.returns``:
an early ``return K`` whose ``K`` is not the asserted value is not the test's path).  Tests
spell the asserted value and the arguments as plain literals, but also as arithmetic over
names they bound once (``assert split(ns, r, 3 * block_size) == 2 * block_size``), and they
assert a result through the local it was bound to (``n = split(...)`` then ``assert n ==
32``).  This module answers both, and only where the text leaves one value:

- ``TestNames.resolve``: the expression a name stands for where the module binds it exactly
  once, before the use, on the straight line of the function (or at the module's top level
  for a module constant); any other binding of the name (a loop target, an augmented
  assignment, a branch, a parameter, a nested scope) leaves it unknown.
- ``stated``: a plain value (``int``, ``str``, ``bool``, ``None``) of a test expression:
  ``values.test_value`` with integer arithmetic (``+ - * // %``, unary minus) over such values.
- ``assert_states``: what one ``assert`` states an expression is (each operand of an
  asserted ``and`` too, and ``x is not None``: ``values.NotNone``).
- ``result_asserts``: the ``assert``s on the local a call's result is bound to, that run
  whenever the binding does (later statements of the same block, with no ``return``,
  ``break``, ``continue`` or rebinding of the local before them), on the local itself
  (``assert n == 32``) or on one field of it (``assert metadata.has_persistent_metadata``);
  ``result_item_asserts``: those that state a field of an item of one of its list fields
  true (``assert metadata.requests[0].can_save``).

The stub audit does not use any of it: its output is pinned to the releases.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from factories.analysis._walk import child_nodes, link_parents, statements
from factories.analysis.readset._syntax import compared_to_true
from factories.analysis.values import NotNone, Truth, test_value

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_SCOPES = (*_FUNCTIONS, ast.ClassDef)
_PLAIN = (int, str, bool, type(None))
#: How many names and operators one stated value looks through.
_MAX_DEPTH = 8


class TestNames:
    """Which expression a name of one test module stands for, where its text binds it once.
    Parent links and each scope's bindings are computed once per scope asked about."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self._parents: dict[ast.AST, ast.AST] = {}
        self._linked: set[int] = set()
        self._bindings: dict[int, dict[str, list[ast.AST]]] = {}

    def link(self, roots: Iterable[ast.AST]) -> None:
        """Record parents below ``roots`` (the top-level statements a question is about)."""
        for root in roots:
            if id(root) not in self._linked:
                self._linked.add(id(root))
                link_parents(root, self._parents)

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self._parents.get(node)

    def scope_of(self, node: ast.AST) -> ast.AST:
        """The innermost function or class around ``node`` (its parents linked), else the
        module."""
        current = self._parents.get(node)
        while current is not None and not isinstance(current, _SCOPES):
            current = self._parents.get(current)
        return current if current is not None else self.tree

    def bindings(self, scope: ast.AST) -> dict[str, list[ast.AST]]:
        """Every node that binds each name in ``scope``'s own namespace: not what a nested
        scope binds for itself, but what it rebinds there (``global``, ``nonlocal``),
        counted as a binding (which only ever leaves a name unknown)."""
        key = id(scope)
        if key not in self._bindings:
            found: dict[str, list[ast.AST]] = {}
            body = scope.body if isinstance(scope, (ast.Module, *_SCOPES[:2])) else []
            todo: list[ast.AST] = list(body)
            for node in todo:
                for name in _bound_names(node):
                    found.setdefault(name, []).append(node)
                if isinstance(node, _SCOPES):
                    # Statements only: a ``global`` is one, and no expression holds one.
                    nested = [
                        n for n in statements(node) if isinstance(n, (ast.Global, ast.Nonlocal))
                    ]
                    for rebinding in nested:
                        for name in rebinding.names:
                            found.setdefault(name, []).append(rebinding)
                    todo.extend(node.decorator_list if not isinstance(node, ast.Lambda) else ())
                    continue
                todo.extend(child_nodes(node))
            if isinstance(scope, _FUNCTIONS):
                args = scope.args
                for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs):
                    found.setdefault(arg.arg, []).append(arg)
                for arg in (args.vararg, args.kwarg):
                    if arg is not None:
                        found.setdefault(arg.arg, []).append(arg)
            self._bindings[key] = found
        return self._bindings[key]

    def resolve(self, name: ast.Name) -> ast.expr | None:
        """The value ``name`` stands for: the one assignment ``name = value`` of its function,
        a statement of the function's own body before the use (so it ran), or where the
        function binds it nowhere (and is not nested in another), the one top-level
        assignment of the module."""
        scope = self.scope_of(name)
        if isinstance(scope, ast.ClassDef):
            return None
        if scope is not self.tree:
            if self.scope_of(scope) is not self.tree and not isinstance(
                self.scope_of(scope), ast.ClassDef
            ):
                return None  # a closure: the enclosing function's binding may change
            local = self.bindings(scope).get(name.id)
            if local is not None:
                return _single(local, scope, name)
        binds = self.bindings(self.tree).get(name.id)
        if binds is None:
            return None
        return _single(binds, self.tree, name if scope is self.tree else None)


def _bound_names(node: ast.AST) -> Iterator[str]:
    """The names ``node`` binds in the scope it sits in."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
        yield node.id
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield node.name
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        for alias in node.names:
            yield (alias.asname or alias.name).split(".")[0]
    elif isinstance(node, (ast.Global, ast.Nonlocal)):
        yield from node.names
    elif isinstance(node, ast.ExceptHandler) and node.name:
        yield node.name
    elif isinstance(node, ast.MatchAs) and node.name:
        yield node.name
    elif isinstance(node, ast.MatchStar) and node.name:
        yield node.name


def _single(binds: list[ast.AST], scope: ast.AST, use: ast.AST | None) -> ast.expr | None:
    """The value of the one binding in ``binds`` where it is ``name = value`` at the top of
    ``scope``'s body (and, for a use in that scope, before it)."""
    if len(binds) != 1 or not isinstance(binds[0], ast.Name):
        return None
    body = scope.body if isinstance(scope, (ast.Module, *_FUNCTIONS[:2])) else []
    for stmt in body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and stmt.targets[0] is binds[0]:
            if use is not None and (stmt.end_lineno or stmt.lineno) >= getattr(use, "lineno", 0):
                return None
            return stmt.value
    return None


def stated(node: ast.expr | None, names: TestNames, depth: int = 0) -> tuple[object] | tuple[()]:
    """``(value,)`` for a plain value the test's expression states (see the module
    docstring), else ``()``."""
    if node is None or depth > _MAX_DEPTH:
        return ()
    if isinstance(node, ast.Name):
        bound = names.resolve(node)
        return stated(bound, names, depth + 1) if bound is not None else ()
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = stated(node.operand, names, depth + 1)
        if inner and type(inner[0]) is int:
            return (-inner[0] if isinstance(node.op, ast.USub) else inner[0],)
        return ()
    if isinstance(node, ast.BinOp):
        left = stated(node.left, names, depth + 1)
        right = stated(node.right, names, depth + 1)
        if not (left and right and type(left[0]) is int and type(right[0]) is int):
            return ()
        return _arithmetic(node.op, left[0], right[0])  # type: ignore[arg-type]
    value = test_value(node, lambda name: names.resolve(name))
    return value if value and isinstance(value[0], _PLAIN) else ()


def _arithmetic(op: ast.operator, a: int, b: int) -> tuple[int] | tuple[()]:
    if isinstance(op, ast.Add):
        return (a + b,)
    if isinstance(op, ast.Sub):
        return (a - b,)
    if isinstance(op, ast.Mult):
        return (a * b,)
    if isinstance(op, (ast.FloorDiv, ast.Mod)) and b != 0:
        return (a // b,) if isinstance(op, ast.FloorDiv) else (a % b,)
    return ()


def assert_states(node: ast.Assert, names: TestNames) -> Iterable[tuple[ast.AST, tuple[object]]]:
    """``(expression, (value,))`` for what one ``assert`` states an expression is: itself
    true, ``not`` it false, each operand of an ``and`` what it states alone, the left side of
    ``is not None`` not ``None``, one side of ``==``/``is`` the plain value the other side states
    (a literal, or ``stated`` arithmetic over names bound once), and the name a
    comprehension iterates true where ``==`` holds it to a display with items
    (``assert {k.ratio for k in keys} == {32}``: ``keys`` has items, so the call that gave
    it did not return an empty one)."""
    yield from _expression_states(node.test, names)


def _expression_states(test: ast.expr, names: TestNames) -> Iterable[tuple[ast.AST, tuple[object]]]:
    """``assert_states`` of an asserted expression: an ``and`` passes only where each
    operand is true, so each operand states what it would state asserted alone (``assert
    step is not None and step.width == 4``), and ``x is not None`` states ``x`` is not
    ``None`` (``NotNone``)."""
    yield test, (Truth(True),)
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        for operand in test.values:
            yield from _expression_states(operand, names)
        return
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        yield test.operand, (Truth(False),)
    if not isinstance(test, ast.Compare):
        return
    if (
        len(test.ops) == 1
        and isinstance(test.ops[0], ast.IsNot)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    ):
        yield test.left, (NotNone(),)
        return
    if len(test.ops) != 1 or not isinstance(test.ops[0], (ast.Eq, ast.Is)):
        return
    sides = (test.left, test.comparators[0])
    if isinstance(test.ops[0], ast.Eq):
        for side, other in (sides, sides[::-1]):
            iterated = _iterated_by(side)
            if iterated is not None and _filled_display(other):
                yield iterated, (Truth(True),)
    for side, other in (sides, sides[::-1]):
        if isinstance(other, ast.Constant):
            value = (other.value,) if isinstance(other.value, (int, str, type(None))) else ()
        else:
            value = stated(other, names)
        if not value:
            continue
        if isinstance(test.ops[0], ast.Is) and value[0] is not None:
            continue
        yield side, value


def _iterated_by(node: ast.expr) -> ast.Name | None:
    """The name a comprehension iterates (``{k.ratio for k in keys}``: ``keys``), where one of
    its ``for`` clauses runs over a plain name: that name empty, the comprehension is."""
    if not isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp)):
        return None
    for generator in node.generators:
        if isinstance(generator.iter, ast.Name) and not generator.is_async:
            return generator.iter
    return None


def _filled_display(node: ast.expr) -> bool:
    """A list, set, tuple or dict display with at least one item and no unpacking: never
    equal to an empty comprehension."""
    if isinstance(node, (ast.List, ast.Set, ast.Tuple)):
        return bool(node.elts) and not any(isinstance(e, ast.Starred) for e in node.elts)
    if isinstance(node, ast.Dict):
        return bool(node.keys) and None not in node.keys
    return False


def result_asserts(
    block: list[ast.stmt], names: TestNames, effects: dict[int, _Effects] | None = None
) -> Iterable[tuple[ast.Call, str | None, tuple[object]]]:
    """``(call, None, (value,))`` for ``x = call(...)`` in ``block`` followed, later in that
    block, by an ``assert`` that states ``x`` (``assert x == 32``), and ``(call, field,
    (value,))`` for one that states a field of it (``assert x.field``, ``assert x.field ==
    3``): the assert runs whenever the call does, unless a statement between leaves the block
    (``return``, ``break``, ``continue``, ``pytest.skip``) or rebinds ``x``, which stop the
    search.  What each later statement states and binds is read once for the block, not once
    per assignment before it (``_Effects``; ``effects``: a cache of them, by position, that
    ``result_item_asserts`` of the same block may share)."""
    effects = {} if effects is None else effects
    for i, call, local in _call_results(block):
        for later in _later_effects(block, i, names, effects):
            for expression, value in later.states:
                if isinstance(expression, ast.Name) and expression.id == local:
                    yield call, None, value
                elif (
                    isinstance(expression, ast.Attribute)
                    and isinstance(expression.value, ast.Name)
                    and expression.value.id == local
                ):
                    yield call, expression.attr, value
            if later.leaves or local in later.binds:
                break


def result_item_asserts(
    block: list[ast.stmt], names: TestNames, effects: dict[int, _Effects] | None = None
) -> Iterable[tuple[ast.Call, str, str]]:
    """``(call, items, field)`` for ``x = call(...)`` in ``block`` followed, later in that
    block, by an ``assert`` that states ``field`` true of an item of the list field
    ``items`` of the result: ``assert x.requests[0].can_save``, or through a local bound to
    the item (``req = x.requests[0]``, then ``assert req.can_save is True``).  The test
    passes only where the call returned an object whose ``items`` held such an item
    (``CallContext.result_items``).  Only ``assert``s and such bindings of an item may lie
    between the call and the ``assert``: the search stops at anything else (which might
    change the items), and where ``result_asserts``' does."""
    effects = {} if effects is None else effects
    for i, call, local in _call_results(block):
        held: dict[str, str] = {}  # a local bound to an item of the result -> its list field
        for j, later in enumerate(_later_effects(block, i, names, effects), start=i + 1):
            for expression, value in later.states:
                compared = compared_to_true(expression)
                if compared is not None and value[0] == Truth(True):
                    expression = compared  # ``assert req.can_save is True``
                if not (isinstance(expression, ast.Attribute) and _true(value[0])):
                    continue
                owner = expression.value
                if isinstance(owner, ast.Name) and owner.id in held:
                    yield call, held[owner.id], expression.attr
                elif isinstance(owner, ast.Subscript):
                    items = _item_of(owner.value, local)
                    if items is not None:
                        yield call, items, expression.attr
            if later.leaves or local in later.binds:
                break
            item = block[j]
            if isinstance(item, ast.Assert):
                continue
            if not (
                isinstance(item, ast.Assign)
                and len(item.targets) == 1
                and isinstance(item.targets[0], ast.Name)
                and isinstance(item.value, ast.Subscript)
                and _item_of(item.value.value, local) is not None
            ):
                break  # anything else may change the items before the asserts
            held[item.targets[0].id] = _item_of(item.value.value, local)  # type: ignore[assignment]


def _call_results(block: list[ast.stmt]) -> Iterator[tuple[int, ast.Call, str]]:
    """``(position, call, x)`` for each ``x = call(...)`` of ``block``: the results whose
    later asserts ``result_asserts`` and ``result_item_asserts`` read."""
    for i, stmt in enumerate(block):
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Call)
        ):
            yield i, stmt.value, stmt.targets[0].id


def _later_effects(
    block: list[ast.stmt], i: int, names: TestNames, effects: dict[int, _Effects]
) -> Iterator[_Effects]:
    """The ``_Effects`` of the statements after position ``i``, in order, each read once
    for the block (``effects``, by position)."""
    for j in range(i + 1, len(block)):
        later = effects.get(j)
        if later is None:
            later = effects[j] = _Effects.of(block[j], names)
        yield later


def _item_of(node: ast.expr, local: str) -> str | None:
    """``items`` where ``node`` is ``local.items`` (the list whose item a subscript takes)."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.attr if node.value.id == local else None
    return None


def _true(value: object) -> bool:
    """Whether an asserted value is true (``assert x.f``, ``x.f is True``, ``x.f == 1``)."""
    if isinstance(value, Truth):
        return value.value
    return isinstance(value, (bool, int, str)) and bool(value)


class _Effects(NamedTuple):
    """What one statement of a block means to ``result_asserts``: what it states (an
    ``assert``'s ``assert_states``), whether it may end the block's run before what follows
    it (outside a nested def), and the names it binds again."""

    states: tuple[tuple[ast.AST, tuple[object]], ...]
    leaves: bool
    binds: frozenset[str]

    @classmethod
    def of(cls, stmt: ast.stmt, names: TestNames) -> _Effects:
        states = tuple(assert_states(stmt, names)) if isinstance(stmt, ast.Assert) else ()
        leaves = False
        binds: set[str] = set()
        todo: list[ast.AST] = [stmt]
        for node in todo:
            if isinstance(node, ast.Name):  # most nodes: no generator for them
                if not isinstance(node.ctx, ast.Load):
                    binds.add(node.id)
                continue
            if isinstance(node, (ast.Return, ast.Break, ast.Continue)):
                leaves = True
                break
            binds.update(_bound_names(node))
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("skip", "xfail", "exit", "importorskip")
            ):
                leaves = True
                break
            if isinstance(node, _FUNCTIONS) and node is not stmt:
                continue
            todo.extend(child_nodes(node))
        return cls(states, leaves, frozenset(binds))


def asserted_after(tree: ast.Module, line: int, method: str) -> tuple[tuple[str, ...], ...]:
    """The attribute chains (``("vllm_config", "cache_config", "mamba_block_size")``, links
    of the object a name ``x`` holds) that the ``assert``s right after the statement
    ``x.method(...)`` at ``line`` load on every run where they pass: the statement is the
    bare call, and the ``assert``s follow it in its block with nothing between.  A load
    counts where the ``assert`` evaluates it whenever it passes: the test itself, an operand
    of ``and``, of ``not``, of a comparison, an argument of a call there (an ``or``, a
    conditional expression or a comprehension may skip it)."""
    parents: dict[ast.AST, ast.AST] = {}
    top = next((s for s in tree.body if s.lineno <= line <= (s.end_lineno or s.lineno)), None)
    if top is None:
        return ()
    found = None
    for node in link_parents(top, parents):
        if (
            isinstance(node, ast.Expr)
            and node.lineno == line
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute)
            and node.value.func.attr == method
            and isinstance(node.value.func.value, ast.Name)
        ):
            found = node
            break
    if found is None:
        return ()
    receiver = found.value.func.value.id  # type: ignore[attr-defined]
    block = next(
        (
            value
            for value in (
                getattr(parents.get(found), f, None) for f in ("body", "orelse", "finalbody")
            )
            if isinstance(value, list) and any(s is found for s in value)
        ),
        None,
    )
    if block is None:
        return ()
    index = next(i for i, s in enumerate(block) if s is found)
    out: list[tuple[str, ...]] = []
    for stmt in block[index + 1 :]:
        if not isinstance(stmt, ast.Assert):
            break
        out.extend(_surely_loaded(stmt.test, receiver))
    return tuple(dict.fromkeys(out))


def _surely_loaded(node: ast.expr, receiver: str) -> Iterator[tuple[str, ...]]:
    """The chains on ``receiver`` that evaluating ``node`` loads whenever its value makes the
    ``assert`` pass (``asserted_after``)."""
    if isinstance(node, ast.Attribute):
        links: list[str] = []
        head: ast.expr = node
        while isinstance(head, ast.Attribute):
            links.append(head.attr)
            head = head.value
        if isinstance(head, ast.Name) and head.id == receiver:
            yield tuple(reversed(links))
            return
        yield from _surely_loaded(head, receiver)
    elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        for value in node.values:
            yield from _surely_loaded(value, receiver)
    elif isinstance(node, ast.UnaryOp):
        yield from _surely_loaded(node.operand, receiver)
    elif isinstance(node, ast.Compare):
        for side in (node.left, *node.comparators):
            yield from _surely_loaded(side, receiver)
    elif isinstance(node, ast.Call):
        for arg in (node.func, *node.args, *(k.value for k in node.keywords)):
            if not isinstance(arg, ast.Starred):
                yield from _surely_loaded(arg, receiver)
    elif isinstance(node, ast.Subscript):
        yield from _surely_loaded(node.value, receiver)
