"""What a mock with a spec answers: the names its spec class defines at class level.

``Mock(spec=Cls)`` (``MagicMock``, ``NonCallableMock``, ``AsyncMock``, ``spec_set=``) answers
only the names ``dir(Cls)`` lists (``unittest.mock``'s ``_mock_add_spec`` and ``__getattr__``,
the same from Python 3.10 to 3.14): what the class bodies of its MRO bind (methods,
properties, class attributes, an annotation given a value, ``__slots__``).  An attribute
``__init__`` sets on ``self`` is none of them (python/cpython#85041), nor is a name a class
body only annotates (``model_config: ModelConfig`` of an interface), nor a dataclass field
without a class-level default (an annotation alone, ``dataclasses.field()`` without
``default=``, which the decorator deletes from the class; a pydantic ``Field(...)`` stays):
reading one raises ``AttributeError``.  ``create_autospec(Cls, instance=True)`` answers the
same names and, from Python 3.14 on, a dataclass's fields too (python/cpython#124176): a
field it lacks raises only on older Pythons.

Only what the text shows for certain is claimed: a spec class with a base outside the tree
(``torch.nn.Module``, a pydantic model), a metaclass, ``__init_subclass__``, a decorator that
is not a dataclass's, or a class body that computes its names is not judged (``None``), and
nor is a spec given as an instance, whose ``dir`` holds what its ``__init__`` set.  The names
a mock answers for itself (``return_value``, ``assert_called_once``, ``method_calls``) are
never missing.
"""

from __future__ import annotations

import ast
from unittest import mock

import attrs

from factories.analysis._walk import child_nodes, walk
from factories.analysis.class_refs import NamedClass
from factories.analysis.classes import ClassIndex, ClassInfo, External, FunctionRef
from factories.analysis.extraction import StandIn, StandInKind
from factories.analysis.findings import Location
from factories.analysis.source_tree import ModuleInfo

#: Decorators that make a class a dataclass (its fields are settled as ``_Body`` says).
DATACLASS_DECORATORS = frozenset({"dataclasses.dataclass", "pydantic.dataclasses.dataclass"})
#: Decorators outside the tree that bind no name an instance could read.
_INERT_DECORATORS = frozenset(
    {
        "typing.final",
        "typing_extensions.final",
        "typing.runtime_checkable",
        "typing_extensions.runtime_checkable",
        "functools.total_ordering",
    }
)
_METACLASSES = frozenset({"abc.ABCMeta"})
#: What a mock answers whatever its spec: its own methods and properties, and the attributes
#: its constructor stores on it.
_MOCK_NAMES = frozenset(
    name
    for klass in (mock.NonCallableMagicMock, mock.MagicMock, mock.AsyncMock)
    for name in (*dir(klass), *vars(klass(spec=object)))
)


@attrs.frozen
class MockSpec:
    """What one spec'd mock lacks.  ``spec``: the class (or list) as the finding names it;
    ``lacks``: names it raises on, each with where the class sets it (``__init__``'s line, a
    dataclass field's, an annotation's) and which it is (``"__init__"``, ``"field"``,
    ``"annotation"``); ``newer``: those it raises on only before Python 3.14 (a
    ``create_autospec`` of a dataclass lacking a field); ``exact``: a spec given as a list of
    names, which answers those alone."""

    spec: str
    lacks: tuple[tuple[str, Location, str], ...] = ()
    newer: frozenset[str] = frozenset()
    exact: frozenset[str] | None = None

    def missing(self, name: str) -> bool | None:
        """Whether reading ``name`` raises: True on every Python, False only before 3.14,
        None where the mock answers it (or the text cannot tell)."""
        if name in _MOCK_NAMES or (name.startswith("__") and name.endswith("__")):
            return None
        if self.exact is not None:
            return True if name not in self.exact else None
        if not any(n == name for n, _, _ in self.lacks):
            return None
        return name not in self.newer

    def set_at(self, name: str) -> tuple[Location, str] | None:
        """Where the spec class makes ``name`` an instance's, and how."""
        return next(((where, how) for n, where, how in self.lacks if n == name), None)


