"""Which arithmetic does a ``mla_prefill_ps_asm_fwd`` + ``mla_reduce_v1`` pair compute?

Why: the gfx950 bounds rest on an arithmetic that AITER's sources leave open (docs/TOLERANCES.md
section 2, issue 11): is P rounded to e4m3fn at all, unscaled in [0, 1], lazily rescaled (up to
2^8) or scaled per row to 448; does the row sum ``l`` see the rounding; does the reduce's bf16
store round to nearest even or truncate. A first run on MI355 that only says "pass" or "fail"
cannot tell which, so this module runs *crafted probes* through the two kernels and compares what
they return with what every candidate arithmetic (:data:`FINGERPRINT_VARIANTS`, run by the
emulation on the same plan and the same inputs) returns. ``tools/fingerprint_kernel.py`` is its
CLI.

The probes (one request each, one query row that sees every key; 16 heads as replicates; the
softmax scale ``fl32(ln 2)`` makes ``P = 2^(c - c_max)`` for fp8 key coefficients ``c``). Every
128-key step carries its own peak key (P = 1), so how the planner splits a request at step
boundaries does not change any P; only ``late-max`` needs two steps in one work, and the
expected values are computed on the very plan the backend got, so a split there shows up as a
probe that stops deciding, never as a wrong answer.

``tiny``    127 keys per step at P = 2^-10.5: under half of e4m3fn's smallest subnormal (2^-10),
            so an unscaled (or lazily rescaled) cast flushes them; scaled by 448 they are 0.31.
            ``.A`` = their share of the output (V = 1 on them only); ``.B`` = the output when
            V = 1 on every key: 1 when ``l`` sums what the GEMM saw, 1/(1 + 0.088) when ``l``
            sums fp32 P and the cast lost them.
``tinier``  the same at P = 2^-22: even scaled by 448 it flushes; only an fp32 P keeps it.
``coarse``  127 keys per step at P = 0.151: scaled by 448 (67.7) it rounds down by 5.5 % (64),
            unscaled up by 3.4 % (0.156); ``.B`` tells a row-scaled ``l``-over-fp32 kernel
            (0.95) from one whose ``l`` sums the rounded P (1).
``late-max`` the peak grows by 2 binades per step (4 steps) and each step's 127 other keys sit
            11 binades under its peak: a lazy rescale (threshold 2^8) keeps the max of its work's
            first step, so in every later step they sit at 2^-9 ... 2^-5, exact; moving the max
            puts them at 2^-11, which the unscaled cast flushes. Any work of >= 2 steps shows it.
``store``   32 rows of random data over 2048 keys, split by the planner: the mean of
            ``(|out| - |x|) / ulp_bf16(x)`` over merged elements, with ``x`` the float64 merge of
            the kernel's *own* fp32 partials; 0 for a round-to-nearest store, -0.5 for truncation.

Noise and margins are measured, not assumed: a seed perturbs every logit by up to 2^-9 binades
(0.14 % of P, 10^4 times any fp32 implementation difference), the order of nothing else; each
observable's *seed noise* is the largest change between the observation seed and
:data:`NOISE_SEEDS` other seeds, over every candidate arithmetic and the backend itself. A probe
*decides* a pair of candidates when their expected values differ by at least
:data:`DECISIVE_RATIO` times its noise; a candidate *matches* when every observable lies within
one noise of what it predicts. Nothing here is a hand-set tolerance.
"""

from __future__ import annotations

import itertools
import math
import types
from collections.abc import Callable, Sequence

import attrs
import numpy as np
import torch

from factories.accuracy.tolerance import Tolerance
from factories.aiter.batch import PsPlan, plan_batch
from factories.aiter.emulation.arithmetic import (
    ARITHMETIC_VARIANTS,
    KernelArithmetic,
    kernel_arithmetic,
)
from factories.aiter.emulation.device_model import emulated_cu_count
from factories.aiter.layout import (
    FINAL_MAP_COLS,
    KERNEL_KV_STEP,
    QK_HEAD_DIM,
    V_HEAD_DIM,
    PlannerSettings,
)
from factories.errors import AccuracyInputError

