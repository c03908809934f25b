# Test data for contracts/test_stub_audit.py (not collected: the name has no test_ prefix).
# A seed-style FP8 MLA prefill test as vLLM 0.28.0 shipped it (PR #51457): the impl stub sets
# five fields, the builder stub two, and _init_fp8_prefill_ps_buffers gets four keywords.
from types import SimpleNamespace

import torch
from aiter import mla_prefill_ps_asm_fwd, mla_reduce_v1
from vllm.v1.attention.backends.mla.rocm_aiter_mla import (
    AiterMLAImpl,
    AiterMLAMetadataBuilder,
)

NUM_HEADS = 16
V_HEAD_DIM = 128
SCALE = 192**-0.5


def _make_impl():
    impl = object.__new__(AiterMLAImpl)
    impl.num_heads = NUM_HEADS
    impl.v_head_dim = V_HEAD_DIM
    impl.scale = SCALE
    impl._mla_prefill_ps_asm_fwd = mla_prefill_ps_asm_fwd
    impl._mla_reduce_v1 = mla_reduce_v1
    return impl


def _build_prefill_metadata(seq_lens, device):
    qo_indptr_cpu = torch.zeros(len(seq_lens) + 1, dtype=torch.int32)
    qo_indptr_cpu[1:] = torch.tensor(seq_lens, dtype=torch.int32).cumsum(0)
    qo_indptr = qo_indptr_cpu.to(device)
    total_q = int(qo_indptr_cpu[-1].item())
    max_q = max(seq_lens)
    builder = object.__new__(AiterMLAMetadataBuilder)
    builder.num_heads = NUM_HEADS
    builder.mla_dims = SimpleNamespace(v_head_dim=V_HEAD_DIM)
    builder._init_fp8_prefill_ps_buffers(
        max_num_reqs=len(seq_lens),
        max_prefill_qlen=max_q,
        max_num_batched_tokens=total_q,
        device=device,
    )
    prefill = SimpleNamespace(query_start_loc=qo_indptr, max_query_len=max_q)
    metadata = SimpleNamespace(prefill=prefill, num_decodes=0)
    common = SimpleNamespace(query_start_loc_cpu=qo_indptr_cpu)
    builder._build_fp8_prefill_ps_metadata(metadata, common)
    return metadata, total_q


def test_fp8_prefill_matches_reference():
    device = torch.device("cuda")
    metadata, total_q = _build_prefill_metadata([128], device)
    q = torch.randn(total_q, NUM_HEADS, 192, dtype=torch.bfloat16, device=device)
    k = torch.randn(total_q, NUM_HEADS, 192, dtype=torch.bfloat16, device=device)
    v = torch.randn(total_q, NUM_HEADS, V_HEAD_DIM, dtype=torch.bfloat16, device=device)
    out = torch.zeros(total_q, NUM_HEADS * V_HEAD_DIM, dtype=torch.bfloat16, device=device)
    impl = _make_impl()
    impl._mla_fp8_prefill_attn(q, k, v, metadata, out)
