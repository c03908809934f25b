"""Kernel-level mutants of the emulated AITER, and the kill matrix that proves the checks see them.

Why: a tolerance is only validated by bugs it fails on. Each mutant here is a realistic kernel or
launcher bug of the FP8 MLA prefill path (known-regressions R3, R13, R15, R16 and their kin),
re-created as a variant of :mod:`factories.aiter.emulation` *without editing it*:

- **source mutants** apply a :class:`factories.mutation.source.Mutation` to the text of
  ``factories/aiter/emulation/kernels.py`` and execute the result as a new module inside the
  ``factories.aiter.emulation`` package (the original is never touched; a mutation whose text is
  not found exactly once raises, so a mutant cannot silently stop applying);
- **wrapper mutants** change what the two kernels are handed (a scale, a plan row, where the
  partials land) and call the unmutated kernel.

Two *bases* carry the mutants: ``emulated`` (the emulation as shipped: fp32 P) and ``gfx950-p8``
(the emulation with the assumed gfx950 arithmetic of :mod:`factories.accuracy.error_model` inside its
split pipeline: P rounded to e4m3fn per 128-key step against the running max). The first is what
``pytest tests/`` runs on CPU; the second shows what the gfx950 tolerance can see, since on the
device the fp8-P noise is added to every mutant's signal.

:func:`run_kill_matrix` runs every mutant through vLLM's real FP8 prefill entry
(:func:`factories.accuracy.run_fp8_prefill`) and judges it with the seed test's bound, the derived
tolerance and the error statistic.
"""

from __future__ import annotations

import functools
import importlib.machinery
import inspect
import itertools
import math
import sys
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
import torch

from factories.accuracy.error_model import LOG2E, KV_STEP, round_p
from factories.mutation.source import Mutation

KERNELS_RELPATH = "factories/aiter/emulation/kernels.py"
_PACKAGE = "factories.aiter.emulation"


# --------------------------------------------------------------------------------------------
# The in-pipeline P-rounding softmax (the gfx950 model inside the emulated split pipeline)
# --------------------------------------------------------------------------------------------


