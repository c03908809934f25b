"""Which revision of AITER's PS prefill contract the emulation follows: before or after #3606.

Why: AITER changed the contract under vLLM without renaming anything. ROCm/aiter#3606 ("Correct
final_lse in PS MLA prefill kernel for chunked prefill", first in AITER v0.1.22.post1) gave
``get_ps_metadata_v1`` a ``need_lse`` keyword (every tile then takes a partial slot and goes
through ``mla_reduce_v1``, single splits included, so ``final_lse`` is written for every row),
made the reduce run groups of one partial, and changed ``max_partials`` of
``get_ps_metadata_info_v1`` (contract §8). A suite that knows only one revision calls the other
"drift" without saying whether vLLM is still right under it, so the revision is one explicit
setting, like the CU count: a context variable read at call time by the emulated planner, info
function, reduce, the pinned signatures and the plan validator.

The session default is :data:`DEFAULT_CONTRACT` (``3606``: vLLM 0.34.0's tests reference AITER
v0.1.26, which carries #3606); ``$VLLM_GUARD_AITER_CONTRACT`` or pytest's ``--aiter-contract``
picks another, and ``auto`` reads the revision off a real AITER's ``get_ps_metadata_v1`` where one
is importable (:func:`contract_of`).
"""

from __future__ import annotations

import contextlib
import contextvars
import enum
import functools
import importlib
import importlib.machinery
import importlib.util
import inspect
import os
import sys
from collections.abc import Iterator
from types import ModuleType

#: The keyword #3606 added to ``get_ps_metadata_v1``; its presence names the revision.
NEED_LSE = "need_lse"

#: Environment variable naming the revision for a whole run (values: ``AiterContract`` or auto).
CONTRACT_ENV = "VLLM_GUARD_AITER_CONTRACT"

#: What ``--aiter-contract`` / ``$VLLM_GUARD_AITER_CONTRACT`` accept besides a revision.
AUTO = "auto"


class AiterContract(enum.Enum):
    """A revision of AITER's PS prefill contract; the value is the name users type."""

    PRE_3606 = "pre-3606"  # ROCm/aiter e4048607a5 (2026-08-22) and before
    PR_3606 = "3606"  # ROCm/aiter#3606 merged (v0.1.22.post1 on)

    @property
    def has_need_lse(self) -> bool:
        """Whether ``get_ps_metadata_v1`` takes ``need_lse`` under this revision."""
        return self is AiterContract.PR_3606

    @property
    def reduces_single_partials(self) -> bool:
        """Whether ``mla_reduce_v1`` runs groups of one partial (``num_splits >= 1``)."""
        return self is AiterContract.PR_3606

    def __str__(self) -> str:
        return self.value


#: Every revision, in history order (tests parametrize over this).
CONTRACTS: tuple[AiterContract, ...] = tuple(AiterContract)

#: The revision a run uses unless told otherwise: the one vLLM 0.34.0 runs on (AITER 0.1.26).
DEFAULT_CONTRACT = AiterContract.PR_3606

_CONTRACT: contextvars.ContextVar[AiterContract | None] = contextvars.ContextVar(
    "aiter_contract", default=None
)


def parse_contract(value: AiterContract | str) -> AiterContract:
    """A revision from its name; a bad name raises ``ValueError`` listing the valid ones."""
    if isinstance(value, AiterContract):
        return value
    for contract in CONTRACTS:
        if value == contract.value:
            return contract
    names = ", ".join(c.value for c in CONTRACTS)
    raise ValueError(f"AITER contract must be one of {names} (got {value!r})")


def current_contract() -> AiterContract:
    """The revision in force: the innermost :func:`aiter_contract`, else the session's."""
    contract = _CONTRACT.get()
    return DEFAULT_CONTRACT if contract is None else contract


@contextlib.contextmanager
def aiter_contract(value: AiterContract | str) -> Iterator[AiterContract]:
    """Follow revision ``value`` inside the ``with`` block (restored on exit)."""
    token = _CONTRACT.set(parse_contract(value))
    try:
        yield _CONTRACT.get()  # type: ignore[misc]
    finally:
        _CONTRACT.reset(token)


