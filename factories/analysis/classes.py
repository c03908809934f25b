"""Classes of a source tree: name resolution through imports, bases, MRO and class members.

Why text and not ``inspect``: the attributes an ``object.__new__`` stub must set are exactly the
ones ``__init__`` would have created, which class introspection cannot see (stubtest's and
``create_autospec``'s blind spot).  What the class body *does* provide (methods, properties,
class attributes, annotated defaults) is what a stub may leave out.
"""

from __future__ import annotations

import ast
import difflib
import enum

import attrs

from factories.analysis._walk import walk
from factories.analysis.binding import literal_value
from factories.analysis.class_refs import (
    ClassRef,
    ExpressionClass,
    LocalClass,
    RegistryClass,
    UnsettledClass,
)
from factories.analysis.source_tree import ImportTarget, ModuleInfo, SourceError, SourceTree

# Bases that contribute nothing an instance reads.
_TRANSPARENT_BASES = frozenset(
    {"object", "typing.Generic", "typing.Protocol", "abc.ABC", "typing_extensions.Protocol"}
)


class MemberKind(enum.Enum):
    METHOD = "method"
    STATICMETHOD = "staticmethod"
    CLASSMETHOD = "classmethod"
    PROPERTY = "property"
    ATTRIBUTE = "class attribute"
    ANNOTATION_ONLY = "annotation only"


@attrs.frozen
class Member:
    """A name defined in a class body; ``node`` is the def/assignment that defines it."""

    name: str
    kind: MemberKind
    owner: ClassInfo
    node: ast.AST
    setter: ast.FunctionDef | None = None


@attrs.frozen(eq=False)
class ClassInfo:
    """A class defined in the source tree; ``scope`` (``test_x.<locals>.``) and ``imports``
    for a class a test defines inside a function, whose bases may use that function's names."""

    module: ModuleInfo
    node: ast.ClassDef
    scope: str = ""
    imports: dict[str, ImportTarget] | None = attrs.field(default=None, repr=False)

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def qualname(self) -> str:
        return f"{self.module.name}.{self.scope}{self.node.name}"

    @property
    def path(self) -> str:
        return str(self.module.path)


@attrs.frozen
class External:
    """A name that resolves outside the source tree (torch, aiter, stdlib)."""

    dotted: str


@attrs.frozen
class Missing:
    """An import whose module is in the tree but which no longer defines ``name``."""

    module: ModuleInfo
    name: str

    def close_names(self) -> list[str]:
        names = set(self.module.classes) | set(self.module.functions) | set(self.module.imports)
        names |= self.module.assigned
        return difflib.get_close_matches(self.name, sorted(names), n=3, cutoff=0.6)


@attrs.frozen
class ModuleRef:
    module: ModuleInfo


@attrs.frozen
class FunctionRef:
    module: ModuleInfo
    node: ast.FunctionDef | ast.AsyncFunctionDef


@attrs.frozen
class Unknown:
    """A class expression the analysis could not settle, and why (an ``unresolved-stub``
    note says it)."""

    reason: str


Resolved = ClassInfo | External | Missing | ModuleRef | FunctionRef | None


