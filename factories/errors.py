"""Every exception this project raises, in one place, under one base class.

Callers that turn a failure into one line (``audit-stubs``, ``tools/fetch_vllm.py``,
``tools/calibrate_tolerance.py``) and fixtures that turn it into a skip catch ``GuardError``
instead of a list that goes stale each time a module grows a new error.  Each class also keeps
the builtin base it had before, so ``except AssertionError``/``LookupError``/... and
``pytest.raises`` written against those bases keep working.

Imports nothing but the standard library: the torch-free audit CLI and the stdlib-only
``tools/fetch_vllm.py`` import it before any third-party package is available.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


class GuardError(Exception):
    """Base of every error of this project; the CLIs and the fixtures catch this one class."""


# ---------------------------------------------------------------- analysis (torch-free)


class SourceError(GuardError):
    """A file cannot be read or parsed; the message names the file and the reason.

    ``line`` is where Python located the problem, 1 when no line applies (the file cannot be
    opened), so every report can point at ``path:line``.
    """

    def __init__(self, path: Path, line: int, reason: str) -> None:
        super().__init__(f"{path}:{line}: {reason}")
        self.path = Path(path)
        self.line = line
        self.reason = reason


class MethodNotFoundError(GuardError, LookupError):
    """The class (through its MRO) defines no method of that name."""


class OutputError(GuardError):
    """The findings could not be written to stdout (a full disk); one line, exit 2."""


class AuditInputError(GuardError):
    """Bad input to the audit (missing tree, unreadable file); one line, exit 2 in the CLI."""


# ---------------------------------------------------------------- stubs and factories


class StandInError(GuardError, AttributeError):
    """A stand-in was asked for a field its dataclass does not declare, or that is unset."""


class StubDriftError(GuardError, AssertionError):
    """vLLM reads something the factory's stub does not provide (or a call no longer binds).

    An ``AssertionError`` so that a drifted stub fails a test rather than erroring it; the
    message (written by ``factories.stubs.drift``) lists every finding because the fix is one
    edit per finding in the specs; ``findings`` keeps them for callers that assert on kinds.
    """

    def __init__(self, message: str, findings: Sequence[object]) -> None:
        super().__init__(message)
        self.findings = findings


class StaleStubFieldWarning(UserWarning):
    """The factory sets a field vLLM no longer reads.

    A warning, not a ``GuardError``: a stale field costs nothing at run time, so it must not
    fail a build; it lives here so that every class a caller may catch or filter is in one file.
    """


# ---------------------------------------------------------------- AITER emulation


class PreconditionError(GuardError, RuntimeError):
    """A call the real device would reject, fault on, or silently get wrong."""


class UnsupportedDtypeError(GuardError, AssertionError):
    """The torch->aiter dtype map's ``AssertionError: Unsupported dtype`` (dtypes.py:48)."""


# ---------------------------------------------------------------- accuracy, mutation, releases


class ToleranceFileError(GuardError, ValueError):
    """The tolerance file is missing, malformed, or was changed without re-running the
    calibration."""


class MutationDoesNotApplyError(GuardError, AssertionError):
    """The text to replace is missing or ambiguous in this vLLM version."""


class ReleaseNotFetchedError(GuardError, LookupError):
    """The release source is not in the cache; the message says how to fetch it."""


# ---------------------------------------------------------------- tools


class FetchError(GuardError):
    """A user-facing failure of ``tools/fetch_vllm.py``: reported as one line, exit status 2."""


class HistoryInputError(GuardError):
    """A ``tools/bench_history.py`` input that cannot be used (a release folder without
    ``vllm/`` or ``tests/``, a malformed ``--pairs``): one line, exit 2."""


class AccuracyInputError(GuardError):
    """A value given to the calibration or the fingerprint (``tools/calibrate_tolerance.py``,
    ``tools/fingerprint_kernel.py``) that cannot be used: one line, exit 2."""


# ---------------------------------------------------------------- judging by running


class JudgeError(GuardError):
    """``tools/judge_stubs_by_running.py`` cannot run: a bad folder, interpreter or JSON file."""


__all__ = [
    "AccuracyInputError",
    "AuditInputError",
    "FetchError",
    "GuardError",
    "HistoryInputError",
    "JudgeError",
    "MethodNotFoundError",
    "MutationDoesNotApplyError",
    "PreconditionError",
    "ReleaseNotFetchedError",
    "SourceError",
    "StaleStubFieldWarning",
    "StandInError",
    "StubDriftError",
    "ToleranceFileError",
    "UnsupportedDtypeError",
]