def set_session_contract(value: AiterContract | str) -> contextvars.Token:
    """Make ``value`` the revision of the whole run (pytest's configure hook); the token undoes
    it (:func:`reset_session_contract`, from the unconfigure hook, so that an in-process pytest
    run inside a test leaves the outer run's revision as it was)."""
    return _CONTRACT.set(parse_contract(value))


def reset_session_contract(token: contextvars.Token) -> None:
    """Undo :func:`set_session_contract`."""
    _CONTRACT.reset(token)


def contract_of(module: ModuleType) -> AiterContract | None:
    """The revision a (real or fake) AITER module implements, read off the parameters of its
    ``get_ps_metadata_v1``; None when it has no such function or no readable signature."""
    fn = getattr(module, "get_ps_metadata_v1", None)
    if fn is None:
        return None
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return None
    return AiterContract.PR_3606 if NEED_LSE in params else AiterContract.PRE_3606


def real_aiter_contract() -> tuple[AiterContract | None, str]:
    """The revision of the real ``aiter`` importable here, and how that was decided (one line).

    Never imports the emulation and never fails: an AITER that is absent or does not import
    gives ``(None, reason)``.
    """
    existing = sys.modules.get("aiter")
    if existing is not None and getattr(existing, "IS_AITER_EMULATION", False):
        return None, "sys.modules['aiter'] is the emulation"
    try:
        spec = importlib.util.find_spec("aiter") if existing is None else existing.__spec__
    except (ImportError, ValueError) as exc:
        return None, f"aiter cannot be located: {exc}"
    if spec is None or spec.origin is None:
        return None, "no real aiter installed"
    try:
        module = importlib.import_module("aiter")
    except Exception as exc:  # ROCm/HIP missing, JIT setup failing, ...
        return None, f"aiter does not import: {type(exc).__name__}: {exc}"
    contract = contract_of(module)
    if contract is None:
        return None, "aiter has no readable get_ps_metadata_v1 signature"
    where = getattr(module, "__file__", "aiter")
    has = "has" if contract.has_need_lse else "lacks"
    return contract, f"detected from {where}: get_ps_metadata_v1 {has} {NEED_LSE}"


def resolve_contract(option: str | None) -> tuple[AiterContract, str]:
    """The run's revision from an option value (None: ``$VLLM_GUARD_AITER_CONTRACT``, else
    ``auto``), with the reason printed in the terminal summary. ``auto`` takes the real AITER's
    revision where one imports, else :data:`DEFAULT_CONTRACT`."""
    value = option if option is not None else os.environ.get(CONTRACT_ENV) or AUTO
    if value != AUTO:
        source = "option" if option is not None else f"${CONTRACT_ENV}"
        return parse_contract(value), f"set by {source}"
    detected, reason = real_aiter_contract()
    if detected is not None:
        return detected, reason
    return DEFAULT_CONTRACT, f"default ({reason}; vLLM 0.34.0 runs on AITER with #3606)"


#: (revision, need_lse): every combination AITER accepts (``need_lse`` exists only from #3606),
#: with the id the contracts run under: ids that exercise the keyword contain ``need_lse``.
CONTRACT_MODES: tuple[tuple[AiterContract, bool, str], ...] = (
    (AiterContract.PRE_3606, False, "pre-3606-without-need_lse"),
    (AiterContract.PR_3606, False, "3606-need_lse=False"),
    (AiterContract.PR_3606, True, "3606-need_lse=True"),
)


def passing_need_lse(module: ModuleType) -> ModuleType:
    """``module`` as ``aiter``, except that ``get_ps_metadata_v1`` is always called with
    ``need_lse=True``: what a caller's buffers face when it asks for the LSE of every row
    (sglang's AITER backend can; vLLM 0.34.0 does not). Signatures are kept (``functools.wraps``)
    and, like a real caller's keyword, it fails on a pre-3606 AITER."""
    plan = module.get_ps_metadata_v1

    @functools.wraps(plan)
    def with_need_lse(*args, **kwargs):
        return plan(*args, **kwargs, need_lse=True)

    wrapped = ModuleType("aiter")
    wrapped.__spec__ = importlib.machinery.ModuleSpec("aiter", None)
    wrapped.__doc__ = f"{module.__name__} called with need_lse=True"
    for name in dir(module):
        if not name.startswith("__"):
            setattr(wrapped, name, getattr(module, name))
    wrapped.get_ps_metadata_v1 = with_need_lse  # type: ignore[attr-defined]
    return wrapped
