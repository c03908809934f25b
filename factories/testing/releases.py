"""Where the verified vLLM release sources live (fetched by ``tools/fetch_vllm.py``).

Tests use real release sources as inputs (a test file at release N against the source at
release N+1 is real drift).  They are fetched once into an ignored cache, never committed.
"""

from __future__ import annotations

from pathlib import Path

from factories.errors import ReleaseNotFetchedError
from factories.locations import CACHE_ENV, cache_dir

__all__ = ["CACHE_ENV", "RELEASES", "cache_dir", "release_source"]

RELEASES = ("0.28.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0", "0.33.0", "0.34.0")


def release_source(version: str) -> Path:
    """Folder holding ``vllm/`` and ``tests/`` of vLLM ``version``."""
    root = cache_dir() / "vllm-src" / version
    if not (root / "vllm" / "__init__.py").is_file():
        raise ReleaseNotFetchedError(
            f"vLLM {version} source is not in {root.parent}; "
            f"run: python tools/fetch_vllm.py {version}"
        )
    return root
