"""What a test states about a value, beyond a plain literal.

A stub's path through vLLM code is decided by the values the test hands it: the fields it sets
and the arguments it passes.  Literals (``False``, ``0``, ``None``) were always known; these are
the other shapes tests use to select a path, each known only as far as the test's text says:

- ``Obj``: an object the test built (``SimpleNamespace(n=0)``, ``Mock()``,
  ``CommonAttentionMetadata(num_actual_tokens=0)``, ``[1, 2]``).  It is not ``None``; its
  keyword arguments are its known attributes (dataclasses, namespaces and mocks store them so);
  its truth is known for namespaces, mocks and container literals, not for other classes (a
  tensor has no truth value); a mock whose ``side_effect`` is an exception ``raises`` when
  called; its ``length`` (``len(x)``, ``x.shape[0]``, ``x.size(0)``) is known for container
  displays and for arrays built from one or with a literal size (``torch.tensor([3, 5])``,
  ``torch.zeros(4, 8)``, ``np.arange(3)``), so ``if not idx.shape[0]: return`` is decided.
  A lambda whose body the test states ``returns`` that value when called.  A bare
  ``object()`` is true and not ``None``, nothing more.
  A method bound to the object holding it (``ns.f = types.MethodType(Cls.m, ns)``) is an
  ``Obj`` that names the method (``bound``).
- ``EnumMember``: ``AttentionType.DECODER``, compared by its ``Class.MEMBER`` text, since the
  test and the vLLM module may import the class under different paths.

Every comparison that the text does not settle answers None (unknown), never a guess.
"""

from __future__ import annotations

import ast
import builtins
import types
from collections.abc import Callable

import attrs

from factories.analysis._walk import walk

# Constructors whose instances are truthy and keep their keyword arguments as attributes.
_NAMESPACES = frozenset(
    {
        "SimpleNamespace",
        "Mock",
        "MagicMock",
        "NonCallableMock",
        "NonCallableMagicMock",
        "AsyncMock",
        "create_autospec",
    }
)
_MOCKS = _NAMESPACES - {"SimpleNamespace"}
_EXCEPTIONS = frozenset(
    name
    for name in dir(builtins)
    if isinstance(getattr(builtins, name), type)
    and issubclass(getattr(builtins, name), BaseException)
)
#: How many nested expressions and local-name bindings ``test_value`` looks through.
_MAX_EXPRESSION_DEPTH = 4
# Array constructors whose first dimension is their data's length or a literal size argument.
_FROM_DATA = frozenset({"tensor", "as_tensor", "array", "asarray"})
_FROM_SIZE = frozenset({"zeros", "ones", "empty", "full", "rand", "randn"})


