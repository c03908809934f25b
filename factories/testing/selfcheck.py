"""Running the contracts vs proving them: the vLLM under test and the pinned self-check source.

``pytest contracts/`` runs the contracts on *the vLLM under test*: the installed one, a
checkout named by ``--vllm-src PATH``, or one on ``PYTHONPATH``.  The self-proofs (a mutated
copy of vLLM must make a contract fail, a behaviour-preserving edit must keep it green) are tests
of *this project*: they are marked ``selfcheck``, run only under ``--selfcheck`` (``.ci/run``
turns it on), and always mutate a pinned, verified release source from the cache -- never the
vLLM under test, whose text their edits would stop matching after any refactor near an anchor.

One setting picks the pinned release: ``$VLLM_GUARD_SELFCHECK_VERSION`` (default
``SELFCHECK_DEFAULT``).  A mutated module of it is executed beside the vLLM under test, so its
own imports (``vllm.*``) resolve there: the pinned file is what is proved, the rest of vLLM is
the one installed.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from factories.testing.releases import release_source

SELFCHECK_OPTION = "--selfcheck"
SELFCHECK_MARKER = "selfcheck"
SELFCHECK_VERSION_ENV = "VLLM_GUARD_SELFCHECK_VERSION"
SELFCHECK_DEFAULT = "0.34.0"
VLLM_SRC_OPTION = "--vllm-src"
AITER_MLA_MODULE = "vllm.v1.attention.backends.mla.rocm_aiter_mla"


def selfcheck_version(environ: Mapping[str, str] | None = None) -> str:
    """The release the self-proofs mutate: ``$VLLM_GUARD_SELFCHECK_VERSION`` or the default."""
    environ = os.environ if environ is None else environ
    return environ.get(SELFCHECK_VERSION_ENV) or SELFCHECK_DEFAULT


def selfcheck_source(environ: Mapping[str, str] | None = None) -> Path:
    """Folder holding the pinned release's ``vllm/``; ``ReleaseNotFetchedError`` if not cached."""
    return release_source(selfcheck_version(environ))


def vllm_src_problem(path: Path) -> str | None:
    """Why ``path`` cannot be the vLLM under test (checked without importing), else None."""
    if not path.is_dir():
        return f"{VLLM_SRC_OPTION} {path}: no such directory"
    if not (path / "vllm" / "__init__.py").is_file():
        return f"{VLLM_SRC_OPTION} {path}: no vllm/__init__.py (give the folder holding vllm/)"
    return None


def put_vllm_src_first(path: Path) -> None:
    """Make ``path``'s ``vllm`` the one this process (and its children) import."""
    path = path.resolve()
    loaded = sys.modules.get("vllm")
    if loaded is not None and not _is_under(getattr(loaded, "__file__", None), path):
        raise RuntimeError(
            f"{VLLM_SRC_OPTION} {path}: vllm was already imported from "
            f"{getattr(loaded, '__file__', '?')} before the option took effect"
        )
    if str(path) not in sys.path[:1]:
        sys.path.insert(0, str(path))
    importlib.invalidate_caches()
    parts = [str(path)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(parts))


def import_vllm_under_test(path: Path) -> str | None:
    """Import vLLM's ``rocm_aiter_mla`` from ``path``; None, or one line saying why not."""
    try:
        module = importlib.import_module(AITER_MLA_MODULE)
    except BaseException as exc:  # any failure (SystemExit too) is reported as one line
        if isinstance(exc, KeyboardInterrupt):
            raise
        text = str(exc).splitlines()[0] if str(exc) else ""
        return (
            f"{VLLM_SRC_OPTION} {path}: cannot import {AITER_MLA_MODULE}: "
            f"{type(exc).__name__}: {text}"
        )
    if not _is_under(getattr(module, "__file__", None), path.resolve()):
        return (
            f"{VLLM_SRC_OPTION} {path}: {AITER_MLA_MODULE} was imported from "
            f"{module.__file__}, not from under that folder"
        )
    return None


def _is_under(file: str | None, folder: Path) -> bool:
    if not file:
        return False
    try:
        Path(file).resolve().relative_to(folder)
    except ValueError:
        return False
    return True