def _decorator_names(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    names = []
    for deco in node.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        names.append(ast.unparse(target))
    return names


@attrs.frozen
class ClassStores:
    """What the text of one class statement (its methods and nested defs too) writes through
    attributes, read in one walk: whether a field keeps the value a constructor stored
    (``standin_audit``), and whether a method's literal return is what an instance answers
    (``Decisions.literal_return``), are both questions about these stores.

    ``fields``: each attribute name -> how many stores or deletes name it (``x.name = ...``,
    ``del x.name``); ``inner``: the names whose own attributes are stored (``x.name.y =
    ...``); ``dict_read``: it reads some ``__dict__`` (``vars`` by another name);
    ``setattr_names``/``setattr_unnamed``: the literal names ``setattr``/``__setattr__`` is
    called with, and whether one is not a literal; ``getattribute``: it defines
    ``__getattribute__``."""

    fields: dict[str, int]
    inner: frozenset[str]
    dict_read: bool
    setattr_names: frozenset[object]
    setattr_unnamed: bool
    getattribute: bool

    @classmethod
    def of(cls, node: ast.ClassDef) -> ClassStores:
        fields: dict[str, int] = {}
        inner: set[str] = set()
        names: set[object] = set()
        dict_read = unnamed = getattribute = False
        for sub in walk(node):
            if isinstance(sub, ast.Attribute):
                if not isinstance(sub.ctx, ast.Load):
                    fields[sub.attr] = fields.get(sub.attr, 0) + 1
                    if isinstance(sub.value, ast.Attribute):
                        inner.add(sub.value.attr)
                elif sub.attr == "__dict__":
                    dict_read = True
            elif isinstance(sub, ast.Call) and len(sub.args) > 1:
                func = sub.func
                fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if fname in ("setattr", "__setattr__"):
                    named = sub.args[1]
                    if isinstance(named, ast.Constant):
                        names.add(named.value)
                    else:
                        unnamed = True
            elif isinstance(sub, ast.FunctionDef) and sub.name == "__getattribute__":
                getattribute = True
        return cls(fields, frozenset(inner), dict_read, frozenset(names), unnamed, getattribute)


def _members_of(cls: ClassInfo) -> dict[str, Member]:
    members: dict[str, Member] = {}
    for node in cls.node.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            decos = _decorator_names(node)
            if any(d.endswith((".setter", ".deleter")) for d in decos):
                existing = members.get(node.name)
                if existing is not None and existing.kind is MemberKind.PROPERTY:
                    members[node.name] = attrs.evolve(existing, setter=node)
                continue
            if any(d.split(".")[-1] in ("property", "cached_property") for d in decos):
                kind = MemberKind.PROPERTY
            elif "staticmethod" in decos:
                kind = MemberKind.STATICMETHOD
            elif "classmethod" in decos:
                kind = MemberKind.CLASSMETHOD
            else:
                kind = MemberKind.METHOD
            members[node.name] = Member(node.name, kind, cls, node)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                for sub in walk(target):
                    if isinstance(sub, ast.Name):
                        members[sub.id] = Member(sub.id, MemberKind.ATTRIBUTE, cls, node)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            kind = MemberKind.ATTRIBUTE if node.value is not None else MemberKind.ANNOTATION_ONLY
            members.setdefault(node.target.id, Member(node.target.id, kind, cls, node))
            if kind is MemberKind.ATTRIBUTE:
                members[node.target.id] = Member(node.target.id, kind, cls, node)
        elif isinstance(node, ast.ClassDef):
            members[node.name] = Member(node.name, MemberKind.ATTRIBUTE, cls, node)
    return members


class ClassIndex:
    """Resolves names to classes in a ``SourceTree`` and answers MRO/member questions."""

    def __init__(self, tree: SourceTree) -> None:
        self.tree = tree
        self._mro: dict[str, tuple[list[ClassInfo], list[str]]] = {}
        self._members: dict[str, dict[str, Member]] = {}
        self._literals: dict[str, dict[str, object]] = {}
        self._stores: dict[str, ClassStores] = {}

    # -- name resolution -------------------------------------------------------------------

    def resolve(
        self,
        module: ModuleInfo,
        dotted: str,
        local_imports: dict[str, ImportTarget] | None = None,
    ) -> Resolved:
        """What ``dotted`` (``Name`` or ``a.b.Name``) means in ``module``."""
        if not all(part.isidentifier() for part in dotted.split(".")):
            return None  # a call, a conditional, a subscript: not statically a class
        head, *rest = dotted.split(".")
        current = self._resolve_name(module, head, local_imports or {}, set())
        if isinstance(current, Missing) and current.module is module:
            return None  # a local, a parameter, a class defined in a function
        for part in rest:
            if isinstance(current, ModuleRef):
                current = self._resolve_in_module(current.module, part, set())
            elif isinstance(current, External):
                current = External(f"{current.dotted}.{part}")
            elif isinstance(current, ClassInfo):
                current = None  # nested classes are out of scope
            else:
                return current
        return current

    def resolve_ref(
        self,
        ref: ClassRef,
        module: ModuleInfo,
        local_imports: dict[str, ImportTarget] | None = None,
    ) -> Resolved | Unknown:
        """What a stub's class names in the test ``module`` (``local_imports``: those of the
        test function): a dotted name through the imports, or for a full ``vllm.`` path in the
        tree; a class the test defines inside a function; a registry entry with a literal key
        (``registered``).  An unsettled class is ``Unknown`` with the extractor's reason unless
        its name is one the test imports; an expression names nothing (None)."""
        if isinstance(ref, LocalClass):
            return ClassInfo(module, ref.node, ref.prefix, local_imports)
        if isinstance(ref, RegistryClass):
            return self.registered(module, ref.owner, ref.attr, ref.key, local_imports)
        if isinstance(ref, ExpressionClass):
            return None
        found = self.resolve(module, ref.text, local_imports)
        if found is None and ref.text.startswith("vllm."):
            found = self.resolve_absolute(ref.text)
        if found is None and isinstance(ref, UnsettledClass):
            return Unknown(ref.why)
        return found

    def resolve_absolute(self, dotted: str) -> ClassInfo | None:
        """A class named by its full dotted path (``"vllm.x.y.Sampler"``, as string patch
        targets spell it) whether or not the test imports that module."""
        parts = dotted.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module = self.tree.module(".".join(parts[:cut]))
            if module is not None:
                found = self.resolve(module, ".".join(parts[cut:]))
                return found if isinstance(found, ClassInfo) else None
        return None

    def _resolve_name(
        self,
        module: ModuleInfo,
        name: str,
        local_imports: dict[str, ImportTarget],
        seen: set[tuple[str, str]],
    ) -> Resolved:
        if name in local_imports:
            return self._resolve_import(local_imports[name], seen)
        return self._resolve_in_module(module, name, seen)

    def _resolve_in_module(self, module: ModuleInfo, name: str, seen: set) -> Resolved:
        key = (module.name, name)
        if key in seen:
            return None
        seen = seen | {key}
        if name in module.classes:
            return ClassInfo(module, module.classes[name])
        if name in module.functions:
            return FunctionRef(module, module.functions[name])
        if name in module.imports:
            return self._resolve_import(module.imports[name], seen)
        if name in module.assigned:
            alias = _alias_value(module, name)
            if alias is not None:  # ``NixlConnectorWorker = NixlPullConnectorWorker``
                return self._resolve_dotted(module, alias, seen)
            return None
        sub = self.tree.module(f"{module.name}.{name}") if module.is_package else None
        if sub is not None:
            return ModuleRef(sub)
        return Missing(module, name)

    def _resolve_dotted(self, module: ModuleInfo, dotted: str, seen: set) -> Resolved:
        head, *rest = dotted.split(".")
        current = self._resolve_in_module(module, head, seen)
        for part in rest:
            if isinstance(current, ModuleRef):
                current = self._resolve_in_module(current.module, part, seen)
            elif isinstance(current, External):
                current = External(f"{current.dotted}.{part}")
            else:
                return None
        return current

    def _resolve_import(self, target: ImportTarget, seen: set) -> Resolved:
        mod = self.tree.module(target.module)
        if mod is None:
            return External(target.dotted)
        if target.name is None:
            return ModuleRef(mod)
        return self._resolve_in_module(mod, target.name, seen)

    def registered(
        self,
        module: ModuleInfo,
        owner_expr: str,
        attr: str,
        key: str,
        local_imports: dict[str, ImportTarget] | None = None,
    ) -> ClassInfo | Unknown:
        """The class ``Owner.<attr>[key]`` holds (or whose loader it holds), where ``Owner``'s
        module (or the one the test imports it from) fills the registry at import time with
        module-level calls ``Owner.<method>(key, Cls)`` / ``Owner.<method>(key, "pkg.mod",
        "Cls")`` of a method of ``Owner`` that stores into ``<attr>[...]``: a literal key
        names one registration.  ``Unknown`` with the reason when none or several match."""
        owner = self.resolve(module, owner_expr, local_imports)
        if not isinstance(owner, ClassInfo):
            return Unknown(f"registry owner {owner_expr} is not a class of the vLLM source")
        homes = [owner.module]
        head = owner_expr.split(".")[0]
        imported = (local_imports or {}).get(head) or module.imports.get(head)
        if imported is not None:
            via = self.tree.module(imported.module)
            if via is not None and via.name != owner.module.name:
                homes.append(via)
        found: dict[str, ClassInfo] = {}
        unnamed = 0
        for home in homes:
            for stmt in home.tree.body:
                call = stmt.value if isinstance(stmt, ast.Expr) else None
                if not (
                    isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Attribute)
                    and call.args
                    and literal_value(call.args[0]) == (key,)
                ):
                    continue
                receiver = self.resolve(home, ast.unparse(call.func.value))
                if not isinstance(receiver, ClassInfo) or receiver.qualname != owner.qualname:
                    continue
                if not self._stores_into(owner, call.func.attr, attr):
                    continue
                named = self._registered_class(
                    home, call.args[1:] + [k.value for k in call.keywords]
                )
                if named is None:
                    unnamed += 1
                else:
                    found[named.qualname] = named
        if len(found) == 1 and not unnamed:
            return next(iter(found.values()))
        if len(found) + unnamed > 1:
            return Unknown(f"{owner.name}.{attr}[{key!r}]: registered {len(found) + unnamed} times")
        if unnamed:
            return Unknown(f"{owner.name}.{attr}[{key!r}]: the registration names no class here")
        return Unknown(
            f"{owner.name}.{attr}[{key!r}]: no module-level {owner.name}.<method>({key!r}, ...) "
            f"in {', '.join(h.name for h in homes)}"
        )

    def _stores_into(self, owner: ClassInfo, method: str, attr: str) -> bool:
        """Whether ``owner.method`` assigns ``<something>.<attr>[...] = ...``: it registers."""
        member = self.lookup(owner, method)
        if member is None or member.kind not in (
            MemberKind.METHOD,
            MemberKind.CLASSMETHOD,
            MemberKind.STATICMETHOD,
        ):
            return False
        return any(
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == attr
            for node in walk(member.node)
        )

    def _registered_class(self, home: ModuleInfo, args: list[ast.expr]) -> ClassInfo | None:
        """The class a registration's arguments after the key name: a class reference of
        ``home``, or a ("pkg.mod", "Cls") pair of string literals."""
        if not args:
            return None
        first = literal_value(args[0])
        if first and isinstance(first[0], str):
            name = literal_value(args[1]) if len(args) > 1 else ()
            target = self.tree.module(first[0])
            if target is None or not name or not isinstance(name[0], str):
                return None
            found = self.resolve(target, name[0])
        elif isinstance(args[0], (ast.Name, ast.Attribute)):
            found = self.resolve(home, ast.unparse(args[0]))
        else:
            return None
        return found if isinstance(found, ClassInfo) else None

    # -- hierarchy -------------------------------------------------------------------------

    def bases(self, cls: ClassInfo) -> tuple[list[ClassInfo], list[str]]:
        """Resolved base classes and the dotted names of bases outside the tree."""
        resolved: list[ClassInfo] = []
        external: list[str] = []
        for base in cls.node.bases:
            expr = base.value if isinstance(base, ast.Subscript) else base
            try:
                dotted = ast.unparse(expr)
            except Exception:  # pragma: no cover - unparse handles every expression
                continue
            target = self.resolve(cls.module, dotted, cls.imports)
            if isinstance(target, ClassInfo):
                resolved.append(target)
            elif isinstance(target, External) and target.dotted not in _TRANSPARENT_BASES:
                external.append(target.dotted)
            elif target is None and dotted not in ("object", "Generic", "Protocol", "ABC"):
                external.append(dotted)
        return resolved, external

    def mro(self, cls: ClassInfo) -> tuple[list[ClassInfo], list[str]]:
        """C3 linearisation of the in-tree classes, plus the external bases met on the way."""
        if cls.qualname in self._mro:
            return self._mro[cls.qualname]
        self._mro[cls.qualname] = ([cls], [])  # recursion guard for cyclic nonsense
        try:
            bases, external = self.bases(cls)
            sequences = [list(self.mro(b)[0]) for b in bases] + [list(bases)]
            for b in bases:
                external.extend(e for e in self.mro(b)[1] if e not in external)
        except SourceError:
            # A base's module does not parse: drop the guard, or a later question about this
            # class would get the guard's truncated MRO instead of the same error.
            del self._mro[cls.qualname]
            raise
        result = [cls] + _c3_merge(sequences)
        self._mro[cls.qualname] = (result, external)
        return result, external

    def members(self, cls: ClassInfo) -> dict[str, Member]:
        """Every name the class body or an in-tree base defines, first in MRO order wins."""
        if cls.qualname not in self._members:
            merged: dict[str, Member] = {}
            for klass in reversed(self.mro(cls)[0]):
                merged.update(_members_of(klass))
            self._members[cls.qualname] = merged
        return self._members[cls.qualname]

    def stores(self, cls: ClassInfo) -> ClassStores:
        """What the class statement of ``cls`` writes through attributes (``ClassStores``),
        read once per class."""
        if cls.qualname not in self._stores:
            self._stores[cls.qualname] = ClassStores.of(cls.node)
        return self._stores[cls.qualname]

    def lookup(self, cls: ClassInfo, name: str, after: ClassInfo | None = None) -> Member | None:
        """The member ``name`` as ``getattr`` on an instance of ``cls`` would find it.

        ``after`` starts the search past that class in the MRO (``super()`` semantics).
        """
        chain = self.mro(cls)[0]
        if after is not None:
            ids = [c.qualname for c in chain]
            if after.qualname in ids:
                chain = chain[ids.index(after.qualname) + 1 :]
        for klass in chain:
            member = _members_cached(self, klass).get(name)
            if member is not None and member.kind is not MemberKind.ANNOTATION_ONLY:
                return member
        return None

    def constructor(self, cls: ClassInfo) -> Member | None:
        """The ``__init__`` that ``cls(...)`` runs, where the tree shows it: that of the first
        class of the MRO defining one.  None where a class before it may bring another: one
        with a base outside the tree (``nn.Module``, a pydantic model) or a decorated one (a
        ``@dataclass`` writes its own ``__init__``), or where no class of the tree has one."""
        for klass in self.mro(cls)[0]:
            member = _members_cached(self, klass).get("__init__")
            if member is not None:
                node = member.node
                if member.kind is MemberKind.METHOD and isinstance(
                    node, (ast.FunctionDef, ast.AsyncFunctionDef)
                ):
                    return member
                return None
            if klass.node.decorator_list or self.bases(klass)[1]:
                return None
        return None

    def literal_defaults(self, cls: ClassInfo) -> dict[str, object]:
        """Class attributes (through the MRO) whose value is a literal: ``use_aiter = False``.

        An ``object.__new__`` instance reads exactly these until something assigns the
        attribute on the instance, so they decide branches as a stub's literal fields do.
        """
        key = "literals:" + cls.qualname
        if key not in self._literals:
            out: dict[str, object] = {}
            for name, member in self.members(cls).items():
                if member.kind is not MemberKind.ATTRIBUTE:
                    continue
                node = member.node
                if isinstance(node, ast.Assign) and not (
                    len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                ):
                    continue
                if isinstance(node, (ast.Assign, ast.AnnAssign)):
                    value = literal_value(node.value)
                    if value:
                        out[name] = value[0]
            self._literals[key] = out
        return self._literals[key]

    def close_member_names(self, cls: ClassInfo, name: str) -> list[str]:
        return difflib.get_close_matches(name, sorted(self.members(cls)), n=3, cutoff=0.6)


