"""The release-history benchmark on two fake releases built in ``tmp_path``.

Each release is a tiny ``vllm/`` package and one ``tests/`` file, so what counts as a repair,
what the audit names, and what is matched are decided by the fixtures below, not by vLLM.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from factories.evaluation.history import format_misses, run_history

#: Tests of this project's analyzer on pinned release sources, never on the vLLM under test:
#: they run with --selfcheck (CI), not in a developer's plain ``pytest contracts/``.
pytestmark = pytest.mark.selfcheck

REPO = Path(__file__).resolve().parents[2]
TOOL = REPO / "tools" / "bench_history.py"

# 1.0 -> 1.1: Worker.step starts reading self.b, so 1.1's test adds ``w.b`` (a repair the
# audit names); Worker.hidden is called through a bound method kept in a local (the audit
# cannot see the call) and its test adds ``h.c`` (a repair the audit misses); test_old is
# renamed test_new and adds ``r.z`` (not matched: a new stub, no repair); the helper
# ``_make``'s stub gets ``m.b`` in the test that used it at 1.0 (a repair, named) and ``m.q``
# only in a new test (an extension).
SOURCE = {
    "1.0": """
        class Worker:
            def step(self):
                return self.a

            def hidden(self):
                return self.a
    """,
    "1.1": """
        class Worker:
            def step(self):
                return self.a + self.b

            def hidden(self):
                return self.a + self.c
    """,
}
TESTS = {
    "1.0": """
        from vllm.worker import Worker

        def test_step():
            w = object.__new__(Worker)
            w.a = 1
            assert w.step() == 1

        def test_hidden():
            h = object.__new__(Worker)
            h.a = 1
            bound = h.hidden
            assert bound() == 1

        def test_old():
            r = object.__new__(Worker)
            r.a = 1
            assert r.step() == 1

        def _make():
            m = object.__new__(Worker)
            m.a = 1
            return m

        def test_helper():
            m = _make()
            assert m.step() == 1
    """,
    "1.1": """
        from vllm.worker import Worker

        def test_step():
            w = object.__new__(Worker)
            w.a = 1
            w.b = 2
            assert w.step() == 3

        def test_hidden():
            h = object.__new__(Worker)
            h.a = 1
            h.c = 2
            bound = h.hidden
            assert bound() == 3

        def test_new():
            r = object.__new__(Worker)
            r.a = 1
            r.b = 2
            r.z = 0
            assert r.step() == 3

        def _make():
            m = object.__new__(Worker)
            m.a = 1
            return m

        def test_helper():
            m = _make()
            m.b = 2
            assert m.step() == 3

        def test_helper_new():
            m = _make()
            m.b = 2
            m.q = 0
            assert m.step() == 3
    """,
}


def make_releases(root: Path) -> Path:
    for version in SOURCE:
        (root / version / "vllm").mkdir(parents=True)
        (root / version / "vllm" / "__init__.py").write_text("")
        (root / version / "vllm" / "worker.py").write_text(textwrap.dedent(SOURCE[version]))
        (root / version / "tests").mkdir()
        (root / version / "tests" / "test_worker.py").write_text(textwrap.dedent(TESTS[version]))
    return root


def test_repairs_recall_and_matching(tmp_path):
    report = run_history(make_releases(tmp_path), ["1.0", "1.1"], [("1.0", "1.1")])
    (pair,) = report.pairs
    repairs = {(r.old.scope, r.attribute): hit for r, hit in zip(pair.matching.repairs, pair.named)}
    # A repair is detected and named; a missed repair counts against recall.
    assert repairs == {
        ("test_step", "b"): True,
        ("test_hidden", "c"): False,
        ("_make", "b"): True,
    }
    assert pair.matching.extensions == 1  # m.q, set only in test_helper_new
    assert "test_hidden" in format_misses(report) and " c " in format_misses(report)
    # The renamed test function is not matched: its stub is new and its fields are no repair.
    assert pair.matching.new == 1
    assert pair.matching.matched == 3
    assert round(pair.recall, 1) == 66.7
    # The missed one is not seen at any level either (the bound method hides the call).
    assert dict(zip(repairs, pair.named_any))[("test_hidden", "c")] is False
    # Both repaired stubs are clean against their own release.
    assert pair.still_flagged == ()
    assert [r.errors for r in report.releases] == [0, 0]


def test_missing_release_is_one_line_and_exit_2(tmp_path):
    make_releases(tmp_path)
    proc = subprocess.run(
        [sys.executable, str(TOOL), "--src-root", str(tmp_path), "--releases", "1.0,1.2"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "1.2" in lines[0] and "Traceback" not in proc.stderr


# 1.0 -> 1.1 with reads behind a branch the tests' values do not decide (``flag``): 1.1 adds
# ``self.d`` there and the test adds ``w.d`` (a repair only a base can name); it also adds
# ``self.e`` on another such branch, which the 1.1 test still does not set (a newly-read error
# no repair confirms: counted as "still unset").
BRANCHED_SOURCE = {
    "1.0": """
        class Worker:
            def step(self, flag):
                if flag:
                    return self.a * 2
                return self.a
    """,
    "1.1": """
        class Worker:
            def step(self, flag):
                if flag:
                    return self.a * self.d
                if flag is None:
                    return self.e
                return self.a
    """,
}
BRANCHED_TESTS = {
    "1.0": """
        from vllm.worker import Worker

        def test_step(flag):
            w = object.__new__(Worker)
            w.a = 1
            w.step(flag)
    """,
    "1.1": """
        from vllm.worker import Worker

        def test_step(flag):
            w = object.__new__(Worker)
            w.a = 1
            w.d = 2
            w.step(flag)
    """,
}


def test_recall_with_the_previous_release_as_base(tmp_path):
    for version in BRANCHED_SOURCE:
        (tmp_path / version / "vllm").mkdir(parents=True)
        (tmp_path / version / "vllm" / "__init__.py").write_text("")
        (tmp_path / version / "vllm" / "worker.py").write_text(
            textwrap.dedent(BRANCHED_SOURCE[version])
        )
        (tmp_path / version / "tests").mkdir()
        (tmp_path / version / "tests" / "test_worker.py").write_text(
            textwrap.dedent(BRANCHED_TESTS[version])
        )
    report = run_history(tmp_path, ["1.0", "1.1"], [("1.0", "1.1")])
    (pair,) = report.pairs
    assert [r.attribute for r in pair.matching.repairs] == ["d"]
    assert pair.named == (False,)  # undecided: a note only
    assert pair.named_since == (True,)  # new since 1.0: an error
    assert pair.named_any == (True,)
    assert pair.new_reads == 2
    assert pair.new_read_verdicts == (1, 1)  # d set at 1.1, e still unset
    assert report.totals()["recall_since_pct"] == 100.0
