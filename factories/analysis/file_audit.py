"""What auditing one test file yields before the run's findings are merged, as plain values.

The audit of a tree is (1) per test file: its stubs judged one by one, its stand-ins' own
findings, and (2) over the run: findings met on several tests merged, stale fields judged over
every use of a creation site, the allowlist, ``--since``, the order, the summary.  Part (1) is
the expensive one and depends on the file and the modules it consulted only, so it is what the
result cache (``result_cache``) stores; part (2) runs on every audit, from these values, so a
report built from cached values is the one a cold run prints.

``StubRecord`` is one stub's verdict (``StubAuditor.audit_stubs``' loop body, kept), and
``FileAudit`` one file's.  Both encode to JSON and back exactly (``to_json``/``from_json``).
"""

from __future__ import annotations

from pathlib import Path

import attrs

from factories.analysis.baseline import ALL_KINDS
from factories.analysis.findings import Finding, FindingKind, Location
from factories.analysis.report import FieldUsage, NamespaceSite, NamespaceUse
from factories.errors import SourceError

#: Stand-ins by kind (``extraction.census``): ``(the kind's value, how many the tests build,
#: how many of those meet vLLM code)``, in ``StandInKind``'s order, the kinds found only.
Census = tuple[tuple[str, int, int], ...]


@attrs.frozen
class StubSite:
    """Where a stub is built and how findings spell its class: all ``unreadable_module``
    needs of a stub that a broken vLLM module stopped."""

    location: Location
    class_expr: str


@attrs.frozen
class StubRecord:
    """One stub's verdict.  ``state``: ``resolved`` (its class is in the tree; ``usage`` says
    what it sets and what was read), ``unresolved``, or ``blocked`` (a vLLM module it needs
    cannot be read: ``blocked_by`` is that error, ``findings`` empty).  ``findings`` are those
    left after the inline ``# audit-stubs: ignore`` comments, ``suppressed`` how many those
    silenced; ``silenced``: the kinds the comment on its creation line silences (None: no
    comment), which the run's stale-field verdict for the site uses."""

    site: StubSite
    silenced: frozenset[str] | None
    state: str
    has_calls: bool = False
    findings: tuple[Finding, ...] = ()
    suppressed: int = 0
    usage: FieldUsage | None = None
    blocked_by: SourceError | None = attrs.field(default=None, eq=False)

    def to_json(self) -> dict:
        error = self.blocked_by
        return {
            "at": _location(self.site.location),
            "class": self.site.class_expr,
            "silenced": None if self.silenced is None else sorted(self.silenced),
            "state": self.state,
            "calls": self.has_calls,
            "findings": [_finding(f) for f in self.findings],
            "suppressed": self.suppressed,
            "usage": None if self.usage is None else _usage(self.usage),
            "blocked_by": None if error is None else [str(error.path), error.line, error.reason],
        }

    @classmethod
    def from_json(cls, data: dict) -> StubRecord:
        error = data["blocked_by"]
        return cls(
            site=StubSite(_location_of(data["at"]), data["class"]),
            silenced=_silenced_of(data["silenced"]),
            state=data["state"],
            has_calls=data["calls"],
            findings=tuple(_finding_of(f) for f in data["findings"]),
            suppressed=data["suppressed"],
            usage=None if data["usage"] is None else _usage_of(data["usage"]),
            blocked_by=None if error is None else SourceError(Path(error[0]), error[1], error[2]),
        )


@attrs.frozen
class FileAudit:
    """One test file's part of an audit.  ``stubs``: how many stubs it holds (a file with
    one counts in the summary); ``records``: their verdicts in extraction order; ``selves``
    and ``handed``: its stand-ins' own findings (made ``self``; handed to other code), and
    ``has_standins`` whether any of them meets vLLM code; ``exports``: the names of helpers
    returning a stub that other test files may import; ``dependencies``: the vLLM modules its
    stubs depend on (``StubAuditor.dependencies``, the source-change trigger's index);
    ``consulted``: every module its audit asked the tree for; ``census``: with
    ``--standins``, the stand-ins it builds by kind (the main job's summary counts them)."""

    stubs: int = 0
    records: tuple[StubRecord, ...] = ()
    selves: tuple[Finding, ...] = ()
    handed: tuple[Finding, ...] = ()
    has_standins: bool = False
    exports: tuple[str, ...] = ()
    dependencies: frozenset[str] = frozenset()
    consulted: frozenset[str] = frozenset()
    # ``--standins``: its namespaces as the test uses them, and what the walks of the calls
    # it hands them to read of them (their stale fields are judged over the run).
    sites: tuple[NamespaceSite, ...] = ()
    uses: tuple[NamespaceUse, ...] = ()
    census: Census = ()

    def to_json(self) -> dict:
        return {
            "stubs": self.stubs,
            "records": [r.to_json() for r in self.records],
            "selves": [_finding(f) for f in self.selves],
            "handed": [_finding(f) for f in self.handed],
            "sites": [_site(site) for site in self.sites],
            "uses": [_use(use) for use in self.uses],
            "has_standins": self.has_standins,
            "exports": list(self.exports),
            "dependencies": sorted(self.dependencies),
            "consulted": sorted(self.consulted),
            "census": [list(kind) for kind in self.census],
        }

    @classmethod
    def from_json(cls, data: dict) -> FileAudit:
        return cls(
            stubs=data["stubs"],
            records=tuple(StubRecord.from_json(r) for r in data["records"]),
            selves=tuple(_finding_of(f) for f in data["selves"]),
            handed=tuple(_finding_of(f) for f in data["handed"]),
            sites=tuple(_site_of(site) for site in data["sites"]),
            uses=tuple(_use_of(use) for use in data["uses"]),
            has_standins=data["has_standins"],
            exports=tuple(data["exports"]),
            dependencies=frozenset(data["dependencies"]),
            consulted=frozenset(data["consulted"]),
            census=tuple((kind, int(n), int(meeting)) for kind, n, meeting in data["census"]),
        )


