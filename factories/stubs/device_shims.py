"""One explicit context manager for the device calls the FP8 prefill path makes.

On CPU-only torch the builder trips on exactly four device calls (vllm-fp8-prefill-surface.md,
section 3): pinned host memory, ``torch.cuda.Event``, ``current_platform.num_compute_units()``
and ``torch.accelerator.empty_cache()`` in workspace growth.  ``emulated_device`` replaces them,
and only them, for the duration of a ``with`` block.  ``DEVICE_CALLS`` lists what it covers; a
contract compares it with the analyzer's external-call output, so a *new* device dependency in
vLLM fails loudly instead of being patched silently.

``num_compute_units`` is replaced on every machine (GPU included): the emulated planner plans for
the emulated CU count, and vLLM's reservation must be computed from the same number.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import attrs
import torch


@attrs.frozen
class DeviceCall:
    """A device-touching call: dotted target (as the analyzer resolves it) and, optionally,
    a keyword that makes an otherwise harmless call device-bound (``pin_memory``)."""

    target: str
    keyword: str | None = None
    why: str = ""


#: The device calls the three FP8 prefill methods reach, each with how it is handled here.
DEVICE_CALLS: tuple[DeviceCall, ...] = (
    DeviceCall("torch.empty", "pin_memory", "pinned host staging; dropped on CPU-only torch"),
    DeviceCall("torch.cuda.Event", None, "staging-slot events; a host-side stand-in on CPU"),
    DeviceCall(
        "vllm.platforms.current_platform.num_compute_units",
        None,
        "reservation term; pinned to the emulated CU count",
    ),
    DeviceCall(
        "torch.accelerator.empty_cache",
        None,
        "workspace growth; a no-op on CPU-only torch",
    ),
)

#: Device-looking calls that work unchanged on CPU-only torch (they need no shim).
CPU_SAFE_CALLS: tuple[DeviceCall, ...] = (
    DeviceCall("vllm.platforms.current_platform.fp8_dtype", None, "pure: returns a dtype"),
)


def is_device_call(target: str, keywords: tuple[str, ...]) -> bool:
    """The rule the contract applies to the analyzer's call list to spot device dependencies."""
    prefixes = (
        "torch.cuda.",
        "torch.accelerator.",
        "torch.xpu.",
        "vllm.platforms.current_platform.",
    )
    return (
        target.startswith(prefixes)
        or "pin_memory" in keywords
        or target
        in (
            "torch.Stream",
            "torch.Event",
        )
    )


class HostEvent:
    """``torch.cuda.Event`` for a host-only run: work is already complete when recorded."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        self.recorded = 0

    def record(self, stream: object = None) -> None:
        self.recorded += 1

    def synchronize(self) -> None:
        return None

    def query(self) -> bool:
        return True

    def wait(self, stream: object = None) -> None:
        return None


@contextlib.contextmanager
def emulated_device(cu_count: int) -> Iterator[int]:
    """Run vLLM's FP8 prefill glue on this machine as if it had ``cu_count`` compute units.

    Inside the block the emulated AITER plans for ``cu_count`` CUs and vLLM's reservation sees
    the same number.  Without an accelerator, pinned allocations, CUDA events and workspace
    cache flushes are replaced by host equivalents; with one, they stay real.
    """
    from unittest import mock

    from vllm.platforms import current_platform

    from factories.aiter.emulation import emulated_cu_count

    accelerator = torch.cuda.is_available()
    with contextlib.ExitStack() as stack:
        stack.enter_context(emulated_cu_count(cu_count))
        stack.enter_context(
            mock.patch.object(current_platform, "num_compute_units", lambda device_id=0: cu_count)
        )
        if not accelerator:
            real_empty = torch.empty

            def empty_without_pinning(*args, pin_memory: bool = False, **kwargs):
                return real_empty(*args, **kwargs)

            stack.enter_context(mock.patch.object(torch, "empty", empty_without_pinning))
            stack.enter_context(mock.patch.object(torch.cuda, "Event", HostEvent))
            stack.enter_context(mock.patch.object(torch.accelerator, "empty_cache", lambda: None))
        yield cu_count
