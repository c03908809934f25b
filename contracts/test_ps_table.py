"""The PS buffer table (factories.aiter.ps_buffers) against AITER's sizing function: the emulated
one always, the live one where real AITER runs.  vLLM's side of the table is pinned in
contracts/vllm_path/test_ps_buffers.py."""

from __future__ import annotations

import pytest
import torch

from factories.aiter.ps_buffers import PS_BUFFERS, PsDims, as_shape
from factories.aiter.revision import CONTRACTS, AiterContract


@pytest.mark.parametrize("contract", CONTRACTS, ids=str)
@pytest.mark.parametrize("cu", [8, 80, 256, 304])
@pytest.mark.parametrize(
    "batch, heads, max_qlen", [(1, 16, 8192), (4, 1, 1200), (3, 32, 700), (16, 128, 20000)]
)
def test_emulated_info_matches_the_table(batch, heads, max_qlen, cu, contract):
    import factories.aiter.emulation as aiter

    dims = PsDims(batch, heads, max_qlen, 256, cu, contract)
    with aiter.emulated_cu_count(cu), aiter.aiter_contract(contract):
        info = aiter.get_ps_metadata_info_v1(
            batch_size=batch, num_head_k=heads, max_qlen=max_qlen, qlen_granularity=256
        )
    assert len(info) == len(PS_BUFFERS)
    for buf, (size, dtype) in zip(PS_BUFFERS, info):
        assert (buf.name, as_shape(size), dtype) == (buf.name, buf.expected_shape(dims), buf.dtype)


@pytest.mark.parametrize(
    "contract, partials",
    [(AiterContract.PRE_3606, (1295, 512)), (AiterContract.PR_3606, (275, 47))],
    ids=str,
)
def test_documented_examples(contract, partials):
    """The two examples of the contract doc (cu=256) come out of the table: §1 before
    ROCm/aiter#3606, §8.2 after it (only max_partials differs)."""
    d = PsDims(4, 1, 1200, 256, 256, contract)
    assert (d.max_works, d.q_tiles + 1, d.q_tiles, d.max_partials) == (1295, 21, 20, partials[0])
    d = PsDims(1, 16, 8192, 256, 256, contract)
    assert (d.max_works, d.q_tiles + 1, d.max_partials) == (8192, 33, partials[1])


def test_live_info_matches_the_table_where_real_aiter_exists():
    from factories.aiter.backend import real_aiter_unusable_reason

    reason = real_aiter_unusable_reason()
    if reason is not None:
        pytest.skip(reason)
    import aiter

    cu = torch.cuda.get_device_properties(0).multi_processor_count
    dims = PsDims(2, 16, 1000, 256, cu)
    info = aiter.get_ps_metadata_info_v1(
        batch_size=2, num_head_k=16, max_qlen=1000, qlen_granularity=256
    )
    for buf, (size, dtype) in zip(PS_BUFFERS, info):
        assert (as_shape(size), dtype) == (buf.expected_shape(dims), buf.dtype), buf.name
