"""The audit's result cache on tiny trees: a hit prints what a cold run prints, and any change
to a module a file's audit consulted is a miss.

The cache (``factories.analysis.result_cache``) keys each test file's part of the audit by the
file's bytes, the analyzer's code and the options, and checks on every look-up the content of
every module the file's audit asked the tree for.  These cases count the files the audit
computes (``StubAuditor._compute_file``) to tell a hit from a miss, and compare whole reports
(stdout and stderr of the command line) to tell that a hit changes nothing.  The same on a real
release file is in ``contracts/analysis/test_result_cache_release.py`` (``--selfcheck``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from contracts.analyzer.cases import cli, write_tree
from factories.analysis.audit import StubAuditor
from factories.analysis.result_cache import ResultCache

# ``Sub`` lives in another module than the ``Base`` whose method reads the field, so the
# module that changes is one the test file never names (only the audit's recording sees it).
TREE = {
    "vllm/__init__.py": "",
    "vllm/base_impl.py": "class Base:\n    def run(self):\n        return self.x\n",
    "vllm/sub_impl.py": "from vllm.base_impl import Base\n\n\nclass Sub(Base):\n    pass\n",
    "vllm/unrelated.py": "def other():\n    return 1\n",
    "tests/test_a.py": (
        "from vllm.sub_impl import Sub\n\n\ndef test_a():\n    s = object.__new__(Sub)\n"
        "    s.x = 1\n    s.run()\n"
    ),
    "tests/test_b.py": (
        "from types import SimpleNamespace\n\nfrom vllm.sub_impl import Sub\n\n\n"
        "def test_b():\n    s = object.__new__(Sub)\n    s.x = SimpleNamespace(y=1)\n    s.run()\n"
    ),
}
READS_Z = "class Base:\n    def run(self):\n        return self.x + self.z\n"


class Counting:
    """``StubAuditor._compute_file`` wrapped: the test files actually computed (misses)."""

    def __init__(self, monkeypatch) -> None:
        self.computed: list[str] = []
        original = StubAuditor._compute_file

        def counted(auditor, path, *args, **kwargs):
            self.computed.append(Path(path).name)
            return original(auditor, path, *args, **kwargs)

        monkeypatch.setattr(StubAuditor, "_compute_file", counted)

    def take(self) -> list[str]:
        out, self.computed = sorted(self.computed), []
        return out


def _audit(root: Path, cache: Path, *paths: Path, standins: bool = False):
    warnings: list[str] = []
    auditor = StubAuditor(
        root, cache=ResultCache.at(cache, [f"standins={standins}"], warnings.append)
    )
    result = auditor.audit_paths(list(paths), standins=standins)
    return result, warnings


@pytest.mark.parametrize("standins", [False, True], ids=["stubs", "standins"])
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_hit_prints_what_a_cold_run_and_an_uncached_run_print(tmp_path, capsys, fmt, standins):
    write_tree(tmp_path / "src", TREE)
    args = ["--format", fmt, "--show-possible", *(["--standins"] * standins)]
    args.append(str(tmp_path / "src" / "tests"))
    cache = ["--cache-dir", str(tmp_path / "cache")]
    uncached = cli(tmp_path / "src", "--no-cache", *args, capsys=capsys)
    cold = cli(tmp_path / "src", *cache, *args, capsys=capsys)
    assert any((tmp_path / "cache").rglob("*.json")), "the cold run wrote no entry"
    warm = cli(tmp_path / "src", *cache, *args, capsys=capsys)
    assert cold == uncached
    assert warm == cold


def test_an_edit_to_a_consulted_module_misses_and_finds_the_new_read(tmp_path, monkeypatch):
    write_tree(tmp_path, TREE)
    counting = Counting(monkeypatch)
    cache = tmp_path / "cache"
    before, _ = _audit(tmp_path, cache, tmp_path / "tests")
    assert counting.take() == ["test_a.py", "test_b.py"]
    assert not before.errors
    (tmp_path / "vllm/base_impl.py").write_text(READS_Z)
    after, _ = _audit(tmp_path, cache, tmp_path / "tests")
    assert counting.take() == ["test_a.py", "test_b.py"]
    assert sorted(f.name for f in after.errors) == ["z", "z"]


def test_a_module_parsed_first_for_another_file_is_recorded_for_each(tmp_path, monkeypatch):
    """Both files reach ``Base`` through ``Sub``; the tree parses ``vllm.base_impl`` once, for
    the first.  The second file's entry must still name it: audited alone after the edit, it
    misses."""
    write_tree(tmp_path, TREE)
    counting = Counting(monkeypatch)
    cache = tmp_path / "cache"
    _audit(tmp_path, cache, tmp_path / "tests")
    (tmp_path / "vllm/base_impl.py").write_text(READS_Z)
    after, _ = _audit(tmp_path, cache, tmp_path / "tests" / "test_b.py")
    assert counting.take() == ["test_a.py", "test_b.py", "test_b.py"]
    assert [f.name for f in after.errors] == ["z"]


def test_an_edit_elsewhere_hits(tmp_path, monkeypatch):
    write_tree(tmp_path, TREE)
    counting = Counting(monkeypatch)
    cache = tmp_path / "cache"
    cold, _ = _audit(tmp_path, cache, tmp_path / "tests")
    counting.take()
    (tmp_path / "vllm/unrelated.py").write_text("def other():\n    return 2\n")
    (tmp_path / "tests/test_unrelated.py").write_text("def test():\n    pass\n")
    warm, _ = _audit(tmp_path, cache, tmp_path / "tests" / "test_a.py", tmp_path / "tests")
    assert counting.take() == []
    assert warm.findings == cold.findings


def test_a_new_module_where_the_audit_found_none_misses(tmp_path, monkeypatch):
    """A name the audit asked for and did not find is recorded as absent: a module that
    appears under it later can change the answer."""
    write_tree(tmp_path, TREE)
    counting = Counting(monkeypatch)
    cache = tmp_path / "cache"
    _audit(tmp_path, cache, tmp_path / "tests" / "test_a.py")
    counting.take()
    (tmp_path / "vllm/sub_impl.py").unlink()
    write_tree(
        tmp_path,
        {
            "vllm/sub_impl/__init__.py": "from vllm.base_impl import Base\n\n\nclass Sub(Base):\n"
            "    def run(self):\n        return self.w\n"
        },
    )
    after, _ = _audit(tmp_path, cache, tmp_path / "tests" / "test_a.py")
    assert counting.take() == ["test_a.py"]
    assert [f.name for f in after.errors] == ["w"]


def test_a_corrupt_entry_is_recomputed_with_one_line(tmp_path, monkeypatch, capsys):
    write_tree(tmp_path / "src", TREE)
    args = ["--show-possible", "--standins", str(tmp_path / "src" / "tests")]
    cache = ["--cache-dir", str(tmp_path / "cache")]
    cold = cli(tmp_path / "src", *cache, *args, capsys=capsys)
    entries = sorted((tmp_path / "cache").rglob("*.json"))
    assert len(entries) == 2
    entries[0].write_text("{not json")
    entries[1].write_text('{"format": 1, "consulted": {}, "payload": {"stubs": "x"}}')
    status, out, err = cli(tmp_path / "src", *cache, *args, capsys=capsys)
    assert (status, out) == cold[:2]
    extra = [line for line in err.splitlines() if line not in cold[2].splitlines()]
    assert len(extra) == 2 and all("corrupt entry" in line for line in extra), err
    assert "Traceback" not in err
    assert cli(tmp_path / "src", *cache, *args, capsys=capsys) == cold  # rewritten


def test_an_unwritable_cache_is_one_line_and_the_same_report(tmp_path, capsys):
    write_tree(tmp_path / "src", TREE)
    (tmp_path / "cache").write_text("a file where the folder should be")
    args = [str(tmp_path / "src" / "tests")]
    plain = cli(tmp_path / "src", "--no-cache", *args, capsys=capsys)
    status, out, err = cli(
        tmp_path / "src", "--cache-dir", str(tmp_path / "cache"), *args, capsys=capsys
    )
    assert (status, out) == plain[:2]
    extra = [line for line in err.splitlines() if line not in plain[2].splitlines()]
    assert len(extra) == 1 and "cannot write" in extra[0], err


# -- the source-change trigger, with stand-ins -----------------------------------------

# The namespace meets ``vllm.entry.build``, whose callee in ``vllm.deep`` reads the field: the
# test file spells no name of ``vllm.deep``'s closure, so only a recorded audit knows.
STANDIN_TREE = {
    "vllm/__init__.py": "",
    "vllm/deep.py": "def read(common):\n    return common.num_tokens\n",
    "vllm/entry.py": (
        "from vllm.deep import read\n\n\ndef build(common):\n    return read(common)\n"
    ),
    "vllm/unrelated.py": "def other():\n    return 1\n",
    "tests/test_ns.py": (
        "from types import SimpleNamespace\n\nfrom vllm.entry import build\n\n\n"
        "def test_x():\n    ns = SimpleNamespace(other=1)\n    build(ns)\n"
    ),
}


def test_the_standin_trigger_follows_the_recorded_callee_chain(tmp_path, capsys):
    write_tree(tmp_path, STANDIN_TREE)
    cache = ["--cache-dir", str(tmp_path / "cache")]
    deep, unrelated = str(tmp_path / "vllm/deep.py"), str(tmp_path / "vllm/unrelated.py")
    # No entry yet: the text scan decides, and misses the chain through ``build``.
    status, out, err = cli(tmp_path, *cache, "--standins", deep, capsys=capsys)
    assert status == 0 and "0 test file(s)" in err
    cli(tmp_path, *cache, "--standins", str(tmp_path / "tests"), capsys=capsys)  # the index
    status, out, err = cli(tmp_path, *cache, "--standins", deep, capsys=capsys)
    assert status == 1 and "common.num_tokens" in out and "1 test file(s)" in err
    status, out, err = cli(tmp_path, *cache, "--standins", unrelated, capsys=capsys)
    assert status == 0 and "0 test file(s)" in err
    # The module edited since the entry was written (the hook's case): still its dependent.
    (tmp_path / "vllm/deep.py").write_text("def read(common):\n    return common.n_tokens\n")
    status, out, err = cli(tmp_path, *cache, "--standins", deep, capsys=capsys)
    assert status == 1 and "common.n_tokens" in out and "1 test file(s)" in err


def test_a_stale_entry_does_not_decide_the_trigger(tmp_path, capsys):
    """An entry whose consulted modules changed other than the changed one says nothing of
    the tree as it is: the file goes back to the text scan (here: it names ``entry``)."""
    write_tree(tmp_path, STANDIN_TREE)
    cache = ["--cache-dir", str(tmp_path / "cache")]
    cli(tmp_path, *cache, "--standins", str(tmp_path / "tests"), capsys=capsys)
    (tmp_path / "vllm/deep.py").write_text("def read(common):\n    return common.other\n")
    entry = str(tmp_path / "vllm/entry.py")
    status, _, err = cli(tmp_path, *cache, "--standins", entry, capsys=capsys)
    assert status == 0 and "1 test file(s)" in err, err


TRIGGER_TREE = {
    **TREE,
    "tests/test_other.py": "class Base:\n    pass\n\ndef test():\n    object.__new__(Base)\n",
}


@pytest.mark.parametrize(
    ("changed", "triggered"),
    [
        ("vllm.base_impl", ["tests/test_a.py", "tests/test_b.py"]),
        ("vllm.sub_impl", ["tests/test_a.py", "tests/test_b.py"]),
        ("vllm.unrelated", []),
    ],
)
@pytest.mark.parametrize("standins", [False, True], ids=["stubs", "standins"])
def test_the_stub_trigger_decides_the_same_from_entries(tmp_path, changed, triggered, standins):
    write_tree(tmp_path, TRIGGER_TREE)
    cache = ResultCache.at(tmp_path / "cache", [f"standins={standins}"])
    cold = StubAuditor(tmp_path, cache=cache).triggered({changed}, standins=standins)
    StubAuditor(tmp_path, cache=cache).audit_paths([tmp_path / "tests"], standins=standins)
    warm = StubAuditor(tmp_path, cache=cache).triggered({changed}, standins=standins)
    assert sorted(str(p.relative_to(tmp_path)) for p in cold) == triggered
    assert sorted(str(p.relative_to(tmp_path)) for p in warm) == triggered


def test_a_base_version_is_cached_apart_and_prints_the_same(tmp_path, capsys):
    """``--base-src``: the base version's audit of the same files has entries of its own
    (its modules differ), and cold, warm and uncached runs print the same."""
    write_tree(tmp_path / "base", TREE)
    write_tree(tmp_path / "src", {**TREE, "vllm/base_impl.py": READS_Z})
    args = ["--base-src", str(tmp_path / "base"), "--format", "json", str(tmp_path / "src/tests")]
    cache = ["--cache-dir", str(tmp_path / "cache")]
    uncached = cli(tmp_path / "src", "--no-cache", *args, capsys=capsys)
    cold = cli(tmp_path / "src", *cache, *args, capsys=capsys)
    assert len(list((tmp_path / "cache").rglob("*.json"))) == 4  # two files, two versions
    assert cli(tmp_path / "src", *cache, *args, capsys=capsys) == cold == uncached
    assert uncached[0] == 1


def test_a_test_session_keeps_audit_results_out_of_the_user_cache():
    """The contracts plugin points ``$VLLM_GUARD_AUDIT_RESULTS`` at a folder of the session, so
    the ``audit-stubs`` runs that tests launch never write into (or read from) the user's cache."""
    from factories.analysis.result_cache import RESULTS_ENV, default_results_dir
    from factories.locations import cache_dir

    configured = os.environ.get(RESULTS_ENV)
    assert configured, f"{RESULTS_ENV} is not set in this test session"
    assert default_results_dir() == Path(configured)
    assert not Path(configured).resolve().is_relative_to(cache_dir().resolve())


# A namespace handed to a function that reads one of its two fields: the other is a stale
# field, judged over the run from what each file's entry keeps (``FileAudit.sites``/``uses``).
STALE_TREE = {
    "vllm/__init__.py": "",
    "vllm/mod.py": "def build(cfg):\n    return cfg.used\n",
    "tests/test_s.py": (
        "from types import SimpleNamespace\n\nfrom vllm.mod import build\n\n\n"
        "def test_s():\n    build(SimpleNamespace(used=1, unused=2))\n"
    ),
}


def test_a_hit_keeps_a_namespace_s_stale_field(tmp_path, capsys):
    write_tree(tmp_path / "src", STALE_TREE)
    args = ["--format", "json", "--standins", str(tmp_path / "src" / "tests")]
    cache = ["--cache-dir", str(tmp_path / "cache")]
    uncached = cli(tmp_path / "src", "--no-cache", *args, capsys=capsys)
    cold = cli(tmp_path / "src", *cache, *args, capsys=capsys)
    warm = cli(tmp_path / "src", *cache, *args, capsys=capsys)
    found = json.loads(uncached[1])
    assert [(f["kind"], f["name"]) for f in found] == [("stale-field", "unused")]
    assert cold == uncached
    assert warm == cold
