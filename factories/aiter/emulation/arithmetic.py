"""The emulated kernels' arithmetic as a parameter, and the faults the kill matrix injects.

Why: the gfx950 binary does not say how P is rounded before the second fp8 MFMA, whether the
row sum ``l`` sees that rounding, or how ``mla_reduce_v1`` rounds its bf16 store
(docs/TOLERANCES.md §2). The calibration, the kill matrix and a fingerprinting tool all need the
emulated split pipeline to run each candidate arithmetic. Editing the kernel's source text to get
them made comments load-bearing; here the arithmetic is a small frozen value that the two emulated
kernels read at call time, so AITER's signatures stay exactly AITER's.

Both settings live in :class:`contextvars.ContextVar` s, the pattern of
:func:`~factories.aiter.emulation.device_model.emulated_cu_count`: scoped by ``with``, thread-
and task-safe, no module globals. The defaults are the shipped emulation (fp32 P, no faults).

:class:`KernelArithmetic` (see its fields) and the named presets :data:`ARITHMETIC_VARIANTS`
describe *correct* kernels that round differently. :class:`KernelFaults` describes *bugs*
(off-by-one causal limit, a reduce that drops a partial) that cannot be made by wrapping what the
kernels are handed; it exists for :mod:`factories.mutation.broken_kernels` only.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from collections.abc import Iterator

import attrs
import torch

from factories.aiter.layout import KERNEL_KV_STEP

LOG2E = 1.0 / math.log(2.0)

#: ``lazy-rescale``: the running max moves only when a step's max exceeds it by more than this
#: many binades (log2 units), so P reaches up to 2**RESCALE_THRESHOLD before the cast. AITER's
#: opus gfx950 fp8 decode kernel uses 8 (P <= 256 still fits e4m3fn's 448).
RESCALE_THRESHOLD = 8.0

#: How P is scaled before the fp8 cast (``KernelArithmetic.p_scaling``).
P_SCALINGS = ("none", "lazy-rescale", "row-max")
#: Which P the row sum ``l`` accumulates (``KernelArithmetic.row_sum``).
ROW_SUMS = ("fp32", "rounded")
#: How ``mla_reduce_v1`` rounds its fp32 result to the bf16/fp16 output.
STORE_ROUNDINGS = ("rne", "truncate")


def _fp32_p_uses_defaults(inst: KernelArithmetic, _attr, value) -> None:
    if inst.p_dtype is None and (
        inst.p_scaling != "none" or inst.row_sum != "fp32" or not inst.exp2_folded
    ):
        raise ValueError(
            "p_dtype=None is the fused fp32 softmax: p_scaling, row_sum and exp2_folded only "
            f"describe a rounded P and must keep their defaults, got {inst!r}"
        )


@attrs.frozen
class KernelArithmetic:
    """How the emulated ``mla_prefill_ps_asm_fwd`` and ``mla_reduce_v1`` compute.

    ``p_dtype``
        None: fp32 P from one fused softmax over the work's keys (the shipped emulation, exact up
        to fp32). A float8 dtype: the online softmax of the asm, per 128-key step from the work's
        first key, with P rounded to this dtype (RNE, torch's cast) before P·V in fp32.
    ``p_scaling`` (rounded P only)
        ``"none"``: ``P = exp2((s - M) log2e)`` in [0, 1] is cast as is (values under half the
        smallest subnormal flush to 0). ``"lazy-rescale"``: the running max M is only moved when a
        step's max exceeds it by more than :data:`RESCALE_THRESHOLD` binades, so P may reach
        ``2**8`` before the cast. ``"row-max"``: per row and step, P is multiplied by
        ``finfo(p_dtype).max / max_k P`` before the cast and divided by it after, so the row's
        largest P maps to 448 (e4m3fn) and small P stay out of the subnormal range.
    ``row_sum`` (rounded P only)
        ``"fp32"``: ``l`` sums the fp32 P (FlashAttention-3's fp8 forward); ``"rounded"``: ``l``
        sums the rounded P that fed the GEMM.
    ``exp2_folded`` (rounded P only)
        ``exp2((s - M) * log2e)`` as the asm does (True) or ``exp(s - M)``.
    ``reduce_store``
        ``mla_reduce_v1``'s fp32 -> bf16/fp16 store: ``"rne"`` (round to nearest even, torch's
        cast) or ``"truncate"`` (round toward zero, dropping the low mantissa bits).
    """

    p_dtype: torch.dtype | None = attrs.field(default=None, validator=_fp32_p_uses_defaults)
    p_scaling: str = attrs.field(default="none", validator=attrs.validators.in_(P_SCALINGS))
    row_sum: str = attrs.field(default="fp32", validator=attrs.validators.in_(ROW_SUMS))
    exp2_folded: bool = True
    reduce_store: str = attrs.field(default="rne", validator=attrs.validators.in_(STORE_ROUNDINGS))

    @property
    def rounds_p(self) -> bool:
        return self.p_dtype is not None


def _p8(**kw) -> KernelArithmetic:
    return KernelArithmetic(p_dtype=torch.float8_e4m3fn, **kw)


#: The arithmetic of the shipped emulation: fp32 P, RNE stores.
DEFAULT_ARITHMETIC = KernelArithmetic()

#: Named candidate arithmetics. Names are stable (tools and tolerance files refer to them).
#: ``p8-unscaled`` is the assumed gfx950 arithmetic (docs/TOLERANCES.md §2, the kill matrix's
#: ``gfx950-p8`` base); its ``-rowsum-p8`` and ``-exp`` siblings are the error model's variants.
#: The three ``-reduce-truncate`` P8 presets complete the envelope AITER's sources allow (l over
#: fp32 P; P unscaled, lazily rescaled or row-scaled; reduce store RNE or truncating).
ARITHMETIC_VARIANTS: dict[str, KernelArithmetic] = {
    "fp32-p": DEFAULT_ARITHMETIC,
    "fp32-p-reduce-truncate": KernelArithmetic(reduce_store="truncate"),
    "p8-unscaled": _p8(),
    "p8-unscaled-rowsum-p8": _p8(row_sum="rounded"),
    "p8-unscaled-exp": _p8(exp2_folded=False),
    "p8-unscaled-reduce-truncate": _p8(reduce_store="truncate"),
    "p8-lazy-rescale": _p8(p_scaling="lazy-rescale"),
    "p8-lazy-rescale-rowsum-p8": _p8(p_scaling="lazy-rescale", row_sum="rounded"),
    "p8-lazy-rescale-reduce-truncate": _p8(p_scaling="lazy-rescale", reduce_store="truncate"),
    "p8-row-max": _p8(p_scaling="row-max"),
    "p8-row-max-rowsum-p8": _p8(p_scaling="row-max", row_sum="rounded"),
    "p8-row-max-reduce-truncate": _p8(p_scaling="row-max", reduce_store="truncate"),
}


#: The variants AITER's own sources allow for gfx950 (ROCm/aiter e4048607, issue 11): the row sum
#: over fp32 P (``op_tests/test_mla_prefill_ps.py`` L84-86, ``op_tests/test_mla_persistent.py``
#: L340-345, the HK softmax); P cast to e4m3fn unscaled, lazily rescaled (the opus gfx950 fp8
#: decode kernel's ``RESCALE_THRESHOLD = 8``) or row-scaled to 448 (the gfx1250 PA reference);
#: the reduce's bf16 store rounding to nearest even (clang >= 20) or truncating (older toolchains).
#: The calibration derives the gfx950 bounds for this envelope unless told the variant.
AITER_SOURCE_ENVELOPE: tuple[str, ...] = (
    "p8-unscaled",
    "p8-unscaled-reduce-truncate",
    "p8-lazy-rescale",
    "p8-lazy-rescale-reduce-truncate",
    "p8-row-max",
    "p8-row-max-reduce-truncate",
)


@attrs.frozen
class KernelFaults:
    """Bugs injected into the emulated kernels (the kill matrix's mutants); default: none.

    ``causal_shift``: added to every row's causal limit (+1 peeks at the next key, -1 loses the
    diagonal). ``reduce_drops_last_partial``: the first reduce group that writes merges all but
    its last partial (a loop bound off by one). ``ignores_need_lse``: the planner and the reduce
    behave as before ROCm/aiter#3606 whatever ``need_lse`` says (unsplit tiles direct to output,
    single partials not reduced), the bug the ``need_lse`` contracts must catch.
    """

    causal_shift: int = 0
    reduce_drops_last_partial: bool = False
    ignores_need_lse: bool = False


NO_FAULTS = KernelFaults()

_ARITHMETIC: contextvars.ContextVar[KernelArithmetic] = contextvars.ContextVar(
    "aiter_emulated_arithmetic", default=DEFAULT_ARITHMETIC
)
_FAULTS: contextvars.ContextVar[KernelFaults] = contextvars.ContextVar(
    "aiter_emulated_faults", default=NO_FAULTS
)


def current_arithmetic() -> KernelArithmetic:
    """The arithmetic the emulated kernels use right now."""
    return _ARITHMETIC.get()


def current_faults() -> KernelFaults:
    """The faults the emulated kernels inject right now (normally none)."""
    return _FAULTS.get()


@contextlib.contextmanager
def kernel_arithmetic(arithmetic: KernelArithmetic | str) -> Iterator[KernelArithmetic]:
    """Run the emulated kernels with ``arithmetic`` (a value or an :data:`ARITHMETIC_VARIANTS`
    name) inside the ``with`` block (restored on exit)."""
    if isinstance(arithmetic, str):
        if arithmetic not in ARITHMETIC_VARIANTS:
            known = sorted(ARITHMETIC_VARIANTS)
            raise KeyError(f"unknown arithmetic {arithmetic!r}; known: {known}")
        arithmetic = ARITHMETIC_VARIANTS[arithmetic]
    if not isinstance(arithmetic, KernelArithmetic):
        raise TypeError(f"expected a KernelArithmetic or a variant name, got {arithmetic!r}")
    token = _ARITHMETIC.set(arithmetic)
    try:
        yield arithmetic
    finally:
        _ARITHMETIC.reset(token)


@contextlib.contextmanager
def injected_faults(faults: KernelFaults) -> Iterator[KernelFaults]:
    """Run the emulated kernels with ``faults`` inside the ``with`` block (restored on exit)."""
    if not isinstance(faults, KernelFaults):
        raise TypeError(f"expected KernelFaults, got {faults!r}")
    token = _FAULTS.set(faults)
    try:
        yield faults
    finally:
        _FAULTS.reset(token)


# --------------------------------------------------------------------------------------------
# The arithmetic itself
# --------------------------------------------------------------------------------------------


def round_p(p: torch.Tensor, dtype: torch.dtype | None) -> torch.Tensor:
    """``p`` (fp32) rounded to ``dtype`` (RNE, torch's cast) and back to fp32; None: as is.

    The one implementation of the P cast: the emulated kernel and the error model
    (:mod:`factories.accuracy.error_model`) both call it, so they cannot round differently."""
    if dtype is None:
        return p
    return p.to(dtype).to(torch.float32)


def lazy_running_max(step_max: torch.Tensor) -> torch.Tensor:
    """Running max per step ``[..., steps]`` that moves only on growth > RESCALE_THRESHOLD
    binades (the first finite step always sets it)."""
    out = torch.empty_like(step_max)
    m = torch.full_like(step_max[..., 0], float("-inf"))
    for c in range(step_max.size(-1)):
        t = step_max[..., c]
        grow = (t - m) * LOG2E > RESCALE_THRESHOLD  # -inf - -inf = NaN: no growth
        m = torch.where(grow, t, m)
        out[..., c] = m
    return out


def cast_p(p: torch.Tensor, arithmetic: KernelArithmetic) -> torch.Tensor:
    """The P that feeds the second GEMM, as fp32: ``p [..., 128]`` (one 128-key step in the last
    dim) cast per ``arithmetic.p_dtype`` and ``p_scaling`` (``"row-max"``: scaled so the step's
    largest P is the dtype's max, rounded, scaled back). The emulated kernel and the error model
    (:mod:`factories.accuracy.error_model`) both call it, so they cannot cast differently."""
    dtype = arithmetic.p_dtype
    if dtype is None or arithmetic.p_scaling != "row-max":
        return round_p(p, dtype)
    top = torch.finfo(dtype).max
    peak = p.amax(dim=-1, keepdim=True)
    scale = torch.where(peak > 0, top / peak, torch.ones((), device=p.device))
    return round_p((p * scale).clamp_(max=top), dtype) / scale


def rounded_p_softmax_pv(
    s: torch.Tensor, v: torch.Tensor, need_lse: bool, arithmetic: KernelArithmetic
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``(o [n, r, Dv], lse [n, r] or None)`` of the online softmax with rounded P.

    ``s [n, r, w]`` are the scores (masked = -inf) of works whose first key is column 0 (a work
    starts on a 128-key step, as the plan guarantees), ``v [n, w, Dv]`` the values. Per 128-key
    step c: running max ``M_c``, ``P_c = exp2((s_c - M_c) log2e)`` (scaled per ``p_scaling``)
    rounded to ``p_dtype``, fp32 accumulation. The recurrence ``acc = acc * exp(M_{c-1} - M_c) +
    P8_c · V_c`` is evaluated as ``sum_c exp(M_c - M_last) P8_c · V_c``; ``o = acc / l``. Rows with
    nothing visible give NaN (the kernel zeroes them) and lse = -inf.
    """
    dtype = arithmetic.p_dtype
    if dtype is None:
        raise ValueError("rounded_p_softmax_pv needs an arithmetic that rounds P (p_dtype set)")
    n, r, w = s.shape
    steps = max(1, -(-w // KERNEL_KV_STEP))
    pad = steps * KERNEL_KV_STEP - w
    if pad:
        s = torch.nn.functional.pad(s, (0, pad), value=float("-inf"))
        v = torch.nn.functional.pad(v, (0, 0, 0, pad))
    sc = s.view(n, r, steps, KERNEL_KV_STEP)
    if arithmetic.p_scaling == "lazy-rescale":
        running = lazy_running_max(sc.amax(dim=-1))
    else:
        running = torch.cummax(sc.amax(dim=-1), dim=-1).values  # [n, r, steps]
    safe = torch.where(torch.isfinite(running), running, torch.zeros((), device=s.device))
    if arithmetic.exp2_folded:
        p = torch.exp2((sc - safe[..., None]) * LOG2E)
    else:
        p = torch.exp(sc - safe[..., None])
    p8 = cast_p(p, arithmetic)
    last = safe[..., -1:]
    rescale = torch.exp(safe - last)
    row_terms = p8 if arithmetic.row_sum == "rounded" else p
    total = (row_terms.sum(dim=-1) * rescale).sum(dim=-1)  # [n, r]
    vs = v.reshape(n, steps, KERNEL_KV_STEP, v.size(-1))
    acc = torch.einsum("nrck,nckd->nrd", p8 * rescale[..., None], vs)
    o = acc / total[..., None]
    lse = None
    if need_lse:
        lse = torch.where(
            total > 0, total.log() + last[..., 0], torch.full_like(total, float("-inf"))
        )
    return o, lse


def store_rounded(x: torch.Tensor, dtype: torch.dtype, rounding: str) -> torch.Tensor:
    """``x`` (fp32) as ``dtype`` with the store's rounding: ``"rne"`` is torch's cast;
    ``"truncate"`` (bf16 only) clears the 16 low bits, i.e. rounds toward zero."""
    if rounding == "rne":
        return x.to(dtype)
    if rounding != "truncate":
        raise ValueError(f"unknown store rounding {rounding!r}; known: {STORE_ROUNDINGS}")
    if dtype != torch.bfloat16:
        raise ValueError(f"truncating store is modelled for bfloat16 only, not {dtype}")
    bits = x.to(torch.float32).contiguous().view(torch.int32) & -65536  # 0xFFFF0000 as int32
    return bits.view(torch.float32).to(dtype)


__all__ = [
    "AITER_SOURCE_ENVELOPE",
    "ARITHMETIC_VARIANTS",
    "DEFAULT_ARITHMETIC",
    "LOG2E",
    "NO_FAULTS",
    "P_SCALINGS",
    "RESCALE_THRESHOLD",
    "ROW_SUMS",
    "STORE_ROUNDINGS",
    "KernelArithmetic",
    "KernelFaults",
    "cast_p",
    "current_arithmetic",
    "current_faults",
    "injected_faults",
    "kernel_arithmetic",
    "lazy_running_max",
    "round_p",
    "rounded_p_softmax_pv",
    "store_rounded",
]