#: Variants that are fp32-level siblings of another (``exp`` instead of the folded ``exp2`` moves
#: a few P across an fp8 midpoint, by an amount that depends on the device's exp2 approximation):
#: no input separates them from their sibling by a margin above that, so the fingerprint does not
#: claim to.
NOT_FINGERPRINTED = {"p8-unscaled-exp": "p8-unscaled"}

#: The candidates the fingerprint tells apart, by their names in ``ARITHMETIC_VARIANTS``.
FINGERPRINT_VARIANTS: dict[str, KernelArithmetic] = {
    n: a for n, a in ARITHMETIC_VARIANTS.items() if n not in NOT_FINGERPRINTED
}

HEADS = 16  # vLLM's TP8 DeepSeek shape; mla_reduce_v1 supports it for Dv 128
#: CU count of the emulated backend: MI355X's 256 (the real backend plans for its own device).
DEFAULT_CU = 256
#: A probe decides a pair when their expected values differ by this many times its seed noise.
DECISIVE_RATIO = 10.0
#: Seeds beside the observation's own whose runs measure the noise (observation seed + 1 ...).
NOISE_SEEDS = 3
#: fl32(ln 2): times log2(e) it is 1 in fp32, so P = 2^(c - c_max) for key coefficient c.
ALPHA = float(np.float32(math.log(2.0)))
#: Logit jitter per seed: q[2] * k[2] with |k[2]| <= 0.25, i.e. <= 2^-9 binades.
_JITTER_Q = 2.0**-7
_STORE_Q, _STORE_KV = 32, 2048

FP8 = torch.float8_e4m3fn
#: bf16's unit roundoff: the smallest relative change an output element can show.
_U_BF16 = 2.0**-8


@attrs.frozen
class _Probe:
    """A request of one query row over ``steps`` 128-key steps. In step c, key 0 (the step's
    peak) has coefficient ``growth * c`` and the other 127 keys ``growth * c + small[0] +
    small[1]`` (two fp8 lanes, so the sum need not be an fp8 value). V is 1 on the 127 keys in
    the first half of the dims (``.A``) and 1 on every key in the second half (``.B``)."""

    name: str
    small: tuple[float, float]
    growth: float = 0.0
    steps: int = 2


_PROBES = (
    _Probe("tiny", (-10.0, -0.5)),
    _Probe("tinier", (-22.0, 0.0)),
    _Probe("coarse", (-2.75, 12 * 2.0**-9)),
    _Probe("late-max", (-11.0, 0.0), growth=2.0, steps=4),
)

#: Observable name -> (probe, what it reads). ``A``: mean of the first 64 dims, ``B``: of the last.
OBSERVABLES = (
    "tiny.A",
    "tiny.B",
    "tinier.A",
    "coarse.A",
    "coarse.B",
    "late-max.A",
    "store.t",
)

#: Per observable, the resolution its format gives it, relative to its largest expected value:
#: a seed that moves no element across a bf16 rounding boundary measures a noise of 0, but the
#: output can still not show a change below half a bf16 step (``store.t`` is already in bf16
#: steps and measured over ~2^16 elements: its noise is the measured one).
_RESOLUTION = {k: (0.0 if k == "store.t" else _U_BF16) for k in OBSERVABLES}


@attrs.frozen
class ProbeBatch:
    """The crafted inputs of one seed (fp8 q/k/v on a device) and the request layout."""

    q_lens: tuple[int, ...]
    kv_lens: tuple[int, ...]
    q: torch.Tensor = attrs.field(eq=False, repr=False)
    k: torch.Tensor = attrs.field(eq=False, repr=False)
    v: torch.Tensor = attrs.field(eq=False, repr=False)


