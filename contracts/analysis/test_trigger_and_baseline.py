"""The source-change trigger and the adoption mechanics of ``audit-stubs``.

Each mechanism is shown working and shown failing when it should: a changed vLLM module audits
the stubs that depend on it (and a drift there fails), a module nothing depends on passes; the
text pre-filter never drops a dependent file (against the full reverse index of vLLM 0.34.0);
a baseline hides known findings but not new ones; inline ignores and file-scoped allowlist
entries silence exactly what they name; malformed inputs are exit 2 with one line.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from factories.analysis.audit import StubAuditor
from factories.analysis.source_tree import gc_paused
from factories.analysis.trigger import TextScan
from factories.mutation.source import Mutation, mutated_tree

REPO = Path(__file__).resolve().parents[2]
TOOL = REPO / "tools" / "audit_stubs.py"
SEED = REPO / "contracts" / "stub_fixtures" / "seed_fp8_prefill_stubs.py"
AITER_MLA = "vllm/v1/attention/backends/mla/rocm_aiter_mla.py"
AITER_MODULE = "vllm.v1.attention.backends.mla.rocm_aiter_mla"
FP8_TEST = "tests/kernels/attention/test_rocm_aiter_mla_fp8_prefill.py"
# ``_mla_fp8_prefill_attn`` starts reading a field no stub sets: how 0.29/0.33 broke the stubs.
NEW_FIELD = Mutation(
    AITER_MLA,
    "        v_head_dim = self.v_head_dim\n        tile_q = _FP8_PREFILL_TILE_Q\n",
    "        v_head_dim = self.v_head_dim\n        tile_q = self._fp8_tile_q\n",
)

#: Tests of this project's analyzer on pinned release sources, never on the vLLM under test:
#: they run with --selfcheck (CI), not in a developer's plain ``pytest contracts/``.
pytestmark = pytest.mark.selfcheck


def run_tool(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(TOOL), *args], capture_output=True, text=True, cwd=cwd, timeout=300
    )


def one_line_error(proc: subprocess.CompletedProcess, needle: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in proc.stderr, proc.stderr


# -- the trigger ------------------------------------------------------------------------------


def test_a_drift_in_a_vllm_module_fails_and_names_the_dependent_test(release_src):
    with mutated_tree(release_src("0.34.0"), NEW_FIELD, packages=("vllm", "tests")) as tree:
        proc = run_tool("--vllm-src", str(tree), str(tree / AITER_MLA))
    assert proc.returncode == 1, proc.stderr
    hits = [line for line in proc.stdout.splitlines() if "_fp8_tile_q" in line]
    assert len(hits) == 1 and FP8_TEST in hits[0] and "[missing-attribute]" in hits[0]
    assert "1 changed vLLM module(s): 8 test file(s) hold stubs that depend on them" in proc.stderr


def test_the_unchanged_module_audits_the_same_dependents_and_they_are_the_ones_with_findings(
    release_src,
):
    root = release_src("0.34.0")
    auditor = StubAuditor(root)
    triggered = auditor.triggered({AITER_MODULE})
    names = sorted(str(p.relative_to(root)) for p in triggered)
    assert FP8_TEST in names and len(names) == 8
    assert all(stubs for stubs in triggered.values())


def test_a_change_no_stub_depends_on_audits_nothing_and_passes(release_src):
    root = release_src("0.34.0")
    proc = run_tool("--vllm-src", str(root), str(root / "vllm" / "scripts.py"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        "audit-stubs: 1 changed vLLM module(s): 0 test file(s) hold stubs that depend on them; "
        "no stub depends on them, nothing to audit for them"
    ]


def test_test_files_among_the_arguments_are_still_audited_beside_triggers(release_src):
    root = release_src("0.34.0")
    proc = run_tool("--vllm-src", str(root), str(root / "vllm" / "scripts.py"), str(SEED))
    assert proc.returncode == 1
    assert "_fp8_prefill_one_scale" in proc.stdout


@pytest.mark.slow
def test_the_pre_filter_never_drops_a_dependent_file_on_0_34(release_src):
    """Full reverse index (every stub of 0.34.0's tests, the analyzer's dependencies) against
    the pre-filter's candidates, for every module some stub depends on."""
    root = release_src("0.34.0")
    auditor = StubAuditor(root)
    scan = TextScan(auditor.tree)
    index: dict[str, set[Path]] = defaultdict(set)
    with gc_paused():
        for path in scan.stub_texts():
            for stub in auditor.extract(path):
                for module in auditor.dependencies(stub):
                    index[module].add(path)
        assert len(index) > 250 and AITER_MODULE in index
        dropped = {
            module: sorted(files - set(scan.candidate_files({module})))
            for module, files in index.items()
        }
    assert {m: f for m, f in dropped.items() if f} == {}
    assert set(auditor.triggered({AITER_MODULE}, scan)) == index[AITER_MODULE]


