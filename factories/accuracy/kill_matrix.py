"""The kill matrix: every kernel mutant through vLLM's real FP8 prefill entry, judged.

Why: a tolerance is only validated by the bugs it fails on. :func:`run_kill_matrix` runs each
mutant of :mod:`factories.mutation.broken_kernels` through
:func:`factories.accuracy.run_fp8_prefill` and judges it with the seed test's bound, the derived
tolerance and the error statistic, so docs/TOLERANCES.md can show which check kills which bug.
It lives with the accuracy checks (not with the mutants) because it depends on them: the
mutants depend only on the emulated AITER.
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import torch

from factories.mutation.broken_kernels import BASE_BACKEND, MUTANTS, KernelMutant, aiter_backend_for


@attrs.frozen
class KillCase:
    """One batch of the kill matrix. ``previous_lens``: the batch run first for mutants that read
    the previous plan."""

    id: str
    lens: tuple[int, ...]
    heads: int
    decodes: int
    cu: int
    seed: int = 0
    previous_lens: tuple[int, ...] = (64, 700, 1, 300)


#: Small batches that split tiles at small CU counts, so reduce and slot mutants are visible.
KILL_CASES = (
    KillCase("split-cu80-h16", (600, 1, 300, 129), 16, 2, 80),
    KillCase("split-cu32-h16", (1000, 300, 1, 517), 16, 2, 32),
)


@attrs.frozen
class Verdict:
    """How one mutant run fared under one check. ``reasons`` is empty when it survived."""

    check: str
    killed: bool
    reasons: tuple[str, ...]


@attrs.frozen
class MutantOutcome:
    """One mutant (or the control) on one base and case: its verdicts and what they saw."""

    mutant: str
    base: str
    case: str
    raised: str | None
    verdicts: dict[str, Verdict]
    stats: dict[str, float]
    out_err_max: float
    lse_err_max: float


def _golden(run) -> tuple[torch.Tensor, torch.Tensor]:
    from factories.accuracy import causal_reference

    q8, k8, v8 = (t.to(run.fp8_dtype) for t in (run.q, run.k, run.v))
    return causal_reference(q8, k8, v8, run.prefill_lens, run.softmax_scale)


def run_case(case: KillCase, backend: types.ModuleType, *, previous: bool = False):
    """One forward of ``case`` through vLLM's FP8 prefill path with ``backend`` as AITER."""
    from factories.accuracy import run_fp8_prefill

    kw = {"num_decodes": case.decodes, "cu_count": case.cu}
    if previous:
        run_fp8_prefill(case.previous_lens, case.heads, backend, seed=case.seed + 1, **kw)
    return run_fp8_prefill(case.lens, case.heads, backend, seed=case.seed, **kw)


def judge(
    run, golden, tolerance, seed_tolerance, stat_bounds
) -> tuple[dict[str, Verdict], dict[str, float], float, float]:
    """The verdicts of the four checks on one run: ``seed`` (output element-wise at the seed
    test's bound, as its assert_close did: no LSE, no plan checks), ``tolerance`` (the suite's
    full check with the derived tolerance), ``statistic`` (the error statistic against its
    bounds) and ``shipped`` (what ``pytest tests/`` runs: tolerance and statistic)."""
    from factories.accuracy import V_HEAD_DIM, check_fp8_prefill, check_outputs
    from factories.accuracy.error_stats import error_stats

    ref_out, _ = golden
    out = run.out.view(run.total_tokens, run.num_heads, V_HEAD_DIM)
    seed_report = check_outputs(out, ref_out, seed_tolerance)
    report = check_fp8_prefill(run, tolerance)
    stats = error_stats(out, ref_out)
    stat_problems = stat_bounds.violations(stats)
    verdicts = {
        "seed": Verdict("seed", not seed_report.ok, seed_report.problems),
        "tolerance": Verdict("tolerance", not report.ok, report.problems),
        "statistic": Verdict("statistic", bool(stat_problems), tuple(stat_problems)),
    }
    verdicts["shipped"] = Verdict(
        "shipped",
        verdicts["tolerance"].killed or verdicts["statistic"].killed,
        verdicts["tolerance"].reasons + verdicts["statistic"].reasons,
    )
    lse_err = report.lse.max_abs_err if report.lse is not None else 0.0
    return verdicts, stats.as_dict(), report.out.max_abs_err, lse_err


def run_mutant(
    case: KillCase,
    base: str,
    mutant: KernelMutant | None,
    tolerance,
    seed_tolerance,
    stat_bounds,
) -> MutantOutcome:
    """Run ``mutant`` (None: the control) on ``base`` and judge it. A run that raises is killed
    by every check (on the device it would have faulted or been rejected)."""
    backend = aiter_backend_for(base, mutant)
    name = mutant.name if mutant else "control"
    try:
        run = run_case(case, backend, previous=bool(mutant and mutant.needs_previous))
    except Exception as exc:  # a raising mutant is a detected mutant
        msg = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        checks = ("seed", "tolerance", "statistic", "shipped")
        verdicts = {c: Verdict(c, True, (f"run raised {msg}",)) for c in checks}
        return MutantOutcome(name, base, case.id, msg, verdicts, {}, math.inf, math.inf)
    verdicts, stats, out_err, lse_err = judge(
        run, _golden(run), tolerance, seed_tolerance, stat_bounds
    )
    return MutantOutcome(name, base, case.id, None, verdicts, stats, out_err, lse_err)


def run_kill_matrix(
    cases: Sequence[KillCase],
    bases: Sequence[str],
    tolerances: dict[str, Any],
    stat_bounds: dict[str, Any],
    seed_tolerance: Any,
    mutants: Sequence[KernelMutant] | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[MutantOutcome]:
    """Every mutant (and a control) x ``bases`` x ``cases``. ``tolerances``/``stat_bounds`` are
    keyed by tolerance-file backend (``BASE_BACKEND[base]``)."""
    outcomes = []
    chosen = list(MUTANTS.values()) if mutants is None else list(mutants)
    for base in bases:
        backend = BASE_BACKEND[base]
        for case in cases:
            for mutant in [None, *chosen]:
                outcome = run_mutant(
                    case, base, mutant, tolerances[backend], seed_tolerance, stat_bounds[backend]
                )
                outcomes.append(outcome)
                if progress is not None:
                    marks = " ".join(
                        f"{c}={'K' if v.killed else '-'}" for c, v in outcome.verdicts.items()
                    )
                    progress(f"[kill] {base:10s} {case.id:16s} {outcome.mutant:22s} {marks}")
    return outcomes
