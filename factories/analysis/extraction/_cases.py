"""Parametrize cases, and what the test's expressions are under the values bound to them.

A test parametrized with written-out values is followed once per case (``ParamCase``); a
helper whose class its caller's arguments choose is followed under that one call.  Which
case and which caller are in force travels down the calls as a ``Bindings`` value.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Mapping

import attrs

from factories.analysis._walk import walk
from factories.analysis.extraction._scope import ModuleScope
from factories.analysis.extraction._syntax import FUNCTION_DEFS, is_parameter, str_literal
from factories.analysis.values import test_value

# More cases than this (all parametrize decorators multiplied) and a test is followed once,
# its parameters unbound.
MAX_CASES_PER_TEST = 16


@attrs.frozen
class ParamCase:
    """One case of a parametrized test: pytest's id (None where the text does not settle
    it) and the expression each parameter is bound to."""

    id: str | None
    values: Mapping[str, ast.expr] = attrs.field(factory=dict, repr=False)


@attrs.frozen
class Bindings:
    """The values in force while a stub is followed: the parametrize case of each test
    function (by ``id`` of its def), and the one call of each helper whose arguments chose
    the stub's class (the helper's ``return`` then reaches that caller only)."""

    cases: Mapping[int, ParamCase] = attrs.field(factory=dict)
    callers: Mapping[int, ast.Call] = attrs.field(factory=dict)

    def with_case(self, func: ast.AST, case: ParamCase) -> Bindings:
        return attrs.evolve(self, cases={**self.cases, id(func): case})

    def with_caller(self, func: ast.AST, call: ast.Call) -> Bindings:
        return attrs.evolve(self, callers={**self.callers, id(func): call})

    def binds(self, func: ast.AST) -> bool:
        return id(func) in self.cases


NO_BINDINGS = Bindings()


class CaseReader:
    """What the test's expressions are known to be under given ``Bindings``."""

    def __init__(self, scope: ModuleScope) -> None:
        self.scope = scope
        self._cases_cache: dict[int, list[ParamCase]] = {}

    def param_cases(self, func: ast.AST) -> list[ParamCase]:
        """Each case of a test whose ``parametrize`` decorators spell their argument names
        and value lists out; ``[]`` when it has none, one cannot be read, or the cases are too
        many to follow one by one."""
        if not isinstance(func, FUNCTION_DEFS):
            return []
        if id(func) not in self._cases_cache:
            self._cases_cache[id(func)] = read_param_cases(func, self.scope.walk)
        return self._cases_cache[id(func)]

    def value_of(self, node: ast.expr | None, bindings: Bindings) -> tuple[object] | tuple[()]:
        """What the test's expression ``node`` is known to be (``factories.analysis.values``),
        following a local name to the last plain assignment before it in the same function."""
        return test_value(node, self.resolver(bindings))

    def resolver(self, bindings: Bindings):
        """``resolve_local`` under ``bindings``, as the one-argument callback ``values`` takes."""
        return lambda name: self.resolve_local(name, bindings)

    def resolve_local(self, name: ast.Name, bindings: Bindings) -> ast.expr | None:
        """The expression a local name stands for: its last plain assignment before ``name``
        in the same function, else the value a bound case gives the parameter."""
        scope = self.scope.enclosing_scope(name)
        if isinstance(scope, ast.Module):
            return None
        bound = self.scope.assigned_before(scope, name)
        if bound is None:
            bound = self.parameter_value(name, bindings)
        return bound

    def parameter_value(self, name: ast.Name, bindings: Bindings) -> ast.expr | None:
        """The value a parametrize case binds to ``name``, a parameter of an enclosing test."""
        current = self.scope.parents.get(name)
        while current is not None:
            if isinstance(current, FUNCTION_DEFS):
                case = bindings.cases.get(id(current))
                if case is not None and name.id in case.values and is_parameter(current, name.id):
                    return case.values[name.id]
            current = self.scope.parents.get(current)
        return None

    def text_of(self, node: ast.expr | None, bindings: Bindings) -> str | None:
        """A string the test states: a literal, an f-string of known values, or a name bound
        to one (a parametrize value of the case being followed included)."""
        if isinstance(node, ast.Name):
            return self.text_of(self.resolve_local(node, bindings), bindings)
        if isinstance(node, ast.JoinedStr):
            parts = []
            for part in node.values:
                if isinstance(part, ast.Constant):
                    parts.append(str(part.value))
                elif isinstance(part, ast.FormattedValue) and part.format_spec is None:
                    known = self.value_of(part.value, bindings)
                    if not known or not isinstance(known[0], (str, int)):
                        return None
                    parts.append(str(known[0]))
                else:
                    return None
            return "".join(parts)
        return str_literal(node)

    def test_of(self, node: ast.AST, bindings: Bindings) -> str | None:
        """The pytest test ``node`` runs in: ``test_x``, ``TestCls::test_x``, with ``[id]``
        when it is followed under one parametrize case; None outside a test function."""
        current = self.scope.parents.get(node)
        found: ast.FunctionDef | ast.AsyncFunctionDef | None = None
        owner: ast.ClassDef | None = None
        while current is not None:
            if isinstance(current, FUNCTION_DEFS):
                found, owner = current, None
            elif isinstance(current, ast.ClassDef) and found is not None and owner is None:
                owner = current
            current = self.scope.parents.get(current)
        if found is None or not found.name.startswith("test"):
            return None
        name = f"{owner.name}::{found.name}" if owner is not None else found.name
        case = bindings.cases.get(id(found))
        return f"{name}[{case.id}]" if case is not None and case.id is not None else name


