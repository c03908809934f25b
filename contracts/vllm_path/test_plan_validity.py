"""Plan validity: the plan vLLM attaches passes every documented invariant, checked against
what the *kernel* requires (granularities 1/256/128/1, causal), not what vLLM asked for."""

from __future__ import annotations

import pytest

from factories.aiter.layout import PlannerSettings
from factories.aiter.ps_buffers import PS_BUFFERS
from factories.aiter.validator import validate_plan
from factories.stubs.builders import make_prefill_batch
from factories.stubs.pipeline import Limits

BATCHES = {
    "one-request": ([1000], 0),
    "ragged-decodes-ahead": ([300, 1, 777, 256, 20], 3),
    "long-beside-short": ([5000] + [17] * 7, 2),
}


def attached_plan_findings(aiter_mla, builder, batch, limits, cu_count):
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


@pytest.mark.parametrize("cu_count", [256, 304, 80], indirect=True, ids=lambda c: f"cu{c}")
@pytest.mark.parametrize("num_heads", [12, 16, 24, 32, 128])
@pytest.mark.parametrize("name", sorted(BATCHES))
def test_attached_plan_is_valid(
    plan_batch, aiter_mla, aiter_call_sites, device, cu_count, num_heads, name
):
    lens, decodes = BATCHES[name]
    batch = make_prefill_batch(lens, num_decodes=decodes, device=device)
    limits = Limits(len(lens) + 2, max(lens) + 100, sum(lens) + 300)
    builder = plan_batch(num_heads, batch, limits)
    findings = attached_plan_findings(aiter_mla, builder, batch, limits, cu_count)
    planned_at = aiter_call_sites.get("get_ps_metadata_v1", "?")
    assert findings == (), f"the plan made at {planned_at} is invalid: {findings}"
    assert batch.metadata.fp8_prefill_kv_indices.tolist() == list(range(sum(lens)))


@pytest.mark.selfcheck
@pytest.mark.parametrize("cu_count", [80], indirect=True, ids=["cu80"])
def test_kvlen_granularity_64_is_caught(plan_batch, aiter_mla, device, cu_count, mutant):
    """A plan split on 64-token boundaries breaks the kernel's unmasked 128-token loop."""
    module = mutant(("        kvlen_granularity = 128\n", "        kvlen_granularity = 64\n"))
    batch = make_prefill_batch([3000, 700], num_decodes=1, device=device)
    limits = Limits.for_batch(batch)
    builder = plan_batch(16, batch, limits, builder_cls=module.AiterMLAMetadataBuilder)
    checks = {f.check for f in attached_plan_findings(aiter_mla, builder, batch, limits, cu_count)}
    assert checks, "a plan on 64-token kv boundaries passed the kernel's invariants"
