"""The low-precision models: the vectorized online softmax equals the kernel's sequential loop,
P is rounded to e4m3fn on its grid, and the models land where the arithmetic says they must."""

from __future__ import annotations

import math

import pytest
import torch

import factories.aiter.emulation.arithmetic as arithmetic
from factories.accuracy import causal_reference
from factories.accuracy.error_model import (
    EMULATED,
    GFX950,
    GFX950_EXP,
    GFX950_ROWSUM_P8,
    KV_STEP,
    LOG2E,
    MODEL_ARITHMETIC,
    MODELS,
    U_BF16,
    kernel_budget,
    model_attention,
    models_for,
    needed_atol,
    round_p,
)
from factories.aiter.emulation import ARITHMETIC_VARIANTS, DEFAULT_ARITHMETIC
from factories.aiter.emulation.arithmetic import rounded_p_softmax_pv
from factories.aiter.layout import KERNEL_KV_STEP

FP8 = torch.float8_e4m3fn
SCALE = 192**-0.5


def qkv(lens, heads, seed=0):
    g = torch.Generator().manual_seed(seed)
    t = sum(lens)
    mk = lambda d: torch.randn(t, heads, d, generator=g).to(torch.bfloat16).to(FP8)  # noqa: E731
    return mk(192), mk(192), mk(128)


def sequential_kernel(q, k, v, n, model):
    """The kernel's loop, one 128-key step at a time (one request, causal, KV = Q)."""
    qd, kd, vd = (x.float().transpose(0, 1) for x in (q, k, v))  # [H, n, D]
    heads = qd.size(0)
    m = torch.full((heads, n), -math.inf)
    acc = torch.zeros(heads, n, vd.size(-1))
    l = torch.zeros(heads, n)
    rows = torch.arange(n)
    for c0 in range(0, n, KV_STEP):
        cols = torch.arange(c0, min(n, c0 + KV_STEP))
        s = torch.bmm(qd, kd[:, cols].transpose(1, 2)) * float(torch.tensor(1.0) * SCALE)
        s = s.masked_fill(cols[None, None, :] > rows[None, :, None], -math.inf)
        m_new = torch.maximum(m, s.amax(-1))
        p = torch.exp2((s - m_new[..., None]) * LOG2E)
        p8 = round_p(p, model.p_dtype)
        alpha = torch.exp(torch.where(torch.isfinite(m), m - m_new, torch.zeros(())))
        acc = acc * alpha[..., None] + torch.bmm(p8, vd[:, cols])
        l = l * alpha + (p8 if model.row_sum_of_rounded_p else p).sum(-1)
        m = m_new
    return (acc / l[..., None]).transpose(0, 1), (l.log() + m).transpose(0, 1)


@pytest.mark.parametrize("model", [GFX950, GFX950_ROWSUM_P8, EMULATED], ids=lambda m: m.name)
def test_vectorized_model_equals_the_sequential_kernel_loop(model):
    n = 300
    q, k, v = qkv((n,), 2)
    got = model_attention(q, k, v, (n,), SCALE, model, block_elements=2 * 384 * 64)
    want_y, want_lse = sequential_kernel(q, k, v, n, model)
    torch.testing.assert_close(got.y, want_y, rtol=0, atol=2e-6)
    torch.testing.assert_close(got.lse, want_lse, rtol=0, atol=2e-6)


@pytest.mark.parametrize("model", [GFX950, GFX950_ROWSUM_P8, GFX950_EXP], ids=lambda m: m.name)
def test_in_pipeline_rounding_equals_the_model_on_one_work(model):
    """The emulated kernels' P rounding (the split pipeline's arithmetic variant of each model)
    is the same arithmetic as the model."""
    n = 260
    q, k, v = qkv((n,), 1, seed=4)
    s = (q.float()[:, 0] @ k.float()[:, 0].T * SCALE).masked_fill(
        torch.ones(n, n, dtype=torch.bool).triu(1), -math.inf
    )
    o, lse = rounded_p_softmax_pv(s[None], v.float()[:, 0][None], True, model.arithmetic)
    want = model_attention(q, k, v, (n,), SCALE, model)
    torch.testing.assert_close(o[0], want.y[:, 0], rtol=0, atol=2e-6)
    torch.testing.assert_close(lse[0], want.lse[:, 0], rtol=0, atol=2e-6)


