"""vLLM's FP8 prefill path under each AITER contract revision, with and without ``need_lse``.

Why: AITER merged ROCm/aiter#3606 under vLLM (contract §8): ``get_ps_metadata_v1`` grew
``need_lse``, the reduce runs single partials, ``max_partials`` changed, and a 7th info entry is
proposed (ROCm/aiter#5729/#5759). These contracts say whether the vLLM under test is still right
under each revision: its plan stays valid, its token-budget reservation covers the forward's
scratch even when every tile takes a partial slot, ``final_lse`` is written where the revision
says, and a ``get_ps_metadata_info_v1`` of another shape fails naming the line that unpacks it.
``need_lse=True`` is modelled as a caller passing it (vLLM 0.34.0 does not; sglang does).
"""

from __future__ import annotations

import sys
import traceback
import types

import pytest
import torch

from factories.accuracy.plans import planned_split_rows
from factories.aiter.backend import aiter_module_installed
from factories.aiter.layout import PlannerSettings
from factories.aiter.ps_buffers import PS_BUFFERS, PsDims
from factories.aiter.revision import (
    AiterContract,
    aiter_contract,
    passing_need_lse,
)
from factories.aiter.spy import spy_module
from factories.aiter.validator import validate_plan
from factories.mutation.broken_kernels import NEED_LSE_IGNORED, aiter_backend_for
from factories.stubs.builders import make_builder, make_impl, make_prefill_batch, make_qkv
from factories.stubs.pipeline import (
    PLAN_BATCHES,
    Limits,
    attached_plan_violations,
    build_ps_plan,
    init_ps_buffers,
    run_forward,
)
from factories.stubs.workspace import workspace_session

SENTINEL = 123.0


def _need_lse(request) -> tuple[AiterContract, bool]:
    return request.node.callspec.params["aiter_in_mode"]


# --- plan validity -------------------------------------------------------------------------------


@pytest.mark.parametrize("cu_count", [256, 80], indirect=True, ids=lambda c: f"cu{c}")
@pytest.mark.parametrize("name", sorted(PLAN_BATCHES))
def test_attached_plan_is_valid_per_revision_and_need_lse(
    aiter_in_mode, request, cu_count, device, aiter_mla, aiter_call_sites, name
):
    from factories.stubs.device_shims import emulated_device

    contract, need_lse = _need_lse(request)
    lens, decodes = PLAN_BATCHES[name]
    batch = make_prefill_batch(lens, num_decodes=decodes, device=device)
    limits = Limits(len(lens) + 2, max(lens) + 100, sum(lens) + 300)
    with emulated_device(cu_count), workspace_session(device):
        builder = make_builder(16)
        init_ps_buffers(builder, limits, device)
        build_ps_plan(builder, batch)
        findings = attached_plan_violations(aiter_mla, builder, batch, limits, cu_count)
        md = batch.metadata
        qo = batch.qo_indptr_cpu
        buffers = [builder.fp8_ps_work_metadata] + [
            getattr(md, b.metadata_field) for b in PS_BUFFERS[1:]
        ]
        strict = validate_plan(
            *buffers,
            qo_indptr=qo,
            kv_indptr=md.fp8_prefill_kv_indptr,
            context_lens=qo[1:] - qo[:-1],
            num_heads_k=16,
            settings=PlannerSettings.for_fp8_prefill_kernel(is_causal=True),
            cu_count=cu_count,
            partial_rows=md.fp8_prefill_num_partial_tiles * 256,
            max_qlen=limits.max_prefill_qlen,
            need_lse=need_lse,
            contract=contract,
        )
    planned_at = aiter_call_sites.get("get_ps_metadata_v1", "?")
    assert strict == (), f"the plan made at {planned_at} is invalid under {contract}: {strict}"
    if not need_lse:  # the existing contract's judgement (need_lse=False) agrees
        assert findings == (), findings


# --- final_lse coverage through vLLM --------------------------------------------------------------


