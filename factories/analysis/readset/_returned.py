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

A test can also assert a field of an item of a list the result holds (``meta =
sched.build(out)``, then ``req = meta.requests[0]; assert req.can_save``:
``CallContext.result_items``).  Where every ``return`` gives one local, bound once by a
statement of the body (``returned_local``), that local's list held such an item when the
call returned; and where a statement of the body after the binding is a call of a method of
``self`` handed the local, and neither the rest of the body nor that method can add,
remove or replace the list's items or set that field of any object (``keeps_items``: a
textual scan that follows the methods of ``self`` they call), the list held it all the
while the method ran.  There ``[r for r in meta.requests if r.can_save]`` is not empty
(``filtered_items``), so ``if not kept: return`` does not return: where the assertion
holds, that is the path; where it does not, the test fails anyway.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence

from factories.analysis._walk import child_nodes, walk, walk_all
from factories.analysis.classes import ClassIndex, ClassInfo, External
from factories.analysis.readset._syntax import compared_to_true

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


# -- an item of the returned object's list (``CallContext.result_items``) ------------------

#: Builtins that change none of their arguments (what they give may hold them).
_PURE = frozenset(
    {
        "len", "list", "tuple", "set", "frozenset", "dict", "sorted", "reversed", "enumerate",
        "zip", "range", "iter", "isinstance", "issubclass", "any", "all", "min", "max", "sum",
        "str", "int", "float", "bool", "repr", "id", "hash", "type", "getattr", "hasattr",
    }
)  # fmt: skip
#: Methods of a list, dict or set that change only that container.
_CONTAINER_METHODS = frozenset(
    {
        "append", "extend", "insert", "add", "update", "setdefault", "pop", "remove",
        "discard", "clear", "sort", "reverse", "get", "items", "keys", "values", "copy",
        "index", "count",
    }
)  # fmt: skip
_REFLECTIVE = frozenset(
    {"setattr", "delattr", "__setattr__", "__delattr__", "vars", "exec", "eval"}
)
#: How many methods of ``self`` deep ``keeps_items`` follows before it gives up.
_MAX_KEEP_DEPTH = 4


def returned_local(
    func: ast.FunctionDef | ast.AsyncFunctionDef,
) -> tuple[str, int] | None:
    """``(name, index)`` where every ``return`` of ``func`` gives the local ``name`` and the
    one binding of it (none in a nested scope either, no ``global``/``nonlocal``) is a plain
    ``name = ...`` statement of the function's body itself, its ``index``-th: the object
    bound there is the one the call returns.  None for a generator or ``async`` function
    (whose caller gets no ``return``'s value)."""
    if isinstance(func, ast.AsyncFunctionDef):
        return None
    returns: list[ast.Return] = []
    todo: list[ast.AST] = list(func.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return None
        if isinstance(node, _SCOPES):
            continue
        if isinstance(node, ast.Return):
            returns.append(node)
        todo.extend(child_nodes(node))
    if not returns or not all(isinstance(r.value, ast.Name) for r in returns):
        return None
    name = returns[0].value.id  # type: ignore[union-attr]
    if any(r.value.id != name for r in returns):  # type: ignore[union-attr]
        return None
    stores = [
        n
        for n in walk(func)
        if (isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load))
        or (isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names)
        or (isinstance(n, ast.arg) and n.arg == name)
    ]
    if len(stores) != 1:
        return None
    for index, stmt in enumerate(func.body):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and stmt.targets[0] is stores[0]:
            return name, index
    return None