@attrs.frozen
class Obj:
    """A non-None object the test built; ``fields`` are its known attributes."""

    fields: tuple[tuple[str, object], ...] = ()
    truthy: bool | None = None
    raises: bool = False
    length: int | None = None  # the first dimension, where the test's text states it
    # The type the test's text makes it: "dict" of ``{...}``, "list" of ``[...]``,
    # "SimpleNamespace" of ``SimpleNamespace(...)``, the class name of ``Cls(...)``,
    # ``ARRAY`` of ``torch.zeros(2)``; None where the text does not say.
    kind: str | None = None
    # ``(value,)`` of what calling it returns, where the test states that: a lambda whose
    # body is a value the test states (``lambda: captured``, ``lambda *a: None``),
    # ``Mock(return_value=False)`` (a stand-in's field, ``returning``).  Not part of its
    # equality or text (nor are ``awaits``, ``items``, ``members``): the stub extraction's
    # tracks (compared per parametrize case) and the stub audit's output do not depend on
    # them; only a stand-in's walk reads them.
    returns: tuple[object] | tuple[()] = attrs.field(default=(), eq=False, repr=False)
    # A method bound to the object that holds this value as a field (``ns.f =
    # types.MethodType(Cls.m, ns)``): the method's dotted name (``vllm.x.Cls.m``), which a call
    # of ``self.f(...)`` runs on that same object.
    bound: str | None = None
    # ``(value,)``: what awaiting its call gives, where the test states it
    # (``AsyncMock(return_value=None)``, whose call completes without suspending).
    awaits: tuple[object] | tuple[()] = attrs.field(default=(), eq=False, repr=False)
    # A dict display whose keys are all literals: each key with its value where the test's
    # text states it (``keyed``); None for any other object.
    items: tuple[tuple[object, tuple[object] | tuple[()]], ...] | None = attrs.field(
        default=None, eq=False, repr=False
    )
    # A list, tuple or set display of plain literals: its elements (``in`` is known).
    members: tuple[object, ...] | None = attrs.field(default=None, eq=False, repr=False)
    # The dotted name of the class whose constructor built it (``Fp8Config(...)`` a
    # constructor argument names: ``MeetingMaker.built_values``), where the audit of a
    # stand-in settles that class in the tree (``standin_audit._tree_object``): its methods
    # that return one literal give it (``Decisions.literal_return``).
    cls: str | None = attrs.field(default=None, eq=False, repr=False)
    # An empty container the test writes in place as a stand-in's field (``set()``, ``[]``,
    # ``{}``: ``empty_display``): nothing is in it, so ``x in self.f`` is false whatever
    # ``x`` is, until code may have changed it (``Decisions.empty_member``).  Part of its
    # equality (two walks that differ in it are two walks), not of its text.
    empty: bool = attrs.field(default=False, repr=False)

    def keyed(self, key: object) -> tuple[object] | tuple[()] | None:
        """``self[key]`` of a dict display with literal keys: ``(value,)`` where stated,
        ``()`` where the key is there with a value the text does not state, None where the
        key is not there (``.get`` gives its default); None for other objects too, which
        ``items is None`` tells apart."""
        for k, value in reversed(self.items or ()):  # the last of a repeated key wins
            if k == key and type(k) is type(key):
                return value
        return None

    def field(self, name: str) -> tuple[object] | tuple[()]:
        for key, value in self.fields:
            if key == name:
                return (value,)
        return ()


@attrs.frozen
class Truth:
    """A value of which the test states only whether it is true (``assert f(x)``,
    ``assert not f(x)``)."""

    value: bool


@attrs.frozen
class NotNone:
    """A value of which the test states only that it is not ``None`` (``assert x is not
    None``): an arm that only returns ``None`` is not the run the assertion passed on, while
    a falsy value other than ``None`` may still be what it got."""


@attrs.frozen
class EnumMember:
    """``Class.MEMBER`` as the source spells it (the last two parts of the dotted name)."""

    text: str

    @property
    def owner(self) -> str:
        return self.text.rpartition(".")[0]


def is_exception_name(name: str) -> bool:
    """A class name that, by Python's naming convention or as a builtin, is an exception."""
    return name in _EXCEPTIONS or name.endswith(("Error", "Exception", "Interrupt", "Exit"))


def enum_member(node: ast.expr) -> EnumMember | None:
    """``X.MEMBER`` / ``pkg.X.MEMBER`` with an upper-case member and a capitalised class."""
    if not isinstance(node, ast.Attribute) or not node.attr.isupper():
        return None
    owner = node.value
    if isinstance(owner, ast.Attribute):
        owner_name = owner.attr
    elif isinstance(owner, ast.Name):
        owner_name = owner.id
    else:
        return None
    if not owner_name[:1].isupper() or owner_name.isupper():
        return None
    return EnumMember(f"{owner_name}.{node.attr}")


def _callee_name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def raises_when_called(node: ast.expr | None, resolve: Callable[[ast.expr], object]) -> bool:
    """Whether the mock ``node`` raises on every call: ``Mock(side_effect=SomeError)`` or
    ``Mock(side_effect=SomeError("x"))`` (an exception class or instance, not a function or
    an iterable, which may return)."""
    if not isinstance(node, ast.Call) or _callee_name(node.func) not in _MOCKS:
        return False
    return any(k.arg == "side_effect" and is_exception_expr(k.value) for k in node.keywords)


def mock_runs_nothing(node: ast.expr | None) -> bool:
    """Whether ``node`` builds a mock whose calls run nothing they are handed (no
    ``side_effect``, ``wraps`` or ``**`` keywords): a callable vLLM hands it never runs."""
    return (
        isinstance(node, ast.Call)
        and _callee_name(node.func) in _MOCKS
        and not any(kw.arg in ("side_effect", "wraps") or kw.arg is None for kw in node.keywords)
    )


def is_exception_expr(node: ast.expr) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    return is_exception_name(_callee_name(target))


