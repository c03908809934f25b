"""The audit's result cache on a real release: 0.34.0's AITER MLA test files, stubs and
stand-ins, cold, warm and without a cache print the same; an edit to the backend they consult
misses and is found, an edit elsewhere in vLLM hits.  (The cases on tiny trees are in
``contracts/analyzer/test_result_cache.py``.)
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from contracts.analyzer.cases import cli
from factories.analysis.audit import StubAuditor

pytestmark = pytest.mark.selfcheck

BACKEND = "vllm/v1/attention/backends/mla/rocm_aiter_mla.py"
ELSEWHERE = "vllm/v1/attention/backends/flash_attn.py"
TESTS = (
    "tests/kernels/attention/test_rocm_aiter_mla_fp8_prefill.py",
    "tests/v1/attention/test_rocm_aiter_mla_mtp_split.py",
)
ANCHOR = "        from aiter import get_ps_metadata_v1\n"
EDITED = "        _ = common_attn_metadata.num_actual_tokens\n" + ANCHOR


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src / "vllm", dst / "vllm")
    for test in TESTS:
        (dst / test).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src / test, dst / test)
    return dst


def test_cached_reports_are_the_uncached_ones_and_edits_miss(release_src, tmp_path, capsys):
    root = _copy(release_src("0.34.0"), tmp_path / "src")
    cache = ["--cache-dir", str(tmp_path / "cache")]
    args = ["--standins", "--show-possible", "--format", "json", *(str(root / t) for t in TESTS)]
    uncached = cli(root, "--no-cache", *args, capsys=capsys)
    cold = cli(root, *cache, *args, capsys=capsys)
    warm = cli(root, *cache, *args, capsys=capsys)
    assert cold == uncached
    assert warm == cold

    computed: list[str] = []
    original = StubAuditor._compute_file

    def counted(auditor, path, *rest, **kwargs):
        computed.append(Path(path).name)
        return original(auditor, path, *rest, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(StubAuditor, "_compute_file", counted)
        flash = root / ELSEWHERE
        flash.write_text(flash.read_text(encoding="utf-8") + "\n# an edit\n", encoding="utf-8")
        assert cli(root, *cache, *args, capsys=capsys)[:2] == cold[:2]
        assert computed == []

        backend = root / BACKEND
        text = backend.read_text(encoding="utf-8")
        assert text.count(ANCHOR) == 1
        backend.write_text(text.replace(ANCHOR, EDITED), encoding="utf-8")
        status, out, _ = cli(root, *cache, *args, capsys=capsys)
        assert sorted(computed) == sorted(Path(t).name for t in TESTS)
        assert status == 1 and "common_attn_metadata.num_actual_tokens" in out
        assert (status, out) == cli(root, "--no-cache", *args, capsys=capsys)[:2]
