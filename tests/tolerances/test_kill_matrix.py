"""Every kernel mutant is killed by the shipped checks (derived tolerance + error statistic) on
the emulated backend, and the unmutated control passes. One small batch that splits tiles
(16 heads, CU 80: reduce groups exist), through vLLM's real FP8 prefill entry."""

from __future__ import annotations

import inspect
import math

import pytest
import torch

import factories.aiter.emulation as emulation
from factories.accuracy import SEED_ATOL, SEED_RTOL, Tolerance
from factories.accuracy.kill_matrix import KILL_CASES, run_mutant
from factories.accuracy.tolerance import file_tolerance, read
from factories.aiter.emulation import ARITHMETIC_VARIANTS, KernelArithmetic
from factories.aiter.emulation.arithmetic import NO_FAULTS
from factories.mutation.broken_kernels import BASES, MUTANTS, aiter_backend_for, arithmetic_for

pytestmark = pytest.mark.requires_vllm

CASE = KILL_CASES[0]


@pytest.fixture(scope="module")
def bounds():
    emulated = file_tolerance(read(), "emulated")
    seed = Tolerance("seed", "seed", SEED_ATOL, SEED_RTOL, math.inf, 0.0, "seed test")
    return emulated.elementwise(), seed, emulated.stats


def test_every_mutant_builds_a_backend_with_aiters_signatures():
    """Mutants are parameters and wrappers of the one emulation (no source copies): every backend
    exposes AITER's exact signatures and runs the emulation's own functions underneath."""
    for base in BASES:
        for mutant in (None, *MUTANTS.values()):
            backend = aiter_backend_for(base, mutant)
            for name in ("mla_prefill_ps_asm_fwd", "mla_reduce_v1"):
                fn, real = getattr(backend, name), getattr(emulation, name)
                assert inspect.signature(fn) == inspect.signature(real)
                assert inspect.unwrap(fn) is real
            assert backend.KERNEL_ARITHMETIC == arithmetic_for(base, mutant)


def test_bases_and_arithmetic_mutants_are_named_variants():
    assert BASES["emulated"] == ARITHMETIC_VARIANTS["fp32-p"]
    assert BASES["gfx950-p8"] == ARITHMETIC_VARIANTS["p8-unscaled"]
    for base in BASES:  # the mutant replaces the base's P rounding, whatever it was
        got = arithmetic_for(base, MUTANTS["p-rounded-e5m2"])
        assert got == KernelArithmetic(p_dtype=torch.float8_e5m2)
    faulty = {n for n, m in MUTANTS.items() if m.faults != NO_FAULTS}
    assert faulty == {"causal-bound+1", "causal-bound-1", "reduce-drops-a-split"}


def test_the_control_passes_and_splits(bounds):
    tol, seed, stats = bounds
    outcome = run_mutant(CASE, "emulated", None, tol, seed, stats)
    assert outcome.raised is None
    assert not outcome.verdicts["shipped"].killed, outcome.verdicts["shipped"].reasons
    # final_lse was compared on merged rows, so the case splits tiles and the reduce runs.
    assert 0 < outcome.lse_err_max < tol.lse_atol, (
        "the kill case must split tiles, or reduce mutants are invisible"
    )


@pytest.mark.parametrize("name", list(MUTANTS))
def test_mutant_is_killed_by_the_shipped_checks(name, bounds):
    tol, seed, stats = bounds
    outcome = run_mutant(CASE, "emulated", MUTANTS[name], tol, seed, stats)
    assert outcome.verdicts["shipped"].killed, (
        f"{name} survived: {outcome.stats}, max|err| {outcome.out_err_max}"
    )
    if name.startswith("softmax-scale") or name == "v-read-as-e4m3fnuz":
        # Scale errors must be caught by the statistic on its own too (not only element-wise).
        assert outcome.verdicts["statistic"].killed, outcome.stats
