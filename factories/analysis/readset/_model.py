"""The values a walk produces and consumes: accesses, call sites, reports, the call context.

Everything here is a small frozen attrs value except ``Recorder``, the list of accesses one walk
appends to (frozen into tuples when a ``MethodReport`` is built).
"""

from __future__ import annotations

import attrs

from factories.analysis.binding import CallShape, Signature
from factories.analysis.findings import Location

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
    # handler, an exit, a short-circuit) also makes it uncertain.  See ``provisioned``.
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


@attrs.frozen(cache_hash=True)
class CallContext:
    """What the test arranged around one call, beyond the stub's fields: the knobs that change
    which paths of the call the test can reach.  Part of every memo key, so one analyzer serves
    calls of different tests in any order.

    ``replaced``: ``(class qualname, method)`` of each method the test patched (its body is
    not followed).  ``patched_functions``: the dotted name of each module function it patched
    (``vllm.x.mod.helper``, ``torch.save``).  ``raising``: those of both whose replacement
    raises on every call.  ``expect_raise``: the call sits in ``pytest.raises``, so a ``raise``
    met on an undecided branch may end the test's path there.  ``detached``: the call is a
    coroutine the test hands to ``asyncio.create_task`` and may cancel at any ``await``, so what
    follows the first one is not certain.
    """

    replaced: frozenset[tuple[str, str]] = frozenset()
    patched_functions: frozenset[str] = frozenset()
    raising: frozenset[tuple[str, str] | str] = frozenset()
    expect_raise: bool = False
    detached: bool = False


@attrs.define
class Recorder:
    """What one walk saw, in order; a callee's walk is appended with ``extend``."""

    reads: list[AttributeAccess] = attrs.field(factory=list)
    required: list[AttributeAccess] = attrs.field(factory=list)
    writes: list[AttributeAccess] = attrs.field(factory=list)
    params: list[ParamAccess] = attrs.field(factory=list)
    calls: list[CallSite] = attrs.field(factory=list)

    def extend(self, other: Recorder, prefix: tuple[int, ...] | None = ()) -> None:
        """Add a callee's accesses, its reads' blocks placed after the caller's ``prefix``."""
        for field in attrs.fields(Recorder):
            items = getattr(other, field.name)
            if field.name in ("reads", "required") and prefix != ():
                items = [placed_after(a, prefix) for a in items]
            getattr(self, field.name).extend(items)


@attrs.frozen
class Walked:
    """What walking one method body found: its accesses (never changed once walked: a memo
    entry), the state when it returns (None: every path raises), and whether it met a
    ``raise`` (there or in a method it calls)."""

    recorder: Recorder
    state: State
    raised: bool = False


def placed_after(access: AttributeAccess, prefix: tuple[int, ...] | None) -> AttributeAccess:
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
