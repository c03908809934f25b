"""Emulated AITER: the PS FP8 MLA prefill planner, both kernels, and a plan validator.

Importable as ``aiter`` (``sys.modules["aiter"] = factories.aiter.emulation``): the package's
top level exposes exactly AITER's four PS-prefill functions with AITER's *current* parameter
names, order and defaults (ROCm/aiter e4048607a5; pinned in :mod:`.signatures`):

- ``get_ps_metadata_info_v1(batch_size, num_head_k, max_qlen, qlen_granularity=256)``
- ``get_ps_metadata_v1(seqlens_qo_indptr, pages_kv_indptr, context_lens, gqa_ratio, num_heads_k,
  work_metadata_ptrs, work_indptr, work_info, reduce_indptr, reduce_final_map, reduce_partial_map,
  qhead_granularity=1, qlen_granularity=256, kvlen_granularity=16, block_size=16, is_causal=True)``
  and, under the ``3606`` contract revision (ROCm/aiter#3606), a trailing ``need_lse=False``
- ``mla_prefill_ps_asm_fwd(Q, K, V, qo_indptr, kv_indptr, kv_page_indices, work_indptr,
  work_info_set, max_seqlen_q, softmax_scale, is_causal, splitData, splitLse, output,
  q_scale=None, k_scale=None, v_scale=None)``
- ``mla_reduce_v1(partial_output, partial_lse, reduce_indptr, reduce_final_map, reduce_partial_map,
  max_seqlen_q, num_kv_splits, final_output, final_lse=None)``

One job per module: ``planner`` (the two planner functions, a re-implementation of AITER's host
planner), ``kernels`` (the PS prefill kernel and the reduce), ``arithmetic`` (the kernels'
rounding as a parameter, and the faults the kill matrix injects), ``device_model`` (the CU count
and the arch's fp8).

Why an emulation: none of these exist without a gfx950 GPU, yet vLLM's glue around them (buffer
sizing, positional calls, partial slots, which rows get an LSE, scale tensors, fp8 flavour) is
where regressions happen. The CU count that AITER takes from the current device is an explicit
setting here (:func:`emulated_cu_count`, default 256 = MI355X). The kernels' arithmetic is one too
(:func:`kernel_arithmetic` with a :class:`KernelArithmetic` or a name of
:data:`ARITHMETIC_VARIANTS`; default: fp32 P, the shipped emulation), because the device's P
rounding is an assumption that calibration and fingerprinting must vary. Both are context
variables, read by the functions at call time; there is no other state.

Which contract revision the functions follow (``pre-3606`` or ``3606``: ``need_lse``, the reduce of
single partials, ``max_partials``) is a third context variable, :func:`aiter_contract`
(:mod:`factories.aiter.revision`).

Helpers (not part of AITER's surface): :class:`AiterContract`, :func:`aiter_contract`,
:func:`current_contract`, :class:`PlannerSettings`, :func:`emulated_cu_count`,
:func:`current_cu_count`, :func:`fp8_dtype`, :class:`KernelArithmetic`,
:data:`ARITHMETIC_VARIANTS`, :func:`kernel_arithmetic`, :func:`current_arithmetic`. The plan
validator (:mod:`factories.aiter.validator`) and batch planning (:mod:`factories.aiter.batch`)
live beside this package because they judge real AITER plans too.
"""

from __future__ import annotations

from factories.aiter.layout import AITER_FUNCTIONS as AITER_FUNCTIONS
from factories.aiter.layout import PlannerSettings
from factories.aiter.revision import AiterContract, aiter_contract, current_contract

from .arithmetic import (
    ARITHMETIC_VARIANTS,
    DEFAULT_ARITHMETIC,
    KernelArithmetic,
    current_arithmetic,
    kernel_arithmetic,
)
from .device_model import (
    DEFAULT_CU_COUNT,
    EMULATED_ARCH,
    current_cu_count,
    emulated_cu_count,
    fp8_dtype,
)
from .kernels import (
    PreconditionError,
    UnsupportedDtypeError,
    mla_prefill_ps_asm_fwd,
    mla_reduce_v1,
)
from .planner import get_ps_metadata_info_v1, get_ps_metadata_v1

#: Marks this module as the emulation, so code that finds it under ``sys.modules["aiter"]`` can
#: tell it from the real package (the real one has no such attribute).
IS_AITER_EMULATION = True

__all__ = [
    "ARITHMETIC_VARIANTS",
    "DEFAULT_ARITHMETIC",
    "DEFAULT_CU_COUNT",
    "EMULATED_ARCH",
    "IS_AITER_EMULATION",
    "AiterContract",
    "KernelArithmetic",
    "PlannerSettings",
    "PreconditionError",
    "UnsupportedDtypeError",
    "aiter_contract",
    "current_arithmetic",
    "current_contract",
    "current_cu_count",
    "emulated_cu_count",
    "fp8_dtype",
    "get_ps_metadata_info_v1",
    "get_ps_metadata_v1",
    "kernel_arithmetic",
    "mla_prefill_ps_asm_fwd",
    "mla_reduce_v1",
]
