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


def _tracked_pytest(root: Path, test: str, out: Path, **env: str):
    """pytest on ``test`` of the fixture release ``root`` under the stub tracker, which writes
    its record to ``out``; ``env`` adds the tracker's other settings."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "factories.testing.stub_tracker"]
        + ["-p", "no:cacheprovider", test],
        cwd=root,
        env=dict(
            os.environ,
            JUDGE_STUBS_OUT=str(out),
            PYTHONDONTWRITEBYTECODE="1",
            PYTHONPATH=os.pathsep.join([str(REPO), str(root)]),
            **env,
        ),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_plugin_records_calls_and_attribute_errors(tmp_path):
    root = _release(tmp_path)
    out = tmp_path / "out.json"
    proc = _tracked_pytest(root, "tests/test_fake.py", out)
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


# ------------------------------------------------------------------ namespace stand-ins

NS_FAKE = """
def build(common, metadata):
    tokens = common.num_actual_tokens
    return tokens + metadata.prefill.max_query_len + getattr(common, "spare", 0)


def size(config):
    return config.hidden_size


class Builder:
    def run(self, x):
        return self.mla_dims.v_head_dim + x
"""

NS_TEST = """
import argparse
import copy
import pickle
import types
import types as t
from types import SimpleNamespace as NS

import pytest
from fakepkg import Builder, build, size


def test_build_passes():
    common = NS(num_actual_tokens=3)
    metadata = types.SimpleNamespace(prefill=t.SimpleNamespace(max_query_len=2))
    assert build(common, metadata) == 5
    assert common.num_actual_tokens == 3  # read by the test, not by the package
    assert isinstance(common, types.SimpleNamespace)
    assert common == types.SimpleNamespace(num_actual_tokens=3)
    assert vars(common) == {"num_actual_tokens": 3}
    assert repr(common) == "namespace(num_actual_tokens=3)"
    assert type(common).__name__ == "SimpleNamespace"
    assert copy.deepcopy(metadata) == metadata
    assert pickle.loads(pickle.dumps(common)) == common
    with pytest.raises(AttributeError, match="'types.SimpleNamespace' object has no attribute"):
        common.absent


def test_build_fails():
    build(NS(), NS(prefill=NS(max_query_len=1)))


def test_self_fails():
    Builder.run(NS(mla_dims=NS()), 1)


def test_expected():
    with pytest.raises(AttributeError):
        size(argparse.Namespace(vocab_size=1))


def SimpleNamespace(**kwargs):  # a local function of that name: not a stand-in
    return kwargs


def test_local_name():
    assert SimpleNamespace(a=1) == {"a": 1}
"""


def _ns_release(tmp_path: Path) -> Path:
    (tmp_path / "tests").mkdir(parents=True)
    (tmp_path / "fakepkg.py").write_text(NS_FAKE, encoding="utf-8")
    (tmp_path / "tests" / "test_ns.py").write_text(NS_TEST, encoding="utf-8")
    return tmp_path


def _line(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


def test_plugin_records_what_the_package_reads_from_namespaces(tmp_path):
    """Reads and AttributeErrors are recorded per built-at site, only where the package's code
    (here ``fakepkg``, ``vllm`` in a real run) reads; the test's own reads are not."""
    root = _ns_release(tmp_path)
    out = tmp_path / "out.json"
    proc = _tracked_pytest(root, "tests/test_ns.py", out, JUDGE_STUBS_PACKAGE="fakepkg")
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the two *_fails tests
    assert "2 failed, 3 passed" in proc.stdout, proc.stdout
    record = json.loads(out.read_text(encoding="utf-8"))
    sites = {ns["site"].rpartition("/")[2]: ns for ns in record["namespaces"]}
    fake = (root / "fakepkg.py").read_text(encoding="utf-8")
    reads_at = _line(fake, "common.num_actual_tokens")
    common = sites[f"test_ns.py:{_line(NS_TEST, 'common = NS(')}"]
    assert common["kind"] == "types.SimpleNamespace"
    assert common["reads"] == {
        "num_actual_tokens": {"tests/test_ns.py::test_build_passes": f"fakepkg.py:{reads_at}"}
    }
    (spare,) = common["attribute_errors"]  # getattr(common, "spare", 0): handled
    assert (spare["name"], spare["how"], spare["ended_test"]) == ("spare", "call", False)
    metadata_line = _line(NS_TEST, "metadata = types.SimpleNamespace(")
    assert set(sites[f"test_ns.py:{metadata_line}"]["reads"]) == {"prefill", "max_query_len"}
    failed = sites[f"test_ns.py:{_line(NS_TEST, 'build(NS(), NS(')}"]
    errors = {
        (e["name"], e["how"], e["ended_test"], e["outcome"]) for e in failed["attribute_errors"]
    }
    assert errors == {("num_actual_tokens", "attribute", True, "failed")}
    mla = sites[f"test_ns.py:{_line(NS_TEST, 'Builder.run(NS(')}"]
    (v_head_dim,) = mla["attribute_errors"]
    assert v_head_dim["location"] == f"fakepkg.py:{_line(fake, 'self.mla_dims.v_head_dim')}"
    assert (v_head_dim["name"], v_head_dim["ended_test"]) == ("v_head_dim", True)
    expected = sites[f"test_ns.py:{_line(NS_TEST, 'argparse.Namespace(')}"]
    assert expected["kind"] == "argparse.Namespace"
    (hidden,) = expected["attribute_errors"]  # raised in the package, expected by the test
    assert (hidden["name"], hidden["ended_test"], hidden["outcome"]) == (
        "hidden_size",
        False,
        "passed",
    )
    assert len(sites) == 6  # the local SimpleNamespace() is not one


