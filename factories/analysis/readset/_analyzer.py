"""``ReadSetAnalyzer``: the public entry, the memo, and what the test replaced.

``analyze`` is a function of its arguments: the method, the instance's state and literal
fields, the call's literal arguments, the fields the test set, and the ``CallContext``.  The
analyzer's own state is caches whose content depends on the source alone: the memo (keyed by
every value a walk depends on), the block numbering (``BlockIds``), and which tree functions
hold a ``raise``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping, Sequence

import attrs

from factories.analysis._walk import link_parents, walk
from factories.analysis.binding import CallShape, Signature
from factories.analysis.classes import ClassIndex, ClassInfo, FunctionRef, Member, MemberKind
from factories.analysis.findings import Location
from factories.analysis.readset._chains import FUNCTION_FRAME, Binding, scope_bindings
from factories.analysis.readset._declared import param_classes
from factories.analysis.readset._handovers import BodyNames, body_names
from factories.analysis.readset._model import (
    CALL_SHAPE,
    CallContext,
    FunctionReport,
    MethodReport,
    Recorder,
    Walked,
    alias_mark,
    names,
    shaped,
    unaliased,
)
from factories.analysis.readset._paths import (
    BlockIds,
    chain_links,
    first_by_name,
    first_unguarded_by_name,
    provisioned,
)
from factories.analysis.readset._returned import returned_build, returned_local
from factories.analysis.readset._syntax import forwards_only, gathered_keywords
from factories.analysis.readset._walker import Walker, statements_and_exprs
from factories.analysis.source_tree import ImportTarget, ModuleInfo, function_imports
from factories.errors import MethodNotFoundError

#: How many nested method calls (``self.m()``, ``super().m()``, properties) one walk follows
#: below the analysed call; deeper calls are assumed to read and write nothing.
MAX_CALL_DEPTH = 16

_NO_CONTEXT = CallContext()
_LITERALS = (bool, int, float, str, bytes, type(None))


def _top_literals(tree: ast.Module) -> dict[str, tuple[object]]:
    """The names ``tree``'s top level binds to a literal (``module_constant``'s candidates:
    the last such binding of each), from its top-level statements alone."""
    found: dict[str, tuple[object]] = {}
    for stmt in tree.body:
        value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else None
        targets = (
            stmt.targets
            if isinstance(stmt, ast.Assign)
            else [stmt.target]
            if isinstance(stmt, ast.AnnAssign)
            else []
        )
        for target in targets:
            if isinstance(target, ast.Name) and isinstance(value, ast.Constant):
                found[target.id] = (value.value,)
            elif (
                isinstance(target, ast.Tuple)
                and isinstance(value, ast.Tuple)
                and len(target.elts) == len(value.elts)
            ):
                for name, element in zip(target.elts, value.elts):
                    if isinstance(name, ast.Name) and isinstance(element, ast.Constant):
                        found[name.id] = (element.value,)
    return {name: value for name, value in found.items() if isinstance(value[0], _LITERALS)}


def _stored_once(tree: ast.Module, found: dict[str, tuple[object]]) -> dict[str, tuple[object]]:
    """Those of ``found`` (``_top_literals``) that ``tree`` stores exactly once and names in
    no ``global``/``nonlocal``: a walk of the whole module."""
    stores: dict[str, int] = {}
    for node in walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            stores[node.id] = stores.get(node.id, 0) + 1
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                stores[name] = stores.get(name, 0) + 2
    return {name: value for name, value in found.items() if stores.get(name) == 1}


class ReadSetAnalyzer:
    """Analyses calls on instances of in-tree classes.  Results are memoised per analyzer."""

    def __init__(self, index: ClassIndex) -> None:
        self.index = index
        self._memo: dict[tuple, Walked] = {}
        self.blocks = BlockIds()
        self.raises_cache: dict[int, bool] = {}  # id of a function's AST -> holds a ``raise``
        # id of a function's AST -> what its parameters' annotations name
        self._param_classes: dict[int, tuple[tuple[str, ClassInfo], ...]] = {}
        # id of a function's AST -> (its own imports, the names it binds)
        self._function_names: dict[int, tuple[dict[str, ImportTarget], frozenset[str]]] = {}
        self._rebound: dict[int, frozenset[str]] = {}  # id of a loop's AST -> names it binds
        # id of a call's AST -> the predicate of the tree it calls (``Decisions.call_value``)
        self.predicates: dict[int, FunctionRef | None] = {}
        # id of a function's AST -> (it, each node of its body -> its parent, each of its
        # body's statements' nodes in walk order) (``_handovers``); the entry holds the
        # function so that its id is not reused by another for the rest of the run.
        self._linked: dict[
            int, tuple[ast.AST, dict[ast.AST, ast.AST], tuple[list[ast.AST], ...]]
        ] = {}
        self._body_names: dict[int, BodyNames] = {}  # id of a function's AST (``_handovers``)
        # id of a module's AST -> (it, its top level's literal bindings, those of them it
        # binds once, found where a name among them is first asked about) (``module_constant``);
        # the entry holds the tree so that its id is not reused by another for the run.
        self._constants: dict[
            int, tuple[ast.Module, dict[str, tuple[object]], list[dict[str, tuple[object]]]]
        ] = {}
        # id of a function's AST -> (it, whether it yields): the entry holds the function so
        # that its id is not reused by another for the rest of the run (a test module's tree
        # is freed once its audit is over).
        self._generators: dict[int, tuple[ast.AST, bool]] = {}
        self._returned: dict[int, tuple[ast.AST, object]] = {}
        self._returned_local: dict[int, tuple[ast.AST, tuple[str, int] | None]] = {}
        # id of a function's or module's AST -> each name it binds -> ``bindings``
        self._bindings: dict[int, dict[str, tuple[Binding, ...]]] = {}

    def function_names(
        self, func: ast.FunctionDef | ast.AsyncFunctionDef, module: ModuleInfo
    ) -> tuple[dict[str, ImportTarget], frozenset[str]]:
        """The imports inside ``func`` and every name it binds (assignments, loop targets,
        those imports): what a walk of ``func`` treats as local. Read from the AST once per
        function, not once per walk (a method is walked again for every stub and context)."""
        key = id(func)
        if key not in self._function_names:
            imports = function_imports(func, module.name, module.is_package)
            stored = {
                n.id for n in walk(func) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
            }
            self._function_names[key] = (imports, frozenset(stored | set(imports)))
        return self._function_names[key]

    def bindings(self, scope: ast.AST) -> dict[str, tuple[Binding, ...]]:
        """Each name ``scope`` binds -> its bindings, read once per scope: a function's
        (its nested scopes too), or a module's outside its functions and classes."""
        key = id(scope)
        if key not in self._bindings:
            self._bindings[key] = scope_bindings(scope)
        return self._bindings[key]

    def parents(self, func: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[ast.AST, ast.AST]:
        """Each node of ``func``'s body -> its parent, read once per function."""
        return self._linked_body(func)[1]

    def _linked_body(
        self, func: ast.FunctionDef | ast.AsyncFunctionDef
    ) -> tuple[ast.AST, dict[ast.AST, ast.AST], tuple[list[ast.AST], ...]]:
        """``parents`` of ``func`` and its body's statements' nodes, from one walk of each
        statement (``link_parents``: the parents in the order a walk meets them)."""
        linked = self._linked.get(id(func))
        if linked is None:
            found: dict[ast.AST, ast.AST] = {}
            nodes = tuple(link_parents(stmt, found) for stmt in func.body)
            linked = self._linked[id(func)] = (func, found, nodes)
        return linked

    def body_names(self, func: ast.FunctionDef | ast.AsyncFunctionDef) -> BodyNames:
        """``_handovers.body_names`` of ``func``'s body, read once per function."""
        key = id(func)
        if key not in self._body_names:
            self._body_names[key] = body_names(self._linked_body(func)[2])
        return self._body_names[key]

    def returned_local(
        self, func: ast.FunctionDef | ast.AsyncFunctionDef
    ) -> tuple[str, int] | None:
        """``_returned.returned_local`` of ``func``, read from the AST once per function."""
        known = self._returned_local.get(id(func))
        if known is None:
            known = self._returned_local[id(func)] = (func, returned_local(func))
        return known[1]

    def returned_build(
        self, func: ast.FunctionDef | ast.AsyncFunctionDef
    ) -> tuple[ast.Call, dict[str, tuple[str, ...]]] | None:
        """``_returned.returned_build`` of ``func``, read from the AST once per function."""
        known = self._returned.get(id(func))
        if known is None:
            known = self._returned[id(func)] = (func, returned_build(func))
        return known[1]

    def is_generator(self, func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """Whether ``func``'s own body (not a def or lambda inside it) holds a ``yield``:
        its call's result is not its ``return`` (``Walker.returned_value``).  Read from the AST
        once per function, not once per walk."""
        known = self._generators.get(id(func))
        if known is None:
            found = any(
                isinstance(n, (ast.Yield, ast.YieldFrom)) for n in statements_and_exprs(func)
            )
            known = self._generators[id(func)] = (func, found)
        return known[1]

    def rebound(self, loop: ast.For | ast.AsyncFor | ast.While) -> frozenset[str]:
        """The names a loop's body (or its ``else``) binds, and the ``x.attr`` fields it
        stores on a name: what a later iteration may see changed.  Read from the AST once
        per loop."""
        key = id(loop)
        if key not in self._rebound:
            nodes = [n for stmt in (*loop.body, *loop.orelse) for n in walk(stmt)]
            self._rebound[key] = frozenset(
                n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
            ) | frozenset(
                f"{n.value.id}.{n.attr}"
                for n in nodes
                if isinstance(n, ast.Attribute)
                and isinstance(n.ctx, ast.Store)
                and isinstance(n.value, ast.Name)
            )
        return self._rebound[key]

    def module_constant(self, module: ModuleInfo, name: str) -> tuple[object] | tuple[()]:
        """``(value,)`` where ``module`` binds ``name`` once, at its top level, to a literal
        (a plain or an annotated assignment, or one element of a tuple of literals unpacked
        into names), and rebinds it nowhere (no other store of the name, no ``global`` of it
        anywhere in the module): ``Decisions.module_constant``.  Read from the AST once per
        module: its top level first, and the walk of the whole module for the stores only
        once a name bound there to a literal is asked about (most names asked are not)."""
        entry = self._constants.get(id(module.tree))
        if entry is None:
            tree = module.tree
            entry = self._constants[id(tree)] = (tree, _top_literals(tree), [])
        tree, literals, once = entry
        if name not in literals:
            return ()
        if not once:
            once.append(_stored_once(tree, literals))
        return once[0].get(name, ())

    def method_member(self, cls: ClassInfo, method: str) -> Member:
        member = self.index.lookup(cls, method)
        if member is None or member.kind not in (
            MemberKind.METHOD,
            MemberKind.CLASSMETHOD,
            MemberKind.STATICMETHOD,
            MemberKind.PROPERTY,  # its getter, run as a call (``Cls.prop.fget(ns)``)
        ):
            raise MethodNotFoundError(method)
        if not isinstance(member.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            raise MethodNotFoundError(method)
        return member

    def analyze(
        self,
        cls: ClassInfo,
        method: str,
        initial: Iterable[str] = (),
        constants: Mapping[str, object] | None = None,
        call: CallShape | None = None,
        provided: Iterable[str] = (),
        context: CallContext = _NO_CONTEXT,
        provided_chains: Iterable[str] = (),
    ) -> MethodReport:
        """One call of ``method`` on an instance whose ``__dict__`` holds ``initial``.

        ``constants`` are literal values of some of those attributes (a stub's
        ``impl._fp8_prefill_enabled = False``): branches they decide are pruned, so a stub that
        switches a feature off is not asked for the feature's fields.  ``call`` is the test's
        call, whose literal arguments prune branches too.  ``provided`` are the fields the
        test itself set (not class defaults, not earlier calls' writes): a block that alone
        reads some of them is the one the test prepared the stub for (see ``provisioned``).
        ``context`` is what the test arranged around the call (patches, ``pytest.raises``).
        ``provided_chains`` are the chains the stand-ins the call meets hold (``self.cfg.on``,
        ``metadata.prefill``): what prepares a block for the chain reads in it.  A stub field
        the test set (even to a namespace) does not: a namespace's links are provided only by
        the fields it holds, not by its root being set.
        """
        member = self.method_member(cls, method)
        node = member.node
        assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        start = frozenset(initial)
        bound = member.kind is not MemberKind.STATICMETHOD
        if member.kind in (MemberKind.METHOD, MemberKind.PROPERTY):
            params = call.bind_literals(node, bound=True) if call is not None else {}
            if call is not None and context.stated_locals:
                params.update(gathered_keywords(node, call))
            if call is not None and context.stated_locals and forwards_only(node):
                params[CALL_SHAPE] = shaped(call)
            walked = self.walk(
                context, cls, member, start, {}, (), consts=dict(constants or {}), params=params
            )
        else:
            walked = Walked(Recorder(), start)
        recorder = walked.recorder
        after = names(walked.state) if walked.state is not None else start
        required = provisioned(
            recorder.required,
            recorder.reads,
            frozenset(provided),
            self.blocks.siblings,
            self.blocks.typed | set(recorder.unprepared),
            self.blocks.rests,
        )
        signature = Signature.of(node, bound=bound)
        chains = (
            provisioned(
                recorder.chains,
                chain_links(recorder.chains),
                frozenset(provided_chains),
                self.blocks.siblings,
                self.blocks.typed | set(recorder.unprepared),
                self.blocks.rests,
            )
            if recorder.chains
            else ()
        )
        # The parameters, and the elements of ``*args``/``**kwargs`` handed a stand-in.
        roots = {"self", *(p.name for p in signature.params), *context.standins}
        return MethodReport(
            class_name=cls.name,
            method=method,
            signature=signature,
            location=Location(member.owner.path, node.lineno),
            initial=start,
            required=first_by_name(required),
            writes=first_by_name(recorder.writes),
            reads=first_by_name(recorder.reads),
            param_accesses=tuple(dict.fromkeys(recorder.params)),
            calls=tuple(recorder.calls),
            state_after=after,
            chain_reads=first_unguarded_by_name(c for c in chains if c.root in roots),
            touched=frozenset(recorder.touched),
            escapes=frozenset(recorder.escapes),
            filled=frozenset(recorder.filled),
            walked=member.kind in (MemberKind.METHOD, MemberKind.PROPERTY) and not walked.skipped,
        )

    def analyze_function(
        self,
        function: FunctionRef,
        context: CallContext = _NO_CONTEXT,
        call: CallShape | None = None,
        bound: bool = False,
        provided_chains: Iterable[str] = (),
        klass: ClassInfo | None = None,
    ) -> FunctionReport:
        """What a module function of the tree reads from the stand-ins a test hands it
        directly (``build_metadata(common)``): its parameters' chain reads, placed as a
        method's are, with ``call``'s literal arguments deciding branches.  A static or class
        method (``Cls.build(common)``) is walked the same way; ``bound``: the call does not
        pass the first parameter (a classmethod's ``cls``).  ``provided_chains``: the chains
        the stand-ins handed to it hold, which prepare the blocks that alone read them (as
        ``analyze``'s).  ``klass``: the class a class method is called on (its ``cls``)."""
        node = function.node
        params = call.bind_literals(node, bound=bound) if call is not None else {}
        if call is not None and context.stated_locals:
            params.update(gathered_keywords(node, call))
        walked = self.walk_function(
            context, function, frozenset(), {}, (), params, entry=True, klass=klass
        )
        chains = provisioned(
            walked.recorder.chains,
            chain_links(walked.recorder.chains),
            frozenset(provided_chains),
            self.blocks.siblings,
            self.blocks.typed | set(walked.recorder.unprepared),
            self.blocks.rests,
        )
        return FunctionReport(
            function=f"{function.module.name}.{node.name}",
            signature=Signature.of(node, bound=bound),
            location=Location(str(function.module.path), node.lineno),
            chain_reads=first_unguarded_by_name(chains),
            touched=frozenset(walked.recorder.touched),
            escapes=frozenset(walked.recorder.escapes),
            filled=frozenset(walked.recorder.filled),
            walked=not walked.skipped,
        )

    def param_classes(
        self, target: ClassInfo | FunctionRef, method: str | None = None
    ) -> dict[str, ClassInfo]:
        """The in-tree class each parameter of ``method`` of class ``target`` (or of the
        module function ``target``) is annotated with, for the parameters that name one.
        Asked for apart from ``analyze``: resolving annotations may parse modules a call
        without stand-ins never needs."""
        if isinstance(target, FunctionRef):
            module, node, bound = target.module, target.node, False
        else:
            member = self.method_member(target, method or "")
            module, node = member.owner.module, member.node
            bound = member.kind is not MemberKind.STATICMETHOD
        assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        key = id(node)
        if key not in self._param_classes:
            self._param_classes[key] = param_classes(self.index, module, node, bound)
        return dict(self._param_classes[key])

    def analyze_sequence(
        self,
        cls: ClassInfo,
        methods: Sequence[str],
        initial: Iterable[str] = (),
        context: CallContext = _NO_CONTEXT,
    ) -> tuple[MethodReport, ...]:
        """Calls in order on one instance; each starts from what the previous left written."""
        reports: list[MethodReport] = []
        state = frozenset(initial)
        for method in methods:
            report = self.analyze(cls, method, state, context=context)
            reports.append(report)
            state = report.state_after
        return tuple(reports)

    # -- internals ----------------------------------------------------------------------

    def set_by_replacement(
        self, context: CallContext, member: Member, state: frozenset[str]
    ) -> frozenset[str]:
        """``state`` past a call of a method the test replaced with a function that sets
        fields of its object to stand-ins (``CallContext.replaced_sets``): ``self.<field>``
        holds that stand-in from here on (``alias_mark``)."""
        if not context.replaced_sets:
            return state
        for qualname, name, field, root in context.replaced_sets:
            if name == member.name and qualname == member.owner.qualname:
                state = unaliased(state, field) | {alias_mark(field, root)}
        return state

    def is_replaced(
        self, context: CallContext, cls: ClassInfo, member: Member, after: ClassInfo | None
    ) -> bool:
        """Whether the test patched ``member.name`` on a class that ``getattr`` on an
        instance of ``cls`` meets no later than the class defining ``member``.

        ``monkeypatch.setattr(Parent, "build", fake)`` also replaces the ``build`` that
        ``Parent`` merely inherits from its own base: the patch shadows it for ``Parent``
        and every subclass that does not override it.  ``after`` is the class a
        ``super().m()`` call searches past.
        """
        if not context.replaced:
            return False
        chain = self.index.mro(cls)[0]
        if after is not None:
            names = [c.qualname for c in chain]
            if after.qualname in names:
                chain = chain[names.index(after.qualname) + 1 :]
        for klass in chain:
            if (klass.qualname, member.name) in context.replaced:
                return True
            if klass.qualname == member.owner.qualname:
                return False
        return (member.owner.qualname, member.name) in context.replaced

    def walk(
        self,
        context: CallContext,
        cls: ClassInfo,
        member: Member,
        state: frozenset[str],
        aliases: dict[str, str],
        stack: tuple[str, ...],
        body: ast.FunctionDef | ast.AsyncFunctionDef | None = None,
        consts: dict[str, object] | None = None,
        params: dict[str, object] | None = None,
        after: ClassInfo | None = None,
        certain: bool = True,
        frame: str = "",
    ) -> Walked:
        """Walk ``member`` (or ``body``, a property's setter) from ``state``; ``stack`` names
        the calls being walked above it, ``certain`` whether the caller's call runs on every
        run.  Block ids in the result are relative to this call (the caller places them).
        ``frame``: the prefix of its entry in the stack (``BUILT_FRAME``: a constructor a
        stand-in was passed on to, which ``MAX_FUNCTION_DEPTH`` counts).  The memo's key holds
        ``stack``: the depth bounds and the recursion check read it, so a walk made under
        other calls is another walk, and no call's findings depend on the walks made before
        it."""
        node = body or member.node
        consts = consts or {}
        if self.is_replaced(context, cls, member, after):
            if (member.owner.qualname, member.name) in context.raising or any(
                (klass.qualname, member.name) in context.raising for klass in self.index.mro(cls)[0]
            ):
                # the replacement always raises
                return Walked(Recorder(), None, raised=True, skipped=True)
            # Under ``pytest.raises``, the test's replacement may be what raises (as a
            # patched function is, ``CallHandlers.call_out``); where the test's values are
            # followed: the stub audit's output is pinned to the releases.
            may_raise = context.expect_raise and context.stated_locals
            return Walked(
                Recorder(),
                self.set_by_replacement(context, member, state),
                raised=may_raise,
                skipped=True,
            )
        assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        key_name = f"{frame}{member.owner.qualname}.{node.name}:{node.lineno}"
        if key_name in stack or len(stack) > MAX_CALL_DEPTH:
            return Walked(Recorder(), state, skipped=True)
        entry = not stack  # the analysed call: its own parameters are stand-ins
        if not entry and (context.result_fields or context.result_items or context.called_arms):
            # only the analysed call's result is asserted: callees share their walks
            context = attrs.evolve(
                context, result_fields=(), result_items=(), called_arms=frozenset()
            )
        memo_key = (
            cls.qualname,
            key_name,
            state,
            tuple(sorted(aliases.items())),
            tuple(sorted(consts.items(), key=lambda kv: kv[0])),
            tuple(sorted((params or {}).items(), key=lambda kv: kv[0])),
            certain,
            context,
            entry,
            stack,
        )
        walked = self._memo.get(memo_key)
        if walked is None:
            walker = Walker(
                self,
                context,
                cls,
                member.owner,
                node,
                aliases,
                stack + (key_name,),
                consts,
                params or {},
                certain,
                entry=entry,
            )
            walked = self._memo[memo_key] = walker.run(state)
        return walked

    def walk_function(
        self,
        context: CallContext,
        function: FunctionRef,
        state: frozenset[str],
        aliases: dict[str, str],
        stack: tuple[str, ...],
        params: dict[str, object],
        entry: bool = False,
        klass: ClassInfo | None = None,
    ) -> Walked:
        """Walk a module function handed stand-ins (``aliases``: its parameters that hold
        one, as chains of the analysed call), from ``state``'s chain marks, as if called on
        every run (the caller places the result, so calls from anywhere share the walk).
        ``entry``: the function is the analysed call itself, so every parameter holds a
        stand-in.  ``klass``: a class method's class, what its first parameter is.  Memoised
        with ``stack`` in the key, as ``walk`` is."""
        node = function.node
        key_name = f"{FUNCTION_FRAME}{function.module.name}.{node.name}:{node.lineno}"
        if key_name in stack or len(stack) > MAX_CALL_DEPTH:
            return Walked(Recorder(), state, skipped=True)
        if not entry and (context.result_fields or context.result_items or context.called_arms):
            context = attrs.evolve(
                context, result_fields=(), result_items=(), called_arms=frozenset()
            )
        memo_key = (
            key_name,
            state,
            tuple(sorted(aliases.items())),
            tuple(sorted(params.items(), key=lambda kv: kv[0])),
            context,
            entry,
            klass.qualname if klass is not None else None,
            stack,
        )
        walked = self._memo.get(memo_key)
        if walked is None:
            walker = Walker(
                self,
                context,
                None,
                None,
                node,
                aliases,
                stack + (key_name,),
                {},
                params,
                True,
                module=function.module,
                entry=entry,
                klass=klass,
            )
            walked = self._memo[memo_key] = walker.run(state)
        return walked