def test_value(
    node: ast.expr | None,
    resolve: Callable[[ast.Name], ast.expr | None] = lambda name: None,
    depth: int = 0,
) -> tuple[object] | tuple[()]:
    """``(value,)`` for what the test's expression ``node`` is known to be, else ``()``.

    ``resolve`` maps a local name to the expression last assigned to it (or None)."""
    if node is None or depth > _MAX_EXPRESSION_DEPTH:
        return ()
    if isinstance(node, ast.Constant):
        if isinstance(node.value, (bool, int, float, str, type(None))):
            return (node.value,)
        return ()
    if isinstance(node, ast.Name):
        bound = resolve(node)
        return test_value(bound, resolve, depth + 1) if bound is not None else ()
    if isinstance(node, ast.IfExp):  # ``[copy] if has_copies else []``
        condition = test_value(node.test, resolve, depth + 1)
        taken = truthy(condition[0]) if condition else None
        if taken is None:
            return ()
        return test_value(node.body if taken else node.orelse, resolve, depth + 1)
    member = enum_member(node)
    if member is not None:
        return (member,)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        kind = type(node).__name__.lower()
        if any(isinstance(e, ast.Starred) for e in node.elts):
            return (Obj(kind=kind),)
        members = tuple(e.value for e in node.elts if isinstance(e, ast.Constant))
        plain = len(members) == len(node.elts) and all(
            isinstance(m, (bool, int, float, str, bytes, type(None))) for m in members
        )
        return (
            Obj(
                truthy=bool(node.elts),
                length=len(node.elts),
                kind=kind,
                members=members if plain else None,
            ),
        )
    if isinstance(node, ast.Dict):
        if None in node.keys:
            return (Obj(kind="dict"),)
        keys = [k.value for k in node.keys if isinstance(k, ast.Constant)]
        if len(keys) == len(node.keys) and all(isinstance(k, (str, int)) for k in keys):
            items = tuple(
                (key, test_value(value, resolve, depth + 1))
                for key, value in zip(keys, node.values)
            )
            return (Obj(truthy=bool(node.keys), length=len(node.keys), kind="dict", items=items),)
        return (Obj(truthy=bool(node.keys), length=len(node.keys), kind="dict"),)
    if isinstance(node, ast.Lambda):
        return (Obj(truthy=True, returns=_lambda_returns(node, resolve, depth)),)
    if isinstance(node, ast.JoinedStr):
        return (Obj(truthy=True),)
    if isinstance(node, ast.Call):
        name = _callee_name(node.func)
        fields = []
        for kw in node.keywords:
            if kw.arg is None:
                continue
            value = test_value(kw.value, resolve, depth + 1)
            if value:
                fields.append((kw.arg, value[0]))
        if (
            isinstance(node.func, ast.Name)
            and name == "object"
            and resolve(node.func) is None
            and not node.args
            and not node.keywords
        ):
            return (Obj(truthy=True),)  # ``object()``: a bare object, true, never None
        if name in _NAMESPACES:
            kind = "SimpleNamespace" if name == "SimpleNamespace" else None
            return (Obj(tuple(fields), True, raises_when_called(node, resolve), kind=kind),)
        length = _array_length(name, node, resolve, depth)
        if length is not None:
            return (Obj(length=length, kind=ARRAY if _array_module(node.func) else None),)
        if name[:1].isupper() and not is_exception_name(name):
            # a constructed object: not None, truth unknown, an instance of the class named
            return (Obj(tuple(fields), kind=name),)
    return ()


def _array_module(func: ast.expr) -> bool:
    """Whether ``func`` is spelled on torch or numpy (``torch.zeros``, ``np.array``): what
    it builds is an array, not a list a test helper of that name might return."""
    return (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id in ("torch", "np", "numpy")
    )


def _lambda_returns(
    node: ast.Lambda, resolve: Callable[[ast.Name], ast.expr | None], depth: int
) -> tuple[object] | tuple[()]:
    """What a lambda returns on every call, where its body states it without its own
    parameters (``lambda: captured``, ``lambda *args: None``): a name in the body is the
    enclosing function's, which ``resolve`` knows."""
    args = node.args
    own = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    own |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    if any(isinstance(n, ast.Name) and n.id in own for n in walk(node.body)):
        return ()
    return test_value(node.body, resolve, depth + 1)


