"""The FP8 prefill path driven through vLLM's real entry points, with the specs' call shapes.

``init_ps_buffers`` -> ``build_ps_plan`` -> ``run_forward`` call exactly the methods, in the
order and with the argument names, that ``factories.stubs.specs`` declares (and the drift check
audits), so the audited stub and the executed stub cannot diverge.
"""

from __future__ import annotations

from typing import Any

import attrs
import torch

from factories.stubs.builders import PrefillBatch
from factories.stubs.specs import BUILDER_FP8_PREFILL, IMPL_FP8_PREFILL, CallSpec


@attrs.frozen
class Limits:
    """What ``__init__`` would pass: the builder sizes every buffer and reservation from these."""

    max_num_reqs: int
    max_prefill_qlen: int
    max_num_batched_tokens: int

    @classmethod
    def for_batch(cls, batch: PrefillBatch) -> Limits:
        """The tightest limits that admit ``batch`` (as vLLM's seed test sizes them)."""
        return cls(len(batch.prefill_lens), batch.max_prefill_len, batch.total_prefill_tokens)


def _call(obj: Any, spec: CallSpec, *args: Any, **kwargs: Any) -> Any:
    if len(args) != len(spec.positional) or tuple(kwargs) != spec.keywords:
        raise AssertionError(f"call of {spec.method} does not match its spec {spec}")
    return getattr(obj, spec.method)(*args, **kwargs)


def init_ps_buffers(
    builder: Any,
    limits: Limits,
    device: torch.device,
    attn_out_dtype: torch.dtype = torch.bfloat16,
) -> None:
    _call(
        builder,
        BUILDER_FP8_PREFILL.calls[0],
        max_num_reqs=limits.max_num_reqs,
        max_prefill_qlen=limits.max_prefill_qlen,
        max_num_batched_tokens=limits.max_num_batched_tokens,
        attn_out_dtype=attn_out_dtype,
        device=device,
    )


def build_ps_plan(builder: Any, batch: PrefillBatch) -> None:
    _call(builder, BUILDER_FP8_PREFILL.calls[1], batch.metadata, batch.common)


def run_forward(
    impl: Any,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    batch: PrefillBatch,
    out: torch.Tensor,
) -> None:
    _call(impl, IMPL_FP8_PREFILL.calls[0], q, k, v, batch.metadata, out)
