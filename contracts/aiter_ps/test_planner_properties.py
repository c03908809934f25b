"""The emulated PS planner: the contract's worked example exactly, and every invariant on random
batches.

Why: vLLM sizes the metadata buffers with ``get_ps_metadata_info_v1`` and hands them to a planner
that never range-checks; the kernel then trusts the plan blindly. These properties are what makes
that safe. They run against the emulation here; the same validator can be pointed at the real
planner on a gfx950 machine.
"""

from __future__ import annotations

import itertools
import os

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from factories.aiter.batch import plan_batch
from factories.aiter.emulation import (
    PlannerSettings,
    aiter_contract,
    emulated_cu_count,
    get_ps_metadata_info_v1,
    get_ps_metadata_v1,
)
from factories.aiter.emulation.planner import build_q_tiles
from factories.aiter.layout import PsMetadataSizes, c_div
from factories.aiter.validator import Check
from factories.testing.hypothesis_profiles import contract_settings

# AITER_CONTRACTS_PROFILE=aiter-thorough for a planner hunt; otherwise the suite's profile
# (fast by default, the CI count of 60 under --contracts-profile ci).
PROFILE = (
    settings.get_profile(os.environ["AITER_CONTRACTS_PROFILE"])
    if os.environ.get("AITER_CONTRACTS_PROFILE")
    else contract_settings(60)
)
KERNEL = PlannerSettings.for_fp8_prefill_kernel(is_causal=True)


# --- the worked example of contract §2.4 (cu=8, one request, q_len=kv_len=1000, causal) ---------


@pytest.fixture(scope="module")
def worked_example():
    return plan_batch([1000], [1000], 1, KERNEL, cu_count=8)