def read_param_cases(
    func: ast.FunctionDef | ast.AsyncFunctionDef,
    walk: Callable[[ast.AST], Iterable[ast.AST]] = walk,
) -> list[ParamCase]:
    """The parametrize cases of ``func`` in pytest's order and with pytest's ids: the
    decorator nearest the ``def`` varies slowest and its id part comes first.  ``walk``: the
    nodes of ``func`` (``ModuleScope.walk`` has those of an indexed test at hand)."""
    decorators = [
        d
        for d in func.decorator_list
        if isinstance(d, ast.Call) and getattr(d.func, "attr", None) == "parametrize"
    ]
    if not decorators:
        return []
    cases = [ParamCase("", {})]
    for deco in reversed(decorators):
        values = parametrize_values(deco)
        if not values:
            return []
        cases = [
            ParamCase(_joined_id(case.id, more.id), {**case.values, **more.values})
            for case in cases
            for more in values
        ]
        if len(cases) > MAX_CASES_PER_TEST:
            return []
    used = {n.id for n in walk(func) if isinstance(n, ast.Name)}
    if not any(name in used for name in cases[0].values):
        return []
    return cases


def parametrize_values(deco: ast.Call) -> list[ParamCase]:
    """One case per value of one ``parametrize(names, values[, ids=...])``; ``[]`` where the
    names, the values or the ids are not written out."""
    if len(deco.args) < 2:
        return []
    first, listed = deco.args[0], deco.args[1]
    if str_literal(first) is not None:
        names = [n.strip() for n in str_literal(first).split(",") if n.strip()]  # type: ignore[union-attr]
    elif isinstance(first, (ast.List, ast.Tuple)) and all(str_literal(e) for e in first.elts):
        names = [str_literal(e) for e in first.elts]  # type: ignore[misc]
    else:
        return []
    if not names or not isinstance(listed, (ast.List, ast.Tuple)):
        return []
    ids: list[str] | None = None
    for kw in deco.keywords:
        if kw.arg == "ids":
            if isinstance(kw.value, (ast.List, ast.Tuple)) and all(
                str_literal(e) is not None for e in kw.value.elts
            ):
                ids = [str_literal(e) for e in kw.value.elts]  # type: ignore[misc]
            else:
                return []  # ids from a function: the case ids cannot be spelled
    out: list[ParamCase] = []
    for index, elt in enumerate(listed.elts):
        explicit = None
        if isinstance(elt, ast.Call) and getattr(elt.func, "attr", None) == "param":
            explicit = next((str_literal(k.value) for k in elt.keywords if k.arg == "id"), None)
            parts = list(elt.args)
        elif len(names) == 1:
            parts = [elt]
        elif isinstance(elt, (ast.Tuple, ast.List)):
            parts = list(elt.elts)
        else:
            return []
        if len(parts) != len(names) or any(isinstance(p, ast.Starred) for p in parts):
            return []
        case_id: str | None
        if ids is not None and index < len(ids):
            case_id = ids[index]
        elif explicit is not None:
            case_id = explicit
        else:
            id_parts = [_id_part(p) for p in parts]
            case_id = None if None in id_parts else "-".join(id_parts)  # type: ignore[arg-type]
        out.append(ParamCase(case_id, dict(zip(names, parts))))
    return out


def _joined_id(head: str | None, tail: str | None) -> str | None:
    """pytest's ``a-b`` id of a case; None when a part's id is not known from the text."""
    if head is None or tail is None:
        return None
    return f"{head}-{tail}" if head else tail


def _id_part(value: ast.expr) -> str | None:
    """pytest's id for one parameter value where the text settles it (a plain literal), else
    None: an enum member's or an object's id depends on its runtime type."""
    if isinstance(value, ast.Constant) and isinstance(
        value.value, (bool, int, float, str, type(None))
    ):
        return str(value.value)
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
        if isinstance(value.operand, ast.Constant) and isinstance(
            value.operand.value, (int, float)
        ):
            return str(-value.operand.value)
    return None
