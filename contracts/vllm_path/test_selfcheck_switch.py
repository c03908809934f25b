"""The switch between running the contracts and proving them, and ``--vllm-src``.

Plain tests here are pure functions; the ``selfcheck`` ones show that the self-proofs' mutants
are cut from the pinned release (never from the vLLM under test) and that a bad ``--vllm-src``
is one usage-error line.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from factories.stubs.drift import source_root_of
from factories.testing import hypothesis_profiles, selfcheck

REPO = Path(__file__).resolve().parents[2]
AITER_MLA_FILE = "vllm/v1/attention/backends/mla/rocm_aiter_mla.py"


def test_contract_settings_scale_the_ci_count(monkeypatch):
    monkeypatch.setenv(hypothesis_profiles.PROFILE_ENV, "ci")
    assert hypothesis_profiles.contract_settings(25, ci_derandomize=False).max_examples == 25
    assert not hypothesis_profiles.contract_settings(25, ci_derandomize=False).derandomize
    monkeypatch.setenv(hypothesis_profiles.PROFILE_ENV, "fast")
    fast = hypothesis_profiles.contract_settings(60, ci_derandomize=False)
    assert (fast.max_examples, fast.derandomize) == (9, True)
    monkeypatch.setenv(hypothesis_profiles.PROFILE_ENV, "slow")
    with pytest.raises(ValueError, match="expected one of"):
        hypothesis_profiles.contract_settings(60)


def test_selfcheck_version_is_one_setting():
    assert selfcheck.selfcheck_version({}) == selfcheck.SELFCHECK_DEFAULT
    assert selfcheck.selfcheck_version({selfcheck.SELFCHECK_VERSION_ENV: "0.33.0"}) == "0.33.0"


def test_vllm_src_problem_names_the_path(tmp_path):
    assert "no such directory" in selfcheck.vllm_src_problem(tmp_path / "nope")
    assert "no vllm/__init__.py" in selfcheck.vllm_src_problem(tmp_path)
    (tmp_path / "vllm").mkdir()
    (tmp_path / "vllm" / "__init__.py").write_text("")
    assert selfcheck.vllm_src_problem(tmp_path) is None


@pytest.mark.selfcheck
def test_mutants_are_cut_from_the_pinned_release(aiter_mla, mutant, selfcheck_root):
    pinned = mutant()
    root, path = source_root_of(pinned.AiterMLAMetadataBuilder)
    assert path.read_bytes() == (selfcheck_root / AITER_MLA_FILE).read_bytes()
    assert root != source_root_of(aiter_mla.AiterMLAImpl)[0]
    assert root != selfcheck_root  # a temporary copy: the cache is never written


def run_pytest(*args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "pytest", "contracts/test_ps_table.py", "-q"]
    cmd += ["-p", "no:cacheprovider", *args]
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)


@pytest.mark.selfcheck
def test_a_missing_vllm_src_is_one_usage_line(tmp_path):
    proc = run_pytest("--vllm-src", str(tmp_path / "nowhere"))
    errors = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert errors == [f"ERROR: --vllm-src {tmp_path / 'nowhere'}: no such directory"]


@pytest.mark.selfcheck
def test_an_unimportable_vllm_src_is_one_usage_line(tmp_path):
    (tmp_path / "vllm").mkdir()
    (tmp_path / "vllm" / "__init__.py").write_text("raise ImportError('broken checkout')\n")
    proc = run_pytest("--vllm-src", str(tmp_path))
    errors = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert len(errors) == 1, errors
    assert "cannot import vllm.v1.attention.backends.mla.rocm_aiter_mla" in errors[0]
    assert "ImportError: broken checkout" in errors[0]
