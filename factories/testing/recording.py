"""Observe which instance attributes a method really reads, to check the analyzer's prediction.

The analyzer predicts reads from the source; this records them from a run.  A read the run
makes that the analyzer did not predict is an analyzer bug (observed must be a subset of
predicted; the converse does not hold, since a run takes one branch).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def recording_reads(obj: object) -> Iterator[list[str]]:
    """Record, in order, every read of a name held in ``obj.__dict__`` during the block.

    The object's class is swapped for a subclass whose ``__getattribute__`` records, and
    swapped back on exit; methods still see their own class through ``super()``.
    """
    original = type(obj)
    recorded: list[str] = []

    def __getattribute__(self, name):
        if name in object.__getattribute__(self, "__dict__"):
            recorded.append(name)
        return original.__getattribute__(self, name)

    recorder = type(
        f"Recording{original.__name__}", (original,), {"__getattribute__": __getattribute__}
    )
    obj.__class__ = recorder
    try:
        yield recorded
    finally:
        obj.__class__ = original
