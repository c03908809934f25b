"""The PS contract under each AITER revision, with and without ``need_lse`` (ROCm/aiter#3606).

Why: #3606 changed what a plan looks like without renaming a function. With
``get_ps_metadata_v1(..., need_lse=True)`` every tile takes a partial slot and a reduce group (a
group of one partial included), ``mla_reduce_v1`` runs single splits, and ``final_lse`` is then
written for every row; without it the plan is the pre-3606 one; and ``get_ps_metadata_info_v1``
sizes ``reduce_partial_map`` by a new bound (contract §8). These contracts run the plan
validator, the PS buffer table and the ``final_lse`` coverage for each (revision, need_lse), and
prove that an emulation ignoring ``need_lse`` fails them. The worked example of contract §2.4
(cu=8, q=kv=1000, causal, one head) is pinned for both revisions with numbers derived by hand in
``docs/reference/aiter-ps-contract.md`` §8.4, not read back from the planner.
"""

from __future__ import annotations

import math

import pytest
import torch

import factories.aiter.emulation as emulation
from factories.accuracy.cases import SOFTMAX_SCALE
from factories.aiter.batch import PsPlan, plan_batch
from factories.aiter.emulation import PlannerSettings, aiter_contract
from factories.aiter.emulation.arithmetic import injected_faults
from factories.aiter.layout import KERNEL_TILE_ROWS, WorkInfoCol
from factories.aiter.ps_buffers import PS_BUFFERS, PsDims, as_shape
from factories.aiter.revision import CONTRACT_MODES, AiterContract
from factories.aiter.validator import Check
from factories.mutation.broken_kernels import NEED_LSE_IGNORED, aiter_backend_for

KERNEL = PlannerSettings.for_fp8_prefill_kernel(is_causal=True)
SENTINEL = 123.0

MODES = [pytest.param(contract, need_lse, id=name) for contract, need_lse, name in CONTRACT_MODES]

#: Batches (q lens, kv lens): chunked prefill (kv > q) is the case #3606 was about.
BATCHES = {
    "worked-example": ([1000], [1000]),
    "ragged": ([300, 1, 777, 256, 20], [300, 1, 777, 256, 20]),
    "chunked-prefill": ([100, 600, 256], [2000, 1300, 256]),
    "long-beside-short": ([5000] + [17] * 7, [5000] + [17] * 7),
}


def _plan(contract, need_lse, q_lens, kv_lens, heads=1, cu=8, aiter=None) -> PsPlan:
    with aiter_contract(contract):
        return plan_batch(
            q_lens, kv_lens, heads, KERNEL, cu_count=cu, need_lse=need_lse, aiter=aiter
        )


# --- plan validity and the buffer table, per revision ------------------------------------------


@pytest.mark.parametrize("contract, need_lse", MODES)
@pytest.mark.parametrize(
    "cu, heads", [(8, 1), (80, 16), (256, 16)], ids=["cu8-h1", "cu80-h16", "cu256-h16"]
)
@pytest.mark.parametrize("batch", sorted(BATCHES))
def test_plan_is_valid_per_revision_and_need_lse(contract, need_lse, cu, heads, batch):
    q_lens, kv_lens = BATCHES[batch]
    plan = _plan(contract, need_lse, q_lens, kv_lens, heads, cu)
    with aiter_contract(contract):
        assert plan.violations(contract=contract) == ()
    if need_lse:  # the validator's own rule, restated: no work writes the output directly
        loc = plan.work_info[: int(plan.work_indptr[-1]), WorkInfoCol.PARTIAL_O_LOC]
        assert (loc >= 0).all()


@pytest.mark.parametrize("contract, need_lse", MODES)
def test_ps_buffer_table_is_what_the_info_function_returns(contract, need_lse):
    """The independent table (``ps_buffers.py``) and the emulated info function agree under
    each revision, and the plan made with ``need_lse`` fits the buffers they size."""
    dims = PsDims(5, 16, 1024, KERNEL_TILE_ROWS, 80, contract)
    with aiter_contract(contract), emulation.emulated_cu_count(80):
        info = emulation.get_ps_metadata_info_v1(5, 16, 1024)
    assert [as_shape(shape) for shape, _ in info] == [b.expected_shape(dims) for b in PS_BUFFERS]
    plan = _plan(contract, need_lse, [1024, 700, 3, 1024, 512], [1024, 900, 3, 4000, 512], 16, 80)
    partials = int(plan.reduce_indptr[-1])
    assert partials <= dims.max_partials
    used = plan.work_info[: int(plan.work_indptr[-1]), WorkInfoCol.PARTIAL_O_LOC]
    assert int(used.max()) + KERNEL_TILE_ROWS <= dims.max_partials * KERNEL_TILE_ROWS


