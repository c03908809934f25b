"""Shared fixtures of the contract suite (CPU-only).

Its options and hooks live in ``factories.testing.contracts_plugin`` (loaded through
``addopts``, so pytest knows ``--vllm-src PATH`` before it looks for conftest files):

- ``pytest contracts/`` runs the contracts on the vLLM under test: the installed one, or the
  checkout named by ``--vllm-src PATH`` (a folder holding ``vllm/``; put first on ``sys.path``
  and ``PYTHONPATH`` before anything imports vLLM). A path without ``vllm/``, or a vLLM that
  cannot be imported from it, is one usage error line, not a wall of failing tests.
- ``--selfcheck`` also runs the self-proofs (tests marked ``selfcheck``: mutated copies of vLLM
  that must make a contract fail, behaviour-preserving edits that must stay green). They mutate
  the pinned release source (``factories.testing.selfcheck``), never the vLLM under test;
  without the option they are deselected. ``.ci/run`` turns it on.
- ``--contracts-profile {fast,ci}`` (or ``$VLLM_GUARD_CONTRACTS_PROFILE``): how many
  Hypothesis examples the property contracts draw; ``fast`` (default) for the run after every
  refactor, ``ci`` (what ``.ci/run`` selects) for the counts the suite has always had.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from factories.errors import ReleaseNotFetchedError
from factories.testing import selfcheck
from factories.testing.releases import release_source


@pytest.fixture(scope="session")
def release_src():
    """``release_src("0.29.0")`` -> the folder holding that release's ``vllm/`` and ``tests/``.

    A missing release *fails* the test: the set-up fetches every release the suite needs, and a
    skip here would hide the drift checks that are this project's reason to exist.
    """

    def get(version: str) -> Path:
        try:
            return release_source(version)
        except ReleaseNotFetchedError as exc:
            pytest.fail(str(exc), pytrace=False)

    return get


@pytest.fixture(scope="session")
def selfcheck_root(release_src) -> Path:
    """The pinned release source every self-proof mutates (``$VLLM_GUARD_SELFCHECK_VERSION``,
    default 0.34.0) -- never the vLLM under test."""
    return release_src(selfcheck.selfcheck_version())