def mock_spec(index: ClassIndex, module: ModuleInfo, standin: StandIn) -> MockSpec | None:
    """What the spec'd mock ``standin`` (built in the test ``module``) lacks, or None where
    its spec is not a class of the tree whose names the text settles."""
    if standin.kind is not StandInKind.SPEC_MOCK:
        return None
    if standin.spec_names is not None:
        return MockSpec(repr(list(standin.spec_names)), exact=frozenset(standin.spec_names))
    if not isinstance(standin.class_ref, NamedClass):
        return None
    cls = index.resolve_ref(standin.class_ref, module)
    if not isinstance(cls, ClassInfo):
        return None
    mro, external = index.mro(cls)
    if external:
        return None
    bodies = [_Body.of(index, klass) for klass in mro]
    if any(body is None for body in bodies):
        return None
    present: set[str] = set()
    fields: dict[str, Location] = {}
    set_on_self: dict[str, Location] = {}
    annotated: dict[str, Location] = {}
    for body in reversed(bodies):  # type: ignore[union-attr]
        present |= body.present
        fields.update(body.fields)
        set_on_self.update(body.set_on_self)
        annotated.update(body.annotated)
    lacks = {name: (where, "annotation") for name, where in annotated.items()}
    lacks.update((name, (where, "__init__")) for name, where in set_on_self.items())
    lacks.update((name, (where, "field")) for name, where in fields.items())
    found = tuple(sorted((n, w, how) for n, (w, how) in lacks.items() if n not in present))
    newer = frozenset(fields) if standin.autospec else frozenset()
    return MockSpec(cls.name, found, newer & frozenset(n for n, _, _ in found))


@attrs.frozen
class _Body:
    """One class of the spec's MRO as ``dir`` sees it: ``present``, the names its body binds
    at class level; ``fields``, a dataclass's fields that it does not (with where each is
    declared); ``set_on_self``, the attributes its ``__init__`` and ``__post_init__`` set on
    ``self``; ``annotated``, the names a plain class's body only annotates."""

    present: frozenset[str]
    fields: dict[str, Location]
    set_on_self: dict[str, Location]
    annotated: dict[str, Location] = attrs.field(factory=dict)

    @classmethod
    def of(cls, index: ClassIndex, klass: ClassInfo) -> _Body | None:
        node = klass.node
        kind = _decorated(index, klass)
        if kind is None or not _plain_keywords(index, klass):
            return None
        bound = _class_names(node.body)
        if bound is None or "__init_subclass__" in bound:
            return None
        slots = _slots(node.body)
        if slots is None:
            return None
        added = _set_from_module(klass)
        if added is None:
            return None
        present = set(bound) | slots | added
        fields: dict[str, Location] = {}
        annotated: dict[str, Location] = {}
        for stmt in node.body:
            if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                continue
            name = stmt.target.id
            if kind == "plain" or _pseudo_field(stmt.annotation):
                if stmt.value is None and name not in present:
                    annotated.setdefault(name, Location(klass.path, stmt.lineno))
                continue
            if kind == "slots":
                present.add(name)  # a slot's descriptor: at class level
            elif stmt.value is not None and not _field_without_default(klass, stmt.value):
                continue  # a default: at class level
            else:
                present.discard(name)
                fields[name] = Location(klass.path, stmt.lineno)
        return cls(frozenset(present), fields, _set_on_self(klass), annotated)


def _decorated(index: ClassIndex, klass: ClassInfo) -> str | None:
    """``"plain"`` for a class whose decorators bind nothing, ``"dataclass"`` (or ``"slots"``,
    one with ``slots=``) for a dataclass, None for any other decorator."""
    kind = "plain"
    for deco in klass.node.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        keywords = deco.keywords if isinstance(deco, ast.Call) else []
        found = index.resolve(klass.module, ast.unparse(target), klass.imports)
        if isinstance(found, External) and found.dotted in _INERT_DECORATORS:
            continue
        if isinstance(found, External) and found.dotted in DATACLASS_DECORATORS:
            wrapped: bool | None = True
        elif isinstance(found, FunctionRef):
            wrapped = _wraps_dataclass(index, found)
        else:
            return None
        if wrapped is None:
            return None
        kind = "slots" if wrapped is False or _slotted(keywords) else "dataclass"
    return kind


