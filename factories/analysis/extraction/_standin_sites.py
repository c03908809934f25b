"""Which calls build a stand-in, and what a call's callee names through the test's imports.

Only the test module's text is read: a name is ``types.SimpleNamespace`` or
``argparse.Namespace`` when its imports say so (``SimpleNamespace`` is that name's only
meaning in vLLM's tests, so it counts unimported too), and a mock is spec'd when the call
says ``spec=``/``spec_set=`` (or passes the spec first), or is ``create_autospec(...,
instance=True)``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from factories.analysis.class_refs import ClassRef, NamedClass, ref_of_expression
from factories.analysis.extraction._model import is_object_new
from factories.analysis.extraction._standin_model import StandInKind
from factories.analysis.source_tree import ImportTarget

#: Text one of which a file must hold to be parsed for stand-ins at all.
STANDIN_NEEDLES = (
    "SimpleNamespace",
    "Namespace(",
    "spec=",
    "spec_set=",
    "create_autospec",
    "object.__new__(",
)
MOCK_CLASSES = frozenset(
    {"Mock", "MagicMock", "NonCallableMock", "NonCallableMagicMock", "AsyncMock"}
)
#: The last name of every callee that can build a stand-in.
CREATING_NAMES = MOCK_CLASSES | {"SimpleNamespace", "Namespace", "create_autospec", "__new__"}
#: Keywords a mock's constructor takes for itself; the others become attributes.
#: Reads the items of a mapping a creation call unpacks, or None where they are not written.
MappingReader = Callable[[ast.expr], "list[tuple[str, ast.expr, ast.AST]] | None"]

MOCK_OPTIONS = frozenset(
    {"spec", "spec_set", "side_effect", "return_value", "wraps", "name", "unsafe", "instance"}
)


def might_hold_standins(text: str) -> bool:
    """Cheap text pre-filter: whether a test file can build a stand-in at all."""
    return any(needle in text for needle in STANDIN_NEEDLES)


def loaded_modules(tree: ast.Module) -> dict[str, ImportTarget]:
    """Module-level names bound to a module imported by its literal name
    (``mod = importlib.import_module("vllm.x.mod")``, ``pytest.importorskip("vllm.x.mod")``):
    imports, spelled as calls (a test imports a module that may be missing that way)."""
    out: dict[str, ImportTarget] = {}
    for stmt in tree.body:
        if not (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Call)
            and len(stmt.value.args) == 1
            and not stmt.value.keywords
        ):
            continue
        func = stmt.value.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        first = stmt.value.args[0]
        if (
            name in ("import_module", "importorskip")
            and isinstance(first, ast.Constant)
            and isinstance(first.value, str)
            and not first.value.startswith(".")
        ):
            out[stmt.targets[0].id] = ImportTarget(first.value, None)
    return out


def dotted_name(expr: ast.expr, imports: dict[str, ImportTarget]) -> str | None:
    """``expr`` (a dotted name) with its head replaced by what ``imports`` bind it to."""
    parts: list[str] = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name) or expr.id not in imports:
        return None
    return ".".join([imports[expr.id].dotted, *reversed(parts)])


def standin_kind(
    call: ast.AST, imports: dict[str, ImportTarget]
) -> tuple[StandInKind, ClassRef | None] | None:
    """The kind of stand-in ``call`` builds and its class (stub class or mock spec), or
    None for any other expression."""
    if not isinstance(call, ast.Call):
        return None
    if is_object_new(call):
        return StandInKind.OBJECT_NEW, ref_of_expression(call.args[0])
    func = call.func
    last = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    dotted = dotted_name(func, imports)
    if last == "SimpleNamespace" and dotted in (None, "types.SimpleNamespace"):
        return StandInKind.SIMPLE_NAMESPACE, None
    if last == "Namespace" and dotted == "argparse.Namespace":
        return StandInKind.ARGPARSE_NAMESPACE, None
    if last in MOCK_CLASSES:
        spec = _mock_spec(call)
        if spec is None or (isinstance(spec, ast.Constant) and spec.value is None):
            return None
        return StandInKind.SPEC_MOCK, _spec_ref(spec, imports)
    if last == "create_autospec" and call.args:
        instance = _keyword(call, "instance")
        if isinstance(instance, ast.Constant) and instance.value is True:
            return StandInKind.SPEC_MOCK, _spec_ref(call.args[0], imports)
    return None


def spec_names(call: ast.Call) -> tuple[str, ...] | None:
    """The names a mock's spec lists, where the call gives it as a list (or tuple) of string
    literals (``Mock(spec=["a", "b"])``); None for a spec given otherwise, and for
    ``create_autospec``, which specs a list by its type."""
    func = call.func
    last = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    spec = _mock_spec(call) if last in MOCK_CLASSES else None
    if not isinstance(spec, (ast.List, ast.Tuple)):
        return None
    names = [e.value for e in spec.elts if isinstance(e, ast.Constant)]
    if len(names) != len(spec.elts) or not all(isinstance(n, str) for n in names):
        return None
    return tuple(names)


def is_autospec(call: ast.Call) -> bool:
    """Whether a spec'd mock is ``create_autospec(...)``'s (not a mock class's call)."""
    func = call.func
    return (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")) == (
        "create_autospec"
    )


def _mock_spec(call: ast.Call) -> ast.expr | None:
    """The spec a mock class's call gives: ``spec=``, ``spec_set=``, or its first argument."""
    spec = _keyword(call, "spec") or _keyword(call, "spec_set")
    if spec is None and call.args:
        spec = call.args[0]
    return spec


def creation_fields(
    call: ast.Call, kind: StandInKind, mapping_items: MappingReader | None = None
) -> tuple[list[tuple[str, ast.expr, ast.AST]], bool]:
    """``(name, value, where)`` of each field the creation call itself sets, and whether it
    also sets fields no literal names (``**options``, a positional mapping not written out).
    ``mapping_items`` reads a mapping the call unpacks (None: not written out); by default a
    dict display only (the variants read mappings through a case's bindings too)."""
    if kind is StandInKind.OBJECT_NEW:
        return [], False
    read = mapping_items or _display_items
    out: list[tuple[str, ast.expr, ast.AST]] = []
    opaque = False
    mappings: list[ast.expr] = []
    if kind is not StandInKind.SPEC_MOCK:
        mappings.extend(call.args)
    for kw in call.keywords:
        if kw.arg is None:
            mappings.append(kw.value)
        elif kind is not StandInKind.SPEC_MOCK or kw.arg not in MOCK_OPTIONS:
            out.append((kw.arg, kw.value, kw))
    for mapping in mappings:
        named = read(mapping)
        if named is None:
            opaque = True
        else:
            out.extend(named)
    return out, opaque


def _display_items(node: ast.expr) -> list[tuple[str, ast.expr, ast.AST]] | None:
    items = literal_dict_items(node)
    return None if items is None else [(key, value, value) for key, value in items]


def literal_dict_items(node: ast.expr) -> list[tuple[str, ast.expr]] | None:
    """The items of a dict display whose keys are all string literals, else None."""
    if not isinstance(node, ast.Dict):
        return None
    items = []
    for key, value in zip(node.keys, node.values):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            return None
        items.append((key.value, value))
    return items


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((kw.value for kw in call.keywords if kw.arg == name), None)


def _spec_ref(spec: ast.expr, imports: dict[str, ImportTarget]) -> ClassRef | None:
    """The spec as a ``ClassRef`` where it is an expression naming a class; a list of names
    or an instance built on the spot has none.  A name imported from ``vllm`` is named by its
    full path, so that one the test imports inside a function resolves too."""
    if isinstance(spec, (ast.List, ast.Tuple, ast.Set, ast.Constant)):
        return None
    dotted = dotted_name(spec, imports)
    if dotted is not None and dotted.startswith("vllm."):
        return NamedClass(dotted)
    return ref_of_expression(spec)
