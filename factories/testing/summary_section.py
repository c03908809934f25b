"""A section of pytest's terminal summary that tests fill with lines while they run.

Suites that measure something (the reservation byte ceiling, the accuracy per case) print what
they measured at the end of the run; this is the one implementation of that bookkeeping.
"""

from __future__ import annotations

import pytest


class SummarySection:
    """Lines appended during a run, printed under ``title`` in the terminal summary.

    A conftest registers the section as a plugin from ``pytest_configure`` (``register``), and
    a fixture hands tests ``lines(request.config)``; the section's own
    ``pytest_terminal_summary`` hook prints them.  The lines live in ``config.stash``, so
    nothing outlives the pytest session.
    """

    def __init__(self, title: str) -> None:
        self.title = title
        self._key = pytest.StashKey[list]()

    def register(self, config: pytest.Config) -> None:
        config.stash[self._key] = []
        config.pluginmanager.register(self, f"summary-section-{self.title}")

    def lines(self, config: pytest.Config) -> list:
        return config.stash[self._key]

    def pytest_terminal_summary(self, terminalreporter, exitstatus, config: pytest.Config) -> None:
        lines = config.stash.get(self._key, [])
        if lines:
            terminalreporter.section(self.title)
            for line in lines:
                terminalreporter.write_line(line)