def test_worked_example_tiles_are_ping_pong_with_doc_units():
    tiles, total = build_q_tiles([0, 1000], [1000], KERNEL)
    assert [(t.qo_start, t.qo_end) for t in tiles] == [
        (0, 256),
        (768, 1000),
        (256, 512),
        (512, 768),
    ]
    assert [t.num_blocks // 128 for t in tiles] == [2, 8, 4, 6]
    assert total == 20


def test_worked_example_work_indptr(worked_example):
    assert worked_example.work_indptr.tolist() == [0, 2, 3, 4, 6, 7, 8, 9, 10]


def test_worked_example_last_tile_split_four_ways(worked_example):
    info = worked_example.work_info[:10].tolist()
    pieces = [w for w in info if (w[2], w[3]) == (768, 1000)]
    assert [w[1] for w in pieces] == [0, 256, 512, 768]
    assert [(w[4], w[5]) for w in pieces] == [(0, 128), (128, 512), (512, 896), (896, 1000)]


def test_worked_example_reduce_info(worked_example):
    assert worked_example.reduce_final_map[:3].tolist() == [[256, 512], [512, 768], [768, 1000]]
    assert worked_example.reduce_indptr.tolist() == [0, 2, 5, 9, 9]


def test_worked_example_is_valid(worked_example):
    assert worked_example.violations() == ()


# --- get_ps_metadata_info_v1 --------------------------------------------------------------------


@pytest.mark.parametrize(
    "contract, bs, heads, max_qlen, work_info, reduce_indptr, final_map, partial_map",
    [
        # contract §1 examples, cu = 256: min(bs + 255, 510) * 5 and min(16 + 15, 30) * 32
        ("pre-3606", 4, 1, 1200, (1295, 8), 21, (20, 2), 1295),
        ("pre-3606", 1, 16, 8192, (8192, 8), 33, (32, 2), 512),
        # §8.2: qo_tile_cnt + cus_per_cluster - 1 = 20 + 255 and 32 + 15
        ("3606", 4, 1, 1200, (1295, 8), 21, (20, 2), 275),
        ("3606", 1, 16, 8192, (8192, 8), 33, (32, 2), 47),
    ],
)
def test_info_matches_contract_examples(
    contract, bs, heads, max_qlen, work_info, reduce_indptr, final_map, partial_map
):
    with emulated_cu_count(256), aiter_contract(contract):
        info = get_ps_metadata_info_v1(bs, heads, max_qlen)
    assert info == (
        (2, torch.uint64),
        (257, torch.int32),
        (work_info, torch.int32),
        (reduce_indptr, torch.int32),
        (final_map, torch.int32),
        (partial_map, torch.int32),
    )


def test_info_follows_the_emulated_cu_count():
    with emulated_cu_count(304):
        assert get_ps_metadata_info_v1(1, 1, 1)[1] == (305, torch.int32)


def test_8192_one_request_sixteen_heads_has_no_splits():
    """Contract §2.4 load-balance example: each TG gets exactly one (short, long) pair."""
    plan = plan_batch([8192], [8192], 16, KERNEL, cu_count=256)
    assert plan.violations() == ()
    assert plan.num_reduce_groups == 0
    wi = plan.work_indptr.tolist()
    assert all(b - a == 2 for a, b in itertools.pairwise(wi))


# --- buffer state and quirks ---------------------------------------------------------------------


def test_every_output_element_overwritten_but_work_metadata_ptrs_untouched():
    garbage = 0x5A5A5A5A
    plan = plan_batch([1000, 3, 300], [1000, 3, 900], 2, KERNEL, cu_count=8, fill=garbage)
    assert plan.violations() == ()  # includes: every tail zeroed
    for buf in plan.buffers[1:]:
        assert not (buf == garbage).any()
    assert (plan.buffers[0] == garbage).all(), "work_metadata_ptrs must stay untouched"


def test_reduce_info_is_read_from_the_last_work_indptr_entry():
    """A work_indptr longer than cu+1 ends in a zero, so no reduce info is produced (§2.3)."""
    with emulated_cu_count(8):
        info = get_ps_metadata_info_v1(1, 1, 1000)
        bufs = [torch.empty(s, dtype=d) for s, d in info]
        bufs[1] = torch.empty(10, dtype=torch.int32)  # cu + 2 entries
        qo = torch.tensor([0, 1000], dtype=torch.int32)
        get_ps_metadata_v1(
            qo, qo, torch.tensor([1000], dtype=torch.int32), 1, 1, *bufs, 1, 256, 128, 1, True
        )
    assert bufs[1].tolist() == [0, 2, 3, 4, 6, 7, 8, 9, 10, 0]
    assert bufs[3].tolist() == [0, 0, 0, 0, 0]


def test_kv_much_shorter_than_q_under_causal_starves_the_whole_request():
    """Causal kv_len < q_len: ``(eff + g - 1) / g`` truncates toward zero, so tiles with
    eff <= -kvg get NEGATIVE units (here -4, -2, 0 and +1: total -5). With a negative total,
    avg = 0 and rem = -5, every TG gets capacity 0, and even the tile whose eff is positive gets
    no work: no row of the request is ever written. (The contract's §2.4 says such tiles get
    0 units; the C++ arithmetic gives negative ones.) vLLM prefill always has kv_len >= q_len."""
    tiles, total = build_q_tiles([0, 1000], [100], KERNEL)
    assert [t.num_blocks // 128 for t in tiles] == [-4, 1, -2, 0] and total == -5
    plan = plan_batch([1000], [100], 1, KERNEL, cu_count=8)
    assert plan.work_indptr.tolist() == [0] * 9
    assert {f.check for f in plan.violations()} == {Check.Q_ROWS_ONCE, Check.TILE_HEAD_COVERAGE}


def test_c_division_truncates_toward_zero():
    assert [c_div(-517, 128), c_div(-127, 128), c_div(517, 128), c_div(-7, -2)] == [-4, 0, 4, 3]


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(kvlen_granularity=96), ValueError, "power of 2"),
        (dict(kvlen_granularity=16, block_size=32), ValueError, "block_size"),
        (dict(qlen_granularity=0), ValueError, "positive"),
    ],
)
def test_planner_rejects_what_the_cpp_rejects(kwargs, exc, match):
    with emulated_cu_count(8):
        info = get_ps_metadata_info_v1(1, 1, 100)
        bufs = [torch.empty(s, dtype=d) for s, d in info]
        qo = torch.tensor([0, 100], dtype=torch.int32)
        with pytest.raises(exc, match=match):
            get_ps_metadata_v1(
                qo, qo, torch.tensor([100], dtype=torch.int32), 1, 1, *bufs, **kwargs
            )