def test_runner_and_standin_comparison(tmp_path, monkeypatch):
    root = _ns_release(tmp_path / "release")
    monkeypatch.setenv("PYTHONPATH", str(root))
    monkeypatch.setenv("JUDGE_STUBS_PACKAGE", "fakepkg")
    files = judge.standin_files(root / "tests")
    assert files == ["tests/test_ns.py"]
    (tmp_path / "work").mkdir()
    result = judge.run_tests(
        root / "tests", sys.executable, files, 120, tmp_path / "work", preimport=False
    )
    common = f"tests/test_ns.py:{_line(NS_TEST, 'common = NS(')}"
    fails = f"tests/test_ns.py:{_line(NS_TEST, 'build(NS(), NS(')}"
    mla = f"tests/test_ns.py:{_line(NS_TEST, 'Builder.run(NS(')}"

    def finding(severity, site, name, tests=()):
        kind = "missing-field" if severity == "error" else "possibly-missing-attribute"
        return {
            "kind": kind,
            "severity": severity,
            "class": "fakepkg",
            "method": "build",
            "name": name,
            "message": f"... but the types.SimpleNamespace the test builds at {site} has no x",
            "stub_location": site,
            "tests": list(tests),
        }

    audit = [
        finding("error", fails, "common.num_actual_tokens"),  # names the drift
        finding("note", mla, "self.mla_dims.v_head_dim"),  # names the other, as a note
        finding("error", common, "common.num_actual_tokens"),  # a passing test read it
        finding("error", common, "common.num_actual_tokens", ["test_other"]),  # not that test
        finding("error", common, "common.never_read"),  # nothing to contradict it
    ]
    report = judge.compare_standins(result, audit)
    assert [e["site"] for e in report["drifts_named_by_errors"]] == [fails]
    assert [e["attribute"] for e in report["drifts_named_only_by_notes"]] == ["v_head_dim"]
    assert report["drifts"] == 2 and report["drifts_missed"] == []
    # handled: getattr(common, "spare", 0), and hidden_size under pytest.raises
    assert {e["attribute"] for e in report["handled_missed"]} == {"spare", "hidden_size"}
    assert [(f["stub_location"], f["tests"]) for f in report["false_alarms"]] == [(common, [])]
    assert report["error_findings"] == 4 and report["errors_not_contradicted"] == 3


def _ns_result(site: str, *, reads=None, errors=(), outcome="passed") -> dict:
    test = "tests/test_x.py::test_a"
    return {
        "files": {
            "tests/test_x.py": {
                "tests": {test: {"outcome": outcome}},
                "stubs": [],
                "namespaces": [
                    {
                        "kind": "types.SimpleNamespace",
                        "site": site,
                        "created_in": {test: 1},
                        "reads": {name: {test: "vllm/x.py:3"} for name in reads or ()},
                        "attribute_errors": [
                            {
                                "name": name,
                                "location": "vllm/x.py:9",
                                "how": "attribute",
                                "test": test,
                                "count": 1,
                                "ended_test": True,
                                "outcome": outcome,
                            }
                            for name in errors
                        ],
                    }
                ],
            }
        }
    }


