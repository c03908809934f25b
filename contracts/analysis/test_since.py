"""``--since REV`` / ``--base-src DIR`` on the command line, with real git, and on real history.

The CLI tests run real git in a temporary repository, as pre-commit does, on ``worker_tree``
(the tree whose changes ``contracts/analyzer/test_since_cases.py`` tables); the real-history
test audits vLLM 0.33.0's tests against 0.34.0 with 0.33.0 as the base.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from contracts.analyzer.cases import cli
from contracts.analyzer.test_standin_audit import ADOPTION_MOD, ADOPTION_TEST
from contracts.analyzer.worker_tree import BASE, NEW_READ, TEST, vllm_tree

#: With --selfcheck (CI) only: the real history reads pinned releases, and each CLI case spawns
#: git several times (about 2 s in all), too slow for a developer's plain ``pytest contracts/``.
pytestmark = pytest.mark.selfcheck

REPO = Path(__file__).resolve().parents[2]


# -- the command line, with real git --------------------------------------------------------


def _git(repo: Path, *args: str) -> None:
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
    )
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, env=env)


@pytest.fixture(params=["at-the-top", "in-a-subfolder"])
def checkout(tmp_path, request):
    """A git repository holding the base ``vllm/`` and the test, committed; ``vllm/`` at the
    top of the checkout or in a folder inside it (paths from git are then relative to it)."""
    top = tmp_path / "repo"
    repo = top if request.param == "at-the-top" else top / "src"
    vllm_tree(repo, BASE)
    (repo / "tests").mkdir()
    (repo / "tests" / "test_worker.py").write_text(textwrap.dedent(TEST))
    _git(top, "init", "-q")
    _git(top, "add", "-A")
    _git(top, "commit", "-qm", "base")
    return repo


def test_since_head_fails_on_the_read_an_uncommitted_change_adds(checkout, capsys):
    (checkout / "vllm" / "mod.py").write_text(textwrap.dedent(NEW_READ))
    status, out, err = cli(
        checkout, "--since", "HEAD", str(checkout / "vllm" / "mod.py"), capsys=capsys
    )
    assert status == 1, out + err
    assert "error" in out and "self.queue" in out and "[newly-read-attribute]" in out
    assert "tests/test_worker.py:5" in out
    assert "self.cache" not in out  # the base had that read: still a note
    status, out, err = cli(checkout, str(checkout / "vllm" / "mod.py"), capsys=capsys)
    assert status == 0, out + err  # without --since the same read is a note


def test_since_head_without_a_change_is_the_plain_audit(checkout, capsys):
    status, out, err = cli(checkout, "--since", "HEAD", str(checkout / "tests"), capsys=capsys)
    assert status == 0, out + err
    assert "no vLLM file differs from HEAD" in err


def test_since_head_a_new_module_did_not_exist_at_the_base(checkout, capsys):
    """An added file (untracked, as before ``git add``) is absent from the base."""
    (checkout / "vllm" / "extra.py").write_text("class Extra:\n    pass\n")
    status, out, err = cli(checkout, "--since", "HEAD", str(checkout / "tests"), capsys=capsys)
    assert status == 0, out + err
    assert "1 vLLM file(s) differ" in err


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--since", "no-such-rev"), "--since no-such-rev: not a commit of the git repository"),
        (("--since", "HEAD", "--base-src", "."), "not allowed with argument"),
        (("--base-src", "/nonexistent"), "--base-src /nonexistent: no vllm/__init__.py there"),
        (("--since", "HEAD", "--write-baseline", "b.txt"), "--write-baseline records the tree"),
    ],
)
def test_bad_base_is_exit_2_with_one_line(checkout, capsys, args, needle):
    status, out, err = cli(checkout, *args, str(checkout / "tests"), capsys=capsys)
    assert status == 2
    assert needle in err and len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err and out == ""


def test_since_head_a_namespace_read_an_uncommitted_change_adds_is_an_error(tmp_path, capsys):
    """With ``--standins``, the base is audited with its namespaces too: a read of one the
    change added is an error, one the base already had stays a note."""
    repo = tmp_path / "repo"
    (repo / "vllm").mkdir(parents=True)
    (repo / "vllm" / "__init__.py").write_text("")
    base = ADOPTION_MOD.replace("return cfg.extra", "return 0")
    (repo / "vllm" / "mod.py").write_text(base)
    (repo / "tests").mkdir()
    (repo / "tests" / "test_x.py").write_text(ADOPTION_TEST)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    args = ("--standins", "--no-cache", "--since", "HEAD", "--format", "json")
    (repo / "vllm" / "mod.py").write_text(ADOPTION_MOD)
    status, out, err = cli(repo, *args, str(repo / "tests"), capsys=capsys)
    kinds = {f["name"]: f["kind"] for f in json.loads(out)}
    assert (status, kinds["cfg.extra"]) == (1, "newly-read-attribute"), err
    # The same read committed: the base has it, a note again.
    _git(repo, "commit", "-qam", "read extra")
    (repo / "vllm" / "mod.py").write_text(ADOPTION_MOD + "\n# touched\n")
    status, out, err = cli(repo, *args, str(repo / "tests"), capsys=capsys)
    kinds = {f["name"]: f["kind"] for f in json.loads(out)}
    assert kinds["cfg.extra"] == "possibly-missing-attribute", err


# -- real history ------------------------------------------------------------------------------


def test_real_drift_the_plain_audit_only_notes_is_an_error_since_the_previous_release(
    release_src, tmp_path
):
    """vLLM 0.34.0 made ``NixlPullConnectorWorker._read_blocks_for_req`` read ``_dst_pairs``
    and ``block_size`` behind branches on request data; 0.33.0's
    ``test_read_blocks_for_req_expands_remote_ids`` stub set neither and failed on 0.34.0
    (observed by running it).  The plain audit can only note those reads; with 0.33.0 as the
    base they are errors on that stub."""
    old, new = release_src("0.33.0"), release_src("0.34.0")
    test = old / "tests" / "v1" / "kv_connector" / "unit" / "test_nixl_connector_hma.py"
    args = ["--vllm-src", str(new), str(test), "--format", "json", "--quiet"]
    plain, since = _json_report(args), _json_report([*args, "--base-src", str(old)])

    def about(report: list[dict], kind: str) -> set[str]:
        return {
            f["name"] for f in report if f["kind"] == kind and f["method"] == "_read_blocks_for_req"
        }

    drift = {"_dst_pairs", "block_size"}
    assert drift <= about(plain, "possibly-missing-attribute")
    assert not drift & about(plain, "missing-attribute")
    assert drift <= about(since, "newly-read-attribute")


def _json_report(args: list[str]) -> list[dict]:
    proc = subprocess.run(
        [sys.executable, "-m", "factories.cli", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)
