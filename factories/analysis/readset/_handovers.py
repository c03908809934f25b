"""Where a walked body hands a stand-in on as a whole, read from its text: what a stale field
of a namespace needs to be sure of (``Recorder.escapes``, ``Recorder.touched``).

A field of a namespace the test built is unread only where every use of the namespace in the
code it meets was seen.  The walk records the chains read on the paths it takes; this scan
reads the whole body (every branch, nested defs, lambdas and comprehensions too, whatever the
test's values decide) for each name that holds a stand-in (a parameter handed one, a local
bound to one, ``self``) and sorts each use:

- an attribute chain read from it (``cfg.model.dtype``, ``getattr(cfg, "n")``): a read of each
  link (``touched``), the walk's reads or not;
- a use that neither reads nor hands the object on: a store into it, ``isinstance``,
  ``is None``, its truth, a call of one of its fields (``cfg.hook()``), ``len``;
- an argument of a call the walk followed into the callee with it bound to a parameter
  (``Walker.followed``): the callee's own walk and scan stand for it;
- a local bound to it (``model = cfg.model``): that local's uses are its uses;
- anything else hands the object on where this scan cannot see what reads it (``escapes``):
  returned, stored on ``self`` or in a container, an argument of a call not followed,
  ``vars()``, ``**``, ``getattr`` with a computed name, a dunder (``__dict__``), an
  f-string, iterated, compared with ``==``.  The object at that chain, and every namespace
  below it, may be read anywhere.

An escape of a chain that ends at a plain value (``cfg.n + 1``) hands on no namespace; the
consumer judges only the namespaces at or below an escaped chain.

Besides, the scan records where the text may change the object at a chain (``filled``), for
a namespace other code met before the call that reads it (``standin_audit``): a store or
``setattr``/``delattr`` of a link (``cfg.model.n = 1``: ``("cfg", ("model", "n"))``), one by
a name the text computes (the link ``FILLS_ANY``), and a call of a field, which hands the
object holding it to that method as ``self`` (``cfg.model.reset()``: the link ``CALLED``
and the method's name, ``()reset``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping

import attrs

from factories.analysis.readset._syntax import literal_name

Chain = tuple[str, tuple[str, ...]]
#: ``(id of a call node, position or keyword)``: one argument of one call.
ArgKey = tuple[int, int | str]

#: The last link of a ``filled`` chain that stands for a name the text computes
#: (``setattr(cfg, name, v)``), and the head of one for a method called on the object
#: (``cfg.reset()``: ``()reset``).
FILLS_ANY = "*"
CALLED = "()"

#: Builtins that look at an object without reading its fields or keeping it.
_LOOKS = frozenset({"isinstance", "issubclass", "type", "id", "callable", "len"})
#: Builtins that take an attribute name: with a literal one, a read (or a write) of that link.
_PROBES = frozenset({"getattr", "hasattr", "setattr", "delattr"})
#: Builtins that reach a body's locals without naming them.
_FRAMES = frozenset({"locals", "eval", "exec", "globals"})
#: Decorators that run the function as written with the arguments it is given: one whose
#: wrapper may look at them (a validator, a tracer) is not followed (``plain_function``).
_PLAIN_DECORATORS = frozenset(
    {
        "staticmethod",
        "classmethod",
        "property",
        "setter",
        "cached_property",
        "contextmanager",
        "asynccontextmanager",
        "no_grad",
        "inference_mode",
        "override",
        "abstractmethod",
        "cache",
        "lru_cache",
    }
)


#: Bases outside the tree that build an instance as ``object`` does (no ``__new__`` or
#: metaclass of their own that could look at the constructor's arguments).
_PLAIN_BASES = frozenset(
    {"torch.nn.Module", "torch.nn.modules.module.Module", "abc.ABC", "typing.Generic", "object"}
)


def plainly_built(index, cls) -> bool:
    """Whether ``cls(...)`` runs no code but its ``__init__`` with the arguments: no class
    of its MRO defines ``__new__``, is decorated or names a metaclass, and every base outside
    the tree is one of ``_PLAIN_BASES``."""
    classes, external = index.mro(cls)
    if any(name not in _PLAIN_BASES for name in external):
        return False
    if any(klass.node.decorator_list or klass.node.keywords for klass in classes):
        return False
    return index.lookup(cls, "__new__") is None


def plain_function(node: ast.AST) -> bool:
    """Whether the ``def`` runs as written when called: no decorator but those that pass
    its arguments through untouched (``_PLAIN_DECORATORS``)."""
    for deco in getattr(node, "decorator_list", ()):
        target = deco.func if isinstance(deco, ast.Call) else deco
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name not in _PLAIN_DECORATORS:
            return False
    return True


#: The longest chain, and the most chains one local may stand for, that the scan follows:
#: past them (``x = x.next`` in a loop) the object is taken as handed on.
MAX_CHAIN = 8
MAX_BINDINGS = 8


@attrs.frozen
class BodyNames:
    """What ``scan`` needs of a body's text, read once per function (``ReadSetAnalyzer``):
    each loaded name's nodes (in ``ast.walk`` order), the ``global``/``nonlocal`` names, and
    whether it reaches its frame (``locals()``, ``vars()``, ``eval``)."""

    loads: Mapping[str, tuple[ast.Name, ...]]
    shared: frozenset[str]
    frames: bool


def body_names(walked: Iterable[Iterable[ast.AST]]) -> BodyNames:
    """The ``BodyNames`` of a body: ``walked`` holds each of its statements' nodes, in
    ``walk`` order."""
    loads: dict[str, list[ast.Name]] = {}
    shared: set[str] = set()  # ``global``/``nonlocal`` names: not a local of the body
    for nodes in walked:
        for node in nodes:
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                loads.setdefault(node.id, []).append(node)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                shared.update(node.names)
            elif isinstance(node, ast.Call) and _reaches_frames(node):
                return BodyNames({}, frozenset(), True)
    return BodyNames({k: tuple(v) for k, v in loads.items()}, frozenset(shared), False)


def scan(
    body: BodyNames,
    names: Mapping[str, frozenset[Chain]],
    parents: Mapping[ast.AST, ast.AST],
    followed: frozenset[ArgKey],
) -> tuple[set[Chain], set[Chain], set[Chain]]:
    """``(touched, escapes, filled)`` of the stand-ins ``names`` hold (name -> the chains it
    may stand for) in a body (``body_names``); ``parents`` maps each node of the body to its
    parent, and ``followed`` are the arguments the walk handed to a callee it walked."""
    if body.frames:  # ``locals()``, ``vars()``, ``eval``: every stand-in of the body goes on
        return set(), {chain for chains in names.values() for chain in chains}, set()
    loads, shared = body.loads, body.shared
    known: dict[str, set[Chain]] = {}
    pending: list[tuple[str, Chain]] = [(n, c) for n, chains in names.items() for c in chains]
    touched: set[Chain] = set()
    escapes: set[Chain] = set()
    filled: set[Chain] = set()
    while pending:  # a local bound to a stand-in adds its own uses
        name, chain = pending.pop()
        bound = known.setdefault(name, set())
        if chain in bound:
            continue
        if len(bound) >= MAX_BINDINGS or len(chain[1]) > MAX_CHAIN:
            escapes.add((chain[0], chain[1][:MAX_CHAIN]))
            continue
        bound.add(chain)
        for node in loads.get(name, ()):
            for kind, value in _use(node, chain, parents):
                if kind == "read":
                    touched.add(value)
                elif kind == "escape":
                    escapes.add(value)
                elif kind == "fill":
                    filled.add(value)
                elif kind == "arg":
                    key, passed = value
                    if key not in followed:
                        escapes.add(passed)
                else:  # "alias": a local, unless the body shares the name or a class binds it
                    target, passed, where = value
                    if target in shared or not _in_function(where, parents):
                        escapes.add(passed)
                    else:
                        pending.append((target, passed))
    return touched, escapes, filled


def _use(node: ast.Name, chain: Chain, parents: Mapping[ast.AST, ast.AST]) -> list[tuple]:
    """What one load of a name holding ``chain`` does with it (see the module docstring)."""
    root, path = chain
    top: ast.expr = node
    while True:
        parent = parents.get(top)
        if not (isinstance(parent, ast.Attribute) and parent.value is top):
            break
        if parent.attr.startswith("__") and parent.attr.endswith("__"):
            return [("escape", (root, path))]  # ``__dict__``, ``__class__``: the object itself
        path = (*path, parent.attr)
        top = parent
    out: list[tuple] = []
    if isinstance(top, ast.Attribute) and not isinstance(top.ctx, ast.Load):
        if path[:-1]:
            out.append(("read", (root, path[:-1])))  # ``cfg.model.n = 1`` reads ``cfg.model``
        if isinstance(parent, ast.AugAssign) and parent.target is top:
            out.append(("read", (root, path)))
        return [*out, ("fill", (root, path))]
    if path:
        out.append(("read", (root, path)))
    here = (root, path)
    if isinstance(parent, ast.Call):
        if parent.func is top:
            # A field called (``cfg.hook()``) gets no owner; a bare stand-in called is odd.
            # A method of a real object holding the stand-in gets it as ``self``: ``CALLED``.
            if isinstance(top, ast.Attribute):
                return [*out, ("fill", (root, (*path[:-1], CALLED + path[-1])))]
            return [*out, ("escape", here)]
        return out + _argument(parent, top, here)
    if isinstance(parent, ast.keyword):
        call = parents.get(parent)
        if parent.arg is None or not isinstance(call, ast.Call):
            return [*out, ("escape", here)]  # ``f(**cfg)``
        return [*out, ("arg", ((id(call), parent.arg), here))]
    if isinstance(parent, ast.Compare) and all(
        isinstance(op, (ast.Is, ast.IsNot)) for op in parent.ops
    ):
        return out
    if isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)) and parent.test is top:
        return out
    if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
        return out
    if isinstance(parent, ast.Expr):
        return out
    if isinstance(parent, ast.Assign) and parent.value is top:
        if all(isinstance(t, ast.Name) for t in parent.targets):
            return out + [("alias", (t.id, here, parent)) for t in parent.targets]  # type: ignore[attr-defined]
    if (
        isinstance(parent, ast.AnnAssign)
        and parent.value is top
        and isinstance(parent.target, ast.Name)
    ):
        return [*out, ("alias", (parent.target.id, here, parent))]
    return [*out, ("escape", here)]


def _argument(call: ast.Call, arg: ast.expr, here: Chain) -> list[tuple]:
    """A stand-in (or a chain on one) as a positional argument of ``call``."""
    position = next((i for i, a in enumerate(call.args) if a is arg), None)
    if position is None:
        return [("escape", here)]
    func = call.func
    name = func.id if isinstance(func, ast.Name) else None
    if name in _LOOKS:
        return []
    if name in _PROBES and position == 0:
        literal = literal_name(call.args[1]) if len(call.args) > 1 else None
        if literal is None:
            if name in ("setattr", "delattr"):
                return [("fill", (here[0], (*here[1], FILLS_ANY)))]
            return [("escape", here)]
        link = (here[0], (*here[1], literal))
        if name == "getattr":
            return [("read", link), ("escape", link)]  # what it gives is used further
        return [("read", link)] if name == "hasattr" else [("fill", link)]
    if any(isinstance(a, ast.Starred) for a in call.args[: position + 1]):
        return [("escape", here)]  # where it lands is not known from the text
    return [("arg", ((id(call), position), here))]


def _in_function(stmt: ast.AST, parents: Mapping[ast.AST, ast.AST]) -> bool:
    """Whether an assignment binds a local of a function (the walked body's, or a nested
    def's), not a class attribute of a class defined in the body."""
    current = parents.get(stmt)
    while current is not None:
        if isinstance(current, ast.ClassDef):
            return False
        if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return True
        current = parents.get(current)
    return True  # a statement of the walked body itself


def _reaches_frames(call: ast.Call) -> bool:
    """``locals()``, ``globals()``, ``vars()`` without an argument, ``eval``, ``exec``."""
    func = call.func
    if not isinstance(func, ast.Name):
        return False
    return func.id in _FRAMES or (func.id == "vars" and not call.args)
