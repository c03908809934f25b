"""From what the audit saw to what it reports: one finding per drift, in a stable order.

The finding builders shared by the audit's parts (a call's finding, the "did you mean" tail),
the findings for what could not be audited (an unresolved class, an unreadable file or vLLM
module), stale fields judged over every use of a creation site, and how findings met on
several tests' paths are merged, deduplicated and ordered.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs

from factories.analysis.classes import ClassInfo, External, Unknown
from factories.analysis.extraction import Stub, StubEvent
from factories.analysis.findings import Finding, FindingKind, Location
from factories.analysis.source_tree import SourceTree
from factories.errors import SourceError


def did_you_mean(close: Sequence[str]) -> str:
    """The message's suggestion tail: the names difflib found close, or nothing."""
    return f"; did you mean {', '.join(close)}?" if close else ""


def at_call(cls: ClassInfo, event: StubEvent, **fields: object) -> Finding:
    """A finding about the stub's call ``event`` on ``cls``: the class, the method and the
    stub side's location are the call's; ``fields`` say what is wrong with it."""
    return Finding(
        class_name=cls.name,
        method=event.name,
        stub_location=event.location,
        tests=(event.test,) if event.test else (),
        **fields,  # type: ignore[arg-type]
    )


def merged_tests(kept: Finding, again: Finding) -> Finding:
    """One finding met again on another test's path: it names both tests.  A call outside
    any test function names none, and then neither does the finding (not attributed)."""
    tests = tuple(dict.fromkeys(kept.tests + again.tests)) if kept.tests and again.tests else ()
    return kept if tests == kept.tests else attrs.evolve(kept, tests=tests)


@attrs.frozen
class FieldUsage:
    """What one use of a stub sets (before its last call) and what the analysed calls read."""

    class_name: str
    methods: tuple[str, ...]
    set_at: dict[str, Location] = attrs.field(eq=False)
    reads: frozenset[str]
    eligible: bool

    @classmethod
    def unknown(cls, stub: Stub) -> FieldUsage:
        """A use that could not be analysed: it may read anything the site sets."""
        return cls(stub.class_expr, (), {}, frozenset(), eligible=False)


#: Which meeting of a namespace a walk stands for: the handed call's file, line, callee as
#: written, callee dotted and test (``standin_audit.handed_key``).
MeetingKey = tuple[str, int, str, str, "str | None"]


@attrs.frozen
class NamespaceSite:
    """A namespace stand-in as the test uses it (``audit-stubs --standins``), for its stale
    fields: where it is built (``site``), the fields it is given (``set_at``, each where first
    set), those the test itself reads, the meetings with vLLM code whose walks must all be
    seen (``expects``; a nested namespace's include its owners'), and ``eligible``: no other
    use (one no walk follows, a use the test's text does not settle) may read its fields."""

    site: Location
    kind: str
    set_at: tuple[tuple[str, Location], ...]
    test_reads: frozenset[str]
    expects: frozenset[MeetingKey]
    eligible: bool
    # The creation call's column (``StandIn.column``): one line may build several.
    column: int = 0
    # Fields whose stale-field warning an ``# audit-stubs: ignore`` comment silences, on the
    # line that builds the namespace or the one that sets the field.
    silenced: frozenset[str] = frozenset()


@attrs.frozen
class NamespaceUse:
    """What one walk of vLLM code read of a namespace built at ``site`` (its fields, on any
    branch) at the meeting ``key``; ``eligible``: the walk ran and handed the namespace on
    nowhere it could not follow (``readset._handovers``).  ``callee`` names the code."""

    site: Location
    key: MeetingKey
    reads: frozenset[str]
    eligible: bool
    callee: str
    column: int = 0


def stale_namespace_fields(
    sites: Iterable[NamespaceSite], uses: Iterable[NamespaceUse]
) -> Iterable[tuple[Finding, bool]]:
    """Fields the test gives a namespace that nothing reads: neither the vLLM code of any
    of its meetings, over every use of its creation site in the run, nor the test.  Only
    where every use of the site is eligible and every meeting it expects was walked: a
    meeting not walked, or a namespace handed on where no walk follows it, may read any
    field.  Each finding with whether a comment silences it (``NamespaceSite.silenced``)."""
    by_site: dict[tuple[Location, int], list[NamespaceSite]] = {}
    for site in sites:
        by_site.setdefault((site.site, site.column), []).append(site)
    walked: dict[tuple[Location, int], list[NamespaceUse]] = {}
    for use in uses:
        walked.setdefault((use.site, use.column), []).append(use)
    for (where, column), known in sorted(by_site.items()):
        met = walked.get((where, column), [])
        expects = frozenset().union(*(k.expects for k in known))
        if not expects or not all(k.eligible for k in known):
            continue
        if not all(u.eligible for u in met) or not expects <= {u.key for u in met}:
            continue
        read = frozenset().union(*(k.test_reads for k in known), *(u.reads for u in met))
        callees = sorted({u.callee.rpartition(".")[2] for u in met})
        set_at: dict[str, Location] = {}
        for site in known:
            for name, location in site.set_at:
                set_at.setdefault(name, location)
        kind = known[0].kind
        silenced = frozenset().union(*(k.silenced for k in known))
        for name, location in sorted(set_at.items()):
            if name in read:
                continue
            finding = Finding(
                kind=FindingKind.STALE_FIELD,
                class_name=kind,
                method=",".join(callees),
                name=name,
                message=f"the {kind} the test builds at {where} sets {name!r} but neither "
                f"the vLLM code it is handed to ({', '.join(callees)}) nor the test reads it",
                vllm_location=None,
                stub_location=location,
                stub_side=f"{kind}(..., {name}=...)",
                vllm_side="never read",
            )
            yield finding, name in silenced


