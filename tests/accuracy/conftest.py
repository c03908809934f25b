"""Collects one line per accuracy case and prints them in the terminal summary (max errors, the
bound, the number of reduced rows whose LSE was checked), so a run states what it measured; on
gfx950, also the real kernel's fingerprint against the variant the bounds were derived for."""

from __future__ import annotations

import pytest

from factories.testing.summary_section import SummarySection

ACCURACY = SummarySection("FP8 prefill accuracy (max error vs float64 reference)")
#: The real kernel's fingerprint and whether the gfx950 bounds fit it (gfx950 runs only).
FINGERPRINT = SummarySection("gfx950 kernel fingerprint (tools/fingerprint_kernel.py)")


def pytest_configure(config):
    ACCURACY.register(config)
    FINGERPRINT.register(config)


@pytest.fixture
def accuracy_log(request) -> list:
    """Lines appended here are printed in the terminal summary (not under xdist workers)."""
    return ACCURACY.lines(request.config)


@pytest.fixture
def fingerprint_log(request) -> list:
    """Lines appended here are printed under the fingerprint's own summary section."""
    return FINGERPRINT.lines(request.config)