@pytest.mark.parametrize(
    "finding_site, name, verdict",
    [
        ("tests/test_x.py:5", "meta.prefill.max_query_len", "drifts_named_by_errors"),
        ("tests/test_x.py:5", "meta.max_query_len", "drifts_named_by_errors"),  # last link
        ("tests/test_x.py:5", "meta.max_query_len.size", "drifts_missed"),  # not the last
        ("tests/test_x.py:7", "meta.prefill.max_query_len", "drifts_missed"),  # other site
    ],
)
def test_a_standin_drift_is_named_by_site_and_last_link(finding_site, name, verdict):
    result = _ns_result("tests/test_x.py:5", errors=["max_query_len"], outcome="failed")
    audit = [
        {
            "kind": "missing-field",
            "severity": "error",
            "name": name,
            "message": "",
            "stub_location": finding_site,
        }
    ]
    report = judge.compare_standins(result, audit)
    (entry,) = report[verdict]
    assert entry["attribute"] == "max_query_len"
    assert entry["near"] == (["tests/test_x.py:7"] if finding_site.endswith(":7") else [])


def test_a_failing_read_does_not_contradict_a_standin_error():
    """The flagged read ran, but the test failed: that is no evidence the stand-in had it."""
    audit = [
        {
            "kind": "missing-field",
            "severity": "error",
            "name": "common.seq_lens",
            "message": "",
            "stub_location": "tests/test_x.py:5",
        }
    ]
    failed = _ns_result("tests/test_x.py:5", reads=["seq_lens"], outcome="failed")
    passed = _ns_result("tests/test_x.py:5", reads=["seq_lens"], outcome="passed")
    assert judge.compare_standins(failed, audit)["false_alarms"] == []
    assert len(judge.compare_standins(passed, audit)["false_alarms"]) == 1


def test_standin_findings_are_recognised():
    note = "x() reads a.b on a path it may not take but the argparse.Namespace the test builds at"
    assert judge.is_standin_finding({"kind": "missing-field", "message": ""})
    assert judge.is_standin_finding({"kind": "possibly-missing-attribute", "message": note})
    assert not judge.is_standin_finding(
        {"kind": "missing-attribute", "message": "Cls.m() reads x but the stub never sets it"}
    )


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--shard", "2/2"], "--shard 2/2: I must be in 0..N-1"),
        (["--shard", "a/b"], "--shard a/b: expected I/N"),
    ],
)
def test_cli_errors_are_one_line_with_exit_2(tmp_path, capsys, argv, message):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("from types import SimpleNamespace\n")
    argv = ["--tests", str(tmp_path / "tests"), "--python", sys.executable, "--standins"] + argv
    assert judge.main([*argv, "--json", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("judge_stubs_by_running: ") and message in err and "\n" not in err


def test_merged_shards_keep_every_file():
    a = _ns_result("tests/test_x.py:5")
    b = {"files": {"tests/test_y.py": {"status": "ran", "tests": {}}}, "wall_s": 9.0}
    merged = judge.merge_results([{**a, "wall_s": 4.0}, b])
    assert set(merged["files"]) == {"tests/test_x.py", "tests/test_y.py"}
    assert merged["wall_s"] == 9.0 and merged["shards"] == 2


def test_files_with_standin_errors_run_first(tmp_path):
    for name in ("test_a.py", "test_b.py", "test_c.py"):
        (tmp_path / "tests" / name).parent.mkdir(exist_ok=True)
        (tmp_path / "tests" / name).write_text("from types import SimpleNamespace\n")
    audit = [
        {"kind": "missing-field", "severity": "error", "stub_location": "tests/test_c.py:1"},
        {
            "kind": "possibly-missing-attribute",
            "severity": "note",
            "message": "... the types.SimpleNamespace the test builds at tests/test_b.py:1 ...",
            "stub_location": "tests/test_b.py:1",
        },
    ]
    files = judge.standin_files(tmp_path / "tests")
    assert judge.by_standin_findings(files, audit, tmp_path / "tests") == [
        "tests/test_c.py",
        "tests/test_b.py",
        "tests/test_a.py",
    ]


@pytest.mark.parametrize(
    "how, ended, outcome, group",
    [
        ("attribute", True, "failed", "drifts"),
        ("attribute", False, "failed", "failing"),  # vLLM caught it; the test failed after
        ("call", False, "failed", "handled"),  # getattr(ns, "x", default) in a failing test
        ("attribute", False, "passed", "handled"),  # pytest.raises, or vLLM's own fallback
    ],
)
def test_namespace_errors_are_grouped_by_what_they_did(how, ended, outcome, group):
    result = _ns_result("tests/test_x.py:5", errors=["seq_lens"], outcome=outcome)
    (ns,) = result["files"]["tests/test_x.py"]["namespaces"]
    ns["attribute_errors"][0].update(how=how, ended_test=ended)
    (entry,) = judge.namespace_errors(result)
    assert entry["group"] == group
