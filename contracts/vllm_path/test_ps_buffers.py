"""PS buffers pinned: one table (factories.aiter.ps_buffers) against every place the buffers
live."""

from __future__ import annotations

import pytest
import torch

from factories.aiter.ps_buffers import PS_BUFFERS, PsDims, TableRule
from factories.aiter.revision import CONTRACTS, aiter_contract
from factories.analysis.findings import Problem
from factories.stubs.builders import make_builder, make_prefill_batch
from factories.stubs.pipeline import Limits, build_ps_plan, init_ps_buffers


def table_problems(aiter_mla, cu_count, device, num_heads, builder_cls=None) -> list[Problem]:
    """Where the builder's buffers (device, pinned staging, attached metadata) leave the table."""
    batch = make_prefill_batch([300, 1, 777], num_decodes=2, device=device)
    builder = make_builder(num_heads, builder_cls=builder_cls)
    limits = Limits(max_num_reqs=4, max_prefill_qlen=1024, max_num_batched_tokens=2048)
    init_ps_buffers(builder, limits, device)
    width = aiter_mla.AiterMLAHelper.get_fp8_prefill_num_heads(num_heads)
    dims = PsDims(limits.max_num_reqs, width, limits.max_prefill_qlen, 256, cu_count)
    staged = [b for b in PS_BUFFERS if b.planner_writes]
    layouts = [
        buf.layout_problem("device", getattr(builder, buf.builder_attr), dims, device.type)
        for buf in PS_BUFFERS
    ]
    problems = [p for p in layouts if p is not None]
    if [t.data_ptr() for t in builder._fp8_ps_device_outputs] != [
        getattr(builder, b.builder_attr).data_ptr() for b in staged
    ]:
        problems.append(
            Problem(
                TableRule.PLANNER_OUTPUTS,
                "_fp8_ps_device_outputs",
                "not the planner's device buffers in order",
            )
        )
    for i, slot in enumerate(builder._fp8_ps_staging):
        for tensor, buf in zip(slot, staged, strict=True):
            layout = buf.layout_problem(f"staging[{i}]", tensor, dims, "cpu")
            problems += [layout] if layout else []
            if torch.cuda.is_available() and not tensor.is_pinned():
                problems.append(Problem(TableRule.PINNED, f"staging[{i}] {buf.name}", "not pinned"))
    if problems:
        return problems  # a planner handed wrong buffers would refuse (or corrupt) them
    build_ps_plan(builder, batch)
    for buf in staged:
        attached = getattr(batch.metadata, buf.metadata_field)
        if attached.data_ptr() != getattr(builder, buf.builder_attr).data_ptr():
            problems.append(
                Problem(
                    TableRule.ATTACHED,
                    f"metadata.{buf.metadata_field}",
                    f"is not builder.{buf.builder_attr}",
                )
            )
    return problems


@pytest.mark.parametrize("contract", CONTRACTS, ids=str)
@pytest.mark.parametrize("num_heads", [12, 16, 24, 32, 128])
def test_builder_allocates_and_attaches_the_table(
    fp8_env, aiter_mla, cu_count, device, num_heads, contract
):
    """Under each AITER contract revision (the table's reduce_partial_map length follows it)."""
    with aiter_contract(contract):
        assert table_problems(aiter_mla, cu_count, device, num_heads) == []


@pytest.mark.parametrize(
    "old, new, expected",
    [
        # the pre-PR #51040 sizing: maps built for the unpadded head count
        (
            "        num_head_k = AiterMLAHelper.get_fp8_prefill_num_heads(self.num_heads)\n"
            "        v_head_dim = self.mla_dims.v_head_dim\n",
            "        num_head_k = self.num_heads\n        v_head_dim = self.mla_dims.v_head_dim\n",
            (TableRule.LAYOUT, "device work_info"),
        ),
        (
            "            dtype=reduce_partial_map_dtype,\n",
            "            dtype=torch.int64,\n",
            (TableRule.LAYOUT, "device reduce_partial_map"),
        ),
    ],
    ids=["unpadded-width", "partial-map-int64"],
)
@pytest.mark.selfcheck
def test_table_catches_a_builder_that_leaves_it(
    fp8_env, aiter_mla, cu_count, device, mutant, old, new, expected
):
    module = mutant((old, new))
    problems = table_problems(aiter_mla, cu_count, device, 24, module.AiterMLAMetadataBuilder)
    assert expected in {(p.kind, p.subject) for p in problems}, problems
