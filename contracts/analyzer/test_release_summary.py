"""``audit-stubs --release-summary``: the main job's summary of a whole ``tests/`` tree.

A table of inline cases: a tiny ``vllm/mod.py``, one test file, and a pattern the summary's
section must hold (``stubs``: the counts and the stub audit's findings; ``standins``: what the
experimental stand-in audit adds).  Then the command line: a release missing from the cache, or
an option the main job decides itself, is exit 2 with one line; a cached release is summarized
and leaves the exit status to the specs.
"""

from __future__ import annotations

import itertools
import re
import textwrap
from pathlib import Path

import pytest

from contracts.analyzer.cases import cli
from factories.analysis.release_summary import format_summary, summarize_tree
from factories.analysis.result_cache import ResultCache
from factories.testing.releases import CACHE_ENV
from factories.testing.selfcheck import SELFCHECK_DEFAULT

MOD = """
class Builder:
    def build(self, metadata, common):
        return metadata.prefill, common.num_actual_tokens

    def dims(self):
        return self.mla_dims
"""
HEAD = (
    "from types import SimpleNamespace\nfrom unittest import mock\nfrom vllm.mod import Builder\n"
)
NO_FINDINGS = r"error \(.*\)\s+0\n.*warning \(.*\)\s+0\n.*note \(.*\)\s+0"
STUB = "b = object.__new__(Builder)\n"
CALL = STUB + "b.dims()"
STALE = STUB + "b.mla_dims = 1\nb.stale = 2\nb.dims()"
NOT_VLLM = "b = object.__new__(dict)\nb.x = 1"
NS_MEET = STUB + "b.build(SimpleNamespace(prefill=1), SimpleNamespace(num_actual_tokens=2))"
NS_LACK = STUB + "b.build(SimpleNamespace(prefill=1), SimpleNamespace())"
NS_ALONE = "ns = SimpleNamespace(a=1)\nassert ns.a"
MOCK = STUB + "b.build(mock.MagicMock(spec=Builder), 1)"
NS = r"types\.SimpleNamespace \(experimental, audited\)"
LEVEL = r" \(.*\)\s+"

#: (id, the test function's body, section, a pattern the section holds).
CASES = [
    ("empty-tree", "", "stubs", r"object\.__new__ stubs\s+0\s+in 0 files"),
    ("empty-tree-no-findings", "", "stubs", NO_FINDINGS),
    ("stub-counted-and-resolved", CALL, "stubs", r"stubs\s+1\s+in 1 files\n\s+1 resolved into"),
    ("stub-lacking-a-read-is-a-stub-error", CALL, "stubs", rf"error{LEVEL}1\s+missing-attribute=1"),
    ("stub-of-no-vllm-class", NOT_VLLM, "stubs", r"0 resolved into the vLLM source, 1 unresolved"),
    ("stub-of-no-vllm-class-a-note", NOT_VLLM, "stubs", rf"note{LEVEL}1\s+unresolved-stub=1"),
    ("stale-field-is-a-warning", STALE, "stubs", rf"warning{LEVEL}1\s+stale-field=1"),
    ("namespaces-meeting-code", NS_MEET, "stubs", rf"{NS}\s+2\s+2 meet vLLM code"),
    ("namespace-meeting-nothing", NS_ALONE, "stubs", rf"{NS}\s+1\s+0 meet vLLM code"),
    ("spec-mock-audited", MOCK, "stubs", r"spec'd mock \(experimental, audited\)"),
    ("spec-mock-counted", MOCK, "stubs", r"spec'd mock .*\)\s+1\s+1 meet vLLM code"),
    ("namespace-lacking-a-field", NS_LACK, "standins", rf"error{LEVEL}1\s+missing-field=1"),
    ("namespace-finding-not-a-stub-one", NS_LACK, "stubs", NO_FINDINGS),
    ("time-and-full-command", "", "all", r"in 2\.5 s(.*\n)*  all of them, in full:\n    CMD$"),
]


def _sections(text: str) -> dict[str, str]:
    stubs, rest = text.split("findings the stand-in audit adds")
    standins, _ = rest.split("  all of them, in full:")
    return {"stubs": stubs, "standins": standins, "all": text}


def _test_module(body: str) -> str:
    """A test file whose one test runs ``body``."""
    return HEAD + "def test_x():\n" + textwrap.indent(body or "pass", "    ") + "\n"


def _release(root: Path, body: str) -> Path:
    (root / "vllm").mkdir(parents=True)
    (root / "vllm" / "__init__.py").write_text("")
    (root / "vllm" / "mod.py").write_text(MOD)
    (root / "tests").mkdir()
    (root / "tests" / "test_x.py").write_text(_test_module(body))
    return root


