"""``tools/audit_stubs.py`` as pre-commit runs it: exit codes, formats, one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from factories.mutation.source import Mutation, mutated_tree

#: Tests of this project's analyzer on pinned release sources, never on the vLLM under test:
#: they run with --selfcheck (CI), not in a developer's plain ``pytest contracts/``.
pytestmark = pytest.mark.selfcheck

REPO = Path(__file__).resolve().parents[2]
TOOL = REPO / "tools" / "audit_stubs.py"
SEED = REPO / "contracts" / "stub_fixtures" / "seed_fp8_prefill_stubs.py"
AITER_MLA = "vllm/v1/attention/backends/mla/rocm_aiter_mla.py"
PROG_NAME = "audit-stubs"


def run_tool(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(TOOL), *args], capture_output=True, text=True, cwd=cwd, timeout=120
    )


def assert_one_line_error(proc: subprocess.CompletedProcess, needle: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert needle in lines[0]


def test_imports_neither_torch_nor_vllm(release_src):
    probe = (
        "import sys, runpy\n"
        f"sys.argv = ['audit_stubs.py', '--vllm-src', {str(release_src('0.34.0'))!r}, '--quiet']\n"
        "try:\n"
        f"    runpy.run_path({str(TOOL)!r}, run_name='__main__')\n"
        "except SystemExit as exc:\n"
        "    code = exc.code\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'vllm'))\n"
        "print('LOADED', bad, 'EXIT', code)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120
    )
    assert "LOADED [] EXIT 0" in proc.stdout, proc.stdout + proc.stderr


def test_own_specs_are_clean_against_the_pinned_release(release_src):
    proc = run_tool("--vllm-src", str(release_src("0.34.0")))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "audited 2 stub spec(s) of factories/stubs/specs.py, 2 resolved" in proc.stderr


def test_own_specs_drift_when_vllm_reads_a_new_field(release_src):
    mutation = Mutation(
        AITER_MLA,
        "        v_head_dim = self.v_head_dim\n        tile_q = _FP8_PREFILL_TILE_Q\n",
        "        v_head_dim = self.v_head_dim\n        tile_q = self._fp8_tile_q\n",
    )
    with mutated_tree(release_src("0.34.0"), mutation) as tree:
        proc = run_tool("--vllm-src", str(tree), "--format", "json")
    assert proc.returncode == 1
    findings = json.loads(proc.stdout)
    assert [(f["kind"], f["name"]) for f in findings] == [("missing-attribute", "_fp8_tile_q")]
    assert findings[0]["vllm_location"].endswith(f"{AITER_MLA}:3051")
    assert findings[0]["stub_location"].startswith(str(REPO / "factories" / "stubs" / "specs.py"))


def test_seed_drift_exit_code_and_text_format(release_src):
    proc = run_tool("--vllm-src", str(release_src("0.34.0")), str(SEED))
    assert proc.returncode == 1
    assert (
        "error: AiterMLAImpl._mla_fp8_prefill_attn() reads self._fp8_prefill_one_scale"
        in proc.stdout
    )
    assert "[missing-argument]" in proc.stdout
    assert "findings: missing-argument=1, missing-attribute=1" in proc.stderr


def test_github_format(release_src):
    proc = run_tool("--vllm-src", str(release_src("0.34.0")), "--format", "github", str(SEED))
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 2
    assert all(
        line.startswith("::error file=contracts/stub_fixtures/seed_fp8_prefill_stubs.py,line=")
        for line in lines
    )


def test_allowlist_silences_a_known_finding(release_src, tmp_path):
    allow = tmp_path / "allow.txt"
    allow.write_text(
        "# known\nmissing-argument:AiterMLAMetadataBuilder._init_fp8_prefill_ps_buffers:*\n"
    )
    proc = run_tool(
        "--vllm-src",
        str(release_src("0.34.0")),
        "--allowlist",
        str(allow),
        str(SEED),
        "--format",
        "json",
    )
    assert proc.returncode == 1  # the other finding remains
    assert [f["name"] for f in json.loads(proc.stdout)] == ["_fp8_prefill_one_scale"]


def test_file_that_does_not_exist(release_src):
    assert_one_line_error(
        run_tool("--vllm-src", str(release_src("0.34.0")), "no/such/test_file.py"),
        "no such file or directory",
    )


def test_no_installed_vllm_and_no_flag(tmp_path):
    """Without --vllm-src the installed package is used; with none installed: exit 2."""
    probe = (
        "import importlib.util, sys, runpy\n"
        "real = importlib.util.find_spec\n"
        "importlib.util.find_spec = lambda name, *a: None if name == 'vllm' else real(name, *a)\n"
        f"sys.argv = ['audit_stubs.py']\n"
        f"runpy.run_path({str(TOOL)!r}, run_name='__main__')\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert_one_line_error(proc, "pass --vllm-src")


@pytest.mark.parametrize("fmt", ["text", "json", "github"])
def test_clean_run_exits_zero_in_every_format(release_src, fmt):
    root = release_src("0.34.0")
    proc = run_tool(
        "--vllm-src",
        str(root),
        "--format",
        fmt,
        str(root / "tests/kernels/attention/test_rocm_aiter_mla_fp8_prefill.py"),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() in ("", "[]")


# -- robustness: bad input is reported, never a traceback, and never hides the rest ------------

ASR_STUB = """\
import vllm.benchmarks.datasets.datasets as datasets_module


