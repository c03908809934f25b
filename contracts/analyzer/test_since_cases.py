"""``--since REV`` / ``--base-src DIR``: reads a change added are errors, nothing else changes.

Each case of the table is ``worker_tree``'s ``vllm/mod.py`` changed one way, and the findings
that change must produce against its test with the base's reads known.  The cases that must
stay quiet are the harmless refactors a vLLM developer makes every day (a read moved into a
helper, lines moved): a check that fires on those would be switched off.  The command line
with real git, and the real history, are in ``contracts/analysis/test_since.py``.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping

import attrs
import pytest

from contracts.analyzer.cases import cli
from contracts.analyzer.worker_tree import BASE, NEW_READ, TEST, vllm_tree
from factories.analysis.audit import StubAuditor
from factories.analysis.findings import FindingKind, Severity
from factories.analysis.since import KnownReads, base_from_tree


@attrs.frozen
class SinceCase:
    """``changed``: the changed ``vllm/mod.py``; ``reads``: {field: kind} of every attribute
    finding but stale fields, against the change with ``BASE``'s reads known."""

    id: str
    changed: str
    reads: Mapping[str, str]


SINCE = [
    SinceCase(
        "new-read-on-an-undecided-branch",
        NEW_READ,
        {"cache": "possibly-missing-attribute", "queue": "newly-read-attribute"},
    ),
    SinceCase(
        "refactor-read-moved-into-a-helper",
        """
        class Worker:
            def step(self, flag):
                if flag:
                    return self._cached()
                return self.ready

            def _cached(self):
                return self.cache
        """,
        {"cache": "possibly-missing-attribute"},
    ),
    SinceCase(
        "refactor-lines-moved-and-local-renamed",
        """
        # a comment above the class moves every line


        class Worker:
            def step(self, enabled):
                result = self.ready
                if enabled:
                    result = self.cache
                return result
        """,
        {"cache": "possibly-missing-attribute"},
    ),
    SinceCase(
        "new-certain-read-stays-a-plain-error",
        """
        class Worker:
            def step(self, flag):
                self.queue.clear()
                if flag:
                    return self.cache
                return self.ready
        """,
        {"cache": "possibly-missing-attribute", "queue": "missing-attribute"},
    ),
    SinceCase(
        "new-read-of-a-class-default-needs-nothing",
        """
        class Worker:
            queue = None

            def step(self, flag):
                if flag:
                    return self.cache, self.queue
                return self.ready
        """,
        {"cache": "possibly-missing-attribute"},
    ),
    SinceCase(
        "new-read-in-a-method-the-test-does-not-call",
        """
        class Worker:
            def step(self, flag):
                if flag:
                    return self.cache
                return self.ready

            def other(self):
                if self.ready:
                    return self.queue
        """,
        {"cache": "possibly-missing-attribute"},
    ),
    SinceCase(
        "read-the-test-already-avoided-removed",
        """
        class Worker:
            def step(self, flag):
                return self.ready
        """,
        {},
    ),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in SINCE])
def test_reads_the_change_added_are_errors_and_refactors_add_none(tmp_path, case):
    now = vllm_tree(tmp_path / "now", case.changed)
    base = vllm_tree(tmp_path / "base", BASE)
    test = tmp_path / "test_worker.py"
    test.write_text(textwrap.dedent(TEST))
    overlay = base_from_tree(base).overlay
    before = StubAuditor(now, overlay).audit_paths([test])
    known = KnownReads.of("base", before.findings)
    result = StubAuditor(now).audit_paths([test], since=known)
    reads = {
        f.name: f.kind.value
        for f in result.findings
        if f.kind.value.endswith("attribute") and f.kind is not FindingKind.STALE_FIELD
    }
    assert reads == case.reads
    for finding in result.findings:
        if finding.kind is FindingKind.NEWLY_READ_ATTRIBUTE:
            assert finding.severity is Severity.ERROR
            assert "since base" in finding.message and finding.name in finding.message


def test_the_base_overlay_reads_the_other_tree_and_leaves_tests_in_place(tmp_path):
    """Without ``--since`` the same change reports the new read as a note only."""
    now = vllm_tree(tmp_path / "now", NEW_READ)
    test = tmp_path / "test_worker.py"
    test.write_text(textwrap.dedent(TEST))
    plain = StubAuditor(now).audit_paths([test])
    assert {f.name for f in plain.errors} == set()
    before = StubAuditor(now, base_from_tree(vllm_tree(tmp_path / "base", BASE)).overlay)
    assert {f.name for f in before.audit_paths([test]).findings} == {"cache"}


def test_since_outside_a_git_checkout_is_exit_2(tmp_path, capsys):
    repo = vllm_tree(tmp_path / "plain", BASE)
    status, _, err = cli(repo, "--since", "HEAD", str(repo), capsys=capsys)
    assert status == 2
    assert "not inside a git checkout" in err and len(err.strip().splitlines()) == 1
