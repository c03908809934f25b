"""Emulated ``get_ps_metadata_info_v1`` and ``get_ps_metadata_v1`` (the PS host planner).

Why: vLLM's FP8 MLA prefill path hands AITER buffers it sized with the info function and then
trusts the host planner to fill them. Testing that glue without a gfx950 GPU needs a planner that
makes *the same* decisions, bit for bit, including its quirks (ping-pong tile order, partial
counters restarting per cluster, reduce info taken from the *last* element of ``work_indptr``,
zero-filled tails). This is a faithful re-implementation of ``v1_2_host.cuh`` (ROCm/aiter
e4048607a5, l.27-367) following contract §2.3; it was read against the C++, not copied.

Two contract revisions (:mod:`factories.aiter.revision`): ``pre-3606`` as above, and ``3606``
(ROCm/aiter#3606), whose ``get_ps_metadata_v1`` takes ``need_lse``: with it every tile takes a
partial slot (``v1_2_host.cuh`` l.183-189 of the PR head 1784f4ce46: the "fits" branch no longer
emits -1), so every tile gets a reduce group; without it the plan is the pre-3606 one. The info
function's ``max_partials`` follows the revision (:class:`PsMetadataSizes`). Contract §8.

Where the real code would write out of bounds (buffers smaller than the plan) we raise instead:
on the device that is undefined behaviour, and a test double must not make it look fine.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import numpy as np
import torch

from factories.aiter.layout import (
    FINAL_MAP_COLS,
    WORK_INFO_COLS,
    PlannerSettings,
    PsMetadataSizes,
    WorkInfoCol,
    c_div,
    c_mod,
)
from factories.aiter.revision import AiterContract, current_contract

from .arithmetic import current_faults
from .device_model import current_cu_count


def get_ps_metadata_info_v1(
    batch_size: int,
    num_head_k: int,
    max_qlen: int,
    qlen_granularity: int = 256,
) -> tuple[tuple[object, torch.dtype], ...]:
    """Buffer shapes and dtypes for the PS planner (contract §1), for the emulated CU count.

    Returns six ``(shape, dtype)`` pairs, in AITER's order: work_metadata_ptrs, work_indptr,
    work_info, reduce_indptr, reduce_final_map, reduce_partial_map. Shapes are ints for the 1-D
    buffers and tuples for the 2-D ones, as upstream returns them.
    """
    s = PsMetadataSizes.compute(
        batch_size, num_head_k, max_qlen, qlen_granularity, current_cu_count()
    )
    return (
        (2, torch.uint64),
        (s.work_indptr_len, torch.int32),
        ((s.max_works, WORK_INFO_COLS), torch.int32),
        (s.reduce_indptr_len, torch.int32),
        ((s.qo_tile_cnt, FINAL_MAP_COLS), torch.int32),
        (s.max_partials, torch.int32),
    )


# --------------------------------------------------------------------------------------------
# The algorithm (pure functions on Python ints / numpy)
# --------------------------------------------------------------------------------------------


@attrs.frozen
class QTile:
    """A q tile of one request (``struct QTile`` in ps.h): global rows, blocks and causal kv
    need."""

    batch_idx: int
    qo_start: int
    qo_end: int
    num_blocks: int
    effective_kv_length: int


def build_q_tiles(
    qo_indptr: Sequence[int], context_lens: Sequence[int], settings: PlannerSettings
) -> tuple[tuple[QTile, ...], int]:
    """Step 1 (v1_2_host.cuh l.89-131): tiles in ping-pong order per request, and total units."""
    qg = settings.qlen_granularity
    kvg = settings.kvlen_granularity
    bpu = kvg // settings.block_size
    tiles: list[QTile] = []
    total_units = 0
    for b in range(len(qo_indptr) - 1):
        ql = qo_indptr[b + 1] - qo_indptr[b]
        kl = context_lens[b]
        ranges = [(o, min(o + qg, ql)) for o in range(0, max(ql, 0), qg)]
        n = len(ranges)
        for i in range(n):
            lo, hi = ranges[i // 2] if i % 2 == 0 else ranges[n - 1 - i // 2]
            eff = min(kl - ql + hi, kl) if settings.is_causal else kl
            units = c_div(eff + kvg - 1, kvg)
            tiles.append(QTile(b, lo + qo_indptr[b], hi + qo_indptr[b], units * bpu, eff))
            total_units += units
    return tuple(tiles), total_units


@attrs.frozen
class ClusterSlicing:
    """The head-less works of ONE cluster, per TG. Every cluster gets this identical slicing.

    ``rows`` is ``[n, 7]`` int64 (work_info columns 0..6), ``counts[t]`` the works of TG t.
    """

    rows: np.ndarray = attrs.field(eq=False)
    counts: np.ndarray = attrs.field(eq=False)


def slice_cluster(
    tiles: Sequence[QTile],
    total_units: int,
    kv_indptr: Sequence[int],
    context_lens: Sequence[int],
    settings: PlannerSettings,
    tgs_per_cluster: int,
    always_partial: bool = False,
) -> ClusterSlicing:
    """Step 2 (l.132-247) for one head: distribute units over the cluster's TGs.

    The C++ runs this once per k-head of the cluster, restoring the cursor between heads; since
    the capacity depends only on the TG, every head (and every cluster) gets the same works, so we
    compute them once and replicate. ``always_partial`` (3606 with ``need_lse``): a tile that
    fits in one TG takes a partial slot too instead of writing the output directly.
    """
    bs = settings.block_size
    qg = settings.qlen_granularity
    bpu = settings.kvlen_granularity // bs
    avg = c_div(total_units, tgs_per_cluster)
    rem = c_mod(total_units, tgs_per_cluster)
    rows: list[tuple[int, int, int, int, int, int, int]] = []
    counts = np.zeros(tgs_per_cluster, dtype=np.int64)
    tile = blk = pt = 0
    ntiles = len(tiles)
    for tg in range(tgs_per_cluster):
        before = len(rows)
        cap = (avg + 1 if tg < rem else avg) * bpu
        while tile < ntiles and cap > 0:
            t = tiles[tile]
            kv0, kv1 = kv_indptr[t.batch_idx], kv_indptr[t.batch_idx + 1]
            remaining_blocks = t.num_blocks - blk
            remaining_kv = t.effective_kv_length - blk * bs
            ks = blk + kv0
            if remaining_kv <= cap * bs:  # the rest of the tile fits in this TG
                if blk == 0 and not always_partial:
                    loc = -1
                else:
                    loc = qg * pt
                    pt += 1
                rows.append(
                    (t.batch_idx, loc, t.qo_start, t.qo_end, ks, min(ks + remaining_blocks, kv1), 0)
                )
                tile += 1
                blk = 0
                cap -= remaining_blocks
            else:  # split: this TG takes `cap` blocks
                loc = qg * pt
                pt += 1
                ke = min(ks + cap, kv1)
                kv_offset = context_lens[t.batch_idx] - (ke - kv0) * bs
                rows.append((t.batch_idx, loc, t.qo_start, t.qo_end, ks, ke, kv_offset))
                blk += cap
                cap = 0
        counts[tg] = len(rows) - before
    arr = np.asarray(rows, dtype=np.int64).reshape(-1, 7)
    return ClusterSlicing(rows=arr, counts=counts)


@attrs.frozen
class Plan:
    """The five filled host vectors, sized like the caller's tensors (zero tails included)."""

    work_indptr: np.ndarray = attrs.field(eq=False)
    work_info: np.ndarray = attrs.field(eq=False)  # [rows, 8]
    reduce_indptr: np.ndarray = attrs.field(eq=False)
    reduce_final_map: np.ndarray = attrs.field(eq=False)  # [rows, 2]
    reduce_partial_map: np.ndarray = attrs.field(eq=False)