def _wraps_dataclass(index: ClassIndex, function: FunctionRef) -> bool | None:
    """A decorator of the tree that returns a dataclass decorator's class: True, False where it
    asks for ``slots``, None where it does anything else to the class (sets an attribute on
    it, ``setattr``) or calls no dataclass decorator."""
    calls = 0
    slots = False
    for node in walk(_implementation(function)):
        if isinstance(node, ast.Call):
            name = ast.unparse(node.func)
            if name in ("setattr", "type"):
                return None
            found = index.resolve(function.module, name) if _dotted(node.func) else None
            if isinstance(found, External) and found.dotted in DATACLASS_DECORATORS:
                calls += 1
                slots = slots or _slotted(node.keywords)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for sub in walk(target):
                    if isinstance(sub, ast.Attribute) and not _dunder(sub.attr):
                        return None
    if not calls:
        return None
    return not slots


def _implementation(function: FunctionRef) -> ast.AST:
    """The ``def`` that runs: past ``@overload`` stubs of the same name, the module's last
    top-level ``def`` of that name that is not one."""
    name = function.node.name
    found: ast.AST = function.node
    for stmt in function.module.tree.body:
        if (
            isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
            and stmt.name == name
            and not any(
                ast.unparse(d).rpartition(".")[2] == "overload" for d in stmt.decorator_list
            )
        ):
            found = stmt
    return found


def _slotted(keywords: list[ast.keyword]) -> bool:
    """Whether a dataclass call may ask for ``slots`` (a literal false does not)."""
    for kw in keywords:
        if kw.arg == "slots":
            return not (isinstance(kw.value, ast.Constant) and kw.value.value is False)
    return False


def _plain_keywords(index: ClassIndex, klass: ClassInfo) -> bool:
    """Whether the class statement's keywords change nothing ``dir`` sees: none, or an
    ``abc.ABCMeta`` metaclass."""
    for kw in klass.node.keywords:
        if kw.arg != "metaclass":
            return False
        found = index.resolve(klass.module, ast.unparse(kw.value), klass.imports)
        if not (isinstance(found, External) and found.dotted in _METACLASSES):
            return False
    return True


def _class_names(body: list[ast.stmt]) -> set[str] | None:
    """Every name a class body binds in the class's namespace, through its compound
    statements (not into a nested ``def``'s or class's body); None where the body computes
    names (``locals()``, ``vars()``, ``exec``) or matches patterns."""
    names: set[str] = set()
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(stmt.name)
            for deco in stmt.decorator_list:
                if not _bound_in(deco, names):
                    return None
            continue
        if isinstance(stmt, ast.Match):
            return None
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in stmt.names)
            continue
        if isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None and isinstance(stmt.target, ast.Name):
                names.add(stmt.target.id)
        elif isinstance(stmt, (ast.Assign, ast.AugAssign, ast.For, ast.AsyncFor)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names.update(n.id for t in targets for n in walk(t) if isinstance(n, ast.Name))
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                if item.optional_vars is not None:
                    names.update(n.id for n in walk(item.optional_vars) if isinstance(n, ast.Name))
        for field in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner and not isinstance(stmt, ast.AnnAssign):
                blocks = [h.body for h in inner] if field == "handlers" else [inner]
                for block in blocks:
                    more = _class_names(block)
                    if more is None:
                        return None
                    names |= more
        if not _bound_in(stmt, names):
            return None
    return names


def _bound_in(node: ast.AST, names: set[str]) -> bool:
    """Add the names a walrus in ``node``'s expressions binds; False where it calls what
    computes names (``locals()``, ``vars()``, ``exec``, ``setattr``)."""
    for sub in _expressions(node):
        if isinstance(sub, ast.NamedExpr) and isinstance(sub.target, ast.Name):
            names.add(sub.target.id)
        elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name):
            if sub.func.id in ("locals", "vars", "exec", "setattr", "globals"):
                return False
    return True


def _expressions(node: ast.AST):
    """The nodes of a statement's own expressions: not a nested body's statements, nor a
    ``def``'s, lambda's or class's inside."""
    pending = [
        child for child in child_nodes(node) if not isinstance(child, (ast.stmt, ast.excepthandler))
    ]
    while pending:
        sub = pending.pop()
        yield sub
        if not isinstance(sub, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef)):
            pending.extend(child_nodes(sub))


