"""The emulated device: how many CUs the planner plans for, and which fp8 the arch speaks.

Why this exists: AITER reads the CU count from the *current HIP device*, both in Python
(``get_ps_metadata_info_v1``: ``torch.cuda.get_device_properties(...).multi_processor_count``) and
in C++ (``hipGetDeviceProperties`` in ``v1_2_host.cuh``), and it has no parameter for it. The plan
(how many TGs, how tiles are split, how big the buffers are) depends on that number, so an offline
emulation has to make it an explicit setting. We keep it in a :class:`contextvars.ContextVar` so it
is scoped (``with emulated_cu_count(80): ...``), thread- and task-safe, and visible in one place;
it is the only mutable state of the emulation.

Default 256 is the MI350X/MI355X (gfx950) CU count, the only arch the PS prefill kernel exists for.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

import numpy as np
import torch

#: The arch whose kernels are emulated. The PS prefill kernels exist only for gfx950 (§3.2).
EMULATED_ARCH = "gfx950"

#: CU count of MI350X/MI355X (gfx950); the default of the emulation.
DEFAULT_CU_COUNT = 256

#: Known CU counts, for tests that want realistic machines rather than magic numbers.
KNOWN_CU_COUNTS: dict[str, int] = {"MI355X": 256, "MI350X": 256, "MI300X": 304}

_CU_COUNT: contextvars.ContextVar[int] = contextvars.ContextVar(
    "aiter_emulated_cu_count", default=DEFAULT_CU_COUNT
)


def current_cu_count() -> int:
    """The CU count the emulated planner, info function and reduce use right now."""
    return _CU_COUNT.get()


@contextlib.contextmanager
def emulated_cu_count(n: int) -> Iterator[int]:
    """Plan for a device with ``n`` CUs inside the ``with`` block (restored on exit)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"CU count must be a positive int, got {n!r}")
    token = _CU_COUNT.set(n)
    try:
        yield n
    finally:
        _CU_COUNT.reset(token)


def fp8_dtype() -> torch.dtype:
    """``aiter.dtypes.fp8`` on the emulated arch: ``float8_e4m3fn`` on gfx950.

    AITER's torch->aiter dtype map holds only the arch-native fp8 (dtypes.py:48), so on gfx950 an
    ``e4m3fnuz`` tensor is rejected ("Unsupported dtype"), contrary to the comment at
    attention.py:1413 that claims both variants collapse to one id.
    """
    return torch.float8_e4m3fn


def host_ints(t: torch.Tensor) -> np.ndarray:
    """An integer plan buffer as int64 numpy on the host.

    Plans live on the device; the emulated kernels and the plan readers walk them row by row,
    which only pays on the host. One helper, so every reader widens to int64 the same way.
    """
    return t.detach().to("cpu").numpy().astype(np.int64, copy=False)
