"""Collects one line per accuracy case and prints them in the terminal summary (max errors, the
bound, the number of reduced rows whose LSE was checked), so a run states what it measured."""

from __future__ import annotations

import pytest

_LINES = pytest.StashKey[list]()


def pytest_configure(config):
    config.stash[_LINES] = []


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    lines = config.stash.get(_LINES, [])
    if lines:
        terminalreporter.section("FP8 prefill accuracy (max error vs float64 reference)")
        for line in lines:
            terminalreporter.write_line(line)


@pytest.fixture
def accuracy_log(request) -> list:
    """Lines appended here are printed in the terminal summary (not under xdist workers)."""
    return request.config.stash[_LINES]
