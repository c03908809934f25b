"""The per-file audits in worker processes (``factories.analysis.workers``): the report is the
one a single process prints, whatever ``--jobs`` says, and nothing a worker fails on is lost.

A test file's audit runs in analysis objects of its own, so its findings cannot depend on which
files ran before it in the same process: that is what lets a run split its files between
processes.  The same on real release files, including a pair whose shared walks once leaked a
finding from one file into the other, is in ``contracts/analysis/test_workers_release.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from contracts.analyzer.cases import cli, write_tree
from factories.analysis import workers
from factories.analysis.audit import StubAuditor
from factories.analysis.file_audit import FileAudit
from factories.errors import SourceError

pytestmark = pytest.mark.skipif(
    "fork" not in __import__("multiprocessing").get_all_start_methods(),
    reason="worker processes are forked; elsewhere every run is a single process",
)

_STUB_TEST = (
    "from vllm.impl import Impl\n\n\ndef test_{n}():\n    s = object.__new__(Impl)\n"
    "    s.x = 1\n    s.run()\n"
)
_STANDIN_TEST = (
    "from types import SimpleNamespace\n\nfrom vllm.impl import helper\n\n\n"
    "def test_{n}():\n    helper(SimpleNamespace(a=1))\n"
)
TREE = {
    "vllm/__init__.py": "",
    "vllm/impl.py": (
        "class Impl:\n    def run(self):\n        return self.x + self.y\n\n\n"
        "def helper(cfg):\n    return cfg.a + cfg.b\n"
    ),
    **{f"tests/test_stub_{n}.py": _STUB_TEST.format(n=n) for n in range(4)},
    **{f"tests/test_standin_{n}.py": _STANDIN_TEST.format(n=n) for n in range(4)},
    "tests/test_broken.py": "def test(:\n    object.__new__(Impl)\n",
}


# (jobs asked, files to compute, usable CPUs, workers used)
WORKER_COUNTS = [
    (1, 100, 8, 0),  # --jobs 1: this process only
    (2, workers.MIN_FILES - 1, 8, 0),  # too few files to pay for a fork
    (2, 10, 8, 2),
    (8, 5, 8, 5),  # never more workers than files
    (0, 100, 4, 4),  # --jobs 0: one per usable CPU
    (0, 100, 1, 0),  # ... and none on one CPU
]


@pytest.mark.parametrize(("jobs", "files", "cpus", "expected"), WORKER_COUNTS)
def test_worker_count(monkeypatch, jobs, files, cpus, expected):
    monkeypatch.setattr(workers, "usable_cpus", lambda: cpus)
    assert workers.worker_count(jobs, files) == expected


def _compute(path: Path) -> FileAudit:
    """A stand-in for a file's audit, by the file's name: a value, a ``SourceError``, an
    unexpected exception, or a worker that dies."""
    if path.name == "unparsable.py":
        raise SourceError(path, 3, "invalid syntax")
    if path.name == "buggy.py":
        raise RuntimeError("a defect in the analyzer")
    if path.name == "dies.py":
        os._exit(3)
    return FileAudit(stubs=len(path.name), exports=(path.stem,))


def test_workers_answer_values_and_source_errors_and_leave_out_what_failed():
    names = ["a.py", "bb.py", "unparsable.py", "buggy.py", "ccc.py", "dies.py", "dddd.py"]
    paths = [Path("tests") / name for name in names]
    told: list[int] = []
    done = workers.audits_in_workers(paths, _compute, 2, told.append)

    for name in ["a.py", "bb.py", "ccc.py", "dddd.py"]:
        assert done[Path("tests") / name] == _compute(Path("tests") / name)
    error = done[Path("tests/unparsable.py")]
    assert isinstance(error, SourceError)
    assert (error.path, error.line, error.reason) == (
        Path("tests/unparsable.py"),
        3,
        "invalid syntax",
    )
    assert Path("tests/buggy.py") not in done  # the caller computes it and meets the defect
    assert Path("tests/dies.py") not in done  # its worker died before answering
    answered = len(done) + 1  # the buggy file's worker answered "failed"; the dead one, nothing
    assert told == list(range(1, answered + 1))


@pytest.mark.parametrize("fmt", ["text", "json"])
@pytest.mark.parametrize("cache", [False, True], ids=["no-cache", "cache"])
def test_the_report_is_the_same_whatever_the_number_of_workers(
    tmp_path, capsys, monkeypatch, fmt, cache
):
    write_tree(tmp_path / "src", TREE)
    args = ["--standins", "--show-possible", "--format", fmt, str(tmp_path / "src" / "tests")]
    caching = ["--cache-dir", str(tmp_path / "cache-1")] if cache else ["--no-cache"]
    alone = cli(tmp_path / "src", *caching, "--jobs", "1", *args, capsys=capsys)

    calls: list[int] = []
    spread = workers.audits_in_workers

    def counted(paths, compute, count, progress=None):
        calls.append(count)
        return spread(paths, compute, count, progress)

    monkeypatch.setattr(workers, "audits_in_workers", counted)
    caching = ["--cache-dir", str(tmp_path / "cache-2")] if cache else ["--no-cache"]
    shared = cli(tmp_path / "src", *caching, "--jobs", "2", *args, capsys=capsys)
    assert calls == [2]
    assert shared == alone
    status, out, err = alone  # the findings, and the file that cannot be parsed (exit 2)
    assert status == 2 and "has no 'b'" in out and "test_broken.py" in out + err


def test_a_file_a_worker_failed_on_fails_as_it_does_in_one_process(tmp_path, monkeypatch):
    write_tree(tmp_path, TREE)
    original = StubAuditor._compute_file

    def buggy(auditor, path, *args, **kwargs):
        if Path(path).name == "test_stub_2.py":
            raise RuntimeError("a defect in the analyzer")
        return original(auditor, path, *args, **kwargs)

    monkeypatch.setattr(StubAuditor, "_compute_file", buggy)
    for jobs in (1, 2):
        auditor = StubAuditor(tmp_path, jobs=jobs)
        with pytest.raises(RuntimeError, match="a defect in the analyzer"):
            auditor.audit_paths([tmp_path / "tests"], standins=True)


@pytest.mark.parametrize("value", ["-1", "two", "1.5"])
def test_a_bad_job_count_is_one_line_and_exit_2(tmp_path, capsys, value):
    write_tree(tmp_path, TREE)
    status, out, err = cli(tmp_path, "--jobs", value, str(tmp_path / "tests"), capsys=capsys)
    assert status == 2 and out == ""
    assert err.splitlines() == [
        "audit-stubs: error: argument --jobs: expected 0 (one per CPU) or a positive count, "
        f"got {value!r} (see --help)"
    ]
