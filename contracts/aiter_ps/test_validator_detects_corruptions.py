"""Each validator check fails on a plan broken in exactly the way it guards against.

Why: a validator that never fires is indistinguishable from one that works. Every check in
``Check`` is exercised here by a targeted corruption of a clean plan, and a meta-test keeps that
table complete when checks are added.

The base plan (cu=10, 4 k-heads -> 2 clusters x 5 TGs, 2 heads per TG; three ragged causal
requests, one with a prefix) has unsplit and split tiles, reduce groups of 2 and more partials and
multi-head TGs, so every invariant is live.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
import numpy as np
import pytest
import torch

from factories.aiter.batch import plan_batch
from factories.aiter.layout import PlannerSettings, pack_dword
from factories.aiter.layout import WorkInfoCol as C
from factories.aiter.validator import Check, validate_plan

KERNEL = PlannerSettings.for_fp8_prefill_kernel(is_causal=True)
CU, HEADS = 10, 4
Q_LENS, KV_LENS = [1000, 200, 1], [1000, 5000, 1]


@attrs.define
class Plan:
    """Mutable numpy copies of a plan's buffers and inputs, to corrupt."""

    wmp: torch.Tensor
    wi: np.ndarray
    info: np.ndarray
    ri: np.ndarray
    fm: np.ndarray
    pm: np.ndarray
    qo: np.ndarray
    kv: np.ndarray
    ctx: np.ndarray
    kwargs: dict = attrs.Factory(dict)
    dtypes: dict = attrs.Factory(dict)

    def tensor(self, name: str) -> torch.Tensor:
        return torch.from_numpy(getattr(self, name).astype(self.dtypes.get(name, np.int32)))

    def violations(self):
        kw = dict(
            qo_indptr=self.qo,
            kv_indptr=self.kv,
            context_lens=self.ctx,
            num_heads_k=HEADS,
            settings=KERNEL,
            cu_count=CU,
            max_qlen=max(Q_LENS),
        )
        kw.update(self.kwargs)
        return validate_plan(
            self.wmp,
            self.tensor("wi"),
            self.tensor("info"),
            self.tensor("ri"),
            self.tensor("fm"),
            self.tensor("pm"),
            **kw,
        )

    # helpers to find things in the plan
    def used(self) -> int:
        return int(self.wi[-1])

    def split_groups(self) -> dict[tuple[int, int, int], list[int]]:
        """(qs, head) -> work_info rows, for split tiles, in order."""
        out: dict = {}
        for r in range(self.used()):
            w = self.info[r]
            if w[C.PARTIAL_O_LOC] >= 0:
                out.setdefault((int(w[C.QO_START]), int(w[C.Q_HEAD_RANGE]) & 0xFFFF), []).append(r)
        return out

    def a_split_tile(self, min_pieces: int = 3) -> list[int]:
        return next(rows for rows in self.split_groups().values() if len(rows) >= min_pieces)

    def an_unsplit_work(self, head: int = 1) -> int:
        return next(
            r
            for r in range(self.used())
            if self.info[r, C.PARTIAL_O_LOC] == -1
            and (self.info[r, C.Q_HEAD_RANGE] & 0xFFFF) == head
        )

    def drop_work(self, row: int) -> None:
        self.info = np.concatenate([np.delete(self.info, row, axis=0), np.zeros((1, 8), np.int64)])
        self.wi = np.where(self.wi > row, self.wi - 1, self.wi)

    def tg_of(self, row: int) -> int:
        return int(np.searchsorted(self.wi, row, side="right") - 1)

    def n_groups(self) -> int:
        return int((self.ri[1:] != self.ri[:-1]).sum())


@pytest.fixture(scope="module")
def clean_plan():
    return plan_batch(Q_LENS, KV_LENS, HEADS, KERNEL, cu_count=CU)


@pytest.fixture
def plan(clean_plan) -> Plan:
    b = [t.numpy().astype(np.int64) if t.dtype != torch.uint64 else t for t in clean_plan.buffers]
    return Plan(
        b[0],
        b[1],
        b[2].reshape(-1, 8),
        b[3],
        b[4].reshape(-1, 2),
        b[5],
        clean_plan.qo_indptr.numpy().astype(np.int64),
        clean_plan.kv_indptr.numpy().astype(np.int64),
        clean_plan.context_lens.numpy().astype(np.int64),
    )


