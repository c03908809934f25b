"""``pytest tests/``: the numeric suite. Real AITER on gfx950, the emulation everywhere else.

- ``--aiter-backend {auto,aiter,emulated}`` (default ``auto``): ``aiter`` runs the real kernels
  and skips, with ``real_aiter_unusable_reason()``, where they cannot run; ``emulated`` runs
  ``factories.aiter.emulation``; ``auto`` takes the real one where usable, else the emulation.
- Markers: ``requires_vllm`` skips with ``vllm_path_missing_reason()`` where vLLM's FP8 prefill
  path is missing, and *fails* instead when ``VLLM_GUARD_REQUIRE_VLLM=1`` (CI);
  ``gfx950`` skips with ``real_aiter_unusable_reason()``; ``slow`` marks GPU-sized cases.
  Gating happens before fixtures are set up, so a missing vLLM is a skip, never an error.
- pytest-xdist (optional): each worker ``gwN`` makes GPU ``N % count`` its current device, so
  ``pytest -n 8 tests/`` on an 8-GPU MI355 node runs 8-wide; without GPUs it changes nothing.

Nothing here imports vLLM: collection works without it.
"""

from __future__ import annotations

import pytest

from factories.aiter.backend import BACKENDS

MARKERS = {
    "gfx950": "needs a gfx950 (MI355) GPU with an AITER build exporting the PS prefill functions",
    "requires_vllm": "needs an importable vllm package",
    "slow": "long-running case (GPU-sized); deselect with -m 'not slow'",
}


def pytest_addoption(parser):
    group = parser.getgroup("aiter", "AITER FP8 MLA prefill accuracy suite")
    group.addoption(
        "--aiter-backend",
        choices=BACKENDS,
        default="auto",
        help="aiter: real kernels (gfx950 only, skips elsewhere with the reason); emulated: "
        "factories.aiter.emulation; auto (default): aiter where usable, else emulated",
    )


def pytest_configure(config):
    # pyproject declares these too; registering here keeps --strict-markers happy when tests/
    # is run with another rootdir or ini file.
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    from factories.testing.suite_env import gfx950_or_skip, vllm_or_skip

    if item.get_closest_marker("requires_vllm") is not None:
        vllm_or_skip()
    if item.get_closest_marker("gfx950") is not None:
        gfx950_or_skip()


@pytest.fixture(scope="session", autouse=True)
def xdist_worker_gpu():
    """The GPU this xdist worker pinned (None: not a worker, or no GPU)."""
    from factories.testing.suite_env import pin_worker_device

    return pin_worker_device()


@pytest.fixture(scope="session")
def aiter_backend(request):
    """The AITER the suite runs (``factories.aiter.backend.Backend``), per ``--aiter-backend``."""
    from factories.aiter.backend import select_backend

    option = request.config.getoption("--aiter-backend")
    try:
        return select_backend(option)
    except LookupError as exc:
        pytest.skip(f"--aiter-backend=aiter: {exc}")


@pytest.fixture(scope="session")
def backend_cu_count(aiter_backend):
    """``cu_for(case_cu)``: the CU count a case plans for. The emulation plans for the case's
    count (small counts force splits); the real planner always uses the device's own."""
    import torch

    real_cu = None
    if not aiter_backend.is_emulated:
        real_cu = torch.cuda.get_device_properties(
            torch.cuda.current_device()
        ).multi_processor_count

    def cu_for(case_cu: int) -> int:
        return case_cu if real_cu is None else real_cu

    return cu_for
