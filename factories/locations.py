"""Where this project's caches live: release sources, the vLLM wheel, fetch logs, audit results.

One home for that fact, and stdlib only: ``tools/fetch_vllm.py`` runs before anything is
installed (no attrs yet), the torch-free audit (``factories.analysis.result_cache``) and the
pytest glue (``factories.testing.releases``) read the same answer.
"""

from __future__ import annotations

import os
from pathlib import Path

#: The one setting that locates every cache.
CACHE_ENV = "VLLM_GUARD_CACHE"


def cache_dir() -> Path:
    """``$VLLM_GUARD_CACHE``, else the user cache (``$XDG_CACHE_HOME`` or ``~/.cache``).

    Never the checkout's root: an installed package has none, and two checkouts share one cache.
    """
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured)
    user_cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(user_cache) / "vllm-rocm-mla-guard"
