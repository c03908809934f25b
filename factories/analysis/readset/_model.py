"""The values a walk produces and consumes: accesses, call sites, reports, the call context.

Everything here is a small frozen attrs value except ``Recorder``, the list of accesses one walk
appends to (frozen into tuples when a ``MethodReport`` is built).
"""

from __future__ import annotations

import attrs

from factories.analysis.binding import CallShape, Signature, Unheard
from factories.analysis.findings import Location

State = frozenset[str] | None  # None: this path cannot be reached (after return/raise)

# Besides ``self`` attribute names, a state holds marks about stand-in chains, which no
# attribute name can equal: ``=metadata.x`` (the walk wrote ``metadata.x`` on every path so
# far: what is read under it is not the stand-in's), ``?metadata.x`` (a ``hasattr`` guard
# holds: a read under it tolerates a missing name), ``!metadata.x`` (a ``getattr`` with a
# default stood for ``metadata.x``: a read through what it gave tolerates a missing name, one
# that writes the link out again does not) and ``~cfg=vllm_config.model_config`` (on
# every path so far the walk stored that chain of a stand-in in ``self.cfg``: a read of
# ``self.cfg.x`` reads the stand-in, ``alias_mark``).  ``names`` strips them.
#: The key of a walk's ``params`` (its known parameter values) that holds the ``CallShape`` of
#: the call it walks, where the function takes only ``*args``/``**kwargs`` past ``self``: what
#: it hands on unchanged (``super().__init__(*args, **kwargs)``) is that call again
#: (``CallHandlers.forwarded_shape``).  No parameter can bear the name.
CALL_SHAPE = "*call"

#: The ``params`` entry (``(parameter, items, field)`` triples) that tells a method of ``self``
#: which of its parameters holds the analysed call's result, whose list field ``items`` the
#: test asserts holds an item with ``field`` true (``CallContext.result_items``).  No
#: parameter can bear the name.
HELD_ITEMS = "*items"


def shaped(shape: CallShape) -> tuple[CallShape, tuple, tuple]:
    """A ``CALL_SHAPE`` value: the shape with its literals beside it, so that two calls
    stating different values are two walks (a ``CallShape`` compares without its literals,
    and ``params`` are part of a walk's memo key)."""
    return (shape, shape.positional_literals, shape.keyword_literals)


WRITTEN_MARK = "="
GUARDED_MARK = "?"
PROBED_MARK = "!"
ALIAS_MARK = "~"
_MARKS = (WRITTEN_MARK, GUARDED_MARK, PROBED_MARK, ALIAS_MARK)


def names(state: frozenset[str]) -> frozenset[str]:
    """The ``self`` attribute names of a state, without chain marks."""
    return frozenset(n for n in state if n[:1] not in _MARKS)


def alias_mark(field: str, chain: str) -> str:
    """The mark of ``self.<field>`` holding the stand-in chain ``chain``."""
    return f"{ALIAS_MARK}{field}={chain}"


def aliased(state: frozenset[str], field: str) -> str | None:
    """The stand-in chain ``self.<field>`` holds on every path to here, or None."""
    prefix = f"{ALIAS_MARK}{field}="
    return next((m[len(prefix) :] for m in state if m.startswith(prefix)), None)


def unaliased(state: frozenset[str], field: str) -> frozenset[str]:
    """``state`` after a store to ``self.<field>``: what it held is gone."""
    prefix = f"{ALIAS_MARK}{field}="
    if not any(m.startswith(prefix) for m in state):
        return state
    return frozenset(m for m in state if not m.startswith(prefix))


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
    # handler, an exit, a short-circuit) also makes it uncertain.  See ``provisioned``.
    blocks: tuple[int, ...] | None = attrs.field(default=None, eq=False)


@attrs.frozen(order=True)
class ParamAccess:
    """An attribute path on an entry-method parameter, e.g. ``metadata.prefill.query_start_loc``."""

    path: str
    location: Location
    write: bool


