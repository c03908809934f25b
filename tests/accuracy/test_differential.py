"""Differential mode: the real gfx950 kernel against the emulator, work item by work item.

On gfx950 (``gfx950`` marker) the real planner plans, and the real and the emulated
``mla_prefill_ps_asm_fwd`` both run on that identical plan and identical fp8 inputs; the first
work whose region differs is named (work index, CU/TG, batch, q range, kv range, head, slot).
The same is done for the reduce per group, and the two planners are compared element by element.

Everywhere (no GPU, no vLLM needed) the comparison itself is tested with the emulator on both
sides: against itself nothing diverges; against a deliberately broken emulated kernel (one
work's rows perturbed, its LSE perturbed, or its rows left unwritten) exactly that work is named.
Expected names are read straight from the raw ``work_info`` row, not from the code under test.
"""

from __future__ import annotations

import attrs
import pytest
import torch

import factories.aiter.emulation as emulation
from factories.accuracy import EMULATED_TOLERANCE, REAL_GFX950_TOLERANCE
from factories.accuracy.differential import (
    PrefillInputs,
    compare_reduce,
    compare_works,
    plan_differences,
    plan_with,
    region_overlaps,
    run_prefill_kernel,
    run_reduce,
    work_items,
)
from factories.aiter.batch import PsPlan
from factories.aiter.emulation import emulated_cu_count
from factories.stubs.workspace import workspace_device

LENS, HEADS, CU = (700, 1, 300), 16, 80  # splits: 5 TGs per cluster at 16 heads


@pytest.fixture(scope="module")
def setup():
    device = workspace_device()
    with emulated_cu_count(CU):
        plan = plan_with(emulation, LENS, HEADS, device)
    x = PrefillInputs.random(LENS, HEADS, device, fp8_dtype=emulation.fp8_dtype())
    with emulated_cu_count(CU):
        reference = run_prefill_kernel(emulation.mla_prefill_ps_asm_fwd, x, plan)
    items = work_items(plan.work_indptr, plan.work_info, x.kv_indptr)
    return plan, x, reference, items


def raw_work(plan: PsPlan, w: int) -> dict:
    """What the report must say about work ``w``, read from the raw buffers."""
    wi = plan.work_indptr.cpu().tolist()
    b, loc, qs, qe, ks, ke, _, hr = plan.work_info[w].cpu().tolist()
    [wg] = [g for g in range(len(wi) - 1) if wi[g] <= w < wi[g + 1]]
    return {
        "index": w,
        "workgroup": wg,
        "batch": b,
        "q_start": qs,
        "q_end": qe,
        "kv_start": ks,
        "kv_end": ke,
        "head": hr & 0xFFFF,
        "partial_loc": loc,
    }


def pick(plan: PsPlan, split: bool, nth: int = 0) -> int:
    """The ``nth`` executed work that is (not) split, counted in launch order."""
    wi = plan.work_indptr.cpu().tolist()
    executed = [w for g in range(len(wi) - 1) for w in range(wi[g], wi[g + 1])]
    chosen = [w for w in executed if (int(plan.work_info[w, 1]) >= 0) == split]
    return chosen[min(nth, len(chosen) - 1)]


def broken_kernel(plan: PsPlan, faults: dict[int, str], delta: float = 1.0):
    """The emulated kernel, then for each faulty work: ``value`` adds ``delta`` to its rows,
    ``lse`` adds ``delta`` to its partial LSE, ``unwritten`` NaNs its rows again."""

    def kernel(*args, **kwargs):
        with emulated_cu_count(CU):
            emulation.mla_prefill_ps_asm_fwd(*args, **kwargs)
        split_data, split_lse, output = args[11], args[12], args[13]
        for w, fault in faults.items():
            _, loc, qs, qe, _, _, _, hr = plan.work_info[w].cpu().tolist()
            h, n = hr & 0xFFFF, min(qe - qs, 256)
            data = output[qs : qs + n, h] if loc < 0 else split_data[loc : loc + n, h]
            if fault == "value":
                data += delta
            elif fault == "lse":
                split_lse[loc : loc + n, h] += delta
            elif fault == "unwritten":
                data.fill_(float("nan"))
                if loc >= 0:
                    split_lse[loc : loc + n, h] = float("nan")

    return kernel


