"""Which AITER runs the kernels: the real one on gfx950, the emulation everywhere else.

``--aiter-backend auto`` picks the real package only where it can work: a ROCm build of torch,
a gfx950 device, an importable ``aiter`` that exports the four PS prefill functions.  Each
"no" has one precise reason, which becomes the skip message of the real-AITER tests.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Iterator
from types import ModuleType

import attrs
import torch

from factories.aiter.layout import AITER_FUNCTIONS

BACKENDS = ("auto", "aiter", "emulated")


@attrs.frozen
class Backend:
    """The chosen AITER: ``name`` is ``aiter`` or ``emulated``; ``module`` provides the API."""

    name: str
    module: ModuleType

    @property
    def is_emulated(self) -> bool:
        return self.name == "emulated"


def real_aiter_unusable_reason() -> str | None:
    """None when the real AITER PS prefill can run here, else why not (one line)."""
    if getattr(torch.version, "hip", None) is None:
        return "not ROCm: torch.version.hip is None (this torch has no HIP build)"
    if not torch.cuda.is_available():
        return "ROCm torch but no visible GPU (torch.cuda.is_available() is False)"
    arch = getattr(torch.cuda.get_device_properties(0), "gcnArchName", "")
    if not arch.startswith("gfx950"):
        return (
            f"not gfx950: device 0 is {arch or 'unknown'} "
            "(PS prefill kernels exist only for gfx950)"
        )
    try:
        module = importlib.import_module("aiter")
    except Exception as exc:
        return f"aiter is not importable: {type(exc).__name__}: {exc}"
    if getattr(module, "IS_AITER_EMULATION", False):
        return "sys.modules['aiter'] is this project's emulation, not the real package"
    missing = [f for f in AITER_FUNCTIONS if not hasattr(module, f)]
    if missing:
        return f"AITER lacks {', '.join(missing)} (needs a 2026 build with PS prefill)"
    return None


def vllm_path_missing_reason() -> str | None:
    """None when the installed vLLM carries the FP8 PS prefill path, else why not."""
    try:
        module = importlib.import_module("vllm.v1.attention.backends.mla.rocm_aiter_mla")
    except Exception as exc:
        return f"vllm's rocm_aiter_mla is not importable: {type(exc).__name__}: {exc}"
    for cls, method in (
        ("AiterMLAImpl", "_mla_fp8_prefill_attn"),
        ("AiterMLAMetadataBuilder", "_init_fp8_prefill_ps_buffers"),
        ("AiterMLAMetadataBuilder", "_build_fp8_prefill_ps_metadata"),
    ):
        if not hasattr(getattr(module, cls, None), method):
            return f"vLLM lacks {cls}.{method} (the FP8 PS prefill path)"
    return None


def select_backend(option: str) -> Backend:
    """Resolve ``auto``/``aiter``/``emulated``; ``aiter`` where unusable raises ``LookupError``."""
    if option not in BACKENDS:
        raise ValueError(f"--aiter-backend must be one of {', '.join(BACKENDS)}, got {option!r}")
    if option in ("auto", "aiter"):
        reason = real_aiter_unusable_reason()
        if reason is None:
            return Backend("aiter", importlib.import_module("aiter"))
        if option == "aiter":
            raise LookupError(reason)
    import factories.aiter.emulation as emulation

    return Backend("emulated", emulation)


@contextlib.contextmanager
def aiter_module_installed(module: ModuleType) -> Iterator[ModuleType]:
    """``import aiter`` inside vLLM's methods yields ``module`` for the block, then restores.

    vLLM imports AITER lazily inside the three FP8 prefill methods, so installing the
    emulation after vLLM itself was imported is enough and leaves vLLM's import-time AITER
    detection untouched.
    """
    missing = object()
    previous = sys.modules.get("aiter", missing)
    sys.modules["aiter"] = module
    try:
        yield module
    finally:
        if previous is missing:
            sys.modules.pop("aiter", None)
        else:
            sys.modules["aiter"] = previous  # type: ignore[assignment]
