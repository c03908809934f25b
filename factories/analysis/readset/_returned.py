"""What a test's assertion on a field of a call's result says of the call's locals.

A test that binds a call's result and asserts one of its fields (``metadata =
Builder._build_decode(ns, ...)``, then ``assert metadata.has_persistent_metadata``) fails
unless the call returned an object whose field holds that value.  Where the text settles
that the object is one the call builds itself, storing the field as handed, the value the
field was handed is the one asserted, whichever way the call went to compute it:

- every ``return`` of the function gives the one object a call of it builds (``return
  Cls(...)``, or ``return md`` of a local bound once, outside a loop, to ``Cls(...)``, and
  read nowhere else, so nothing changed it between), and the function is neither a
  generator nor ``async`` (whose caller gets no ``return``'s value);
- ``Cls`` is a dataclass of the tree that runs no code of its own on the way
  (``stores_as_given``): nothing in its MRO defines ``__init__``, ``__post_init__``,
  ``__new__``, ``__setattr__`` or ``__getattribute__``, names a metaclass or is decorated but
  as a dataclass, no base lies outside the tree (but ``object``, ``typing.Generic``,
  ``abc.ABC``), and the nearest class body of its MRO that binds the field annotates it as
  an instance field;
- the field is handed a local (``has_persistent_metadata=has_persistent_metadata``) that
  every binding of the function sets to a plain literal (``= False``, ``= True``): an
  immutable value, so what the test sees is what the call held when it built the object,
  and nothing among the call's arguments rebinds it (no ``:=``, no ``global`` or
  ``nonlocal`` of it anywhere in the function).

Then, while the walk evaluates that call's arguments, the local holds the asserted value
(``Walker.asserted_locals``): ``fp8_v_scale_fix=(has_persistent_metadata and self.n == 1
and ...)`` reads past its first operand as surely as the test passes.  Where the test's
assertion holds, that is the path; where it does not, the test fails anyway.
"""

from __future__ import annotations

import ast

from factories.analysis._walk import child_nodes, walk
from factories.analysis.classes import ClassIndex, ClassInfo, External

#: The bases outside the tree that give a dataclass no code of their own on construction.
_INERT_BASES = frozenset({"object", "typing.Generic", "abc.ABC"})
#: Methods that would run between the call and the field's store, or change what is read.
_HOOKS = frozenset({"__init__", "__post_init__", "__new__", "__setattr__", "__getattribute__"})
_DATACLASS = frozenset({"dataclasses.dataclass"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def returned_build(
    func: ast.FunctionDef | ast.AsyncFunctionDef,
) -> tuple[ast.Call, dict[str, tuple[str, ...]]] | None:
    """The call whose object every ``return`` of ``func`` gives, with the locals it hands a
    keyword argument (``local -> fields``) that qualify (see the module docstring); None
    where the text does not settle one."""
    if isinstance(func, ast.AsyncFunctionDef):
        return None
    own: list[ast.AST] = []  # the nodes of the function's own scope
    todo: list[ast.AST] = list(func.body)
    loops: list[ast.AST] = []
    while todo:
        node = todo.pop()
        own.append(node)
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return None
        if isinstance(node, _SCOPES):
            continue
        if isinstance(node, _LOOPS):
            loops.append(node)
        todo.extend(child_nodes(node))
    returns = [n for n in own if isinstance(n, ast.Return)]
    if not returns or any(r.value is None for r in returns):
        return None
    values = [r.value for r in returns]
    built: ast.Call | None = None
    if len(values) == 1 and isinstance(values[0], ast.Call):
        built = values[0]
    elif all(isinstance(v, ast.Name) for v in values):
        name = values[0].id  # type: ignore[union-attr]
        if any(v.id != name for v in values):  # type: ignore[union-attr]
            return None
        built = _bound_once(func, own, loops, name, len(values))
    if built is None or not isinstance(built.func, (ast.Name, ast.Attribute)):
        return None
    literal = _literal_locals(func, own)
    walrus = {n.target.id for n in walk(built) if isinstance(n, ast.NamedExpr)}
    handed: dict[str, tuple[str, ...]] = {}
    for keyword in built.keywords:
        value = keyword.value
        if (
            keyword.arg is not None
            and isinstance(value, ast.Name)
            and value.id in literal
            and value.id not in walrus
        ):
            handed[value.id] = (*handed.get(value.id, ()), keyword.arg)
    return (built, handed) if handed else None


def _bound_once(
    func: ast.AST, own: list[ast.AST], loops: list[ast.AST], name: str, returned: int
) -> ast.Call | None:
    """The call ``name = Cls(...)`` binds, where that is the only binding of ``name`` in the
    function, outside any loop, and every other load of it (in nested scopes too) is one of
    the ``returned`` ``return name`` statements."""
    stores = [
        n
        for n in own
        if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
    ]
    if len(stores) != 1:
        return None
    loads = [
        n for n in walk(func) if isinstance(n, ast.Name) and n.id == name and n is not stores[0]
    ]
    if len(loads) != returned:
        return None
    for node in own:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and node.targets[0] is stores[0]
            and isinstance(node.value, ast.Call)
        ):
            if any(stores[0] in walk(loop) for loop in loops):
                return None
            return node.value
    return None


def _literal_locals(func: ast.FunctionDef, own: list[ast.AST]) -> frozenset[str]:
    """The names of ``func``'s own scope every binding of which is ``name = <plain literal>``
    (``None``, a bool, a number, a string), none of them a parameter, nor declared ``global``
    or ``nonlocal`` anywhere in the function."""
    args = func.args
    params = {
        a.arg
        for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)
        if a is not None
    }
    shared = {
        name for n in walk(func) if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names
    }
    plain: dict[str, bool] = {}
    literal_targets: set[int] = set()
    for node in own:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, (bool, int, float, str, type(None)))
        ):
            literal_targets.add(id(node.targets[0]))
    for node in own:
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            plain[node.id] = plain.get(node.id, True) and id(node) in literal_targets
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                plain[(alias.asname or alias.name).split(".")[0]] = False
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            plain[node.name] = False
        elif isinstance(node, ast.ExceptHandler) and node.name:
            plain[node.name] = False
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            plain[node.name] = False
    return frozenset(n for n, ok in plain.items() if ok and n not in params and n not in shared)