# -- baseline ---------------------------------------------------------------------------------


def test_baseline_hides_known_findings_and_fails_new_ones(release_src, tmp_path):
    root = release_src("0.34.0")
    baseline = tmp_path / "baseline.txt"
    proc = run_tool("--vllm-src", str(root), str(SEED), "--write-baseline", str(baseline))
    assert proc.returncode == 0, proc.stderr
    entries = [line for line in baseline.read_text().splitlines() if not line.startswith("#")]
    assert entries == sorted(entries) and len(entries) == 2
    assert all(":" not in e.split("::")[0] or e.count("::") == 1 for e in entries)
    assert not any(e.split("::")[0][-1].isdigit() for e in entries)  # no line numbers

    assert run_tool("--vllm-src", str(root), str(SEED), "--baseline", str(baseline)).returncode == 0
    # A comment line above the stub moves every line number: the baseline still holds.
    moved = tmp_path / "moved" / SEED.name
    moved.parent.mkdir()
    moved.write_text("# a comment\n" + SEED.read_text())
    rewritten = tmp_path / "moved-baseline.txt"
    rewritten.write_text(baseline.read_text().replace(str(SEED), str(moved)), encoding="utf-8")
    proc = run_tool("--vllm-src", str(root), str(moved), "--baseline", str(rewritten))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # A second stub of the same shape in the same file is new: counted, not a set.
    doubled = tmp_path / "doubled" / SEED.name
    doubled.parent.mkdir()
    doubled.write_text(
        SEED.read_text().replace(
            "def _make_impl():\n",
            "def _make_other():\n    other = object.__new__(AiterMLAImpl)\n"
            "    other._mla_fp8_prefill_attn(1, 2, 3, 4, 5)\n\n\ndef _make_impl():\n",
        )
    )
    rebased = tmp_path / "doubled-baseline.txt"
    rebased.write_text(baseline.read_text().replace(str(SEED), str(doubled)), encoding="utf-8")
    proc = run_tool("--vllm-src", str(root), str(doubled), "--baseline", str(rebased))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "_fp8_prefill_one_scale" in proc.stdout


def test_baseline_reports_removable_entries_only_for_audited_files(release_src, tmp_path):
    root = release_src("0.34.0")
    baseline = tmp_path / "baseline.txt"
    baseline.write_text(
        f"{SEED}::missing-attribute:AiterMLAImpl._mla_fp8_prefill_attn:_fp8_prefill_one_scale\n"
        f"{SEED}::missing-attribute:AiterMLAImpl._mla_fp8_prefill_attn:gone_field\n"
        "tests/not/audited.py::missing-attribute:X.y:z\n"
    )
    proc = run_tool("--vllm-src", str(root), str(SEED), "--baseline", str(baseline))
    assert proc.returncode == 1  # the missing-argument finding is not in the baseline
    assert "[missing-argument]" in proc.stdout and "_fp8_prefill_one_scale" not in proc.stdout
    notes = [line for line in proc.stderr.splitlines() if "remove it" in line]
    assert notes == [
        "audit-stubs: note: baseline entry no longer found, remove it: "
        f"{SEED}::missing-attribute:AiterMLAImpl._mla_fp8_prefill_attn:gone_field"
    ]


def test_write_baseline_keeps_entries_of_files_it_did_not_audit(release_src, tmp_path):
    root = release_src("0.34.0")
    baseline = tmp_path / "baseline.txt"
    baseline.write_text("tests/elsewhere.py::stale-field:X.y:z\n")
    proc = run_tool("--vllm-src", str(root), str(SEED), "--write-baseline", str(baseline))
    assert proc.returncode == 0
    assert "tests/elsewhere.py::stale-field:X.y:z" in baseline.read_text().splitlines()


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("tests/x.py::missing-attribute:Impl.run\n", "baseline.txt:1: baseline entry"),
        ("# ok\n\ntests/x.py::no-such-kind:Impl.run:x\n", "baseline.txt:3: baseline entry"),
        ("missing-attribute:Impl.run:x\n", "is not FILE::kind:Class.method:name"),
        (b"\xff\xfe", "not UTF-8"),
    ],
)
def test_malformed_baseline_is_exit_2_with_one_line(release_src, tmp_path, content, needle):
    baseline = tmp_path / "baseline.txt"
    if isinstance(content, bytes):
        baseline.write_bytes(content)
    else:
        baseline.write_text(content)
    root = release_src("0.34.0")
    proc = run_tool("--vllm-src", str(root), str(SEED), "--baseline", str(baseline))
    one_line_error(proc, needle)


