"""Emulated AITER: the PS FP8 MLA prefill planner, both kernels, and a plan validator.

Importable as ``aiter`` (``sys.modules["aiter"] = factories.aiter_emulation``): the package's
top level exposes exactly AITER's four PS-prefill functions with AITER's *current* parameter
names, order and defaults (ROCm/aiter e4048607a5; pinned in :mod:`.signatures`):

- ``get_ps_metadata_info_v1(batch_size, num_head_k, max_qlen, qlen_granularity=256)``
- ``get_ps_metadata_v1(seqlens_qo_indptr, pages_kv_indptr, context_lens, gqa_ratio, num_heads_k,
  work_metadata_ptrs, work_indptr, work_info, reduce_indptr, reduce_final_map, reduce_partial_map,
  qhead_granularity=1, qlen_granularity=256, kvlen_granularity=16, block_size=16, is_causal=True)``
- ``mla_prefill_ps_asm_fwd(Q, K, V, qo_indptr, kv_indptr, kv_page_indices, work_indptr,
  work_info_set, max_seqlen_q, softmax_scale, is_causal, splitData, splitLse, output,
  q_scale=None, k_scale=None, v_scale=None)``
- ``mla_reduce_v1(partial_output, partial_lse, reduce_indptr, reduce_final_map, reduce_partial_map,
  max_seqlen_q, num_kv_splits, final_output, final_lse=None)``

Why an emulation: none of these exist without a gfx950 GPU, yet vLLM's glue around them (buffer
sizing, positional calls, partial slots, which rows get an LSE, scale tensors, fp8 flavour) is
where regressions happen. The CU count that AITER takes from the current device is an explicit
setting here (:func:`emulated_cu_count`, default 256 = MI355X); it is the only state.

Helpers (not part of AITER's surface): :func:`validate_plan`, :func:`reference_attention`,
:class:`PlannerSettings`, :func:`plan_batch`, :func:`emulated_cu_count`, :func:`current_cu_count`, :func:`fp8_dtype`.
"""

from __future__ import annotations

from .batch import PsPlan, plan_batch
from .device_model import DEFAULT_CU_COUNT, EMULATED_ARCH, current_cu_count, emulated_cu_count, fp8_dtype
from .kernels import PreconditionError, UnsupportedDtypeError, mla_prefill_ps_asm_fwd, mla_reduce_v1
from .planner import PlannerSettings, get_ps_metadata_info_v1, get_ps_metadata_v1
from .reference import reference_attention
from .validator import Finding, validate_plan

#: Marks this module as the emulation, so code that finds it under ``sys.modules["aiter"]`` can
#: tell it from the real package (the real one has no such attribute).
IS_AITER_EMULATION = True

#: AITER's four PS-prefill functions, the surface this package promises.
AITER_FUNCTIONS = (
    "get_ps_metadata_info_v1",
    "get_ps_metadata_v1",
    "mla_prefill_ps_asm_fwd",
    "mla_reduce_v1",
)

__all__ = [
    *AITER_FUNCTIONS,
    "DEFAULT_CU_COUNT",
    "EMULATED_ARCH",
    "IS_AITER_EMULATION",
    "Finding",
    "PlannerSettings",
    "PsPlan",
    "PreconditionError",
    "UnsupportedDtypeError",
    "current_cu_count",
    "emulated_cu_count",
    "fp8_dtype",
    "plan_batch",
    "reference_attention",
    "validate_plan",
]
