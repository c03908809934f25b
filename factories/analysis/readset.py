"""Which instance attributes a method sequence reads before it writes them.

This is the one analysis everything else consumes: factories check their stub specs against it
before building an object, contracts pin the hand-off between builder and impl with it, and
``tools/audit_stubs.py`` audits vLLM's own ``object.__new__`` stubs with it.

The walk is a small abstract interpretation over a method's AST.  Its state is the set of
attributes *definitely* written on every path so far; ``if`` branches meet by intersection, loop
bodies may run zero times, ``return``/``raise`` end a path.  A ``self.X`` load outside that set
which the class body does not define is a *required read*: an ``object.__new__`` stub must set X.
A read on any branch counts (the analysis cannot know which branch a test takes; the audit
report marks that class of finding), except where literal values decide it: stub fields set to
literals, literal arguments and defaults prune ``if`` branches, conditional expressions and the
operands of ``and``/``or`` that short-circuit skips.  ``hasattr(self, "x")`` guards narrow the
branch they protect, an assertion's message (evaluated only when the test already fails) is not a
read, and the attributes every object has (``__dict__``, ``__class__``) are never missing.
``self.m(...)`` is followed into ``m`` through the MRO, ``super().m(...)`` past the defining
class, properties into their getters and setters.

Where the test's values do not decide a branch, its set-up can still say which way it goes: a
block that alone reads fields the test set is one it prepared (``_provisioned``), and a
condition that reads a field the stub lacks is a guard written after the test (``both_arms``).
Reads record the undecided blocks they sit in for the first.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
from collections.abc import Iterable, Iterator, Mapping, Sequence

import attrs

from factories.analysis.classes import ClassIndex, ClassInfo, FunctionRef, Member, MemberKind
from factories.analysis.findings import Location
from factories.analysis.signatures import CallShape, Signature
from factories.analysis.source_tree import ImportTarget, ModuleInfo, collect_imports
from factories.analysis.values import Obj, compare, enum_member, length_of, truthy
from factories.errors import MethodNotFound, SourceError

_BUILTINS = frozenset(dir(builtins))
_MAX_DEPTH = 16
# What every instance of a class without ``__slots__`` has, whatever its ``__init__`` did.
_OBJECT_ATTRIBUTES = frozenset(dir(object)) | {"__dict__", "__weakref__", "__module__"}
_MISSING = object()
_NO_GUARDS: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())

State = frozenset[str] | None  # None: this path cannot be reached (after return/raise)


@attrs.frozen(order=True)
class AttributeAccess:
    """``self.<name>`` read or written at ``location`` inside ``method`` (a qualified name)."""

    name: str
    location: Location
    method: str
    # Whether the read happens on every run of the analysed call that the test's known values
    # select: False behind a branch, loop or handler the analysis cannot decide.
    certain: bool = True
    # When not certain: the undecided blocks (ids of ``if`` arms and loop bodies) the read sits
    # in, each on the straight line from the block's entry; None when something else (a
    # handler, an exit, a short-circuit) also makes it uncertain.  See ``_provisioned``.
    blocks: tuple[int, ...] | None = attrs.field(default=None, eq=False)


@attrs.frozen(order=True)
class ParamAccess:
    """An attribute path on an entry-method parameter, e.g. ``metadata.prefill.query_start_loc``."""

    path: str
    location: Location
    write: bool


@attrs.frozen
class CallSite:
    """A call the method makes outside the class.

    ``target`` is dotted and resolved through imports (``aiter.get_ps_metadata_v1``,
    ``torch.cuda.Event``, ``vllm.platforms.current_platform.num_compute_units``) or
    ``self.<attr>`` for a callable stored on the instance (``self._mla_reduce_v1``).
    """

    target: str
    location: Location
    shape: CallShape


@attrs.frozen
class MethodReport:
    """What one call of ``method`` on an instance of ``class_name`` needs and does.

    ``required`` are reads of attributes neither in ``initial`` nor written earlier nor defined
    by the class; ``state_after`` is what is definitely written once the call returns.
    """

    class_name: str
    method: str
    signature: Signature
    location: Location
    initial: frozenset[str]
    required: tuple[AttributeAccess, ...]
    writes: tuple[AttributeAccess, ...]
    reads: tuple[AttributeAccess, ...]
    param_accesses: tuple[ParamAccess, ...]
    calls: tuple[CallSite, ...]
    state_after: frozenset[str]

    @property
    def read_names(self) -> frozenset[str]:
        return frozenset(a.name for a in self.reads)

    @property
    def written_names(self) -> frozenset[str]:
        return frozenset(a.name for a in self.writes)

    def param_paths(self, param: str, *, write: bool) -> frozenset[str]:
        prefix = param + "."
        return frozenset(
            p.path[len(prefix) :]
            for p in self.param_accesses
            if p.write is write and p.path.startswith(prefix)
        )


@attrs.define
class _Recorder:
    reads: list[AttributeAccess] = attrs.field(factory=list)
    required: list[AttributeAccess] = attrs.field(factory=list)
    writes: list[AttributeAccess] = attrs.field(factory=list)
    params: list[ParamAccess] = attrs.field(factory=list)
    calls: list[CallSite] = attrs.field(factory=list)

    def extend(self, other: _Recorder, prefix: tuple[int, ...] | None = ()) -> None:
        """Add a callee's accesses, its reads' blocks placed after the caller's ``prefix``."""
        for field in attrs.fields(_Recorder):
            items = getattr(other, field.name)
            if field.name in ("reads", "required") and prefix != ():
                items = [_placed(a, prefix) for a in items]
            getattr(self, field.name).extend(items)