def _replicate_over_heads(
    slicing: ClusterSlicing, num_clusters: int, kheads_per_cluster: int, qhead_granularity: int
) -> tuple[np.ndarray, np.ndarray]:
    """Expand one cluster's slicing into all clusters' works (head-major within each TG).

    Returns ``(works [N, 8] int64, per_tg_counts [num_clusters * tpc])``.
    """
    counts = slicing.counts
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    idx_parts, koff_parts = [], []
    for s, n in zip(starts.tolist(), counts.tolist()):
        if n:
            idx_parts.append(np.tile(np.arange(s, s + n), kheads_per_cluster))
            koff_parts.append(np.repeat(np.arange(kheads_per_cluster), n))
    if idx_parts:
        idx = np.concatenate(idx_parts)
        koff = np.concatenate(koff_parts)
    else:
        idx = koff = np.zeros(0, dtype=np.int64)
    per_cluster = slicing.rows[idx]  # [m, 7]
    m = len(idx)
    works = np.zeros((m * num_clusters, WORK_INFO_COLS), dtype=np.int64)
    for c in range(num_clusters):
        head = c * kheads_per_cluster + koff
        low, high = head * qhead_granularity, (head + 1) * qhead_granularity
        packed = ((high << 16) | (low & 0xFFFF)) & 0xFFFFFFFF
        block = works[c * m : (c + 1) * m]
        block[:, :7] = per_cluster
        block[:, WorkInfoCol.Q_HEAD_RANGE] = np.where(packed >= 1 << 31, packed - (1 << 32), packed)
    tg_counts = np.tile(counts * kheads_per_cluster, num_clusters)
    return works, tg_counts