@pytest.mark.parametrize(
    "qo, match",
    [
        (torch.tensor([0, 100], dtype=torch.int64), "element type should be int"),
        (torch.tensor([0, 0, 100, 100], dtype=torch.int32)[::2], "continuous"),
    ],
)
def test_planner_checks_indptr_dtype_and_contiguity(qo, match):
    with emulated_cu_count(8):
        bufs = [torch.empty(s, dtype=d) for s, d in get_ps_metadata_info_v1(1, 1, 100)]
        good = torch.tensor([0, 100], dtype=torch.int32)
        with pytest.raises((TypeError, ValueError), match=match):
            get_ps_metadata_v1(qo, good, torch.tensor([100], dtype=torch.int32), 1, 1, *bufs)


def test_planner_refuses_buffers_smaller_than_the_plan():
    with emulated_cu_count(8):
        bufs = [torch.empty(s, dtype=d) for s, d in get_ps_metadata_info_v1(1, 1, 1000)]
        bufs[2] = torch.empty(3, 8, dtype=torch.int32)
        qo = torch.tensor([0, 1000], dtype=torch.int32)
        with pytest.raises(ValueError, match="out of bounds"):
            get_ps_metadata_v1(
                qo, qo, torch.tensor([1000], dtype=torch.int32), 1, 1, *bufs, 1, 256, 128, 1, True
            )


# --- properties over random batches -------------------------------------------------------------

_lengths = st.one_of(st.integers(1, 700), st.integers(1, 20000))


@st.composite
def batches(draw):
    n = draw(st.integers(1, 16))
    q_lens = draw(st.lists(_lengths, min_size=n, max_size=n))
    if draw(st.booleans()):
        kv_lens = list(q_lens)  # pure prefill, as the upstream op test
    else:
        prefixes = draw(st.lists(st.integers(0, 5000), min_size=n, max_size=n))
        kv_lens = [q + p for q, p in zip(q_lens, prefixes)]
    heads = draw(st.sampled_from([1, 2, 3, 8, 16, 40, 128]) | st.integers(1, 128))
    cu = draw(st.sampled_from([8, 80, 256, 304]))
    causal = draw(st.booleans())
    kvg = draw(st.sampled_from([128, 256]))
    return q_lens, kv_lens, heads, cu, PlannerSettings(1, 256, kvg, 1, causal)


@pytest.mark.parametrize(
    "contract, need_lse",
    [("pre-3606", False), ("3606", False), ("3606", True)],
    ids=["pre-3606-without-need_lse", "3606-need_lse=False", "3606-need_lse=True"],
)
@settings(PROFILE)
@given(batch=batches())
def test_every_planned_batch_is_valid_and_fits_the_info_sizes(contract, need_lse, batch):
    """Under each contract revision, and with need_lse (contract §8.3): the info sizes of that
    revision bound every plan, and the plan keeps every invariant."""
    q_lens, kv_lens, heads, cu, s = batch
    with aiter_contract(contract):
        plan = plan_batch(q_lens, kv_lens, heads, s, cu_count=cu, need_lse=need_lse)
        assert plan.violations() == ()
        sizes = PsMetadataSizes.compute(len(q_lens), heads, max(q_lens), 256, cu)
    ri = plan.reduce_indptr.tolist()
    assert int(plan.work_indptr[-1]) <= sizes.max_works
    assert ri[-1] <= sizes.max_partials
    assert plan.num_reduce_groups <= sizes.qo_tile_cnt


@settings(PROFILE)
@given(batches(), st.sampled_from([(16, 16), (32, 4), (128, 2), (16, 1)]))
def test_other_legal_settings_keep_every_invariant_but_the_kernels(batch, kvg_bs):
    """Stub-default-like settings plan consistently; only ``kernel_settings`` may complain."""
    q_lens, kv_lens, heads, cu, s = batch
    s = PlannerSettings(1, 256, kvg_bs[0], kvg_bs[1], s.is_causal)
    plan = plan_batch(q_lens, kv_lens, heads, s, cu_count=cu)
    assert {f.check for f in plan.violations()} <= {Check.KERNEL_SETTINGS}
