"""The FP8 prefill path driven through vLLM's real entry points, with the specs' call shapes.

``init_ps_buffers`` -> ``build_ps_plan`` -> ``run_forward`` call exactly the methods, in the
order and with the argument names, that ``factories.stubs.specs`` declares (and the drift check
audits), so the audited stub and the executed stub cannot diverge.
"""

from __future__ import annotations

from typing import Any

import attrs
import torch

from factories.aiter.layout import PlannerSettings
from factories.aiter.ps_buffers import PS_BUFFERS
from factories.aiter.validator import validate_plan
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


#: Prefill batches whose attached PS plan the contracts validate (prefill lengths, decodes
#: ahead of them): one request, ragged lengths behind decodes, one long beside short ones.
PLAN_BATCHES = {
    "one-request": ([1000], 0),
    "ragged-decodes-ahead": ([300, 1, 777, 256, 20], 3),
    "long-beside-short": ([5000] + [17] * 7, 2),
}


def attached_plan_violations(
    aiter_mla: Any, builder: Any, batch: PrefillBatch, limits: Limits, cu_count: int
) -> tuple:
    """What is wrong with the PS plan vLLM attached to ``batch`` (its builder's work metadata
    and the metadata's PS fields), checked against what the kernel requires (granularities,
    causal), not what vLLM asked the planner for: ``validate_plan``'s violations, () if none."""
    md = batch.metadata
    width = aiter_mla.AiterMLAHelper.get_fp8_prefill_num_heads(builder.num_heads)
    buffers = [builder.fp8_ps_work_metadata] + [
        getattr(md, b.metadata_field) for b in PS_BUFFERS[1:]
    ]
    qo = batch.qo_indptr_cpu
    return validate_plan(
        *buffers,
        qo_indptr=qo,
        kv_indptr=md.fp8_prefill_kv_indptr,
        context_lens=qo[1:] - qo[:-1],
        num_heads_k=width,
        settings=PlannerSettings.for_fp8_prefill_kernel(is_causal=True),
        cu_count=cu_count,
        partial_rows=md.fp8_prefill_num_partial_tiles * 256,
        max_qlen=limits.max_prefill_qlen,
    )
