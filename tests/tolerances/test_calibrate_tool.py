"""tools/calibrate_tolerance.py: bad input is one line and exit 2, an unusable backend says why
(exit 3), ``--check`` verifies the shipped file, a tampered file is refused. The CLI runs as a
subprocess, as a user runs it; the case table is checked on the library it calls."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from factories.accuracy import calibration
from factories.accuracy.cases import CPU_CASES
from factories.accuracy.tolerance import TOLERANCE_FILE

TOOL = Path(__file__).resolve().parents[2] / "tools" / "calibrate_tolerance.py"


def cli(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(TOOL), *argv], capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--seeds", "0"], "--seeds must be >= 1"),
        (["--soak", "-3"], "--soak must be >= 1"),
        (["--cases", "nope"], "unknown case id(s) nope"),
        (["--backend", "gfx942"], "--backend must be emulated or aiter"),
        (["--check", "--soak", "2"], "separate commands"),
        (["--png", "plot.jpg"], "must name a .png"),
        (["--seed0", "-1"], "--seed0 must be >= 0"),
        (["--variant", "p16"], "unknown --variant 'p16'; give 'envelope' or one of"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, message):
    result = cli(*argv)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr


def test_argparse_errors_exit_2():
    assert cli("--seeds", "many").returncode == 2


def test_aiter_backend_is_gated_with_the_precise_reason():
    from factories.aiter.backend import real_aiter_unusable_reason

    reason = real_aiter_unusable_reason()
    if reason is None:
        pytest.skip("real AITER is usable here; the gate does not fire")
    result = cli("--backend", "aiter", "--dry-run")
    assert result.returncode == 3 and reason in result.stderr, result.stderr


def test_check_verifies_the_shipped_file_and_refuses_a_tampered_one(tmp_path):
    result = cli("--check")
    assert result.returncode == 0 and "digest OK" in result.stdout, result.stderr
    data = json.loads(TOLERANCE_FILE.read_text())
    data["tolerances"]["gfx950"]["out_atol"] = 0.5
    bad = tmp_path / "t.json"
    bad.write_text(json.dumps(data))
    result = cli("--check", "--file", str(bad))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "digest mismatch" in result.stderr, result.stderr


def test_the_sweep_mirrors_the_suite_matrix():
    """The calibration's case table is the suite's CPU matrix (same ids, shapes, CU counts), and
    its default and quick sweeps are drawn from it."""
    assert list(calibration.MATRIX.values()) == list(CPU_CASES)
    assert set(calibration.DEFAULT_CASES) | set(calibration.QUICK_CASES) <= set(calibration.MATRIX)
    assert all(calibration.MATRIX[c].total_tokens < 8192 for c in calibration.DEFAULT_CASES)


def test_gpu_model_check_is_gated_without_a_device():
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA/ROCm device is present; the gate does not fire")
    result = cli("--gpu-model-check")
    assert result.returncode == 3 and "no CUDA/ROCm device" in result.stderr, result.stderr