def test_max_partials_per_revision_reproduces_vllm_57923s_table():
    """vllm-project/vllm#57923 reports the partial logits buffer that vLLM 0.30.0's info-derived
    sizing reserves (max_num_seqs 1024, 16 heads, v_head_dim 128, cu 256, max_qlen = the token
    budget): 1.88 GiB before #3606 and 64.03 GiB after it at 8192 tokens; 3.75 / 128.03 GiB at
    16384. Those are the PR's numbers; the two formulas of §8.2 give them."""
    gib = 2**30
    for tokens, before, after in ((8192, 1.88, 64.03), (16384, 3.75, 128.03)):
        got = {}
        for contract in AiterContract:
            dims = PsDims(1024, 16, tokens, KERNEL_TILE_ROWS, 256, contract)
            got[contract] = dims.max_partials * KERNEL_TILE_ROWS * 16 * 128 * 4 / gib
        assert round(got[AiterContract.PRE_3606], 2) == before
        assert round(got[AiterContract.PR_3606], 2) == after


def test_need_lse_is_refused_before_3606():
    with aiter_contract("pre-3606"), pytest.raises(TypeError, match="need_lse"):
        _plan(AiterContract.PRE_3606, True, [10], [10])
    with pytest.raises(ValueError, match="need_lse"):
        _plan(AiterContract.PR_3606, True, [10], [10]).violations(contract=AiterContract.PRE_3606)


# --- the worked example (contract §2.4 / §8.4), derived by hand -----------------------------------

#: (work_indptr, partial_o_loc per work in order, reduce_indptr, final map, partial map) per mode.
WORKED = {
    False: (
        [0, 2, 3, 4, 6, 7, 8, 9, 10],
        [-1, 0, 256, 512, 768, 1024, 1280, 1536, 1792, 2048],
        [0, 2, 5, 9, 9],
        [[256, 512], [512, 768], [768, 1000]],
        [1024, 1280, 1536, 1792, 2048, 0, 256, 512, 768],
    ),
    True: (
        [0, 2, 3, 4, 6, 7, 8, 9, 10],
        [0, 256, 512, 768, 1024, 1280, 1536, 1792, 2048, 2304],
        [0, 1, 3, 6, 10],
        [[0, 256], [256, 512], [512, 768], [768, 1000]],
        [0, 1280, 1536, 1792, 2048, 2304, 256, 512, 768, 1024],
    ),
}


@pytest.mark.parametrize("contract, need_lse", MODES)
def test_worked_example_plan_per_revision_and_need_lse(contract, need_lse):
    plan = _plan(contract, need_lse, [1000], [1000])
    work_indptr, locs, reduce_indptr, final_map, partial_map = WORKED[need_lse]
    groups = len(final_map)
    assert plan.work_indptr.tolist() == work_indptr
    assert plan.work_info[:10, WorkInfoCol.PARTIAL_O_LOC].tolist() == locs
    assert plan.reduce_indptr.tolist() == reduce_indptr
    assert plan.reduce_final_map[:groups].tolist() == final_map
    # max_partials: min(1 + 7, 14) * 4 = 32 before #3606; 4 tiles + 8 - 1 = 11 after it.
    slots = {AiterContract.PRE_3606: 32, AiterContract.PR_3606: 11}[contract]
    assert plan.reduce_partial_map.numel() == slots
    assert plan.reduce_partial_map[: len(partial_map)].tolist() == partial_map
    assert (plan.reduce_partial_map[len(partial_map) :] == 0).all()


# --- final_lse coverage: which rows the reduce writes ---------------------------------------


