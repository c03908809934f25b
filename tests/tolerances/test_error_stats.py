"""The error statistic: it sees a uniform scale error far below the element-wise noise, it stays
quiet on rounding noise, and it never skips a NaN."""

from __future__ import annotations

import math

import pytest
import torch

from factories.accuracy.error_stats import ErrorStats, StatBounds, error_stats


def ref(seed=0, shape=(512, 8, 128)):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def test_exact_output_has_zero_statistics():
    r = ref()
    s = error_stats(r.clone(), r)
    assert (s.rel_fro, s.slope_dev, s.bias, s.elements) == (0.0, 0.0, 0.0, r.numel())


def test_uniform_scale_error_moves_the_slope_by_exactly_the_scale():
    r = ref()
    for factor in (0.5, 0.98, 1.02):
        s = error_stats(r * factor, r)
        assert s.slope_dev == pytest.approx(factor - 1, abs=1e-12)
        assert s.rel_fro == pytest.approx(abs(factor - 1), rel=1e-9)


def test_bf16_rounding_noise_is_nearly_unbiased():
    r = ref()
    s = error_stats(r.to(torch.bfloat16), r)
    assert 1e-3 < s.rel_fro < 3e-3  # ~2^-8/sqrt(3)
    assert abs(s.slope_dev) < 5e-5 and abs(s.bias) < 5e-5


def test_a_2_percent_scale_error_hidden_under_large_elementwise_noise_is_seen():
    """Noise 10x larger element-wise than the signal (as with an fp8 P), slope still separates."""
    r = ref()
    noise = (
        torch.randn(r.shape, generator=torch.Generator().manual_seed(9), dtype=torch.float64) * 0.02
    )
    clean = error_stats(r + noise, r)
    scaled = error_stats(r * 1.02 + noise, r)
    assert (r * 0.02).abs().max() < (
        noise.abs().max()
    )  # the element-wise view cannot tell them apart
    bounds = StatBounds(
        rel_fro_max=1.0, slope_dev_max=4 * abs(clean.slope_dev) + 1e-4, bias_max=1.0
    )
    assert bounds.violations(clean) == []
    assert any("slope" in v for v in bounds.violations(scaled))


def test_an_offset_shows_in_the_bias():
    r = ref()
    s = error_stats(r + 0.01, r)
    assert s.bias == pytest.approx(0.01 / float(r.pow(2).mean().sqrt()), rel=1e-9)


def test_nan_makes_every_statistic_infinite():
    r = ref()
    out = r.clone()
    out[3, 2, 1] = float("nan")
    s = error_stats(out, r)
    assert math.isinf(s.rel_fro) and math.isinf(s.slope_dev) and math.isinf(s.bias)
    assert len(StatBounds(1.0, 1.0, 1.0).violations(s)) == 3


def test_mask_selects_rows_and_all_zero_reference_is_handled():
    r = ref()
    out = r.clone()
    out[100:] *= 2
    mask = torch.zeros(r.size(0), dtype=torch.bool)
    mask[:100] = True
    assert error_stats(out, r, mask).rel_fro == 0.0
    z = torch.zeros(4, 2, 3, dtype=torch.float64)
    assert error_stats(z, z) == ErrorStats(0.0, 0.0, 0.0, z.numel())
    assert math.isinf(error_stats(z + 1e-3, z).rel_fro)
    with pytest.raises(ValueError, match="shape mismatch"):
        error_stats(r[:3], r)


def test_bounds_report_each_violation_and_the_worst_ratio():
    b = StatBounds(rel_fro_max=0.01, slope_dev_max=0.001, bias_max=0.001)
    s = ErrorStats(rel_fro=0.02, slope_dev=-0.002, bias=0.0, elements=10)
    v = b.violations(s)
    assert len(v) == 2 and "Frobenius" in v[0] and "slope" in v[1]
    assert b.worst_ratio(s) == pytest.approx(2.0)
    assert StatBounds.from_mapping(
        {"rel_fro_max": 1, "slope_dev_max": 2, "bias_max": 3}
    ) == StatBounds(1.0, 2.0, 3.0)