def rounded_p_softmax_pv(
    s: torch.Tensor,
    v: torch.Tensor,
    need_lse: bool,
    p_dtype: torch.dtype,
    *,
    exp2_folded: bool = True,
    row_sum_of_rounded_p: bool = False,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``(o [n, r, Dv], lse [n, r] or None)`` for scores ``s [n, r, w]`` (masked = -inf) and
    values ``v [n, w, Dv]`` with the online softmax of :mod:`factories.accuracy.error_model`: 128-key steps
    from column 0 (a work's first key, 128-aligned by the plan), running max per step,
    ``P = exp2((s - M) log2e)`` rounded to ``p_dtype``, fp32 accumulation, ``o = acc / l``.
    Rows with nothing visible give NaN (the kernel zeroes them) and lse = -inf."""
    n, r, w = s.shape
    steps = max(1, -(-w // KV_STEP))
    pad = steps * KV_STEP - w
    if pad:
        s = torch.nn.functional.pad(s, (0, pad), value=float("-inf"))
        v = torch.nn.functional.pad(v, (0, 0, 0, pad))
    sc = s.view(n, r, steps, KV_STEP)
    running = torch.cummax(sc.amax(dim=-1), dim=-1).values  # [n, r, steps]
    safe = torch.where(torch.isfinite(running), running, torch.zeros((), device=s.device))
    if exp2_folded:
        p = torch.exp2((sc - safe[..., None]) * LOG2E)
    else:
        p = torch.exp(sc - safe[..., None])
    p8 = round_p(p, p_dtype)
    last = safe[..., -1:]
    rescale = torch.exp(safe - last)
    total = ((p8 if row_sum_of_rounded_p else p).sum(dim=-1) * rescale).sum(dim=-1)  # [n, r]
    acc = torch.einsum("nrck,nckd->nrd", p8 * rescale[..., None], v.reshape(n, steps, KV_STEP, v.size(-1)))
    o = acc / total[..., None]
    lse = None
    if need_lse:
        lse = torch.where(total > 0, total.log() + last[..., 0], torch.full_like(total, float("-inf")))
    return o, lse


def _softmax_edit(p_dtype: torch.dtype) -> Mutation:
    return Mutation(
        KERNELS_RELPATH,
        "    lse = torch.logsumexp(s, dim=-1) if need_lse else None  # -inf where nothing is visible\n"
        "    p = torch.softmax(s, dim=-1)  # NaN on rows with nothing visible; zeroed below\n"
        "    del s\n"
        "    o = torch.bmm(p, v).mul_(ops.v_scale)\n",
        "    o, lse = _ROUNDED_P_SOFTMAX_PV(s, v, need_lse)\n"
        "    del s\n"
        "    o = o.mul_(ops.v_scale)\n",
        description=f"P rounded to {p_dtype} per 128-key step before P.V",
    )


# --------------------------------------------------------------------------------------------
# Building kernel variants
# --------------------------------------------------------------------------------------------

_SERIAL = itertools.count()
_VARIANTS: dict[tuple, types.ModuleType] = {}


def kernels_variant(edits: Sequence[Mutation] = (), p_dtype: torch.dtype | None = None) -> types.ModuleType:
    """The emulated ``kernels`` module with ``edits`` applied (and, when ``p_dtype`` is given, P
    rounded to it). Cached: one module per distinct variant, registered in ``sys.modules``."""
    import factories.aiter.emulation.kernels as original

    if not edits and p_dtype is None:
        return original
    key = (tuple(edits), p_dtype)
    if key in _VARIANTS:
        return _VARIANTS[key]
    path = Path(original.__file__)
    text = path.read_text(encoding="utf-8")
    all_edits = list(edits) + ([_softmax_edit(p_dtype)] if p_dtype is not None else [])
    for edit in all_edits:
        if edit.relpath != KERNELS_RELPATH:
            raise ValueError(f"{edit.relpath}: kernel mutants edit {KERNELS_RELPATH} only")
        text = edit.apply_to_text(text)
    name = f"{_PACKAGE}._kernels_variant{next(_SERIAL)}"
    module = types.ModuleType(name, original.__doc__)
    module.__file__ = str(path)
    module.__package__ = _PACKAGE
    if p_dtype is not None:
        module.__dict__["_ROUNDED_P_SOFTMAX_PV"] = functools.partial(rounded_p_softmax_pv, p_dtype=p_dtype)
    sys.modules[name] = module
    exec(compile(text, f"{path} [{', '.join(e.description for e in all_edits)}]", "exec"), module.__dict__)
    _VARIANTS[key] = module
    return module


#: Kernel bases: name -> P rounding dtype (None: the emulation's fp32 P).
BASES: dict[str, torch.dtype | None] = {"emulated": None, "gfx950-p8": torch.float8_e4m3fn}
#: The tolerance-file backend each base is judged with.
BASE_BACKEND = {"emulated": "emulated", "gfx950-p8": "gfx950"}


def _bind(fn: Callable[..., Any], args: tuple, kwargs: dict) -> inspect.BoundArguments:
    bound = inspect.signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    return bound


Wrapper = Callable[[Callable[..., Any]], Callable[..., Any]]


@attrs.frozen
class KernelMutant:
    """One bug. ``edits`` change the kernel source; ``wrap_prefill``/``wrap_reduce`` wrap the two
    kernels (factories taking the kernel and returning the replacement, called once per backend
    built, so state is per run); ``p_dtype`` replaces the base's P rounding; ``needs_previous``
    asks the harness to run a different batch first (the bug reads the previous plan)."""

    name: str
    description: str
    regression: str  # the known-regressions case it stands for
    edits: tuple[Mutation, ...] = ()
    wrap_prefill: Wrapper | None = None
    wrap_reduce: Wrapper | None = None
    p_dtype: torch.dtype | None = None
    needs_previous: bool = False


def aiter_backend_for(base: str, mutant: KernelMutant | None = None) -> types.ModuleType:
    """A module with AITER's four PS-prefill functions: the emulation's planner and the ``base``
    kernels with ``mutant`` applied. Fresh per call (wrapper state is per backend)."""
    import factories.aiter.emulation as emulation

    if base not in BASES:
        raise KeyError(f"unknown kernel base {base!r}; known: {sorted(BASES)}")
    p_dtype = BASES[base]
    edits: tuple[Mutation, ...] = ()
    if mutant is not None:
        edits = mutant.edits
        if mutant.p_dtype is not None:
            p_dtype = mutant.p_dtype
    kernels = kernels_variant(edits, p_dtype)
    label = f"{base}+{mutant.name}" if mutant else base
    module = types.ModuleType("aiter")
    # vLLM asks importlib.util.find_spec("aiter"), which needs a spec on the installed module.
    module.__spec__ = importlib.machinery.ModuleSpec("aiter", None)
    module.__doc__ = f"emulated AITER, kernels {label}"
    module.get_ps_metadata_info_v1 = emulation.get_ps_metadata_info_v1
    module.get_ps_metadata_v1 = emulation.get_ps_metadata_v1
    prefill, reduce = kernels.mla_prefill_ps_asm_fwd, kernels.mla_reduce_v1
    if mutant is not None and mutant.wrap_prefill is not None:
        prefill = mutant.wrap_prefill(prefill)
    if mutant is not None and mutant.wrap_reduce is not None:
        reduce = mutant.wrap_reduce(reduce)
    module.mla_prefill_ps_asm_fwd = prefill
    module.mla_reduce_v1 = reduce
    module.KERNEL_BASE = base
    module.MUTANT = mutant.name if mutant else None
    return module


# --------------------------------------------------------------------------------------------
# The catalogue
# --------------------------------------------------------------------------------------------


def _scaled_softmax(factor: float) -> Wrapper:
    def wrap(fn):
        def mla_prefill_ps_asm_fwd(*args, **kwargs):
            b = _bind(fn, args, kwargs)
            b.arguments["softmax_scale"] = float(b.arguments["softmax_scale"]) * factor
            return fn(*b.args, **b.kwargs)

        return mla_prefill_ps_asm_fwd

    return wrap


def _v_as_fnuz(fn):
    """V's e4m3fn bytes read as e4m3fnuz: exponent bias 8 instead of 7 halves every normal and
    subnormal value (known-regressions R15). Modelled as v_scale * 0.5; the exact
    reinterpretation would also turn the byte 0x80 (-0 in fn) into NaN, which any finiteness check
    catches, so the uniform halving is the hard case."""

    def mla_prefill_ps_asm_fwd(*args, **kwargs):
        b = _bind(fn, args, kwargs)
        b.arguments["v_scale"] = b.arguments["v_scale"] * 0.5
        return fn(*b.args, **b.kwargs)

    return mla_prefill_ps_asm_fwd


def _lse_base2(fn):
    """The kernel stores log2(l) + m*log2e (base 2) in splitLse instead of the natural log."""

    def mla_prefill_ps_asm_fwd(*args, **kwargs):
        b = _bind(fn, args, kwargs)
        out = fn(*b.args, **b.kwargs)
        b.arguments["splitLse"].mul_(LOG2E)
        return out

    return mla_prefill_ps_asm_fwd


def _slot_plus_one(fn):
    """Partial slot p is written at rows p+1 .. p+256 (a stride/offset bug, R16): the kernel
    writes into a scratch copy that is then rolled down one row (the last row wraps to row 0)."""

    def mla_prefill_ps_asm_fwd(*args, **kwargs):
        b = _bind(fn, args, kwargs)
        data, lse = b.arguments["splitData"], b.arguments["splitLse"]
        scratch_d, scratch_l = data.clone(), lse.clone()
        b.arguments["splitData"], b.arguments["splitLse"] = scratch_d, scratch_l
        out = fn(*b.args, **b.kwargs)
        data.copy_(scratch_d.roll(1, dims=0))
        lse.copy_(scratch_l.roll(1, dims=0))
        return out

    return mla_prefill_ps_asm_fwd


def _stale_plan_row(fn):
    """The kernel reads one ``work_info`` row of the *previous* plan (the R3 race, reduced to one
    row): the first row that differs between the two plans and still addresses valid memory."""
    state: dict[str, Any] = {"previous": None}

    def mla_prefill_ps_asm_fwd(*args, **kwargs):
        b = _bind(fn, args, kwargs)
        info = b.arguments["work_info_set"]
        current = info.detach().clone()
        previous = state["previous"]
        state["previous"] = current
        if previous is not None:
            cur = current.reshape(-1, 8)
            prev = previous.reshape(-1, 8).to(cur.device)
            rows = min(len(cur), len(prev))
            tokens = b.arguments["Q"].size(0)
            pages = b.arguments["kv_page_indices"].numel()
            slots = b.arguments["splitData"].size(0)
            for i in range(rows):
                r = prev[i].tolist()
                if r == cur[i].tolist():
                    continue
                _, loc, qs, qe, ks, ke = r[:6]
                if 0 <= qs <= qe <= tokens and 0 <= ks <= ke <= pages and loc + 256 <= slots:
                    stale = cur.clone()
                    stale[i] = prev[i]
                    b.arguments["work_info_set"] = stale.reshape(info.shape)
                    break
        return fn(*b.args, **b.kwargs)

    return mla_prefill_ps_asm_fwd


def _mutants() -> dict[str, KernelMutant]:
    causal = "    s64 = kv_len - q_len + (qs - qo[b]) + 1  # per-row causal limit is s64 + r (asm 0x29D8)\n"
    found = []
    found += [
        KernelMutant(
            f"softmax-scale{sign}{pct}%",
            f"softmax_scale * {1 + s * pct / 100:g} inside the kernel (the caller's argument is right)",
            "scale errors (R15 family; a wrong 1/sqrt(d) or a stray q/k scale)",
            wrap_prefill=_scaled_softmax(1 + s * pct / 100),
        )
        for pct in (5, 2)
        for sign, s in (("+", 1), ("-", -1))
    ]
    found += [
        KernelMutant(
            "causal-bound+1",
            "every row also sees the next key (the causal limit off by one upward)",
            "masking (R16 family: per-row limits in the asm)",
            edits=(Mutation(KERNELS_RELPATH, causal, causal.replace("+ 1  #", "+ 2  #"), description="causal limit +1"),),
        ),
        KernelMutant(
            "causal-bound-1",
            "no row sees its own (diagonal) key (the causal limit off by one downward)",
            "masking (R16 family)",
            edits=(Mutation(KERNELS_RELPATH, causal, causal.replace("+ 1  #", "+ 0  #"), description="causal limit -1"),),
        ),
        KernelMutant(
            "reduce-drops-a-split",
            "the first reduce group merges all but its last partial (a loop bound off by one)",
            "reduce (R2/R13 family)",
            edits=(
                Mutation(
                    KERNELS_RELPATH,
                    "        parts = pm[ri[g] : ri[g + 1]]\n",
                    "        parts = pm[ri[g] : ri[g + 1] - (0 if out else 1)]\n",
                    description="first group drops its last partial",
                ),
                Mutation(
                    KERNELS_RELPATH,
                    '        _require(len(parts) == n, f"reduce_partial_map too short for group {g}")\n',
                    "        pass\n",
                    description="(its length check)",
                ),
            ),
        ),
        KernelMutant(
            "lse-base2",
            "split LSEs stored in base 2 (log2 l + m log2e) instead of the natural log",
            "wrong LSE (R13)",
            wrap_prefill=_lse_base2,
        ),
        KernelMutant(
            "v-read-as-e4m3fnuz",
            "V's e4m3fn bytes decoded as e4m3fnuz: every V value halved",
            "fn/fnuz mix-up (R15)",
            wrap_prefill=_v_as_fnuz,
        ),
        KernelMutant(
            "p-rounded-e5m2",
            "P rounded to e5m2 (2 mantissa bits) instead of the base's P",
            "fp8 flavour of the P matrix (R15/R16 family)",
            p_dtype=torch.float8_e5m2,
        ),
        KernelMutant(
            "stale-plan-row",
            "one work_info row comes from the previous batch's plan",
            "async-scheduling race on the persistent plan (R3)",
            wrap_prefill=_stale_plan_row,
            needs_previous=True,
        ),
        KernelMutant(
            "partial-slot+1",
            "partial slots written one row down (rows p+1 .. p+256)",
            "wrong partial slots (R16, aiter#3910)",
            wrap_prefill=_slot_plus_one,
        ),
    ]
    return {m.name: m for m in found}


MUTANTS: dict[str, KernelMutant] = _mutants()


# --------------------------------------------------------------------------------------------
# The kill matrix
# --------------------------------------------------------------------------------------------


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
    mutant: str
    base: str
    case: str
    raised: str | None
    verdicts: dict[str, Verdict]
    stats: dict[str, float]
    out_err_max: float
    lse_err_max: float

    def killed_by(self, check: str) -> bool:
        return self.verdicts[check].killed


def _golden(run) -> tuple[torch.Tensor, torch.Tensor]:
    from factories.accuracy import causal_reference

    q8, k8, v8 = (t.to(run.fp8_dtype) for t in (run.q, run.k, run.v))
    return causal_reference(q8, k8, v8, run.prefill_lens, run.softmax_scale)


def run_case(case: KillCase, backend: types.ModuleType, *, previous: bool = False):
    """One forward of ``case`` through vLLM's FP8 prefill path with ``backend`` as AITER."""
    from factories.accuracy import run_fp8_prefill

    if previous:
        run_fp8_prefill(case.previous_lens, case.heads, backend, num_decodes=case.decodes, cu_count=case.cu, seed=case.seed + 1)
    return run_fp8_prefill(case.lens, case.heads, backend, num_decodes=case.decodes, cu_count=case.cu, seed=case.seed)


def judge(run, golden, tolerance, seed_tolerance, stat_bounds) -> tuple[dict[str, Verdict], dict[str, float], float, float]:
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
        "shipped", verdicts["tolerance"].killed or verdicts["statistic"].killed,
        verdicts["tolerance"].reasons + verdicts["statistic"].reasons,
    )
    lse_err = report.lse.max_abs_err if report.lse is not None else 0.0
    return verdicts, stats.as_dict(), report.out.max_abs_err, lse_err


def run_mutant(case: KillCase, base: str, mutant: KernelMutant | None, tolerance, seed_tolerance, stat_bounds) -> MutantOutcome:
    """Run ``mutant`` (None: the control) on ``base`` and judge it. A run that raises is killed
    by every check (on the device it would have faulted or been rejected)."""
    backend = aiter_backend_for(base, mutant)
    name = mutant.name if mutant else "control"
    try:
        run = run_case(case, backend, previous=bool(mutant and mutant.needs_previous))
    except Exception as exc:  # noqa: BLE001 - a raising mutant is a detected mutant
        msg = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        verdicts = {c: Verdict(c, True, (f"run raised {msg}",)) for c in ("seed", "tolerance", "statistic", "shipped")}
        return MutantOutcome(name, base, case.id, msg, verdicts, {}, math.inf, math.inf)
    verdicts, stats, out_err, lse_err = judge(run, _golden(run), tolerance, seed_tolerance, stat_bounds)
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
                outcome = run_mutant(case, base, mutant, tolerances[backend], seed_tolerance, stat_bounds[backend])
                outcomes.append(outcome)
                if progress is not None:
                    marks = " ".join(f"{c}={'K' if v.killed else '-'}" for c, v in outcome.verdicts.items())
                    progress(f"[kill] {base:10s} {case.id:16s} {outcome.mutant:22s} {marks}")
    return outcomes


__all__ = [
    "BASES",
    "BASE_BACKEND",
    "KILL_CASES",
    "KernelMutant",
    "KillCase",
    "MUTANTS",
    "MutantOutcome",
    "Verdict",
    "aiter_backend_for",
    "judge",
    "kernels_variant",
    "rounded_p_softmax_pv",
    "run_kill_matrix",
    "run_mutant",
]