@attrs.frozen(order=True)
class ChainRead:
    """An attribute chain read from a stand-in the call is handed: ``root`` is a parameter of
    the analysed method (``metadata`` in ``metadata.prefill.query_start_loc``) or ``"self"``
    (``self.mla_dims.v_head_dim``, a nested object set on the stub).

    The chain stops where text stops knowing the object: at a call result or a subscript
    (``p.x[0].y`` is a read of ``p.x``).  It does not stop at real objects, which text cannot
    tell apart (``p.x.shape`` is the stand-in's ``x``, then a tensor's ``shape``): ``prefixes``
    lets a consumer walk the chain and stop at the first name the stand-in does not hold as a
    nested stand-in.  ``certain`` and ``blocks`` place the read as ``AttributeAccess``'s do;
    ``guarded``: the read tolerates a missing name (``getattr(p, "n", default)``, under
    ``hasattr(p, "n")``), so the stand-in may lack it.  ``optional``: how many of the first
    links of ``path`` the code allows to be missing there (``x = getattr(p, "n", None)``,
    then ``x.m``: one): a stand-in lacking one of them is not read further by this read.
    """

    root: str
    path: tuple[str, ...]
    location: Location
    certain: bool = True
    guarded: bool = False
    blocks: tuple[int, ...] | None = attrs.field(default=None, eq=False)
    optional: int = 0

    @property
    def name(self) -> str:
        """The dotted text, one key per chain (``first_by_name``, ``Walker.both_arms``)."""
        return ".".join((self.root, *self.path))

    @property
    def prefixes(self) -> tuple[tuple[str, ...], ...]:
        """``(("prefill",), ("prefill", "query_start_loc"))``: each object the chain reads
        from the root, shortest first."""
        return tuple(self.path[: n + 1] for n in range(len(self.path)))


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
    # What the call reads from the stand-ins it is handed, one read per chain (see
    # ``ChainRead``); ``ReadSetAnalyzer.param_classes`` says what their annotations name.
    chain_reads: tuple[ChainRead, ...] = ()
    # ``(root, path)`` of each chain on a stand-in that the text of the code walked reads
    # (``touched``), on any branch, and of each it hands on where no walk follows it
    # (``escapes``): ``_handovers``.  Recorded where the context asks for chains.
    touched: frozenset[tuple[str, tuple[str, ...]]] = frozenset()
    escapes: frozenset[tuple[str, tuple[str, ...]]] = frozenset()
    # ``(root, path)`` of each chain whose object the text may change (``_handovers``: a
    # store of the link ``path[-1]``, ``FILLS_ANY``, ``CALLED``).
    filled: frozenset[tuple[str, tuple[str, ...]]] = frozenset()
    # Whether the body was walked at all (not a static or class method ``analyze`` does not
    # walk, nor one the test replaced): what it was handed is followed only then.
    walked: bool = True

    @property
    def read_names(self) -> frozenset[str]:
        return frozenset(a.name for a in self.reads)

    @property
    def written_names(self) -> frozenset[str]:
        return frozenset(a.name for a in self.writes)

    def chain_reads_of(self, root: str) -> tuple[ChainRead, ...]:
        """The chain reads rooted at parameter ``root`` (or ``"self"``)."""
        return tuple(c for c in self.chain_reads if c.root == root)

    def param_paths(self, param: str, *, write: bool) -> frozenset[str]:
        prefix = param + "."
        return frozenset(
            p.path[len(prefix) :]
            for p in self.param_accesses
            if p.write is write and p.path.startswith(prefix)
        )


@attrs.frozen
class FunctionReport:
    """What a module function of the tree reads from the stand-ins a test hands it directly
    (``ReadSetAnalyzer.analyze_function``): ``MethodReport``'s chain half."""

    function: str
    signature: Signature
    location: Location
    chain_reads: tuple[ChainRead, ...]
    # As ``MethodReport``'s.
    touched: frozenset[tuple[str, tuple[str, ...]]] = frozenset()
    escapes: frozenset[tuple[str, tuple[str, ...]]] = frozenset()
    filled: frozenset[tuple[str, tuple[str, ...]]] = frozenset()
    walked: bool = True

    def chain_reads_of(self, root: str) -> tuple[ChainRead, ...]:
        return tuple(c for c in self.chain_reads if c.root == root)


