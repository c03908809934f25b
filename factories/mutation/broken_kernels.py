"""Kernel-level mutants of the emulated AITER: broken backends the accuracy checks must reject.

Why: a tolerance is only validated by bugs it fails on (the kill matrix that runs these is
:mod:`factories.accuracy.kill_matrix`). Each mutant here is a realistic kernel or
launcher bug of the FP8 MLA prefill path (known-regressions R3, R13, R15, R16 and their kin),
re-created from :mod:`factories.aiter.emulation` *without editing or copying its source*. The
emulation is the code under test's reference, so a mutant must not depend on its text (its
comments and spelling are free to change); every mutant is one of:

- **an arithmetic change** (``KernelMutant.arithmetic``): fields of the base's
  :class:`~factories.aiter.emulation.arithmetic.KernelArithmetic` replaced (P rounded to e5m2);
- **an injected fault** (``KernelMutant.faults``): a
  :class:`~factories.aiter.emulation.arithmetic.KernelFaults` the emulated kernels honour (causal
  limit off by one, a reduce that drops a partial), for bugs inside a kernel that no change of its
  inputs can produce;
- **a wrapper** (``wrap_prefill``/``wrap_reduce``): what the two kernels are handed or what they
  leave behind changes (a scale, a plan row, where the partials land) around the unmutated kernel.

Two *bases* carry the mutants: ``emulated`` (the emulation as shipped: fp32 P) and ``gfx950-p8``
(the arithmetic variant ``p8-unscaled``: the assumed gfx950 arithmetic of
:mod:`factories.accuracy.error_model` inside the emulated split pipeline, P rounded to e4m3fn per
128-key step against the running max). The first is what ``pytest tests/`` runs on CPU; the
second shows what the gfx950 tolerance can see, since on the device the fp8-P noise is added to
every mutant's signal. Arithmetic and faults reach the kernels through their context variables,
set around each call by :func:`aiter_backend_for`, so AITER's signatures stay untouched.
"""

from __future__ import annotations

import functools
import importlib.machinery
import inspect
import types
from collections.abc import Callable
from typing import Any

import attrs
import torch

from factories.aiter.emulation.arithmetic import (
    ARITHMETIC_VARIANTS,
    LOG2E,
    NO_FAULTS,
    KernelArithmetic,
    KernelFaults,
    injected_faults,
    kernel_arithmetic,
)

#: Kernel bases: name -> the arithmetic the emulated kernels run with.
BASES: dict[str, KernelArithmetic] = {
    "emulated": ARITHMETIC_VARIANTS["fp32-p"],
    "gfx950-p8": ARITHMETIC_VARIANTS["p8-unscaled"],
}
#: The tolerance-file backend each base is judged with.
BASE_BACKEND = {"emulated": "emulated", "gfx950-p8": "gfx950"}


def _bind(fn: Callable[..., Any], args: tuple, kwargs: dict) -> inspect.BoundArguments:
    bound = inspect.signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    return bound


#: A mutant's wrapper factory. Wrappers use ``functools.wraps`` so that every backend keeps
#: AITER's signatures (``inspect.signature`` follows ``__wrapped__``; :func:`_bind` relies on it).
Wrapper = Callable[[Callable[..., Any]], Callable[..., Any]]


@attrs.frozen
class KernelMutant:
    """One bug. ``arithmetic`` replaces fields of the base's :class:`KernelArithmetic` (pairs of
    field name and value); ``faults`` are injected into the emulated kernels;
    ``wrap_prefill``/``wrap_reduce`` wrap the two kernels (factories taking the kernel and
    returning the replacement, called once per backend built, so state is per run);
    ``needs_previous`` asks the harness to run a different batch first (the bug reads the
    previous plan)."""

    name: str
    description: str
    regression: str  # the known-regressions case it stands for
    arithmetic: tuple[tuple[str, Any], ...] = ()
    faults: KernelFaults = NO_FAULTS
    wrap_prefill: Wrapper | None = None
    wrap_reduce: Wrapper | None = None
    needs_previous: bool = False


def arithmetic_for(base: str, mutant: KernelMutant | None = None) -> KernelArithmetic:
    """The arithmetic ``mutant`` runs with on ``base``."""
    if base not in BASES:
        raise KeyError(f"unknown kernel base {base!r}; known: {sorted(BASES)}")
    if mutant is None or not mutant.arithmetic:
        return BASES[base]
    return attrs.evolve(BASES[base], **dict(mutant.arithmetic))


def _in_context(
    fn: Callable[..., Any], arithmetic: KernelArithmetic, faults: KernelFaults
) -> Callable[..., Any]:
    """``fn`` run with ``arithmetic`` and ``faults`` set; ``functools.wraps`` keeps AITER's
    signature visible to ``inspect.signature`` (the wrappers bind arguments by name)."""

    @functools.wraps(fn)
    def call(*args, **kwargs):
        with kernel_arithmetic(arithmetic), injected_faults(faults):
            return fn(*args, **kwargs)

    return call