def _placed(access: AttributeAccess, prefix: tuple[int, ...] | None) -> AttributeAccess:
    if access.certain and not prefix:
        return access
    blocks = None if prefix is None or access.blocks is None else prefix + access.blocks
    return attrs.evolve(access, blocks=blocks)


def _meet(a: State, b: State) -> State:
    if a is None:
        return b
    if b is None:
        return a
    return a & b


def _provisioned(
    required: Sequence[AttributeAccess],
    reads: Sequence[AttributeAccess],
    provided: frozenset[str],
    siblings: Mapping[int, int],
) -> list[AttributeAccess]:
    """Required reads made certain because the test prepared the block they sit in.

    A test that sets stub fields which the call reads only inside one undecided block (an
    ``if`` arm, a loop body) means that block to run: why else set them.  A read on that
    block's straight line (from its entry, before any further undecided split, exit or jump)
    is then as certain as the block itself.  A block is *provisioned* when some field the
    test set is read inside it and nowhere outside it on the call's path; a read is certain
    when every block it sits in is provisioned.  ``siblings`` pairs the two arms of an
    ``if``."""
    if not provided:
        return list(required)
    inside: dict[str, frozenset[int]] = {}
    for access in reads:
        if access.name not in provided:
            continue
        blocks = frozenset(access.blocks or ()) if not access.certain else frozenset()
        inside[access.name] = inside.get(access.name, blocks) & blocks
    ready = frozenset().union(*inside.values())
    # Both arms of one ``if`` prepared: the test (or a helper shared by tests) set up for
    # either way, so neither is singled out.
    ready = frozenset(b for b in ready if siblings.get(b) not in ready)
    return [
        attrs.evolve(a, certain=True)
        if not a.certain and a.blocks and set(a.blocks) <= ready
        else a
        for a in required
    ]


def _first_by_name(items: Iterable[AttributeAccess]) -> tuple[AttributeAccess, ...]:
    """One access per name: the first certain one, else the first."""
    seen: dict[str, AttributeAccess] = {}
    for item in items:
        if item.name not in seen or (item.certain and not seen[item.name].certain):
            seen[item.name] = item
    return tuple(seen.values())


