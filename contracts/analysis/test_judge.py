"""``tools/judge_stubs_by_running.py``: the stub tracker records what really ran.

Why: the judge's numbers (false alarms, missed drifts) are only as good as the plugin's record
of the methods called on each ``object.__new__`` stub and the AttributeErrors they raised.  A
tiny inline package stands in for vLLM (no torch, no vLLM needed), run in a subprocess pytest
exactly as the runner runs a vLLM test file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from factories.evaluation import judge

#: Tests of this project's tools, never of the vLLM under test: they run with --selfcheck (CI),
#: not in a developer's plain ``pytest contracts/``.
pytestmark = pytest.mark.selfcheck

REPO = Path(__file__).resolve().parents[2]

FAKE = """
class Engine:
    def step(self):
        return self._helper() + self.limit

    def _helper(self):
        return 1

    def broken(self):
        return self.missing_field

    @property
    def doubled(self):
        return self.limit * 2

    def _generate_drafts(self):
        return []
"""

TEST = """
import pytest
from fakepkg import Engine


def make():
    stub = object.__new__(Engine)
    stub.limit = 4
    return stub


def test_step():
    assert make().step() == 5
    assert make().doubled == 8


def test_broken():
    make().broken()


def test_caught():
    with pytest.raises(AttributeError):
        make().broken()


def test_renamed(monkeypatch):
    monkeypatch.setattr(make(), "_generate_draft", lambda: [])
"""


def _release(tmp_path: Path) -> Path:
    """A release-shaped folder: <root>/tests/test_fake.py and an importable fake package."""
    (tmp_path / "tests").mkdir(parents=True)
    (tmp_path / "fakepkg.py").write_text(FAKE, encoding="utf-8")
    (tmp_path / "tests" / "test_fake.py").write_text(textwrap.dedent(TEST), encoding="utf-8")
    return tmp_path


def _stub(record: dict) -> dict:
    (stub,) = record["stubs"]
    assert stub["class"] == "fakepkg.Engine"
    return stub


def test_plugin_records_calls_and_attribute_errors(tmp_path):
    root = _release(tmp_path)
    out = tmp_path / "out.json"
    env = dict(
        os.environ,
        JUDGE_STUBS_OUT=str(out),
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONPATH=os.pathsep.join([str(REPO), str(root)]),
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "factories.testing.stub_tracker",
            "-p",
            "no:cacheprovider",
            "tests/test_fake.py",
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr  # test_broken, test_renamed fail
    stub = _stub(json.loads(out.read_text(encoding="utf-8")))
    assert stub["site"].endswith("test_fake.py:7")
    step = stub["methods"]["Engine.step"]
    assert step["tests"] == ["tests/test_fake.py::test_step"]
    assert step["outcomes"] == {"passed": 1}
    assert "Engine._helper" in stub["methods"] and "Engine.doubled" in stub["methods"]
    errors = {
        (e["name"], e["method"], e["test"].split("::")[1], e["outcome"])
        for e in stub["attribute_errors"]
    }
    assert errors == {
        ("missing_field", "Engine.broken", "test_broken", "failed"),
        ("missing_field", "Engine.broken", "test_caught", "passed"),
        ("_generate_draft", "monkeypatch.setattr", "test_renamed", "failed"),
    }


def test_runner_and_comparison(tmp_path, monkeypatch):
    root = _release(tmp_path / "release")
    monkeypatch.setenv("PYTHONPATH", str(root))  # the runner prepends this repository
    files = judge.stub_files(root / "tests")
    assert files == ["tests/test_fake.py"]
    (tmp_path / "work").mkdir()
    result = judge.run_tests(
        root / "tests", sys.executable, files, 120, tmp_path / "work", preimport=False
    )
    record = result["files"]["tests/test_fake.py"]
    assert record["status"] == "ran" and record["rc"] == 1
    assert _stub(record)["site"] == "tests/test_fake.py:7"
    site = "tests/test_fake.py:7"
    audit = [
        # false alarm: test_step passed after calling step() on this stub
        {
            "severity": "error",
            "kind": "missing-attribute",
            "class": "Engine",
            "method": "step",
            "name": "ready",
            "stub_location": site,
        },
        {
            "severity": "error",
            "kind": "missing-attribute",
            "class": "Engine",
            "method": "broken",
            "name": "missing_field",
            "stub_location": site,
        },
        {
            "severity": "note",
            "kind": "possibly-missing-attribute",
            "class": "Engine",
            "method": "x",
            "name": "_generate_draft",
            "stub_location": site,
        },
    ]
    report = judge.compare(result, audit)
    assert [f["name"] for f in report["false_alarms"]] == ["ready"]
    assert [d["attribute"] for d in report["named_by_errors"]] == ["missing_field"]
    assert [d["attribute"] for d in report["named_only_by_notes"]] == ["_generate_draft"]
    assert report["missed"] == [] and report["observed_drifts"] == 2


@pytest.mark.parametrize(
    "tests, passed, false_alarm",
    [
        ((), "test_copy[False]", True),  # a finding naming no test: any passing call counts
        (("test_copy[True]",), "test_copy[False]", False),  # another case passed
        (("test_copy[True]",), "test_copy[True]", True),  # the named case passed
        (("test_copy",), "test_copy[False]", True),  # a test named without its case: all
        (("TestW::test_copy",), "test_copy", False),  # a same-named test of another class
    ],
)
def test_a_finding_naming_its_tests_is_judged_by_them(tests, passed, false_alarm):
    """An error on a call path is contradicted only by a passing test on that path."""
    site = "tests/test_fake.py:7"
    result = {
        "files": {
            "tests/test_fake.py": {
                "tests": {f"tests/test_fake.py::{passed}": {"outcome": "passed"}},
                "stubs": [
                    {
                        "site": site,
                        "class": "fakepkg.Worker",
                        "methods": {"Worker.copy": {"tests": [f"tests/test_fake.py::{passed}"]}},
                        "attribute_errors": [],
                    }
                ],
            }
        }
    }
    finding = {
        "kind": "missing-attribute",
        "severity": "error",
        "class": "Worker",
        "method": "copy",
        "name": "is_writer",
        "stub_location": site,
        "tests": list(tests),
    }
    report = judge.compare(result, [finding])
    assert bool(report["false_alarms"]) is false_alarm
