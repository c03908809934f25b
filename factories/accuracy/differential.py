"""Differential mode: two PS prefill kernels on ONE plan, compared work item by work item.

On gfx950 the real ``mla_prefill_ps_asm_fwd`` and the emulated one run on the identical plan (the
real planner's) and identical fp8 inputs, each into its own NaN-poisoned buffers. Every work item
writes a region no other work writes (contract §3.4): an unsplit work (``partial_o_loc == -1``)
rows ``[qo_start, qo_end)`` of ``output`` for its head; a split work rows
``[p, p + (qo_end - qo_start))`` of ``splitData``/``splitLse`` for its head (rows past the tile
are junk on the device and are never compared). So a difference in a region belongs to exactly
one work, and the first one in launch order is named: work index, CU/TG, batch, q range, kv range
(global and request-local), head, partial slot. The plan is checked for overlapping regions
first; if two works shared a region, attribution would be ambiguous and that is reported instead.

The reduce is compared the same way per reduce group (group index, q range, head), each side
merging its own partials, and the two planners' plans element by element.

Nothing here knows which side is "real": ``compare_works(items, a, b, tol)`` takes ``b`` as the
reference for the relative part of the bound. Tests run it emulator against emulator (no
divergence) and against a deliberately broken emulated kernel (exactly the broken work is named).
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable, Sequence

import attrs
import numpy as np
import torch

from factories.accuracy.cases import SOFTMAX_SCALE
from factories.accuracy.run import poison_
from factories.accuracy.tolerance import Tolerance
from factories.aiter.batch import PsPlan, indptr, plan_batch
from factories.aiter.emulation.device_model import host_ints
from factories.aiter.layout import (
    FINAL_MAP_COLS,
    KERNEL_TILE_ROWS,
    QK_HEAD_DIM,
    V_HEAD_DIM,
    WORK_INFO_COLS,
    PlannerSettings,
)
from factories.aiter.signatures import GET_PS_METADATA_V1

#: Planner settings of vLLM's FP8 prefill (qhead 1, qlen 256, kvlen 128, block 1, causal).
PLANNER_SETTINGS = PlannerSettings.for_fp8_prefill_kernel()
#: The six planner buffers, in AITER's order (``get_ps_metadata_v1``'s parameters 5..10).
PLAN_BUFFER_NAMES = tuple(p.name for p in GET_PS_METADATA_V1.params[5:11])


# --------------------------------------------------------------------------------------------
# Plans and inputs
# --------------------------------------------------------------------------------------------


def plan_with(
    module: types.ModuleType, lens: Sequence[int], num_heads: int, device: torch.device | str
) -> PsPlan:
    """Size with ``module.get_ps_metadata_info_v1`` and plan with ``module.get_ps_metadata_v1`` as
    vLLM's builder does (CPU indptrs, buffers on ``device``, the fp8 kernel's settings, KV = Q:
    no prefix). ``module`` is the real ``aiter`` or the emulation; the CU count is the caller's
    (``emulated_cu_count`` for the emulation, the device's for the real one)."""
    return plan_batch(lens, lens, num_heads, PLANNER_SETTINGS, device=device, aiter=module)


def plan_differences(a: PsPlan, b: PsPlan, limit: int = 8) -> list[str]:
    """Element differences between two plans of the same batch (``work_metadata_ptrs`` is never
    written by the planner and is skipped)."""
    out: list[str] = []
    for i, name in enumerate(PLAN_BUFFER_NAMES[1:], start=1):
        x, y = host_ints(a.buffers[i]), host_ints(b.buffers[i])
        if x.shape != y.shape:
            out.append(f"{name}: shape {x.shape} vs {y.shape}")
            continue
        for idx in np.argwhere(x != y)[:limit]:
            at = tuple(int(j) for j in idx)
            out.append(f"{name}{list(at)}: {int(x[at])} vs {int(y[at])}")
    return out


@attrs.frozen
class PrefillInputs:
    """What the prefill kernel reads besides the plan (fp8 Q/K/V as vLLM hands them, scale 1)."""

    q: torch.Tensor = attrs.field(eq=False, repr=False)
    k: torch.Tensor = attrs.field(eq=False, repr=False)
    v: torch.Tensor = attrs.field(eq=False, repr=False)
    qo_indptr: torch.Tensor = attrs.field(eq=False, repr=False)
    kv_indptr: torch.Tensor = attrs.field(eq=False, repr=False)
    kv_page_indices: torch.Tensor = attrs.field(eq=False, repr=False)
    one_scale: torch.Tensor = attrs.field(eq=False, repr=False)
    softmax_scale: float
    max_seqlen_q: int

    @classmethod
    def random(
        cls,
        lens: Sequence[int],
        num_heads: int,
        device: torch.device | str,
        *,
        fp8_dtype: torch.dtype,
        softmax_scale: float = SOFTMAX_SCALE,
        seed: int = 0,
    ) -> PrefillInputs:
        """bf16 ``randn`` cast to fp8 (vLLM's cast, scale 1), drawn on the CPU so every device
        sees the same values; KV = Q rows (no prefix), identity page indices (block size 1)."""
        gen = torch.Generator().manual_seed(seed)
        total = sum(lens)
        q, k, v = (
            torch.randn(total, num_heads, d, generator=gen)
            .to(torch.bfloat16)
            .to(fp8_dtype)
            .to(device)
            for d in (QK_HEAD_DIM, QK_HEAD_DIM, V_HEAD_DIM)
        )
        qo = indptr(lens).to(device)
        return cls(
            q,
            k,
            v,
            qo,
            qo.clone(),
            torch.arange(total, dtype=torch.int32, device=device),
            torch.ones((), dtype=torch.float32, device=device),
            float(softmax_scale),
            max(lens),
        )


@attrs.frozen
class KernelOutputs:
    """Everything one prefill kernel run wrote (NaN where it wrote nothing)."""

    output: torch.Tensor = attrs.field(eq=False, repr=False)  # [T, H, 128] bf16
    split_data: torch.Tensor = attrs.field(eq=False, repr=False)  # [R, H, 128] fp32
    split_lse: torch.Tensor = attrs.field(eq=False, repr=False)  # [R, H] fp32


PrefillKernel = Callable[..., None]
ReduceKernel = Callable[..., None]


def run_prefill_kernel(kernel: PrefillKernel, x: PrefillInputs, plan: PsPlan) -> KernelOutputs:
    """One ``mla_prefill_ps_asm_fwd`` call (vLLM's argument order) into NaN-poisoned buffers."""
    dev, heads, total = x.q.device, x.q.size(1), x.q.size(0)
    out = KernelOutputs(
        torch.empty(total, heads, V_HEAD_DIM, dtype=torch.bfloat16, device=dev),
        torch.empty(plan.partial_rows, heads, V_HEAD_DIM, dtype=torch.float32, device=dev),
        torch.empty(plan.partial_rows, heads, dtype=torch.float32, device=dev),
    )
    for t in (out.output, out.split_data, out.split_lse):
        poison_(t)
    kernel(
        x.q,
        x.k,
        x.v,
        x.qo_indptr,
        x.kv_indptr,
        x.kv_page_indices,
        plan.work_indptr,
        plan.work_info,
        x.max_seqlen_q,
        x.softmax_scale,
        True,
        out.split_data,
        out.split_lse,
        out.output,
        x.one_scale,
        x.one_scale,
        x.one_scale,
    )
    return out


def run_reduce(
    reduce: ReduceKernel, outs: KernelOutputs, plan: PsPlan
) -> tuple[torch.Tensor, torch.Tensor]:
    """``mla_reduce_v1`` as vLLM calls it, on a copy of ``outs.output``; ``final_lse``
    NaN-poisoned."""
    final = outs.output.clone()
    final_lse = torch.empty(final.shape[:2], dtype=torch.float32, device=final.device)
    poison_(final_lse)
    reduce(*plan.reduce_args(outs.split_data, outs.split_lse, final, final_lse))
    return final, final_lse


# --------------------------------------------------------------------------------------------
# Work items
# --------------------------------------------------------------------------------------------


@attrs.frozen
class WorkItem:
    """One row of ``work_info`` as the kernel executes it (contract §2.2, §3.4)."""

    index: int  # row of work_info = position in launch order
    workgroup: int  # the CU/TG (grid index) whose work_indptr range holds it
    batch: int
    q_start: int  # global packed q rows [q_start, q_end)
    q_end: int
    kv_start: int  # global kv_page_indices positions [kv_start, kv_end)
    kv_end: int
    kv_local: tuple[int, int]  # the same, relative to the request's kv_indptr
    head: int  # low 16 bits of q_head_range: the one head the kernel processes
    partial_loc: int  # -1: final rows of `output`; >= 0: row offset into splitData/splitLse

    @property
    def rows(self) -> int:
        return max(0, min(self.q_end - self.q_start, KERNEL_TILE_ROWS))

    @property
    def writes_partial(self) -> bool:
        return self.partial_loc >= 0

    def describe(self) -> str:
        where = (
            f"partial slot rows [{self.partial_loc}, {self.partial_loc + self.rows})"
            if self.writes_partial
            else "final output rows"
        )
        return (
            f"work {self.index} (CU/TG {self.workgroup}): batch {self.batch}, "
            f"q [{self.q_start}, {self.q_end}), kv [{self.kv_start}, {self.kv_end}) "
            f"(request-local [{self.kv_local[0]}, {self.kv_local[1]})), "
            f"head {self.head}, {where}"
        )


def work_items(
    work_indptr: torch.Tensor, work_info: torch.Tensor, kv_indptr: torch.Tensor
) -> tuple[WorkItem, ...]:
    """Every work the kernel runs, in launch order (workgroup ``wg`` runs rows
    ``work_indptr[wg] .. work_indptr[wg+1]-1``)."""
    wi = host_ints(work_indptr).reshape(-1)
    info = host_ints(work_info).reshape(-1, WORK_INFO_COLS)
    kv = host_ints(kv_indptr).reshape(-1)
    items = []
    for wg in range(len(wi) - 1):
        for w in range(max(int(wi[wg]), 0), min(int(wi[wg + 1]), len(info))):
            b, loc, qs, qe, ks, ke, _, hr = (int(x) for x in info[w])
            base = int(kv[b]) if 0 <= b < len(kv) else 0
            items.append(
                WorkItem(w, wg, b, qs, qe, ks, ke, (ks - base, ke - base), hr & 0xFFFF, loc)
            )
    return tuple(items)


def region_overlaps(
    items: Sequence[WorkItem], total_rows: int, partial_rows: int, num_heads: int
) -> list[str]:
    """Regions written by more than one work (then a difference cannot be attributed)."""
    problems = []
    for kind, rows, pick in (
        ("output", total_rows, lambda it: not it.writes_partial),
        ("partial", partial_rows, lambda it: it.writes_partial),
    ):
        cover = np.zeros((rows + 1, num_heads), dtype=np.int64)
        for it in items:
            if not pick(it) or not 0 <= it.head < num_heads:
                continue
            start = it.partial_loc if it.writes_partial else it.q_start
            lo, hi = max(start, 0), min(start + it.rows, rows)
            if hi > lo:
                cover[lo, it.head] += 1
                cover[hi, it.head] -= 1
        over = np.argwhere(np.cumsum(cover, axis=0)[:rows] > 1)
        if len(over):
            row, head = (int(x) for x in over[0])
            problems.append(
                f"{len(over)} {kind} (row, head) cells are written by several works, "
                f"first ({row}, {head})"
            )
    return problems


# --------------------------------------------------------------------------------------------
# Comparison
# --------------------------------------------------------------------------------------------


def _bad_rows(
    a: torch.Tensor, b: torch.Tensor, atol: float, rtol: float
) -> tuple[np.ndarray, np.ndarray]:
    """Per (row, head): does any element differ beyond ``atol + rtol*|b|`` (NaN on either side
    counts; -inf on both sides is equal), and the largest |a - b| (inf for NaN). fp32 is exact
    enough: the bounds are >= 2^-10, fp32 rounding of the difference is ~1e-7 relative."""
    a32, b32 = a.float(), b.float()
    diff = (a32 - b32).abs_()
    same_inf = torch.isinf(a32) & (a32 == b32)
    if bool(same_inf.any()):
        diff.masked_fill_(same_inf, 0.0)
    diff.nan_to_num_(nan=math.inf)
    allowed = b32.abs().nan_to_num_(nan=0.0, posinf=0.0, neginf=0.0).mul_(rtol).add_(atol)
    bad = diff > allowed
    if diff.dim() == 3:
        bad, diff = bad.any(dim=-1), diff.amax(dim=-1)
    return bad.cpu().numpy(), diff.cpu().numpy()


@attrs.frozen
class Divergence:
    """The first place two runs disagree, and where in the plan it is."""

    what: str  # "work" or "reduce group"
    where: str  # the work item / group, described
    buffer: str  # output, splitData, splitLse, final_output, final_lse
    row: int  # the row (of that buffer) of the largest difference
    head: int
    max_abs_diff: float
    work: WorkItem | None = None
    group: int | None = None

    def message(self) -> str:
        return (
            f"first divergence: {self.where}; {self.buffer} row {self.row} head {self.head}: "
            f"|a-b| = {self.max_abs_diff:.4g}"
        )


@attrs.frozen
class DifferentialReport:
    compared: int  # works (or groups) compared
    diverging: int  # how many of them diverge
    first: Divergence | None
    problems: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.first is None and not self.problems

    def summary(self) -> str:
        if self.ok:
            return f"no divergence over {self.compared} compared"
        lines = [f"{self.diverging} of {self.compared} diverge"]
        if self.first is not None:
            lines.append(self.first.message())
        lines += [f"PROBLEM: {p}" for p in self.problems]
        return "\n".join(lines)


def compare_works(
    items: Sequence[WorkItem], a: KernelOutputs, b: KernelOutputs, tolerance: Tolerance
) -> DifferentialReport:
    """Each work's region in ``a`` vs ``b`` (``b`` is the reference of the relative bound):
    outputs and partial outputs with the out bound, partial LSEs with the LSE bound."""
    total, heads = a.output.size(0), a.output.size(1)
    problems = region_overlaps(items, total, a.split_data.size(0), heads)
    bad_out, d_out = _bad_rows(a.output, b.output, tolerance.out_atol, tolerance.out_rtol)
    bad_pd, d_pd = _bad_rows(a.split_data, b.split_data, tolerance.out_atol, tolerance.out_rtol)
    bad_pl, d_pl = _bad_rows(a.split_lse, b.split_lse, tolerance.lse_atol, tolerance.lse_rtol)
    first = None
    diverging = 0
    for it in items:
        if not 0 <= it.head < heads:
            problems.append(f"{it.describe()}: head outside [0, {heads})")
            continue
        if it.writes_partial:
            rows = slice(it.partial_loc, it.partial_loc + it.rows)
            candidates = (("splitData", bad_pd, d_pd), ("splitLse", bad_pl, d_pl))
            base = it.partial_loc
        else:
            rows = slice(it.q_start, it.q_start + it.rows)
            candidates = (("output", bad_out, d_out),)
            base = it.q_start
        hit = None
        for name, bad, dist in candidates:
            region = bad[rows, it.head]
            if region.any():
                r = int(np.argmax(dist[rows, it.head]))
                hit = (name, base + r, float(dist[rows, it.head][r]))
                break
        if hit is None:
            continue
        diverging += 1
        if first is None:
            first = Divergence("work", it.describe(), hit[0], hit[1], it.head, hit[2], work=it)
    return DifferentialReport(len(items), diverging, first, tuple(problems))


def reduce_groups(plan: PsPlan) -> list[tuple[int, int, int]]:
    """``(group, q_start, q_end)`` of every group the reduce writes (>= 2 partials, before the
    stop)."""
    ri = host_ints(plan.reduce_indptr).reshape(-1)
    fm = host_ints(plan.reduce_final_map).reshape(-1, FINAL_MAP_COLS)
    out = []
    for g in range(min(len(ri) - 1, len(fm))):
        if ri[g] == ri[-1]:
            break
        if ri[g + 1] - ri[g] >= 2:
            out.append((g, int(fm[g, 0]), int(fm[g, 1])))
    return out


def compare_reduce(
    plan: PsPlan,
    a: tuple[torch.Tensor, torch.Tensor],
    b: tuple[torch.Tensor, torch.Tensor],
    tolerance: Tolerance,
) -> DifferentialReport:
    """Each reduce group's rows of ``final_output`` and ``final_lse``, ``a`` vs ``b``."""
    bad_o, d_o = _bad_rows(a[0], b[0], tolerance.out_atol, tolerance.out_rtol)
    bad_l, d_l = _bad_rows(a[1], b[1], tolerance.lse_atol, tolerance.lse_rtol)
    groups = reduce_groups(plan)
    first = None
    diverging = 0
    for g, q0, q1 in groups:
        hit = None
        for name, bad, dist in (("final_output", bad_o, d_o), ("final_lse", bad_l, d_l)):
            cells = np.argwhere(bad[q0:q1])
            if len(cells):
                r, h = (int(x) for x in cells[0])
                hit = (name, q0 + r, h, float(dist[q0 + r, h]))
                break
        if hit is None:
            continue
        diverging += 1
        if first is None:
            first = Divergence(
                "reduce group",
                f"reduce group {g}: q [{q0}, {q1}), head {hit[2]}",
                hit[0],
                hit[1],
                hit[2],
                hit[3],
                group=g,
            )
    return DifferentialReport(len(groups), diverging, first)