def _slots(body: list[ast.stmt]) -> set[str] | None:
    """The names a literal ``__slots__`` lists (descriptors at class level); None where it is
    not a literal."""
    for stmt in body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else []
        if isinstance(stmt, ast.AnnAssign):
            targets = [stmt.target]
        if not any(isinstance(t, ast.Name) and t.id == "__slots__" for t in targets):
            continue
        value = stmt.value
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return {value.value}
        if not isinstance(value, (ast.Tuple, ast.List, ast.Set)):
            return None
        names = [e.value for e in value.elts if isinstance(e, ast.Constant)]
        if len(names) != len(value.elts) or not all(isinstance(n, str) for n in names):
            return None
        return set(names)
    return set()


def _set_from_module(klass: ClassInfo) -> set[str] | None:
    """Names the module defining ``klass`` sets on the class itself at module level
    (``Cls.name = value``); None where it sets one by a computed name (``setattr``)."""
    if klass.scope:
        return set()
    name = klass.name
    out: set[str] = set()
    for stmt in klass.module.tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for node in walk(stmt):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.ctx, ast.Store)
                and isinstance(node.value, ast.Name)
                and node.value.id == name
            ):
                out.add(node.attr)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "setattr"
                and node.args
                and isinstance(node.args[0], ast.Name)
                and node.args[0].id == name
            ):
                key = node.args[1] if len(node.args) > 1 else None
                if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                    return None
                out.add(key.value)
    return out


def _set_on_self(klass: ClassInfo) -> dict[str, Location]:
    """The attributes ``__init__`` and ``__post_init__`` of ``klass`` set on ``self``
    (``self.x = ...``, ``self.x: T = ...``, ``setattr(self, "x", ...)``,
    ``object.__setattr__(self, "x", ...)``), with the line of the first set; not what a
    function nested in them sets, which runs only if called."""
    out: dict[str, Location] = {}
    for stmt in klass.node.body:
        if not (
            isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
            and stmt.name in ("__init__", "__post_init__")
        ):
            continue
        params = [*stmt.args.posonlyargs, *stmt.args.args]
        if not params:
            continue
        me = params[0].arg
        for node in _own_nodes(stmt):
            name = None
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                if isinstance(node.value, ast.Name) and node.value.id == me:
                    name = node.attr
            elif isinstance(node, ast.Call) and ast.unparse(node.func) in (
                "setattr",
                "object.__setattr__",
            ):
                args = node.args
                if len(args) > 1 and isinstance(args[0], ast.Name) and args[0].id == me:
                    key = args[1]
                    if isinstance(key, ast.Constant) and isinstance(key.value, str):
                        name = key.value
            if name is not None and name not in out:
                out[name] = Location(klass.path, node.lineno)
    return out


def _own_nodes(function: ast.FunctionDef | ast.AsyncFunctionDef):
    """The nodes of a function's body, not those of a ``def``, lambda or class inside it."""
    pending: list[ast.AST] = list(function.body)
    while pending:
        node = pending.pop()
        yield node
        for child in child_nodes(node):
            if not isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
            ):
                pending.append(child)


def _pseudo_field(annotation: ast.expr) -> bool:
    """``ClassVar[...]``, ``InitVar[...]`` and ``KW_ONLY``: annotations a dataclass makes no
    instance field of."""
    head = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    text = ast.unparse(head)
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        text = annotation.value.split("[")[0]
    return text.rpartition(".")[2] in ("ClassVar", "InitVar", "KW_ONLY")


def _field_without_default(klass: ClassInfo, value: ast.expr) -> bool:
    """``dataclasses.field(...)`` with no ``default=``: the decorator deletes the class
    attribute (a ``default_factory`` builds the value in ``__init__``)."""
    if not isinstance(value, ast.Call) or not _dotted(value.func):
        return False
    name = ast.unparse(value.func)
    head = name.split(".")[0]
    imports = {**klass.module.imports, **(klass.imports or {})}
    target = imports.get(head)
    if target is None:
        return False
    dotted = ".".join([target.dotted, *name.split(".")[1:]])
    if dotted != "dataclasses.field":
        return False
    return not any(kw.arg == "default" for kw in value.keywords) and not value.args


def _dotted(expr: ast.expr) -> bool:
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    return isinstance(expr, ast.Name)


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")
