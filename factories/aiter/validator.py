"""A pure validator for PS prefill plans: every invariant of contract §2.4, as violations.

Why: the planner's output is consumed by a kernel that trusts it blindly (no range checks; a bad
partial slot corrupts a neighbour, a missing kv piece silently drops keys). A validator that
returns *what* is wrong, *where*, and the expected vs actual values lets property tests run the
(emulated or real) planner over thousands of batches, lets corruption tests prove each check can
fail, and lets a failure in CI be read without a debugger. It never mutates its inputs and
depends on nothing but its arguments.

Checks (name -> invariant) are the members of :class:`Check`; each has a corruption test.
Plans are judged under a contract revision (:mod:`factories.aiter.revision`) and the ``need_lse``
the planner was called with: from ROCm/aiter#3606 on, ``need_lse=True`` makes every tile a
*reduced* tile (a partial slot and a reduce group of one or more partials, contract §8.3), and
the info sizes follow the revision's ``max_partials``.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np
import torch

from factories.aiter.emulation.device_model import current_cu_count
from factories.aiter.layout import (
    FINAL_MAP_COLS,
    KERNEL_TILE_ROWS,
    WORK_INFO_COLS,
    PlannerSettings,
    PsMetadataSizes,
    WorkInfoCol,
    c_div,
)
from factories.aiter.revision import AiterContract, current_contract


class Check(enum.Enum):
    """The invariants a plan must satisfy; the value is the stable name, ``invariant`` the rule.

    An enum rather than string keys so that a misspelt check is an ``AttributeError`` at the
    call site instead of a violation nobody asserts on; the text is what a failure prints.
    """

    invariant: str

    def __new__(cls, name: str, invariant: str) -> Check:
        member = object.__new__(cls)
        member._value_ = name
        member.invariant = invariant
        return member

    BUFFER_DTYPE = (
        "buffer_dtype",
        "metadata buffers are int32 (work_metadata_ptrs: 2 x uint64) [§1]",
    )
    KERNEL_SETTINGS = (
        "kernel_settings",
        "settings are what the fp8 kernel needs: qhg 1, qg 256, kvg 128*2^k, block 1 [§3.6]",
    )
    CONTEXT_LENS = (
        "context_lens",
        "context_lens[b] tokens fill exactly kv_indptr[b+1]-kv_indptr[b] pages [§3.6]",
    )
    WORK_INDPTR_LENGTH = (
        "work_indptr_length",
        "work_indptr has exactly CU+1 entries (the reduce info reads its LAST one) [§2.3]",
    )
    WORK_INDPTR_MONOTONE = (
        "work_indptr_monotone",
        "work_indptr starts at 0 and never decreases [§2.3]",
    )
    INFO_SIZES = (
        "info_sizes",
        "used works / reduce groups / partials fit get_ps_metadata_info_v1's sizes [§1]",
    )
    BUFFER_CAPACITY = (
        "buffer_capacity",
        "used works / groups / partials fit the buffers actually passed [§1]",
    )
    WORK_FIELDS = (
        "work_fields",
        "batch index in range, head range = pack(h*qhg, (h+1)*qhg) with h < H, loc >= -1 [§2.2]",
    )
    TILE_IN_REQUEST = (
        "tile_in_request",
        "a work's [qo_start, qo_end) lies inside its request (never straddles) [§2.4]",
    )
    TILE_ALIGNMENT = (
        "tile_alignment",
        "q tiles start at request offsets k*qg and end at min(start+qg, request end) [§2.3]",
    )
    Q_ROWS_ONCE = ("q_rows_once", "every q row lies in exactly one tile [§2.4]")
    TILE_HEAD_COVERAGE = ("tile_head_coverage", "every tile has >= 1 work for every k-head [§2.4]")
    KV_PIECES_CONTIGUOUS = (
        "kv_pieces_contiguous",
        "per (tile, head) kv pieces start at kv_indptr[b], are contiguous, increasing, "
        "non-overlapping, non-empty when split [§2.4]",
    )
    KV_COVERAGE = (
        "kv_coverage",
        "per (tile, head) the pieces end at kv_indptr[b] + min(ceil(eff/kvg)*kvg/bs, pages) [§2.4]",
    )
    SPLIT_BOUNDARY_GRANULARITY = (
        "split_boundary_granularity",
        "every split boundary (local kv start) is a multiple of kvlen_granularity [§2.4]",
    )
    SPLIT_TGS_CONSECUTIVE = (
        "split_tgs_consecutive",
        "the pieces of a split tile go to consecutive TGs [§2.4]",
    )
    SPLIT_PARTIAL_FLAGS = (
        "split_partial_flags",
        "unsplit tile: exactly one work, loc -1 (need_lse: loc >= 0); split tile: >= 2 works, "
        "all loc >= 0 [§2.4, §8.3]",
    )
    PARTIAL_SLOT_SPACING = (
        "partial_slot_spacing",
        "partial offsets are multiples of 256 rows (the kernel writes 256 rows) [§3.4]",
    )
    PARTIAL_SLOT_UNIQUE = (
        "partial_slot_unique",
        "no two works of one head share a partial slot [§3.4]",
    )
    PARTIAL_SLOT_BOUNDS = (
        "partial_slot_bounds",
        "every partial slot [p, p+256) lies inside the partial buffers [§3.3]",
    )
    TG_HEAD_ORDER = (
        "tg_head_order",
        "within a TG works are head-major, heads belong to the TG's cluster, all heads get "
        "the same slicing [§2.3]",
    )
    LOAD_BALANCE = ("load_balance", "per cluster, units per (TG, head) differ by at most 1 [§2.4]")
    REDUCE_INDPTR_MONOTONE = (
        "reduce_indptr_monotone",
        "reduce_indptr starts at 0 and never decreases [§2.3]",
    )
    REDUCE_GROUP_SIZE = (
        "reduce_group_size",
        "every reduce group has 2..TGs-per-cluster partials (need_lse: 1..) [§2.4, §8.3]",
    )
    REDUCE_ORDER = ("reduce_order", "reduce groups are in ascending q order [§2.3]")
    REDUCE_FINAL_MAP = (
        "reduce_final_map",
        "a group's final map is the q range of a split tile (need_lse: of any tile) [§2.3, §8.3]",
    )
    REDUCE_PARTIALS = (
        "reduce_partials",
        "a group lists exactly the partial offsets of its tile's works (for every head) [§2.3]",
    )
    REDUCE_MISSING_GROUP = (
        "reduce_missing_group",
        "every split tile (need_lse: every tile) has exactly one reduce group [§2.4, §8.3]",
    )
    TAIL_ZEROED = ("tail_zeroed", "entries past the used length are zero [§2.3]")


_MAX_PER_CHECK = 8


@attrs.frozen
class PlanViolation:
    """One violated invariant: which check, where, why, and the expected and actual values."""

    check: Check
    where: str
    message: str
    expected: Any = None
    actual: Any = None


@attrs.define
class _Violations:
    """Collects violations, at most ``_MAX_PER_CHECK`` per check plus one overflow summary."""

    items: list[PlanViolation] = attrs.Factory(list)
    counts: dict[Check, int] = attrs.Factory(dict)

    def add(
        self, check: Check, where: str, message: str, expected: Any = None, actual: Any = None
    ) -> None:
        n = self.counts.get(check, 0)
        self.counts[check] = n + 1
        if n < _MAX_PER_CHECK:
            self.items.append(
                PlanViolation(check, where, message, _plain(expected), _plain(actual))
            )

    def result(self) -> tuple[PlanViolation, ...]:
        extra = [
            PlanViolation(
                c,
                "(more)",
                f"{n - _MAX_PER_CHECK} more violations of this check not listed",
                None,
                n,
            )
            for c, n in self.counts.items()
            if n > _MAX_PER_CHECK
        ]
        return tuple(self.items + extra)


def _plain(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return tuple(_plain(v) for v in x.tolist())
    if isinstance(x, (list, tuple)):
        return tuple(_plain(v) for v in x)
    if isinstance(x, np.generic):
        return x.item()
    return x


def _np(t: Any) -> np.ndarray:
    if isinstance(t, torch.Tensor):
        t = t.detach().to("cpu")
        if t.dtype == torch.uint64:
            t = t.view(torch.int64)
        return t.numpy().astype(np.int64)
    return np.asarray(t, dtype=np.int64)


def _dtype_name(t: Any) -> str:
    return str(t.dtype).replace("torch.", "") if hasattr(t, "dtype") else type(t).__name__


@attrs.frozen
class _Tiles:
    """The expected q tiles (request order) with their expected kv coverage end, in pages."""

    batch: np.ndarray
    qs: np.ndarray
    qe: np.ndarray
    kv_need: np.ndarray  # pages of the request the tile's works must cover


def _expected_tiles(qo: np.ndarray, kv: np.ndarray, ctx: np.ndarray, s: PlannerSettings) -> _Tiles:
    bs, qg, kvg = s.block_size, s.qlen_granularity, s.kvlen_granularity
    parts: list[tuple[int, int, int, int]] = []
    for b in range(len(qo) - 1):
        ql, kl, pages = int(qo[b + 1] - qo[b]), int(ctx[b]), int(kv[b + 1] - kv[b])
        for o in range(0, max(ql, 0), qg):
            e = min(o + qg, ql)
            eff = min(kl - ql + e, kl) if s.is_causal else kl
            units = max(c_div(eff + kvg - 1, kvg), 0)
            parts.append((b, int(qo[b]) + o, int(qo[b]) + e, min(units * (kvg // bs), pages)))
    arr = np.asarray(parts, dtype=np.int64).reshape(-1, 4)
    return _Tiles(arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3])


def validate_plan(
    work_metadata_ptrs: Any,
    work_indptr: Any,
    work_info: Any,
    reduce_indptr: Any,
    reduce_final_map: Any,
    reduce_partial_map: Any,
    *,
    qo_indptr: Any,
    kv_indptr: Any,
    context_lens: Any,
    num_heads_k: int,
    settings: PlannerSettings,
    cu_count: int | None = None,
    partial_rows: int | None = None,
    max_qlen: int | None = None,
    need_lse: bool = False,
    contract: AiterContract | None = None,
) -> tuple[PlanViolation, ...]:
    """Check a PS plan (the six buffers, in ``get_ps_metadata_info_v1`` order) against its inputs.

    ``cu_count`` defaults to the emulated one; ``partial_rows`` (rows of splitData/splitLse)
    defaults to what ``mla_prefill_ps_fwd`` allocates, ``max_partials * 256``; ``max_qlen`` (for the
    info sizes) defaults to the longest request. ``need_lse`` is what the planner was asked for
    (only the ``3606`` revision has it); ``contract`` (default: the revision in force) picks the
    info sizes. Returns an empty tuple for a valid plan.
    """
    contract = current_contract() if contract is None else contract
    if need_lse and contract is AiterContract.PRE_3606:
        raise ValueError("need_lse exists only from the 3606 contract revision on")
    f = _Violations()
    cu = current_cu_count() if cu_count is None else cu_count
    qo, kv, ctx = _np(qo_indptr), _np(kv_indptr), _np(context_lens)
    wi, info = _np(work_indptr).reshape(-1), _np(work_info).reshape(-1, WORK_INFO_COLS)
    ri = _np(reduce_indptr).reshape(-1)
    fm = _np(reduce_final_map).reshape(-1, FINAL_MAP_COLS)
    pm = _np(reduce_partial_map).reshape(-1)
    batch = len(qo) - 1
    H = num_heads_k
    ncl = math.gcd(H, cu)
    tpc, khpc = cu // ncl, H // ncl
    qlens = np.diff(qo)
    sizes = PsMetadataSizes.compute(
        batch,
        H,
        int(max_qlen if max_qlen is not None else (qlens.max() if batch else 0)),
        settings.qlen_granularity,
        cu,
        contract,
    )
    rows_avail = sizes.partial_rows if partial_rows is None else partial_rows

    buffers = (
        work_metadata_ptrs,
        work_indptr,
        work_info,
        reduce_indptr,
        reduce_final_map,
        reduce_partial_map,
    )
    _check_static(f, buffers, settings, qo, kv, ctx)
    used_works = _check_work_indptr(f, wi, cu, len(info))
    n_groups, n_partials = _count_groups(ri)
    _check_sizes(f, used_works, n_groups, n_partials, sizes, len(info), len(ri), len(fm), len(pm))

    works, tg = _works_by_tg(wi, info)
    tiles = _expected_tiles(qo, kv, ctx, settings)
    ok, head = _check_fields(f, works, batch, H, settings.qhead_granularity)
    ok = _check_tile_placement(f, works, ok, qo, settings.qlen_granularity)
    _check_rows_once(f, works[ok], int(qo[-1]) if batch >= 0 and len(qo) else 0)
    tile_of = _match_tiles(works, ok, tiles)
    ok &= tile_of >= 0
    _check_tile_heads(f, tile_of[ok], head[ok], tiles, H)
    split_tiles = _check_pieces(f, works, tg, head, tile_of, ok, kv, tiles, settings, need_lse)
    reduced_tiles = split_tiles | need_lse
    _check_slots(f, works, head, ok, rows_avail)
    _check_tg_order(f, works, tg, head, ok, tpc, khpc)
    _check_balance(f, works, tg, head, ok, tpc, khpc, ncl, settings)
    _check_reduce(
        f, ri, fm, pm, n_groups, works, head, tile_of, ok, tiles, reduced_tiles, H, tpc, need_lse
    )
    _check_tails(f, info, used_works, fm, n_groups, pm, n_partials)
    return f.result()


# ---------------------------------------------------------------------------------------------


_BUFFER_NAMES = (
    "work_indptr",
    "work_info",
    "reduce_indptr",
    "reduce_final_map",
    "reduce_partial_map",
)


def _check_static(f: _Violations, buffers: tuple, s: PlannerSettings, qo, kv, ctx) -> None:
    wmp = buffers[0]
    if hasattr(wmp, "dtype") and (_dtype_name(wmp) != "uint64" or tuple(wmp.shape) != (2,)):
        f.add(
            Check.BUFFER_DTYPE,
            "work_metadata_ptrs",
            "must be a [2] uint64 buffer",
            ("uint64", (2,)),
            (_dtype_name(wmp), tuple(wmp.shape)),
        )
    for name, t in zip(_BUFFER_NAMES, buffers[1:]):
        if hasattr(t, "dtype") and _dtype_name(t) != "int32":
            f.add(Check.BUFFER_DTYPE, name, "must be int32", "int32", _dtype_name(t))
    kernel = PlannerSettings.for_fp8_prefill_kernel(s.is_causal)
    kvg = s.kvlen_granularity
    good = (
        s.qhead_granularity == kernel.qhead_granularity
        and s.qlen_granularity == KERNEL_TILE_ROWS
        and s.block_size == 1
        and kvg >= 128
        and kvg % 128 == 0
        and kvg & (kvg - 1) == 0
    )
    if not good:
        f.add(
            Check.KERNEL_SETTINGS,
            "settings",
            "the fp8 PS kernel needs qhg=1, qg=256, kvg a power of 2 >= 128, block_size=1",
            attrs.astuple(kernel)[:4],
            attrs.astuple(s)[:4],
        )
    bs = s.block_size
    for b in range(len(qo) - 1):
        pages = int(kv[b + 1] - kv[b])
        need = -(-int(ctx[b]) // bs) if b < len(ctx) else None
        if need != pages:
            f.add(
                Check.CONTEXT_LENS,
                f"context_lens[{b}]",
                "context length does not fill the request's kv pages",
                pages,
                need,
            )


def _check_work_indptr(f: _Violations, wi: np.ndarray, cu: int, info_rows: int) -> int:
    if len(wi) != cu + 1:
        f.add(
            Check.WORK_INDPTR_LENGTH,
            "work_indptr",
            f"must have CU+1 = {cu + 1} entries",
            cu + 1,
            len(wi),
        )
    if len(wi) == 0:
        return 0
    if wi[0] != 0:
        f.add(Check.WORK_INDPTR_MONOTONE, "work_indptr[0]", "must be 0", 0, wi[0])
    for i in np.flatnonzero(np.diff(wi) < 0):
        f.add(
            Check.WORK_INDPTR_MONOTONE,
            f"work_indptr[{i + 1}]",
            "decreases",
            f">= {wi[i]}",
            wi[i + 1],
        )
    return int(wi.max())


def _count_groups(ri: np.ndarray) -> tuple[int, int]:
    """Groups before the reduce kernel's stop (first g with ri[g] == ri[-1]) and their partials."""
    if len(ri) < 2:
        return 0, 0
    stop = np.flatnonzero(ri[:-1] == ri[-1])
    g = int(stop[0]) if len(stop) else len(ri) - 1
    return g, int(ri[g] - ri[0])