def keeps_items(
    stmts: Sequence[ast.stmt],
    func: ast.FunctionDef | ast.AsyncFunctionDef,
    holders: frozenset[str],
    items: str,
    field: str,
    method: Callable[[str], ast.FunctionDef | ast.AsyncFunctionDef | None],
    seen: tuple[int, ...] = (),
) -> bool:
    """Whether running ``stmts`` (of ``func``, whose locals ``holders`` hold the object whose
    list field ``items`` the test asserts) surely leaves which items that list holds and
    their ``field`` as they were: the text stores or deletes no attribute named ``items`` or
    ``field`` (of any object), calls no reflective builtin (``setattr``), defines no nested
    function, lambda or class, stores nothing that may hold the object, its list or an item
    into an attribute or a subscript, calls no method on them (``meta.add(r)``,
    ``meta.requests.append(r)``; a list the function built itself may be changed), and
    hands them to no call but builtins that change no argument (``len``, ``enumerate``) and
    methods of ``self`` (``method``: the plain method a name gives, else None), followed
    with the parameters they bind held, the method's whole body checked so, at most
    ``_MAX_KEEP_DEPTH`` deep.  What may hold them: the holders, their ``items`` field, an
    item or a slice of either, a display, comprehension or builtin's result over them, and
    every local bound (assigned, iterated, grown by a container method) to such a value;
    another field of an item is its data, which the assertion does not concern."""
    if len(seen) > _MAX_KEEP_DEPTH:
        return False
    held, fresh = _holders(func, holders, items)
    for node in walk_all(stmts):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return False
        if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
            if node.attr in (items, field):
                return False
        elif isinstance(node, ast.Subscript) and not isinstance(node.ctx, ast.Load):
            if _hands(node.value, held, items):
                return False
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if (
                node.value is not None
                and any(isinstance(t, (ast.Attribute, ast.Subscript)) for t in targets)
                and _hands(node.value, held, items)
            ):
                return False
            if (
                isinstance(node, ast.AugAssign)
                and isinstance(node.target, ast.Name)
                and node.target.id not in fresh
                and _hands(node.target, held, items)
            ):
                return False  # ``reqs += [r]`` grows the list ``reqs`` holds in place
        elif isinstance(node, ast.Call) and not _call_keeps(
            node, func, held, fresh, items, field, method, seen
        ):
            return False
    return True


def _call_keeps(
    node: ast.Call,
    func: ast.FunctionDef | ast.AsyncFunctionDef,
    held: frozenset[str],
    fresh: frozenset[str],
    items: str,
    field: str,
    method: Callable[[str], ast.FunctionDef | ast.AsyncFunctionDef | None],
    seen: tuple[int, ...],
) -> bool:
    """``keeps_items`` of one call."""
    target = node.func
    arguments = [*node.args, *(k.value for k in node.keywords)]
    handed = any(_hands(a, held, items) for a in arguments)
    if isinstance(target, ast.Name):
        if target.id in _REFLECTIVE:
            return False
        return not handed or target.id in _PURE
    if not isinstance(target, ast.Attribute):
        return not handed and not _hands(target, held, items)
    receiver = target.value
    self_name = _self_name(func)
    if isinstance(receiver, ast.Name) and receiver.id == self_name:
        # followed even where handed nothing: it may reach the object through ``self``
        callee = method(target.attr)
        if callee is None:
            return False
        if id(callee) in seen:
            return not handed
        bound = _bound_holders(callee, node, held, items)
        if bound is None:
            return False
        return keeps_items(callee.body, callee, bound, items, field, method, (*seen, id(callee)))
    if target.attr in _REFLECTIVE or target.attr == items:
        return False
    if isinstance(receiver, ast.Name) and receiver.id in fresh:
        return target.attr in _CONTAINER_METHODS
    if (
        isinstance(receiver, ast.Name)
        and receiver.id in ("dict", "list", "set", "tuple", "frozenset")
        and receiver.id not in held
        and target.attr == "fromkeys"
    ):
        return True  # ``dict.fromkeys(xs)``: a builtin type's constructor
    return not handed and not _hands(receiver, held, items)


def _self_name(func: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    positional = [*func.args.posonlyargs, *func.args.args]
    return positional[0].arg if positional else None


def _bound_holders(
    callee: ast.FunctionDef | ast.AsyncFunctionDef,
    call: ast.Call,
    held: frozenset[str],
    items: str,
) -> frozenset[str] | None:
    """The parameters of a method of ``self`` that ``call`` hands something ``held`` may
    hold; None where such a value goes through ``*``/``**``."""
    positional = [a.arg for a in (*callee.args.posonlyargs, *callee.args.args)][1:]
    bound: set[str] = set()
    for i, arg in enumerate(call.args):
        if not _hands(arg, held, items):
            continue
        if isinstance(arg, ast.Starred) or i >= len(positional):
            return None
        bound.add(positional[i])
    for keyword in call.keywords:
        if _hands(keyword.value, held, items):
            if keyword.arg is None:
                return None
            bound.add(keyword.arg)
    return frozenset(bound)


def _holders(
    func: ast.FunctionDef | ast.AsyncFunctionDef, holders: frozenset[str], items: str
) -> tuple[frozenset[str], frozenset[str]]:
    """The locals of ``func`` that may hold the object, its list or an item (``holders``
    and every name bound to such a value, to a fixpoint), and those every binding of which
    is a container the function builds itself (``fresh``: a display, a comprehension, a
    builtin container's constructor)."""
    bindings: list[tuple[ast.expr, ast.expr | None, bool]] = []  # (target, value, iterated)
    for node in walk(func):
        if isinstance(node, ast.Assign):
            bindings.extend((t, node.value, False) for t in node.targets)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            bindings.append((node.target, node.value, False))
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            bindings.append((node.target, node.iter, True))
        elif isinstance(node, ast.NamedExpr):
            bindings.append((node.target, node.value, False))
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            bindings.append((node.optional_vars, node.context_expr, False))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.attr in _CONTAINER_METHODS
        ):
            for arg in (*node.args, *(k.value for k in node.keywords)):
                bindings.append((node.func.value, arg, False))
    built: dict[str, bool] = {}
    for target, value, iterated in bindings:
        if isinstance(target, ast.Name) and not iterated and value is not None:
            if target.ctx is not None and isinstance(target.ctx, ast.Load):
                continue  # grown by a container method: not a binding of the name
            built[target.id] = built.get(target.id, True) and _builds_container(value)
        else:
            for sub in walk(target):
                if isinstance(sub, ast.Name):
                    built[sub.id] = False
    args = func.args
    params = {
        a.arg
        for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)
        if a is not None
    }
    fresh = frozenset(name for name, ok in built.items() if ok and name not in params)
    held = set(holders)
    changed = True
    while changed:
        changed = False
        for target, value, _ in bindings:
            if value is None or not _hands(value, frozenset(held), items):
                continue
            for sub in walk(target):
                if isinstance(sub, ast.Name) and sub.id not in held:
                    held.add(sub.id)
                    changed = True
    return frozenset(held), fresh - holders


