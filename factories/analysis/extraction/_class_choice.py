"""Which class an ``object.__new__(X)`` stub is of: a structured ``ClassRef``.

The extractor settles what it can from the test's text (its imports, its values, its
parametrize cases and same-module calls); ``ClassIndex.resolve_ref`` then finds the class in
the vLLM tree.  ``text`` of each variant is the class as the findings spell it.
"""

from __future__ import annotations

import ast

import attrs

from factories.analysis._walk import statements, walk
from factories.analysis.class_refs import (
    ClassRef,
    LocalClass,
    NamedClass,
    UnsettledClass,
    ref_of_expression,
)
from factories.analysis.extraction._cases import (
    MAX_CASES_PER_TEST,
    NO_BINDINGS,
    Bindings,
    CaseReader,
    ParamCase,
    parametrize_values,
)
from factories.analysis.extraction._scope import ModuleScope
from factories.analysis.extraction._syntax import FUNCTION_DEFS, callee, is_parameter

# ``object.__new__(X)`` spellings whose class is the one the enclosing method runs on.
SELF_CLASS = frozenset({"cls", "type(self)", "self.__class__"})
# Names, conditionals and attributes followed to settle one class expression.
_MAX_RESOLUTION_STEPS = 8


@attrs.frozen
class ClassChoice:
    """One class an ``object.__new__(X)`` names, with the ``bindings`` in force while its
    stub is followed.  ``from_caller``: ``X`` is spelled ``cls``/``type(self)`` and names the
    class the method runs on, which a caller naming a subclass (``Sub.fresh()``) replaces."""

    ref: ClassRef
    bindings: Bindings = NO_BINDINGS
    from_caller: bool = False


