"""The suite's own checks fail on broken input: the reference, the comparison, the plan readers,
the recorder, the gates (vLLM missing, CI requiring it, --aiter-backend=aiter off gfx950) and the
xdist device pinning. None of these needs vLLM or a GPU, except where a subprocess runs the real
suite with ``vllm`` blocked."""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import numpy as np
import pytest
import torch

from factories.accuracy import (
    EMULATED_TOLERANCE,
    REAL_GFX950_TOLERANCE,
    SEED_ATOL,
    SEED_RTOL,
    TOLERANCES,
    causal_reference,
    check_outputs,
    match_heads,
    planned_split_rows,
    recording_kernels,
    reduced_rows,
    tolerance_for,
)
from factories.accuracy.reference import reference_attention
from factories.aiter.backend import BACKENDS, real_aiter_unusable_reason, select_backend
from factories.aiter.spy import last_call
from factories.testing.suite_env import (
    REQUIRE_VLLM_ENV,
    pin_worker_device,
    vllm_gate,
    worker_device,
)

REPO = Path(__file__).resolve().parents[2]
FP8 = torch.float8_e4m3fn


def fp8(*shape, seed=0):
    return (
        torch.randn(*shape, generator=torch.Generator().manual_seed(seed))
        .to(torch.bfloat16)
        .to(FP8)
    )