def test_models_share_the_kernels_constants_and_p_rounding():
    """One implementation of the P cast and one 128-key step, shared with the emulated kernels;
    every model is carried by a named arithmetic variant of the emulation."""
    assert round_p is arithmetic.round_p
    assert KV_STEP == KERNEL_KV_STEP
    assert MODEL_ARITHMETIC == {
        "emulated": "fp32-p",
        "gfx950": "p8-unscaled",
        "gfx950-rowsum-p8": "p8-unscaled-rowsum-p8",
        "gfx950-exp": "p8-unscaled-exp",
    }
    for name, variant in MODEL_ARITHMETIC.items():
        assert MODELS[name].arithmetic == ARITHMETIC_VARIANTS[variant]
    assert EMULATED.arithmetic is DEFAULT_ARITHMETIC


def test_round_p_lands_on_the_e4m3fn_grid_with_round_to_nearest_even():
    p = torch.tensor([1.0, 0.9375, 0.96875, 0.90625, 2.0**-9, 2.0**-10, 2.0**-10 * 1.01, 0.0])
    got = round_p(p, FP8)
    # 0.96875 is the midpoint of 0.9375 and 1.0 -> even mantissa (1.0); 0.90625 -> 0.875 (even).
    assert got.tolist() == [1.0, 0.9375, 1.0, 0.875, 2.0**-9, 0.0, 2.0**-9, 0.0]
    assert round_p(p, None) is p


def test_models_against_the_float64_golden():
    lens = (300, 1, 129)
    q, k, v = qkv(lens, 4, seed=2)
    g, gl = causal_reference(q, k, v, lens, SCALE)
    emu = model_attention(q, k, v, lens, SCALE, EMULATED)
    gfx = model_attention(q, k, v, lens, SCALE, GFX950)
    assert (emu.y.double() - g).abs().max() < 1e-5  # fp32 only
    assert (emu.out.double() - g).abs().le(U_BF16 * g.abs() + 1e-5).all()  # one bf16 rounding
    err = (gfx.y.double() - g).abs().max()
    assert 1e-2 < err < 0.2  # the fp8 P: rows with a few keys err by ~2^-5 * |v|
    assert (gfx.lse.double() - gl).abs().max() < 1e-5  # l sums the fp32 P: the LSE stays fp32-exact
    rows = model_attention(q, k, v, lens, SCALE, GFX950_ROWSUM_P8)
    assert (rows.lse.double() - gl).abs().max() > 1e-3  # the variant's l is off by the rounding
    one = model_attention(q[300:301], k[300:301], v[300:301], (1,), SCALE, GFX950)
    assert torch.equal(one.y, v[300:301].float())  # one key: P = 1 exactly, output = v


def test_budget_and_needed_atol():
    lens = (200,)
    q, k, v = qkv(lens, 2, seed=3)
    g, _ = causal_reference(q, k, v, lens, SCALE)
    mo = model_attention(q, k, v, lens, SCALE, EMULATED)
    ob, lb = kernel_budget(mo)
    assert ob.shape == mo.y.shape and lb.shape == mo.lse.shape and float(ob.max()) < 1e-5
    atol = needed_atol(mo.y, g, ob, U_BF16)
    worst = float(((mo.y.double() - g).abs() + ob.double()).max())
    assert atol == pytest.approx((1 + U_BF16) * worst)
    # The bound it implies holds for the model's own rounded output.
    assert (mo.out.double() - g).abs().le(atol + U_BF16 * g.abs()).all()
    assert needed_atol(mo.y, g, ob, 0.5) == 0.0  # a huge rtol needs no atol


def test_every_backend_has_models():
    assert [m.name for m in models_for("emulated")] == ["emulated"]
    assert {m.name for m in models_for("gfx950")} >= {"gfx950", "gfx950-rowsum-p8"}
    with pytest.raises(KeyError):
        models_for("gfx942")
