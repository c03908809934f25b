"""Plan a ragged batch the way AITER's callers do: size with the info function, then plan.

Why: every test of the planner, the validator or the kernels starts with the same five steps
(indptrs from lengths, ``get_ps_metadata_info_v1``, allocate, ``get_ps_metadata_v1``, keep the
inputs next to the outputs). Doing them in one place keeps those tests about their property, and
keeps the call sequence identical to ``op_tests/test_mla_prefill_ps.py`` (CPU indptrs, buffers on
the target device).
"""

from __future__ import annotations

import contextlib
import types
from collections.abc import Sequence

import attrs
import torch

from factories.aiter.emulation.device_model import current_cu_count, emulated_cu_count
from factories.aiter.emulation.planner import get_ps_metadata_info_v1, get_ps_metadata_v1
from factories.aiter.layout import PlannerSettings
from factories.aiter.validator import PlanViolation, validate_plan


def indptr(lengths: Sequence[int]) -> torch.Tensor:
    """``[0, l0, l0+l1, ...]`` as a CPU int32 tensor."""
    out = [0]
    for n in lengths:
        out.append(out[-1] + int(n))
    return torch.tensor(out, dtype=torch.int32)


@attrs.frozen
class PsPlan:
    """A planned batch: the planner's inputs, settings, CU count and the six buffers (AITER's
    order: work_metadata_ptrs, work_indptr, work_info, reduce_indptr, reduce_final_map,
    reduce_partial_map)."""

    q_lens: tuple[int, ...]
    kv_lens: tuple[int, ...]
    num_heads_k: int
    settings: PlannerSettings
    cu_count: int
    qo_indptr: torch.Tensor = attrs.field(eq=False)
    kv_indptr: torch.Tensor = attrs.field(eq=False)
    context_lens: torch.Tensor = attrs.field(eq=False)
    buffers: tuple[torch.Tensor, ...] = attrs.field(eq=False)
    need_lse: bool = False

    @property
    def work_indptr(self) -> torch.Tensor:
        return self.buffers[1]

    @property
    def work_info(self) -> torch.Tensor:
        return self.buffers[2]

    @property
    def reduce_indptr(self) -> torch.Tensor:
        return self.buffers[3]

    @property
    def reduce_final_map(self) -> torch.Tensor:
        return self.buffers[4]

    @property
    def reduce_partial_map(self) -> torch.Tensor:
        return self.buffers[5]

    @property
    def partial_rows(self) -> int:
        """Rows of splitData/splitLse as ``mla_prefill_ps_fwd`` allocates them."""
        return self.reduce_partial_map.numel() * self.settings.qlen_granularity

    def prefill_args(
        self,
        q: torch.Tensor,
        k: torch.Tensor,
        v: torch.Tensor,
        split_data: torch.Tensor,
        split_lse: torch.Tensor,
        output: torch.Tensor,
        scales: tuple[torch.Tensor, torch.Tensor, torch.Tensor],
        *,
        softmax_scale: float,
        kv_page_indices: torch.Tensor | None = None,
    ) -> tuple[object, ...]:
        """``mla_prefill_ps_asm_fwd``'s positional arguments for this plan, in AITER's order.

        The twin of :meth:`reduce_args`: the plan's indptrs (on ``q``'s device), its work
        buffers, ``max_seqlen_q`` and ``is_causal`` come from the plan, so a test spells only
        its tensors. ``kv_page_indices`` defaults to the identity page table (page i holds
        kv row i), ``scales`` are the q/k/v scale tensors.
        """
        device = q.device
        if kv_page_indices is None:
            pages = int(self.kv_indptr[-1])
            kv_page_indices = torch.arange(pages, dtype=torch.int32, device=device)
        return (
            q,
            k,
            v,
            self.qo_indptr.to(device),
            self.kv_indptr.to(device),
            kv_page_indices,
            self.work_indptr,
            self.work_info,
            max(self.q_lens),
            softmax_scale,
            self.settings.is_causal,
            split_data,
            split_lse,
            output,
            *scales,
        )

    def reduce_args(
        self,
        split_data: torch.Tensor,
        split_lse: torch.Tensor,
        final_output: torch.Tensor,
        final_lse: torch.Tensor | None,
    ) -> tuple[object, ...]:
        """``mla_reduce_v1``'s positional arguments for this plan, in AITER's order.

        One place spells the plan's three reduce buffers, the per-tile row count and the
        ``num_kv_splits`` placeholder (0: the kernel reads the split count from the plan), so a
        test calls ``aiter.mla_reduce_v1(*plan.reduce_args(...))`` instead of re-typing them.
        """
        return (
            split_data,
            split_lse,
            self.reduce_indptr,
            self.reduce_final_map,
            self.reduce_partial_map,
            self.settings.qlen_granularity,
            0,
            final_output,
            final_lse,
        )

    @property
    def num_reduce_groups(self) -> int:
        ri = self.reduce_indptr.to("cpu")
        return int((ri[1:] != ri[:-1]).sum())

    def violations(self, **overrides: object) -> tuple[PlanViolation, ...]:
        kwargs: dict[str, object] = dict(
            qo_indptr=self.qo_indptr,
            kv_indptr=self.kv_indptr,
            context_lens=self.context_lens,
            num_heads_k=self.num_heads_k,
            settings=self.settings,
            cu_count=self.cu_count,
            max_qlen=max(self.q_lens, default=0),
            need_lse=self.need_lse,
        )
        kwargs.update(overrides)
        return validate_plan(*self.buffers, **kwargs)  # type: ignore[arg-type]


