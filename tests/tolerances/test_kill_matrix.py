"""Every kernel mutant is killed by the shipped checks (derived tolerance + error statistic) on
the emulated backend, and the unmutated control passes. One small batch that splits tiles
(16 heads, CU 80: reduce groups exist), through vLLM's real FP8 prefill entry."""

from __future__ import annotations

import math

import pytest

from factories.accuracy import Tolerance
from factories.mutation.kernels import KILL_CASES, MUTANTS, aiter_backend_for, kernels_variant, run_mutant
from factories.accuracy.tolerance_file import derived, read

pytestmark = pytest.mark.requires_vllm

CASE = KILL_CASES[0]


@pytest.fixture(scope="module")
def bounds():
    d = derived(read(), "emulated")
    tol = Tolerance(d.backend, d.version, d.out_atol, d.out_rtol, d.lse_atol, d.lse_rtol, d.derivation)
    seed = Tolerance("seed", "seed", 0.1, 0.05, math.inf, 0.0, "seed test")
    return tol, seed, d.stat_bounds()


def test_every_source_mutant_applies_to_the_current_emulation():
    for mutant in MUTANTS.values():
        if mutant.edits or mutant.p_dtype is not None:
            module = kernels_variant(mutant.edits, mutant.p_dtype)
            assert module.mla_prefill_ps_asm_fwd is not None
    assert aiter_backend_for("gfx950-p8").mla_prefill_ps_asm_fwd is not None


def test_the_control_passes_and_splits(bounds):
    tol, seed, stats = bounds
    outcome = run_mutant(CASE, "emulated", None, tol, seed, stats)
    assert outcome.raised is None
    assert not outcome.verdicts["shipped"].killed, outcome.verdicts["shipped"].reasons
    # final_lse was compared on merged rows, so the case splits tiles and the reduce runs.
    assert 0 < outcome.lse_err_max < tol.lse_atol, "the kill case must split tiles, or reduce mutants are invisible"


@pytest.mark.parametrize("name", list(MUTANTS))
def test_mutant_is_killed_by_the_shipped_checks(name, bounds):
    tol, seed, stats = bounds
    outcome = run_mutant(CASE, "emulated", MUTANTS[name], tol, seed, stats)
    assert outcome.verdicts["shipped"].killed, f"{name} survived: {outcome.stats}, max|err| {outcome.out_err_max}"
    if name.startswith("softmax-scale") or name == "v-read-as-e4m3fnuz":
        # Scale errors must be caught by the statistic on its own too (not only element-wise).
        assert outcome.verdicts["statistic"].killed, outcome.stats