def aiter_backend_for(base: str, mutant: KernelMutant | None = None) -> types.ModuleType:
    """A module with AITER's four PS-prefill functions: the emulation's planner and kernels run
    with ``base``'s arithmetic and ``mutant`` applied. Fresh per call (wrapper state is per
    backend)."""
    import factories.aiter.emulation as emulation

    arithmetic = arithmetic_for(base, mutant)
    faults = mutant.faults if mutant is not None else NO_FAULTS
    label = f"{base}+{mutant.name}" if mutant else base
    module = types.ModuleType("aiter")
    # vLLM asks importlib.util.find_spec("aiter"), which needs a spec on the installed module.
    module.__spec__ = importlib.machinery.ModuleSpec("aiter", None)
    module.__doc__ = f"emulated AITER, kernels {label}"
    module.get_ps_metadata_info_v1 = emulation.get_ps_metadata_info_v1
    # The planner too: a fault may live in it (``ignores_need_lse``).
    module.get_ps_metadata_v1 = _in_context(emulation.get_ps_metadata_v1, arithmetic, faults)
    prefill = _in_context(emulation.mla_prefill_ps_asm_fwd, arithmetic, faults)
    reduce = _in_context(emulation.mla_reduce_v1, arithmetic, faults)
    if mutant is not None and mutant.wrap_prefill is not None:
        prefill = mutant.wrap_prefill(prefill)
    if mutant is not None and mutant.wrap_reduce is not None:
        reduce = mutant.wrap_reduce(reduce)
    module.mla_prefill_ps_asm_fwd = prefill
    module.mla_reduce_v1 = reduce
    module.KERNEL_BASE = base
    module.KERNEL_ARITHMETIC = arithmetic
    module.MUTANT = mutant.name if mutant else None
    return module


# --------------------------------------------------------------------------------------------
# The catalogue
# --------------------------------------------------------------------------------------------


def _scaled_softmax(factor: float) -> Wrapper:
    def wrap(fn):
        @functools.wraps(fn)
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

    @functools.wraps(fn)
    def mla_prefill_ps_asm_fwd(*args, **kwargs):
        b = _bind(fn, args, kwargs)
        b.arguments["v_scale"] = b.arguments["v_scale"] * 0.5
        return fn(*b.args, **b.kwargs)

    return mla_prefill_ps_asm_fwd


def _lse_base2(fn):
    """The kernel stores log2(l) + m*log2e (base 2) in splitLse instead of the natural log."""

    @functools.wraps(fn)
    def mla_prefill_ps_asm_fwd(*args, **kwargs):
        b = _bind(fn, args, kwargs)
        out = fn(*b.args, **b.kwargs)
        b.arguments["splitLse"].mul_(LOG2E)
        return out

    return mla_prefill_ps_asm_fwd


def _slot_plus_one(fn):
    """Partial slot p is written at rows p+1 .. p+256 (a stride/offset bug, R16): the kernel
    writes into a scratch copy that is then rolled down one row (the last row wraps to row 0)."""

    @functools.wraps(fn)
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

    @functools.wraps(fn)
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
    found = [
        KernelMutant(
            f"softmax-scale{sign}{pct}%",
            f"softmax_scale * {1 + s * pct / 100:g} inside the kernel (the caller's argument is "
            "right)",
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
            faults=KernelFaults(causal_shift=1),
        ),
        KernelMutant(
            "causal-bound-1",
            "no row sees its own (diagonal) key (the causal limit off by one downward)",
            "masking (R16 family)",
            faults=KernelFaults(causal_shift=-1),
        ),
        KernelMutant(
            "reduce-drops-a-split",
            "the first reduce group merges all but its last partial (a loop bound off by one)",
            "reduce (R2/R13 family)",
            faults=KernelFaults(reduce_drops_last_partial=True),
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
            arithmetic=(("p_dtype", torch.float8_e5m2),),
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

#: The planner-and-reduce mutant of the ``need_lse`` contracts (ROCm/aiter#3606): kept out of
#: :data:`MUTANTS` because vLLM 0.34.0 never passes ``need_lse``, so the accuracy run of the kill
#: matrix cannot see it; ``contracts/aiter_ps/test_need_lse.py`` is what must kill it.
NEED_LSE_IGNORED = KernelMutant(
    "ignores-need-lse",
    "get_ps_metadata_v1 plans need_lse=True like need_lse=False, and the reduce skips groups of "
    "one partial: unsplit tiles write the output directly and final_lse stays unwritten there",
    "final_lse missing for unsplit tiles (the bug ROCm/aiter#3606 fixed)",
    faults=KernelFaults(ignores_need_lse=True),
)


__all__ = [
    "BASES",
    "BASE_BACKEND",
    "MUTANTS",
    "NEED_LSE_IGNORED",
    "KernelMutant",
    "aiter_backend_for",
    "arithmetic_for",
]
