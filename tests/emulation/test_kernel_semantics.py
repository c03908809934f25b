"""The emulated kernels reproduce the buffer semantics glue code depends on (contract §3.4, §4.3).

Why: the accuracy test only sees the final output. Glue bugs live in the intermediate buffers:
reading a partial slot past the tile end, expecting an LSE for unsplit rows, trusting
``final_lse`` everywhere, handing the reduce a group of one. These tests pin what the emulation
(and the device) does there, so that such glue fails against the emulation as it would on an MI355.
"""

from __future__ import annotations

import math

import pytest
import torch

import factories.aiter.emulation as aiter
from factories.accuracy.cases import SOFTMAX_SCALE
from factories.aiter.batch import plan_batch
from factories.aiter.emulation import PlannerSettings, emulated_cu_count

DEVICES = [
    pytest.param("cpu", id="cpu"),
    pytest.param(
        "cuda",
        id="cuda",
        marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device"),
    ),
]
SENTINEL = 123.0


def _fp8(*shape: int, device: str) -> torch.Tensor:
    return (
        (torch.randn(*shape, generator=torch.Generator().manual_seed(sum(shape))) * 0.5)
        .to(torch.float8_e4m3fn)
        .to(device)
    )


def _run_worked_example(device: str):
    """The contract's worked example (cu=8, one request of 1000, causal), through the kernel."""
    plan = plan_batch(
        [1000], [1000], 1, PlannerSettings.for_fp8_prefill_kernel(True), cu_count=8, device=device
    )
    rows = plan.partial_rows
    split_o = torch.full((rows, 1, 128), SENTINEL, device=device)
    split_l = torch.full((rows, 1), SENTINEL, device=device)
    out = torch.full((1000, 1, 128), SENTINEL, dtype=torch.bfloat16, device=device)
    one = torch.ones(1, device=device)
    q, k = _fp8(1000, 1, 192, device=device), _fp8(1000, 1, 192, device=device)
    v = _fp8(1000, 1, 128, device=device)
    aiter.mla_prefill_ps_asm_fwd(
        *plan.prefill_args(
            q, k, v, split_o, split_l, out, (one, one, one), softmax_scale=SOFTMAX_SCALE
        )
    )
    return plan, split_o, split_l, out


@pytest.mark.parametrize("device", DEVICES)
def test_split_slot_rows_past_the_tile_end_are_poisoned(device):
    _, split_o, split_l, _ = _run_worked_example(device)
    for p in (0, 256, 512, 768):  # tile [768, 1000): 232 rows in each 256-row slot
        assert torch.isfinite(split_o[p : p + 232]).all()
        assert not torch.isnan(
            split_l[p : p + 232]
        ).any()  # finite, or -inf where nothing is visible
        assert torch.isnan(split_o[p + 232 : p + 256]).all()
        assert torch.isnan(split_l[p + 232 : p + 256]).all()


@pytest.mark.parametrize("device", DEVICES)
def test_rows_with_nothing_visible_in_a_piece_get_zero_output_and_minus_inf_lse(device):
    """Slot 768 holds kv [896, 1000) of tile [768, 1000): rows 768..895 see none of it."""
    _, split_o, split_l, _ = _run_worked_example(device)
    assert (split_o[768 : 768 + 128] == 0).all()
    assert torch.isneginf(split_l[768 : 768 + 128]).all()
    assert torch.isfinite(split_l[768 + 128 : 768 + 232]).all()


@pytest.mark.parametrize("device", DEVICES)
def test_unsplit_tiles_write_output_but_no_lse(device):
    plan, _, split_l, out = _run_worked_example(device)
    used_slots = {
        int(w[1]) for w in plan.work_info[: int(plan.work_indptr[-1])].tolist() if w[1] >= 0
    }
    untouched = [r for r in range(split_l.size(0)) if not any(p <= r < p + 256 for p in used_slots)]
    assert (split_l[untouched] == SENTINEL).all()
    assert (out[:256].float() != SENTINEL).all(), "the unsplit tile [0, 256) writes output directly"
    assert (out[256:].float() == SENTINEL).all(), (
        "split tiles reach the output only through the reduce"
    )


@pytest.mark.parametrize("device", DEVICES)
def test_final_lse_is_written_only_for_reduced_rows(device):
    plan, split_o, split_l, out = _run_worked_example(device)
    final_lse = torch.full((1000, 1), SENTINEL, device=device)
    with emulated_cu_count(8):
        aiter.mla_reduce_v1(*plan.reduce_args(split_o, split_l, out, final_lse))
    assert (final_lse[:256] == SENTINEL).all()
    assert torch.isfinite(final_lse[256:]).all() and (final_lse[256:] != SENTINEL).all()
    assert torch.isfinite(out.float()).all()


# --- mla_reduce_v1 on hand-made partials --------------------------------------------------------


def _partials(lses: list[float], rows: int = 4, heads: int = 1, device: str = "cpu"):
    """One 256-row slot per partial; partial i has output i+1 everywhere and LSE lses[i]."""
    n = len(lses)
    po = torch.full((256 * n, heads, 128), float("nan"), device=device)
    pl = torch.full((256 * n, heads), float("nan"), device=device)
    for i, l in enumerate(lses):
        po[256 * i : 256 * i + rows] = i + 1.0
        pl[256 * i : 256 * i + rows] = l
    pm = torch.arange(n, dtype=torch.int32) * 256
    return po, pl, pm


