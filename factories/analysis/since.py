"""Drift is made by a change: what the change under audit added to the code a stub's calls run.

A read the analysis cannot place on the test's path (``possibly-missing-attribute``) is a note
on a tree as it stands: vLLM's tests pass, so such reads sit on paths the tests do not take.
Compared with the version before a change, the same read says more.  If the base version of
the calls the test makes did not read the field, and the changed version does, then the test
passed without the field and the change put a read of it into the code those calls run: that is
exactly how 0.29.0 and 0.33.0 broke the FP8 stubs, and how most stub repairs in vLLM's history
began.  Such a read is reported as an error of its own kind, ``newly-read-attribute``.

The base is the same root read through an ``Overlay``: for ``--since REV`` the vLLM files that
differ between the git revision and the working tree, as they were at ``REV``; for
``--base-src DIR`` another tree's ``vllm/`` folder (a previous release).  Test files are never
overlaid, so both audits see the same stubs at the same lines, and a finding's identity
(stub location, method the test calls, attribute) is comparable between them.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable
from pathlib import Path

import attrs

from factories.analysis.findings import Finding, FindingKind
from factories.analysis.source_tree import Overlay
from factories.errors import AuditInputError

_READS = frozenset({FindingKind.MISSING_ATTRIBUTE, FindingKind.POSSIBLY_MISSING_ATTRIBUTE})
_GIT_TIMEOUT_S = 60


@attrs.frozen
class Base:
    """The version a change is compared with: ``label`` names it in messages."""

    label: str
    overlay: Overlay


def base_from_tree(folder: Path) -> Base:
    """Another tree's ``vllm/`` (e.g. the previous release) as the base."""
    vllm = Path(folder) / "vllm"
    if not (vllm / "__init__.py").is_file():
        raise AuditInputError(
            f"--base-src {folder}: no vllm/__init__.py there; give the folder that holds vllm/"
        )
    return Base(label=str(folder), overlay=Overlay(folders={"vllm": vllm}))


def base_from_git(root: Path, revision: str) -> Base:
    """The vLLM files of the git checkout at ``root`` that differ from ``revision``, as they
    were at ``revision`` (None where a file did not exist there)."""
    commit = _git(root, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}")
    if commit is None:
        raise AuditInputError(
            f"--since {revision}: not a commit of the git repository at {root} "
            "(give a revision such as HEAD or origin/main)"
        )
    commit = commit.strip()
    # Paths relative to ``root`` even where it is a folder inside the checkout.
    changed = _git(
        root, "diff", "--name-only", "--relative", "--no-renames", "-z", commit, "--", "vllm"
    )
    untracked = _git(root, "ls-files", "--others", "--exclude-standard", "-z", "--", "vllm")
    names = sorted({n for n in (changed or "").split("\0") + (untracked or "").split("\0") if n})
    names = [n for n in names if n.endswith(".py")]
    listed = _git(root, "ls-tree", "-r", "--name-only", "-z", commit, "--", *names) if names else ""
    at_base = set((listed or "").split("\0"))
    files: dict[str, bytes | None] = {
        name: _git_bytes(root, "show", f"{commit}:./{name}") if name in at_base else None
        for name in names
    }
    return Base(label=revision, overlay=Overlay(files=files))


def _git(root: Path, *args: str) -> str | None:
    out = _git_bytes(root, *args)
    return None if out is None else out.decode("utf-8", "surrogateescape")


def _git_bytes(root: Path, *args: str) -> bytes | None:
    """git's stdout, or None when the command fails; ``AuditInputError`` without git."""
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            timeout=_GIT_TIMEOUT_S,
            check=False,
        )
    except FileNotFoundError:
        raise AuditInputError("--since needs git on PATH (or use --base-src DIR)") from None
    except subprocess.TimeoutExpired:
        raise AuditInputError(f"--since: git {args[0]} took over {_GIT_TIMEOUT_S} s") from None
    if done.returncode != 0:
        if args[0] == "rev-parse" and b"not a git repository" in done.stderr.lower():
            raise AuditInputError(
                f"--since: {root} is not inside a git checkout (use --base-src DIR instead)"
            )
        return None
    return done.stdout


def read_identity(finding: Finding) -> tuple[str, int, str, str] | None:
    """What makes two audits' reads the same read: the stub's place, the method the test
    calls on it, the attribute.  Lines of vLLM code are not part of it (the change moves them)."""
    where = finding.stub_location
    if finding.kind not in _READS or where is None:
        return None
    return (where.path, where.line, finding.method, finding.name)


@attrs.frozen
class KnownReads:
    """The reads a stub lacked in the base audit (``label`` names the base)."""

    label: str
    reads: frozenset[tuple[str, int, str, str]]

    @classmethod
    def of(cls, label: str, findings: Iterable[Finding]) -> KnownReads:
        return cls(label, frozenset(k for f in findings if (k := read_identity(f)) is not None))

    def mark(self, findings: Iterable[Finding]) -> list[Finding]:
        """Undecided reads the base did not have become ``newly-read-attribute`` errors."""
        return [self._marked(f) for f in findings]

    def _marked(self, finding: Finding) -> Finding:
        if finding.kind is not FindingKind.POSSIBLY_MISSING_ATTRIBUTE:
            return finding
        if read_identity(finding) in self.reads:
            return finding
        label = self.label
        return attrs.evolve(
            finding,
            kind=FindingKind.NEWLY_READ_ATTRIBUTE,
            message=f"{finding.class_name}.{finding.method}() {_what_is_read(finding)} since "
            f"{label}, and {_who_lacks(finding)}: the test "
            "passed without it before, and the change added the read to the code its call "
            "runs (on a branch the analysis cannot decide)",
            vllm_side=f"{finding.vllm_side}, new since {label}",
        )


def _what_is_read(finding: Finding) -> str:
    """``reads self.x (in Cls.m)`` for a stub's read; a namespace stand-in's chain
    (``standin_audit``: its ``vllm_side`` is ``reads cfg.model.x``) as the chain it is."""
    if finding.vllm_side.startswith("reads "):
        return f"reads {finding.name}"
    return f"reads self.{finding.name} ({finding.vllm_side.removeprefix('read ')})"


def _who_lacks(finding: Finding) -> str:
    """What lacks the field: the stub, a namespace the test builds (its ``stub_side`` names
    its kind and fields), or a namespace made ``self`` (as its message says)."""
    kind = finding.stub_side.partition("(")[0]
    if finding.vllm_side.startswith("reads ") and kind:
        return f"the {kind} the test builds has no {finding.name.rpartition('.')[2]!r}"
    made_self = re.search(r"the (\S+) made self never sets it", finding.message)
    if made_self is not None:
        return made_self.group(0)
    return "the stub never sets it"