def _builds_container(value: ast.expr) -> bool:
    if isinstance(value, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)):
        return True
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id in ("list", "dict", "set")
    )


def _hands(node: ast.AST, held: frozenset[str], items: str) -> bool:
    """Whether ``node``'s value may be (or hold) something ``held`` holds: see
    ``keeps_items``."""
    if isinstance(node, ast.Name):
        return node.id in held
    if isinstance(node, (ast.Starred, ast.Await, ast.NamedExpr)):
        return _hands(node.value, held, items)
    if isinstance(node, ast.Attribute):
        return node.attr in (items, "__dict__") and _hands(node.value, held, items)
    if isinstance(node, ast.Subscript):
        return _hands(node.value, held, items)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return any(_hands(e, held, items) for e in node.elts)
    if isinstance(node, ast.Dict):
        return any(_hands(e, held, items) for e in (*node.keys, *node.values) if e is not None)
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
        return _hands(node.elt, held, items)
    if isinstance(node, ast.DictComp):
        return _hands(node.key, held, items) or _hands(node.value, held, items)
    if isinstance(node, ast.IfExp):
        return _hands(node.body, held, items) or _hands(node.orelse, held, items)
    if isinstance(node, ast.BoolOp):
        return any(_hands(v, held, items) for v in node.values)
    if isinstance(node, ast.BinOp):
        return _hands(node.left, held, items) or _hands(node.right, held, items)
    if isinstance(node, ast.Call):
        parts = [node.func, *node.args, *(k.value for k in node.keywords)]
        if isinstance(node.func, ast.Attribute):
            parts.append(node.func.value)
        return any(_hands(p, held, items) for p in parts)
    return False


def filtered_items(value: ast.expr, held: dict[str, set[tuple[str, str]]]) -> bool:
    """Whether ``value`` is ``[e for v in p.items if v.field]`` (also ``v.field is True``,
    ``== True``), one ``for`` clause, with ``(items, field)`` held for the parameter ``p``:
    a list with an item, where ``p.items`` holds one whose ``field`` is true."""
    if not (isinstance(value, ast.ListComp) and len(value.generators) == 1):
        return False
    generator = value.generators[0]
    if generator.is_async or not isinstance(generator.target, ast.Name):
        return False
    source = generator.iter
    if not (
        isinstance(source, ast.Attribute)
        and isinstance(source.value, ast.Name)
        and len(generator.ifs) == 1
    ):
        return False
    condition = generator.ifs[0]
    condition = compared_to_true(condition) or condition
    return (
        isinstance(condition, ast.Attribute)
        and isinstance(condition.value, ast.Name)
        and condition.value.id == generator.target.id
        and (source.attr, condition.attr) in held.get(source.value.id, set())
    )


def stored_away(func: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    """Whether ``func`` stores what its local ``name`` holds (or a display holding it) into
    an attribute or a subscript (``self.last = meta``), where later code could reach it."""
    held = frozenset({name})
    for node in walk(func):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if (
                node.value is not None
                and any(isinstance(t, (ast.Attribute, ast.Subscript)) for t in targets)
                and _hands(node.value, held, "")
            ):
                return True
    return False