def _merged(lses: list[float]) -> tuple[float, float]:
    """The exact softmax merge of normalized partials (o_i = i+1), in float64."""
    m = max(lses)
    w = [math.exp(l - m) for l in lses]
    return sum(wi * (i + 1) for i, wi in enumerate(w)) / sum(w), m + math.log(sum(w))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    "lses", [[0.5, -1.0], [3.0, 2.0, 7.5], [1.0, 1.0, -2.0, 0.25, 4.0]], ids=["n2", "n3", "n5"]
)
def test_reduce_is_the_exact_lse_merge(device, lses):
    po, pl, pm = _partials(lses, device=device)
    out = torch.zeros(4, 1, 128, dtype=torch.bfloat16, device=device)
    lse = torch.zeros(4, 1, device=device)
    aiter.mla_reduce_v1(
        po,
        pl,
        torch.tensor([0, len(lses)], dtype=torch.int32),
        torch.tensor([[0, 4]], dtype=torch.int32),
        pm,
        256,
        0,
        out,
        lse,
    )
    want_o, want_l = _merged(lses)
    torch.testing.assert_close(
        out.float(), torch.full_like(out.float(), want_o), rtol=2**-8, atol=0
    )
    torch.testing.assert_close(lse, torch.full_like(lse, want_l), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    "contract, written",
    [("pre-3606", False), ("3606", True)],
    ids=["pre-3606-writes-nothing", "3606-reduces-it"],
)
def test_groups_of_one_partial(device, contract, written):
    """Before ROCm/aiter#3606 the reduce skips ``num_splits == 1``; after it (so that need_lse
    plans get ``final_lse`` everywhere) the single partial is copied, with its LSE."""
    po, pl, pm = _partials([1.0], device=device)
    out = torch.full((4, 1, 128), SENTINEL, dtype=torch.bfloat16, device=device)
    lse = torch.full((4, 1), SENTINEL, device=device)
    with aiter.aiter_contract(contract):
        aiter.mla_reduce_v1(
            po,
            pl,
            torch.tensor([0, 1], dtype=torch.int32),
            torch.tensor([[0, 4]], dtype=torch.int32),
            pm,
            256,
            0,
            out,
            lse,
        )
    if written:
        want_o, want_l = _merged([1.0])
        assert (out.float() == want_o).all() and torch.allclose(lse, torch.full_like(lse, want_l))
    else:
        assert (out.float() == SENTINEL).all() and (lse == SENTINEL).all()


@pytest.mark.parametrize("device", DEVICES)
def test_reduce_stops_at_the_first_group_starting_at_the_last_indptr(device):
    """kn_mla_reduce_v1_ps stops at the first g with reduce_indptr[g] == reduce_indptr[-1]."""
    po, pl, pm = _partials([0.0, 1.0, 2.0, 3.0, 4.0], rows=4, device=device)
    ri = torch.tensor([0, 2, 2, 5, 2], dtype=torch.int32)  # group 1 starts at the last value: stop
    fm = torch.tensor([[0, 4], [4, 8], [8, 12], [12, 16]], dtype=torch.int32)
    out = torch.full((16, 1, 128), SENTINEL, dtype=torch.bfloat16, device=device)
    aiter.mla_reduce_v1(po, pl, ri, fm, pm, 256, 0, out, None)
    assert (out[:4].float() != SENTINEL).all()
    assert (out[4:].float() == SENTINEL).all()


@pytest.mark.parametrize("device", DEVICES)
def test_all_empty_partials_simple_path_gives_nan_massive_path_gives_zero(device):
    """All partials -inf: the n in {2,3} path yields NaN, the n >= 4 path 0; final LSE +inf
    (§4.3)."""
    for n, check in ((2, torch.isnan), (4, lambda t: t == 0)):
        po, pl, pm = _partials([-math.inf] * n, device=device)
        po.nan_to_num_(0.0)
        out = torch.full((4, 1, 128), SENTINEL, dtype=torch.bfloat16, device=device)
        lse = torch.zeros(4, 1, device=device)
        aiter.mla_reduce_v1(
            po,
            pl,
            torch.tensor([0, n], dtype=torch.int32),
            torch.tensor([[0, 4]], dtype=torch.int32),
            pm,
            256,
            0,
            out,
            lse,
        )
        assert check(out.float()).all(), n
        assert torch.isposinf(lse).all(), n


@pytest.mark.parametrize("device", DEVICES)
def test_reduce_without_final_map_uses_uniform_rows(device):
    """reduce_final_map=None: group g covers rows [g*len, (g+1)*len), len = pm[1] - pm[0]."""
    po = torch.zeros(8, 1, 128, device=device)
    pl = torch.zeros(8, 1, device=device)
    po[4:8] = 2.0
    out = torch.full((8, 1, 128), SENTINEL, dtype=torch.bfloat16, device=device)
    aiter.mla_reduce_v1(
        po,
        pl,
        torch.tensor([0, 2], dtype=torch.int32),
        None,
        torch.tensor([0, 4], dtype=torch.int32),
        256,
        0,
        out,
        None,
    )
    assert (out[:4].float() == 1.0).all() and (out[4:].float() == SENTINEL).all()
