"""The suite reads its bounds from the tolerance file and checks the error statistic: a uniform
2% scale error that every element-wise gfx950 bound admits still fails the accuracy check."""

from __future__ import annotations

import torch

from factories.accuracy import EMULATED_TOLERANCE, REAL_GFX950_TOLERANCE, TOLERANCES, check_outputs
from factories.accuracy.tolerance import SUITE_TO_FILE, file_tolerance, read


def test_the_suite_tolerances_are_the_files():
    data = read()
    assert SUITE_TO_FILE == {"emulated": "emulated", "aiter": "gfx950"}
    for suite, file_backend in SUITE_TO_FILE.items():
        tol, d = TOLERANCES[suite], file_tolerance(data, file_backend)
        assert tol.backend == suite
        assert (tol.out_atol, tol.out_rtol, tol.lse_atol, tol.lse_rtol) == (
            d.out_atol,
            d.out_rtol,
            d.lse_atol,
            d.lse_rtol,
        )
        assert tol.stats == d.stats
        assert (tol.lse_per_key, tol.variant, tol.variants) == (
            d.lse_per_key,
            d.variant,
            d.variants,
        )
        assert data["digest"]["value"][:12] in tol.version


def attention_like(seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(600, 16, 128, generator=g, dtype=torch.float64) * 0.6


def test_a_2_percent_scale_error_passes_elementwise_but_fails_the_statistic():
    ref = attention_like()
    out = (ref * 1.02).to(torch.bfloat16)
    report = check_outputs(out, ref, REAL_GFX950_TOLERANCE)
    assert report.out.failing == 0, "the element-wise gfx950 bound admits a 2% scale error"
    assert not report.ok and any("slope" in p for p in report.problems), report.summary()
    assert report.stats is not None and abs(report.stats.slope_dev - 0.02) < 1e-3
    assert "slope-1" in report.summary()


def test_a_correct_bf16_output_passes_both_bounds():
    ref = attention_like(1)
    for tol in (EMULATED_TOLERANCE, REAL_GFX950_TOLERANCE):
        report = check_outputs(ref.to(torch.bfloat16), ref, tol)
        assert report.ok, report.summary()