def _layout() -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(q_lens, kv_lens)``: one row per probe, then the store request."""
    q_lens = (1,) * len(_PROBES) + (_STORE_Q,)
    kv_lens = tuple(p.steps * KERNEL_KV_STEP for p in _PROBES) + (_STORE_KV,)
    return q_lens, kv_lens


def probe_batch(seed: int, device: str | torch.device = "cpu") -> ProbeBatch:
    """The probes of :data:`_PROBES` plus the ``store`` request, with seed ``seed``'s jitter."""
    g = torch.Generator().manual_seed(int(seed))
    q_lens, kv_lens = _layout()
    qs, ks, vs = [], [], []
    for p in _PROBES:
        n = p.steps * KERNEL_KV_STEP
        q = torch.zeros(1, HEADS, QK_HEAD_DIM)
        q[..., 0] = q[..., 1] = 1.0
        q[..., 2] = _JITTER_Q
        k = torch.zeros(n, HEADS, QK_HEAD_DIM)
        v = torch.zeros(n, HEADS, V_HEAD_DIM)
        step = torch.arange(n) // KERNEL_KV_STEP
        peak = torch.arange(n) % KERNEL_KV_STEP == 0
        k[:, :, 0] = (p.growth * step + torch.where(peak, 0.0, p.small[0]))[:, None]
        k[:, :, 1] = torch.where(peak, 0.0, p.small[1])[:, None]
        v[:, :, : V_HEAD_DIM // 2] = (~peak).float()[:, None, None]
        v[:, :, V_HEAD_DIM // 2 :] = 1.0
        k[:, :, 2] = (torch.rand(n, HEADS, generator=g) - 0.5) * 0.5
        qs.append(q)
        ks.append(k)
        vs.append(v)
    qs.append(torch.randn(_STORE_Q, HEADS, QK_HEAD_DIM, generator=g) * 2.0**-4)
    ks.append(torch.randn(_STORE_KV, HEADS, QK_HEAD_DIM, generator=g))
    vs.append(torch.randn(_STORE_KV, HEADS, V_HEAD_DIM, generator=g))
    q8, k8, v8 = (torch.cat(t).to(FP8).to(device) for t in (qs, ks, vs))
    return ProbeBatch(q_lens, kv_lens, q8, k8, v8)


def plan_probes(
    module: types.ModuleType | None, cu_count: int, device: str | torch.device = "cpu"
) -> PsPlan:
    """The probes' plan by ``module``'s planner (None: the emulation's, at ``cu_count``)."""
    q_lens, kv_lens = _layout()
    settings = PlannerSettings.for_fp8_prefill_kernel(True)
    return plan_batch(
        q_lens, kv_lens, HEADS, settings, cu_count=cu_count, device=device, aiter=module
    )


@attrs.frozen
class _Outputs:
    out: torch.Tensor = attrs.field(eq=False)  # [T, H, 128] bf16
    split_o: torch.Tensor = attrs.field(eq=False)
    split_lse: torch.Tensor = attrs.field(eq=False)


def run_kernels(module: types.ModuleType, plan: PsPlan, batch: ProbeBatch) -> _Outputs:
    """``mla_prefill_ps_asm_fwd`` then ``mla_reduce_v1`` of ``module`` on the probes (AITER's
    call sequence, as ``op_tests/test_mla_prefill_ps.py`` and vLLM make it)."""
    dev = batch.q.device
    nan = float("nan")
    rows = max(plan.partial_rows, 1)
    split_o = torch.full((rows, HEADS, V_HEAD_DIM), nan, device=dev)
    split_lse = torch.full((rows, HEADS), nan, device=dev)
    out = torch.full((batch.q.size(0), HEADS, V_HEAD_DIM), nan, dtype=torch.bfloat16, device=dev)
    final_lse = torch.full((batch.q.size(0), HEADS), nan, device=dev)
    one = torch.ones(1, device=dev)
    module.mla_prefill_ps_asm_fwd(
        *plan.prefill_args(
            batch.q, batch.k, batch.v, split_o, split_lse, out, (one, one, one), softmax_scale=ALPHA
        )
    )
    module.mla_reduce_v1(*plan.reduce_args(split_o, split_lse, out, final_lse))
    return _Outputs(out.cpu(), split_o.cpu(), split_lse.cpu())


def _merged_rows(plan: PsPlan) -> list[tuple[int, int, np.ndarray]]:
    """``(q_start, q_end, partial_offsets)`` of every reduce group with >= 2 partials."""
    ri = plan.reduce_indptr.cpu().numpy().astype(np.int64).reshape(-1)
    pm = plan.reduce_partial_map.cpu().numpy().astype(np.int64).reshape(-1)
    fm = plan.reduce_final_map.cpu().numpy().astype(np.int64).reshape(-1, FINAL_MAP_COLS)
    groups = []
    for gi in range(len(ri) - 1):
        if ri[gi] == ri[-1]:
            break
        if ri[gi + 1] - ri[gi] >= 2:
            groups.append((int(fm[gi, 0]), int(fm[gi, 1]), pm[ri[gi] : ri[gi + 1]]))
    return groups


def _store_statistic(plan: PsPlan, o: _Outputs, t0: int, t1: int) -> float:
    """Mean of ``(|out| - |x|) / ulp_bf16(x)`` (clipped to one step) over merged elements of
    rows [t0, t1), ``x`` the float64 merge of the kernel's own partials (NaN when the planner
    merged none there)."""
    vals = []
    for qs, qe, parts in _merged_rows(plan):
        lo, hi = max(qs, t0), min(qe, t1)
        if lo >= hi:
            continue
        idx = torch.from_numpy(parts[None, :] + np.arange(lo - qs, hi - qs)[:, None])
        lse = o.split_lse[idx].double()  # [r, n, H]
        big = torch.logsumexp(lse, dim=1, keepdim=True)
        x = (torch.exp(lse - big)[..., None] * o.split_o[idx].double()).sum(dim=1)  # [r, H, D]
        got = o.out[lo:hi].double()
        keep = x != 0
        ulp = torch.exp2(torch.floor(torch.log2(x.abs().clamp_min(1e-30))) - 7)
        # A store moves an element by at most one step; where the merge cancels, the fp32 merge
        # of the kernel and this float64 one may differ by more, so one such element is clipped
        # instead of outweighing thousands.
        vals.append(((got.abs() - x.abs()) / ulp)[keep].clamp(-1.0, 1.0))
    if not vals:
        return math.nan
    return float(torch.cat(vals).mean())


def observe(plan: PsPlan, o: _Outputs) -> dict[str, float]:
    """The :data:`OBSERVABLES` of one run."""
    res: dict[str, float] = {}
    half = V_HEAD_DIM // 2
    for t, p in enumerate(_PROBES):
        row = o.out[t].float()  # [H, 128]
        res[f"{p.name}.A"] = float(row[:, :half].mean())
        res[f"{p.name}.B"] = float(row[:, half:].mean())
    t0 = len(_PROBES)
    res["store.t"] = _store_statistic(plan, o, t0, t0 + _STORE_Q)
    return {k: res[k] for k in OBSERVABLES}


#: (cu_count, seed, arithmetic) -> observables of the emulation on its own plan: the candidates'
#: runs do not depend on the backend being fingerprinted, so a process that fingerprints several
#: emulated variants (the tests) runs each candidate once per seed.
_CACHE: dict[tuple[int, int, KernelArithmetic], dict[str, float]] = {}
_BATCHES: dict[int, ProbeBatch] = {}


def _emulated_on_own_plan(cu_count: int, seed: int, arithmetic: KernelArithmetic):
    key = (cu_count, seed, arithmetic)
    if key not in _CACHE:
        if seed not in _BATCHES:
            _BATCHES[seed] = probe_batch(seed)
        _CACHE[key] = _emulated(plan_probes(None, cu_count), _BATCHES[seed], arithmetic)
    return _CACHE[key]


def _emulated(
    plan: PsPlan,
    batch: ProbeBatch,
    arithmetic: KernelArithmetic,
    device: str | torch.device = "cpu",
) -> dict[str, float]:
    """The emulation under ``arithmetic`` on ``device`` (its plan and inputs moved there)."""
    import factories.aiter.emulation as emulation

    on = attrs.evolve(plan, buffers=tuple(b.to(device) for b in plan.buffers))
    ob = attrs.evolve(batch, q=batch.q.to(device), k=batch.k.to(device), v=batch.v.to(device))
    cpu = attrs.evolve(plan, buffers=tuple(b.cpu() for b in plan.buffers))
    with emulated_cu_count(plan.cu_count), kernel_arithmetic(arithmetic):
        return observe(cpu, run_kernels(emulation, on, ob))


@attrs.frozen
class Evidence:
    """Everything the verdict rests on (printed as the evidence table)."""

    seed: int
    backend: str
    observed: dict[str, float]
    expected: dict[str, dict[str, float]]  # variant -> observable -> value
    noise: dict[str, float]  # observable -> largest seed-to-seed change
    noise_seeds: tuple[int, ...]
    split_store_rows: int

    def distance(self, variant: str) -> float:
        """Largest ``|observed - expected| / noise`` over the deciding observables (NaN
        observables, e.g. no merged rows, are skipped)."""
        exp = self.expected[variant]
        d = 0.0
        for k in self.usable:
            d = max(d, abs(self.observed[k] - exp[k]) / self.noise[k])
        return d

    @property
    def usable(self) -> tuple[str, ...]:
        return tuple(
            k
            for k in OBSERVABLES
            if math.isfinite(self.observed[k])
            and all(math.isfinite(e[k]) for e in self.expected.values())
            and self.noise[k] > 0
        )

    def best_separation(self, a: str, b: str) -> tuple[str, float]:
        """The observable that separates ``a`` and ``b`` best, and its gap in noise units."""
        best = ("-", 0.0)
        for k in self.usable:
            r = abs(self.expected[a][k] - self.expected[b][k]) / self.noise[k]
            if r > best[1]:
                best = (k, r)
        return best

    def undecided_pairs(self) -> list[tuple[str, str, str, float]]:
        """Pairs of candidates no observable separates by :data:`DECISIVE_RATIO` noises."""
        out = []
        for a, b in itertools.combinations(self.expected, 2):
            k, r = self.best_separation(a, b)
            if r < DECISIVE_RATIO:
                out.append((a, b, k, r))
        return out

    def matches(self) -> list[str]:
        return [v for v in self.expected if self.distance(v) <= 1.0]

    def identified(self) -> str | None:
        m = self.matches()
        if len(m) != 1 or self.undecided_pairs():
            return None
        return m[0]

    def nearest(self, n: int = 3) -> list[tuple[str, float]]:
        return sorted(((v, self.distance(v)) for v in self.expected), key=lambda x: x[1])[:n]

    def probe_margins(self) -> dict[str, tuple[float, str]]:
        """Per observable: the smallest gap among the pairs it decides best (and that pair)."""
        out: dict[str, tuple[float, str]] = {}
        for a, b in itertools.combinations(self.expected, 2):
            k, _ratio = self.best_separation(a, b)
            if k == "-":
                continue
            gap = abs(self.expected[a][k] - self.expected[b][k])
            if k not in out or gap < out[k][0]:
                out[k] = (gap, f"{a} / {b}")
        return out


def fingerprint(
    backend: str,
    *,
    variant: str | KernelArithmetic = "fp32-p",
    seed: int = 0,
    cu_count: int = DEFAULT_CU,
    candidates: dict[str, KernelArithmetic] | None = None,
    progress: Callable[[str], None] | None = None,
    emulate_on: str = "cpu",
) -> Evidence:
    """Run the probes on ``backend`` (``emulated`` under ``variant``, on ``emulate_on``; or
    ``aiter``: the real package, gfx950 only) and every candidate of the emulation (on the CPU)
    on the same plan."""
    candidates = dict(FINGERPRINT_VARIANTS if candidates is None else candidates)
    if backend == "aiter":
        from factories.aiter.backend import select_backend

        module = select_backend("aiter").module
        device = torch.device("cuda")
        cu_count = torch.cuda.get_device_properties(0).multi_processor_count
        plan = plan_probes(module, cu_count, device)
        plan = attrs.evolve(plan, cu_count=cu_count)

        def run_backend(s: int, batch: ProbeBatch) -> dict[str, float]:
            return observe(plan, run_kernels(module, plan, batch))

        def run_candidate(s: int, batch: ProbeBatch, arith: KernelArithmetic):
            return _emulated(plan, batch, arith)

    elif backend == "emulated":
        if isinstance(variant, str):
            if variant not in ARITHMETIC_VARIANTS:
                raise AccuracyInputError(
                    f"unknown variant {variant!r}: pick one of --list-variants "
                    f"({', '.join(FINGERPRINT_VARIANTS)})"
                )
            arithmetic = ARITHMETIC_VARIANTS[variant]
        else:
            arithmetic = variant
        device = torch.device("cpu")
        plan = plan_probes(None, cu_count, device)

        def run_candidate(s: int, batch: ProbeBatch, arith: KernelArithmetic):
            return _emulated_on_own_plan(cu_count, s, arith)

        def run_backend(s: int, batch: ProbeBatch) -> dict[str, float]:
            if emulate_on != "cpu":
                return _emulated(plan, batch, arithmetic, emulate_on)
            return run_candidate(s, batch, arithmetic)

    else:
        raise AccuracyInputError(f"--backend must be aiter or emulated, got {backend!r}")

    say = progress or (lambda _m: None)
    seeds = (seed,) + tuple(seed + i for i in range(1, NOISE_SEEDS + 1))
    expected: dict[str, dict[str, float]] = {}
    per_seed: dict[str, list[dict[str, float]]] = {}
    observed: dict[str, float] = {}
    for s in seeds:
        batch = _BATCHES.get(s) if device.type == "cpu" else None
        batch = batch if batch is not None else probe_batch(s, device)
        obs = run_backend(s, batch)
        per_seed.setdefault("<backend>", []).append(obs)
        if s == seed:
            observed = obs
        for name, arith in candidates.items():
            e = run_candidate(s, batch, arith)
            per_seed.setdefault(name, []).append(e)
            if s == seed:
                expected[name] = e
        say(f"[fingerprint] seed {s} done")
    noise = {}
    for k in OBSERVABLES:
        diffs = [
            abs(runs[i][k] - runs[0][k])
            for runs in per_seed.values()
            for i in range(1, len(runs))
            if math.isfinite(runs[i][k]) and math.isfinite(runs[0][k])
        ]
        top = max((abs(e[k]) for e in expected.values() if math.isfinite(e[k])), default=0.0)
        noise[k] = max(max(diffs, default=math.nan), _RESOLUTION[k] * top)
    merged = sum(
        max(0, min(qe, len(_PROBES) + _STORE_Q) - max(qs, len(_PROBES)))
        for qs, qe, _ in _merged_rows(plan)
    )
    return Evidence(
        seed=seed,
        backend=backend if emulate_on == "cpu" else f"{backend} on {emulate_on}",
        observed=observed,
        expected=expected,
        noise=noise,
        noise_seeds=seeds[1:],
        split_store_rows=merged,
    )


def _fmt(x: float) -> str:
    return "nan" if not math.isfinite(x) else f"{x:.4g}"


def report(ev: Evidence) -> list[str]:
    """The evidence table and the verdict; the last line is ``identified: NAME`` or
    ``identified: none``."""
    names = list(ev.expected)
    lines = [
        f"fingerprint of mla_prefill_ps_asm_fwd + mla_reduce_v1 on {ev.backend}, seed {ev.seed}; "
        f"noise = largest change over seeds {list(ev.noise_seeds)} (every candidate and the "
        f"backend); store probe: {ev.split_store_rows} merged rows",
        "",
        "| probe | observed | noise | decisive margin (pair) | margin / noise | "
        + " | ".join(names)
        + " |",
        "|---" * (5 + len(names)) + "|",
    ]
    margins = ev.probe_margins()
    for k in OBSERVABLES:
        gap, pair = margins.get(k, (math.nan, "-"))
        ratio = gap / ev.noise[k] if ev.noise[k] and math.isfinite(gap) else math.nan
        cells = [_fmt(ev.expected[n][k]) for n in names]
        lines.append(
            f"| {k} | {_fmt(ev.observed[k])} | {_fmt(ev.noise[k])} | {_fmt(gap)} ({pair}) | "
            f"{_fmt(ratio)} | " + " | ".join(cells) + " |"
        )
    lines.append("")
    lines.append(
        "distance = max over probes of |observed - expected| / noise (match: <= 1): "
        + ", ".join(f"{v} {_fmt(d)}" for v, d in ev.nearest(len(names)))
    )
    undecided = ev.undecided_pairs()
    for a, b, k, r in undecided:
        lines.append(
            f"undecided: {a} vs {b} (best probe {k}: {_fmt(r)} x noise < {DECISIVE_RATIO:g})"
        )
    ident = ev.identified()
    if ident is None:
        near = ", ".join(f"{v} ({_fmt(d)} x noise)" for v, d in ev.nearest())
        matches = ev.matches()
        why = (
            f"{len(matches)} candidates match ({', '.join(matches)})"
            if len(matches) > 1
            else "no candidate matches"
        )
        lines.append(f"{why}; nearest: {near}")
        lines.append("identified: none")
    else:
        lines.append(f"identified: {ident}")
    return lines


def tolerance_mismatch(identified: str | None, tolerance: Tolerance) -> str | None:
    """Why the bounds ``tolerance`` do not fit a kernel fingerprinted as ``identified`` (None:
    they do). Bounds derived for one variant fit that variant only; bounds derived for the
    envelope fit each of its members (``tolerance.variants``)."""
    where = "factories/accuracy/tolerances.json"
    fix = (
        "re-derive them for what was found: python tools/calibrate_tolerance.py --backend aiter "
        "(docs/TOLERANCES.md, 'First run on MI355')"
    )
    if identified is None:
        return (
            f"the kernel's arithmetic matches no candidate variant (see the fingerprint in the "
            f"terminal summary), so the {tolerance.backend} bounds in {where} (derived for "
            f"{tolerance.variant or '?'}) rest on an arithmetic the kernel does not compute"
        )
    members = tolerance.variants if tolerance.variant == "envelope" else (tolerance.variant,)
    if identified in members:
        return None
    return (
        f"the kernel computes {identified}, but the {tolerance.backend} bounds in {where} were "
        f"derived for {tolerance.variant or '?'} ({', '.join(members)}): {fix}"
    )


def summary_lines(ev: Evidence, tolerance: Tolerance) -> list[str]:
    """What the suite prints in its terminal summary: the evidence, the verdict, the bounds'
    variant and whether they fit."""
    bad = tolerance_mismatch(ev.identified(), tolerance)
    return [
        *report(ev),
        f"bounds ({tolerance.backend}) derived for: {tolerance.variant or '?'} "
        f"[{', '.join(tolerance.variants)}]",
        "fits the kernel" if bad is None else f"MISMATCH: {bad}",
    ]


__all__: Sequence[str] = (
    "DECISIVE_RATIO",
    "FINGERPRINT_VARIANTS",
    "NOT_FINGERPRINTED",
    "OBSERVABLES",
    "Evidence",
    "fingerprint",
    "probe_batch",
    "report",
    "run_kernels",
    "summary_lines",
    "tolerance_mismatch",
)
