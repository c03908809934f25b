"""``--since REV`` / ``--base-src DIR``: reads a change added are errors, nothing else changes.

Each case of the table is a tiny ``vllm/mod.py`` in two versions (the base and the change) and
one test file; the audit runs against the change with the base's reads known.  The cases that
must stay quiet are the harmless refactors a vLLM developer makes every day (a read moved into
a helper, lines moved): a check that fires on those would be switched off.  The CLI tests run
real git in a temporary repository, as pre-commit does; the real-history test audits vLLM
0.33.0's tests against 0.34.0 with 0.33.0 as the base.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from factories.analysis.audit import StubAuditor
from factories.analysis.findings import FindingKind, Severity
from factories.analysis.since import KnownReads, base_from_tree
from factories.cli import main

#: Tests of this project's analyzer on pinned release sources, never on the vLLM under test:
#: they run with --selfcheck (CI), not in a developer's plain ``pytest contracts/``.
pytestmark = pytest.mark.selfcheck

REPO = Path(__file__).resolve().parents[2]

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

# (case id, the changed vllm/mod.py, {attribute: kind} expected against the change)
CASES = [
    (
        "new-read-on-an-undecided-branch",
        """
        class Worker:
            def step(self, flag):
                if flag:
                    return self.cache, self.queue
                return self.ready
        """,
        {"cache": "possibly-missing-attribute", "queue": "newly-read-attribute"},
    ),
    (
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
    (
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
    (
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
    (
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
    (
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
    (
        "read-the-test-already-avoided-removed",
        """
        class Worker:
            def step(self, flag):
                return self.ready
        """,
        {},
    ),
]


def _tree(root: Path, source: str) -> Path:
    (root / "vllm").mkdir(parents=True)
    (root / "vllm" / "__init__.py").write_text("")
    (root / "vllm" / "mod.py").write_text(textwrap.dedent(source))
    return root


@pytest.mark.parametrize(("changed", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_reads_the_change_added_are_errors_and_refactors_add_none(tmp_path, changed, expected):
    now = _tree(tmp_path / "now", changed)
    base = _tree(tmp_path / "base", BASE)
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
    assert reads == expected
    for finding in result.findings:
        if finding.kind is FindingKind.NEWLY_READ_ATTRIBUTE:
            assert finding.severity is Severity.ERROR
            assert "since base" in finding.message and finding.name in finding.message


def test_the_base_overlay_reads_the_other_tree_and_leaves_tests_in_place(tmp_path):
    """Without ``--since`` the same change reports the new read as a note only."""
    now = _tree(tmp_path / "now", CASES[0][1])
    test = tmp_path / "test_worker.py"
    test.write_text(textwrap.dedent(TEST))
    plain = StubAuditor(now).audit_paths([test])
    assert {f.name for f in plain.errors} == set()
    before = StubAuditor(now, base_from_tree(_tree(tmp_path / "base", BASE)).overlay)
    assert {f.name for f in before.audit_paths([test]).findings} == {"cache"}


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
    _tree(repo, BASE)
    (repo / "tests").mkdir()
    (repo / "tests" / "test_worker.py").write_text(textwrap.dedent(TEST))
    _git(top, "init", "-q")
    _git(top, "add", "-A")
    _git(top, "commit", "-qm", "base")
    return repo


def _cli(repo: Path, *args: str, capsys) -> tuple[int, str, str]:
    """``audit-stubs`` in-process: its exit status (argparse's too) and what it printed."""
    try:
        status = main(["--vllm-src", str(repo), *args])
    except SystemExit as exc:
        status = int(exc.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


def test_since_head_fails_on_the_read_an_uncommitted_change_adds(checkout, capsys):
    (checkout / "vllm" / "mod.py").write_text(textwrap.dedent(CASES[0][1]))
    status, out, err = _cli(
        checkout, "--since", "HEAD", str(checkout / "vllm" / "mod.py"), capsys=capsys
    )
    assert status == 1, out + err
    assert "error" in out and "self.queue" in out and "[newly-read-attribute]" in out
    assert "tests/test_worker.py:5" in out
    assert "self.cache" not in out  # the base had that read: still a note
    status, out, err = _cli(checkout, str(checkout / "vllm" / "mod.py"), capsys=capsys)
    assert status == 0, out + err  # without --since the same read is a note


def test_since_head_without_a_change_is_the_plain_audit(checkout, capsys):
    status, out, err = _cli(checkout, "--since", "HEAD", str(checkout / "tests"), capsys=capsys)
    assert status == 0, out + err
    assert "no vLLM file differs from HEAD" in err


def test_since_head_a_new_module_did_not_exist_at_the_base(checkout, capsys):
    """An added file (untracked, as before ``git add``) is absent from the base."""
    (checkout / "vllm" / "extra.py").write_text("class Extra:\n    pass\n")
    status, out, err = _cli(checkout, "--since", "HEAD", str(checkout / "tests"), capsys=capsys)
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
    status, out, err = _cli(checkout, *args, str(checkout / "tests"), capsys=capsys)
    assert status == 2
    assert needle in err and len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err and out == ""


def test_since_outside_a_git_checkout_is_exit_2(tmp_path, capsys):
    repo = _tree(tmp_path / "plain", BASE)
    status, _, err = _cli(repo, "--since", "HEAD", str(repo), capsys=capsys)
    assert status == 2
    assert "not inside a git checkout" in err and len(err.strip().splitlines()) == 1


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
