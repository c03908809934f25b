"""The public factories: ``make_impl``, ``make_builder``, ``make_prefill_batch``.

Each builds what vLLM's FP8 prefill entry points need and nothing else, from the stub specs in
``factories.stubs.specs``.  Before returning an ``object.__new__`` object, the factory audits its
spec against the imported class (``factories.stubs.drift``) and raises ``StubDriftError`` naming
every field vLLM reads that the spec does not set, with vLLM's file:line — before any method runs.
Arguments are checked at run time with typeguard.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import attrs
import torch
from typeguard import typechecked

from factories.aiter.layout import PREFILL_KERNEL, QK_HEAD_DIM, REDUCE_KERNEL, V_HEAD_DIM
from factories.stubs.drift import ensure_no_drift
from factories.stubs.specs import BUILDER_FP8_PREFILL, IMPL_FP8_PREFILL, StubSpec
from factories.stubs.standins import StandIn

#: DeepSeek-style MLA split of the kernel's q/k head dim: rope part and the rest.
QK_ROPE_HEAD_DIM = 64
QK_NOPE_HEAD_DIM = QK_HEAD_DIM - QK_ROPE_HEAD_DIM
KV_LORA_RANK = 512
DEFAULT_SCALE = 1.0 / math.sqrt(QK_HEAD_DIM)

#: Which AITER function each impl field holds (the spec's two kernel fields).
KERNEL_FIELDS = {
    "_mla_prefill_ps_asm_fwd": PREFILL_KERNEL,
    "_mla_reduce_v1": REDUCE_KERNEL,
}


def _aiter_mla_module() -> ModuleType:
    import vllm.v1.attention.backends.mla.rocm_aiter_mla as module

    return module


def _set_fields(obj: object, spec: StubSpec, values: dict[str, Any]) -> None:
    """Set exactly the spec's fields: the spec, not this function, is the source of truth."""
    if set(values) != spec.field_names:
        raise AssertionError(
            f"factory for {spec.class_name} sets {sorted(values)} but its spec lists "
            f"{sorted(spec.field_names)}"
        )
    for name, value in values.items():
        setattr(obj, name, value)


@typechecked
def make_impl(
    num_heads: int,
    aiter: ModuleType,
    *,
    scale: float = DEFAULT_SCALE,
    v_head_dim: int = V_HEAD_DIM,
    impl_cls: type | None = None,
) -> Any:
    """An ``AiterMLAImpl`` ready for ``_mla_fp8_prefill_attn``, kernels taken from ``aiter``.

    ``aiter`` is the real package or ``factories.aiter.emulation``; ``impl_cls`` defaults to
    vLLM's class (tests pass a mutated copy's class to prove the drift check fires).
    """
    cls = impl_cls or _aiter_mla_module().AiterMLAImpl
    ensure_no_drift(IMPL_FP8_PREFILL, cls)
    impl = object.__new__(cls)
    values: dict[str, Any] = {
        "num_heads": num_heads,
        "v_head_dim": v_head_dim,
        "scale": float(scale),
        "_fp8_prefill_one_scale": None,
    }
    values.update({field: getattr(aiter, fn) for field, fn in KERNEL_FIELDS.items()})
    _set_fields(impl, IMPL_FP8_PREFILL, values)
    return impl


@typechecked
def make_builder(
    num_heads: int,
    *,
    v_head_dim: int = V_HEAD_DIM,
    builder_cls: type | None = None,
) -> Any:
    """An ``AiterMLAMetadataBuilder`` ready for ``_init_fp8_prefill_ps_buffers``.

    ``mla_dims`` is vLLM's real ``MLADims`` dataclass with DeepSeek-style dimensions.
    """
    module = _aiter_mla_module()
    cls = builder_cls or module.AiterMLAMetadataBuilder
    ensure_no_drift(BUILDER_FP8_PREFILL, cls)
    from vllm.model_executor.layers.attention.mla_attention import MLADims

    builder = object.__new__(cls)
    dims = MLADims(
        q_lora_rank=None,
        kv_lora_rank=KV_LORA_RANK,
        qk_nope_head_dim=QK_NOPE_HEAD_DIM,
        qk_rope_head_dim=QK_ROPE_HEAD_DIM,
        v_head_dim=v_head_dim,
    )
    _set_fields(builder, BUILDER_FP8_PREFILL, {"num_heads": num_heads, "mla_dims": dims})
    return builder


