"""PS buffers pinned: one table (factories.ps_contract) against every place the buffers live."""

from __future__ import annotations

import pytest
import torch

from factories.builders import make_builder, make_prefill_batch
from factories.pipeline import Limits, build_ps_plan, init_ps_buffers
from factories.ps_contract import PS_BUFFERS, PsDims, as_shape


@pytest.mark.parametrize("cu", [8, 80, 256, 304])
@pytest.mark.parametrize("batch, heads, max_qlen", [(1, 16, 8192), (4, 1, 1200), (3, 32, 700), (16, 128, 20000)])
def test_emulated_info_matches_the_table(batch, heads, max_qlen, cu):
    import factories.aiter_emulation as aiter

    dims = PsDims(batch, heads, max_qlen, 256, cu)
    with aiter.emulated_cu_count(cu):
        info = aiter.get_ps_metadata_info_v1(batch_size=batch, num_head_k=heads, max_qlen=max_qlen, qlen_granularity=256)
    assert len(info) == len(PS_BUFFERS)
    for buf, (size, dtype) in zip(PS_BUFFERS, info):
        assert (buf.name, as_shape(size), dtype) == (buf.name, buf.expected_shape(dims), buf.dtype)


def test_documented_examples():
    """The two examples of the contract doc (cu=256) come out of the table."""
    d = PsDims(4, 1, 1200, 256, 256)
    assert (d.max_works, d.q_tiles + 1, d.q_tiles, d.max_partials) == (1295, 21, 20, 1295)
    d = PsDims(1, 16, 8192, 256, 256)
    assert (d.max_works, d.q_tiles + 1, d.max_partials) == (8192, 33, 512)


def test_live_info_matches_the_table_where_real_aiter_exists():
    from factories.aiter_backend import real_aiter_unusable_reason

    reason = real_aiter_unusable_reason()
    if reason is not None:
        pytest.skip(reason)
    import aiter

    cu = torch.cuda.get_device_properties(0).multi_processor_count
    dims = PsDims(2, 16, 1000, 256, cu)
    info = aiter.get_ps_metadata_info_v1(batch_size=2, num_head_k=16, max_qlen=1000, qlen_granularity=256)
    for buf, (size, dtype) in zip(PS_BUFFERS, info):
        assert (as_shape(size), dtype) == (buf.expected_shape(dims), buf.dtype), buf.name


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