# -- inline suppression -----------------------------------------------------------------------

_STUB_LINE = "    impl = object.__new__(AiterMLAImpl)\n"
_CALL_LINE = "    builder._init_fp8_prefill_ps_buffers(\n"
BOTH = {"missing-argument", "missing-attribute"}


@pytest.mark.parametrize(
    ("line", "comment", "left"),
    [
        (_STUB_LINE, "", BOTH),
        # On the stub's object.__new__ line: silences that stub's findings of the kinds named.
        (_STUB_LINE, "  # audit-stubs: ignore", {"missing-argument"}),
        (_STUB_LINE, "  # audit-stubs: ignore[missing-attribute]", {"missing-argument"}),
        (_STUB_LINE, "  # audit-stubs:ignore[stale-field,missing-attribute]", {"missing-argument"}),
        (_STUB_LINE, "  # audit-stubs: ignore[missing-argument]", BOTH),  # not this stub's
        (_STUB_LINE, "  # audit-stubs: ignore[stale-field]", BOTH),
        (_STUB_LINE, "  # type: ignore[missing-attribute]", BOTH),
        # On the line a finding points at (the call), like ``# type: ignore[code]``.
        (_CALL_LINE, "  # audit-stubs: ignore[missing-argument]", {"missing-attribute"}),
        (_CALL_LINE, "  # audit-stubs: ignore[missing-attribute]", BOTH),
    ],
)
def test_inline_ignore_silences_the_kinds_it_names(release_src, tmp_path, line, comment, left):
    text = SEED.read_text()
    assert text.count(line) == 1
    test_file = tmp_path / SEED.name
    test_file.write_text(text.replace(line, line.rstrip("\n") + comment + "\n"))
    proc = run_tool("--vllm-src", str(release_src("0.34.0")), str(test_file), "--format", "json")
    assert {f["kind"] for f in json.loads(proc.stdout)} == left
    assert proc.returncode == 1
    assert ("silenced inline" in proc.stderr) is (left != BOTH)


def test_inline_ignore_naming_no_kind_is_exit_2_naming_the_line(release_src, tmp_path):
    test_file = tmp_path / SEED.name
    test_file.write_text(
        SEED.read_text().replace(
            _STUB_LINE,
            "    impl = object.__new__(AiterMLAImpl)  # audit-stubs: ignore[missing-atribute]\n",
        )
    )
    proc = run_tool("--vllm-src", str(release_src("0.34.0")), str(test_file))
    line = SEED.read_text().splitlines(keepends=True).index(_STUB_LINE) + 1
    one_line_error(proc, f"{test_file}:{line}: '# audit-stubs: ignore[...]' names no finding kind")


# -- file-scoped allowlist --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "silenced"),
    [
        (f"{SEED.name}::missing-attribute:AiterMLAImpl.*:*", False),  # not the file's path
        ("*/seed_fp8_prefill_stubs.py::missing-attribute:AiterMLAImpl.*:*", True),
        ("*/other_file.py::missing-attribute:AiterMLAImpl.*:*", False),
        ("*/seed_fp8_prefill_stubs.py::*:*.*:*", True),  # a whole file: deliberate, allowed
    ],
)
def test_file_scoped_allowlist_entries_silence_only_their_files(
    release_src, tmp_path, entry, silenced
):
    allowlist = tmp_path / "allow.txt"
    allowlist.write_text(entry + "\n")
    proc = run_tool(
        "--vllm-src", str(release_src("0.34.0")), str(SEED), "--allowlist", str(allowlist)
    )
    assert ("_fp8_prefill_one_scale" not in proc.stdout) is silenced, proc.stdout + proc.stderr
    assert proc.returncode in (0, 1)


@pytest.mark.parametrize(
    ("entry", "needle"),
    [
        ("*::*:*:*", "matches every finding"),
        ("*::*", "matches every finding"),
        ("::missing-attribute:A.b:c", "names no file before '::'"),
        ("tests/x.py::missing-attribute", "is not of the form"),
        ("tests/x.py::nope:A.b:c", "matches no finding kind"),
    ],
)
def test_malformed_scoped_allowlist_is_exit_2_naming_file_and_line(
    release_src, tmp_path, entry, needle
):
    allowlist = tmp_path / "allow.txt"
    allowlist.write_text("# header\n" + entry + "\n")
    proc = run_tool(
        "--vllm-src", str(release_src("0.34.0")), str(SEED), "--allowlist", str(allowlist)
    )
    one_line_error(proc, f"{allowlist}:2: allowlist entry")
    assert needle in proc.stderr
