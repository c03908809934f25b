"""A section of pytest's terminal summary that tests fill with lines while they run.

Suites that measure something (the reservation byte ceiling, the accuracy per case) print what
they measured at the end of the run; this is the one implementation of that bookkeeping.
"""

from __future__ import annotations

import pytest


class SummarySection:
    """Lines appended during a run, printed under ``title`` in the terminal summary.

    A conftest calls ``configure`` from ``pytest_configure`` and ``write`` from
    ``pytest_terminal_summary``; a fixture hands tests ``lines(request.config)``.  The lines live
    in ``config.stash``, so nothing outlives the pytest session.
    """

    def __init__(self, title: str) -> None:
        self.title = title
        self._key = pytest.StashKey[list]()

    def configure(self, config: pytest.Config) -> None:
        config.stash[self._key] = []

    def lines(self, config: pytest.Config) -> list:
        return config.stash[self._key]

    def write(self, terminalreporter, config: pytest.Config) -> None:
        lines = config.stash.get(self._key, [])
        if lines:
            terminalreporter.section(self.title)
            for line in lines:
                terminalreporter.write_line(line)
