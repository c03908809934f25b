"""``audit-stubs`` adopted in a git checkout of vLLM 0.34.0, driven by real pre-commit.

The hook is a ``repo: local`` hook whose ``id``, ``name``, ``types`` and ``files`` are read from
this repository's ``.pre-commit-hooks.yaml`` (so the manifest itself is under test) and whose
entry runs ``tools/audit_stubs.py`` of this checkout with ``language: unsupported`` (pre-commit
4.x's name for ``system``): no virtualenv to build, nothing to download, so it runs offline.
The manifest's own ``entry: audit-stubs`` is the console script of an installed copy; the
command line after it is the same.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

#: Tests of this project's analyzer on pinned release sources, never on the vLLM under test:
#: they run with --selfcheck (CI), not in a developer's plain ``pytest contracts/``.
pytestmark = pytest.mark.selfcheck

yaml = pytest.importorskip("yaml")  # pre-commit's own dependency
pytest.importorskip("pre_commit")

REPO = Path(__file__).resolve().parents[2]
TOOL = REPO / "tools" / "audit_stubs.py"
AITER_MLA = "vllm/v1/attention/backends/mla/rocm_aiter_mla.py"
FP8_TEST = "tests/kernels/attention/test_rocm_aiter_mla_fp8_prefill.py"
BASELINE = "audit-stubs-baseline.txt"


def _sources(folder: str, names: list[str]) -> set[str]:
    base = Path(folder)
    return {
        n for n in names if n == "__pycache__" or ((base / n).is_file() and not n.endswith(".py"))
    }


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, timeout=300, env=_env(repo)
    )


def _env(repo: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        PRE_COMMIT_HOME=str(repo.parent / "pre-commit-home"),
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
    )
    return env


def _hook_config() -> str:
    (hook,) = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    local = {
        "id": hook["id"],
        "name": hook["name"],
        "entry": f"{sys.executable} {TOOL} --vllm-src . --since HEAD --baseline {BASELINE} --quiet",
        "language": "unsupported",
        "types": hook["types"],
        "files": hook["files"],
        "require_serial": hook["require_serial"],
    }
    return yaml.safe_dump({"repos": [{"repo": "local", "hooks": [local]}]})


@pytest.fixture(scope="module")
def checkout(tmp_path_factory, release_src):
    """A git repo holding 0.34.0's vllm/ and tests/ (copies, never links into the cache),
    with the hook configured and installed and a baseline of today's findings committed."""
    repo = tmp_path_factory.mktemp("vllm-checkout") / "vllm"
    src = release_src("0.34.0")
    for package in ("vllm", "tests"):
        shutil.copytree(src / package, repo / package, ignore=_sources)
    (repo / ".pre-commit-config.yaml").write_text(_hook_config())
    assert _git(repo, "init", "-q").returncode == 0
    proc = subprocess.run(
        [sys.executable, str(TOOL), "--vllm-src", ".", "tests", "--write-baseline", BASELINE],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    _git(repo, "add", "-A")
    assert _git(repo, "commit", "-qm", "vLLM 0.34.0").returncode == 0
    install = subprocess.run(
        [sys.executable, "-m", "pre_commit", "install"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(repo),
    )
    assert install.returncode == 0, install.stdout + install.stderr
    return repo


def _commit(repo: Path, message: str) -> tuple[int, str]:
    """``git commit`` with the installed hook: its exit status and what the hook printed."""
    _git(repo, "add", "-A")
    proc = _git(repo, "commit", "-m", message)
    return proc.returncode, proc.stdout + proc.stderr


def _undo(repo: Path) -> None:
    _git(repo, "reset", "-q", "--hard", "HEAD")
    _git(repo, "clean", "-qfd")


def test_all_files_pass_after_write_baseline(checkout):
    proc = subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files"],
        cwd=checkout,
        capture_output=True,
        text=True,
        timeout=600,
        env=_env(checkout),
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Passed" in proc.stdout


def test_a_commit_adding_a_stub_that_misses_a_field_fails(checkout):
    new = checkout / "tests" / "kernels" / "attention" / "test_new_stub.py"
    new.write_text(
        "from vllm.v1.attention.backends.mla.rocm_aiter_mla import AiterMLAImpl\n\n\n"
        "def test_prefill():\n"
        "    impl = object.__new__(AiterMLAImpl)\n"
        "    impl._mla_fp8_prefill_attn(1, 2, 3, 4, 5)\n"
    )
    try:
        status, output = _commit(checkout, "a new stub")
        assert status != 0, output
        assert "tests/kernels/attention/test_new_stub.py:5: error" in output
        assert "Failed" in output
    finally:
        _undo(checkout)


@pytest.mark.parametrize(
    ("old", "new", "field", "kind"),
    [
        pytest.param(
            "        v_head_dim = self.v_head_dim\n        tile_q = _FP8_PREFILL_TILE_Q\n",
            "        v_head_dim = self.v_head_dim\n        tile_q = self._fp8_tile_q\n",
            "_fp8_tile_q",
            "missing-attribute",
            id="a-read-on-the-tests-path",
        ),
        # A read behind a branch on data (``q.dtype``) is a note on a tree as it stands; the
        # commit that adds it is where the FP8 test's stub stops being known to suffice.
        pytest.param(
            "        if q.dtype != fp8_dtype:\n            q = q.to(fp8_dtype)\n",
            "        if q.dtype != fp8_dtype:\n"
            "            q = q.to(fp8_dtype, non_blocking=self._fp8_cast_non_blocking)\n",
            "_fp8_cast_non_blocking",
            "newly-read-attribute",
            id="a-read-on-an-undecided-branch",
        ),
    ],
)
def test_a_commit_that_only_makes_the_fp8_prefill_read_a_new_field_fails(
    checkout, old, new, field, kind
):
    target = checkout / AITER_MLA
    text = target.read_text()
    assert text.count(old) == 1
    target.write_text(text.replace(old, new))
    try:
        status, output = _commit(checkout, "read a new field")
        assert status != 0, output
        hits = [line for line in output.splitlines() if field in line]
        assert hits and all(line.startswith(f"{FP8_TEST}:") for line in hits), output
        assert all(f"[{kind}]" in line for line in hits), output
    finally:
        _undo(checkout)


def test_a_comment_only_edit_to_a_file_with_baselined_findings_passes(checkout):
    """A file whose broken stub is in the baseline, then edited so every line moves: the
    baseline has no line numbers, so the commit still passes."""
    start = _git(checkout, "rev-parse", "HEAD").stdout.strip()
    rel = "tests/kernels/attention/test_baselined_stub.py"
    target = checkout / rel
    target.write_text(
        "from vllm.v1.attention.backends.mla.rocm_aiter_mla import AiterMLAImpl\n\n\n"
        "def test_prefill():\n"
        "    impl = object.__new__(AiterMLAImpl)\n"
        "    impl._mla_fp8_prefill_attn(1, 2, 3, 4, 5)\n"
    )
    try:
        proc = subprocess.run(
            [sys.executable, str(TOOL), "--vllm-src", ".", rel, "--write-baseline", BASELINE],
            cwd=checkout,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr
        assert f"{rel}::missing-attribute:" in (checkout / BASELINE).read_text()
        status, output = _commit(checkout, "a known broken stub, baselined")
        assert status == 0, output
        target.write_text("# a comment-only edit\n\n" + target.read_text())
        status, output = _commit(checkout, "comment only")
        assert status == 0, output
        assert "Passed" in output
    finally:
        _git(checkout, "reset", "-q", "--hard", start)
        _git(checkout, "clean", "-qfd")
