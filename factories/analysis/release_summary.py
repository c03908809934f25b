"""The audit of a whole ``tests/`` tree, told as counts a newcomer can read.

``audit-stubs --release-summary`` (the README's main job) ends by auditing a vLLM release's own
tests against that release's ``vllm/``.  Thousands of findings lines would tell a newcomer
nothing; what the run found does: the stand-ins by kind (``object.__new__`` stubs, namespaces,
spec'd mocks), how many of them reach vLLM code, and the findings by level and by kind.

The tree is audited twice with one ``StubAuditor`` (the parsed modules are shared): once as the
stub audit runs in pre-commit, once with the experimental stand-in audit on (``--standins``).
The second run's findings that the first lacks are what the stand-in half adds, so its numbers
are never mixed into the stub audit's.  Each file's audit in the second run counts the
stand-ins its extraction found (``extraction.census``, a value of the file's audit like its
findings, so worker processes and the result cache serve the summary as they serve the audit);
the namespaces and the spec'd mocks are audited.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from factories.analysis.audit import AuditResult, StubAuditor
from factories.analysis.extraction import StandInKind
from factories.analysis.findings import Finding, Severity
from factories.analysis.report import dedup_key
from factories.analysis.standin_audit import AUDITED_KINDS

if TYPE_CHECKING:
    from factories.analysis.result_cache import ResultCache

Progress = Callable[[str], None]


@attrs.frozen
class KindCount:
    """Stand-ins of one kind: how many the tests build (nested ones too), and how many of
    those belong to a tree that meets vLLM code (one of it is made ``self``, passed as an
    argument, or set on an ``object.__new__`` stub), as ``tools/count_standins.py`` counts."""

    kind: StandInKind
    found: int
    meeting_code: int


@attrs.frozen
class FindingCounts:
    """Findings by level (error, warning, note: the order they matter in) and, per level,
    by kind."""

    by_level: tuple[tuple[Severity, tuple[tuple[str, int], ...]], ...]

    @classmethod
    def of(cls, findings: Iterable[Finding]) -> FindingCounts:
        counts: dict[Severity, Counter] = {level: Counter() for level in Severity}
        for finding in findings:
            counts[finding.severity][finding.kind.value] += 1
        return cls(tuple((level, tuple(sorted(counts[level].items()))) for level in Severity))


@attrs.frozen
class TreeSummary:
    """What auditing one ``tests/`` tree found; ``seconds``: the wall time of both runs."""

    tests: Path
    vllm_src: Path
    files: int
    files_with_stubs: int
    stubs: int
    stubs_resolved: int
    stubs_unresolved: int
    stubs_audited: int
    standins: tuple[KindCount, ...]
    stub_findings: FindingCounts
    standin_findings: FindingCounts
    # Findings of the stub audit the stand-in run no longer reports (a namespace's literal
    # field decided a branch): shown so that the two parts add up.
    standin_dropped: int
    seconds: float


def summarize_tree(
    vllm_src: Path,
    tests: Path,
    progress: Progress | None = None,
    clock=None,
    cache: ResultCache | None = None,
    jobs: int = 1,
) -> TreeSummary:
    """Audit ``tests`` against ``vllm_src``: the stubs, then the stand-ins (experimental).
    ``clock``: where the run's seconds are read (``time.perf_counter``); ``cache`` and
    ``jobs``: the result cache and the worker processes, as ``StubAuditor`` takes them (the
    census travels in each file's audit, so workers and cache hits count what a single
    process does)."""
    clock = clock or time.perf_counter
    start = clock()
    auditor = StubAuditor(vllm_src, cache=cache, jobs=jobs)
    say = progress or (lambda line: None)
    say(f"[1/2] object.__new__ stubs in {tests}")
    plain = auditor.audit_paths([tests], progress=progress)
    say("[2/2] the same files with the stand-ins (experimental)")
    with_standins = auditor.audit_paths([tests], progress=progress, standins=True)
    return _summary(tests, vllm_src, plain, with_standins, clock() - start)


def _summary(
    tests: Path,
    vllm_src: Path,
    plain: AuditResult,
    with_standins: AuditResult,
    seconds: float,
) -> TreeSummary:
    before = {dedup_key(f) for f in plain.findings}
    after = {dedup_key(f) for f in with_standins.findings}
    added = [f for f in with_standins.findings if dedup_key(f) not in before]
    counts = {kind: (n, meeting) for kind, n, meeting in with_standins.summary.census}
    kinds = tuple(
        KindCount(kind, *counts.get(kind.value, (0, 0)))
        for kind in StandInKind
        if kind not in (StandInKind.OBJECT_NEW, StandInKind.HOLDER)
    )
    s = plain.summary
    return TreeSummary(
        tests=tests,
        vllm_src=vllm_src,
        files=s.files,
        files_with_stubs=s.files_with_stubs,
        stubs=s.stubs,
        stubs_resolved=s.resolved,
        stubs_unresolved=s.unresolved,
        stubs_audited=s.audited,
        standins=kinds,
        stub_findings=FindingCounts.of(plain.findings),
        standin_findings=FindingCounts.of(added),
        standin_dropped=len(before - after),
        seconds=seconds,
    )


_WIDTH = 50  # the widest label, the spec'd mocks'

_LEVEL_WORDS = {
    Severity.ERROR: "error (fails on the path the test takes)",
    Severity.WARNING: "warning (stale: a field nothing reads)",
    Severity.NOTE: "note (possibly missing, or not audited)",
}


def _finding_lines(counts: FindingCounts) -> list[str]:
    lines = []
    for level, kinds in counts.by_level:
        n = sum(k for _, k in kinds)
        detail = ", ".join(f"{kind}={k}" for kind, k in kinds)
        lines.append(
            f"    {_LEVEL_WORDS[level]:<{_WIDTH}}{n:>6}" + (f"   {detail}" if detail else "")
        )
    return lines


def format_summary(summary: TreeSummary, label: str, full_command: str) -> list[str]:
    """The summary as lines: ``label`` names the tree (``vLLM 0.34.0's own tests``),
    ``full_command`` is the one command that prints every finding."""
    s = summary
    lines = [
        f"{label}: {s.tests}",
        f"  audited against {s.vllm_src / 'vllm'} in {s.seconds:.1f} s: {s.files} test files",
        "  stubs and stand-ins found, by kind",
        f"    {'object.__new__ stubs':<{_WIDTH}}{s.stubs:>6}   in {s.files_with_stubs} files",
        f"      {s.stubs_resolved} resolved into the vLLM source, {s.stubs_unresolved} unresolved "
        f"(dynamic or outside vLLM), {s.stubs_audited} with method calls audited",
    ]
    for count in s.standins:
        audited = "audited" if count.kind in AUDITED_KINDS else "counted, not audited"
        name = f"{count.kind.value} (experimental, {audited})"
        lines.append(f"    {name:<{_WIDTH}}{count.found:>6}   {count.meeting_code} meet vLLM code")
    lines.append("  findings of the object.__new__ stub audit, by level")
    lines.extend(_finding_lines(s.stub_findings))
    dropped = (
        f"; {s.standin_dropped} of the above it no longer reports" if s.standin_dropped else ""
    )
    lines.append(
        f"  findings the stand-in audit adds (experimental, --standins), by level{dropped}"
    )
    lines.extend(_finding_lines(s.standin_findings))
    lines.append(f"  all of them, in full:\n    {full_command}")
    return lines
