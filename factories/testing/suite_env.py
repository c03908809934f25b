"""Where a test may run: the vLLM gate, the real-AITER gate, and one GPU per xdist worker.

Shared by ``tests/conftest.py`` and ``contracts/vllm_path/conftest.py``, so both suites
apply one rule:

- **vLLM.** A test that needs vLLM's FP8 prefill path *skips* with the precise reason
  (``vllm_path_missing_reason()``) where it is missing -- unless ``VLLM_GUARD_REQUIRE_VLLM=1``
  (CI sets it), where the same absence *fails*: a CI box that lost vLLM must not go green by
  skipping everything.
- **gfx950.** A test of the real kernels skips with ``real_aiter_unusable_reason()`` (not ROCm,
  not gfx950, AITER lacks a function).
- **xdist.** ``pytest -n 8`` on an 8-GPU node: worker ``gwN`` makes GPU ``N % count`` its current
  device with ``torch.cuda.set_device``. Everything on this path allocates on the *current*
  device (``torch.device("cuda")``, vLLM's workspace, AITER's ``torch.cuda.current_device()`` and
  the HIP device of its host planner). ``CUDA_VISIBLE_DEVICES``/``HIP_VISIBLE_DEVICES`` are not
  used: the driver reads them once, at its first initialisation, which plugins or collection can
  trigger before any pytest hook runs, and torch caches the device count it saw; pinning through
  them would then silently put every worker on GPU 0 or name a device that does not exist.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

REQUIRE_VLLM_ENV = "VLLM_GUARD_REQUIRE_VLLM"
XDIST_WORKER_ENV = "PYTEST_XDIST_WORKER"


def vllm_gate(reason: str | None, environ: Mapping[str, str]) -> tuple[str, str]:
    """``("run", "")``, ``("skip", reason)`` or ``("fail", message)``: the rule, as a pure
    function."""
    if reason is None:
        return "run", ""
    if environ.get(REQUIRE_VLLM_ENV) == "1":
        return "fail", f"{REQUIRE_VLLM_ENV}=1 but {reason}"
    return "skip", reason


def vllm_or_skip() -> None:
    """Skip (or, under ``VLLM_GUARD_REQUIRE_VLLM=1``, fail) the calling test if vLLM's FP8
    prefill path is unusable here. Used by ``contracts/vllm_path/conftest.py`` too."""
    import pytest

    from factories.aiter.backend import vllm_path_missing_reason

    verdict, message = vllm_gate(vllm_path_missing_reason(), os.environ)
    if verdict == "fail":
        pytest.fail(message, pytrace=False)
    if verdict == "skip":
        pytest.skip(message)


def gfx950_or_skip() -> None:
    """Skip the calling test unless the real AITER PS prefill can run here."""
    import pytest

    from factories.aiter.backend import real_aiter_unusable_reason

    reason = real_aiter_unusable_reason()
    if reason is not None:
        pytest.skip(reason)


def xdist_worker_number(environ: Mapping[str, str]) -> int | None:
    """``gw3`` -> 3; None outside an xdist worker (or for a worker id of another form)."""
    worker = environ.get(XDIST_WORKER_ENV, "")
    if worker.startswith("gw") and worker[2:].isdigit():
        return int(worker[2:])
    return None


def worker_device(environ: Mapping[str, str], device_count: int) -> int | None:
    """The GPU index this xdist worker uses: worker N -> N % device_count; None when not a
    worker or when there is no GPU (then the run is what it would be without xdist)."""
    number = xdist_worker_number(environ)
    if number is None or device_count <= 0:
        return None
    return number % device_count


def pin_worker_device(environ: Mapping[str, str] | None = None, cuda: Any = None) -> int | None:
    """Make this xdist worker's GPU the current device; return its index (None: nothing done)."""
    if cuda is None:
        import torch

        cuda = torch.cuda
    environ = os.environ if environ is None else environ
    if xdist_worker_number(environ) is None or not cuda.is_available():
        return None
    index = worker_device(environ, cuda.device_count())
    if index is not None:
        cuda.set_device(index)
    return index