def run_broken(setup, faults, delta=1.0):
    plan, x, reference, items = setup
    got = run_prefill_kernel(broken_kernel(plan, faults, delta), x, plan)
    return compare_works(items, got, reference, EMULATED_TOLERANCE)


def assert_names(report, plan, w, buffer):
    assert report.first is not None, report.summary()
    named = report.first.work
    assert {k: getattr(named, k) for k in raw_work(plan, w)} == raw_work(plan, w)
    assert report.first.buffer == buffer
    assert f"work {w} (CU/TG {raw_work(plan, w)['workgroup']})" in report.summary()


# --------------------------------------------------------------------------------------------
# The comparison, emulator on both sides
# --------------------------------------------------------------------------------------------


def test_emulator_against_itself_has_no_divergence(setup):
    plan, x, reference, items = setup
    with emulated_cu_count(CU):
        again = run_prefill_kernel(emulation.mla_prefill_ps_asm_fwd, x, plan)
    report = compare_works(items, again, reference, EMULATED_TOLERANCE)
    assert report.ok, report.summary()
    assert report.compared == len(items) > 0
    assert any(it.writes_partial for it in items) and any(not it.writes_partial for it in items)
    with emulated_cu_count(CU):
        a, b = (
            run_reduce(emulation.mla_reduce_v1, again, plan),
            run_reduce(emulation.mla_reduce_v1, reference, plan),
        )
    reduced = compare_reduce(plan, a, b, EMULATED_TOLERANCE)
    assert reduced.ok and reduced.compared > 0, reduced.summary()


@pytest.mark.parametrize(
    "split, nth", [(True, 0), (True, 7), (False, 3)], ids=["first-split", "later-split", "unsplit"]
)
def test_a_perturbed_work_is_named_exactly(setup, split, nth):
    plan = setup[0]
    w = pick(plan, split, nth)
    report = run_broken(setup, {w: "value"})
    assert report.diverging == 1, report.summary()
    assert_names(report, plan, w, "splitData" if split else "output")


def test_a_perturbed_partial_lse_is_named(setup):
    plan = setup[0]
    w = pick(plan, True, 3)
    report = run_broken(setup, {w: "lse"})
    assert report.diverging == 1
    assert_names(report, plan, w, "splitLse")


@pytest.mark.parametrize("split", [True, False], ids=["split", "unsplit"])
def test_an_unwritten_work_is_named(setup, split):
    plan = setup[0]
    w = pick(plan, split, 2)
    report = run_broken(setup, {w: "unwritten"})
    assert report.diverging == 1
    assert_names(report, plan, w, "splitData" if split else "output")


def test_the_first_of_several_divergences_in_launch_order_is_named(setup):
    plan = setup[0]
    a, b = pick(plan, True, 5), pick(plan, False, 1)
    report = run_broken(setup, {a: "value", b: "value"})
    assert report.diverging == 2
    assert_names(report, plan, min(a, b), "splitData" if min(a, b) == a else "output")


def test_a_difference_within_the_bound_is_not_a_divergence(setup):
    plan = setup[0]
    report = run_broken(setup, {pick(plan, True, 1): "lse"}, delta=EMULATED_TOLERANCE.lse_atol / 4)
    assert report.ok, report.summary()