def _silenced_of(data: list | None) -> frozenset[str] | None:
    """The kinds as ``suppressed_kinds`` returns them: a bare ``ignore`` is the one
    ``ALL_KINDS`` object (``is_suppressed`` tests it by identity)."""
    if data is None:
        return None
    kinds = frozenset(data)
    return ALL_KINDS if kinds == ALL_KINDS else kinds


def _location(where: Location | None) -> list | None:
    return None if where is None else [where.path, where.line]


def _location_of(data: list | None) -> Location | None:
    return None if data is None else Location(data[0], data[1])


def _finding(finding: Finding) -> list:
    return [
        finding.kind.value,
        finding.class_name,
        finding.method,
        finding.name,
        finding.message,
        _location(finding.vllm_location),
        _location(finding.stub_location),
        finding.stub_side,
        finding.vllm_side,
        list(finding.tests),
    ]


def _finding_of(data: list) -> Finding:
    kind, cls, method, name, message, vllm, stub, stub_side, vllm_side, tests = data
    return Finding(
        kind=FindingKind(kind),
        class_name=cls,
        method=method,
        name=name,
        message=message,
        vllm_location=_location_of(vllm),
        stub_location=_location_of(stub),
        stub_side=stub_side,
        vllm_side=vllm_side,
        tests=tuple(tests),
    )


def _usage(usage: FieldUsage) -> dict:
    return {
        "class": usage.class_name,
        "methods": list(usage.methods),
        "set_at": [[name, *_location(where)] for name, where in usage.set_at.items()],
        "reads": sorted(usage.reads),
        "eligible": usage.eligible,
    }


def _usage_of(data: dict) -> FieldUsage:
    return FieldUsage(
        class_name=data["class"],
        methods=tuple(data["methods"]),
        set_at={name: Location(path, line) for name, path, line in data["set_at"]},
        reads=frozenset(data["reads"]),
        eligible=data["eligible"],
    )


def _key_of(data: list) -> tuple:
    path, line, text, dotted, test = data
    return (path, line, text, dotted, test)


def _site(site: NamespaceSite) -> dict:
    return {
        "at": _location(site.site),
        "kind": site.kind,
        "set_at": [[name, *_location(where)] for name, where in site.set_at],  # type: ignore[misc]
        "test_reads": sorted(site.test_reads),
        "expects": sorted((list(key) for key in site.expects), key=repr),
        "eligible": site.eligible,
        "silenced": sorted(site.silenced),
        "column": site.column,
    }


def _site_of(data: dict) -> NamespaceSite:
    return NamespaceSite(
        site=_location_of(data["at"]),  # type: ignore[arg-type]
        kind=data["kind"],
        set_at=tuple((name, Location(path, line)) for name, path, line in data["set_at"]),
        test_reads=frozenset(data["test_reads"]),
        expects=frozenset(_key_of(key) for key in data["expects"]),
        eligible=data["eligible"],
        silenced=frozenset(data["silenced"]),
        column=data["column"],
    )


def _use(use: NamespaceUse) -> dict:
    return {
        "at": _location(use.site),
        "key": list(use.key),
        "reads": sorted(use.reads),
        "eligible": use.eligible,
        "callee": use.callee,
        "column": use.column,
    }


def _use_of(data: dict) -> NamespaceUse:
    return NamespaceUse(
        site=_location_of(data["at"]),  # type: ignore[arg-type]
        key=_key_of(data["key"]),  # type: ignore[arg-type]
        reads=frozenset(data["reads"]),
        eligible=data["eligible"],
        callee=data["callee"],
        column=data["column"],
    )