def test_base_plan_exercises_every_feature(clean_plan, plan):
    assert clean_plan.num_reduce_groups >= 2
    assert any(len(r) >= 4 for r in plan.split_groups().values())
    assert (plan.info[: plan.used(), C.PARTIAL_O_LOC] == -1).any()


def test_clean_plan_reports_nothing(plan):
    assert plan.violations() == ()


# --- corruptions: (name, expected check, mutation) ------------------------------------------------


def dropped_work(p: Plan) -> None:
    p.drop_work(p.an_unsplit_work(head=1))


def dropped_all_heads_of_a_tile(p: Plan) -> None:
    qs = int(p.info[p.an_unsplit_work(0), C.QO_START])
    for r in sorted((r for r in range(p.used()) if p.info[r, C.QO_START] == qs), reverse=True):
        p.drop_work(r)


def overlapping_kv(p: Plan) -> None:
    rows = p.a_split_tile()
    p.info[rows[1], C.KV_START] -= 128


def gap_in_kv(p: Plan) -> None:
    rows = p.a_split_tile()
    p.info[rows[1], C.KV_START] += 128


def off_by_one_causal_bound(p: Plan) -> None:
    rows = p.a_split_tile()
    p.info[rows[-1], C.KV_END] += 1


def boundary_off_granularity(p: Plan) -> None:
    rows = p.a_split_tile()
    p.info[rows[0], C.KV_END] += 1
    p.info[rows[1], C.KV_START] += 1


def boundary_moved_two_units(p: Plan) -> None:
    rows = p.a_split_tile()
    if p.info[rows[1], C.KV_END] - p.info[rows[1], C.KV_START] <= 256:
        pytest.skip("piece too short to move the boundary by two units")
    p.info[rows[0], C.KV_END] += 256
    p.info[rows[1], C.KV_START] += 256


def wrong_partial_offset(p: Plan) -> None:
    rows = p.a_split_tile()
    p.info[rows[1], C.PARTIAL_O_LOC] = p.info[rows[0], C.PARTIAL_O_LOC]


def non_256_slot_spacing(p: Plan) -> None:
    rows = p.a_split_tile()
    p.info[rows[1], C.PARTIAL_O_LOC] -= 128


def unsplit_with_a_slot(p: Plan) -> None:
    p.info[p.an_unsplit_work(), C.PARTIAL_O_LOC] = 256 * 50


def slot_outside_scratch(p: Plan) -> None:
    p.kwargs["partial_rows"] = 512


def missing_reduce_entry(p: Plan) -> None:
    g = next(g for g in range(p.n_groups()) if p.ri[g + 1] - p.ri[g] >= 3)
    end = int(p.ri[g + 1])
    p.pm = np.concatenate([np.delete(p.pm, end - 1), [0]])
    p.ri[g + 1 :] -= 1


def wrong_final_map(p: Plan) -> None:
    p.fm[0, 1] -= 1


def dropped_reduce_group(p: Plan) -> None:
    g = p.n_groups() - 1
    start = int(p.ri[g])
    p.pm[start:] = 0
    p.ri[g + 1 :] = start
    p.fm[g] = 0


def groups_out_of_order(p: Plan) -> None:
    n0, n1 = int(p.ri[1] - p.ri[0]), int(p.ri[2] - p.ri[1])
    g0, g1 = p.pm[:n0].copy(), p.pm[n0 : n0 + n1].copy()
    p.pm[:n1], p.pm[n1 : n0 + n1] = g1, g0
    p.ri[1] = n1
    p.fm[[0, 1]] = p.fm[[1, 0]]


def group_of_one(p: Plan) -> None:
    p.ri[1] = 1


def reduce_indptr_decreasing(p: Plan) -> None:
    p.ri[1] = p.ri[2] + 1


def work_indptr_too_long(p: Plan) -> None:
    p.wi = np.append(p.wi, p.wi[-1])