def test_sample():
    dataset = object.__new__(datasets_module.ASRDataset)
    dataset.data = []
    dataset.sample(tokenizer=None, num_requests=1)
"""


def findings_of(proc: subprocess.CompletedProcess) -> list[dict]:
    assert "Traceback" not in proc.stderr, proc.stderr
    return json.loads(proc.stdout)


def assert_seed_findings(findings: list[dict]) -> None:
    names = sorted(f["name"] for f in findings if f["kind"] != "unreadable-file")
    assert names == ["_fp8_prefill_one_scale", "attn_out_dtype"], findings


@pytest.mark.parametrize(
    ("content", "line", "reason"),
    [
        (b"x = object.__new__(C)\ndef f(:\n    pass\n", 2, "syntax error"),
        (b"x = object.__new__(C)\ny = 1\nz = '\xe9t\xe9'\n", 3, "utf-8"),
        (b"x = object.__new__(C)\ny = '\0'\n", 1, "null bytes"),
    ],
    ids=["syntax-error", "not-utf-8", "null-bytes"],
)
def test_unparsable_file_is_a_finding_and_the_others_are_still_audited(
    release_src, tmp_path, content, line, reason
):
    folder = tmp_path / "tests"
    folder.mkdir()
    (folder / "test_broken.py").write_bytes(content)
    (folder / "test_seed.py").write_bytes(SEED.read_bytes())
    proc = run_tool("--vllm-src", str(release_src("0.34.0")), "--format", "json", str(folder))
    assert proc.returncode == 2, proc.stderr
    findings = findings_of(proc)
    assert_seed_findings(findings)
    [bad] = [f for f in findings if f["kind"] == "unreadable-file"]
    assert bad["severity"] == "error"
    assert bad["stub_location"] == f"{folder / 'test_broken.py'}:{line}"
    assert reason in bad["message"]
    assert "audited 1 file(s) (1 more could not be read)" in proc.stderr
    assert "unreadable-file=1" in proc.stderr


def test_unparsable_file_named_explicitly_in_text_format(release_src, tmp_path):
    bad = tmp_path / "test_broken.py"
    bad.write_text("def f(:\n    pass\n")
    proc = run_tool("--vllm-src", str(release_src("0.34.0")), str(bad), str(SEED))
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"{bad}:1: error: " in proc.stdout
    assert "[unreadable-file]" in proc.stdout
    assert "[missing-argument]" in proc.stdout  # the seed is still audited


@pytest.mark.parametrize(
    "head",
    [b"\xef\xbb\xbf", b"# -*- coding: latin-1 -*-\n# caf\xe9\n"],
    ids=["utf-8-bom", "pep-263-latin-1"],
)
def test_source_encodings_python_accepts_are_accepted(release_src, tmp_path, head):
    encoded = tmp_path / "test_encoded.py"
    encoded.write_bytes(head + SEED.read_bytes())
    proc = run_tool("--vllm-src", str(release_src("0.34.0")), "--format", "json", str(encoded))
    assert proc.returncode == 1, proc.stderr
    findings = findings_of(proc)
    assert_seed_findings(findings)
    assert len(findings) == 2


def test_bom_that_contradicts_the_coding_line_is_rejected_as_python_does(release_src, tmp_path):
    encoded = tmp_path / "test_encoded.py"
    encoded.write_bytes(b"\xef\xbb\xbf# -*- coding: latin-1 -*-\n" + SEED.read_bytes())
    proc = run_tool("--vllm-src", str(release_src("0.34.0")), "--format", "json", str(encoded))
    assert proc.returncode == 2, proc.stderr
    assert [f["kind"] for f in findings_of(proc)] == ["unreadable-file"]
    assert "audited 0 file(s) (1 more could not be read)" in proc.stderr  # not the specs line


def test_unparsable_vllm_module_is_a_finding_and_other_stubs_are_audited(release_src, tmp_path):
    asr = tmp_path / "test_asr.py"
    asr.write_text(ASR_STUB)
    broken = Mutation(AITER_MLA, "class AiterMLAImpl(", "class AiterMLAImpl((")
    with mutated_tree(release_src("0.34.0"), broken) as tree:
        line = 1 + (tree / AITER_MLA).read_text().split("class AiterMLAImpl((")[0].count("\n")
        proc = run_tool("--vllm-src", str(tree), "--format", "json", str(SEED), str(asr))
    assert proc.returncode == 2, proc.stderr
    findings = findings_of(proc)
    [bad] = [f for f in findings if f["kind"] == "unreadable-file"]
    assert bad["vllm_location"].endswith(f"{AITER_MLA}:{line}")
    assert "vllm.v1.attention.backends.mla.rocm_aiter_mla" in bad["message"]
    assert bad["stub_location"].startswith(f"{SEED}:")
    others = [(f["kind"], f["class"]) for f in findings if f["kind"] != "unreadable-file"]
    # ASRDataset's read sits behind an undecided branch: a note, which JSON always carries.
    assert ("possibly-missing-attribute", "ASRDataset") in others
    assert "(0 unresolved: dynamic or outside vLLM; 2 need a vLLM module" in proc.stderr


# An audit hook makes chosen paths unreadable even for root (who ignores chmod 000).  Opens of
# a file descriptor (``os.fdopen``, the result cache's atomic write) name no path: let through.
DENY_PROBE = """\
import errno, os, runpy, sys
DENIED = {denied!r}
def deny(event, args):
    if event in ("open", "os.scandir") and args and isinstance(args[0], (str, bytes, os.PathLike)):
        if os.fsdecode(args[0]).endswith(DENIED):
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(args[0]))
sys.addaudithook(deny)
sys.argv = ["audit_stubs.py", *{argv!r}]
runpy.run_path({tool!r}, run_name="__main__")
"""


def test_unreadable_file_and_folder_are_reported_not_counted(release_src, tmp_path):
    folder = tmp_path / "tests"
    (folder / "locked").mkdir(parents=True)
    (folder / "locked" / "test_inside.py").write_bytes(SEED.read_bytes())
    (folder / "test_locked.py").write_bytes(SEED.read_bytes())
    (folder / "test_seed.py").write_bytes(SEED.read_bytes())
    argv = ["--vllm-src", str(release_src("0.34.0")), "--format", "json", str(folder)]
    probe = DENY_PROBE.format(denied=("test_locked.py", "locked"), argv=argv, tool=str(TOOL))
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2, proc.stderr
    findings = findings_of(proc)
    assert_seed_findings(findings)
    unreadable = sorted(f["stub_location"] for f in findings if f["kind"] == "unreadable-file")
    assert unreadable == [f"{folder / 'locked'}:1", f"{folder / 'test_locked.py'}:1"]
    assert all("Permission denied" in f["message"] for f in findings if "unreadable" in f["kind"])
    assert "audited 1 file(s) (2 more could not be read)" in proc.stderr


@pytest.mark.parametrize(
    ("content", "line", "needle"),
    [
        (b"# known\nmissing-argument:A.b:\xff\n", None, "utf-8"),
        (b"# known\nmissing-argument:A.b:c\n*\n", 3, "matches every finding"),
        (b"***\n", 1, "matches every finding"),
        (b"*:*:*  # all\n", 1, "matches every finding"),
        (b"*:*.*:*\n", 1, "matches every finding"),
        (b"missing-argument\n", 1, "kind:Class.method:name"),
        (b"missing-argument:A.b\n", 1, "kind:Class.method:name"),
        (b"missing-argumnet:A.b:c\n", 1, "no finding kind"),
    ],
)
def test_bad_allowlist_is_one_line_naming_file_and_line(
    release_src, tmp_path, content, line, needle
):
    allow = tmp_path / "allow.txt"
    allow.write_bytes(content)
    proc = run_tool("--vllm-src", str(release_src("0.34.0")), "--allowlist", str(allow), str(SEED))
    assert_one_line_error(proc, needle)
    assert (f"{allow}:{line}:" if line else str(allow)) in proc.stderr


def test_closed_stdout_pipe_ends_quietly_with_141(release_src):
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first write, as after ``| head -1``
    try:
        proc = subprocess.run(
            [sys.executable, str(TOOL), "--vllm-src", str(release_src("0.34.0")), str(SEED)],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert proc.returncode == 141, proc.stderr
    assert proc.stderr == "", proc.stderr


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_full_disk_on_stdout_is_one_line_and_exit_2(release_src):
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [sys.executable, str(TOOL), "--vllm-src", str(release_src("0.34.0")), str(SEED)],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith(PROG_NAME)]
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr
    assert len(lines) == 1 and "No space left on device" in lines[0], proc.stderr


def test_findings_are_sorted_by_line_number_not_text(release_src, tmp_path):
    stub = "x{n} = object.__new__(NoSuchClass{n})\n"
    text = (
        "from vllm.v1.attention.backends.mla.rocm_aiter_mla import NoSuchClass6, NoSuchClass10013\n"
        + "\n" * 4
        + stub.format(n=6)
        + "\n" * (10013 - 7)
        + stub.format(n=10013)
    )
    test_file = tmp_path / "test_long.py"
    test_file.write_text(text)
    proc = run_tool("--vllm-src", str(release_src("0.34.0")), "--format", "json", str(test_file))
    lines = [int(f["stub_location"].rsplit(":", 1)[1]) for f in findings_of(proc)]
    assert lines == [6, 10013]