def plan_batch(
    q_lens: Sequence[int],
    kv_lens: Sequence[int],
    num_heads_k: int,
    settings: PlannerSettings,
    *,
    cu_count: int | None = None,
    device: str | torch.device = "cpu",
    fill: int | None = None,
    aiter: types.ModuleType | None = None,
    need_lse: bool = False,
) -> PsPlan:
    """Size, allocate (on ``device``) and plan. ``fill`` pre-fills the buffers (default: empty).

    kv lengths are tokens; pages are ``ceil(kv_len / block_size)``, as the planner expects.

    ``aiter`` is the module whose ``get_ps_metadata_info_v1`` and ``get_ps_metadata_v1`` size and
    plan (default: the emulation's own). ``cu_count`` and the recorded ``PsPlan.cu_count`` are the
    emulation's CU count; a real AITER module plans for its device's CU count regardless.
    ``need_lse=True`` is passed by keyword (a pre-3606 AITER rejects it); False is not passed at
    all, as vLLM 0.34.0 does not.
    """
    if len(q_lens) != len(kv_lens):
        raise ValueError("q_lens and kv_lens differ in length")
    info_fn = get_ps_metadata_info_v1 if aiter is None else aiter.get_ps_metadata_info_v1
    plan_fn = get_ps_metadata_v1 if aiter is None else aiter.get_ps_metadata_v1
    ctx = emulated_cu_count(cu_count) if cu_count is not None else contextlib.nullcontext()
    with ctx:
        cu = current_cu_count()
        bs = settings.block_size
        qo = indptr(q_lens)
        kv = indptr([-(-int(n) // bs) for n in kv_lens])
        cl = torch.tensor(list(kv_lens), dtype=torch.int32)
        info = info_fn(
            batch_size=len(q_lens),
            num_head_k=num_heads_k,
            max_qlen=max(q_lens, default=0),
            qlen_granularity=settings.qlen_granularity,
        )
        bufs = []
        for shape, dtype in info:
            t = torch.empty(shape, dtype=dtype, device=device)
            if fill is not None:
                t.fill_(fill)
            bufs.append(t)
        plan_fn(
            qo,
            kv,
            cl,
            1,
            num_heads_k,
            *bufs,
            qhead_granularity=settings.qhead_granularity,
            qlen_granularity=settings.qlen_granularity,
            kvlen_granularity=settings.kvlen_granularity,
            block_size=bs,
            is_causal=settings.is_causal,
            **({"need_lse": True} if need_lse else {}),
        )
    return PsPlan(
        q_lens=tuple(int(n) for n in q_lens),
        kv_lens=tuple(int(n) for n in kv_lens),
        num_heads_k=num_heads_k,
        settings=settings,
        cu_count=cu,
        qo_indptr=qo,
        kv_indptr=kv,
        context_lens=cl,
        buffers=tuple(bufs),
        need_lse=need_lse,
    )
