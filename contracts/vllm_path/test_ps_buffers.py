"""PS buffers pinned: one table (factories.ps_contract) against every place the buffers live."""

from __future__ import annotations

import pytest
import torch

from factories.builders import make_builder, make_prefill_batch
from factories.pipeline import Limits, build_ps_plan, init_ps_buffers
from factories.ps_contract import PS_BUFFERS, PsDims


@pytest.mark.parametrize("num_heads", [12, 16, 24, 32, 128])
def test_builder_allocates_and_attaches_the_table(fp8_env, aiter_mla, cu_count, device, num_heads):
    batch = make_prefill_batch([300, 1, 777], num_decodes=2, device=device)
    builder = make_builder(num_heads)
    limits = Limits(max_num_reqs=4, max_prefill_qlen=1024, max_num_batched_tokens=2048)
    init_ps_buffers(builder, limits, device)
    width = aiter_mla.AiterMLAHelper.get_fp8_prefill_num_heads(num_heads)
    dims = PsDims(limits.max_num_reqs, width, limits.max_prefill_qlen, 256, cu_count)
    staged = [b for b in PS_BUFFERS if b.planner_writes]
    for buf in PS_BUFFERS:
        tensor = getattr(builder, buf.builder_attr)
        assert (tuple(tensor.shape), tensor.dtype, tensor.device.type) == (
            buf.expected_shape(dims), buf.dtype, device.type), buf.name
    assert [t.data_ptr() for t in builder._fp8_ps_device_outputs] == [
        getattr(builder, b.builder_attr).data_ptr() for b in staged
    ]
    for slot in builder._fp8_ps_staging:
        assert [(tuple(t.shape), t.dtype, t.device.type) for t in slot] == [
            (b.expected_shape(dims), b.dtype, "cpu") for b in staged
        ]
        if torch.cuda.is_available():
            assert all(t.is_pinned() for t in slot)
    build_ps_plan(builder, batch)
    for buf in staged:
        attached = getattr(batch.metadata, buf.metadata_field)
        assert attached.data_ptr() == getattr(builder, buf.builder_attr).data_ptr(), buf.name