class ClassChooser:
    """Settles the class of each ``object.__new__`` call of one test module."""

    def __init__(self, scope: ModuleScope, reader: CaseReader) -> None:
        self.scope = scope
        self.reader = reader

    def choices(self, call: ast.Call) -> list[ClassChoice]:
        """The classes ``object.__new__(X)`` names, each with the bindings that name it."""
        spelled = ast.unparse(call.args[0])
        computed = self.computed_classes(call)
        if computed is None:
            ref = self.imported_class(call.args[0], NO_BINDINGS) or self.class_of(call)
            computed = [ClassChoice(ref)]
        if spelled not in SELF_CLASS:
            return computed
        return [
            attrs.evolve(choice, from_caller=choice.ref.text not in SELF_CLASS)
            for choice in computed
        ]

    def computed_classes(self, call: ast.Call) -> list[ClassChoice] | None:
        """``object.__new__(X)`` where ``X`` is computed in the function around it: a local
        name (``worker_cls = Push if push_pp else Pull``), a parameter (also one a parametrize
        decorator lists classes for), a conditional, ``getattr(module, name)``,
        ``import_module(f"vllm.{model}.x").Cls``, or a class the function defines.  The
        class is what the test's values make of it: as the function stands (under each of its
        parametrize cases), else, for a helper, under each same-module call of it, that call's
        arguments bound to the helper's parameters (the stub then continues into that caller
        only).
        None when ``X`` is not computed here (names resolve through imports as before); one
        unsettled choice when nothing settles it."""
        arg = call.args[0]
        func = self.scope.enclosing_scope(call)
        if not isinstance(func, FUNCTION_DEFS):
            return None
        if ast.unparse(arg) in SELF_CLASS and self.scope.enclosing_class(call) is not None:
            return None  # the class the method runs on (``class_of``)
        if not self._computed_here(arg):
            return None
        settled = self._settled_by_cases(func, NO_BINDINGS, arg)
        if settled is not None:
            return settled
        out: list[ClassChoice] = []
        if self.scope.parents.get(func) is self.scope.module.tree:
            for caller, _ in self.scope.callers(func):
                binding = call_binding(func, caller)
                if binding is None:
                    continue
                outer = self.scope.enclosing_scope(caller)
                by_call = NO_BINDINGS.with_case(func, ParamCase(None, binding))
                for choice in self._settled_by_cases(outer, by_call, arg) or []:
                    out.append(
                        attrs.evolve(choice, bindings=choice.bindings.with_caller(func, caller))
                    )
        if out:
            return out
        why = (
            f"the class {ast.unparse(arg)} is computed in {func.name}() from values that no "
            f"parametrize case or same-module call of it settles"
        )
        return [ClassChoice(UnsettledClass(ast.unparse(arg), why))]

    def _settled_by_cases(
        self, func: ast.AST, bound: Bindings, arg: ast.expr
    ) -> list[ClassChoice] | None:
        """The class ``arg`` names with ``bound`` in force, under each parametrize case of
        ``func`` (a case is kept bound only where the cases name different classes); None
        when some case leaves it unsettled."""
        cases = self.reader.param_cases(func)
        if not cases and bound == NO_BINDINGS:
            cases = self._class_decorator_cases(func, arg)
        found: list[tuple[Bindings, ClassRef]] = []
        for case in cases or [None]:
            binding = bound if case is None else bound.with_case(func, case)
            ref = self.class_text(arg, binding)
            if ref is None:
                return None
            found.append((binding, ref))
        # Cases that leave the class as it is are followed as usual (one stub); a class named
        # by a parameter a case binds is that case's, each case its own stub.
        used = {n.id for n in walk(arg) if isinstance(n, ast.Name)}
        by_case = any(used & set(case.values) for case in cases or [])
        if not by_case and len({ref for _, ref in found}) == 1:
            return [ClassChoice(found[0][1], bound)]
        return [ClassChoice(ref, binding) for binding, ref in found]

    def _class_decorator_cases(self, func: ast.AST, arg: ast.expr) -> list[ParamCase]:
        """Where a test's parametrize decorators multiply into too many cases to follow one by
        one, the cases of the one decorator that lists the parameters ``arg`` uses (their
        pytest ids then are not known: the other decorators' parts are missing)."""
        used = {n.id for n in walk(arg) if isinstance(n, ast.Name)}
        for deco in getattr(func, "decorator_list", []):
            if not (
                isinstance(deco, ast.Call) and getattr(deco.func, "attr", None) == "parametrize"
            ):
                continue
            values = parametrize_values(deco)
            if values and used & set(values[0].values) and len(values) <= MAX_CASES_PER_TEST:
                return [ParamCase(None, case.values) for case in values]
        return []

    def _computed_here(self, expr: ast.expr) -> bool:
        """Whether the class expression depends on the function around it: a conditional, a
        ``getattr``, or a name (the head of ``a.b.C``) that is a parameter, a local
        variable or a class defined there rather than an import."""
        if isinstance(expr, ast.IfExp):
            return True
        if isinstance(expr, ast.Call):
            return callee(expr.func) == "getattr"
        while isinstance(expr, ast.Attribute):
            expr = expr.value
        if isinstance(expr, ast.Call) and callee(expr.func) == "import_module":
            # ``import_module(name).Cls``: computed when the name depends on the function's values
            return any(
                self._computed_here(n)
                for arg in expr.args
                for n in walk(arg)
                if isinstance(n, ast.Name)
            )
        if not isinstance(expr, ast.Name):
            return False
        if self._local_class(expr) is not None:
            return True
        current = self.scope.parents.get(expr)
        while current is not None:
            if isinstance(current, FUNCTION_DEFS):
                if is_parameter(current, expr.id):
                    return True
                if any(
                    isinstance(n, ast.Name) and n.id == expr.id and isinstance(n.ctx, ast.Store)
                    for n in self.scope.nodes(current)
                ):
                    return True
            current = self.scope.parents.get(current)
        return False

    def class_text(self, expr: ast.expr, bindings: Bindings, steps: int = 0) -> ClassRef | None:
        """The class ``expr`` names under ``bindings``: a dotted name (the head of a
        function-local import spelled out, ``vllm.x.mod.Cls``), or a class defined in an
        enclosing function; None when the values do not settle it (an undecided condition, a
        parameter no case binds)."""
        if steps > _MAX_RESOLUTION_STEPS:
            return None
        if isinstance(expr, ast.IfExp):
            known = self.reader.value_of(expr.test, bindings)
            if not known:
                return None
            return self.class_text(expr.body if known[0] else expr.orelse, bindings, steps + 1)
        if isinstance(expr, ast.Name):
            bound = self.reader.resolve_local(expr, bindings)
            if bound is not None:
                return self.class_text(bound, bindings, steps + 1)
            local = self._local_class(expr)
            if local is not None:
                return LocalClass(expr.id, self.scope.qualified_prefix(local), local)
            if self._is_unbound_parameter(expr):
                return None
            target = self.scope.scope_imports(expr).get(expr.id)
            return NamedClass(target.dotted if target is not None else expr.id)
        if isinstance(expr, ast.Attribute):
            imported = self.imported_class(expr, bindings)
            if imported is not None:
                return imported
            head = self.class_text(expr.value, bindings, steps + 1)
            if not isinstance(head, NamedClass):
                return None
            return NamedClass(f"{head.dotted}.{expr.attr}")
        if isinstance(expr, ast.Call) and len(expr.args) == 2 and not expr.keywords:
            if callee(expr.func) != "getattr":
                return None
            name = self.reader.text_of(expr.args[1], bindings)
            head = self.class_text(expr.args[0], bindings, steps + 1)
            if name is None or not name.isidentifier() or not isinstance(head, NamedClass):
                return None
            return NamedClass(f"{head.dotted}.{name}")
        if isinstance(expr, ast.Call) and callee(expr.func) == "import_module":
            module = self.reader.text_of(expr.args[0], bindings) if len(expr.args) == 1 else None
            if module is not None and all(p.isidentifier() for p in module.split(".")):
                return NamedClass(module)
        return None

    def _is_unbound_parameter(self, name: ast.Name) -> bool:
        """A parameter of an enclosing function that no case or caller binds."""
        current = self.scope.parents.get(name)
        while current is not None:
            if isinstance(current, FUNCTION_DEFS) and is_parameter(current, name.id):
                return True
            current = self.scope.parents.get(current)
        return False

    def _local_class(self, name: ast.Name) -> ast.ClassDef | None:
        """The class ``name`` refers to when an enclosing function defines it (before
        ``name``), innermost first."""
        current = self.scope.parents.get(name)
        while current is not None:
            if isinstance(current, FUNCTION_DEFS):
                found = [
                    n
                    for n in statements(current)
                    if isinstance(n, ast.ClassDef) and n.name == name.id and n.lineno < name.lineno
                ]
                if found:
                    return found[-1]
            current = self.scope.parents.get(current)
        return None

    def imported_class(self, expr: ast.expr, bindings: Bindings) -> NamedClass | None:
        """``mod.Cls`` with ``mod = importlib.import_module("vllm.x.y")`` (or
        ``import_module(name).Cls``), the module's name a literal or an f-string of values the
        test states: the dotted ``vllm.x.y.Cls``.  None for any other expression."""
        if not isinstance(expr, ast.Attribute):
            return None
        head = expr.value
        if isinstance(head, ast.Name):
            head = self.reader.resolve_local(head, bindings)
        if not (
            isinstance(head, ast.Call)
            and callee(head.func) == "import_module"
            and len(head.args) == 1
        ):
            return None
        module = self.reader.text_of(head.args[0], bindings)
        if module is None or not all(p.isidentifier() for p in module.split(".")):
            return None
        return NamedClass(f"{module}.{expr.attr}")

    def class_of(self, call: ast.Call) -> ClassRef:
        """The class of ``object.__new__(X)`` as written; ``cls`` in a classmethod (and
        ``type(self)``/``self.__class__`` in a method) is the class that defines it."""
        expr = call.args[0]
        if ast.unparse(expr) not in SELF_CLASS:
            return ref_of_expression(expr)
        owner = self.scope.enclosing_class(call)
        return NamedClass(owner) if owner is not None else ref_of_expression(expr)


def call_binding(
    func: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call
) -> dict[str, ast.expr] | None:
    """Each parameter of ``func`` to the expression ``call`` passes for it (or its default);
    None when the call unpacks arguments."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return None
    bound, named = positional_binding(func, call)
    for kw in call.keywords:
        if kw.arg in named:
            bound[kw.arg] = kw.value
    return bound


def positional_binding(
    func: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call
) -> tuple[dict[str, ast.expr], frozenset[str]]:
    """Each parameter of ``func`` to its default, then to what ``call`` passes in its
    place; and the names a keyword may bind (all but the positional-only ones).  The part of
    a binding every caller shares; what a keyword or an unpacked argument does is theirs."""
    args = func.args
    positional = list(args.posonlyargs) + list(args.args)
    bound: dict[str, ast.expr] = {}
    for param, default in zip(positional[len(positional) - len(args.defaults) :], args.defaults):
        bound[param.arg] = default
    for param, default in zip(args.kwonlyargs, args.kw_defaults):
        if default is not None:
            bound[param.arg] = default
    for param, value in zip(positional, call.args):
        bound[param.arg] = value
    named = {p.arg for p in positional[len(args.posonlyargs) :]} | {p.arg for p in args.kwonlyargs}
    return bound, frozenset(named)