# --------------------------------------------------------------------------------------------
# Reference and tolerance
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("scales", [(1.0, 1.0, 1.0), (0.5, 2.0, 3.0)], ids=["unit", "scaled"])
def test_chunked_reference_matches_the_unchunked_reference(scales):
    """``causal_reference`` (chunked, 16 rows a block here) against the project's unchunked
    ``reference_attention`` on ragged requests with a 1-token one."""
    lens = (37, 1, 300, 129)
    q, k, v = (
        fp8(sum(lens), 3, 192, seed=1),
        fp8(sum(lens), 3, 192, seed=2),
        fp8(sum(lens), 3, 128, seed=3),
    )
    out, lse = causal_reference(
        q, k, v, lens, 192**-0.5, scales=scales, block_elements=3 * 300 * 16
    )
    ind = torch.tensor([0, 37, 38, 338, 467])
    want_out, want_lse = reference_attention(
        q, k, v, *scales, ind, ind, softmax_scale=192**-0.5, is_causal=True
    )
    torch.testing.assert_close(out, want_out, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(lse, want_lse, rtol=1e-12, atol=1e-12)


def test_chunked_reference_is_causal_bottom_right():
    """Row i of a request must not depend on keys after i: changing the last key changes only
    the last row."""
    q, k, v = fp8(50, 2, 192), fp8(50, 2, 192, seed=5), fp8(50, 2, 128, seed=6)
    out, _ = causal_reference(q, k, v, (50,), 0.1, block_elements=2 * 50 * 7)
    v2 = v.clone()
    v2[-1] = fp8(1, 2, 128, seed=9)[0]
    out2, _ = causal_reference(q, k, v2, (50,), 0.1, block_elements=2 * 50 * 7)
    assert torch.equal(out[:-1], out2[:-1]) and not torch.equal(out[-1], out2[-1])


def test_every_backend_has_a_documented_tolerance():
    assert set(TOLERANCES) == set(BACKENDS) - {"auto"}
    for name, tol in TOLERANCES.items():
        assert tolerance_for(name) is tol and tol.version and len(tol.source) > 200
    with pytest.raises(KeyError, match="no tolerance"):
        tolerance_for("auto")


def test_emulated_bound_is_ten_times_tighter_than_the_seed():
    assert EMULATED_TOLERANCE.out_atol * 10 <= SEED_ATOL
    assert EMULATED_TOLERANCE.out_rtol * 10 <= SEED_RTOL
    assert EMULATED_TOLERANCE.out_rtol == 2.0**-8  # bf16 unit roundoff: one rounding of the output
    # gfx950: derived from the fp8-P error model (factories/accuracy/tolerances.json,
    # docs/TOLERANCES.md), with the aggregate statistic on top; both backends check it.
    # Its rtol is the store's largest relative error over the variants it was derived for:
    # half a bf16 step (RNE), a whole one if any of them truncates (docs/TOLERANCES.md section 3).
    from factories.aiter.emulation import ARITHMETIC_VARIANTS

    truncates = any(
        ARITHMETIC_VARIANTS[v].reduce_store == "truncate" for v in REAL_GFX950_TOLERANCE.variants
    )
    assert REAL_GFX950_TOLERANCE.out_rtol == (2.0**-7 if truncates else 2.0**-8)
    assert REAL_GFX950_TOLERANCE.out_atol < 2 * SEED_ATOL
    assert EMULATED_TOLERANCE.stats is not None and REAL_GFX950_TOLERANCE.stats is not None


# --------------------------------------------------------------------------------------------
# The comparison fails on broken input
# --------------------------------------------------------------------------------------------


@pytest.fixture
def exact():
    """A reference, a bf16 output that is its correct rounding, and reduced rows 10..30."""
    g = torch.Generator().manual_seed(0)
    ref = torch.randn(40, 4, 128, generator=g, dtype=torch.float64)
    ref_lse = torch.randn(40, 4, generator=g, dtype=torch.float64) + 5
    final_lse = torch.full((40, 4), float("nan"))
    final_lse[10:30] = ref_lse[10:30].float()
    rows = np.zeros(40, dtype=bool)
    rows[10:30] = True
    return ref, ref.to(torch.bfloat16), ref_lse, final_lse, rows


def run_check(exact, out=None, final_lse=None, rows=None):
    ref, good, ref_lse, good_lse, good_rows = exact
    return check_outputs(
        good if out is None else out,
        ref,
        EMULATED_TOLERANCE,
        final_lse=good_lse if final_lse is None else final_lse,
        ref_lse=ref_lse,
        lse_rows=good_rows if rows is None else rows,
    )


def test_a_correctly_rounded_output_passes(exact):
    report = run_check(exact)
    assert report.ok, report.summary()
    assert report.lse_rows == 20 and report.out.worst_ratio <= 1.0


def test_an_unwritten_row_fails(exact):
    out = exact[1].clone()
    out[17, 2, 5] = float("nan")
    report = run_check(exact, out=out)
    assert not report.ok and report.unwritten_rows == 1
    assert "first: row 17" in report.summary()


def test_one_element_over_the_bound_fails_and_is_located(exact):
    ref, out = exact[0], exact[1].clone()
    bound = EMULATED_TOLERANCE.out_atol + EMULATED_TOLERANCE.out_rtol * abs(float(ref[23, 1, 7]))
    out[23, 1, 7] = float(ref[23, 1, 7]) + 3 * bound
    report = run_check(exact, out=out)
    assert not report.ok and report.out.failing == 1 and report.out.worst_at == (23, 1)


def test_a_wrong_lse_on_a_reduced_row_fails(exact):
    lse = exact[3].clone()
    lse[12, 3] += 4 * EMULATED_TOLERANCE.lse_atol
    report = run_check(exact, final_lse=lse)
    assert not report.ok and report.lse.failing == 1 and report.lse.worst_at == (12, 3)


def test_an_unwritten_lse_on_a_reduced_row_fails(exact):
    lse = exact[3].clone()
    lse[29, 0] = float("nan")
    assert run_check(exact, final_lse=lse).lse.failing == 1


def test_an_lse_written_outside_the_reduce_groups_fails(exact):
    lse = exact[3].clone()
    lse[3] = exact[2][3].float()
    report = run_check(exact, final_lse=lse)
    assert any("outside the reduce groups" in p for p in report.problems)


def test_minus_inf_matches_minus_inf_and_nothing_else(exact):
    ref, out, ref_lse, lse, rows = exact
    ref_lse, lse = ref_lse.clone(), lse.clone()
    ref_lse[11, 1] = lse[11, 1] = -math.inf
    assert check_outputs(
        out, ref, EMULATED_TOLERANCE, final_lse=lse, ref_lse=ref_lse, lse_rows=rows
    ).ok
    lse[11, 1] = 0.0
    assert not check_outputs(
        out, ref, EMULATED_TOLERANCE, final_lse=lse, ref_lse=ref_lse, lse_rows=rows
    ).ok


# --------------------------------------------------------------------------------------------
# Plan readers
# --------------------------------------------------------------------------------------------


def test_reduced_rows_of_the_contracts_worked_example():
    """aiter-ps-contract.md §2.4 (cu=8, one 1000-token request): groups (256,512), (512,768),
    (768,1000) with 2, 3 and 4 partials; the 4th tile is empty and the reduce stops there."""
    rows, problems = reduced_rows(
        torch.tensor([0, 2, 5, 9, 9], dtype=torch.int32),
        torch.tensor([[256, 512], [512, 768], [768, 1000], [0, 0]], dtype=torch.int32),
        1000,
    )
    assert problems == [] and rows[256:].all() and not rows[:256].any()


def test_reduced_rows_skip_single_partial_groups_and_stop_at_the_signal():
    rows, _ = reduced_rows(
        torch.tensor([0, 1, 3, 3, 5], dtype=torch.int32),  # g0: 1 partial, g1: 2, g2: 0, g3: 2
        torch.tensor([[0, 10], [10, 20], [20, 30], [30, 40]], dtype=torch.int32),
        40,
    )
    assert rows.tolist() == [False] * 10 + [True] * 10 + [False] * 10 + [True] * 10
    rows, _ = reduced_rows(
        torch.tensor([0, 2, 2, 4], dtype=torch.int32),  # g1 empty (not a stop: 2 != 4), g2: 2
        torch.tensor([[0, 5], [5, 9], [9, 12]], dtype=torch.int32),
        12,
    )
    assert rows.tolist() == [True] * 5 + [False] * 4 + [True] * 3
    rows, _ = reduced_rows(
        torch.tensor([0, 2, 4, 4], dtype=torch.int32),
        torch.tensor([[0, 5], [5, 9], [9, 12]], dtype=torch.int32),
        12,
    )
    assert rows.tolist() == [True] * 9 + [False] * 3  # g2 starts at reduce_indptr[-1]: stop


def test_malformed_reduce_maps_are_problems_not_crashes():
    _, problems = reduced_rows(
        torch.tensor([0, 2], dtype=torch.int32), torch.tensor([0, 256, 512], dtype=torch.int32), 600
    )
    assert problems and "not [groups, 2]" in problems[0]
    _, problems = reduced_rows(
        torch.tensor([0, 2], dtype=torch.int32), torch.tensor([[500, 900]], dtype=torch.int32), 600
    )
    assert problems and "outside" in problems[0]


def test_planned_split_rows_count_only_launched_partial_works():
    info = torch.zeros(5, 8, dtype=torch.int32)
    info[0, 1:4] = torch.tensor([-1, 0, 256])  # unsplit
    info[1, 1:4] = torch.tensor([0, 256, 400])  # split
    info[2, 1:4] = torch.tensor([256, 256, 400])  # split
    info[3, 1:4] = torch.tensor([512, 400, 500])  # split, but past work_indptr[-1]: never launched
    rows = planned_split_rows(torch.tensor([0, 1, 3], dtype=torch.int32), info, 500)
    assert rows[256:400].all() and not rows[:256].any() and not rows[400:].any()


@pytest.mark.parametrize(
    "pad, expected",
    [
        (lambda t: t, list(range(12))),
        (lambda t: t.repeat_interleave(2, dim=1), [h // 2 for h in range(24)]),
        (lambda t: t.repeat(1, 2, 1)[:, :16].contiguous(), list(range(12)) + [0, 1, 2, 3]),
        (lambda t: torch.cat([t, torch.zeros_like(t[:, :4])], dim=1), list(range(12)) + [None] * 4),
    ],
    ids=["identity", "repeat-interleave", "tile", "zero-padded"],
)
def test_match_heads_reads_the_padding_from_the_data(pad, expected):
    q = fp8(70, 12, 192)
    assert match_heads(pad(q), q) == expected


# --------------------------------------------------------------------------------------------
# Recorder
# --------------------------------------------------------------------------------------------


def test_recording_kernels_poison_outputs_record_arguments_and_forward():
    seen = []

    def fwd(*args, **kwargs):
        seen.append(("fwd", [torch.isnan(a).all().item() for a in args[11:14]]))

    def red(*args, **kwargs):
        if len(args) < 9:
            seen.append(("red", "unbound"))
            return
        seen.append(("red", torch.isnan(args[8]).all().item(), torch.isnan(args[7]).any().item()))

    backend = types.ModuleType("fake")
    backend.mla_prefill_ps_asm_fwd, backend.mla_reduce_v1 = fwd, red
    module, calls = recording_kernels(backend)
    t = torch.zeros(4)
    module.mla_prefill_ps_asm_fwd(
        *[t.clone() for _ in range(9)],
        0.1,
        True,
        torch.zeros(2),
        torch.zeros(2),
        torch.zeros(2),
        t,
        t,
        t,
    )
    final_out = torch.zeros(3)
    module.mla_reduce_v1(t, t, t, t, t, 256, 0, final_out, torch.zeros(3))
    assert seen == [
        ("fwd", [True, True, True]),
        ("red", True, False),
    ]  # final_output is not poisoned
    assert [c.function for c in calls] == ["mla_prefill_ps_asm_fwd", "mla_reduce_v1"]
    assert last_call(calls, "mla_prefill_ps_asm_fwd").arguments["is_causal"] is True
    assert last_call(calls, "mla_reduce_v1").arguments["final_output"] is final_out
    module.mla_reduce_v1(t, t)  # does not bind: recorded with the error, forwarded regardless
    assert "missing" in last_call(calls, "mla_reduce_v1").bind_error
    assert seen[-1] == ("red", "unbound")


# --------------------------------------------------------------------------------------------
# Gates and xdist
# --------------------------------------------------------------------------------------------


def test_vllm_gate_skips_or_fails_by_the_ci_variable():
    assert vllm_gate(None, {REQUIRE_VLLM_ENV: "1"}) == ("run", "")
    assert vllm_gate("vllm gone", {}) == ("skip", "vllm gone")
    assert vllm_gate("vllm gone", {REQUIRE_VLLM_ENV: "0"}) == ("skip", "vllm gone")
    assert vllm_gate("vllm gone", {REQUIRE_VLLM_ENV: "1"}) == (
        "fail",
        f"{REQUIRE_VLLM_ENV}=1 but vllm gone",
    )


def test_aiter_backend_option_resolves_with_the_precise_reason():
    reason = real_aiter_unusable_reason()
    if reason is None:
        assert select_backend("auto").name == select_backend("aiter").name == "aiter"
    else:
        with pytest.raises(LookupError) as info:
            select_backend("aiter")
        assert str(info.value) == reason
        assert select_backend("auto").name == "emulated"
    assert select_backend("emulated").is_emulated
    with pytest.raises(ValueError):
        select_backend("real")


@pytest.mark.parametrize(
    "worker, count, expected",
    [
        ("gw0", 8, 0),
        ("gw5", 8, 5),
        ("gw9", 8, 1),
        ("gw3", 1, 0),
        ("gw3", 0, None),
        (None, 8, None),
        ("master", 8, None),
    ],
)
def test_worker_device_mapping(worker, count, expected):
    env = {} if worker is None else {"PYTEST_XDIST_WORKER": worker}
    assert worker_device(env, count) == expected


def test_pin_worker_device_sets_the_current_device():
    class FakeCuda:
        def __init__(self, count):
            self.count, self.current = count, None

        def is_available(self):
            return self.count > 0

        def device_count(self):
            return self.count

        def set_device(self, index):
            self.current = index

    cuda = FakeCuda(8)
    assert pin_worker_device({"PYTEST_XDIST_WORKER": "gw6"}, cuda) == 6 and cuda.current == 6
    cuda = FakeCuda(8)
    assert pin_worker_device({}, cuda) is None and cuda.current is None
    cuda = FakeCuda(0)
    assert pin_worker_device({"PYTEST_XDIST_WORKER": "gw1"}, cuda) is None and cuda.current is None


BLOCKER = textwrap.dedent(
    """
    import importlib.abc, sys

    class _NoVllm(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "vllm" or name.startswith("vllm."):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, _NoVllm())
    """
)


def run_suite(tmp_path, *args, env_extra=None):
    (tmp_path / "no_vllm_blocker.py").write_text(BLOCKER)
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_XDIST", REQUIRE_VLLM_ENV))
    }
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(REPO), env.get("PYTHONPATH", "")])
    env.update(env_extra or {})
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs", "-q", *args],
        check=False,
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