def _alias_value(module: ModuleInfo, name: str) -> str | None:
    """The dotted name a module-level ``name = Other`` / ``name = pkg.Other`` binds, when that
    is the only top-level assignment to ``name`` (a re-export or a renamed class)."""
    found: list[str] = []
    for node in module.tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            value = node.value
            text = ast.unparse(value) if isinstance(value, (ast.Name, ast.Attribute)) else ""
            if not text or not all(p.isidentifier() for p in text.split(".")):
                return None
            found.append(text)
    return found[0] if len(found) == 1 and found[0] != name else None


def _members_cached(index: ClassIndex, cls: ClassInfo) -> dict[str, Member]:
    key = "own:" + cls.qualname
    if key not in index._members:
        index._members[key] = _members_of(cls)
    return index._members[key]


def _c3_merge(sequences: list[list[ClassInfo]]) -> list[ClassInfo]:
    result: list[ClassInfo] = []
    seqs = [list(s) for s in sequences if s]
    while seqs:
        for seq in seqs:
            head = seq[0]
            if not any(head.qualname in [c.qualname for c in s[1:]] for s in seqs):
                break
        else:  # inconsistent hierarchy: fall back to depth-first order
            head = seqs[0][0]
        result.append(head)
        seqs = [[c for c in s if c.qualname != head.qualname] for s in seqs]
        seqs = [s for s in seqs if s]
    return result