def _array_length(
    name: str, node: ast.Call, resolve: Callable[[ast.Name], ast.expr | None], depth: int
) -> int | None:
    """The first dimension of ``torch.tensor([...])``, ``torch.zeros(n, ...)``,
    ``torch.full((n, m), v)``, ``torch.arange(n)`` (and numpy's), when the text states it."""
    if not node.args or not isinstance(node.func, (ast.Attribute, ast.Name)):
        return None
    first = node.args[0]
    if name in _FROM_DATA:
        data = test_value(first, resolve, depth + 1)
        return data[0].length if data and isinstance(data[0], Obj) else None
    if name in _FROM_SIZE:
        if isinstance(first, (ast.Tuple, ast.List)) and first.elts:
            first = first.elts[0]
        size = test_value(first, resolve, depth + 1)
        ok = size and type(size[0]) is int and size[0] >= 0
        return size[0] if ok else None  # type: ignore[return-value]
    if name == "arange" and len(node.args) == 1:
        size = test_value(first, resolve, depth + 1)
        ok = size and type(size[0]) is int
        return max(size[0], 0) if ok else None  # type: ignore[arg-type,call-overload]
    return None


def built_object(
    node: ast.expr | None,
    resolve: Callable[[ast.Name], ast.expr | None] = lambda name: None,
    depth: int = 0,
) -> bool:
    """Whether ``node`` is an object the test builds by calling a class, which is never
    ``None``: ``Cls(...)`` (a class by its name, a leading underscore of a private class
    aside: ``_Fake()``), ``Cls.__new__(Cls)``, ``object.__new__(cls)``, or a local bound
    to one.  ``test_value`` knows a public constructor's object with its keywords; this
    says only that it is not ``None``, for a stand-in's field that holds it (its truth,
    type and fields stay unknown)."""
    if node is None or depth > _MAX_EXPRESSION_DEPTH:
        return False
    if isinstance(node, ast.Name):
        bound = resolve(node)
        return built_object(bound, resolve, depth + 1) if bound is not None else False
    if not isinstance(node, ast.Call):
        return False
    name = _callee_name(node.func)
    if name == "__new__":
        return isinstance(node.func, ast.Attribute)
    public = name.lstrip("_")
    return public[:1].isupper() and not public.isupper() and not is_exception_name(name)


_EMPTY_BUILDERS = frozenset({"set", "frozenset", "list", "dict", "tuple"})


def empty_display(
    node: ast.expr | None, resolve: Callable[[ast.Name], ast.expr | None] = lambda name: None
) -> bool:
    """Whether ``node`` builds an empty container in place: ``[]``, ``()``, ``{}``, or a
    builtin container type called with nothing (``set()``, ``dict()``) whose name no local
    rebinds.  Written there, no other name of the test holds the object."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return not node.elts
    if isinstance(node, ast.Dict):
        return not node.keys
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _EMPTY_BUILDERS
        and not node.args
        and not node.keywords
        and resolve(node.func) is None
    )


def built_array(node: ast.expr | None) -> bool:
    """Whether ``node`` builds an array (``torch.full(shape, v)``, ``np.zeros(n)``,
    ``torch.arange(a, b)``): an object, never ``None``, whatever its size.  ``test_value``
    knows it where its first dimension is stated; a stand-in's audit, which follows what
    the test states further, knows it is not ``None`` (``Obj`` of unknown length)."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return False
    return node.func.attr in _FROM_DATA | _FROM_SIZE | {"arange", "full_like", "zeros_like"}


def returning(
    node: ast.expr | None, resolve: Callable[[ast.Name], ast.expr | None] = lambda name: None
) -> tuple[object] | tuple[()]:
    """A callable the test builds whose result its text states, as an ``Obj`` that knows it
    (``Obj.returns``): ``lambda ...: <value>`` (``_lambda_returns``: a value ``test_value``
    knows without the lambda's own parameters) and ``Mock(return_value=<value>)`` (without
    one, a child mock); ``AsyncMock(return_value=<value>)`` gives it when its call is awaited
    (``Obj.awaits``: the await runs to the end without suspending); else ``()``."""
    if isinstance(node, ast.Lambda):
        result = _lambda_returns(node, resolve, 0)
        return (Obj(truthy=True, returns=result),) if result else ()
    if isinstance(node, ast.Call) and _callee_name(node.func) in _MOCKS:
        if any(kw.arg in ("side_effect", "wraps") or kw.arg is None for kw in node.keywords):
            return ()  # what a call does is the test's function's (or a mapping's)
        # Without ``return_value``, the call gives a child mock: an object, never None.
        result: tuple[object] | tuple[()] = (Obj(truthy=True),)
        for kw in node.keywords:
            if kw.arg == "return_value":
                result = test_value(kw.value, resolve)
        if _callee_name(node.func) == "AsyncMock":
            return (Obj(truthy=True, awaits=result),)
        return (Obj(truthy=True, returns=result),) if result else ()
    return ()


