"""Adoption mechanics: a baseline of known findings and inline ``# audit-stubs: ignore``.

A project adopting the audit has findings on day one that nobody will fix that day; without a
baseline the hook blocks every edit to those files and gets switched off.  A baseline records
what is known, keyed without line numbers (``tests/x.py::kind:Class.method:name``) so that an
edit above a stub does not churn it, and counted (the same key twice in one file is two
entries) so that a second broken stub of the same shape in the same file is still new.  Only
*new* findings fail.  Entries no longer found are reported as removable, but only for the test
files this run audited: pre-commit passes changed files only, and every other file's entries
are simply not in question.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

import attrs

from factories.analysis.findings import Finding, FindingKind
from factories.errors import AuditInputError

HEADER = (
    "# audit-stubs baseline: known findings, one 'FILE::kind:Class.method:name' a line\n"
    "# (no line numbers; a key listed twice is two findings). Regenerate with --write-baseline.\n"
)
_KINDS = frozenset(k.value for k in FindingKind if k is not FindingKind.UNREADABLE_FILE)
_ENTRY = re.compile(r"^(?P<file>[^:].*?)::(?P<kind>[a-z-]+):(?P<member>[^:]+):(?P<name>.+)$")
_IGNORE = re.compile(r"#\s*audit-stubs:\s*ignore\b(?:\[(?P<kinds>[^\]]*)\])?")
ALL_KINDS = frozenset({"*"})


def finding_file(finding: Finding, root: Path) -> str:
    """The file a finding is reported in (the stub's side, else vLLM's), relative to
    ``root`` when it lies under it: the first part of its baseline key."""
    where = finding.stub_location or finding.vllm_location
    if where is None:
        return "<unknown>"
    return where.relative_to(root).path


def finding_key(finding: Finding, root: Path) -> str:
    return f"{finding_file(finding, root)}::{finding.key}"


@attrs.frozen
class Baseline:
    """Known findings by key, with how many times each is known."""

    counts: dict[str, int] = attrs.field(factory=dict)

    @classmethod
    def read(cls, path: Path) -> Baseline:
        """``AuditInputError`` naming ``file:line`` for an entry that is not a key."""
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise AuditInputError(f"cannot read baseline {path}: {exc.strerror}") from None
        except UnicodeDecodeError as exc:
            raise AuditInputError(f"cannot read baseline {path}: not UTF-8 ({exc})") from None
        counts: Counter[str] = Counter()
        for number, line in enumerate(lines, start=1):
            entry = line.strip()
            if not entry or entry.startswith("#"):
                continue
            match = _ENTRY.match(entry)
            if match is None or "." not in match["member"]:
                raise AuditInputError(
                    f"{path}:{number}: baseline entry {entry!r} is not FILE::kind:Class.method:name"
                )
            if match["kind"] not in _KINDS:
                raise AuditInputError(
                    f"{path}:{number}: baseline entry {entry!r}: unknown kind {match['kind']!r}"
                )
            counts[entry] += 1
        return cls(dict(counts))

    def split(
        self, findings: Sequence[Finding], root: Path, audited: Iterable[str]
    ) -> tuple[list[Finding], int, list[str]]:
        """(findings not in the baseline, how many were, entries of ``audited`` files that
        no finding matches any more).  Unreadable files are never baselined."""
        left = Counter(self.counts)
        new: list[Finding] = []
        known = 0
        for finding in findings:
            key = finding_key(finding, root)
            if finding.kind is not FindingKind.UNREADABLE_FILE and left[key] > 0:
                left[key] -= 1
                known += 1
            else:
                new.append(finding)
        files = set(audited)
        removable = sorted(
            key for key, n in left.items() for _ in range(n) if key.split("::", 1)[0] in files
        )
        return new, known, removable

    def entries_outside(self, audited: Iterable[str]) -> list[str]:
        """Entries of files this run did not audit (kept when a baseline is rewritten)."""
        files = set(audited)
        return [
            key
            for key, n in self.counts.items()
            for _ in range(n)
            if key.split("::", 1)[0] not in files
        ]


def write_baseline(
    path: Path, findings: Sequence[Finding], root: Path, kept: Sequence[str] = ()
) -> int:
    """Write the keys of ``findings`` (plus ``kept`` entries), sorted; returns the count."""
    keys = [finding_key(f, root) for f in findings if f.kind is not FindingKind.UNREADABLE_FILE]
    keys = sorted([*keys, *kept])
    try:
        path.write_text(HEADER + "".join(f"{k}\n" for k in keys), encoding="utf-8")
    except OSError as exc:
        raise AuditInputError(f"cannot write baseline {path}: {exc.strerror}") from None
    return len(keys)


def suppressed_kinds(lines: Sequence[str], line: int, path: str) -> frozenset[str] | None:
    """The kinds an ``# audit-stubs: ignore[kind, ...]`` comment on ``line`` (1-based) silences,
    ``ALL_KINDS`` for a bare ``# audit-stubs: ignore``, None without one.  A kind that is no
    finding kind is a typo that would silence nothing: ``AuditInputError`` naming the line."""
    if not 0 < line <= len(lines) or "audit-stubs" not in lines[line - 1]:
        return None
    match = _IGNORE.search(lines[line - 1])
    if match is None:
        return None
    if match["kinds"] is None:
        return ALL_KINDS
    kinds = frozenset(k.strip() for k in match["kinds"].split(",") if k.strip())
    unknown = sorted(kinds - _KINDS)
    if unknown or not kinds:
        raise AuditInputError(
            f"{path}:{line}: '# audit-stubs: ignore[...]' names no finding kind "
            f"({', '.join(unknown) or 'empty'}); kinds: {', '.join(sorted(_KINDS))}"
        )
    return kinds


def is_suppressed(kinds: frozenset[str] | None, finding: Finding) -> bool:
    return kinds is not None and (kinds is ALL_KINDS or finding.kind.value in kinds)
