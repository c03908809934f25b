"""The LSE bound grows with the row's key count, and the calibration fits that growth.

Why: with ``l`` summed over fp32 P the LSE of a correct kernel errs by up to ``(n - 1) u_fp32``
relative for a row of ``n`` keys (Higham's bound of an n-term fp32 sum), and a kernel whose ``l``
sums the rounded P drifts faster (docs/TOLERANCES.md section 6b: 0.21 at 65k keys). A constant
derived from rows of <= 5k keys either fails the 16k-65k rows or is far too loose for short ones,
so the bound is ``lse_atol + lse_per_key * (n - 1)``: ``lse_atol`` from rows within one 128-key
step, ``lse_per_key`` fitted to longer rows, never below Higham's slope.
"""

from __future__ import annotations

import attrs
import numpy as np
import pytest
import torch

from factories.accuracy import REAL_GFX950_TOLERANCE, check_outputs
from factories.accuracy.calibration import MARGIN, fit_lse
from factories.accuracy.error_model import U_FP32
from factories.accuracy.reference import causal_key_counts

KEYS = np.arange(1, 5001)


@pytest.mark.parametrize(
    "errs, want_a, want_b",
    [
        # fp32-like: flat errors; the slope is Higham's floor (1 u per key)
        (np.full(5000, 2e-6), 2e-6, 1.0),
        # a drift of 10 u per key on top of 1e-6: a is the 128-key row's error, and the slope
        # over the rest is 10 (n - 128) / (n - 1), largest at the longest row
        (1e-6 + 10 * U_FP32 * (KEYS - 1), 1e-6 + 10 * U_FP32 * 127, 10.0 * 4872 / 4999),
        # one bad long row sets the slope
        (np.where(KEYS == 4000, 0.02, 1e-6), 1e-6, (0.02 - 1e-6) / (3999 * U_FP32)),
    ],
)
def test_fit_lse(errs, want_a, want_b):
    a, per_key, b = fit_lse([KEYS], [errs])
    assert a == pytest.approx(MARGIN * want_a, rel=1e-9)
    assert b == pytest.approx(want_b, rel=1e-6)
    assert per_key == pytest.approx(MARGIN * b * U_FP32, rel=1e-12)
    bound = a + per_key * (KEYS - 1)
    assert (errs <= bound).all(), "the fitted bound must cover every row it was fitted to"


def test_nan_rows_are_ignored_by_the_fit():
    errs = np.full(5000, 1e-6)
    errs[300] = np.nan
    assert fit_lse([KEYS], [errs])[2] == 1.0


def test_key_counts_follow_the_causal_layout():
    assert causal_key_counts([3, 1, 2]).tolist() == [1, 2, 3, 1, 1, 2]
    assert causal_key_counts([]).size == 0


def _lse_case(err_at_row: float, keys_of_row: int):
    """One merged row of ``keys_of_row`` keys whose LSE errs by ``err_at_row``."""
    lens = [keys_of_row]
    ref = torch.zeros(keys_of_row, 2, 128, dtype=torch.float64)
    ref_lse = torch.full((keys_of_row, 2), 3.0, dtype=torch.float64)
    final = torch.full((keys_of_row, 2), float("nan"))
    rows = np.zeros(keys_of_row, dtype=bool)
    rows[-1] = True
    final[-1] = 3.0 + err_at_row
    tol = attrs.evolve(REAL_GFX950_TOLERANCE, stats=None, lse_atol=1e-5, lse_per_key=1e-7)
    return check_outputs(
        ref.to(torch.bfloat16),
        ref,
        tol,
        final_lse=final,
        ref_lse=ref_lse,
        lse_rows=rows,
        lse_keys=causal_key_counts(lens),
    )


@pytest.mark.parametrize(
    "keys, err, ok",
    [
        (1, 0.9e-5, True),  # within lse_atol
        (1, 2e-5, False),  # a short row gets no growth
        (1001, 1.05e-4, True),  # 1e-5 + 1e-7 * 1000 = 1.1e-4
        (1001, 1.2e-4, False),
    ],
)
def test_the_check_applies_the_row_s_key_count(keys, err, ok):
    report = _lse_case(err, keys)
    assert report.ok is ok, report.summary()
    assert report.lse_row_err is not None
    assert report.lse_row_err[-1] == pytest.approx(err, abs=5e-7)  # final_lse is fp32
    assert np.isnan(report.lse_row_err[:-1]).all()


def test_without_key_counts_the_bound_is_the_constant_part():
    tol = attrs.evolve(REAL_GFX950_TOLERANCE, lse_atol=1e-5, lse_per_key=1e-7)
    ref = torch.zeros(3, 2, dtype=torch.float64)
    assert torch.equal(tol.lse_allowed(ref), torch.full((3, 2), 1e-5, dtype=torch.float64))
    grown = tol.lse_allowed(ref, torch.tensor([1, 11, 101]))
    assert grown[:, 0].tolist() == pytest.approx([1e-5, 1e-5 + 1e-6, 1e-5 + 1e-5])
    assert tol.lse_at(101) == pytest.approx(2e-5)
