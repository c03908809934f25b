"""Where the verified vLLM release sources live (fetched by ``tools/fetch_vllm.py``).

Tests use real release sources as inputs (a test file at release N against the source at
release N+1 is real drift).  They are fetched once into an ignored cache, never committed.
"""

from __future__ import annotations

import os
from pathlib import Path

from factories.errors import ReleaseNotFetchedError

#: The one setting that locates every cache (release sources, the vLLM wheel, fetch logs).
CACHE_ENV = "VLLM_GUARD_CACHE"
RELEASES = ("0.28.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0", "0.33.0", "0.34.0")


def cache_dir() -> Path:
    """``$VLLM_GUARD_CACHE``, else the user cache (``$XDG_CACHE_HOME`` or ``~/.cache``).

    Never the checkout's root: an installed package has none, and two checkouts share one cache.
    """
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured)
    user_cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(user_cache) / "vllm-rocm-mla-guard"


def release_source(version: str) -> Path:
    """Folder holding ``vllm/`` and ``tests/`` of vLLM ``version``."""
    root = cache_dir() / "vllm-src" / version
    if not (root / "vllm" / "__init__.py").is_file():
        raise ReleaseNotFetchedError(
            f"vLLM {version} source is not in {root.parent}; "
            f"run: python tools/fetch_vllm.py {version}"
        )
    return root