@attrs.frozen(cache_hash=True)
class CallContext:
    """What the test arranged around one call, beyond the stub's fields: the knobs that change
    which paths of the call the test can reach.  Part of every memo key, so one analyzer serves
    calls of different tests in any order.

    ``replaced``: ``(class qualname, method)`` of each method the test patched (its body is
    not followed).  ``patched_functions``: the dotted name of each module function it patched
    (``vllm.x.mod.helper``, ``torch.save``).  ``raising``: those of both whose replacement
    raises on every call.  ``expect_raise``: the call sits in ``pytest.raises``, so a ``raise``
    met on an undecided branch may end the test's path there.  ``patches_raise``: what it
    expects is an exception only the test's patches raise (``StubEvent.raise_owned``): a
    ``raise`` of vLLM code, a function of the tree that holds one, or a callable the test put
    on a stand-in cannot end a path that passes the test; only a patched function or method
    can (it may raise).  ``test_exception``: what it expects is a class the test module
    defines (``StubEvent.raise_tested``), so a ``raise`` of vLLM code that builds an
    exception of a class vLLM names (``raise ValueError(...)``) is no instance of it: that
    path fails the test, and a path that passes goes the other way; a bare ``raise``, one of
    a name the function binds (a caught exception) and the test's own callables still may
    raise it.  ``detached``: the call is a
    coroutine the test hands to ``asyncio.create_task`` and may cancel at any ``await``, so what
    follows the first one is not certain.  ``standins``: the parameters of the call the test
    hands a stand-in (a ``SimpleNamespace``): chains on them are also followed into the module
    functions of the tree they are passed to (``ChainRead``), a walk a call without stand-ins
    does not pay for.  ``nested``: the fields of ``self`` the test set to a namespace
    (``builder.vllm_config = SimpleNamespace(...)``), followed into the functions they are
    passed to as ``standins`` are.  ``chains``: record attribute chains at all (on the
    call's parameters and on nested objects of ``self``); what a stand-in audit reads, and
    nothing the stub audit needs, so it pays nothing for them while it is off.
    ``stated_locals``: a local bound to a field of an object the test built keeps the value the
    test stated (``n = metadata.num_prefills``, also unpacked: ``a, n = x.f,
    metadata.num_prefills``), so it decides the branches it guards. The stand-in audit asks for
    it where a namespace is made ``self`` (its calls state their arguments, ``Meeting.shape``),
    for a call it hands namespaces (``standin_audit.stated_shape``) and for a stub's call that
    meets them; the stub audit does not yet, since it would move the findings on the releases
    that its output is pinned to. Where it is asked, the walk follows what such values decide
    beyond a branch's own condition: a local bound to a condition over them holds its verdict,
    ``isinstance`` of a value the test built is decided (an array torch or numpy builds is an
    instance of no builtin type; a literal of no plain class of the tree), a local bound to a
    literal or to a known field of ``self`` on the straight line keeps it (as a field of
    ``self`` set there does, and a call of a predicate of the tree whose arguments decide it:
    ``Decisions.call_value``), a loop over items
    the test states runs its body, a loop forgets the locals it rebinds, and a nested def's
    ``return`` ends only the def.
    ``returns``: ``(value,)`` where the test asserts that the call returns that value
    (``assert split(...) == 1536``, ``n = split(...)`` then ``assert n == 2 * block``:
    ``factories.analysis.asserted``): an undecided ``if`` whose arm is only ``return K``, with
    ``K`` known and not that value, takes its other arm, as the test passes.  The stand-in
    audit states it for a namespace made ``self`` and for a function handed namespaces.
    ``result_fields``: ``(field, value)`` of each field of the call's result the test
    asserts (``metadata = build(...)``, then ``assert metadata.has_persistent_metadata``):
    where every ``return`` of the analysed call gives the one object a dataclass call builds,
    handing that field a local bound only to plain literals (``_returned``), the local held
    that value when the call ran, as the test passes, so it decides what the call's other
    arguments compute from it (``has_persistent_metadata and self.n == 1``).
    ``real_self``: ``self`` is the real object the call builds (a constructor a test hands a
    stand-in, ``Cls(ns)``), not a stub: what it reads of itself is never missing (nor a field
    the test lacks, which would place the reads around it, ``Walker.both_arms``).
    ``bare_self``: ``self`` is a namespace the test made ``self`` (``Cls.m(ns)``), not an
    instance of the class: it holds only the fields the test gave it and what the walk
    writes, none of the class's members, so reading a default, a property or a method the
    namespace lacks (``self.m()``) fails there, and none of them decides a branch.  What a
    missing method or property would read is walked as it runs once the test gives the
    namespace one (``as_given``): notes.
    ``whole``: ``(chain, fields)`` of each namespace the call reads whose fields are all
    it holds (``metadata``, ``self.cfg.spec``; ``standin_audit.whole_chains``): a chain
    read that takes a link it lacks fails there, so a condition that reads one places
    the reads around it as one reading a field the stub lacks does (``Walker.placed``).
    """

    replaced: frozenset[tuple[str, str]] = frozenset()
    patched_functions: frozenset[str] = frozenset()
    raising: frozenset[tuple[str, str] | str] = frozenset()
    expect_raise: bool = False
    patches_raise: bool = False
    test_exception: bool = False
    detached: bool = False
    standins: frozenset[str] = frozenset()
    nested: frozenset[str] = frozenset()
    chains: bool = False
    stated_locals: bool = False
    returns: tuple[object] | tuple[()] = ()
    result_fields: tuple[tuple[str, object], ...] = ()
    # ``(items, field)``: the test asserts, of the call's result, that an item of its list
    # field ``items`` has ``field`` true (``meta = build(...)``, then ``req =
    # meta.requests[0]; assert req.can_save``).  Where the analysed call returns the one
    # object a local of it is bound to and hands that local to a method of ``self``, and
    # nothing from there to the ``return`` can change which items the list holds or their
    # ``field`` (``_returned.keeps_items``), that method's parameter holds such a list while
    # it runs (``HELD_ITEMS``): a list it filters out of it by that field is not empty
    # (``StatementHandlers.ruled_out_empty``).
    result_items: tuple[tuple[str, str], ...] = ()
    real_self: bool = False
    bare_self: bool = False
    # ``(function key, root, items)``: the test replaced the function (a key of
    # ``patched_functions``) with one returning a container of stand-ins, at least ``items``
    # of them; a loop over its items (``.items()``, ``.values()``) binds each to ``root``.
    # ``items`` -1 (``extraction.ITSELF``): it returns the stand-in itself, which a call of
    # it (through the module's own name of it) stands for, as ``root``.
    returned: frozenset[tuple[str, str, int]] = frozenset()
    # ``(module, name)``: the test set the module's global ``name`` to a stand-in; a read of
    # the global in that module's code is a chain on the root ``installed_root(name)``.
    installed: frozenset[tuple[str, str]] = frozenset()
    # ``(class qualname, method, field, root)``: the test replaced the method with a function
    # that sets ``field`` of its object to a stand-in; past a call of it, ``self.<field>`` is
    # a chain on ``root`` (``ReadSetAnalyzer.set_by_replacement``).
    replaced_sets: frozenset[tuple[str, str, str, str]] = frozenset()
    # ``(function key, unheard)``: the test replaced the function (a key of
    # ``patched_functions``) with one that never reads some arguments a call hands it
    # (``Unheard``); a lambda handed there is never called, so its body is not walked
    # (``_calls.unheard_lambda``).
    unheard: frozenset[tuple[str, Unheard]] = frozenset()
    whole: tuple[tuple[str, frozenset[str]], ...] = ()
    # The chains at which the call's stand-ins hold a tuple the test wrote out
    # (``self.pair``, ``self.reqs.[]``): a position read there is that item
    # (``_chains.slotted``), not any element.
    tuples: frozenset[str] = frozenset()
    # ``(field, name)``: the test asserts, right after the call, the field ``name`` of a
    # namespace it set on ``self.<field>`` (or nested in it), which lacks it and which nothing
    # else the test runs gives it (``standin_audit.asserted_stores``): the test passes only
    # where the call stored it, so an undecided ``if`` of the call's own body one arm of which
    # is only a bare ``return``, with nothing before it that could have stored the name, takes
    # its other arm (``StatementHandlers.ruled_out_bare_return``).
    asserted_stores: frozenset[tuple[str, str]] = frozenset()
    # ``(line, column, arm)``: an ``if`` of the analysed call's own body whose arm (True:
    # its body) alone can run a mock the test put on the stub and asserts, after the call,
    # was called (``called_mocks``): the test passes only where that arm ran, so it is
    # the test's path, as a branch the test's values decide.
    called_arms: frozenset[tuple[int, int, bool]] = frozenset()
    # ``(chain, class qualname, fields)``: the call's namespaces hold, at ``chain``, the one
    # ``object.__new__`` stub of that class of the tree the test put there
    # (``SimpleNamespace(fused_experts=stub)``), on which the test sets ``fields``: a
    # property read on the chain, or a method called on it, that is none of those fields
    # (``monkeypatch.setattr(stub, "m", MagicMock())`` replaces the method) runs that
    # class's code on the stub, walked as a function whose ``self`` is the chain
    # (``ChainHandlers.typed_member``), so what it reads of the namespaces the test set on
    # the stub's fields is judged as the call's own reads.
    typed: frozenset[tuple[str, str, frozenset[str]]] = frozenset()