def _counted(root: Path, **how) -> str:
    """The summary of ``root``'s tests as the main job prints it (``how``: ``cache``,
    ``jobs``), its seconds read off a clock that ticks 2.5 s a reading."""
    summary = summarize_tree(root, root / "tests", clock=itertools.count(0.0, 2.5).__next__, **how)
    return "\n".join(format_summary(summary, "vLLM 0.0.0's own tests", "CMD"))


@pytest.mark.parametrize(
    ("body", "section", "pattern"), [pytest.param(*c[1:], id=c[0]) for c in CASES]
)
def test_summary_says(tmp_path, body, section, pattern):
    text = _counted(_release(tmp_path, body))
    assert re.search(pattern, _sections(text)[section]), text


def test_a_namespace_followed_once_per_case_is_one_stand_in(tmp_path):
    """The audit follows a parametrized namespace once per case; the census counts where the
    test builds it (two ``SimpleNamespace(...)`` calls here, not four)."""
    root = _release(tmp_path, "")
    (root / "tests" / "test_x.py").write_text(
        HEAD + "import pytest\n\n\n"
        '@pytest.mark.parametrize("n", [1, 2])\n'
        "def test_n(n):\n"
        "    b = object.__new__(Builder)\n"
        "    b.build(SimpleNamespace(prefill=n), SimpleNamespace(num_actual_tokens=n))\n"
    )
    text = _counted(root)
    assert re.search(rf"{NS}\s+2\s+2 meet vLLM code", _sections(text)["stubs"]), text


#: (id, what the cache holds, further arguments, what the one line says).
ERRORS = [
    ("no-release-in-the-cache", "", (), f"run: python tools/fetch_vllm.py {SELFCHECK_DEFAULT}"),
    (
        "release-without-tests",
        "vllm",
        (),
        f"no tests/; run: python tools/fetch_vllm.py {SELFCHECK_DEFAULT}",
    ),
    ("with-a-file", "release", ("x.py",), "drop FILE"),
    ("with-standins", "release", ("--standins",), "drop --standins"),
    ("with-a-baseline", "release", ("--baseline", "b.txt"), "drop --baseline"),
    ("with-json", "release", ("--format", "json"), "drop --format"),
]


@pytest.mark.parametrize(
    ("cache", "args", "needle"), [pytest.param(*c[1:], id=c[0]) for c in ERRORS]
)
def test_release_summary_bad_input_is_exit_2_with_one_line(
    tmp_path, monkeypatch, capsys, cache, args, needle
):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    release = tmp_path / "vllm-src" / SELFCHECK_DEFAULT
    if cache == "vllm":
        (release / "vllm").mkdir(parents=True)
        (release / "vllm" / "__init__.py").write_text("")
    elif cache == "release":
        _release(release, "")
    status, out, err = cli(tmp_path, "--release-summary", *args, capsys=capsys)
    assert (status, out) == (2, ""), err
    assert len(err.strip().splitlines()) == 1, err
    assert needle in err and "Traceback" not in err


def test_release_summary_ends_the_specs_run_and_keeps_its_status(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    release = _release(
        tmp_path / "vllm-src" / SELFCHECK_DEFAULT, "b = object.__new__(Builder)\nb.dims()"
    )
    specs_status, specs_out, _ = cli(release, "--quiet", capsys=capsys)
    status, out, err = cli(release, "--release-summary", "--quiet", capsys=capsys)
    assert status == specs_status and out.startswith(specs_out), out
    summary = out[len(specs_out) :]
    assert f"vLLM {SELFCHECK_DEFAULT}'s own tests: {release / 'tests'}" in summary, summary
    assert "error (fails on the path the test takes)" in summary
    assert f"leave the exit status ({status}) to the specs" in summary
    assert err == ""


def test_workers_and_the_cache_count_what_one_process_counts(tmp_path):
    """The census travels in each file's audit: worker processes and a warm cache summarize
    a tree as one process does (one test file per case of the table, enough for workers)."""
    root = _release(tmp_path / "release", "")
    bodies = sorted({c[1] for c in CASES})
    for i, body in enumerate(bodies):
        (root / "tests" / f"test_{i}.py").write_text(_test_module(body))
    alone = _counted(root, jobs=1)
    cache = ResultCache.at(tmp_path / "cache", ["summary"], warn=pytest.fail)
    assert _counted(root, jobs=2) == alone
    assert _counted(root, jobs=2, cache=cache) == alone  # cold: fills the cache
    assert _counted(root, jobs=1, cache=cache) == alone  # warm: every file from the cache
    assert re.search(rf"{NS}\s+[1-9]\d*\s+[1-9]\d* meet vLLM code", alone), alone
