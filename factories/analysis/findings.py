"""Value objects every layer of the analyzer speaks.

Modelled on mypy's ``stubtest``: one finding is a small immutable record with a location on each
side of the mismatch (the vLLM source and the stub that drifted from it), a message, and a short
description of what each side has.  Factories raise them, contracts assert on them, the CLI prints
them; nobody re-derives them.
"""

from __future__ import annotations

import enum
from pathlib import Path

import attrs


@attrs.frozen(order=True)
class Location:
    """A ``file:line`` position; ``path`` is kept as given (absolute or relative)."""

    path: str
    line: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"

    def relative_to(self, root: Path) -> Location:
        """The same position with ``path`` relative to ``root`` when it lies under it."""
        try:
            return Location(str(Path(self.path).resolve().relative_to(root.resolve())), self.line)
        except ValueError:
            return self


class Severity(enum.Enum):
    """``error`` makes the audit exit 1; ``warning`` is printed but does not fail it; ``note``
    (a read the analysis cannot place on the test's path) is left out of the text report and
    the exit status unless asked for, and is always in the JSON report."""

    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


class FindingKind(enum.Enum):
    """What drifted.  The value is the stable, user-facing name (used by allowlists and JSON)."""

    MISSING_ATTRIBUTE = "missing-attribute"
    # A read the stub lacks behind a branch, loop or handler that the test's known values do
    # not decide: it fails only if the test takes that path (a note, not an error).
    POSSIBLY_MISSING_ATTRIBUTE = "possibly-missing-attribute"
    # A read the stub lacks that is undecided like the one above, but new: the change under
    # audit (``--since REV`` / ``--base-src DIR``) added it to the code the test's call runs,
    # where the base version of the same calls did not read it.  An error: the test passed
    # without the field, and this change is where that stops being known.
    NEWLY_READ_ATTRIBUTE = "newly-read-attribute"
    # A namespace stand-in (``SimpleNamespace``) the test hands the call lacks a link of an
    # attribute chain the call reads from it (``common.num_actual_tokens``,
    # ``self.mla_dims.v_head_dim``): ``audit-stubs --standins``.
    MISSING_FIELD = "missing-field"
    MISSING_ARGUMENT = "missing-argument"
    UNKNOWN_KEYWORD = "unknown-keyword"
    TOO_MANY_POSITIONAL = "too-many-positional"
    DUPLICATE_ARGUMENT = "duplicate-argument"
    MISSING_METHOD = "missing-method"
    MISSING_CLASS = "missing-class"
    STALE_FIELD = "stale-field"
    # A stub whose class the analysis could not find in the tree (a dynamic expression, a
    # class outside vLLM): listed with the reason, a note, so that nothing is dropped silently.
    UNRESOLVED_STUB = "unresolved-stub"
    # Bad input, not drift: a test file or vLLM module that cannot be read or parsed.  The run
    # goes on without it, so everything else is still reported, and ends with exit 2.
    UNREADABLE_FILE = "unreadable-file"

    @property
    def severity(self) -> Severity:
        if self in (FindingKind.POSSIBLY_MISSING_ATTRIBUTE, FindingKind.UNRESOLVED_STUB):
            return Severity.NOTE
        return Severity.WARNING if self is FindingKind.STALE_FIELD else Severity.ERROR


@attrs.frozen
class Finding:
    """One mismatch between an ``object.__new__`` stub and the vLLM code it stands in for.

    ``vllm_location`` points at the code that needs the thing (the first read, the ``def``);
    ``stub_location`` at the stub (its ``object.__new__`` call or the offending call site).
    ``stub_side``/``vllm_side`` say what each side has, as stubtest prints "stub:"/"runtime:".
    """

    kind: FindingKind
    class_name: str
    method: str
    name: str
    message: str
    vllm_location: Location | None
    stub_location: Location | None
    stub_side: str = ""
    vllm_side: str = ""
    # The pytest tests (``test_x``, ``TestCls::test_x[case]``) whose calls the finding is
    # about, where the stub's calls run in tests: the same drift found on several tests' paths
    # is one finding naming them all.  Not part of the finding's identity.
    tests: tuple[str, ...] = attrs.field(default=(), eq=False)

    @property
    def severity(self) -> Severity:
        return self.kind.severity

    @property
    def key(self) -> str:
        """Allowlist key: ``kind:Class.method:name``."""
        return f"{self.kind.value}:{self.class_name}.{self.method}:{self.name}"

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind.value,
            "severity": self.severity.value,
            "class": self.class_name,
            "method": self.method,
            "name": self.name,
            "message": self.message,
            "vllm_location": str(self.vllm_location) if self.vllm_location else None,
            "stub_location": str(self.stub_location) if self.stub_location else None,
            "stub": self.stub_side,
            "vllm": self.vllm_side,
            "tests": list(self.tests),
        }


@attrs.frozen
class Problem:
    """One broken rule of a contract that is not a stub audit: the PS buffer table, the
    builder -> impl hand-off, the AITER call bindings.

    ``Finding``'s two sides (stub vs vLLM) do not exist there, but the rest of the model does:
    ``kind`` is a member of the contract's own enum of rules (a test asserts on it, not on the
    wording), ``subject`` names what broke it (a buffer, a field, a function), ``message`` says
    how, in one line.
    """

    kind: enum.Enum
    subject: str
    message: str

    def __str__(self) -> str:
        return f"[{self.kind.value}] {self.subject}: {self.message}"