def length_of(value: object) -> tuple[int] | tuple[()]:
    """``(len(value),)`` when the test's text states it."""
    if isinstance(value, Obj) and value.length is not None:
        return (value.length,)
    return ()


#: ``Obj.kind`` of an array torch or numpy builds (``torch.zeros(2, 3)``): an instance of no
#: builtin type but ``object``.
ARRAY = "array"

# The types ``Obj.kind`` names, as Python has them.
_KINDS: dict[str, type] = {
    "dict": dict,
    "list": list,
    "tuple": tuple,
    "set": set,
    "SimpleNamespace": types.SimpleNamespace,
}
_BUILTIN_TYPES = frozenset(
    name
    for name in dir(builtins)
    if isinstance(getattr(builtins, name), type)
    and not issubclass(getattr(builtins, name), BaseException)
)


def instance_of(value: object, names: tuple[str, ...]) -> bool | None:
    """``isinstance(value, (names...))`` where ``names`` are the types the call names
    (``dict``, ``(list, tuple)``, ``SamplingParams``) and the test states what ``value``
    is: a literal, ``None``, or an object whose type its text makes (``Obj.kind``).  A name
    that is not a builtin type (a class of the tree, an ABC) settles only a true answer: an
    object the test built with that class is an instance of it; another value may be an
    instance of it, or of a subclass of it, for all the text says."""
    if isinstance(value, EnumMember):
        return None
    if isinstance(value, Obj):
        if value.kind is None:
            return None
        if value.kind == ARRAY:
            builtin_names = [n for n in names if n in _BUILTIN_TYPES]
            if "object" in builtin_names:
                return True
            return False if len(builtin_names) == len(names) else None
        if value.kind not in _KINDS:  # ``SamplingParams(...)``: an instance of that class
            return True if value.kind in names else None
        concrete: type = _KINDS[value.kind]
    else:
        concrete = type(value)
    builtin = tuple(getattr(builtins, n) for n in names if n in _BUILTIN_TYPES)
    if builtin and issubclass(concrete, builtin):
        return True
    return False if len(builtin) == len(names) else None


def truthy(value: object) -> bool | None:
    if isinstance(value, Obj):
        return value.truthy
    if isinstance(value, EnumMember):
        return True
    return bool(value)


def compare(op: ast.cmpop, left: object, right: object) -> bool | None:
    """``left <op> right`` when the known values settle it, else None."""
    symbolic = (Obj, EnumMember)
    if isinstance(left, symbolic) or isinstance(right, symbolic):
        if isinstance(op, (ast.Is, ast.IsNot, ast.Eq, ast.NotEq)):
            same = _same(left, right)
            if same is None:
                return None
            return same if isinstance(op, (ast.Is, ast.Eq)) else not same
        return None
    if isinstance(op, ast.Is):
        return left is right
    if isinstance(op, ast.IsNot):
        return left is not right
    try:
        if isinstance(op, ast.Eq):
            return left == right
        if isinstance(op, ast.NotEq):
            return left != right
        if isinstance(op, ast.Lt):
            return left < right  # type: ignore[operator]
        if isinstance(op, ast.LtE):
            return left <= right  # type: ignore[operator]
        if isinstance(op, ast.Gt):
            return left > right  # type: ignore[operator]
        if isinstance(op, ast.GtE):
            return left >= right  # type: ignore[operator]
    except TypeError:  # None > 0: Python would raise; say nothing
        return None
    return None


def _same(left: object, right: object) -> bool | None:
    """Identity/equality of two values one of which is symbolic; None when unknown."""
    if left is None or right is None:
        return False  # an object the test built, or an enum member, is never None
    if isinstance(left, EnumMember) and isinstance(right, EnumMember):
        if left.text == right.text:
            return True
        return False if left.owner == right.owner else None
    return None