def stores_as_given(index: ClassIndex, cls: ClassInfo, field: str) -> bool:
    """Whether ``cls(..., field=v)`` builds an object whose ``field`` is ``v``: a dataclass
    of the tree that runs no code of its own on the way (see the module docstring)."""
    chain, external = index.mro(cls)
    if any(name not in _INERT_BASES for name in external):
        return False
    if not _dataclass(index, cls):
        return False
    for klass in chain:
        node = klass.node
        if node.keywords or not all(
            _dataclass_decorator(index, klass, d) for d in node.decorator_list
        ):
            return False
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name in _HOOKS:
                return False
    for klass in chain:
        binding = _binding(klass.node, field)
        if binding is None:
            continue
        return (
            isinstance(binding, ast.AnnAssign)
            and _dataclass(index, klass)
            and not _pseudo(binding.annotation)
        )
    return False


def _dataclass(index: ClassIndex, klass: ClassInfo) -> bool:
    return any(_dataclass_decorator(index, klass, d) for d in klass.node.decorator_list)


def _dataclass_decorator(index: ClassIndex, klass: ClassInfo, deco: ast.expr) -> bool:
    target = deco.func if isinstance(deco, ast.Call) else deco
    found = index.resolve(klass.module, ast.unparse(target), klass.imports)
    return isinstance(found, External) and found.dotted in _DATACLASS


def _binding(node: ast.ClassDef, name: str) -> ast.stmt | None:
    """The last statement of a class body that binds ``name`` (None if none does)."""
    found = None
    for stmt in node.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            if stmt.target.id == name:
                found = stmt
        elif isinstance(stmt, ast.Assign):
            if any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
                found = stmt
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if stmt.name == name:
                found = stmt
        elif any(
            isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
            for n in walk(stmt)
        ):
            found = stmt
    return found


def _pseudo(annotation: ast.expr) -> bool:
    """``ClassVar[...]``, ``InitVar[...]``, ``KW_ONLY``: no instance field a call stores."""
    head = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    text = ast.unparse(head)
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        text = annotation.value.split("[")[0]
    return text.rpartition(".")[2] in ("ClassVar", "InitVar", "KW_ONLY")
