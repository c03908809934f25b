"""vLLM's global workspace manager, scoped: init, (reserve), lock, and always reset.

The FP8 prefill path reserves its scratch in ``_init_fp8_prefill_ps_buffers`` and draws it in
``_mla_fp8_prefill_attn``.  ``GPUModelRunner`` locks the workspace after warm-up, so a forward
that asks for more than the builder reserved fails in serving; locking before the forward turns
that into a test failure.  The manager is process-global, so the session must reset it even
when the test fails, or the next test inherits a locked, oversized workspace.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch


def workspace_device() -> torch.device:
    """``cuda`` wherever torch has an accelerator, ROCm included, else ``cpu``.

    On ROCm, PyTorch's HIP build exposes the GPU as ``torch.device("cuda")`` (HIP is mapped onto
    the CUDA device type), which is why vLLM's own tests say ``cuda`` on MI355.
    """
    return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")


@contextlib.contextmanager
def workspace_session(device: torch.device | None = None) -> Iterator[object]:
    """Initialise vLLM's workspace manager for the block; reset it on every exit path."""
    from vllm.v1.worker.workspace import (
        current_workspace_manager,
        init_workspace_manager,
        is_workspace_manager_initialized,
        reset_workspace_manager,
    )

    if is_workspace_manager_initialized():
        raise RuntimeError(
            "a vLLM workspace manager is already initialised; another test leaked it "
            "(use factories.stubs.workspace.workspace_session, which always resets)"
        )
    init_workspace_manager(device or workspace_device())
    try:
        yield current_workspace_manager()
    finally:
        reset_workspace_manager()


def lock() -> None:
    """Lock the workspace as ``GPUModelRunner`` does after warm-up: growth then raises."""
    from vllm.v1.worker.workspace import lock_workspace

    lock_workspace()


def reserved_bytes() -> int:
    """Bytes the current workspace holds (all ubatch/lane slots)."""
    from vllm.v1.worker.workspace import current_workspace_manager

    manager = current_workspace_manager()
    total = 0
    for ws in getattr(manager, "_current_workspaces", []) or []:
        if ws is not None:
            total += ws.numel() * ws.element_size()
    return total