SEED_CASES = ["tests/accuracy/test_fp8_prefill_accuracy.py", "-k", "seed"]


def outcome(result) -> dict[str, int]:
    """Counts from pytest's closing line, e.g. ``2 skipped, 15 deselected, 1 warning in 0.9s``."""
    last = result.stdout.strip().splitlines()[-1]
    counts = {
        word.rstrip("s"): int(n)
        for n, word in re.findall(
            r"(\d+) (passed|failed|skipped|errors?|deselected|warnings?)", last
        )
    }
    counts.pop("warning", None)
    return counts


def test_without_vllm_the_suite_skips_with_the_reason(tmp_path):
    result = run_suite(tmp_path, "-p", "no_vllm_blocker", *SEED_CASES)
    assert result.returncode == 0, result.stdout + result.stderr
    assert {k: v for k, v in outcome(result).items() if k != "deselected"} == {"skipped": 2}, (
        result.stdout
    )
    assert "vllm's rocm_aiter_mla is not importable: ModuleNotFoundError" in result.stdout


def test_without_vllm_ci_fails_instead_of_skipping(tmp_path):
    """Under ``VLLM_GUARD_REQUIRE_VLLM=1`` the gate fails the test in its setup, before any
    fixture (pytest counts a setup failure as an error); the run exits 1."""
    result = run_suite(
        tmp_path, "-p", "no_vllm_blocker", *SEED_CASES, env_extra={REQUIRE_VLLM_ENV: "1"}
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert {k: v for k, v in outcome(result).items() if k != "deselected"} == {"error": 2}, (
        result.stdout
    )
    assert f"{REQUIRE_VLLM_ENV}=1 but vllm's rocm_aiter_mla is not importable" in result.stdout


def test_the_suite_runs_under_xdist(tmp_path):
    pytest.importorskip("xdist")
    result = run_suite(
        tmp_path,
        "-n",
        "2",
        "tests/accuracy/test_accuracy_checks.py",
        "-k",
        "gate or worker or match_heads",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "bringing up nodes" in result.stdout, result.stdout
    counts = outcome(result)
    assert counts.get("passed", 0) >= 10 and "failed" not in counts and "error" not in counts, (
        result.stdout
    )


def test_an_xdist_worker_runs_on_its_pinned_gpu(xdist_worker_gpu):
    """Inside ``pytest -n N`` on a GPU machine: worker gwK works on GPU K % count."""
    if xdist_worker_gpu is None:
        pytest.skip("not an xdist worker on a machine with a GPU")
    assert torch.cuda.current_device() == xdist_worker_gpu
    assert torch.empty(1, device="cuda").device.index == xdist_worker_gpu


def test_the_gpu_kernel_script_runs_its_smoke_cases_here():
    """tools/run_gpu_kernel_suite.py (run on the H200) works on this machine's device too."""
    import importlib.util

    from factories.stubs.workspace import workspace_device

    spec = importlib.util.spec_from_file_location(
        "run_gpu_kernel_suite", REPO / "tools" / "run_gpu_kernel_suite.py"
    )
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    result = tool.run_case(tool.CASES["smoke"][0], workspace_device())
    assert result["ok"], result
    assert result["partial_tiles"] > 0 and result["reduced_rows"] > 0
