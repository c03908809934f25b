"""The emulated kernels' arithmetic parameter: every named variant moves the output the way its
arithmetic says, on inputs crafted so the direction is known, and the default is the emulation.

Why: a fingerprinting tool tells the device's arithmetic apart by running these variants against
real outputs; a variant that silently computed something else (or nothing different) would make
it conclude the wrong thing. Each row of :data:`EXPECTATIONS` names a variant, a crafted input and
the change it must cause relative to the shipped fp32-P emulation.

Crafted inputs: one query row (``q_len = 1``, so the bottom-right causal row sees every key), one
head, ``q = e_0`` and ``k_j = c_j e_0``, so the logits are ``alpha * c_j`` with the fp8 values
``c_j``. ``alpha = fl32(ln 2)`` makes ``alpha * c_j * log2(e)`` exactly ``c_j`` in fp32 for
``c_j`` a power of two times a small odd integer used here, so ``P = exp2(c_j - M)`` is an exact
power of two and the fp8 rounding of each P is known in advance.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable

import attrs
import numpy as np
import pytest
import torch

import factories.aiter.emulation as aiter
from factories.accuracy.cases import SOFTMAX_SCALE
from factories.aiter.batch import plan_batch
from factories.aiter.emulation import (
    ARITHMETIC_VARIANTS,
    DEFAULT_ARITHMETIC,
    KernelArithmetic,
    PlannerSettings,
    current_arithmetic,
    emulated_cu_count,
    kernel_arithmetic,
)
from factories.aiter.emulation.arithmetic import (
    RESCALE_THRESHOLD,
    KernelFaults,
    current_faults,
    injected_faults,
    store_rounded,
)

FP8 = torch.float8_e4m3fn
ALPHA = float(np.float32(math.log(2.0)))  # alpha * log2e == 1 exactly in fp32
BF16_ULP_REL = 2.0**-7  # bf16 spacing relative to the value (8 significant bits)


@attrs.frozen
class Crafted:
    """One query row over ``len(coef)`` keys: logits ``ALPHA * coef``, values ``v`` (all 128
    dims equal), softmax scale ``scale`` (``ALPHA`` unless a test needs other P values)."""

    coef: tuple[float, ...]
    v: tuple[float, ...]
    scale: float = ALPHA


def _tiny_p(v_big: float, v_small: float) -> Crafted:
    """Key 0 at logit 0 (P = 1), 127 keys at -11 binades: P = 2^-11, under half of e4m3fn's
    smallest subnormal 2^-9, so an unscaled cast flushes them to 0; scaled by 448 they become
    0.21875 = 7 * 2^-5, exact in e4m3fn."""
    return Crafted((0.0,) + (-11.0,) * 127, (v_big,) + (v_small,) * 127)


def _subnormal_p() -> Crafted:
    """Key 0 at P = 1, 127 keys at P = 2^-8.4 ~ 0.0030: inside e4m3fn's subnormal range
    [2^-9, 2^-6), whose grid 2^-9 rounds them by ~30%; scaled by 448 (~1.33) they round by
    ~3% on the normal grid."""
    return Crafted((0.0,) + (-8.0,) * 127, (0.0,) + (1.0,) * 127, scale=ALPHA * 1.05)


def _lazy_growth() -> Crafted:
    """Two 128-key steps. Step 0: every key at logit 0 (P = 1, v = 0). Step 1: one key 4 binades
    higher (v = 0) and 127 keys at -8 binades (v = 1). The max grows by 4 <= RESCALE_THRESHOLD, so
    a lazy kernel keeps M = 0: P = 16 and 2^-8 (both exact in e4m3fn). A kernel that moves M sees
    the small keys at 2^-12 and flushes them."""
    coef = (0.0,) * 128 + (4.0,) + (-8.0,) * 127
    return Crafted(coef, (0.0,) * 129 + (1.0,) * 127)


def _run_crafted(x: Crafted, arithmetic: KernelArithmetic | str | None) -> torch.Tensor:
    """The fp32 value of the single output row (``[128]``; every dim is the same)."""
    n = len(x.coef)
    plan = plan_batch([1], [n], 1, PlannerSettings.for_fp8_prefill_kernel(True), cu_count=1)
    assert plan.num_reduce_groups == 0, "crafted inputs must be one unsplit work"
    q = torch.zeros(1, 1, 192)
    q[0, 0, 0] = 1.0
    k = torch.zeros(n, 1, 192)
    k[:, 0, 0] = torch.tensor(x.coef)
    v = torch.tensor(x.v)[:, None, None].expand(n, 1, 128).contiguous()
    q8, k8, v8 = (t.to(FP8) for t in (q, k, v))
    assert torch.equal(k8.float(), k) and torch.equal(v8.float(), v), "inputs must be exact fp8"
    out = torch.full((1, 1, 128), float("nan"), dtype=torch.bfloat16)
    split_o = torch.zeros(max(plan.partial_rows, 256), 1, 128)
    split_l = torch.zeros(max(plan.partial_rows, 256), 1)
    one = torch.ones(1)
    ctx = kernel_arithmetic(arithmetic) if arithmetic is not None else contextlib.nullcontext()
    with ctx, emulated_cu_count(1):
        aiter.mla_prefill_ps_asm_fwd(
            *plan.prefill_args(
                q8, k8, v8, split_o, split_l, out, (one, one, one), softmax_scale=x.scale
            )
        )
    assert torch.isfinite(out).all()
    assert (out == out[..., :1]).all()
    return out[0, 0].float()


def _val(x: Crafted, arithmetic) -> float:
    return float(_run_crafted(x, arithmetic)[0])


# --------------------------------------------------------------------------------------------
# Split pipeline on random data (for the store rounding and the default)
# --------------------------------------------------------------------------------------------


@attrs.frozen
class PipelineResult:
    out: torch.Tensor
    final_lse: torch.Tensor
    split_o: torch.Tensor
    reduced: torch.Tensor  # bool [T]: rows the reduce writes


def _run_split(arithmetic: KernelArithmetic | str | None, seed: int = 0) -> PipelineResult:
    """One request of 1000 tokens, 2 heads, CU 8 (the contract's worked example): tiles split,
    so both the prefill's direct bf16 store and the reduce's store are exercised."""
    n, heads = 1000, 2
    settings = PlannerSettings.for_fp8_prefill_kernel(True)
    plan = plan_batch([n], [n], heads, settings, cu_count=8)
    assert plan.num_reduce_groups > 0
    g = torch.Generator().manual_seed(seed)
    q8, k8 = (torch.randn(n, heads, 192, generator=g).mul_(0.5).to(FP8) for _ in range(2))
    v8 = torch.randn(n, heads, 128, generator=g).to(FP8)
    nan = float("nan")
    split_o = torch.full((plan.partial_rows, heads, 128), nan)
    split_l = torch.full((plan.partial_rows, heads), nan)
    out = torch.full((n, heads, 128), nan, dtype=torch.bfloat16)
    final_lse = torch.full((n, heads), nan)
    one = torch.ones(1)
    ctx = kernel_arithmetic(arithmetic) if arithmetic is not None else contextlib.nullcontext()
    with ctx, emulated_cu_count(8):
        aiter.mla_prefill_ps_asm_fwd(
            *plan.prefill_args(
                q8, k8, v8, split_o, split_l, out, (one, one, one), softmax_scale=SOFTMAX_SCALE
            )
        )
        aiter.mla_reduce_v1(*plan.reduce_args(split_o, split_l, out, final_lse))
    reduced = torch.zeros(n, dtype=torch.bool)
    for gi in range(plan.num_reduce_groups):
        qs, qe = plan.reduce_final_map[gi].tolist()
        reduced[qs:qe] = True
    assert not torch.isnan(out.float()).any()
    return PipelineResult(out, final_lse, split_o, reduced)


# --------------------------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------------------------


def _flushes_small_p(name: str) -> None:
    """Unscaled e4m3fn: the 2^-11 keys (v = 1) flush, the output drops to exactly 0; the fp32
    emulation sees them (127 * 2^-11 / (1 + 127 * 2^-11) ~ 0.058)."""
    x = _tiny_p(0.0, 1.0)
    ref = _val(x, None)
    assert ref == pytest.approx(127 * 2.0**-11 / (1 + 127 * 2.0**-11), rel=BF16_ULP_REL)
    assert _val(x, name) == 0.0


def _row_max_keeps_small_p(name: str) -> None:
    """Row-scaled e4m3fn: P = 2^-11 becomes 0.21875, exact, so the output is the fp32 one (up to
    the fp32 order of operations, below the bf16 rounding); the unscaled cast flushes it."""
    x = _tiny_p(0.0, 1.0)
    ref = _val(x, None)
    assert ref > 0.05
    assert _val(x, name) == pytest.approx(ref, rel=BF16_ULP_REL)
    assert _val(x, "p8-unscaled") == 0.0
    # Inside the subnormal range both round, but the row-scaled one by ~10x less.
    s = _subnormal_p()
    ref_s = _val(s, None)
    err_row_max = abs(_val(s, name) - ref_s)
    err_unscaled = abs(_val(s, "p8-unscaled") - ref_s)
    assert err_row_max < 2.0**-4 * ref_s < err_unscaled / 4


def _lazy_keeps_grown_p(name: str) -> None:
    """Lazy rescale: the max grows by 4 binades, under the threshold, so M stays and the keys at
    -8 binades keep P = 2^-8 (exact): the output matches fp32. Moving M (unscaled) puts them at
    2^-12 and flushes them: output 0."""
    x = _lazy_growth()
    ref = _val(x, None)
    want = 127 * 2.0**-8 / (128 + 16 + 127 * 2.0**-8)
    assert ref == pytest.approx(want, rel=BF16_ULP_REL)
    assert _val(x, name) == pytest.approx(ref, rel=BF16_ULP_REL)
    assert _val(x, "p8-unscaled") == 0.0


def _row_sum_over_rounded_p_normalizes(name: str) -> None:
    """V = 1 everywhere: with ``l`` over the rounded P the output is sum(P8)/sum(P8) = 1 exactly
    although P8 lost the flushed keys; with ``l`` over fp32 P (the same variant otherwise) it is
    1 / (1 + 127 * 2^-11) < 1 for the flushing scalings, and 1 where nothing flushed."""
    x = _tiny_p(1.0, 1.0)
    assert _val(x, None) == 1.0
    assert _val(x, name) == 1.0
    sibling = ARITHMETIC_VARIANTS[name.removesuffix("-rowsum-p8")]
    assert sibling.row_sum == "fp32"
    got = _val(x, sibling)
    if sibling.p_scaling == "row-max":
        assert got == 1.0  # P = 2^-11 is exact after scaling: nothing lost
    else:
        assert got == pytest.approx(1 / (1 + 127 * 2.0**-11), rel=BF16_ULP_REL) and got < 1.0


def _exp_moves_few_roundings(name: str) -> None:
    """exp instead of the folded exp2: a different fp32 P, so a few P land across an e4m3fn
    midpoint; outputs differ somewhere but by less than one e4m3fn step of P times |v|."""
    a = _run_split("p8-unscaled")
    b = _run_split(name)
    diff = (a.out.float() - b.out.float()).abs()
    assert diff.max() > 0
    assert diff.max() <= 2.0**-4 * 5.0  # one e4m3fn step of P (<= 2^-4) times |v| (< 5 here)
    assert torch.equal(a.reduced, b.reduced)


def _store_truncates_toward_zero(name: str) -> None:
    """Truncating bf16 store of the reduce: on merged rows every element moves toward zero by at
    most one bf16 step and many move; rows the prefill kernel stores directly are untouched, as
    are the fp32 final LSEs."""
    base = ARITHMETIC_VARIANTS[name.removesuffix("-reduce-truncate")]
    assert base.reduce_store == "rne"
    rne, trunc = _run_split(base), _run_split(name)
    r, t = rne.out.float(), trunc.out.float()
    m = rne.reduced
    assert torch.equal(r[~m], t[~m])
    assert torch.equal(rne.final_lse[m], trunc.final_lse[m])
    assert (t[m].abs() <= r[m].abs()).all()
    assert ((t[m] == 0) | (t[m].sign() == r[m].sign())).all()
    step = r[m].abs() * BF16_ULP_REL
    assert ((r[m] - t[m]).abs() <= step).all()
    moved = (t[m] != r[m]).float().mean()
    assert 0.25 < moved < 0.75  # about half the values round up under RNE


def _is_the_default(name: str) -> None:
    """The default arithmetic is today's emulation: identical output with or without it."""
    plain = _run_split(None)
    named = _run_split(name)
    for a, b in ((plain.out, named.out), (plain.final_lse, named.final_lse)):
        torch.testing.assert_close(a, b, rtol=0, atol=0, equal_nan=True)
    torch.testing.assert_close(plain.split_o, named.split_o, rtol=0, atol=0, equal_nan=True)


EXPECTATIONS: dict[str, Callable[[str], None]] = {
    "fp32-p": _is_the_default,
    "fp32-p-reduce-truncate": _store_truncates_toward_zero,
    "p8-unscaled": _flushes_small_p,
    "p8-unscaled-rowsum-p8": _row_sum_over_rounded_p_normalizes,
    "p8-unscaled-exp": _exp_moves_few_roundings,
    "p8-unscaled-reduce-truncate": _store_truncates_toward_zero,
    "p8-lazy-rescale": _lazy_keeps_grown_p,
    "p8-lazy-rescale-rowsum-p8": _row_sum_over_rounded_p_normalizes,
    "p8-lazy-rescale-reduce-truncate": _store_truncates_toward_zero,
    "p8-row-max": _row_max_keeps_small_p,
    "p8-row-max-rowsum-p8": _row_sum_over_rounded_p_normalizes,
    "p8-row-max-reduce-truncate": _store_truncates_toward_zero,
}


def test_every_named_variant_has_an_expectation():
    assert set(EXPECTATIONS) == set(ARITHMETIC_VARIANTS)


@pytest.mark.parametrize("name", list(EXPECTATIONS))
def test_variant_moves_the_output_as_its_arithmetic_says(name):
    EXPECTATIONS[name](name)


# --------------------------------------------------------------------------------------------
# The parameter itself
# --------------------------------------------------------------------------------------------


def test_the_default_is_the_fp32_emulation_and_the_context_restores_it():
    assert current_arithmetic() == DEFAULT_ARITHMETIC == ARITHMETIC_VARIANTS["fp32-p"]
    assert DEFAULT_ARITHMETIC.p_dtype is None and DEFAULT_ARITHMETIC.reduce_store == "rne"
    with kernel_arithmetic("p8-row-max") as a:
        assert current_arithmetic() == a == ARITHMETIC_VARIANTS["p8-row-max"]
        with kernel_arithmetic(DEFAULT_ARITHMETIC):
            assert current_arithmetic() is DEFAULT_ARITHMETIC
        assert current_arithmetic() == a
    assert current_arithmetic() == DEFAULT_ARITHMETIC
    assert current_faults() == KernelFaults()
    with injected_faults(KernelFaults(causal_shift=1)):
        assert current_faults().causal_shift == 1
    assert current_faults() == KernelFaults()


def test_bad_arithmetic_is_rejected():
    with pytest.raises(KeyError), kernel_arithmetic("p16"):
        pass
    with pytest.raises(TypeError), kernel_arithmetic(torch.float8_e4m3fn):  # type: ignore[arg-type]
        pass
    with pytest.raises(ValueError):
        KernelArithmetic(p_scaling="lazy-rescale")  # fp32 P has nothing to rescale
    with pytest.raises(ValueError):
        KernelArithmetic(p_dtype=FP8, p_scaling="stochastic")
    with pytest.raises(ValueError):
        KernelArithmetic(reduce_store="nearest-away")


def test_presets_are_distinct_and_the_threshold_is_eight_binades():
    values = list(ARITHMETIC_VARIANTS.values())
    assert len(set(values)) == len(values)
    assert RESCALE_THRESHOLD == 8.0


def test_truncating_store_clears_the_low_bits():
    x = torch.tensor([1.0 + 2.0**-8, -(1.0 + 2.0**-8), 1.0 + 3 * 2.0**-9, -3.0, 0.0, float("nan")])
    rne = store_rounded(x, torch.bfloat16, "rne").float()
    trunc = store_rounded(x, torch.bfloat16, "truncate").float()
    # 1 + 2^-8 is a tie: RNE goes to even (1.0); 1 + 3*2^-9 rounds up under RNE, down when cut.
    assert rne[:5].tolist() == [1.0, -1.0, 1.0 + 2.0**-7, -3.0, 0.0]
    assert trunc[:5].tolist() == [1.0, -1.0, 1.0, -3.0, 0.0]
    assert torch.isnan(trunc[5])
    with pytest.raises(ValueError):
        store_rounded(x, torch.float16, "truncate")
