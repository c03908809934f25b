"""Which ``if`` arm of a stub's method a test's assertion that a mock was called decides.

A test that replaces a method of its ``object.__new__`` stub with a fresh mock
(``group._convert_once = MagicMock(return_value=expected)``), calls another method of the
stub, and then asserts the mock was called (``group._convert_once.assert_called_once()``, or
reads through its ``call_args``: ``group._convert_once.call_args.kwargs["rows"] == 832``,
which raises on the ``None`` a mock never called holds) passes only where that call ran the
mock.  Where every mention of the mock's name in the called method lies in one arm of an
``if`` (``if num_tokens > cache.runtime.max_swap_rows: ... return self._convert_once(...)``)
and nothing outside that arm can reach the mock, the arm is the test's path, as surely as
a branch the test's values decide (``CallContext.called_arms``); where the test's assertion
does not hold, the test fails anyway.

Nothing outside the arm reaches the mock when the text settles it both ways:

- the test (``called_mocks``): the stub is a local bound once, to ``object.__new__(...)``
  (or ``Cls.__new__(Cls)``), on the test's straight line; every other mention of it is the
  object of an attribute (never handed on, never in a nested ``def``, ``lambda``, class or
  comprehension); before the call it is only stored to (no method of it runs, so nothing
  of vLLM's got hold of it); the mock is the one value ever stored on that field, a
  ``Mock(...)``/``MagicMock(...)`` built in place (nothing else holds it); the call is its
  own statement on the test's straight line, and the assertion one after it, with no
  ``return``, ``try``, ``with`` or ``pytest.skip`` between them;
- the called method (``called_arms``): outside the arm, ``self`` is only ever the object
  of an attribute; no attribute of the mock's name is read; what it reads or calls of
  ``self`` is a field of the instance, a static or class method, a plain class attribute
  (a literal, a dataclass ``field(...)``), a method the test replaced, or a method or
  property of the class (through the MRO) whose body holds to the same, a few calls deep;
  and the class's MRO brings no code to attribute access (no ``__getattr__``,
  ``__getattribute__``, ``__setattr__``, ``__delattr__``, no base outside the tree but
  ``object``, ``typing.Generic``, ``abc.ABC``, no decorator but ``dataclass``), nor to the
  test's stores (no property among the stored names).

Only the ``if`` statements whose every enclosing statement in the method is an ``if`` arm are
decided: each runs at most once a call, so the arm that ran is the arm its one test chose.
"""

from __future__ import annotations

import ast
import itertools

from factories.analysis._walk import link_parents, walk
from factories.analysis.classes import ClassIndex, ClassInfo, External, MemberKind

#: The mock classes whose instance, built in place, only the test's field holds.
_MOCKS = frozenset({"Mock", "MagicMock"})
#: A mock's methods that raise unless it was called.
_CALLED_CHECKS = frozenset(
    {
        "assert_called",
        "assert_called_once",
        "assert_called_with",
        "assert_called_once_with",
        "assert_any_call",
    }
)
#: Nodes a read on the way up to an ``assert``'s test surely evaluates (``_surely_read``).
_EVALUATED = (ast.Attribute, ast.Subscript, ast.Call, ast.Compare, ast.BinOp, ast.UnaryOp)
_SCOPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ClassDef,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)
_INERT_BASES = frozenset({"object", "typing.Generic", "abc.ABC"})
_DATACLASS = frozenset({"dataclasses.dataclass"})
#: Methods that run code on attribute access or store.
_ACCESS_HOOKS = ("__getattr__", "__getattribute__", "__setattr__", "__delattr__")
#: How many methods deep the check of what the code outside the arm calls goes.
_MAX_DEPTH = 4