class ReadSetAnalyzer:
    """Analyses calls on instances of in-tree classes.  Results are memoised per analyzer."""

    def __init__(self, index: ClassIndex) -> None:
        self.index = index
        self._memo: dict[tuple, tuple[_Recorder, State, bool]] = {}
        self.last_raised = False  # whether the last ``_run`` met a ``raise`` statement
        self._replaced: frozenset[tuple[str, str]] = frozenset()
        # Set by the audit for a call the test expects to raise (``pytest.raises``): then a
        # ``raise`` met on an undecided branch may end the test's path there.
        self.expect_raise = False
        # What the test replaced that raises on every call: ``(class qualname, method)`` and
        # dotted module functions (``vllm.x.mod.helper``); and every module function it
        # replaced, raising or not.
        self.raising: frozenset = frozenset()
        # Set by the audit for a coroutine the test hands to ``asyncio.create_task``: the
        # test may cancel it at any ``await``, so what follows the first one is not certain.
        self.detached = False
        self._raises_cache: dict[int, bool] = {}
        self.patched_functions: frozenset[str] = frozenset()
        self._blocks: dict[tuple[int, int], int] = {}  # (id of the AST node, arm) -> block id
        self._siblings: dict[int, int] = {}  # the other arm of an ``if`` arm's block

    def method_member(self, cls: ClassInfo, method: str) -> Member:
        member = self.index.lookup(cls, method)
        if member is None or member.kind not in (
            MemberKind.METHOD,
            MemberKind.CLASSMETHOD,
            MemberKind.STATICMETHOD,
        ):
            raise MethodNotFound(method)
        return member

    def analyze(
        self,
        cls: ClassInfo,
        method: str,
        initial: Iterable[str] = (),
        constants: Mapping[str, object] | None = None,
        replaced: frozenset[tuple[str, str]] = frozenset(),
        call: CallShape | None = None,
        provided: Iterable[str] = (),
    ) -> MethodReport:
        """One call of ``method`` on an instance whose ``__dict__`` holds ``initial``.

        ``constants`` are literal values of some of those attributes (a stub's
        ``impl._fp8_prefill_enabled = False``): branches they decide are pruned, so a stub that
        switches a feature off is not asked for the feature's fields.  ``provided`` are the
        fields the test itself set (not class defaults, not earlier calls' writes): a block
        that alone reads some of them is the one the test prepared the stub for (see
        ``_provisioned``).
        """
        member = self.method_member(cls, method)
        node = member.node
        assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        start = frozenset(initial)
        bound = member.kind is not MemberKind.STATICMETHOD
        recorder = _Recorder()
        self._replaced = replaced
        if member.kind is MemberKind.METHOD:
            params = call.bind_literals(node, bound=True) if call is not None else {}
            state = self._run(
                cls, member, start, {}, (), recorder, consts=dict(constants or {}), params=params
            )
        else:
            state = start
        after = state if state is not None else start
        required = _provisioned(
            recorder.required, recorder.reads, frozenset(provided), self._siblings
        )
        return MethodReport(
            class_name=cls.name,
            method=method,
            signature=Signature.of(node, bound=bound),
            location=Location(member.owner.path, node.lineno),
            initial=start,
            required=_first_by_name(required),
            writes=_first_by_name(recorder.writes),
            reads=_first_by_name(recorder.reads),
            param_accesses=tuple(dict.fromkeys(recorder.params)),
            calls=tuple(recorder.calls),
            state_after=after,
        )

    def analyze_sequence(
        self, cls: ClassInfo, methods: Sequence[str], initial: Iterable[str] = ()
    ) -> tuple[MethodReport, ...]:
        """Calls in order on one instance; each starts from what the previous left written."""
        reports: list[MethodReport] = []
        state = frozenset(initial)
        for method in methods:
            report = self.analyze(cls, method, state)
            reports.append(report)
            state = report.state_after
        return tuple(reports)

    # -- internals ----------------------------------------------------------------------

    def _is_replaced(self, cls: ClassInfo, member: Member, after: ClassInfo | None = None) -> bool:
        """Whether the test patched ``member.name`` on a class that ``getattr`` on an
        instance of ``cls`` meets no later than the class defining ``member``.

        ``monkeypatch.setattr(Parent, "build", fake)`` also replaces the ``build`` that
        ``Parent`` merely inherits from its own base: the patch shadows it for ``Parent``
        and every subclass that does not override it.  ``after`` is the class a
        ``super().m()`` call searches past.
        """
        if not self._replaced:
            return False
        chain = self.index.mro(cls)[0]
        if after is not None:
            names = [c.qualname for c in chain]
            if after.qualname in names:
                chain = chain[names.index(after.qualname) + 1 :]
        for klass in chain:
            if (klass.qualname, member.name) in self._replaced:
                return True
            if klass.qualname == member.owner.qualname:
                return False
        return (member.owner.qualname, member.name) in self._replaced

    def _run(
        self,
        cls: ClassInfo,
        member: Member,
        state: frozenset[str],
        aliases: dict[str, str],
        stack: tuple[str, ...],
        recorder: _Recorder,
        body: ast.FunctionDef | ast.AsyncFunctionDef | None = None,
        consts: dict[str, object] | None = None,
        params: dict[str, object] | None = None,
        after: ClassInfo | None = None,
        certain: bool = True,
        chain: tuple[int, ...] | None = (),
    ) -> State:
        """Walk ``member`` (or ``body``) from ``state``; ``certain``/``chain`` are the
        caller's placement of this call (see ``AttributeAccess``)."""
        node = body or member.node
        consts = consts or {}
        if self._is_replaced(cls, member, after):
            if (member.owner.qualname, member.name) in self.raising or any(
                (klass.qualname, member.name) in self.raising for klass in self.index.mro(cls)[0]
            ):
                self.last_raised = True
                return None  # the test's replacement raises on every call
            return state
        assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        key_name = f"{member.owner.qualname}.{node.name}:{node.lineno}"
        if key_name in stack or len(stack) > _MAX_DEPTH:
            return state
        memo_key = (
            cls.qualname,
            key_name,
            state,
            tuple(sorted(aliases.items())),
            tuple(sorted(consts.items(), key=lambda kv: kv[0])),
            tuple(sorted((params or {}).items(), key=lambda kv: kv[0])),
            self._replaced,
            certain,
            self.expect_raise,
            self.detached,
            self.raising,
            self.patched_functions,
        )
        if memo_key in self._memo:
            sub, out, raised = self._memo[memo_key]
            recorder.extend(sub, chain)
            self.last_raised = raised
            return out
        sub = _Recorder()
        walker = _Walker(
            self, cls, member.owner, node, aliases, stack + (key_name,), sub, consts, params or {}
        )
        walker.certain = certain
        walker.chain = ()  # relative to this call; the caller's chain is prefixed below
        out = walker.run(state)
        self._memo[memo_key] = (sub, out, walker.raised)
        recorder.extend(sub, chain)
        self.last_raised = walker.raised
        return out