@attrs.frozen
class PrefillBatch:
    """A batch as the builder sees it: ``num_decodes`` one-token decodes, then the prefills.

    ``metadata``/``common`` are stand-ins of ``AiterMLAMetadata``/``CommonAttentionMetadata``;
    ``metadata.prefill`` one of ``MLACommonPrefillMetadata``.  ``prefill_lens`` are the prefill
    query lengths (KV length equals query length: no prefix, as in the FP8 path).
    """

    prefill_lens: tuple[int, ...]
    num_decodes: int
    metadata: StandIn
    common: StandIn
    qo_indptr_cpu: torch.Tensor

    @property
    def total_prefill_tokens(self) -> int:
        return sum(self.prefill_lens)

    @property
    def max_prefill_len(self) -> int:
        return max(self.prefill_lens)


@typechecked
def make_prefill_batch(
    seq_lens: Sequence[int],
    *,
    num_decodes: int = 0,
    device: torch.device | str = "cpu",
) -> PrefillBatch:
    """Stand-in metadata for prefills of ``seq_lens`` tokens behind ``num_decodes`` decodes."""
    if not seq_lens or any(n < 1 for n in seq_lens):
        raise ValueError(f"seq_lens must be non-empty positive lengths, got {list(seq_lens)}")
    if num_decodes < 0:
        raise ValueError(f"num_decodes must be >= 0, got {num_decodes}")
    from vllm.model_executor.layers.attention.mla_attention import MLACommonPrefillMetadata
    from vllm.v1.attention.backend import CommonAttentionMetadata

    module = _aiter_mla_module()
    device = torch.device(device)
    all_lens = [1] * num_decodes + list(seq_lens)
    qsl_cpu = torch.zeros(len(all_lens) + 1, dtype=torch.int32)
    qsl_cpu[1:] = torch.tensor(all_lens, dtype=torch.int32).cumsum(0)
    prefill_cpu = (qsl_cpu[num_decodes:] - qsl_cpu[num_decodes]).to(torch.int32)
    prefill = StandIn(
        MLACommonPrefillMetadata,
        query_start_loc=prefill_cpu.to(device),
        max_query_len=max(seq_lens),
        chunked_context=None,
    )
    total = int(qsl_cpu[-1])
    metadata = StandIn(
        module.AiterMLAMetadata,
        num_reqs=len(all_lens),
        num_actual_tokens=total,
        num_decodes=num_decodes,
        num_decode_tokens=num_decodes,
        num_prefills=len(seq_lens),
        prefill=prefill,
    )
    common = StandIn(
        CommonAttentionMetadata,
        query_start_loc=qsl_cpu.to(device),
        query_start_loc_cpu=qsl_cpu,
        num_reqs=len(all_lens),
        num_actual_tokens=total,
    )
    return PrefillBatch(tuple(seq_lens), num_decodes, metadata, common, prefill_cpu)


@typechecked
def make_qkv(
    total: int, heads: int, device: torch.device | str = "cpu", seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """bf16 q ``[T,H,192]``, k ``[T,H,192]``, v ``[T,H,128]``, as ``forward_mha`` hands them over.

    Drawn on the CPU from a seeded generator, then moved, so every device sees the same values.
    """
    gen = torch.Generator().manual_seed(seed)
    shapes = ((total, heads, QK_HEAD_DIM), (total, heads, QK_HEAD_DIM), (total, heads, V_HEAD_DIM))
    q, k, v = (torch.randn(s, generator=gen).to(torch.bfloat16).to(device) for s in shapes)
    return q, k, v