def final_lse_coverage(module, contract, need_lse, device, sites) -> None:
    """vLLM's forward hands ``mla_reduce_v1`` a ``final_lse``; it must be written on every
    prefill row under need_lse, and on exactly the rows of split tiles otherwise (poisoned
    before the call, so an unwritten row keeps the sentinel).

    The batch: a decode, then prefills of 2, 1 and 3 tiles whose last tiles are short (260 =
    256 + 4, 520 = 2 x 256 + 8). vLLM's planner splits none of its tiles at 8 CUs, so without
    need_lse no row may be written; split rows are covered at the kernel level
    (``contracts/aiter_ps/test_need_lse.py``, chunked prefill). It was [600, 33, 1000], the same
    shape at three times the attention work."""
    from factories.stubs.device_shims import emulated_device

    def poison(call):
        if call.function == "mla_reduce_v1" and call.arguments.get("final_lse") is not None:
            call.arguments["final_lse"].fill_(SENTINEL)

    spy, calls = spy_module(module, on_call=poison)
    batch = make_prefill_batch([260, 33, 520], num_decodes=1, device=device)
    with emulated_device(8), workspace_session(device), aiter_module_installed(spy):
        builder = make_builder(16)
        init_ps_buffers(builder, Limits.for_batch(batch), device)
        build_ps_plan(builder, batch)
        impl = make_impl(16, spy)
        total = batch.total_prefill_tokens
        q, k, v = make_qkv(total, 16, device)
        run_forward(impl, q, k, v, batch, q.new_zeros(total, 16 * 128))
    [reduce] = [c for c in calls if c.function == "mla_reduce_v1"]
    final_lse = reduce.arguments["final_lse"][:total].float().cpu()
    md = batch.metadata
    split = torch.from_numpy(
        planned_split_rows(md.fp8_prefill_work_indptr, md.fp8_prefill_work_info_set, total)
    )
    covered = torch.ones(total, dtype=torch.bool) if need_lse else split
    written = (final_lse != SENTINEL).all(dim=-1) & torch.isfinite(final_lse).all(dim=-1)
    where = sites.get("mla_reduce_v1", "?")
    assert torch.equal(written, covered), (
        f"final_lse of the reduce called at {where} under {contract} "
        f"(need_lse={need_lse}): {int(written.sum())} rows written, {int(covered.sum())} expected"
    )


def test_final_lse_coverage_through_vllm_per_revision_and_need_lse(
    aiter_in_mode, request, device, aiter_call_sites
):
    contract, need_lse = _need_lse(request)
    final_lse_coverage(aiter_in_mode, contract, need_lse, device, aiter_call_sites)


def test_final_lse_coverage_through_vllm_fails_when_aiter_ignores_need_lse(
    aiter_mla, device, aiter_call_sites
):
    """The ``ignores-need-lse`` kernel mutant behind vLLM: the unsplit tiles' rows of
    ``final_lse`` stay unwritten although the planner was asked for need_lse."""
    broken = passing_need_lse(aiter_backend_for("emulated", NEED_LSE_IGNORED))
    with aiter_contract(AiterContract.PR_3606), pytest.raises(AssertionError, match="need_lse"):
        final_lse_coverage(broken, AiterContract.PR_3606, True, device, aiter_call_sites)


# --- the shape of get_ps_metadata_info_v1 ---------------------------------------------------------


def _info_with_partial_rows(module: types.ModuleType) -> types.ModuleType:
    """A fake AITER whose ``get_ps_metadata_info_v1`` returns a 7th entry (the partial row count
    of the ROCm/aiter#5729/#5759 proposal); everything else is ``module``'s."""
    fake = types.ModuleType("aiter")
    fake.__spec__ = module.__spec__
    for name in dir(module):
        if not name.startswith("__"):
            setattr(fake, name, getattr(module, name))

    def get_ps_metadata_info_v1(batch_size, num_head_k, max_qlen, qlen_granularity=256):
        six = module.get_ps_metadata_info_v1(batch_size, num_head_k, max_qlen, qlen_granularity)
        return (*six, (six[5][0] * qlen_granularity, torch.int32))

    fake.get_ps_metadata_info_v1 = get_ps_metadata_info_v1
    return fake