def _check_sizes(
    f: _Violations,
    used_works,
    n_groups,
    n_partials,
    sizes: PsMetadataSizes,
    info_rows,
    ri_len,
    fm_rows,
    pm_len,
) -> None:
    for what, used, limit in (
        ("works", used_works, sizes.max_works),
        ("reduce groups", n_groups, sizes.qo_tile_cnt),
        ("partials", n_partials, sizes.max_partials),
    ):
        if used > limit:
            f.add(
                Check.INFO_SIZES,
                what,
                f"more {what} than get_ps_metadata_info_v1 sizes for",
                f"<= {limit}",
                used,
            )
    for what, used, limit in (
        ("work_info", used_works, info_rows),
        ("reduce_indptr", n_groups + 1, ri_len),
        ("reduce_final_map", n_groups, fm_rows),
        ("reduce_partial_map", n_partials, pm_len),
    ):
        if used > limit:
            f.add(
                Check.BUFFER_CAPACITY,
                what,
                "the plan uses more entries than the buffer has",
                f"<= {limit}",
                used,
            )


def _works_by_tg(wi: np.ndarray, info: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Works in launch order (what each workgroup loops over) with their TG index."""
    if len(wi) < 2:
        return np.zeros((0, WORK_INFO_COLS), np.int64), np.zeros(0, np.int64)
    starts = np.clip(wi[:-1], 0, len(info))
    ends = np.clip(wi[1:], 0, len(info))
    lengths = np.maximum(ends - starts, 0)
    if lengths.sum() == 0:
        return np.zeros((0, WORK_INFO_COLS), np.int64), np.zeros(0, np.int64)
    idx = np.concatenate([np.arange(s, e) for s, e in zip(starts, ends) if e > s])
    tg = np.repeat(np.arange(len(lengths)), lengths)
    works = np.concatenate([info[idx], idx[:, None]], axis=1)  # extra column 8: row in work_info
    return works, tg


def _where(works: np.ndarray, i: int) -> str:
    return f"work_info[{works[i, WORK_INFO_COLS]}]"


def _check_fields(
    f: _Violations, works, batch: int, H: int, qhg: int
) -> tuple[np.ndarray, np.ndarray]:
    b = works[:, WorkInfoCol.BATCH_IDX]
    hr = works[:, WorkInfoCol.Q_HEAD_RANGE] & 0xFFFFFFFF
    low, high = hr & 0xFFFF, (hr >> 16) & 0xFFFF
    head = low // qhg
    loc = works[:, WorkInfoCol.PARTIAL_O_LOC]
    bad_b = (b < 0) | (b >= batch)
    bad_h = (low % qhg != 0) | (high != low + qhg) | (head >= H)
    bad_loc = loc < -1
    for i in np.flatnonzero(bad_b):
        f.add(
            Check.WORK_FIELDS,
            _where(works, i),
            "batch_idx out of range",
            f"0..{batch - 1}",
            b[i],
        )
    for i in np.flatnonzero(bad_h):
        f.add(
            Check.WORK_FIELDS,
            _where(works, i),
            "q_head_range is not pack(h*qhg, (h+1)*qhg) for a head < H",
            f"head < {H}",
            (int(low[i]), int(high[i])),
        )
    for i in np.flatnonzero(bad_loc):
        f.add(Check.WORK_FIELDS, _where(works, i), "partial_o_loc < -1", ">= -1", loc[i])
    return ~(bad_b | bad_h | bad_loc), head


def _check_tile_placement(f: _Violations, works, ok, qo, qg) -> np.ndarray:
    b = np.where(ok, works[:, WorkInfoCol.BATCH_IDX], 0)
    qs, qe = works[:, WorkInfoCol.QO_START], works[:, WorkInfoCol.QO_END]
    lo, hi = qo[b], qo[b + 1] if len(qo) > 1 else qo[b]
    inside = (lo <= qs) & (qs < qe) & (qe <= hi)
    for i in np.flatnonzero(ok & ~inside):
        f.add(
            Check.TILE_IN_REQUEST,
            _where(works, i),
            f"q range straddles or leaves request {b[i]}",
            (lo[i], hi[i]),
            (qs[i], qe[i]),
        )
    aligned = ((qs - lo) % qg == 0) & (qe == np.minimum(qs + qg, hi))
    for i in np.flatnonzero(ok & inside & ~aligned):
        f.add(
            Check.TILE_ALIGNMENT,
            _where(works, i),
            "q range is not one of the request's qg tiles",
            (qs[i], int(min(qs[i] + qg, hi[i]))),
            (qs[i], qe[i]),
        )
    return ok & inside & aligned


def _check_rows_once(f: _Violations, works, total_rows: int) -> None:
    cols = [WorkInfoCol.QO_START, WorkInfoCol.QO_END]
    ranges = np.unique(works[:, cols], axis=0) if len(works) else np.zeros((0, 2), np.int64)
    cover = np.zeros(total_rows + 1, dtype=np.int64)
    np.add.at(cover, np.clip(ranges[:, 0], 0, total_rows), 1)
    np.add.at(cover, np.clip(ranges[:, 1], 0, total_rows), -1)
    count = np.cumsum(cover)[:total_rows]
    bad = np.flatnonzero(count != 1)
    if len(bad):
        runs = np.split(bad, np.flatnonzero(np.diff(bad) != 1) + 1)
        for run in runs:
            f.add(
                Check.Q_ROWS_ONCE,
                f"q rows [{run[0]}, {run[-1] + 1})",
                "rows not covered by exactly one tile",
                1,
                int(count[run[0]]),
            )


def _match_tiles(works, ok, tiles: _Tiles) -> np.ndarray:
    qs = works[:, WorkInfoCol.QO_START]
    pos = np.clip(np.searchsorted(tiles.qs, qs), 0, max(len(tiles.qs) - 1, 0))
    if len(tiles.qs) == 0:
        return np.full(len(works), -1)
    hit = (
        ok
        & (tiles.qs[pos] == qs)
        & (tiles.qe[pos] == works[:, WorkInfoCol.QO_END])
        & (tiles.batch[pos] == works[:, WorkInfoCol.BATCH_IDX])
    )
    return np.where(hit, pos, -1)


def _tile_name(tiles: _Tiles, t: int) -> str:
    return f"tile [{tiles.qs[t]}, {tiles.qe[t]}) of request {tiles.batch[t]}"


def _check_tile_heads(f: _Violations, tile_of, head, tiles: _Tiles, H: int) -> None:
    present = np.zeros((len(tiles.qs), H), dtype=bool)
    present[tile_of, head] = True
    for t, h in zip(*np.nonzero(~present)):
        f.add(
            Check.TILE_HEAD_COVERAGE,
            f"{_tile_name(tiles, t)}, head {h}",
            "no work covers this tile for this head",
            ">= 1 work",
            0,
        )


def _check_pieces(
    f: _Violations,
    works,
    tg,
    head,
    tile_of,
    ok,
    kv,
    tiles: _Tiles,
    s: PlannerSettings,
    need_lse: bool = False,
) -> np.ndarray:
    """Per (tile, head) kv pieces. Returns a bool per tile: split (>= 2 works for some head)."""
    split_tile = np.zeros(len(tiles.qs), dtype=bool)
    idx = np.flatnonzero(ok)
    if len(idx) == 0:
        return split_tile
    order = idx[np.lexsort((idx, head[idx], tile_of[idx]))]
    t, h = tile_of[order], head[order]
    new = np.ones(len(order), dtype=bool)
    new[1:] = (t[1:] != t[:-1]) | (h[1:] != h[:-1])
    group = np.cumsum(new) - 1
    size = np.bincount(group)[group]
    ks, ke = works[order, WorkInfoCol.KV_START], works[order, WorkInfoCol.KV_END]
    loc = works[order, WorkInfoCol.PARTIAL_O_LOC]
    kv0 = kv[tiles.batch[t]]
    prev_ke = np.roll(ke, 1)
    prev_tg = np.roll(tg[order], 1)
    split_tile[np.unique(t[size >= 2])] = True

    def where(i: int) -> str:
        return f"{_where(works, order[i])} ({_tile_name(tiles, t[i])}, head {h[i]})"

    for i in np.flatnonzero(new & (ks != kv0)):
        f.add(
            Check.KV_PIECES_CONTIGUOUS,
            where(i),
            "first kv piece does not start at the request's kv start",
            kv0[i],
            ks[i],
        )
    for i in np.flatnonzero(~new & (ks < prev_ke)):
        f.add(
            Check.KV_PIECES_CONTIGUOUS,
            where(i),
            "kv piece overlaps the previous one",
            prev_ke[i],
            ks[i],
        )
    for i in np.flatnonzero(~new & (ks > prev_ke)):
        f.add(Check.KV_PIECES_CONTIGUOUS, where(i), "gap between kv pieces", prev_ke[i], ks[i])
    for i in np.flatnonzero((ke < ks) | ((size >= 2) & (ke == ks))):
        f.add(
            Check.KV_PIECES_CONTIGUOUS,
            where(i),
            "kv piece is empty or reversed",
            f"> {ks[i]}",
            ke[i],
        )
    last = np.ones(len(order), dtype=bool)
    last[:-1] = new[1:]
    want_end = kv0 + tiles.kv_need[t]
    for i in np.flatnonzero(last & (ke != want_end)):
        f.add(
            Check.KV_COVERAGE,
            where(i),
            "kv pieces do not end at the tile's causal need (rounded, clamped)",
            want_end[i],
            ke[i],
        )
    bpu_tokens = s.kvlen_granularity
    for i in np.flatnonzero(~new & (((ks - kv0) * s.block_size) % bpu_tokens != 0)):
        f.add(
            Check.SPLIT_BOUNDARY_GRANULARITY,
            where(i),
            f"split boundary not a multiple of kvlen_granularity {bpu_tokens}",
            0,
            int(((ks[i] - kv0[i]) * s.block_size) % bpu_tokens),
        )
    for i in np.flatnonzero(~new & (tg[order] != prev_tg + 1)):
        f.add(
            Check.SPLIT_TGS_CONSECUTIVE,
            where(i),
            "next piece of a split tile is not on the next TG",
            prev_tg[i] + 1,
            tg[order][i],
        )
    for i in np.flatnonzero((size == 1) & (loc != -1) & (not need_lse)):
        f.add(
            Check.SPLIT_PARTIAL_FLAGS,
            where(i),
            "unsplit tile must have partial_o_loc -1",
            -1,
            loc[i],
        )
    for i in np.flatnonzero((size == 1) & (loc < 0) & need_lse):
        f.add(
            Check.SPLIT_PARTIAL_FLAGS,
            where(i),
            "under need_lse an unsplit tile must write a partial slot (it writes the output)",
            ">= 0",
            loc[i],
        )
    for i in np.flatnonzero((size >= 2) & (loc < 0)):
        f.add(
            Check.SPLIT_PARTIAL_FLAGS,
            where(i),
            "work of a split tile must write a partial slot",
            ">= 0",
            loc[i],
        )
    return split_tile


def _check_slots(f: _Violations, works, head, ok, rows_avail: int) -> None:
    loc = works[:, WorkInfoCol.PARTIAL_O_LOC]
    sp = np.flatnonzero(ok & (loc >= 0))
    for i in sp[loc[sp] % KERNEL_TILE_ROWS != 0]:
        f.add(
            Check.PARTIAL_SLOT_SPACING,
            _where(works, i),
            f"partial offset not a multiple of {KERNEL_TILE_ROWS} rows",
            0,
            int(loc[i] % KERNEL_TILE_ROWS),
        )
    for i in sp[loc[sp] + KERNEL_TILE_ROWS > rows_avail]:
        f.add(
            Check.PARTIAL_SLOT_BOUNDS,
            _where(works, i),
            f"slot [p, p+{KERNEL_TILE_ROWS}) exceeds the {rows_avail} partial rows",
            f"<= {rows_avail - KERNEL_TILE_ROWS}",
            loc[i],
        )
    if len(sp):
        keys = np.stack([head[sp], loc[sp]], axis=1)
        _, inv, counts = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
        for i in sp[counts[inv.reshape(-1)] > 1]:
            f.add(
                Check.PARTIAL_SLOT_UNIQUE,
                _where(works, i),
                f"partial slot {loc[i]} of head {head[i]} used by more than one work",
                1,
                int(counts[inv.reshape(-1)][np.searchsorted(sp, i)]),
            )


def _check_tg_order(f: _Violations, works, tg, head, ok, tpc: int, khpc: int) -> None:
    if len(works) == 0:
        return
    wrong_cluster = ok & (head // max(khpc, 1) != tg // max(tpc, 1))
    for i in np.flatnonzero(wrong_cluster):
        f.add(
            Check.TG_HEAD_ORDER,
            _where(works, i),
            f"head {head[i]} is not in TG {tg[i]}'s cluster",
            tg[i] // tpc,
            head[i] // khpc,
        )
    same_tg = tg[1:] == tg[:-1]
    for i in np.flatnonzero(same_tg & (head[1:] < head[:-1])) + 1:
        f.add(
            Check.TG_HEAD_ORDER,
            _where(works, i),
            "works of a TG are not head-major",
            f">= {head[i - 1]}",
            head[i],
        )
    for tg_id, diff_head, rows, first_rows in _tg_slicing_differences(works, tg, head, ok, khpc):
        if diff_head is None:
            f.add(
                Check.TG_HEAD_ORDER,
                f"TG {tg_id}",
                "a non-empty TG must hold works for every head of its cluster",
                khpc,
                rows,
            )
        else:
            f.add(
                Check.TG_HEAD_ORDER,
                f"TG {tg_id} head {diff_head}",
                "heads of a TG do not get the identical kv slicing",
                first_rows,
                rows,
            )


def _tg_slicing_differences(works, tg, head, ok, khpc: int):
    """Per run of consecutive works of one TG whose works are all valid, in run order: each head
    (ascending) whose works' kv slicing differs from the lowest head's, as (TG, head, its rows,
    the lowest head's rows), then (TG, None, distinct heads, None) when the run does not hold
    exactly ``khpc`` heads.

    Vectorised over all runs at once (one stable sort by run, head, position): the per-run loop it
    replaces compared heads pairwise in Python and was most of the validator's time on plans
    with hundreds of TGs.
    """
    n = len(works)
    run_starts = np.flatnonzero(np.r_[True, tg[1:] != tg[:-1]])
    run_of = np.cumsum(np.r_[True, tg[1:] != tg[:-1]]) - 1
    run_ok = np.logical_and.reduceat(ok.astype(bool), run_starts)
    order = np.lexsort((np.arange(n), head, run_of))
    run_sorted, head_sorted = run_of[order], head[order]
    starts_group = np.r_[
        True, (run_sorted[1:] != run_sorted[:-1]) | (head_sorted[1:] != head_sorted[:-1])
    ]
    group_start = np.flatnonzero(starts_group)
    group_of = np.cumsum(starts_group) - 1
    rows = np.diff(np.r_[group_start, n])
    group_run = run_sorted[group_start]
    opens_run = np.r_[True, group_run[1:] != group_run[:-1]]
    run_first_group = np.flatnonzero(opens_run)
    reference = run_first_group[np.cumsum(opens_run) - 1]
    rank = np.arange(n) - group_start[group_of]
    ref_group = reference[group_of]
    comparable = rank < rows[ref_group]
    ref_pos = np.where(comparable, group_start[ref_group] + rank, 0)
    body = works[order][:, : WorkInfoCol.Q_HEAD_RANGE]
    row_same = comparable & (body == body[ref_pos]).all(axis=1)
    group_same = (rows == rows[reference]) & np.logical_and.reduceat(row_same, group_start)
    heads_per_run = np.diff(np.r_[run_first_group, len(group_start)])
    differing = np.flatnonzero(~group_same & ~opens_run & run_ok[group_run])
    incomplete = np.flatnonzero(run_ok & (heads_per_run != khpc))
    found = [(int(group_run[g]), 0, int(g)) for g in differing]
    found += [(int(r), 1, -1) for r in incomplete]
    for run, kind, g in sorted(found):
        tg_id = tg[run_starts[run]]
        if kind:
            yield tg_id, None, int(heads_per_run[run]), None
        else:
            yield tg_id, head_sorted[group_start[g]], int(rows[g]), int(rows[reference[g]])


def _check_balance(
    f: _Violations, works, tg, head, ok, tpc: int, khpc: int, ncl: int, s: PlannerSettings
) -> None:
    bpu = s.kvlen_granularity // s.block_size
    span = np.maximum(works[:, WorkInfoCol.KV_END] - works[:, WorkInfoCol.KV_START], 0)
    units = -(-span // bpu)
    n_tg = ncl * tpc
    valid = ok & (tg < n_tg)
    per = np.zeros((n_tg, ncl * khpc), dtype=np.int64)
    np.add.at(per, (tg[valid], head[valid]), units[valid])
    for c in range(ncl):
        block = per[c * tpc : (c + 1) * tpc, c * khpc : (c + 1) * khpc]
        if block.size and block.max() - block.min() > 1:
            f.add(
                Check.LOAD_BALANCE,
                f"cluster {c}",
                "units per (TG, head) differ by more than 1",
                "max - min <= 1",
                (int(block.min()), int(block.max())),
            )


def _check_reduce(
    f: _Violations,
    ri,
    fm,
    pm,
    n_groups,
    works,
    head,
    tile_of,
    ok,
    tiles: _Tiles,
    split_tiles,
    H,
    tpc,
    need_lse: bool = False,
) -> None:
    if len(ri) and ri[0] != 0:
        f.add(Check.REDUCE_INDPTR_MONOTONE, "reduce_indptr[0]", "must be 0", 0, ri[0])
    for i in np.flatnonzero(np.diff(ri) < 0):
        f.add(
            Check.REDUCE_INDPTR_MONOTONE,
            f"reduce_indptr[{i + 1}]",
            "decreases",
            f">= {ri[i]}",
            ri[i + 1],
        )
    n_groups = min(n_groups, len(fm))
    group_tile = np.full(n_groups, -1)
    least = 1 if need_lse else 2
    kind = "tile" if need_lse else "split tile"
    for g in range(n_groups):
        n = int(ri[g + 1] - ri[g])
        if not least <= n <= tpc:
            f.add(
                Check.REDUCE_GROUP_SIZE,
                f"reduce_indptr[{g}:{g + 2}]",
                f"a reduce group must have {least}..{tpc} partials",
                f"{least}..{tpc}",
                n,
            )
        if g and fm[g, 0] <= fm[g - 1, 0]:
            f.add(
                Check.REDUCE_ORDER,
                f"reduce_final_map[{g}]",
                "groups are not in ascending q order",
                f"> {fm[g - 1, 0]}",
                fm[g, 0],
            )
        t = int(np.searchsorted(tiles.qs, fm[g, 0])) if len(tiles.qs) else 0
        starts_tile = t < len(tiles.qs) and tiles.qs[t] == fm[g, 0]
        if starts_tile and tiles.qe[t] == fm[g, 1] and split_tiles[t]:
            group_tile[g] = t
        else:
            want = (int(tiles.qs[t]), int(tiles.qe[t])) if starts_tile else f"a {kind}'s q range"
            f.add(
                Check.REDUCE_FINAL_MAP,
                f"reduce_final_map[{g}]",
                f"not the q range of a {kind}",
                want,
                (fm[g, 0], fm[g, 1]),
            )
    referenced = group_tile[group_tile >= 0]
    for t in np.unique(referenced)[np.unique(referenced, return_counts=True)[1] > 1]:
        f.add(
            Check.REDUCE_MISSING_GROUP,
            _tile_name(tiles, t),
            f"{kind} has more than one reduce group",
            1,
            int((referenced == t).sum()),
        )
    for t in np.flatnonzero(split_tiles & ~np.isin(np.arange(len(split_tiles)), referenced)):
        f.add(
            Check.REDUCE_MISSING_GROUP,
            _tile_name(tiles, t),
            f"{kind} has no reduce group",
            1,
            0,
        )

    # Partial lists: multiset of (tile, head, loc) from the works vs from the reduce map x heads.
    loc = works[:, WorkInfoCol.PARTIAL_O_LOC]
    sel = ok & (loc >= 0) & np.isin(tile_of, referenced)
    span = int(max(loc.max(initial=0), pm.max(initial=0))) + 1
    from_works = (tile_of[sel] * H + head[sel]) * span + loc[sel]
    exp_parts = []
    for g in np.flatnonzero(group_tile >= 0):
        p = pm[ri[g] : ri[g + 1]]
        p = p[(p >= 0) & (p < span)]
        base = group_tile[g] * H + np.arange(H)
        exp_parts.append((base[:, None] * span + p[None, :]).reshape(-1))
    from_map = np.concatenate(exp_parts) if exp_parts else np.zeros(0, np.int64)
    diff = np.setxor1d(from_works, from_map)
    seen: set[tuple[int, int]] = set()
    for key in diff:
        th = int(key // span)
        t, hh = th // H, th % H
        if (t, hh) in seen:
            continue
        seen.add((t, hh))
        want = sorted(int(x) for x in from_works[from_works // span == th] % span)
        got = sorted(int(x) for x in from_map[from_map // span == th] % span)
        f.add(
            Check.REDUCE_PARTIALS,
            f"{_tile_name(tiles, t)}, head {hh}",
            "reduce group does not list exactly the tile's partial offsets",
            want,
            got,
        )


def _check_tails(f: _Violations, info, used_works, fm, n_groups, pm, n_partials) -> None:
    for r in np.flatnonzero((info[used_works:] != 0).any(axis=1)) + used_works:
        f.add(
            Check.TAIL_ZEROED,
            f"work_info[{r}]",
            "unused work_info row is not zero",
            (0,) * WORK_INFO_COLS,
            info[r],
        )
    for r in np.flatnonzero((fm[n_groups:] != 0).any(axis=1)) + n_groups:
        f.add(
            Check.TAIL_ZEROED,
            f"reduce_final_map[{r}]",
            "unused final map row is not (0, 0)",
            (0, 0),
            fm[r],
        )
    for r in np.flatnonzero(pm[n_partials:] != 0) + n_partials:
        f.add(
            Check.TAIL_ZEROED,
            f"reduce_partial_map[{r}]",
            "unused partial map entry is not 0",
            0,
            pm[r],
        )


__all__: Sequence[str] = ("Check", "PlanViolation", "validate_plan")
