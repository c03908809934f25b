"""Plan validity: the plan vLLM attaches passes every documented invariant, checked against
what the *kernel* requires (granularities 1/256/128/1, causal), not what vLLM asked for."""

from __future__ import annotations

import pytest

from factories.stubs.builders import make_prefill_batch
from factories.stubs.pipeline import PLAN_BATCHES, Limits, attached_plan_violations


@pytest.mark.parametrize("cu_count", [256, 304, 80], indirect=True, ids=lambda c: f"cu{c}")
@pytest.mark.parametrize("num_heads", [12, 16, 24, 32, 128])
@pytest.mark.parametrize("name", sorted(PLAN_BATCHES))
def test_attached_plan_is_valid(
    plan_batch, aiter_mla, aiter_call_sites, device, cu_count, num_heads, name
):
    lens, decodes = PLAN_BATCHES[name]
    batch = make_prefill_batch(lens, num_decodes=decodes, device=device)
    limits = Limits(len(lens) + 2, max(lens) + 100, sum(lens) + 300)
    builder = plan_batch(num_heads, batch, limits)
    findings = attached_plan_violations(aiter_mla, builder, batch, limits, cu_count)
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
    checks = {
        f.check for f in attached_plan_violations(aiter_mla, builder, batch, limits, cu_count)
    }
    assert checks, "a plan on 64-token kv boundaries passed the kernel's invariants"