def called_mocks(
    test: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call
) -> tuple[frozenset[str], frozenset[str]]:
    """``(called, stored)``: the fields of the stub ``call`` (``stub.m(...)``, a statement of
    ``test``'s own body) runs on that the test set to a fresh mock and asserts were called
    after it, and every field the test stores on the stub; two empty sets where the text
    does not settle it (see the module docstring)."""
    nothing: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())
    func = call.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
        return nothing
    stub = func.value.id
    body = test.body
    at = next((i for i, s in enumerate(body) if _runs(s, call)), None)
    args = test.args
    params = {
        a.arg
        for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)
        if a is not None
    }
    if at is None or stub in params:
        return nothing
    parents: dict[ast.AST, ast.AST] = {}
    link_parents(test, parents)
    position = {id(s): i for i, s in enumerate(body)}
    bound: list[int] = []
    stores: dict[str, list[int]] = {}
    mocks: set[str] = set()
    for node in walk(test):
        if not (isinstance(node, ast.Name) and node.id == stub):
            continue
        if _in_nested_scope(node, test, parents):
            return nothing
        statement = _top_statement(node, test, parents)
        if id(statement) not in position:
            return nothing  # a default or a decorator
        index = position[id(statement)]
        if isinstance(node.ctx, ast.Store):
            if not (
                isinstance(statement, ast.Assign)
                and statement.targets == [node]
                and _builds_instance(statement.value)
            ):
                return nothing
            bound.append(index)
            continue
        link = parents.get(node)
        if not isinstance(node.ctx, ast.Load) or not (
            isinstance(link, ast.Attribute) and link.value is node
        ):
            return nothing  # handed on, deleted, rebound another way
        if isinstance(link.ctx, ast.Store):
            if not (isinstance(statement, ast.Assign) and link in statement.targets):
                return nothing
            stores.setdefault(link.attr, []).append(index)
            if _is_fresh_mock(statement.value) and len(statement.targets) == 1:
                mocks.add(link.attr)
            continue
        if link is func or index > at:
            continue  # the call itself, or what the test does after it
        return nothing  # a read or call of the stub before the call: its code may run
    if len(bound) != 1 or bound[0] >= at:
        return nothing
    called: set[str] = set()
    for index in range(at + 1, len(body)):
        statement = body[index]
        for name in _asserted_called(statement, stub):
            if name in mocks and len(stores.get(name, ())) == 1 and bound[0] < stores[name][0] < at:
                called.add(name)
        if _may_stop(statement):
            break
    if not called:
        return nothing
    return frozenset(called), frozenset(stores)


def called_arms(
    index: ClassIndex,
    cls: ClassInfo,
    func: ast.FunctionDef | ast.AsyncFunctionDef,
    called: frozenset[str],
    stored: frozenset[str],
) -> frozenset[tuple[int, int, bool]]:
    """``(line, column, arm)`` of each ``if`` of ``func`` (a method of ``cls``) whose arm
    (True: its body) the test's path takes, as only that arm can run the mocks ``called``
    the test asserts ran; ``stored``: the fields the test stores on the stub.  Empty where
    the text does not settle it (see the module docstring)."""
    if not called or not _plain_access(index, cls, stored):
        return frozenset()
    parents: dict[ast.AST, ast.AST] = {}
    link_parents(func, parents)
    refs = [n for n in walk(func) if isinstance(n, ast.Attribute) and n.attr in called]
    if not refs:
        return frozenset()
    # The ``if`` arms from ``func`` down to the first mention, while every enclosing
    # statement is an ``if`` arm (not a loop, ``try``, ``with`` or nested def).
    path: list[ast.AST] = [refs[0]]
    while path[-1] is not func:
        path.append(parents[path[-1]])
    path.reverse()
    decided: list[tuple[ast.If, bool]] = []
    for node, child in itertools.pairwise(path[1:]):
        if not (isinstance(node, ast.If) and isinstance(child, ast.stmt)):
            break
        decided.append((node, any(child is s for s in node.body)))
    # The innermost of them whose one arm holds every mention.
    while decided:
        statement, arm = decided[-1]
        in_arm = {id(n) for s in (statement.body if arm else statement.orelse) for n in walk(s)}
        if all(id(r) in in_arm for r in refs):
            break
        decided.pop()
    if not decided or not _reach_free(index, cls, func, called, stored, in_arm, 0, set()):
        return frozenset()
    return frozenset((s.lineno, s.col_offset, a) for s, a in decided)


