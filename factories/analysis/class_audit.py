"""Auditing one stub against its class: the calls bind, the reads are set, the names exist.

``ClassAuditor`` settles the class a stub's expression names (through the test's imports, a
full dotted path, a class the test defines, a registry entry), then replays the stub's events
in order: each call's shape against the method's signature, then the attributes that call reads
before the stub or an earlier call wrote them (``ReadSetAnalyzer``), with the test's patches,
``pytest.raises`` and detached tasks as the call's context.  What the calls read is kept for
the stale-field verdict (``report.FieldUsage``).
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

import attrs

from factories.analysis.classes import (
    ClassIndex,
    ClassInfo,
    External,
    MemberKind,
    Missing,
    ModuleRef,
)
from factories.analysis.extraction import EventKind, Stub, StubEvent
from factories.analysis.findings import Finding, FindingKind, Location
from factories.analysis.readset import CallContext, MethodReport, ReadSetAnalyzer
from factories.analysis.report import FieldUsage, at_call, did_you_mean
from factories.analysis.source_tree import SourceTree
from factories.analysis.values import Obj

if TYPE_CHECKING:  # annotations; the stand-in audit loads only for ``--standins`` runs
    from factories.analysis.extraction import StandIn
    from factories.analysis.standin_audit import StubStandIns


class ClassAuditor:
    """Audits stubs against the classes of one source tree (its index and analyzer shared)."""

    def __init__(self, tree: SourceTree, index: ClassIndex, analyzer: ReadSetAnalyzer) -> None:
        self.tree = tree
        self.index = index
        self.analyzer = analyzer

    def audit_stub(self, stub: Stub, target=None) -> list[Finding]:
        if target is None:
            target = self.class_of(stub)
        if isinstance(target, Missing):
            close = target.close_names()
            return [
                Finding(
                    kind=FindingKind.MISSING_CLASS,
                    class_name=stub.class_expr,
                    method="<class>",
                    name=target.name,
                    message=f"{target.module.name} no longer defines {target.name}"
                    f"{did_you_mean(close)}",
                    vllm_location=Location(str(target.module.path), 1),
                    stub_location=stub.location,
                    stub_side=f"object.__new__({stub.class_expr})",
                    vllm_side="names: " + ", ".join(close) if close else "not defined",
                )
            ]
        if isinstance(target, External) and target.dotted.startswith("vllm."):
            return [self._missing_module(stub, target.dotted)]
        if not isinstance(target, ClassInfo):
            return []
        return self.audit_class(stub, target)[0]

    def _missing_module(self, stub: Stub, dotted: str) -> Finding:
        """``from vllm.x.y import C`` where ``vllm/x/y`` no longer exists in the tree."""
        parts = dotted.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            if self.tree.module(".".join(parts[:cut])) is not None:
                break
        parent = ".".join(parts[:cut])
        missing = parts[cut] if cut < len(parts) else dotted
        parent_dir = self.tree.root.joinpath(*parent.split("."))
        siblings = sorted(
            p.stem if p.suffix == ".py" else p.name
            for p in (parent_dir.iterdir() if parent_dir.is_dir() else [])
            if p.suffix == ".py" or (p / "__init__.py").is_file()
        )
        close = difflib.get_close_matches(missing, siblings, n=3, cutoff=0.6)
        return Finding(
            kind=FindingKind.MISSING_CLASS,
            class_name=stub.class_expr,
            method="<class>",
            name=dotted,
            message=f"{parent}.{missing} no longer exists in the vLLM source{did_you_mean(close)}",
            vllm_location=None,
            stub_location=stub.location,
            stub_side=f"object.__new__({stub.class_expr}) from {dotted}",
            vllm_side="close: " + ", ".join(close) if close else "not found",
        )

    def _called_arms(
        self, cls: ClassInfo, node: ast.AST, called: frozenset[str], stored: frozenset[str]
    ) -> frozenset[tuple[int, int, bool]]:
        """``CallContext.called_arms`` of a call of the method ``node`` of ``cls`` after which
        the test asserts the mocks ``called`` ran (``called_mocks``): only a plain ``def``,
        whose body runs when it is called (not a coroutine's or generator's)."""
        if not called or not isinstance(node, ast.FunctionDef) or self.analyzer.is_generator(node):
            return frozenset()
        from factories.analysis.called_mocks import called_arms

        return called_arms(self.index, cls, node, called, stored)

    def audit_class(
        self,
        stub: Stub,
        cls: ClassInfo,
        standins: StubStandIns | None = None,
        namespace_self: bool = False,
    ) -> tuple[list[Finding], FieldUsage]:
        """``standins``: the namespaces the test sets on the stub's fields and hands to its
        calls (``audit-stubs --standins``); each call that meets one records attribute chains,
        and the links the namespaces lack are findings (``standin_audit``, loaded only for
        such runs: the stub audit of every pre-commit run needs none of it).
        ``namespace_self``: the stub is a namespace made ``self`` (``CallContext``'s
        ``stated_locals``: locals keep the fields of objects the test built; its
        ``bare_self``: the namespace holds none of the class's members, whose literal
        defaults then decide nothing)."""
        if standins is not None:
            from factories.analysis.standin_audit import (
                asserted_stores,
                bind_passed,
                held_chains,
                missing_fields,
                on_some_run,
                run_shapes,
                stated_obj,
                tuple_chains,
                typed_chains,
                whole_chains,
            )
        out: list[Finding] = []
        nested: dict[str, StandIn] = {}  # stub field -> the namespace the test set on it
        state: frozenset[str] = frozenset()
        constants: dict[str, object] = {}
        # Values known only where the test's values are followed (``StubEvent.stated``).
        stated: dict[str, object] = {}
        maybe_written: frozenset[str] = frozenset()
        provided: set[str] = set()  # set by the test itself (for ``provisioned`` blocks)
        replaced, functions, raising = self.replaced_methods(stub, cls)
        set_at: dict[str, Location] = {}
        reads: set[str] = set()
        analysed_any = False
        last_call_index = max(
            (i for i, e in enumerate(stub.events) if e.kind is EventKind.CALL), default=-1
        )
        # The test each set's next calls run in (its own where it names one): a helper's set
        # of its parameter holds what that test handed it (``StubStandIns.set_by``).
        tests_after: list[str | None] = []
        for event in reversed(stub.events):
            tests_after.append(event.test or (tests_after[-1] if tests_after else None))
        tests_after.reverse()
        # Fields a helper set to the namespace the test handed it (``StubStandIns.own_set``):
        # the set's text states nothing of it, the namespace as the test built it does.
        handed_in: set[str] = set()
        keyed: set[str] = set()  # fields ``nested`` holds a container of (``keyed_holder``)
        fresh: set[str] = set()  # fields set to a new empty dict, untouched since
        for i, event in enumerate(stub.events):
            if event.kind is EventKind.READ:
                reads.add(event.name)  # the test reads the field itself: not stale
                if standins is not None:
                    self._keyed_store(event, standins, nested, keyed, fresh, constants, stated)
                continue
            if event.kind is EventKind.SET:
                if event.must_exist and event.name not in state:
                    out.extend(self._patch_of_missing_name(cls, event))
                state = state | {event.name}
                provided.add(event.name)
                if event.has_value:
                    constants[event.name] = event.value
                else:
                    constants.pop(event.name, None)
                if event.stated:
                    stated[event.name] = event.stated[0]
                else:
                    stated.pop(event.name, None)
                if i < last_call_index:
                    set_at.setdefault(event.name, event.location)
                keyed.discard(event.name)
                fresh.discard(event.name)
                if standins is not None and standins.empties(event):
                    fresh.add(event.name)
                stub_test = tests_after[i]
                on_field = standins.set_by(event, stub_test) if standins is not None else None
                if on_field is not None:
                    nested[event.name] = on_field
                else:
                    nested.pop(event.name, None)
                handed_in.discard(event.name)
                if (
                    on_field is not None
                    and not (event.has_value or event.stated)
                    and standins.own_set(event, stub_test) is on_field  # type: ignore[union-attr]
                ):
                    handed_in.add(event.name)
                continue
            if event.via is not None and not self._runs_own_method(stub, cls, event):
                continue  # ``Other.m(stub)``: not a method of the stub's class
            if event.name in state and event.via is None and not namespace_self:
                reads.add(event.name)  # calls a callable the test put on the object
                continue  # (a namespace's calls are ``Cls.m(ns)``: the class's method)
            member = self.index.lookup(cls, event.name)
            if member is None and self.index.mro(cls)[1]:
                continue  # may come from a base outside the tree (torch.nn.Module, ...)
            if member is None:
                close = self.index.close_member_names(cls, event.name)
                out.append(
                    at_call(
                        cls,
                        event,
                        kind=FindingKind.MISSING_METHOD,
                        name=event.name,
                        message=f"{cls.name} has no attribute {event.name!r}{did_you_mean(close)}",
                        vllm_location=Location(cls.path, cls.node.lineno),
                        stub_side=f"calls {event.name}()",
                        vllm_side="close: " + ", ".join(close) if close else "not defined",
                    )
                )
                continue
            if member.kind not in (
                MemberKind.METHOD,
                MemberKind.STATICMETHOD,
                MemberKind.CLASSMETHOD,
            ) and not (event.getter and member.kind is MemberKind.PROPERTY):
                continue
            # Class-level literals (``use_aiter_sparse_mla = False``) are what the instance
            # reads for a field neither the stub nor any earlier call may have assigned.
            known = {
                name: value
                for name, value in self.index.literal_defaults(cls).items()
                if name not in state and name not in maybe_written and not namespace_self
            }
            known.update(constants)
            context = CallContext(
                replaced=replaced,
                patched_functions=functions,
                raising=raising,
                expect_raise=event.expect_raise,
                patches_raise=event.expect_raise and event.raise_owned,
                test_exception=event.expect_raise and event.raise_tested,
                detached=event.detached,
                stated_locals=namespace_self,
                bare_self=namespace_self,
                returns=standins.asserted(event) if standins is not None else event.returns,
                result_fields=event.result_fields,
                result_items=(
                    standins.result_items(event) if standins is not None else event.result_items
                ),
            )
            roots: dict[str, tuple[StandIn, ...]] = {}
            held: frozenset[str] = frozenset()
            if standins is not None:
                roots = bind_passed(
                    member.node,
                    standins.passed_to(event),
                    bound=member.kind is not MemberKind.STATICMETHOD,
                )
                if roots or nested:
                    known = {**known, **stated}
                    for name in handed_in & nested.keys():
                        built = stated_obj(nested[name], event, standins)
                        if built is not None and name not in known:
                            known[name] = built
                    context = attrs.evolve(
                        context,
                        chains=True,
                        standins=frozenset(roots),
                        nested=frozenset(nested),
                        stated_locals=True,
                        whole=whole_chains(roots, nested, standins, event),
                        tuples=tuple_chains(roots, nested),
                        typed=typed_chains(self.index, stub.module, roots, event, nested),
                    )
                    held = held_chains(roots, nested, event.test)
                    if event.via is None and not namespace_self:
                        stores = asserted_stores(stub, event, nested)
                        if stores:
                            context = attrs.evolve(context, asserted_stores=stores)
                if event.via is None and not namespace_self:
                    arms = self._called_arms(cls, member.node, *standins.called(event))
                    if arms:
                        context = attrs.evolve(context, called_arms=arms)
            report = self.analyzer.analyze(
                cls,
                event.name,
                state,
                known,
                call=event.shape,
                provided=provided,
                context=context,
                provided_chains=held,
            )
            maybe_written |= report.written_names
            analysed_any = True
            assert event.shape is not None
            for mismatch in report.signature.check(event.shape):
                out.append(
                    at_call(
                        cls,
                        event,
                        kind=mismatch.kind,
                        name=mismatch.name,
                        message=f"{cls.name}.{event.name}() {mismatch.message}",
                        vllm_location=report.location,
                        stub_side=f"call passes {event.shape}",
                        vllm_side=f"def {event.name}{report.signature}",
                    )
                )
            found = list(self._missing_reads(stub, cls, event, report))
            if standins is not None and (roots or nested):
                found.extend(missing_fields(report, roots, nested, standins, cls.name, event))
                # One run per value a parametrized argument takes (``run_shapes``): a read
                # on the path of one run fails that run.
                for shape in run_shapes(event.shape, standins.passed_to(event), event):
                    run = self.analyzer.analyze(
                        cls,
                        event.name,
                        state,
                        known,
                        call=shape,
                        provided=provided,
                        context=context,
                        provided_chains=held,
                    )
                    found = on_some_run(
                        found,
                        [
                            *self._missing_reads(stub, cls, event, run),
                            *missing_fields(run, roots, nested, standins, cls.name, event),
                        ],
                    )
            out.extend(found)
            reads |= report.read_names
            state = report.state_after
            for name in report.written_names:
                constants.pop(name, None)
                stated.pop(name, None)
                nested.pop(name, None)
            for name in keyed:  # the call may have stored values of its own there
                nested.pop(name, None)
            keyed.clear()
            fresh.clear()
            for name, value in constants.items():  # or put items in a container it found
                if isinstance(value, Obj) and value.empty:  # empty (``Obj.empty``)
                    constants[name] = attrs.evolve(value, empty=False)
        usage = FieldUsage(
            class_name=cls.name,
            methods=tuple(e.name for e in stub.calls),
            set_at=set_at,
            reads=frozenset(reads),
            eligible=analysed_any and not stub.escapes and not stub.opaque,
        )
        return out, usage

    @staticmethod
    def _keyed_store(
        event: StubEvent,
        standins: StubStandIns,
        nested: dict[str, StandIn],
        keyed: set[str],
        fresh: set[str],
        constants: dict[str, object],
        stated: dict[str, object],
    ) -> None:
        """The test's load of a stub's field ``event``: where it stores stand-ins under a key
        of the container the field holds (``StubStandIns.stored_by``), and that container is
        a new empty dict the test set (``stub.reqs = {}``, ``fresh``: no call and no other
        load since) that it has only stored stand-ins in since (``keyed``), the field holds
        a container whose elements are those (``nested``), and no longer the empty one
        (``constants``).  Any other load may change what it holds (``stub.reqs.update(...)``,
        ``reqs = stub.reqs``): it is no longer known."""
        from factories.analysis.standin_audit import merged_holder  # --standins runs only

        item = standins.stored_by(event)
        name = event.name
        if item is not None and (name in keyed or name in fresh):
            held = nested.get(name) if name in keyed else None
            nested[name] = merged_holder(held, item)
            keyed.add(name)
        elif name in keyed:
            nested.pop(name, None)
            keyed.discard(name)
        fresh.discard(name)
        if item is not None or _mutable_display(constants.get(name)):
            # No longer the display it was set to: a stand-in stored in it, or any load of a
            # dict, list or set the test built, which may fill it (``stub.reqs["r"] = x``,
            # ``stub.reqs.update(...)``): ``stub.reqs.get("r")`` is no longer surely None.
            constants.pop(name, None)
            stated.pop(name, None)

    def replaced_methods(
        self, stub: Stub, cls: ClassInfo
    ) -> tuple[frozenset[tuple[str, str]], frozenset[str], frozenset]:
        """What the test patched: (class qualname, method) for each patched method, the
        dotted name of each patched module function (``vllm.x.mod.helper``, ``torch.save``),
        and those of both whose replacement raises on every call.

        Only a patch of a class in ``cls``'s MRO can matter, so full dotted paths naming
        another class are not resolved (resolving ``"vllm.x.y.helper"`` would parse
        ``vllm/x/y.py`` for nothing)."""
        in_mro = {klass.name for klass in self.index.mro(cls)[0]}
        methods: set[tuple[str, str]] = set()
        functions: set[str] = set()
        raising: set = set()
        scope, imports = _calling_scope(stub)
        for dotted in stub.patched:
            owner, _, method = dotted.rpartition(".")
            raises = dotted in stub.raising
            target = self.index.resolve(scope, owner, imports)
            if not isinstance(target, ClassInfo) and owner.rpartition(".")[2] in in_mro:
                target = self.index.resolve_absolute(owner)
            if target is None and _CLASS_OF_CLASS.search(owner):
                # ``Cls.__mro__[1]``, ``obj.__class__.__bases__[0]``: a class of the stub's
                # hierarchy picked by position.  Where the position is not readable, every
                # definition of the method in the MRO counts as replaced: the audit must not
                # follow a body the test may have patched out.
                picked = self._class_by_position(stub, owner)
                owners = [picked] if picked is not None else self.index.mro(cls)[0]
                for klass in owners:
                    methods.add((klass.qualname, method))
                    if raises:
                        raising.add((klass.qualname, method))
                continue
            if isinstance(target, ClassInfo):
                methods.add((target.qualname, method))
                if raises:
                    raising.add((target.qualname, method))
                continue
            if isinstance(target, ModuleRef):
                function = f"{target.module.name}.{method}"
            elif isinstance(target, External):
                function = f"{target.dotted}.{method}"
            elif owner.startswith("vllm.") or ("." in owner and target is None):
                function = dotted  # a string patch target: already dotted
            else:
                continue
            functions.add(function)
            if raises:
                raising.add(function)
        return frozenset(methods), frozenset(functions), frozenset(raising)

    def class_of(self, stub: Stub):
        """What the stub's class names (``ClassIndex.resolve_ref``), with the imports of the
        function that created it.  ``Unknown`` says why the extractor or the registry could
        not settle it."""
        return self.index.resolve_ref(stub.class_ref, stub.module, stub.local_imports)

    def _runs_own_method(self, stub: Stub, cls: ClassInfo, event: StubEvent) -> bool:
        """Whether ``Via.m(stub)`` runs what ``stub.m()`` would: ``Via`` is a class of the
        stub's MRO and finds the same plain method ``m`` (or, like the stub, none)."""
        scope, imports = _calling_scope(stub)
        via = self.index.resolve(scope, event.via or "", imports)
        if not isinstance(via, ClassInfo):
            return False
        if via.qualname not in {k.qualname for k in self.index.mro(cls)[0]}:
            return False
        own, named = self.index.lookup(cls, event.name), self.index.lookup(via, event.name)
        if own is None or named is None:
            return own is named
        if own.kind is not MemberKind.METHOD:
            return False  # a staticmethod takes the stub as a plain argument
        return own.owner.qualname == named.owner.qualname and own.node is named.node

    def _class_by_position(self, stub: Stub, owner: str) -> ClassInfo | None:
        """``Cls.__mro__[i]`` / ``Cls.__bases__[i]`` with ``Cls`` a class of the tree and the
        position within the in-tree classes, else None."""
        match = _CLASS_OF_CLASS.fullmatch(owner)
        if match is None:
            return None
        head, which, position = match.group(1), match.group(2), int(match.group(3))
        scope, imports = _calling_scope(stub)
        base = self.index.resolve(scope, head, imports)
        if not isinstance(base, ClassInfo):
            return None
        if which == "__mro__":
            chain, external = self.index.mro(base)
        else:
            chain, external = self.index.bases(base)
            if external:
                return None
        return chain[position] if position < len(chain) else None

    def _patch_of_missing_name(self, cls: ClassInfo, event: StubEvent) -> list[Finding]:
        """``monkeypatch.setattr(stub, "n", v)`` raises AttributeError when the stub has no
        ``n`` (pytest's ``raising=True`` default; ``patch.object`` without ``create``): the
        class must still define it.  Unknown when a base lies outside the tree."""
        if self.index.lookup(cls, event.name) is not None or self.index.mro(cls)[1]:
            return []
        if event.name in _OBJECT_NAMES:
            return []
        close = self.index.close_member_names(cls, event.name)
        return [
            at_call(
                cls,
                event,
                kind=FindingKind.MISSING_METHOD,
                name=event.name,
                message=f"the test patches {cls.name}.{event.name}, which no longer exists "
                f"(monkeypatch.setattr raises AttributeError){did_you_mean(close)}",
                vllm_location=Location(cls.path, cls.node.lineno),
                stub_side=f"patches {event.name}",
                vllm_side="close: " + ", ".join(close) if close else "not defined",
            )
        ]

    def _missing_reads(
        self, stub: Stub, cls: ClassInfo, event: StubEvent, report: MethodReport
    ) -> Iterable[Finding]:
        if stub.opaque:
            return
        method = event.name
        for access in report.required:
            where = "" if access.certain else " on a path the test may not take"
            yield Finding(
                kind=FindingKind.MISSING_ATTRIBUTE
                if access.certain
                else FindingKind.POSSIBLY_MISSING_ATTRIBUTE,
                class_name=cls.name,
                method=method,
                name=access.name,
                message=f"{cls.name}.{method}() reads self.{access.name} "
                f"(in {access.method}){where} but the stub never sets it",
                vllm_location=access.location,
                stub_location=stub.location,
                stub_side="not set",
                vllm_side=f"read in {access.method}",
                tests=(event.test,) if event.test else (),
            )


# ``X.__mro__[1]``, ``X.__class__.__bases__[0]``: a class chosen by its place in a hierarchy.
_CLASS_OF_CLASS = re.compile(r"(.+?)\.(__mro__|__bases__)\[(\d+)\]")

_OBJECT_NAMES = frozenset(dir(object)) | {"__dict__", "__weakref__", "__module__"}


def _calling_scope(stub: Stub) -> tuple:
    """The module (and its function-local imports) whose names the test's calls and patches
    on ``stub`` use: another test module's, for a stub a helper returned to it."""
    if stub.scope_module is not None:
        return stub.scope_module, {}
    return stub.module, stub.local_imports


def _mutable_display(value: object) -> bool:
    """Whether ``value`` (a stub field's known value) is a dict, list or set the test built,
    whose contents a load of the field may change."""
    return isinstance(value, Obj) and value.kind in ("dict", "list", "set")
