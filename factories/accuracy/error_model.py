"""Error model of the FP8 MLA prefill kernels, and low-precision references that quantize where
the kernels do.

Why: a tolerance must come from what a *correct* kernel's arithmetic can do, never from the
kernel's own output (known-regressions B3). This module states that arithmetic per backend and
computes, on the very fp8 tensors the kernel reads, the value a correct kernel of that arithmetic
produces. ``tools/calibrate_tolerance.py`` compares it with the float64 golden
(:func:`factories.accuracy.causal_reference`) over a sweep and derives the bounds.

Backends (``KernelModel``):

``emulated`` (``factories.aiter.emulation``)
    Dequantized fp8 q/k/v (exact in fp32), fp32 logits, fp32 softmax and P.V, fp32 split merge,
    output rounded once to bf16. q/k/v rounding is shared with the golden, so it cancels.

``gfx950`` (``mla_pfl_qh192_vh128_m32x8_n128x1_causal1.co``, real AITER) -- ASSUMED, not read
    from the binary: the contract's disassembly (aiter-ps-contract.md §3.4-3.5) shows an online
    softmax over 128-key steps with exp2 and log2(e) folded in, a running max starting at
    -FLT_MAX, ``O = v_scale * acc / l`` and ``lse = ln(l) + m``, but the gfx950 VALU/MFMA
    conversion and MFMA instructions did not decode. What is assumed about them:

    1. q/k/v are e4m3fn, exactly the tensors the reference dequantizes: fp8 input rounding cancels.
    2. Logits ``s = (q_scale*k_scale*softmax_scale) * (q . k)`` in fp32 (fp8 x fp8 MFMA, fp32 acc).
    3. Per 128-key step c, the running max ``M_c = max(M_{c-1}, rowmax(s_c))``;
       ``P_c = exp(s_c - M_c)`` in [0, 1] is rounded to **e4m3fn, round-to-nearest-even, no extra
       scale** (values below 2^-10 flush to 0, the e4m3fn subnormal grid is 2^-9) and fed to the
       second fp8 MFMA: ``acc = acc * exp(M_{c-1} - M_c) + P8_c . V_c`` in fp32. RNE because it is
       the IEEE default of an fp32 -> fp8 conversion (a truncating or stochastic one would bias P
       and move the slope statistic at once); "no scale" because P is already in [0, 1] and the
       kernel loads no P scale (§3.5 lists only q/k/v scales).
    4. The row sum ``l`` accumulates the **fp32** P (``l = l * exp(M_{c-1} - M_c) + rowsum(P_c)``),
       as FlashAttention-3's fp8 forward does; the variant ``gfx950-rowsum-p8`` sums the rounded
       P8 instead. Both are modelled and the derivation takes the envelope, because the binary
       does not tell which.
    5. ``O = v_scale * acc / l`` rounded to bf16 once; ``lse = ln(l) + M`` in fp32.
    6. A split tile restarts the running max at its first 128-key step, and partials merge exactly
       in fp32 (§4.3); the reference here runs each request as one work (steps from key 0). The
       P8 rounding is relative to whichever max is current, so the split pattern changes which
       P values round where, not the size of the rounding; the emulated kernels run the same
       arithmetic inside the *split* pipeline (``KernelModel.arithmetic``, e.g. the variant
       ``p8-unscaled`` of :data:`factories.aiter.emulation.ARITHMETIC_VARIANTS`, the kill
       matrix's ``gfx950-p8`` base) to audit exactly that.

Anything not listed (tie-breaking of the exp2 approximation, MFMA internal accumulation order) is
fp32-level and covered by the fp32 kernel budget (:func:`kernel_budget`).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import torch

from factories.aiter.emulation.arithmetic import (
    AITER_SOURCE_ENVELOPE,
    ARITHMETIC_VARIANTS,
    DEFAULT_ARITHMETIC,
    LOG2E,
    KernelArithmetic,
    cast_p,
    lazy_running_max,
    round_p,
    store_rounded,
)
from factories.aiter.layout import KERNEL_KV_STEP as KV_STEP

#: Unit roundoff (round to nearest) of the formats involved.
U_FP32 = 2.0**-24
U_BF16 = 2.0**-8
U_E4M3 = 2.0**-4
U_E5M2 = 2.0**-3

#: C in the fp32 kernel budget ``C * u_fp32 * sum_j p_j |v_j|`` (per output element) and
#: ``C * u_fp32 * (1 + |lse|)`` (per LSE). vLLM's derive_rocm_aiter_tolerances measured C in
#: 0.13-2.0 for correct kernels of this shape (known-regressions B3); 16 is 8x the top of it.
BUDGET_C = 16.0


@attrs.frozen
class KernelModel:
    """The arithmetic of one backend, as far as it matters for error (see the module docstring)."""

    name: str
    backend: str  # the tolerance-file backend this model calibrates: "emulated" or "gfx950"
    p_dtype: torch.dtype | None  # rounding of P before the second GEMM; None: fp32
    row_sum_of_rounded_p: bool  # l sums the rounded P (True) or the fp32 P (False)
    exp2_folded: bool  # exp2((s - M) * log2e) as the asm does, or exp(s - M)
    description: str = attrs.field(repr=False, default="")
    p_scaling: str = "none"  # KernelArithmetic.p_scaling: none, lazy-rescale, row-max
    reduce_store: str = "rne"  # the bf16 store: rne, or truncate (applied to every row here)

    @property
    def arithmetic(self) -> KernelArithmetic:
        """The emulated kernels' arithmetic that runs this model inside the split pipeline
        (fp32 P: the shipped emulation, whose fused softmax has no exp/exp2 choice)."""
        if self.p_dtype is None:
            if self.reduce_store == DEFAULT_ARITHMETIC.reduce_store:
                return DEFAULT_ARITHMETIC
            return attrs.evolve(DEFAULT_ARITHMETIC, reduce_store=self.reduce_store)
        return KernelArithmetic(
            p_dtype=self.p_dtype,
            p_scaling=self.p_scaling,
            row_sum="rounded" if self.row_sum_of_rounded_p else "fp32",
            exp2_folded=self.exp2_folded,
            reduce_store=self.reduce_store,
        )

    @property
    def store_u(self) -> float:
        """Largest relative error of the output store: half a bf16 step (RNE) or a whole one."""
        return U_BF16 if self.reduce_store == "rne" else 2 * U_BF16


EMULATED = KernelModel(
    "emulated",
    "emulated",
    None,
    False,
    False,
    "fp32 logits/softmax/P.V/merge on exactly dequantized fp8, one bf16 rounding of the output",
)
GFX950 = KernelModel(
    "gfx950",
    "gfx950",
    torch.float8_e4m3fn,
    False,
    True,
    "assumed gfx950 asm: P=exp2((s-M)log2e) in [0,1] -> e4m3fn RNE, no scale; l over fp32 P",
)
GFX950_ROWSUM_P8 = KernelModel(
    "gfx950-rowsum-p8",
    "gfx950",
    torch.float8_e4m3fn,
    True,
    True,
    "variant of the assumption: l sums the e4m3fn-rounded P",
)
GFX950_EXP = KernelModel(
    "gfx950-exp",
    "gfx950",
    torch.float8_e4m3fn,
    False,
    False,
    "variant: exp(s-M) instead of the folded exp2 (different fp32 rounding of P, so different "
    "P values land on the other side of an fp8 rounding midpoint)",
)

MODELS: dict[str, KernelModel] = {
    m.name: m for m in (EMULATED, GFX950, GFX950_ROWSUM_P8, GFX950_EXP)
}

#: The arithmetic variant of the emulated kernels that carries each model.
MODEL_ARITHMETIC: dict[str, str] = {
    name: next(k for k, a in ARITHMETIC_VARIANTS.items() if a == m.arithmetic)
    for name, m in MODELS.items()
}


def variant_model(name: str, backend: str = "gfx950") -> KernelModel:
    """The model of the named :data:`ARITHMETIC_VARIANTS` entry, named like it (the tolerance file
    records these names), calibrating ``backend``."""
    if name not in ARITHMETIC_VARIANTS:
        raise KeyError(f"unknown variant {name!r}; known: {sorted(ARITHMETIC_VARIANTS)}")
    a = ARITHMETIC_VARIANTS[name]
    return KernelModel(
        name,
        backend,
        a.p_dtype,
        a.row_sum == "rounded",
        a.exp2_folded if a.p_dtype is not None else False,
        f"the emulation's arithmetic variant {name}",
        p_scaling=a.p_scaling,
        reduce_store=a.reduce_store,
    )


#: The gfx950 models the calibration uses when it is not told the variant: every arithmetic
#: AITER's sources allow (:data:`AITER_SOURCE_ENVELOPE`).
GFX950_ENVELOPE: tuple[KernelModel, ...] = tuple(variant_model(n) for n in AITER_SOURCE_ENVELOPE)


def models_for(backend: str) -> tuple[KernelModel, ...]:
    """Every model variant whose envelope calibrates ``backend``."""
    found = tuple(m for m in MODELS.values() if m.backend == backend)
    if not found:
        known = sorted({m.backend for m in MODELS.values()})
        raise KeyError(f"no error model for backend {backend!r}; known: {known}")
    return found


@attrs.frozen
class ModelOutput:
    """What a correct kernel of the model produces: ``y`` is the fp32 output before the bf16
    rounding, ``out`` the bf16 output, ``lse`` the fp32 natural-log LSE; all ``[T, H, ...]``.
    ``abs_pv`` is ``sum_j p_j |v_j|`` (fp32), the scale of every P.V error."""

    y: torch.Tensor
    out: torch.Tensor
    lse: torch.Tensor
    abs_pv: torch.Tensor


#: Elements of one fp32 [H, rows, keys] score block (2^23 floats = 32 MiB; a few live copies).
BLOCK_ELEMENTS = 1 << 23


def model_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    lens: Sequence[int],
    softmax_scale: float,
    model: KernelModel,
    *,
    scales: tuple[float, float, float] = (1.0, 1.0, 1.0),
    block_elements: int = BLOCK_ELEMENTS,
) -> ModelOutput:
    """The kernel arithmetic of ``model`` on packed causal requests (KV = Q, as the suite runs).

    ``q``/``k``/``v`` are the fp8 tensors the kernel reads (any float dtype works). Vectorized:
    per request, blocks of q rows see keys ``[0, i1)`` padded to whole 128-key steps; the running
    max of every step is a ``cummax`` over the steps' maxima, so the online recurrence
    ``acc = acc * exp(M_old - M_new) + P8 . V`` becomes ``sum_c exp(M_c - M_last) * (P8_c . V_c)``
    (the same value up to fp32 rounding of the rescale factors).
    """
    device = q.device
    num_tokens, num_heads, _ = q.shape
    dv = v.size(-1)
    if sum(lens) != num_tokens or k.size(0) != num_tokens or v.size(0) != num_tokens:
        raise ValueError(
            f"lens {list(lens)} do not pack q/k/v of {num_tokens}/{k.size(0)}/{v.size(0)} rows"
        )
    qs, ks, vs = (float(s) for s in scales)
    qk_scale = float(torch.tensor(qs, dtype=torch.float32) * ks * softmax_scale)  # fp32 product
    y = torch.empty(num_heads, num_tokens, dv, dtype=torch.float32, device=device)
    lse = torch.empty(num_heads, num_tokens, dtype=torch.float32, device=device)
    apv = torch.empty(num_heads, num_tokens, dtype=torch.float32, device=device)
    start = 0
    for n in lens:
        if n == 0:
            continue
        qd = q[start : start + n].to(torch.float32).transpose(0, 1).contiguous()  # [H, n, D]
        steps = -(-n // KV_STEP)
        padded = steps * KV_STEP
        kt = torch.zeros(num_heads, k.size(-1), padded, dtype=torch.float32, device=device)
        kt[:, :, :n] = k[start : start + n].to(torch.float32).permute(1, 2, 0)
        vd = torch.zeros(num_heads, padded, dv, dtype=torch.float32, device=device)
        vd[:, :n] = v[start : start + n].to(torch.float32).transpose(0, 1)
        rows = max(1, min(n, block_elements // max(1, num_heads * padded)))
        for i0 in range(0, n, rows):
            i1 = min(n, i0 + rows)
            c1 = -(-i1 // KV_STEP)  # steps any row of the block can see
            w = c1 * KV_STEP
            s = torch.bmm(qd[:, i0:i1], kt[:, :, :w]).mul_(qk_scale)  # [H, r, w]
            col = torch.arange(w, device=device)
            row = torch.arange(i0, i1, device=device)
            s.masked_fill_(col[None, :] > row[:, None], float("-inf"))
            sc = s.view(num_heads, i1 - i0, c1, KV_STEP)
            step_max = sc.amax(dim=-1)  # -inf for steps past a row's limit
            if model.p_scaling == "lazy-rescale":
                running = lazy_running_max(step_max)
            else:
                running = torch.cummax(step_max, dim=-1).values  # finite: key 0 is visible
            if model.exp2_folded:
                p = torch.exp2((sc - running[..., None]) * LOG2E)
            else:
                p = torch.exp(sc - running[..., None])
            del s, sc
            p8 = cast_p(p, model.arithmetic) if model.p_dtype is not None else p
            last = running[..., -1:]
            rescale = torch.exp(running - last)  # [H, r, c1]
            l_terms = (p8 if model.row_sum_of_rounded_p else p).sum(dim=-1)
            total = (l_terms * rescale).sum(dim=-1)  # [H, r]
            vb = vd[:, :w].view(num_heads, c1, KV_STEP, dv)
            acc = torch.einsum("hrck,hckd->hrd", p8 * rescale[..., None], vb)
            absv = vb.abs().view(num_heads, w, dv)
            pn = (p * rescale[..., None]).view(num_heads, i1 - i0, w)
            apv[:, start + i0 : start + i1] = torch.bmm(pn, absv).amax(dim=-1) / total
            y[:, start + i0 : start + i1] = acc.div_(total[..., None]).mul_(vs)
            lse[:, start + i0 : start + i1] = total.log() + last[..., 0]
            del p, p8, acc, pn
        start += n
    y = y.transpose(0, 1)
    return ModelOutput(
        y=y,
        out=store_rounded(y, torch.bfloat16, model.reduce_store),
        lse=lse.transpose(0, 1),
        abs_pv=apv.transpose(0, 1) * vs,
    )


def kernel_budget(model_out: ModelOutput, c: float = BUDGET_C) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-element slack a *correct* kernel may differ from the model by, before the bf16
    rounding: ``C * u_fp32 * max_d sum_j p_j |v_jd|`` for the output (broadcast over the head dim)
    and ``C * u_fp32 * (1 + |lse|)`` for the LSE. fp32 reordering only (B3: "kernel_budget is a
    unit-roundoff bound for a correct kernel"); the P8 rounding itself is in the model."""
    out_b = (c * U_FP32) * model_out.abs_pv[..., None].expand_as(model_out.y)
    lse_b = (c * U_FP32) * (1.0 + model_out.lse.abs())
    return out_b, lse_b