def unresolved(stub: Stub, target: object) -> Finding:
    """A stub not audited because its class is not a class of the tree, with the reason."""
    if isinstance(target, External):
        reason = f"outside the vLLM source: {target.dotted}"
    elif isinstance(target, Unknown):
        reason = target.reason
    elif target is None:
        reason = "a dynamic expression, or a class defined inside a function"
    else:
        reason = "not a class"
    return Finding(
        kind=FindingKind.UNRESOLVED_STUB,
        class_name=stub.class_expr,
        method="<class>",
        name=stub.class_expr,
        message=f"object.__new__({stub.class_expr}) not audited: {reason}",
        vllm_location=None,
        stub_location=stub.location,
        stub_side=f"object.__new__({stub.class_expr})",
        vllm_side=reason,
    )


def unreadable_input(exc: SourceError) -> Finding:
    """A test file (or folder) given to the audit that could not be read or parsed."""
    return Finding(
        kind=FindingKind.UNREADABLE_FILE,
        class_name="<file>",
        method="<read>",
        name=str(exc.path),
        message=f"{exc.reason} (not audited)",
        vllm_location=None,
        stub_location=Location(str(exc.path), exc.line),
        stub_side="not audited",
        vllm_side="",
    )


def unreadable_module(tree: SourceTree, exc: SourceError, users: list[Stub]) -> Finding:
    """A vLLM module that does not parse, reported once with the first stub that needed it."""
    module = tree.module_name_for(exc.path)
    first = min(users, key=lambda stub: (stub.location.path, stub.location.line))
    more = f" and {len(users) - 1} more" if len(users) > 1 else ""
    return Finding(
        kind=FindingKind.UNREADABLE_FILE,
        class_name="<module>",
        method="<read>",
        name=module,
        message=f"vLLM module {module} cannot be read ({exc.reason}); the stubs that need it "
        f"are not audited",
        vllm_location=Location(str(exc.path), exc.line),
        stub_location=first.location,
        stub_side=f"object.__new__({first.class_expr}){more} not audited",
        vllm_side=exc.reason,
    )


def report_order(finding: Finding) -> tuple:
    """Where the report points (the stub, else the vLLM code), by path then line *number*,
    so that line 6 comes before line 10013."""
    where = finding.stub_location or finding.vllm_location
    return (
        (where.path, where.line) if where else ("", 0),
        finding.kind.value,
        finding.name,
    )


def stale_fields(usages: dict[Location, list[FieldUsage]]) -> Iterable[Finding]:
    """Fields set at a creation site that no use of that site reads.

    A helper that builds one stub for several tests sets the union of what those tests need,
    so a field is stale only when *every* use of the stub leaves it unread.
    """
    for uses in usages.values():
        if not uses or not all(u.eligible for u in uses):
            continue
        read_anywhere = frozenset().union(*(u.reads for u in uses))
        methods = sorted({m for u in uses for m in u.methods})
        set_at: dict[str, Location] = {}
        for use in uses:
            for name, location in use.set_at.items():
                set_at.setdefault(name, location)
        for name, location in sorted(set_at.items()):
            if name in read_anywhere:
                continue
            yield Finding(
                kind=FindingKind.STALE_FIELD,
                class_name=uses[0].class_name,
                method=",".join(methods),
                name=name,
                message=f"stub sets {name!r} but no analysed method of "
                f"{uses[0].class_name} ({', '.join(methods)}) reads it any more",
                vllm_location=None,
                stub_location=location,
                stub_side=f"sets {name}",
                vllm_side="never read",
            )


def dedup_key(finding: Finding) -> tuple:
    return (
        finding.kind,
        finding.class_name,
        finding.method,
        finding.name,
        finding.vllm_location,
        finding.stub_location,
    )
