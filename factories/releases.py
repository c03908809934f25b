"""Where the verified vLLM release sources live (fetched by ``tools/fetch_vllm.py``).

Tests use real release sources as inputs (a test file at release N against the source at
release N+1 is real drift).  They are fetched once into an ignored cache, never committed.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_VERSION = "0.34.0"
RELEASES = ("0.28.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0", "0.33.0", "0.34.0")


class ReleaseNotFetched(LookupError):
    """The release source is not in the cache; the message says how to fetch it."""


def cache_dir() -> Path:
    """``$VLLM_GUARD_CACHE`` or ``<repo>/.cache``."""
    return Path(os.environ.get("VLLM_GUARD_CACHE", REPO_ROOT / ".cache"))


def release_source(version: str) -> Path:
    """Folder holding ``vllm/`` and ``tests/`` of vLLM ``version``."""
    root = cache_dir() / "vllm-src" / version
    if not (root / "vllm" / "__init__.py").is_file():
        raise ReleaseNotFetched(
            f"vLLM {version} source is not in {root.parent}; "
            f"run: python tools/fetch_vllm.py {version}"
        )
    return root
