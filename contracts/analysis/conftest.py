"""Every module here is a self-proof of the analyzer on pinned release sources (it runs
``audit-stubs`` and the analysis on them, or mutates them) or a slow one (real git, pytest or
``audit-stubs`` subprocesses); it never reads the vLLM under test (each module is marked
``selfcheck``).  The analyzer's cases on tiny synthetic trees, cheap enough for every run, are
in ``contracts/analyzer/`` and run in a plain ``pytest contracts/``.

Without ``--selfcheck`` their tests would all be deselected, so they are not even collected:
importing and assertion-rewriting these large modules was 0.3 s of every plain
``pytest contracts/``, the run a developer repeats after each refactor.
"""

from __future__ import annotations

from factories.testing.selfcheck import SELFCHECK_OPTION


def pytest_ignore_collect(collection_path, config):
    if collection_path.suffix == ".py" and not config.getoption(SELFCHECK_OPTION):
        return True
    return None