def _reach_free(
    index: ClassIndex,
    cls: ClassInfo,
    func: ast.FunctionDef | ast.AsyncFunctionDef,
    called: frozenset[str],
    stored: frozenset[str],
    skip: set[int],
    depth: int,
    seen: set[int],
) -> bool:
    """Whether ``func``'s text outside the nodes ``skip`` holds can run none of the mocks
    ``called`` (see the module docstring), following what it reads or calls of ``self``."""
    if depth > _MAX_DEPTH:
        return False
    if not skip:  # checked whole; the analysed method (its arm skipped) never counts so
        seen.add(id(func))
    params = [*func.args.posonlyargs, *func.args.args]
    if not params:
        return False
    me = params[0].arg
    parents: dict[ast.AST, ast.AST] = {}
    link_parents(func, parents)
    for node in walk(func):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Attribute) and node.attr in called:
            return False
        if isinstance(node, ast.Name) and node.id == "super":
            return False
        if not (isinstance(node, ast.Name) and node.id == me):
            continue
        link = parents.get(node)
        if not (isinstance(link, ast.Attribute) and link.value is node):
            return False  # ``self`` handed on whole
        if link.attr in stored:
            continue  # what the test put there (a mock, a value)
        member = index.lookup(cls, link.attr)
        if member is None or member.kind in (MemberKind.STATICMETHOD, MemberKind.CLASSMETHOD):
            continue
        if member.kind is MemberKind.ATTRIBUTE:
            if not _plain_attribute(member.node):
                return False
            continue
        bodies: list[ast.AST] = []
        if member.kind is MemberKind.PROPERTY:
            bodies.append(member.node)
            if isinstance(link.ctx, ast.Store) and member.setter is not None:
                bodies.append(member.setter)
        elif member.kind is MemberKind.METHOD:
            bodies.append(member.node)
        for body in bodies:
            if not isinstance(body, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return False
            if id(body) in seen:
                continue
            if not _reach_free(index, cls, body, called, stored, set(), depth + 1, seen):
                return False
    return True


def _plain_access(index: ClassIndex, cls: ClassInfo, stored: frozenset[str]) -> bool:
    """Whether reading and storing fields of an instance of ``cls`` runs no code of the
    class: no access hook, no base outside the tree but inert ones, no decorator but
    ``dataclass``, and no property among the ``stored`` names."""
    chain, external = index.mro(cls)
    if any(name not in _INERT_BASES for name in external):
        return False
    for klass in chain:
        for deco in klass.node.decorator_list:
            target = deco.func if isinstance(deco, ast.Call) else deco
            found = index.resolve(klass.module, ast.unparse(target), klass.imports)
            if not (isinstance(found, External) and found.dotted in _DATACLASS):
                return False
        if klass.node.keywords:
            return False
    if any(index.lookup(cls, hook) is not None for hook in _ACCESS_HOOKS):
        return False
    for name in stored:
        member = index.lookup(cls, name)
        if member is None:
            continue
        if member.kind is MemberKind.PROPERTY:
            return False
        if member.kind is MemberKind.ATTRIBUTE and not _plain_attribute(member.node):
            return False
    return True


def _plain_attribute(node: ast.AST) -> bool:
    """A class attribute no descriptor stands behind: a literal, or a dataclass
    ``field(...)``."""
    value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
    if value is None:
        return isinstance(node, ast.AnnAssign)
    if isinstance(value, ast.Call):
        return ast.unparse(value.func) in ("field", "dataclasses.field")
    return all(
        isinstance(n, (ast.Constant, ast.Tuple, ast.List, ast.Set, ast.Dict, ast.Load))
        or isinstance(n, (ast.UnaryOp, ast.unaryop))
        for n in walk(value)
    )


def _runs(statement: ast.stmt, call: ast.Call) -> bool:
    """``call`` as a statement of its own: ``call(...)`` or ``name = call(...)``."""
    if isinstance(statement, ast.Expr):
        return statement.value is call
    return (
        isinstance(statement, ast.Assign)
        and statement.value is call
        and all(isinstance(t, ast.Name) for t in statement.targets)
    )


def _builds_instance(value: ast.expr) -> bool:
    """``object.__new__(Cls)`` or ``Cls.__new__(Cls)``."""
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "__new__"
        and len(value.args) == 1
        and not value.keywords
    )