class _Walker:
    """Walks one function body; see the module docstring for the state semantics."""

    def __init__(
        self,
        analyzer: ReadSetAnalyzer,
        cls: ClassInfo,
        owner: ClassInfo,
        func: ast.FunctionDef | ast.AsyncFunctionDef,
        aliases: dict[str, str],
        stack: tuple[str, ...],
        recorder: _Recorder,
        consts: dict[str, object],
        params: dict[str, object],
    ) -> None:
        self.analyzer = analyzer
        self.consts = dict(consts)
        self.name_consts = dict(params)
        self.index = analyzer.index
        self.cls = cls
        self.owner = owner
        self.func = func
        self.module: ModuleInfo = owner.module
        self.stack = stack
        self.rec = recorder
        self.qualname = f"{owner.name}.{func.name}"
        args = func.args
        positional = list(args.posonlyargs) + list(args.args)
        self.self_name = positional[0].arg if positional else None
        self.params = [a.arg for a in positional[1:]] + [a.arg for a in args.kwonlyargs]
        self.aliases: dict[str, str] = dict(aliases)
        self.shadowed: set[str] = set()
        # Whether the statement being walked runs on every run of the call (see ``guarded``),
        # and how many ``return``s the walk has met: a continuation after an undecided branch
        # that may return is reached on some runs only.  ``chain``: the undecided blocks the
        # statement sits in, on each one's straight line (None: uncertain for another reason);
        # ``jumps`` counts ``break``/``continue``, which leave that straight line too.
        self._certain = True
        self.chain: tuple[int, ...] | None = ()
        self.exits = 0
        self.jumps = 0
        self.raised = False  # met a ``raise`` here or in a method this one calls
        self.ended = False  # the current statement called something that always raises
        self.returned: State = None  # meet of the states at each ``return``
        self.local_imports: dict[str, ImportTarget] = {}
        for sub in ast.walk(func):
            if isinstance(sub, (ast.Import, ast.ImportFrom)):
                self.local_imports.update(
                    collect_imports([sub], self.module.name, self.module.is_package)
                )
        self.locals = {
            n.id for n in ast.walk(func) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        } | set(self.local_imports)

    @property
    def certain(self) -> bool:
        return self._certain

    @certain.setter
    def certain(self, value: bool) -> None:
        self._certain = value
        self.chain = () if value else None

    def block_id(self, node: object, arm: int) -> int:
        """A stable id for one arm (0, 1) of an ``if`` (keyed by its statement list) or a
        loop's body (0, keyed by the loop), shared by every walk of that code."""
        ids = self.analyzer._blocks
        return ids.setdefault((id(node), arm), len(ids))

    @contextlib.contextmanager
    def guarded(self, keep_exits: bool = False, loop: ast.AST | None = None) -> Iterator[None]:
        """Walk a part that runs on some runs only (an undecided branch, a loop body, a
        handler, a nested def): its reads are not certain.  After it, the walk is certain
        again unless that part may have returned (then the rest runs on some runs only);
        ``keep_exits`` for a nested def, whose ``return`` ends the def, not this call.
        ``loop``: the part is that loop's body, a block a test may provision."""
        was, chain, exits, jumps = self.certain, self.chain, self.exits, self.jumps
        self.certain = False
        if loop is not None and chain is not None:
            self.chain = chain + (self.block_id(loop, 0),)
        try:
            yield
        finally:
            returned = self.exits > exits
            if keep_exits:
                self.exits = exits
            if keep_exits or loop is not None:
                self.jumps = jumps  # a ``break``/``continue`` ends that loop's body only
            jumped = self.jumps > jumps
            self.certain = was and not returned
            self.chain = chain if not (returned or jumped) else None

    def loc(self, node: ast.AST) -> Location:
        return Location(str(self.module.path), getattr(node, "lineno", self.func.lineno))

    def run(self, state: frozenset[str]) -> State:
        """The state when the call returns (falling off the end or at any ``return``); None
        when every path raises, so the caller's path ends there too."""
        return _meet(self.block(self.func.body, state), self.returned)

    # -- statements ---------------------------------------------------------------------

    def block(self, body: Sequence[ast.stmt], state: State) -> State:
        for stmt in body:
            if state is None:
                return None
            state = self.stmt(stmt, state)
            if self.ended:  # the statement called something that always raises
                self.ended = False
                return None
        return state

    def both_arms(
        self,
        body: Sequence[ast.stmt],
        body_in: frozenset[str],
        orelse: Sequence[ast.stmt],
        orelse_in: frozenset[str],
        new_guard: bool = False,
    ) -> State:
        """An undecided ``if``: either arm may run, so a read is certain only when both arms
        make it certainly (relative to the arm) -- ``if c: f(self.x) else: g(self.x)`` needs
        ``x`` whichever way the test goes.  Each arm starts from the same known values; a
        name either arm rebinds is unknown after the branch.

        ``new_guard``: the condition reads a field the stub lacks, so the test was written
        before this branch existed (or never meant to decide it) and the stub already fails
        there.  When one arm leaves the call (``return``, ``break``, ``continue``) and the
        other goes on, the test's path is the one that goes on: the code it was written for
        lies past the guard (``if engine in self._invalid_engines: return`` added later)."""
        was, chain, exits, jumps = self.certain, self.chain, self.exits, self.jumps
        consts, names = dict(self.consts), dict(self.name_consts)
        marks: list[tuple[int, int]] = []
        states: list[State] = []
        left: list[bool] = []  # whether each arm may leave the call or the loop body
        changed: set[tuple[str, str]] = set()
        ids = (self.block_id(body, 0), self.block_id(orelse, 1))
        self.analyzer._siblings.update({ids[0]: ids[1], ids[1]: ids[0]})
        for number, (arm, arm_in) in enumerate(((body, body_in), (orelse, orelse_in))):
            self.certain = was
            self.chain = None if chain is None else chain + (ids[number],)
            self.consts, self.name_consts = dict(consts), dict(names)
            marks.append((len(self.rec.reads), len(self.rec.required)))
            before = self.exits + self.jumps
            states.append(self.block(arm, arm_in))
            left.append(states[-1] is None or self.exits + self.jumps > before)
            self.ended = False
            changed |= {
                ("c", k)
                for k in consts.keys() | self.consts.keys()
                if consts.get(k, _MISSING) is not self.consts.get(k, _MISSING)
            }
            changed |= {
                ("n", k)
                for k in names.keys() | self.name_consts.keys()
                if names.get(k, _MISSING) is not self.name_consts.get(k, _MISSING)
            }
        marks.append((len(self.rec.reads), len(self.rec.required)))
        self.consts = {k: v for k, v in consts.items() if ("c", k) not in changed}
        self.name_consts = {k: v for k, v in names.items() if ("n", k) not in changed}
        if new_guard and left[0] != left[1] and states[left.index(False)] is not None:
            stays = left.index(False)
            if states[1 - stays] is None:  # the leaving arm always leaves
                self.exits, self.jumps = exits, jumps
                self.certain, self.chain = was, chain
                for which in (0, 1):  # the other arm's reads are not on the test's path
                    accesses = self.rec.reads if which == 0 else self.rec.required
                    for i in range(marks[1 - stays][which], marks[2 - stays][which]):
                        if accesses[i].certain:
                            accesses[i] = attrs.evolve(accesses[i], certain=False)
                return states[stays]
        for which in (0, 1):
            accesses = self.rec.reads if which == 0 else self.rec.required
            first = range(marks[0][which], marks[1][which])
            second = range(marks[1][which], marks[2][which])
            in_first = {accesses[i].name for i in first if accesses[i].certain}
            in_second = {accesses[i].name for i in second if accesses[i].certain}
            both = in_first & in_second
            for i in list(first) + list(second):
                if accesses[i].certain and accesses[i].name not in both:
                    accesses[i] = attrs.evolve(accesses[i], certain=False)
        self.certain = was and self.exits == exits
        self.chain = chain if self.exits == exits and self.jumps == jumps else None
        return _meet(states[0], states[1])

    def placed(self, since: int) -> bool:
        """Whether a required read recorded since ``since`` sits where the walk is now: as
        certain, or in the same undecided blocks (the stub fails at that read whenever the
        walk gets here)."""
        new = self.rec.required[since:]
        if self.certain:
            return any(a.certain for a in new)
        return self.chain is not None and any(a.blocks == self.chain for a in new)

    def end_path(self) -> None:
        """A call that raises on every run: the rest of this path is not reached."""
        self.ended = True
        self.raised = True
        if self.analyzer.expect_raise:
            self.exits += 1

    def stmt(self, node: ast.stmt, state: frozenset[str]) -> State:
        if isinstance(node, ast.Assign):
            state = self.expr(node.value, state)
            for target in node.targets:
                state = self.store(target, state, node.value)
            return state
        if isinstance(node, ast.AnnAssign):
            if node.value is None:
                return state
            state = self.expr(node.value, state)
            return self.store(node.target, state, node.value)
        if isinstance(node, ast.AugAssign):
            state = self.expr(node.value, state)
            state = self.expr(_as_load(node.target), state)
            return self.store(node.target, state, None)
        if isinstance(node, ast.Delete):
            for target in node.targets:
                if self.is_self_attr(target):
                    state = state - {target.attr}  # type: ignore[attr-defined]
                else:
                    state = self.expr(target, state)
            return state
        if isinstance(node, ast.If):
            before = len(self.rec.required)
            verdict, when_true, when_false = self.branch(node.test, state)
            if verdict is True:
                return self.block(node.body, when_true)
            if verdict is False:
                return self.block(node.orelse, when_false)
            return self.both_arms(
                node.body, when_true, node.orelse, when_false, self.placed(before)
            )
        if isinstance(node, (ast.For, ast.AsyncFor)):
            state = self.expr(node.iter, state)
            state = self.store(node.target, state, None)
            with self.guarded(loop=node):
                self.block(node.body, state)
            with self.guarded():
                return _meet(state, self.block(node.orelse, state))
        if isinstance(node, ast.While):
            state = self.expr(node.test, state)
            with self.guarded(loop=node):
                self.block(node.body, state)
            with self.guarded():
                return _meet(state, self.block(node.orelse, state))
        if isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            body_state = self.block(node.body, state)
            body_state = self.block(node.orelse, body_state) if body_state is not None else None
            result = body_state
            with self.guarded():
                for handler in node.handlers:
                    result = _meet(result, self.block(handler.body, state))
            if node.finalbody:
                final_in = result if result is not None else state
                final = self.block(node.finalbody, final_in)
                return None if result is None or final is None else final
            return result
        if isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                state = self.expr(item.context_expr, state)
                if item.optional_vars is not None:
                    state = self.store(item.optional_vars, state, None)
            return self.block(node.body, state)
        if isinstance(node, (ast.Return, ast.Raise)):
            for child in ast.iter_child_nodes(node):
                state = self.expr(child, state)
            if isinstance(node, ast.Raise):
                self.raised = True
            else:
                self.returned = _meet(self.returned, state)
            if isinstance(node, ast.Return) or self.analyzer.expect_raise:
                self.exits += 1
            return None
        if isinstance(node, (ast.Break, ast.Continue)):
            self.jumps += 1
            return None
        if isinstance(node, ast.Match):
            state = self.expr(node.subject, state)
            result: State = state  # no case may match
            with self.guarded():
                for case in node.cases:
                    case_state = state if case.guard is None else self.expr(case.guard, state)
                    result = _meet(result, self.block(case.body, case_state))
            return result
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            # A nested def may run later or never: its reads count, its writes do not.
            returned = self.returned
            with self.guarded(keep_exits=True):
                for child in node.body:
                    self.stmt(child, state)
            self.returned, self.ended = returned, False
            return state
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal, ast.Pass)):
            return state
        if isinstance(node, ast.Assert):
            # The message runs only when the assertion fails, and then the test fails anyway.
            state = self.expr(node.test, state)
            return state | self.guards(node.test)[0]
        for child in ast.iter_child_nodes(node):  # Expr, ...
            if isinstance(child, ast.expr):
                state = self.expr(child, state)
        return state

    def store(
        self, target: ast.expr, state: frozenset[str], value: ast.expr | None
    ) -> frozenset[str]:
        if self.is_self_attr(target):
            name = target.attr  # type: ignore[attr-defined]
            member = self.index.lookup(self.cls, name)
            if member is not None and member.kind is MemberKind.PROPERTY:
                if member.setter is not None:
                    out = self.analyzer._run(
                        self.cls,
                        member,
                        state,
                        {},
                        self.stack,
                        self.rec,
                        body=member.setter,
                        consts=self.consts,
                        certain=self.certain,
                        chain=self.chain,
                    )
                    return out if out is not None else state
                return state
            self.rec.writes.append(AttributeAccess(name, self.loc(target), self.qualname))
            self.consts.pop(name, None)
            return state | {name}
        if isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                state = self.store(elt, state, None)
            return state
        if isinstance(target, ast.Starred):
            return self.store(target.value, state, None)
        if isinstance(target, ast.Name):
            self.name_consts.pop(target.id, None)
            value_known = self.known(value) if value is not None else ()
            if (
                value_known
                and self.certain
                and (isinstance(value_known[0], Obj) or _sized(value) is not None)
            ):
                # ``meta = attn_metadata.prefill``, ``num_reqs = idx_mapping.shape[0]``
                self.name_consts[target.id] = value_known[0]
            path = self.param_path(value) if value is not None else None
            if path is not None:
                self.aliases[target.id] = path
            else:
                self.aliases.pop(target.id, None)
                if target.id in self.params:
                    self.shadowed.add(target.id)
            return state
        if isinstance(target, ast.Attribute):
            path = self.param_path(target)
            if path is not None:
                self.rec.params.append(ParamAccess(path, self.loc(target), write=True))
                return state
            return self.expr(target.value, state)
        if isinstance(target, ast.Subscript):
            state = self.expr(target.value, state)
            return self.expr(target.slice, state)
        return state

    # -- expressions --------------------------------------------------------------------

    def is_self_attr(self, node: ast.AST) -> bool:
        return (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == self.self_name
        )

    def param_path(self, node: ast.AST | None) -> str | None:
        """``metadata.prefill.x`` for an attribute chain rooted at a parameter or its alias."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        if node.id in self.aliases:
            root = self.aliases[node.id]
        elif node.id in self.params and node.id not in self.shadowed:
            root = node.id
        else:
            return None
        return ".".join([root] + list(reversed(parts)))

    def read_attr(self, name: str, node: ast.AST, state: frozenset[str]) -> State:
        access = AttributeAccess(name, self.loc(node), self.qualname, self.certain, self.chain)
        self.rec.reads.append(access)
        if name in state or name in _OBJECT_ATTRIBUTES:
            return state
        member = self.index.lookup(self.cls, name)
        if member is None:
            self.rec.required.append(access)
            return state
        if member.kind is MemberKind.PROPERTY:
            out = self.analyzer._run(
                self.cls,
                member,
                state,
                {},
                self.stack,
                self.rec,
                consts=self.consts,
                certain=self.certain,
                chain=self.chain,
            )
            return out if out is not None else state
        return state

    def call_method(
        self,
        member: Member,
        call: ast.Call,
        state: frozenset[str],
        after: ClassInfo | None = None,
    ) -> State:
        callee = member.node
        assert isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef))
        positional = [a.arg for a in list(callee.args.posonlyargs) + list(callee.args.args)][1:]
        aliases: dict[str, str] = {}
        for name, arg in zip(positional, call.args):
            path = self.param_path(arg)
            if path is not None and not isinstance(arg, ast.Starred):
                aliases[name] = path
        for kw in call.keywords:
            path = self.param_path(kw.value) if kw.arg else None
            if path is not None:
                aliases[kw.arg] = path  # type: ignore[index]
        shape = CallShape.of(call)
        shape = (
            attrs.evolve(
                shape,
                positional_literals=tuple(
                    self.known(a) for a in call.args if not isinstance(a, ast.Starred)
                ),
                keyword_literals=tuple(
                    (k.arg, self.known(k.value)[0])
                    for k in call.keywords
                    if k.arg and self.known(k.value)
                ),
            )
            if not shape.star_args
            else shape
        )
        before = len(self.rec.writes)
        self.analyzer.last_raised = False
        out = self.analyzer._run(
            self.cls,
            member,
            state,
            aliases,
            self.stack,
            self.rec,
            consts=self.consts,
            params=shape.bind_literals(callee, bound=True),
            after=after,
            certain=self.certain,
            chain=self.chain,
        )
        for write in self.rec.writes[before:]:
            self.consts.pop(write.name, None)
        if out is None:
            self.end_path()
            return state
        if self.analyzer.last_raised:
            self.raised = True
            if self.analyzer.expect_raise:
                self.certain = False  # the expected exception may have come from that call
        return out

    def truth(self, test: ast.expr) -> bool | None:
        """The value of a branch condition over known literal attributes, or None if unknown."""
        if isinstance(test, ast.Constant):
            return bool(test.value)
        known = self.known(test)
        if known:
            return truthy(known[0])
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self.truth(test.operand)
            return None if inner is None else not inner
        if isinstance(test, ast.BoolOp):
            values = [self.truth(v) for v in test.values]
            if isinstance(test.op, ast.And):
                if False in values:
                    return False
                return True if all(v is True for v in values) else None
            if True in values:
                return True
            return False if all(v is False for v in values) else None
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            left_known, right_known = self.known(test.left), self.known(test.comparators[0])
            if not (left_known and right_known):
                return None
            return compare(test.ops[0], left_known[0], right_known[0])
        return None

    def branch(
        self, test: ast.expr, state: frozenset[str]
    ) -> tuple[bool | None, frozenset[str], frozenset[str]]:
        """Evaluate a branch condition once for ``if`` and ``x if c else y`` alike: its literal
        verdict (None when undecided) and the state each arm starts from (reads in the test,
        plus what ``hasattr`` guards establish on that arm)."""
        state = self.expr(test, state)
        on_true, on_false = self.guards(test)
        return self.truth(test), state | on_true, state | on_false

    def guards(self, test: ast.expr) -> tuple[frozenset[str], frozenset[str]]:
        """Attributes that ``hasattr(self, "x")`` tests prove present when ``test`` is true
        and when it is false: ``if not hasattr(self, "_cache"): self._cache = ...`` followed
        by a read of ``self._cache`` needs nothing from the stub."""
        if (
            isinstance(test, ast.Call)
            and isinstance(test.func, ast.Name)
            and test.func.id == "hasattr"
            and len(test.args) == 2
            and isinstance(test.args[0], ast.Name)
            and test.args[0].id == self.self_name
        ):
            literal = _literal_name(test.args[1])
            return (frozenset({literal}), frozenset()) if literal else _NO_GUARDS
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            on_true, on_false = self.guards(test.operand)
            return on_false, on_true
        if isinstance(test, ast.BoolOp):
            parts = [self.guards(v) for v in test.values]
            if isinstance(test.op, ast.And):
                return frozenset().union(*(p[0] for p in parts)), frozenset()
            return frozenset(), frozenset().union(*(p[1] for p in parts))
        return _NO_GUARDS

    def known(self, node: ast.expr) -> tuple[object] | tuple[()]:
        """``(value,)`` when ``node`` is a literal, a known stub field, a known parameter or
        local, an attribute the test gave a known object (``metadata.num_actual_tokens`` of
        ``SimpleNamespace(num_actual_tokens=0)``), or an enum member (``Kind.DECODER``)."""
        if isinstance(node, ast.Constant):
            return (node.value,)
        if self.is_self_attr(node) and node.attr in self.consts:  # type: ignore[attr-defined]
            return (self.consts[node.attr],)  # type: ignore[attr-defined]
        if isinstance(node, ast.Name) and node.id in self.name_consts:
            return (self.name_consts[node.id],)
        sized = _sized(node)
        if sized is not None:
            owner = self.known(sized)
            return length_of(owner[0]) if owner else ()
        if isinstance(node, ast.Attribute):
            owner = self.known(node.value)
            if owner and isinstance(owner[0], Obj):
                return owner[0].field(node.attr)
            root = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and (
                root.id == self.self_name or root.id in self.params or root.id in self.locals
            ):
                return ()
            member = enum_member(node)
            return (member,) if member is not None else ()
        return ()

    def expr(self, node: ast.expr, state: frozenset[str]) -> frozenset[str]:
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            if self.is_self_attr(node):
                out = self.read_attr(node.attr, node, state)
                return out if out is not None else state
            path = self.param_path(node)
            if path is not None:
                self.rec.params.append(ParamAccess(path, self.loc(node), write=False))
                return state
            return self.expr(node.value, state)
        if isinstance(node, ast.Name):
            if self.param_path(node) is not None and isinstance(node.ctx, ast.Load):
                root = self.aliases.get(node.id, node.id)
                self.rec.params.append(ParamAccess(root, self.loc(node), write=False))
            return state
        if isinstance(node, ast.Call):
            return self.call(node, state)
        if isinstance(node, ast.Await):
            state = self.expr(node.value, state)
            if self.analyzer.detached:
                self.certain = False  # a task the test may cancel while it waits here
            return state
        if isinstance(node, ast.Lambda):
            with self.guarded():
                self.expr(node.body, state)
            return state
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            # The first iterable runs; the rest runs once per element, maybe never.
            state = self.expr(node.generators[0].iter, state)
            with self.guarded():
                for gen in node.generators[1:]:
                    self.expr(gen.iter, state)
                for gen in node.generators:
                    for cond in gen.ifs:
                        self.expr(cond, state)
                for part in (
                    getattr(node, "elt", None),
                    getattr(node, "key", None),
                    getattr(node, "value", None),
                ):
                    if part is not None:
                        self.expr(part, state)
            return state
        if isinstance(node, ast.BoolOp):
            return self.bool_op(node, state)
        if isinstance(node, ast.IfExp):
            verdict, when_true, when_false = self.branch(node.test, state)
            if verdict is True:
                return self.expr(node.body, when_true)
            if verdict is False:
                return self.expr(node.orelse, when_false)
            with self.guarded():
                return self.expr(node.body, when_true) & self.expr(node.orelse, when_false)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                state = self.expr(child, state)
            elif isinstance(child, ast.comprehension):
                state = self.expr(child.iter, state)
                for cond in child.ifs:
                    state = self.expr(cond, state)
        return state

    def bool_op(self, node: ast.BoolOp, state: frozenset[str]) -> frozenset[str]:
        """``a and b``/``a or b`` as Python runs it: an operand runs only when the ones before
        it did not decide the result, so an operand after a known-false ``and`` (known-true
        ``or``) operand is not read; only the first operand's writes are certain.  An
        operand after one that reads a field the stub lacks runs as surely as that one: the
        stub fails there already, and the condition was written with both in mind
        (``self.owns_indexer or meta.epoch != self.index_epoch``, both new)."""
        first, *rest = node.values
        since = len(self.rec.required)
        out = self.expr(first, state)
        current, previous = out, first
        is_and = isinstance(node.op, ast.And)
        was, chain = self.certain, self.chain
        for value in rest:
            verdict = self.truth(previous)
            if verdict is (not is_and):
                break
            if verdict is None and not self.placed(since):
                self.certain = False  # this operand runs on some runs only
            since = len(self.rec.required)
            current = current | self.guards(previous)[0 if is_and else 1]
            current = self.expr(value, current)
            previous = value
        self.certain, self.chain = was, chain
        return out

    def call(self, node: ast.Call, state: frozenset[str]) -> frozenset[str]:
        func = node.func
        for arg in node.args:
            state = self.expr(arg.value if isinstance(arg, ast.Starred) else arg, state)
        for kw in node.keywords:
            state = self.expr(kw.value, state)

        # getattr/setattr with a literal name on self
        if isinstance(func, ast.Name) and func.id in ("getattr", "setattr", "hasattr"):
            if (
                node.args
                and isinstance(node.args[0], ast.Name)
                and node.args[0].id == self.self_name
            ):
                literal = _literal_name(node.args[1] if len(node.args) > 1 else None)
                if literal is not None:
                    if func.id == "setattr":
                        self.rec.writes.append(
                            AttributeAccess(literal, self.loc(node), self.qualname)
                        )
                        self.consts.pop(literal, None)
                        return state | {literal}
                    if func.id == "getattr" and len(node.args) == 2:
                        out = self.read_attr(literal, node, state)
                        return out if out is not None else state
                    self.rec.reads.append(AttributeAccess(literal, self.loc(node), self.qualname))
                    return state

        # self.m(...): a method of the class, or a callable stored on the instance
        if self.is_self_attr(func):
            name = func.attr  # type: ignore[attr-defined]
            stored = self.consts.get(name)
            if name in state and isinstance(stored, Obj) and stored.raises:
                self.end_path()  # the test put a mock that raises there
                return state
            member = self.index.lookup(self.cls, name) if name not in state else None
            if member is not None and member.kind is MemberKind.METHOD:
                return self.call_method(member, node, state)
            out = self.read_attr(name, func, state)
            if member is None:
                self.rec.calls.append(CallSite(f"self.{name}", self.loc(node), CallShape.of(node)))
            return out if out is not None else state

        # super().m(...)
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Call)
            and isinstance(func.value.func, ast.Name)
            and func.value.func.id == "super"
        ):
            member = self.index.lookup(self.cls, func.attr, after=self.owner)
            if member is not None and member.kind is MemberKind.METHOD:
                return self.call_method(member, node, state, after=self.owner)
            return state

        target = self.call_target(func)
        if target is not None:
            self.rec.calls.append(CallSite(target, self.loc(node), CallShape.of(node)))
        state = self.expr(func, state)
        if self.analyzer.expect_raise and self.function_raises(func):
            self.raised = True
            self.certain = False  # the expected exception may come from this function
        if self.analyzer.patched_functions:
            keys = {target} if target is not None else set()
            if isinstance(func, ast.Name):
                keys.add(f"{self.module.name}.{func.id}")
            if keys & self.analyzer.raising:
                self.end_path()
            elif keys & self.analyzer.patched_functions and self.analyzer.expect_raise:
                self.raised = True
                self.certain = False  # the test's replacement may be what raises
        return state

    def function_raises(self, func: ast.expr) -> bool:
        """Whether ``func`` is a function of the tree whose body holds a ``raise``."""
        text = ast.unparse(func) if isinstance(func, (ast.Name, ast.Attribute)) else ""
        if not text or text.split(".")[0] in (self.self_name, *self.params):
            return False
        try:
            target = self.index.resolve(self.module, text, self.local_imports)
        except SourceError:
            return False  # only a hint for placing reads; the module's own users report it
        if not isinstance(target, FunctionRef):
            return False
        key = id(target.node)
        cache = self.analyzer._raises_cache
        if key not in cache:
            cache[key] = any(isinstance(n, ast.Raise) for n in ast.walk(target.node))
        return cache[key]

    def call_target(self, func: ast.expr) -> str | None:
        """Dotted, import-resolved name of a callee outside the instance, or None."""
        suffix: list[str] = []
        node: ast.expr = func
        while True:
            if isinstance(node, ast.Attribute):
                suffix.append(node.attr)
                node = node.value
            elif isinstance(node, ast.Call):
                suffix.append("()")
                node = node.func
            else:
                break
        if not isinstance(node, ast.Name) or node.id == self.self_name:
            return None
        name = node.id
        if name in self.params or name in self.aliases:
            return None  # a parameter's method: recorded as a parameter path
        if name in self.local_imports:
            head = self.local_imports[name].dotted
        elif name in self.locals:
            return None
        elif name in self.module.imports:
            head = self.module.imports[name].dotted
        elif (
            name in self.module.classes
            or name in self.module.functions
            or name in self.module.assigned
        ):
            head = f"{self.module.name}.{name}"
        elif name in _BUILTINS:
            return None
        else:
            head = name
        text = head
        for part in reversed(suffix):
            text += part if part == "()" else f".{part}"
        return text


def _sized(node: ast.expr | None) -> ast.expr | None:
    """``x`` of ``len(x)``, ``x.shape[0]`` or ``x.size(0)``: the expressions whose value is
    the length of ``x``."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "len"
        and len(node.args) == 1
        and not node.keywords
    ):
        return node.args[0]
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "shape"
        and isinstance(node.slice, ast.Constant)
        and node.slice.value == 0
    ):
        return node.value.value
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "size"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Constant)
        and node.args[0].value == 0
    ):
        return node.func.value
    return None


def _as_load(node: ast.expr) -> ast.expr:
    if isinstance(node, ast.Attribute):
        return ast.copy_location(ast.Attribute(node.value, node.attr, ast.Load()), node)
    if isinstance(node, ast.Name):
        return ast.copy_location(ast.Name(node.id, ast.Load()), node)
    return node


def _literal_name(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None