def test_a_perturbed_reduce_group_is_named(setup):
    plan, _x, reference, _ = setup
    with emulated_cu_count(CU):
        good = run_reduce(emulation.mla_reduce_v1, reference, plan)
        bad = run_reduce(emulation.mla_reduce_v1, reference, plan)
    ri = plan.reduce_indptr.cpu().tolist()
    groups = [g for g in range(len(ri) - 1) if ri[g + 1] - ri[g] >= 2]
    g = groups[len(groups) // 2]
    q0, q1 = plan.reduce_final_map[g].cpu().tolist()
    bad[1][q0 + 3, 5] += 1.0
    report = compare_reduce(plan, bad, good, EMULATED_TOLERANCE)
    assert report.diverging == 1 and report.first.group == g
    assert (report.first.buffer, report.first.row, report.first.head) == ("final_lse", q0 + 3, 5)
    assert f"reduce group {g}: q [{q0}, {q1})" in report.summary()


def test_overlapping_work_regions_are_reported(setup):
    """Attribution needs every region to belong to one work: a duplicated work breaks that."""
    plan, x, _, items = setup
    w = pick(plan, False, 0)
    assert region_overlaps(items, x.q.size(0), plan.partial_rows, HEADS) == []
    assert region_overlaps(
        list(items) + [items[[it.index for it in items].index(w)]],
        x.q.size(0),
        plan.partial_rows,
        HEADS,
    )


def test_plan_differences_name_the_element(setup):
    plan = setup[0]
    assert plan_differences(plan, plan) == []
    changed = attrs.evolve(plan, buffers=tuple(b.clone() for b in plan.buffers))
    changed.work_info[4, 5] += 128
    assert plan_differences(plan, changed) == [
        f"work_info[4, 5]: {int(plan.work_info[4, 5])} vs {int(plan.work_info[4, 5]) + 128}"
    ]


# --------------------------------------------------------------------------------------------
# The real kernel (gfx950 only)
# --------------------------------------------------------------------------------------------

REAL_CASES = [
    pytest.param((1000, 300, 1, 517), 16, id="ragged-h16"),
    pytest.param((4096,), 32, id="1x4096-h32"),
    pytest.param((8192, 2000, 1), 128, id="ragged-h128"),
    pytest.param((16384,), 16, id="1x16384-h16"),
]


@pytest.fixture(scope="module")
def real_aiter():
    import importlib

    return importlib.import_module("aiter")


def device_cu_count() -> int:
    return torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count


@pytest.mark.gfx950
@pytest.mark.parametrize("lens, heads", REAL_CASES)
def test_real_planner_matches_the_emulated_planner(real_aiter, lens, heads):
    real = plan_with(real_aiter, lens, heads, "cuda")
    with emulated_cu_count(device_cu_count()):
        emulated = plan_with(emulation, lens, heads, "cuda")
    assert plan_differences(real, emulated) == []


@pytest.mark.gfx950
@pytest.mark.parametrize("lens, heads", REAL_CASES)
def test_real_kernel_matches_the_emulator_work_by_work(real_aiter, lens, heads):
    plan = plan_with(real_aiter, lens, heads, "cuda")
    x = PrefillInputs.random(lens, heads, "cuda", fp8_dtype=emulation.fp8_dtype())
    real = run_prefill_kernel(real_aiter.mla_prefill_ps_asm_fwd, x, plan)
    with emulated_cu_count(device_cu_count()):
        emulated = run_prefill_kernel(emulation.mla_prefill_ps_asm_fwd, x, plan)
    torch.cuda.synchronize()
    items = work_items(plan.work_indptr, plan.work_info, x.kv_indptr)
    report = compare_works(items, real, emulated, REAL_GFX950_TOLERANCE)
    assert report.ok, report.summary()
    real_final = run_reduce(real_aiter.mla_reduce_v1, real, plan)
    with emulated_cu_count(device_cu_count()):
        emulated_final = run_reduce(emulation.mla_reduce_v1, emulated, plan)
    torch.cuda.synchronize()
    reduced = compare_reduce(plan, real_final, emulated_final, REAL_GFX950_TOLERANCE)
    assert reduced.ok, reduced.summary()
