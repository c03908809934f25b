"""Collects one line per accuracy case and prints them in the terminal summary (max errors, the
bound, the number of reduced rows whose LSE was checked), so a run states what it measured."""

from __future__ import annotations

import pytest

from factories.testing.summary_section import SummarySection

ACCURACY = SummarySection("FP8 prefill accuracy (max error vs float64 reference)")


def pytest_configure(config):
    ACCURACY.register(config)


@pytest.fixture
def accuracy_log(request) -> list:
    """Lines appended here are printed in the terminal summary (not under xdist workers)."""
    return ACCURACY.lines(request.config)