def _reduce_info(
    works: np.ndarray, actual_works: int, n_indptr: int, n_final: int, n_partial: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Step 3 (``generate_reduce_info``, l.27-66): groups of partials by (qo_start, qo_end)."""
    reduce_indptr = np.zeros(n_indptr, dtype=np.int64)
    final_map = np.zeros((n_final, FINAL_MAP_COLS), dtype=np.int64)
    partial_map = np.zeros(n_partial, dtype=np.int64)
    w = works[:actual_works]
    split = w[w[:, WorkInfoCol.PARTIAL_O_LOC] != -1]
    cols = [WorkInfoCol.QO_START, WorkInfoCol.QO_END, WorkInfoCol.PARTIAL_O_LOC]
    # std::map<vector{qs,qe}, std::set<loc>>: heads and clusters collapse, order is lexicographic.
    triples = np.unique(split[:, cols], axis=0) if len(split) else np.zeros((0, 3), np.int64)
    groups, group_sizes = (
        np.unique(triples[:, :2], axis=0, return_counts=True)
        if len(triples)
        else (np.zeros((0, 2), np.int64), np.zeros(0, np.int64))
    )
    n_groups = len(groups)
    n_partials = len(triples)
    if n_groups + 1 > n_indptr or n_groups > n_final or n_partials > n_partial:
        raise ValueError(
            "get_ps_metadata_v1: reduce buffers too small for the plan "
            f"({n_groups} groups / {n_partials} partials; reduce_indptr has {n_indptr}, "
            f"reduce_final_map {n_final}, reduce_partial_map {n_partial} entries). "
            "The real planner would write out of bounds."
        )
    if n_groups:
        reduce_indptr[1 : n_groups + 1] = np.cumsum(group_sizes)
        final_map[:n_groups] = groups
        partial_map[:n_partials] = triples[:, 2]
    reduce_indptr[n_groups + 1 :] = n_partials
    return reduce_indptr, final_map, partial_map


def plan_ps_metadata(
    qo_indptr: Sequence[int],
    kv_indptr: Sequence[int],
    context_lens: Sequence[int],
    num_heads_k: int,
    settings: PlannerSettings,
    cu_count: int,
    *,
    work_indptr_len: int,
    work_info_rows: int,
    reduce_indptr_len: int,
    reduce_final_map_rows: int,
    reduce_partial_map_len: int,
    need_lse: bool = False,
) -> Plan:
    """The whole planner on host integers; buffer lengths are those of the caller's tensors.
    ``need_lse`` is the 3606 keyword (every tile takes a partial slot); callers check that the
    revision in force accepts it."""
    settings.check()
    if isinstance(num_heads_k, bool) or not isinstance(num_heads_k, int) or num_heads_k < 1:
        raise ValueError(
            f"get_ps_metadata_v1: num_heads_k must be a positive int, got {num_heads_k!r}"
        )
    num_clusters = math.gcd(num_heads_k, cu_count)
    tpc = cu_count // num_clusters
    khpc = num_heads_k // num_clusters
    if work_indptr_len < cu_count + 1:
        raise ValueError(
            f"get_ps_metadata_v1: work_indptr has {work_indptr_len} entries but the device has "
            f"{cu_count} CUs; it needs {cu_count + 1} (the real planner writes out of bounds)"
        )

    tiles, total_units = build_q_tiles(qo_indptr, context_lens, settings)
    slicing = slice_cluster(
        tiles, total_units, kv_indptr, context_lens, settings, tpc, always_partial=need_lse
    )
    works, tg_counts = _replicate_over_heads(
        slicing, num_clusters, khpc, settings.qhead_granularity
    )
    if len(works) > work_info_rows:
        raise ValueError(
            f"get_ps_metadata_v1: the plan has {len(works)} works but work_info has only "
            f"{work_info_rows} rows (the real planner writes out of bounds)"
        )

    work_indptr = np.zeros(work_indptr_len, dtype=np.int64)
    work_indptr[1 : cu_count + 1] = np.cumsum(tg_counts)
    work_info = np.zeros((work_info_rows, WORK_INFO_COLS), dtype=np.int64)
    work_info[: len(works)] = works

    # The C++ reads `work_indptr_vec.back()`: the LAST element of the buffer, which is 0 (the
    # zero-filled tail) when work_indptr is longer than cu+1. Then no reduce info is produced.
    actual_works = int(work_indptr[-1])
    reduce_indptr, final_map, partial_map = _reduce_info(
        work_info, actual_works, reduce_indptr_len, reduce_final_map_rows, reduce_partial_map_len
    )
    return Plan(work_indptr, work_info, reduce_indptr, final_map, partial_map)


# --------------------------------------------------------------------------------------------
# The torch-facing entry point
# --------------------------------------------------------------------------------------------


def _host_ints(t: torch.Tensor, n: int, name: str) -> list[int]:
    if t.numel() < n:
        raise ValueError(f"get_ps_metadata_v1: {name} has {t.numel()} elements, needs {n}")
    return t.detach().reshape(-1)[:n].to("cpu").tolist()


def _check_indptr(t: torch.Tensor, name: str) -> None:
    # The two checks metadata.cu:245-254 makes (AITER_CHECK -> RuntimeError upstream).
    if t.dim() != 1 or t.stride(0) != 1:
        raise ValueError(f"get_ps_metadata_v1: {name} should be continuous!")
    if t.dtype != torch.int32:
        raise TypeError(f"get_ps_metadata_v1: {name}'s element type should be int! (got {t.dtype})")


def _check_output(t: torch.Tensor, name: str) -> None:
    # Not checked upstream (a raw hipMemcpy of int32 bytes); anything else would be garbage.
    if t.dtype != torch.int32 or not t.is_contiguous():
        raise TypeError(
            f"get_ps_metadata_v1: {name} must be a contiguous int32 tensor (got {t.dtype}, "
            f"contiguous={t.is_contiguous()}); the real planner memcpys int32 bytes into it"
        )


def _write(dst: torch.Tensor, src: np.ndarray) -> None:
    """Overwrite every element of the caller's tensor, on whatever device it lives."""
    dst.view(-1).copy_(torch.from_numpy(src.reshape(-1).astype(np.int32)))


def _plan_into(
    seqlens_qo_indptr: torch.Tensor,
    pages_kv_indptr: torch.Tensor,
    context_lens: torch.Tensor,
    gqa_ratio: int,
    num_heads_k: int,
    work_metadata_ptrs: torch.Tensor,
    work_indptr: torch.Tensor,
    work_info: torch.Tensor,
    reduce_indptr: torch.Tensor,
    reduce_final_map: torch.Tensor,
    reduce_partial_map: torch.Tensor,
    qhead_granularity: int = 1,
    qlen_granularity: int = 256,
    kvlen_granularity: int = 16,
    block_size: int = 16,
    is_causal: bool = True,
    need_lse: bool = False,
) -> None:
    """Fill the five metadata buffers in place, like AITER's host planner (contract §2).

    Inputs may be CPU or device tensors (the real one ``hipMemcpy(..., Default)``s them), outputs
    are written into the caller's tensors whatever their device. ``gqa_ratio`` has no effect and
    ``work_metadata_ptrs`` is neither read nor written, exactly as upstream.
    """
    if current_faults().ignores_need_lse:
        need_lse = False
    settings = PlannerSettings(
        qhead_granularity, qlen_granularity, kvlen_granularity, block_size, bool(is_causal)
    )
    settings.check()
    _check_indptr(seqlens_qo_indptr, "seqlens_qo_indptr")
    _check_indptr(pages_kv_indptr, "pages_kv_indptr")
    if context_lens.dtype != torch.int32:
        raise TypeError(
            f"get_ps_metadata_v1: context_lens must be int32 (got {context_lens.dtype}); the real "
            "planner memcpys int32 bytes from it"
        )
    for name, t in (
        ("work_indptr", work_indptr),
        ("work_info", work_info),
        ("reduce_indptr", reduce_indptr),
        ("reduce_final_map", reduce_final_map),
        ("reduce_partial_map", reduce_partial_map),
    ):
        _check_output(t, name)

    batch_size = seqlens_qo_indptr.numel() - 1
    qo = _host_ints(seqlens_qo_indptr, batch_size + 1, "seqlens_qo_indptr")
    kv = _host_ints(pages_kv_indptr, batch_size + 1, "pages_kv_indptr")
    cl = _host_ints(context_lens, batch_size, "context_lens")

    plan = plan_ps_metadata(
        qo,
        kv,
        cl,
        num_heads_k,
        settings,
        current_cu_count(),
        work_indptr_len=work_indptr.numel(),
        work_info_rows=work_info.numel() // WORK_INFO_COLS,
        reduce_indptr_len=reduce_indptr.numel(),
        reduce_final_map_rows=reduce_final_map.numel() // FINAL_MAP_COLS,
        reduce_partial_map_len=reduce_partial_map.numel(),
        need_lse=bool(need_lse),
    )
    _write(work_indptr, plan.work_indptr)
    # numel/8 whole rows, like the C++ vector; a ragged tail (numel % 8) is left as it was.
    rows = plan.work_info.shape[0] * WORK_INFO_COLS
    work_info.view(-1)[:rows].copy_(torch.from_numpy(plan.work_info.reshape(-1).astype(np.int32)))
    _write(reduce_indptr, plan.reduce_indptr)
    frows = plan.reduce_final_map.shape[0] * FINAL_MAP_COLS
    reduce_final_map.view(-1)[:frows].copy_(
        torch.from_numpy(plan.reduce_final_map.reshape(-1).astype(np.int32))
    )
    _write(reduce_partial_map, plan.reduce_partial_map)


def get_ps_metadata_v1_pre_3606(
    seqlens_qo_indptr: torch.Tensor,
    pages_kv_indptr: torch.Tensor,
    context_lens: torch.Tensor,
    gqa_ratio: int,
    num_heads_k: int,
    work_metadata_ptrs: torch.Tensor,
    work_indptr: torch.Tensor,
    work_info: torch.Tensor,
    reduce_indptr: torch.Tensor,
    reduce_final_map: torch.Tensor,
    reduce_partial_map: torch.Tensor,
    qhead_granularity: int = 1,
    qlen_granularity: int = 256,
    kvlen_granularity: int = 16,
    block_size: int = 16,
    is_causal: bool = True,
) -> None:
    """``get_ps_metadata_v1`` before ROCm/aiter#3606 (e4048607a5): unsplit tiles write the
    output directly (``partial_o_loc`` -1) and get no reduce group."""
    _plan_into(
        seqlens_qo_indptr,
        pages_kv_indptr,
        context_lens,
        gqa_ratio,
        num_heads_k,
        work_metadata_ptrs,
        work_indptr,
        work_info,
        reduce_indptr,
        reduce_final_map,
        reduce_partial_map,
        qhead_granularity,
        qlen_granularity,
        kvlen_granularity,
        block_size,
        is_causal,
    )


def get_ps_metadata_v1_3606(
    seqlens_qo_indptr: torch.Tensor,
    pages_kv_indptr: torch.Tensor,
    context_lens: torch.Tensor,
    gqa_ratio: int,
    num_heads_k: int,
    work_metadata_ptrs: torch.Tensor,
    work_indptr: torch.Tensor,
    work_info: torch.Tensor,
    reduce_indptr: torch.Tensor,
    reduce_final_map: torch.Tensor,
    reduce_partial_map: torch.Tensor,
    qhead_granularity: int = 1,
    qlen_granularity: int = 256,
    kvlen_granularity: int = 16,
    block_size: int = 16,
    is_causal: bool = True,
    need_lse: bool = False,
) -> None:
    """``get_ps_metadata_v1`` after ROCm/aiter#3606: ``need_lse=True`` gives every tile a
    partial slot and a reduce group (so ``mla_reduce_v1`` writes ``final_lse`` for every row);
    ``need_lse=False`` plans exactly as before."""
    _plan_into(
        seqlens_qo_indptr,
        pages_kv_indptr,
        context_lens,
        gqa_ratio,
        num_heads_k,
        work_metadata_ptrs,
        work_indptr,
        work_info,
        reduce_indptr,
        reduce_final_map,
        reduce_partial_map,
        qhead_granularity,
        qlen_granularity,
        kvlen_granularity,
        block_size,
        is_causal,
        need_lse,
    )


class ByContract:
    """One AITER function whose signature and body follow the revision in force.

    ``inspect.signature`` reads ``__signature__`` first, so the emulated module shows the
    parameters of the revision in force (a caller passing ``need_lse`` to a pre-3606 AITER gets
    Python's ``TypeError``, as it would from the real stub); each revision's body is a plain
    function whose own signature the pinned tables are checked against.
    """

    def __init__(self, name: str, by_contract: dict[AiterContract, Callable[..., Any]]) -> None:
        self.__name__ = self.__qualname__ = name
        self.__module__ = __name__
        self.__doc__ = f"AITER's {name} under the contract revision in force."
        self.by_contract = by_contract

    def current(self) -> Callable[..., Any]:
        """The body of the revision in force."""
        return self.by_contract[current_contract()]

    @property
    def __signature__(self) -> inspect.Signature:
        return inspect.signature(self.current())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.current()(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<emulated aiter.{self.__name__} ({current_contract()})>"


get_ps_metadata_v1 = ByContract(
    "get_ps_metadata_v1",
    {
        AiterContract.PRE_3606: get_ps_metadata_v1_pre_3606,
        AiterContract.PR_3606: get_ps_metadata_v1_3606,
    },
)
