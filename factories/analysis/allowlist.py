"""The allowlist: known findings a project accepts, as stubtest's allowlist.

``kind:Class.method:name`` patterns (fnmatch), one a line, optionally scoped to test files as
``tests/x/test_y.py::kind:Class.method:name``.  A pattern that would silence every finding, or
that names no finding kind, is refused with the file and line (``AuditInputError``).
"""

from __future__ import annotations

import fnmatch
from pathlib import Path

import attrs

from factories.analysis.findings import Finding, FindingKind
from factories.errors import AuditInputError


@attrs.frozen
class Allowlist:
    """``kind:Class.method:name`` patterns (fnmatch) that silence known findings, as stubtest's.

    ``FILE::kind:Class.method:name`` scopes a pattern to the test files ``FILE`` (a glob,
    relative to ``--vllm-src``) matches: a finding known in one file stays new in any other.
    """

    patterns: tuple[str, ...] = ()

    @classmethod
    def read(cls, path: Path) -> Allowlist:
        """The patterns of an allowlist file; ``AuditInputError`` naming ``file:line`` for a
        line that is not ``kind:Class.method:name`` or that would silence every finding."""
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise AuditInputError(f"cannot read allowlist {path}: {exc.strerror}") from None
        except UnicodeDecodeError as exc:
            raise AuditInputError(f"cannot read allowlist {path}: not UTF-8 ({exc})") from None
        patterns = []
        for number, line in enumerate(lines, start=1):
            entry = line.split("#", 1)[0].strip()
            if entry:
                problem = _allowlist_problem(entry)
                if problem:
                    raise AuditInputError(f"{path}:{number}: allowlist entry {entry!r} {problem}")
                patterns.append(entry)
        return cls(tuple(patterns))

    def matches(self, finding: Finding, file: str | None = None) -> str | None:
        """The first pattern silencing ``finding``, reported in test file ``file``."""
        for pattern in self.patterns:
            scope, sep, rest = pattern.partition("::")
            if sep:
                if file is None or not fnmatch.fnmatchcase(file, scope):
                    continue
                pattern_key = rest
            else:
                pattern_key = pattern
            if fnmatch.fnmatchcase(finding.key, pattern_key):
                return pattern
        return None


def _allowlist_problem(entry: str) -> str | None:
    """Why ``entry`` is not a usable ``kind:Class.method:name`` pattern, or None.

    A pattern made of wildcards and separators only (``*``, ``*:*:*``) would silence every
    finding, new drift included; a kind that matches no finding kind is a typo that would
    silence nothing.
    """
    scope, scoped, pattern = entry.partition("::")
    if not scoped:
        pattern, scope = entry, ""
    elif not scope:
        return "names no file before '::'"
    if not pattern.strip("*?:.") and not scope.strip("*?/."):
        return "matches every finding; name a file, kind, class, method or attribute"
    kind, sep, rest = pattern.partition(":")
    method, sep2, name = rest.rpartition(":")
    if not (sep and sep2 and kind and method and name):
        return "is not of the form kind:Class.method:name"
    kinds = [k.value for k in FindingKind if k is not FindingKind.UNREADABLE_FILE]
    if not fnmatch.filter(kinds, kind):
        return f"matches no finding kind ({', '.join(kinds)})"
    return None


#: The empty allowlist: silences nothing (the default of every audit).
NO_ALLOWLIST = Allowlist()