def info_shape_problem(aiter_module: types.ModuleType, device) -> str | None:
    """None when vLLM's ``_init_fp8_prefill_ps_buffers`` takes what ``aiter_module``'s
    ``get_ps_metadata_info_v1`` returns; else one line naming vLLM's file:line that failed."""
    from factories.stubs.device_shims import emulated_device

    with emulated_device(256), workspace_session(device), aiter_module_installed(aiter_module):
        try:
            init_ps_buffers(make_builder(16), Limits(4, 1024, 2048), device)
        except (ValueError, TypeError) as exc:
            frames = [
                f
                for f in traceback.extract_tb(sys.exc_info()[2])
                if f.filename.endswith("rocm_aiter_mla.py")
            ]
            site = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "?"
            return (
                f"vLLM's get_ps_metadata_info_v1 result unpacking at {site} fails: "
                f"{type(exc).__name__}: {exc}"
            )
    return None


@pytest.mark.parametrize("contract", list(AiterContract), ids=str)
def test_info_shape_is_what_vllm_unpacks(emulated_aiter, device, contract):
    with aiter_contract(contract):
        assert info_shape_problem(emulated_aiter, device) is None


def test_a_seven_entry_info_fails_naming_vllms_unpacking_site(emulated_aiter, aiter_mla, device):
    """The proposed #5759 shape: vLLM 0.34.0 unpacks exactly six entries."""
    problem = info_shape_problem(_info_with_partial_rows(emulated_aiter), device)
    assert problem is not None
    assert "rocm_aiter_mla.py:" in problem and "too many values to unpack" in problem, problem
    path, line = problem.split(" at ")[1].split(" fails")[0].rsplit(":", 1)
    with open(path) as source:
        text = source.read().splitlines()
    # the named line lies in the statement that unpacks the info function's six entries
    window = "\n".join(text[int(line) - 1 : int(line) + 12])
    assert "get_ps_metadata_info_v1(" in window, window


# --- 0.30.0's info-derived reservation under each revision (measured, vllm#57923) ---------------


@pytest.mark.parametrize("contract", list(AiterContract), ids=str)
@pytest.mark.parametrize("tokens", [8192, 16384])
def test_info_derived_reservation_of_0_30_per_revision(reservation_report, contract, tokens):
    """vLLM 0.28.0-0.30.0 reserve ``reduce_partial_map`` entries x 256 rows of partial logits and
    LSE (0.30.0 rocm_aiter_mla.py:776-786); 0.31.0 on reserve the token-budget bound
    (0.34.0 rocm_aiter_mla.py:1563-1566). The bytes of both, per revision, for the #57923
    setting (1024 requests, 16 heads, v 128, cu 256, max_qlen = token budget)."""
    reqs, heads, cu = 1024, 16, 256
    dims = PsDims(reqs, heads, tokens, 256, cu, contract)
    per_tile = 256 * heads * (128 + 1) * 4
    info_bytes = dims.max_partials * per_tile
    budget_tiles = -(-tokens // 256) + reqs - 1 + cu
    budget_bytes = budget_tiles * per_tile
    reservation_report.append(
        f"0.30.0 info-derived partial scratch, {contract:>8}, tokens={tokens:>5}: "
        f"{dims.max_partials:>6} tiles = {info_bytes / 2**30:7.2f} GiB; 0.34.0 token budget: "
        f"{budget_tiles} tiles = {budget_bytes / 2**30:5.2f} GiB"
    )
    # The token-budget bound covers every partial a batch within the budget can make under
    # either revision: tiles <= cdiv(tokens, 256) + reqs - 1, plus at most CU - 1 split pieces.
    assert budget_tiles >= -(-tokens // 256) + reqs - 1 + dims.cus_per_cluster - 1
    if contract is AiterContract.PR_3606:
        assert info_bytes > 20 * budget_bytes  # the over-reservation #57923 reports
    else:  # same order of magnitude before #3606 (measured: 0.73x at 8k, 1.43x at 16k)
        assert budget_bytes / 2 < info_bytes < budget_bytes * 2
