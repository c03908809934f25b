"""pytest plugin of the contract suite: ``--selfcheck``, ``--vllm-src PATH``,
``--contracts-profile``, ``--aiter-contract``.

Loaded through ``addopts`` (``-p factories.testing.contracts_plugin``) rather than from
``contracts/conftest.py``: an option a conftest registers is unknown while pytest looks for the
initial conftest files, so ``--vllm-src PATH`` would be read as a test path and the checkout's
own ``tests/conftest.py`` imported. See ``factories.testing.selfcheck`` for what the switch
means; ``contracts/conftest.py`` holds the fixtures.
"""

from __future__ import annotations

import contextlib
import gc
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from factories.aiter.revision import (
    AUTO,
    CONTRACT_ENV,
    CONTRACTS,
    reset_session_contract,
    resolve_contract,
    set_session_contract,
)
from factories.analysis.result_cache import RESULTS_ENV
from factories.testing import selfcheck
from factories.testing.hypothesis_profiles import PROFILE_ENV, PROFILES
from factories.testing.releases import cache_dir
from factories.testing.summary_section import SummarySection

#: The terminal-summary section naming the AITER contract revision the run followed.
CONTRACT_SUMMARY = SummarySection("AITER PS contract revision")
_CONTRACT_TOKEN = pytest.StashKey[object]()


def pytest_addoption(parser):
    group = parser.getgroup("contracts", "vLLM ROCm AITER FP8 MLA prefill contracts")
    group.addoption(
        selfcheck.SELFCHECK_OPTION,
        action="store_true",
        default=False,
        help="also run the self-proofs (mutants of the pinned release source "
        f"${selfcheck.SELFCHECK_VERSION_ENV}, default {selfcheck.SELFCHECK_DEFAULT}) that show "
        "every contract can fail; CI turns this on",
    )
    group.addoption(
        selfcheck.VLLM_SRC_OPTION,
        metavar="PATH",
        default=None,
        help="run the contracts on the vLLM checkout at PATH (the folder holding vllm/) "
        "instead of the installed one",
    )
    group.addoption(
        "--contracts-profile",
        choices=sorted(PROFILES),
        default=None,
        help=f"Hypothesis example counts: fast (default) or ci (also ${PROFILE_ENV})",
    )
    group.addoption(
        "--aiter-contract",
        choices=[AUTO, *(c.value for c in CONTRACTS)],
        default=None,
        help="the AITER PS prefill contract revision the emulation, pinned signatures and plan "
        "checks follow: before or after ROCm/aiter#3606 (auto: the real AITER's where one "
        f"imports, else 3606; also ${CONTRACT_ENV})",
    )


def _own_audit_results(config) -> None:
    """Point the audit's result cache at a folder of this session (removed at its end), unless
    the caller chose one: the ``audit-stubs`` runs the tests launch must not fill, or read
    from, the user's cache."""
    if os.environ.get(RESULTS_ENV):
        return
    folder = tempfile.mkdtemp(prefix="audit-results-")
    os.environ[RESULTS_ENV] = folder
    config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        f"{selfcheck.SELFCHECK_MARKER}: a self-proof of this project (mutates the pinned "
        f"release source); runs only with {selfcheck.SELFCHECK_OPTION}",
    )
    contract, reason = resolve_contract(config.getoption("--aiter-contract"))
    config.stash[_CONTRACT_TOKEN] = set_session_contract(contract)
    CONTRACT_SUMMARY.register(config)
    CONTRACT_SUMMARY.lines(config).append(f"AITER contract revision: {contract} ({reason})")
    _own_audit_results(config)
    profile = config.getoption("--contracts-profile")
    if profile:
        os.environ[PROFILE_ENV] = profile
    src = config.getoption(selfcheck.VLLM_SRC_OPTION)
    if src:
        path = Path(src).expanduser()
        problem = selfcheck.vllm_src_problem(path)
        if problem is None:
            try:
                selfcheck.put_vllm_src_first(path)
            except RuntimeError as exc:
                problem = str(exc)
        if problem is None:
            problem = selfcheck.import_vllm_under_test(path)
        if problem is not None:
            raise pytest.UsageError(problem)


def pytest_unconfigure(config):
    token = config.stash.get(_CONTRACT_TOKEN, None)
    if token is not None:
        reset_session_contract(token)  # type: ignore[arg-type]


def pytest_collection_modifyitems(config, items):
    """Without ``--selfcheck`` the self-proofs are deselected (counted in the summary)."""
    if config.getoption(selfcheck.SELFCHECK_OPTION):
        return
    kept, proofs = [], []
    for item in items:
        (proofs if item.get_closest_marker(selfcheck.SELFCHECK_MARKER) else kept).append(item)
    if proofs:
        config.hook.pytest_deselected(items=proofs)
        items[:] = kept


@contextlib.contextmanager
def _long_lived_objects():
    """Build objects that live until the process ends with the cyclic garbage collector paused,
    then move them out of its reach (``gc.freeze``): every full collection would otherwise walk
    them again, and one during a large import walks the half-built graph for nothing. Measured
    on ``pytest contracts/``: 16 full collections, 1.95 s, before any pausing or freezing; the
    pause during collection and the vLLM import saved a further 0.3-0.5 s."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()


@pytest.hookimpl(wrapper=True)
def pytest_collection(session):
    """What collection imports (torch, Hypothesis, the test modules) lives until the end."""
    with _long_lived_objects():
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef, request):
    """So does what a session-scoped fixture builds (above all the vLLM import of the first
    ``aiter_mla``)."""
    if fixturedef.scope != "session":
        return (yield)
    with _long_lived_objects():
        return (yield)


def pytest_terminal_summary(terminalreporter, config):
    """Say why the self-proofs did not run, so a run of only self-proofs is not a mystery."""
    if config.getoption(selfcheck.SELFCHECK_OPTION):
        return
    skipped = [
        r
        for r in terminalreporter.stats.get("deselected", [])
        if r.get_closest_marker(selfcheck.SELFCHECK_MARKER)
    ]
    if skipped:
        terminalreporter.write_line(
            f"{len(skipped)} self-proofs deselected (they mutate the pinned vLLM "
            f"{selfcheck.selfcheck_version()}); {selfcheck.SELFCHECK_OPTION} runs them"
        )


def pytest_report_header(config):
    """Which vLLM the contracts exercise (found without importing it) and what proves them."""
    import importlib.util

    spec = importlib.util.find_spec("vllm")
    where = (
        next(iter(spec.submodule_search_locations))
        if spec and spec.submodule_search_locations
        else None
    )
    proofs = (
        f"on, mutating vLLM {selfcheck.selfcheck_version()} from the release cache"
        if config.getoption(selfcheck.SELFCHECK_OPTION)
        else f"off (deselected; {selfcheck.SELFCHECK_OPTION} runs them)"
    )
    return [
        f"vllm under test: {where or 'not installed'}",
        f"release sources: {cache_dir() / 'vllm-src'}",
        f"self-proofs: {proofs}",
        f"hypothesis profile: {os.environ.get(PROFILE_ENV) or 'fast'}",
        *CONTRACT_SUMMARY.lines(config),
    ]