def _fp8(*shape: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(sum(shape))
    return (torch.randn(*shape, generator=g) * 0.5).to(torch.float8_e4m3fn)


def _reference_lse(q, k, q_lens, kv_lens) -> torch.Tensor:
    """Natural-log LSE of the causal (bottom-right aligned) scores, in float64, one head."""
    out, qo, ko = [], 0, 0
    for lq, lk in zip(q_lens, kv_lens):
        s = q[qo : qo + lq, 0].double() @ k[ko : ko + lk, 0].double().T * SOFTMAX_SCALE
        visible = torch.arange(lk)[None, :] <= torch.arange(lq)[:, None] + (lk - lq)
        out.append(torch.logsumexp(s.masked_fill(~visible, -math.inf), dim=-1))
        qo, ko = qo + lq, ko + lk
    return torch.cat(out)


def _final_lse(plan: PsPlan, aiter=emulation) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    total_q, total_kv = sum(plan.q_lens), sum(plan.kv_lens)
    q, k, v = _fp8(total_q, 1, 192), _fp8(total_kv, 1, 192), _fp8(total_kv, 1, 128)
    split_o = torch.full((plan.partial_rows, 1, 128), SENTINEL)
    split_l = torch.full((plan.partial_rows, 1), SENTINEL)
    out = torch.full((total_q, 1, 128), SENTINEL, dtype=torch.bfloat16)
    final_lse = torch.full((total_q, 1), SENTINEL)
    one = torch.ones(1)
    with emulation.emulated_cu_count(plan.cu_count):
        aiter.mla_prefill_ps_asm_fwd(
            *plan.prefill_args(
                q, k, v, split_o, split_l, out, (one, one, one), softmax_scale=SOFTMAX_SCALE
            )
        )
        aiter.mla_reduce_v1(*plan.reduce_args(split_o, split_l, out, final_lse))
    return final_lse[:, 0], out, _reference_lse(q, k, plan.q_lens, plan.kv_lens)


def _split_rows(plan: PsPlan) -> torch.Tensor:
    """Rows of tiles cut into >= 2 kv pieces (read off work_info: pieces share a q range)."""
    works = plan.work_info[: int(plan.work_indptr[-1])]
    ranges, counts = torch.unique(works[:, 2:4], dim=0, return_counts=True)
    rows = torch.zeros(sum(plan.q_lens), dtype=torch.bool)
    heads = plan.num_heads_k
    for (qs, qe), n in zip(ranges.tolist(), counts.tolist()):
        if n > heads:
            rows[qs:qe] = True
    return rows


@pytest.mark.parametrize("contract, need_lse", MODES)
@pytest.mark.parametrize("batch", ["worked-example", "chunked-prefill"])
def test_final_lse_coverage_per_revision_and_need_lse(contract, need_lse, batch):
    """need_lse=True: ``final_lse`` is the true LSE on every row; otherwise exactly on the rows
    of split tiles, and the sentinel stays everywhere else."""
    plan = _plan(contract, need_lse, *BATCHES[batch])
    with aiter_contract(contract):
        final_lse, out, ref = _final_lse(plan)
    covered = torch.ones_like(final_lse, dtype=torch.bool) if need_lse else _split_rows(plan)
    assert covered.any()
    torch.testing.assert_close(final_lse[covered].double(), ref[covered], rtol=1e-4, atol=1e-4)
    assert (final_lse[~covered] == SENTINEL).all()
    assert torch.isfinite(out.float()).all() and (out.float() != SENTINEL).all()


# --- the need_lse contracts fail on an emulation that ignores need_lse ---------------------


def test_need_lse_contracts_fail_when_the_emulation_ignores_need_lse():
    """The kernel mutant ``ignores-need-lse`` (a KernelFaults of the planner and the reduce):
    the validator names the unsplit tiles without a slot or a group, the worked example's plan
    differs, and ``final_lse`` stays unwritten on the unsplit rows."""
    broken = aiter_backend_for("emulated", NEED_LSE_IGNORED)
    contract = AiterContract.PR_3606
    plan = _plan(contract, True, [1000], [1000], aiter=broken)
    with aiter_contract(contract):
        checks = {f.check for f in plan.violations(contract=contract)}
        final_lse, _, _ = _final_lse(plan, aiter=broken)
    assert {Check.SPLIT_PARTIAL_FLAGS, Check.REDUCE_MISSING_GROUP} <= checks, checks
    assert plan.reduce_indptr.tolist() != WORKED[True][2]
    assert (final_lse[:256] == SENTINEL).all()  # tile [0, 256) is unsplit in the worked example


@pytest.mark.parametrize(
    "contract_test, args",
    [
        (test_plan_is_valid_per_revision_and_need_lse, (8, 1, "worked-example")),
        (test_plan_is_valid_per_revision_and_need_lse, (80, 16, "chunked-prefill")),
        (test_worked_example_plan_per_revision_and_need_lse, ()),
        (test_final_lse_coverage_per_revision_and_need_lse, ("chunked-prefill",)),
    ],
    ids=["validity-worked-example", "validity-chunked-prefill", "worked-example", "final_lse"],
)
def test_each_need_lse_contract_fails_under_the_ignores_need_lse_fault(contract_test, args):
    """Each need_lse=True contract above, run unchanged with the mutant's fault injected into the
    emulation (``KernelFaults``, read by the planner and the reduce at call time), fails."""
    with injected_faults(NEED_LSE_IGNORED.faults), pytest.raises(AssertionError):
        contract_test(AiterContract.PR_3606, True, *args)