def _is_fresh_mock(value: ast.expr) -> bool:
    """``Mock(...)``, ``MagicMock(...)`` (``mock.``/``unittest.mock.`` spelled too)."""
    if not isinstance(value, ast.Call):
        return False
    text = ast.unparse(value.func)
    head, _, last = text.rpartition(".")
    return last in _MOCKS and head in ("", "mock", "unittest.mock")


def _in_nested_scope(node: ast.AST, test: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    current = parents.get(node)
    while current is not None and current is not test:
        if isinstance(current, _SCOPES):
            return True
        current = parents.get(current)
    return False


def _top_statement(node: ast.AST, test: ast.AST, parents: dict[ast.AST, ast.AST]) -> ast.stmt:
    current = node
    while parents.get(current) is not test:
        current = parents[current]
    return current  # type: ignore[return-value]


def _asserted_called(statement: ast.stmt, stub: str) -> set[str]:
    """The fields of ``stub`` whose mock ``statement`` raises or fails over unless it was
    called: ``stub.m.assert_called_once()`` and its kin; an ``assert`` that surely reads
    past ``stub.m.call_args`` (``.kwargs``, ``[0]``) or an item of ``stub.m.call_args_list``,
    or asserts ``stub.m.called`` or ``stub.m.call_count == k`` for a ``k`` of at least one."""
    out: set[str] = set()
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        func = statement.value.func
        if isinstance(func, ast.Attribute) and func.attr in _CALLED_CHECKS:
            name = _mock_of(func.value, stub)
            if name is not None:
                out.add(name)
        return out
    if not isinstance(statement, ast.Assert):
        return out
    check = statement.test
    if isinstance(check, ast.Attribute) and check.attr == "called":
        name = _mock_of(check.value, stub)
        if name is not None:
            out.add(name)
    if (
        isinstance(check, ast.Compare)
        and isinstance(check.left, ast.Attribute)
        and check.left.attr == "call_count"
        and len(check.ops) == 1
        and isinstance(check.ops[0], ast.Eq)
        and isinstance(check.comparators[0], ast.Constant)
        and type(check.comparators[0].value) is int
        and check.comparators[0].value >= 1
    ):
        name = _mock_of(check.left.value, stub)
        if name is not None:
            out.add(name)
    parents: dict[ast.AST, ast.AST] = {}
    link_parents(check, parents)
    for node in walk(check):
        if not isinstance(node, ast.Attribute) or node.attr not in ("call_args", "call_args_list"):
            continue
        name = _mock_of(node.value, stub)
        link = parents.get(node)
        if name is None or link is None:
            continue
        item = (
            isinstance(link, ast.Subscript)
            and link.value is node
            and not isinstance(link.slice, ast.Slice)
        )
        # ``None.kwargs``, ``None[0]``, ``[][0]`` raise: the mock was called
        past = item or (node.attr == "call_args" and isinstance(link, ast.Attribute))
        if past and _surely_read(link, check, parents):
            out.add(name)
    return out


def _mock_of(node: ast.expr, stub: str) -> str | None:
    """``m`` of ``stub.m``."""
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == stub
    ):
        return node.attr
    return None


def _surely_read(node: ast.AST, root: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """Whether evaluating ``root`` surely evaluates ``node``: nothing on the way up skips
    it (no ``and``/``or``, conditional expression, comprehension or ``lambda``, no later
    link of a chained comparison)."""
    current = node
    while current is not root:
        parent = parents[current]
        if not isinstance(parent, _EVALUATED):
            return False
        if isinstance(parent, ast.Compare) and current in parent.comparators[1:]:
            return False
        current = parent
    return True


def _may_stop(statement: ast.stmt) -> bool:
    """Whether the test may end, without failing, at or inside ``statement`` before the
    statements after it: a ``return``, a ``try`` or ``with`` (which may swallow what an
    assertion raises), a ``pytest.skip``/``xfail``."""
    if isinstance(statement, (ast.Return, ast.Try, ast.With, ast.AsyncWith)):
        return True
    for node in walk(statement):
        if isinstance(node, ast.Return):
            return True
        if isinstance(node, ast.Call):
            text = ast.unparse(node.func)
            if text.rpartition(".")[2] in ("skip", "xfail", "exit"):
                return True
    return False
