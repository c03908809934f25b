"""tools/calibrate_tolerance.py: bad input is one line and exit 2, an unusable backend says why
(exit 3), ``--check`` verifies the shipped file, a tampered file is refused."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("calibrate_tolerance", REPO / "tools" / "calibrate_tolerance.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
    ],
)
def test_bad_input_is_one_line_and_exit_2(tool, capsys, argv, message):
    assert tool.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_argparse_errors_exit_2(tool, capsys):
    assert tool.main(["--seeds", "many"]) == 2


def test_aiter_backend_is_gated_with_the_precise_reason(tool, capsys):
    from factories.aiter.backend import real_aiter_unusable_reason

    reason = real_aiter_unusable_reason()
    if reason is None:
        pytest.skip("real AITER is usable here; the gate does not fire")
    assert tool.main(["--backend", "aiter", "--dry-run"]) == 3
    assert reason in capsys.readouterr().err


def test_check_verifies_the_shipped_file_and_refuses_a_tampered_one(tool, capsys, tmp_path):
    assert tool.main(["--check"]) == 0
    assert "digest OK" in capsys.readouterr().out
    from factories.accuracy.tolerance_file import TOLERANCE_FILE

    data = json.loads(TOLERANCE_FILE.read_text())
    data["tolerances"]["gfx950"]["out_atol"] = 0.5
    bad = tmp_path / "t.json"
    bad.write_text(json.dumps(data))
    assert tool.main(["--check", "--file", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "digest mismatch" in err


def test_the_sweep_mirrors_the_suite_matrix(tool):
    """The tool's case table is the suite's CPU matrix (same ids, shapes, CU counts)."""
    spec = importlib.util.spec_from_file_location("acc", REPO / "tests" / "accuracy" / "test_fp8_prefill_accuracy.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    suite = {c.id: (c.lens, c.decodes, c.heads, c.cu) for c in module.CASES if not c.gpu}
    assert suite == tool.MATRIX


def test_gpu_model_check_is_gated_without_a_device(tool, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA/ROCm device is present; the gate does not fire")
    assert tool.main(["--gpu-model-check"]) == 3
    assert "no CUDA/ROCm device" in capsys.readouterr().err