@attrs.define
class Recorder:
    """What one walk saw, in order; a callee's walk is appended with ``extend``."""

    reads: list[AttributeAccess] = attrs.field(factory=list)
    required: list[AttributeAccess] = attrs.field(factory=list)
    writes: list[AttributeAccess] = attrs.field(factory=list)
    params: list[ParamAccess] = attrs.field(factory=list)
    calls: list[CallSite] = attrs.field(factory=list)
    chains: list[ChainRead] = attrs.field(factory=list)
    # ``_handovers``: the stand-in chains the text reads, and those it hands on unfollowed
    # (sets: a callee met on many paths adds each once).
    touched: set[tuple[str, tuple[str, ...]]] = attrs.field(factory=set)
    escapes: set[tuple[str, tuple[str, ...]]] = attrs.field(factory=set)
    # ``_handovers``: the chains whose object the text may change (a store, a method call).
    filled: set[tuple[str, tuple[str, ...]]] = attrs.field(factory=set)
    # The arms of undecided ``if`` statements whose condition reads a field or link the
    # test's object lacks: no block the test prepared (``provisioned``), the test having
    # been written before the guard or without the field it tests.
    unprepared: list[int] = attrs.field(factory=list)

    def lengths(self) -> tuple[int, int, int]:
        """How many accesses with a placement (reads, required, chains) it holds so far."""
        return len(self.reads), len(self.required), len(self.chains)

    def extend(self, other: Recorder, prefix: tuple[int, ...] | None = ()) -> None:
        """Add a callee's accesses, its reads' blocks placed after the caller's ``prefix``."""
        for field in attrs.fields(Recorder):
            items = getattr(other, field.name)
            if field.name in ("touched", "escapes", "filled"):
                getattr(self, field.name).update(items)
                continue
            if field.name in ("reads", "required", "chains") and prefix != ():
                items = [placed_after(a, prefix) for a in items]
            getattr(self, field.name).extend(items)


