"""Emulated planner + prefill kernel + reduce vs a float64 reference, on ragged batches that split.

Why: this is the end-to-end check that the emulation computes attention, and the template for
running the same comparison against the real kernels on a gfx950 machine: the tolerance is
derived from the arithmetic a *correct* fp32-accumulating, bf16-output kernel performs, never
from what the code under test produced.

Tolerance derivation (see :func:`derive_bounds`). The reference dequantizes the same fp8 tensors
the kernel reads, so fp8 rounding cancels and the remaining error is fp32 arithmetic plus one bf16
rounding of the output. With u = 2^-24 (fp32 unit roundoff) and gamma(n) = n*u / (1 - n*u)
(Higham, *Accuracy and Stability of Numerical Algorithms*, 2002, Lemma 3.1/3.5):

1. logits: a length-192 fp32 dot product of exactly representable products, then two scale
   multiplications: |d logit| <= delta = (gamma(192) + 3u) * softmax_scale * max|q_r| * max|k_j|
   (Euclidean row norms, Cauchy-Schwarz bounds sum_i |q_i k_i|).
2. softmax weights (exp, a sum over N <= max kv_len keys): relative error
   <= 2*delta + gamma(N) + 4u.
3. P.V over N keys: |error| <= gamma(N) * max|v| (the weights sum to 1).
4. split merge: each partial LSE carries |d lse| <= 2*delta + gamma(N) + 2u*(1 + Lmax), where Lmax
   bounds |lse|; the merge weights exp(lse_i - L) then err by at most twice that, and the sum over
   S <= CU partials adds gamma(S).
   Summing: E = max|v| * (6*delta + 4*gamma(N) + gamma(S) + 4u*(1 + Lmax) + 16u).
5. bf16 rounding of y (the fp32 result, |y - o| <= E): |bf16(y) - o| <= 2^-8 * |o| + (1 + 2^-8) * E,
   because round-to-nearest bf16 (8 significant bits) has unit roundoff 2^-8.

So the output check is ``assert_close(out, ref, rtol=2^-8, atol=(1 + 2^-8) * E)`` element-wise, and
the final LSE (fp32, no bf16 rounding) uses ``atol = 2 * (2*delta + gamma(N) + 2u*(1 + Lmax)) +
gamma(S)``, rtol 0. For the inputs below (|v| <= ~1.5) E is ~2e-3, so the largest allowed
output error is < 1e-2: more than 10x tighter than the seed test's atol = 0.1. Rows are poisoned
(NaN) before the run, so a row the pipeline never writes fails the check.
"""

from __future__ import annotations

import math

import attrs
import pytest
import torch

import factories.aiter.emulation as aiter
from factories.accuracy.cases import SOFTMAX_SCALE
from factories.accuracy.reference import reference_attention
from factories.aiter.batch import PsPlan, plan_batch
from factories.aiter.emulation import PlannerSettings, emulated_cu_count

DEVICES = [
    pytest.param("cpu", id="cpu"),
    pytest.param(
        "cuda",
        id="cuda",
        marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device"),
    ),
]
U = 2.0**-24
U_BF16 = 2.0**-8


@attrs.frozen
class Case:
    name: str
    q_lens: tuple[int, ...]
    kv_lens: tuple[int, ...]
    heads: int
    cu: int
    causal: bool


CASES = [
    Case("cu8_one_head_ragged", (1000, 1, 300, 777), (1000, 1, 300, 777), 1, 8, True),
    Case(
        "cu80_long_beside_short_with_prefix",
        (3000, 5, 17, 1, 130, 257, 64),
        (3200, 5, 100, 1, 130, 600, 64),
        2,
        80,
        True,
    ),
    Case("cu8_noncausal_with_prefix", (600, 1, 333), (600, 1, 400), 2, 8, False),
    Case("cu80_sixteen_heads", (700, 1, 129), (700, 1, 129), 16, 80, True),
]