def needed_atol(
    y: torch.Tensor,
    golden: torch.Tensor,
    budget: torch.Tensor,
    rtol: float,
    store_u: float = U_BF16,
) -> float:
    """``max_e(|y_e - g_e| + budget_e - rtol*|g_e|)`` plus the bf16 rounding of a result that is
    ``|y - g| + budget`` away from ``g`` (the kernel rounds its own fp32 value, not ``g``):
    ``|bf16(x) - g| <= u_bf16*|x| + |x - g| <= u_bf16*|g| + (1 + u_bf16)*|x - g|``.

    With ``rtol = u_bf16`` this is ``(1 + u_bf16) * max_e(|y_e - g_e| + budget_e)``. ``y`` is the
    model's fp32 value *before* rounding; using the rounded output would charge the rounding twice.
    ``store_u`` is the store's largest relative error: ``u_bf16`` for RNE, ``2 u_bf16`` for a
    truncating store (which then needs ``rtol = 2 u_bf16`` for the same form).
    """
    excess = (y.to(torch.float64) - golden).abs_().add_(budget.to(torch.float64))
    slack = excess.mul(1.0 + store_u).sub_(golden.abs().mul(rtol - store_u))
    return max(float(slack.max()), 0.0) if slack.numel() else 0.0


__all__ = [
    "BUDGET_C",
    "EMULATED",
    "GFX950",
    "GFX950_ENVELOPE",
    "GFX950_EXP",
    "GFX950_ROWSUM_P8",
    "KV_STEP",
    "LOG2E",
    "MODELS",
    "MODEL_ARITHMETIC",
    "U_BF16",
    "U_E4M3",
    "U_E5M2",
    "U_FP32",
    "KernelModel",
    "ModelOutput",
    "kernel_budget",
    "model_attention",
    "models_for",
    "needed_atol",
    "round_p",
    "variant_model",
]
