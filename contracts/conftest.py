"""Shared fixtures of the contract suite (CPU-only)."""

from __future__ import annotations

from pathlib import Path

import pytest

from factories.errors import ReleaseNotFetched
from factories.testing.releases import cache_dir, release_source


def pytest_report_header(config):
    """Which vLLM the runtime contracts exercise (found without importing it)."""
    import importlib.util

    spec = importlib.util.find_spec("vllm")
    where = (
        next(iter(spec.submodule_search_locations))
        if spec and spec.submodule_search_locations
        else None
    )
    return [
        f"vllm under test: {where or 'not installed'}",
        f"release sources: {cache_dir() / 'vllm-src'}",
    ]


@pytest.fixture(scope="session")
def release_src():
    """``release_src("0.29.0")`` -> the folder holding that release's ``vllm/`` and ``tests/``.

    A missing release *fails* the test: the set-up fetches every release the suite needs, and a
    skip here would hide the drift checks that are this project's reason to exist.
    """

    def get(version: str) -> Path:
        try:
            return release_source(version)
        except ReleaseNotFetched as exc:
            pytest.fail(str(exc), pytrace=False)

    return get