def work_indptr_decreasing(p: Plan) -> None:
    p.wi[3] = p.wi[4] + 1


def empty_tg_inserted(p: Plan) -> None:
    rows = p.a_split_tile()
    t = p.tg_of(rows[1])
    p.wi = np.insert(p.wi, t, p.wi[t])


def head_out_of_range(p: Plan) -> None:
    p.info[0, C.Q_HEAD_RANGE] = pack_dword(HEADS, HEADS + 1)


def heads_not_major(p: Plan) -> None:
    t = next(t for t in range(CU) if p.wi[t + 1] - p.wi[t] >= 4)
    a, b = int(p.wi[t]) + 1, int(p.wi[t + 1]) - 1
    assert p.info[a, C.Q_HEAD_RANGE] != p.info[b, C.Q_HEAD_RANGE]
    p.info[[a, b]] = p.info[[b, a]]


def tile_straddles_requests(p: Plan) -> None:
    r = next(r for r in range(p.used()) if p.info[r, C.QO_END] == Q_LENS[0])
    p.info[r, C.QO_END] += 1


def tile_misaligned(p: Plan) -> None:
    r = next(r for r in range(p.used()) if p.info[r, C.QO_START] == 256)
    p.info[r, C.QO_START] = 257


def tail_garbage(p: Plan) -> None:
    p.info[p.used() + 1, 3] = 7


def context_len_mismatch(p: Plan) -> None:
    p.ctx[0] += 1


def info_sizes_from_a_smaller_max_qlen(p: Plan) -> None:
    p.kwargs["max_qlen"] = 1


def work_info_truncated(p: Plan) -> None:
    p.info = p.info[: p.used() - 1]


def int64_buffer(p: Plan) -> None:
    p.dtypes["info"] = np.int64


def settings_for_another_kernel(p: Plan) -> None:
    p.kwargs["settings"] = PlannerSettings(1, 256, 64, 1, True)


def batch_idx_out_of_range(p: Plan) -> None:
    p.info[0, C.BATCH_IDX] = len(Q_LENS)


CORRUPTIONS: list[tuple[str, Check, Callable[[Plan], None]]] = [
    ("dropped work", Check.TILE_HEAD_COVERAGE, dropped_work),
    ("dropped tile (all heads)", Check.Q_ROWS_ONCE, dropped_all_heads_of_a_tile),
    ("overlapping kv", Check.KV_PIECES_CONTIGUOUS, overlapping_kv),
    ("gap in kv", Check.KV_PIECES_CONTIGUOUS, gap_in_kv),
    ("off-by-one causal bound", Check.KV_COVERAGE, off_by_one_causal_bound),
    ("split boundary off granularity", Check.SPLIT_BOUNDARY_GRANULARITY, boundary_off_granularity),
    ("boundary moved two units", Check.LOAD_BALANCE, boundary_moved_two_units),
    ("wrong partial offset (slot reuse)", Check.PARTIAL_SLOT_UNIQUE, wrong_partial_offset),
    ("wrong partial offset (reduce map)", Check.REDUCE_PARTIALS, wrong_partial_offset),
    ("non-256 slot spacing", Check.PARTIAL_SLOT_SPACING, non_256_slot_spacing),
    ("unsplit tile writes a slot", Check.SPLIT_PARTIAL_FLAGS, unsplit_with_a_slot),
    ("slot outside the scratch", Check.PARTIAL_SLOT_BOUNDS, slot_outside_scratch),
    ("missing reduce entry", Check.REDUCE_PARTIALS, missing_reduce_entry),
    ("wrong final map", Check.REDUCE_FINAL_MAP, wrong_final_map),
    ("dropped reduce group", Check.REDUCE_MISSING_GROUP, dropped_reduce_group),
    ("reduce groups out of order", Check.REDUCE_ORDER, groups_out_of_order),
    ("reduce group of one", Check.REDUCE_GROUP_SIZE, group_of_one),
    ("reduce_indptr decreasing", Check.REDUCE_INDPTR_MONOTONE, reduce_indptr_decreasing),
    ("work_indptr too long", Check.WORK_INDPTR_LENGTH, work_indptr_too_long),
    ("work_indptr decreasing", Check.WORK_INDPTR_MONOTONE, work_indptr_decreasing),
    ("split piece skips a TG", Check.SPLIT_TGS_CONSECUTIVE, empty_tg_inserted),
    ("head out of range", Check.WORK_FIELDS, head_out_of_range),
    ("batch index out of range", Check.WORK_FIELDS, batch_idx_out_of_range),
    ("works of a TG not head-major", Check.TG_HEAD_ORDER, heads_not_major),
    ("tile straddles two requests", Check.TILE_IN_REQUEST, tile_straddles_requests),
    ("tile not on a qg boundary", Check.TILE_ALIGNMENT, tile_misaligned),
    ("garbage past the used works", Check.TAIL_ZEROED, tail_garbage),
    ("context_lens disagrees with kv_indptr", Check.CONTEXT_LENS, context_len_mismatch),
    ("plan exceeds the info sizes", Check.INFO_SIZES, info_sizes_from_a_smaller_max_qlen),
    ("work_info smaller than the plan", Check.BUFFER_CAPACITY, work_info_truncated),
    ("int64 metadata buffer", Check.BUFFER_DTYPE, int64_buffer),
    ("settings the fp8 kernel cannot run", Check.KERNEL_SETTINGS, settings_for_another_kernel),
]