@attrs.frozen
class Inputs:
    """fp8 tensors and dequant scales as ``per_tensor_quant`` produces them, K/V paged at random."""

    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    q_scale: torch.Tensor
    k_scale: torch.Tensor
    v_scale: torch.Tensor
    pages: torch.Tensor


def _quant(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    scale = (x.abs().amax() / torch.finfo(torch.float8_e4m3fn).max).reshape(1).float()
    return (x / scale).to(torch.float8_e4m3fn), scale


def make_inputs(case: Case, device: str, seed: int = 0) -> Inputs:
    g = torch.Generator().manual_seed(seed)
    total_q, total_kv = sum(case.q_lens), sum(case.kv_lens)
    pool = total_kv + 16  # more physical rows than used; indices repeat, as in the upstream test
    q, qs = _quant(torch.randn(total_q, case.heads, 192, generator=g) * 0.5)
    k, ks = _quant(torch.randn(pool, case.heads, 192, generator=g) * 0.5)
    v, vs = _quant(torch.randn(pool, case.heads, 128, generator=g) * 0.5)
    pages = torch.randint(0, pool, (total_kv,), generator=g, dtype=torch.int32)
    return Inputs(*(t.to(device) for t in (q, k, v, qs, ks, vs, pages)))


@attrs.frozen
class Result:
    out: torch.Tensor
    final_lse: torch.Tensor


def run_pipeline(plan: PsPlan, x: Inputs, device: str) -> Result:
    """mla_prefill_ps_fwd's composition, with every output buffer poisoned first."""
    heads, total_q = plan.num_heads_k, sum(plan.q_lens)
    nan = float("nan")
    split_o = torch.full((plan.partial_rows, heads, 128), nan, device=device)
    split_l = torch.full((plan.partial_rows, heads), nan, device=device)
    out = torch.full((total_q, heads, 128), nan, dtype=torch.bfloat16, device=device)
    final_lse = torch.full((total_q, heads), nan, device=device)
    scales = (x.q_scale, x.k_scale, x.v_scale)
    with emulated_cu_count(plan.cu_count):
        aiter.mla_prefill_ps_asm_fwd(
            *plan.prefill_args(
                x.q,
                x.k,
                x.v,
                split_o,
                split_l,
                out,
                scales,
                softmax_scale=SOFTMAX_SCALE,
                kv_page_indices=x.pages,
            )
        )
        aiter.mla_reduce_v1(*plan.reduce_args(split_o, split_l, out, final_lse))
    return Result(out, final_lse)


def _gamma(n: int) -> float:
    return n * U / (1 - n * U)


@attrs.frozen
class Bounds:
    out_rtol: float
    out_atol: float
    lse_atol: float


def derive_bounds(x: Inputs, case: Case, ref_lse: torch.Tensor) -> Bounds:
    """The error bounds of the module docstring, from the inputs (never from the output)."""
    q = x.q.double() * x.q_scale.double()
    k = x.k.double()[x.pages.long()] * x.k_scale.double()
    v = x.v.double()[x.pages.long()] * x.v_scale.double()
    delta = (
        (_gamma(192) + 3 * U)
        * SOFTMAX_SCALE
        * q.norm(dim=-1).max().item()
        * k.norm(dim=-1).max().item()
    )
    n_kv = max(case.kv_lens)
    l_max = ref_lse[torch.isfinite(ref_lse)].abs().max().item()
    lse_err = 2 * delta + _gamma(n_kv) + 2 * U * (1 + l_max)
    e = v.abs().max().item() * (
        6 * delta + 4 * _gamma(n_kv) + _gamma(case.cu) + 4 * U * (1 + l_max) + 16 * U
    )
    return Bounds(
        out_rtol=U_BF16, out_atol=(1 + U_BF16) * e, lse_atol=2 * lse_err + _gamma(case.cu)
    )


def _reduced_rows(plan: PsPlan, total_q: int) -> torch.Tensor:
    rows = torch.zeros(total_q, dtype=torch.bool)
    for g in range(plan.num_reduce_groups):
        qs, qe = plan.reduce_final_map[g].tolist()
        rows[qs:qe] = True
    return rows


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_pipeline_matches_float64_reference(case: Case, device: str):
    # TF32 GEMMs would void the fp32 error model (and are not what the kernel does).
    assert torch.get_float32_matmul_precision() == "highest"
    settings = PlannerSettings.for_fp8_prefill_kernel(case.causal)
    plan = plan_batch(
        case.q_lens, case.kv_lens, case.heads, settings, cu_count=case.cu, device=device
    )
    assert plan.violations() == ()
    assert plan.num_reduce_groups > 0, "the case must exercise split tiles"
    x = make_inputs(case, device)
    got = run_pipeline(plan, x, device)
    ref_out, ref_lse = reference_attention(
        x.q,
        x.k,
        x.v,
        x.q_scale,
        x.k_scale,
        x.v_scale,
        plan.qo_indptr,
        plan.kv_indptr,
        softmax_scale=SOFTMAX_SCALE,
        is_causal=case.causal,
        kv_page_indices=x.pages,
    )
    b = derive_bounds(x, case, ref_lse)
    worst_allowed = b.out_atol + b.out_rtol * ref_out.abs().max().item()
    assert worst_allowed <= 0.01, f"derived bound {worst_allowed} is not 10x tighter than atol=0.1"

    out = got.out.double()
    assert not torch.isnan(out).any(), "some output rows were never written"
    err = (out - ref_out).abs().max().item()
    torch.testing.assert_close(out, ref_out, rtol=b.out_rtol, atol=b.out_atol)

    reduced = _reduced_rows(plan, sum(case.q_lens)).to(device)
    lse = got.final_lse.double()
    assert torch.isnan(lse[~reduced]).all(), "final_lse must be written only for reduced rows"
    lse_err = (lse[reduced] - ref_lse[reduced]).abs().max().item()
    torch.testing.assert_close(lse[reduced], ref_lse[reduced], rtol=0.0, atol=b.lse_atol)
    print(
        f"[{case.name}/{device}] max|out-ref|={err:.3e} allowed<= {b.out_atol:.3e}+2^-8|ref| "
        f"(worst {worst_allowed:.3e}); max|lse-ref|={lse_err:.3e} allowed {b.lse_atol:.3e}"
    )


def test_reference_agrees_with_sdpa_in_float64():
    """The reference itself, against PyTorch's SDPA (math path, float64, explicit bottom-right
    mask)."""
    case = Case("ref", (37, 300), (50, 300), 2, 8, True)
    x = make_inputs(case, "cpu", seed=3)
    qo, kv = torch.tensor([0, 37, 337]), torch.tensor([0, 50, 350])
    out, lse = reference_attention(
        x.q,
        x.k,
        x.v,
        x.q_scale,
        x.k_scale,
        x.v_scale,
        qo,
        kv,
        softmax_scale=SOFTMAX_SCALE,
        is_causal=True,
        kv_page_indices=x.pages,
    )
    for b in range(2):
        q = (x.q.double() * x.q_scale.double())[qo[b] : qo[b + 1]].transpose(0, 1)
        rows = x.pages.long()[kv[b] : kv[b + 1]]
        k = (x.k.double() * x.k_scale.double())[rows].transpose(0, 1)
        v = (x.v.double() * x.v_scale.double())[rows].transpose(0, 1)
        ql, kl = q.size(1), k.size(1)
        mask = torch.ones(ql, kl, dtype=torch.bool).tril(diagonal=kl - ql)
        want = torch.nn.functional.scaled_dot_product_attention(
            q, k, v, attn_mask=mask, scale=SOFTMAX_SCALE
        )
        torch.testing.assert_close(out[qo[b] : qo[b + 1]], want.transpose(0, 1))
        scores = (q @ k.transpose(1, 2) * SOFTMAX_SCALE).masked_fill(~mask, -math.inf)
        torch.testing.assert_close(
            lse[qo[b] : qo[b + 1]], torch.logsumexp(scores, -1).transpose(0, 1)
        )