@attrs.frozen
class Walked:
    """What walking one method body found: its accesses (never changed once walked: a memo
    entry), the state when it returns (None: every path raises), whether it met a ``raise``
    (there or in a method it calls), and what a real object's fields then hold."""

    recorder: Recorder
    state: State
    raised: bool = False
    # The known values of the fields of a real object (``CallContext.real_self``) when the
    # call returns, where it returns only by falling off its end: what a method it calls
    # stores (``self.cfg = cfg`` in a base ``__init__``) is known to the caller after it.
    stored: tuple[tuple[str, object], ...] = ()
    # Nothing was walked: the method is one the test replaced, or one already being walked
    # above, or past ``MAX_CALL_DEPTH`` (what is handed to it is not followed there).
    skipped: bool = False
    # ``(value,)``: what the call returns on every path, where the walk knows it (each
    # ``return`` gives the same known value; ``Walker.returns``).
    value: tuple[object] | tuple[()] = ()
    # The stand-in chain every ``return`` gives (``return self.caches[i]``:
    # ``self.caches.[]``), where stand-in chains are followed: what a local bound to the
    # call's result stands for in the caller (``cache = self.cache(i)``).
    chain: str | None = None


def placed_after(
    access: AttributeAccess | ChainRead, prefix: tuple[int, ...] | None
) -> AttributeAccess | ChainRead:
    """``access`` as seen from a caller whose call sits in the blocks ``prefix``."""
    if access.certain and not prefix:
        return access
    blocks = None if prefix is None or access.blocks is None else prefix + access.blocks
    return attrs.evolve(access, blocks=blocks)


def meet(a: State, b: State) -> State:
    """Where two paths join: what both wrote (an unreachable path adds no constraint)."""
    if a is None:
        return b
    if b is None:
        return a
    return a & b