@pytest.mark.parametrize("name, check, mutate", CORRUPTIONS, ids=[c[0] for c in CORRUPTIONS])
def test_corruption_is_reported_by_the_right_check(plan, name, check, mutate):
    mutate(plan)
    findings = plan.violations()
    assert check in {f.check for f in findings}, f"{name}: got {findings}"
    hit = next(f for f in findings if f.check == check)
    assert hit.where and hit.message  # a finding says where and why, not just "False"


def test_every_check_has_a_corruption_test():
    assert {c[1] for c in CORRUPTIONS} == set(Check)


def second_head_sliced_differently(p: Plan) -> None:
    """The last work of a multi-head TG (its second head's) ends one kv page short: that head's
    kv slicing is no longer the first head's."""
    t = next(t for t in range(CU) if p.wi[t + 1] - p.wi[t] >= 2)
    p.info[int(p.wi[t + 1]) - 1, C.KV_END] -= 1


def one_head_missing_from_a_tg(p: Plan) -> None:
    """Every work of a TG names the TG's first head, so its other head has none."""
    t = next(t for t in range(CU) if p.wi[t + 1] - p.wi[t] >= 2)
    rows = slice(int(p.wi[t]), int(p.wi[t + 1]))
    p.info[rows, C.Q_HEAD_RANGE] = p.info[int(p.wi[t]), C.Q_HEAD_RANGE]


# The TG_HEAD_ORDER check has three parts; the table above proves one (head-major order).
TG_SLICING = [
    ("a head sliced differently", "identical kv slicing", second_head_sliced_differently),
    ("a head missing from a TG", "every head of its cluster", one_head_missing_from_a_tg),
]


@pytest.mark.parametrize("name, message, mutate", TG_SLICING, ids=[c[0] for c in TG_SLICING])
def test_tg_slicing_corruption_is_reported(plan, name, message, mutate):
    mutate(plan)
    hits = [f for f in plan.violations() if f.check == Check.TG_HEAD_ORDER]
    assert any(message in f.message for f in hits), f"{name}: got {hits}"


def test_findings_carry_expected_and_actual(plan):
    plan.fm[0, 1] -= 1
    f = next(f for f in plan.violations() if f.check is Check.REDUCE_FINAL_MAP)
    assert f.where == "reduce_final_map[0]"
    assert f.actual == (int(plan.fm[0, 0]), int(plan.fm[0, 1]))
    assert f.expected == (int(plan.fm[0, 0]), int(plan.fm[0, 1]) + 1)


def test_validator_does_not_mutate_its_inputs(clean_plan):
    before = [b.clone() for b in clean_plan.buffers]
    clean_plan.violations()
    assert all(torch.equal(a, b) for a, b in zip(before, clean_plan.buffers))
