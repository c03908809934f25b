"""The one-class tree the ``--since`` cases change: its base ``vllm/mod.py`` and its test.

Shared by the inline cases (``test_since_cases.py`` here) and the command-line tests that run
real git on it (``contracts/analysis/test_since.py``, behind ``--selfcheck``).
"""

from __future__ import annotations

from pathlib import Path

from contracts.analyzer.cases import write_tree

TEST = """
    from vllm.mod import Worker

    def test_step(flag):
        worker = object.__new__(Worker)
        worker.ready = True
        worker.step(flag)
"""

BASE = """
    class Worker:
        def step(self, flag):
            if flag:
                return self.cache
            return self.ready
"""

#: The change that adds a read on the branch the test may not take (``queue``).
NEW_READ = """
    class Worker:
        def step(self, flag):
            if flag:
                return self.cache, self.queue
            return self.ready
"""


def vllm_tree(root: Path, source: str) -> Path:
    """``root`` holding ``vllm/`` whose only module is ``mod.py`` = ``source``."""
    write_tree(root, {"vllm/__init__.py": "", "vllm/mod.py": source})
    return root
