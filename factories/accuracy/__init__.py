"""Accuracy of the FP8 MLA prefill path against a float64 reference, through vLLM's real entry.

One place for everything the accuracy suite (``tests/accuracy``) and the GPU kernel script
(``tools/run_gpu_kernel_suite.py``) share:

- :class:`Tolerance` and :data:`TOLERANCES`: the bounds, each with where it comes from, loaded from
  the versioned, digest-checked ``factories/accuracy/tolerances.json`` (``tools/calibrate_tolerance.py``,
  docs/TOLERANCES.md); nothing else holds a number.
- :func:`causal_reference`: bottom-right causal attention in float64, chunked over q rows so a
  16k-token request needs ~100 MB, not ``H * L * L * 8`` bytes.  It is pinned to the project's
  unchunked ``reference_attention`` by a test.
- :func:`recording_kernels`: a module whose two kernels poison their output buffers (NaN), call the
  backend's kernels and keep the arguments they were handed (bound to AITER's pinned signatures),
  so ``final_lse`` and the partials can be read out of vLLM's workspace after the forward.
- :func:`run_fp8_prefill`: ``_init_fp8_prefill_ps_buffers`` -> ``_build_fp8_prefill_ps_metadata``
  -> (workspace locked) -> ``_mla_fp8_prefill_attn`` through the factories, every output buffer
  poisoned first.
- :func:`check_fp8_prefill` -> :class:`AccuracyReport`: every output row against the reference,
  ``final_lse`` on exactly the rows the reduce was told to write, and the plan the kernel got
  against the plan the reduce got.

Module import touches neither vLLM nor typeguard (the GPU script runs where neither exists).
"""

from __future__ import annotations

import contextlib
import inspect
import math
import types
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import numpy as np
import torch

#: Rows of one q tile of the PS prefill kernel; partial slots are this far apart (contract §3.4).
TILE_ROWS = 256
QK_HEAD_DIM = 192
V_HEAD_DIM = 128


# --------------------------------------------------------------------------------------------
# Tolerances: the one place that holds numbers
# --------------------------------------------------------------------------------------------


@attrs.frozen
class Tolerance:
    """``|out - ref| <= out_atol + out_rtol * |ref|`` element-wise on every output row, and
    ``|final_lse - ref_lse| <= lse_atol + lse_rtol * |ref_lse|`` on the rows the reduce wrote.

    ``version`` names the revision of this table; ``source`` says where each number comes from.
    """

    backend: str
    version: str
    out_atol: float
    out_rtol: float
    lse_atol: float
    lse_rtol: float
    source: str = attrs.field(repr=False)
    #: ``factories.accuracy.error_stats.StatBounds`` the aggregate statistic must meet (None: not checked).
    stats: Any = attrs.field(default=None, repr=False)

    def out_allowed(self, ref: torch.Tensor) -> torch.Tensor:
        return _allowed(ref, self.out_atol, self.out_rtol)

    def lse_allowed(self, ref: torch.Tensor) -> torch.Tensor:
        return _allowed(ref, self.lse_atol, self.lse_rtol)

    def describe(self) -> str:
        return (
            f"{self.backend} [{self.version}]: |out-ref| <= {self.out_atol:.3g} + "
            f"{self.out_rtol:.3g}*|ref|; |lse-ref| <= {self.lse_atol:.3g} + {self.lse_rtol:.3g}*|ref|"
        )


def _allowed(ref: torch.Tensor, atol: float, rtol: float) -> torch.Tensor:
    """``atol + rtol * |ref|``; where ``ref`` is infinite (an LSE of -inf) only ``atol``, so an
    infinite reference never makes every value acceptable (and 0 * inf never makes it NaN)."""
    return ref.abs().nan_to_num(nan=0.0, posinf=0.0).mul_(rtol).add_(atol)


#: The seed test's bound (upstream PR #51457: atol 0.1, rtol 0.05, "measured worst ~0.054 on
#: MI355"). Every bound here must be at least 10x tighter for the emulated backend.
SEED_ATOL, SEED_RTOL = 0.1, 0.05


def _load_tolerances() -> tuple[Tolerance, Tolerance]:
    """The derived bounds of ``factories/accuracy/tolerances.json`` (written by
    ``tools/calibrate_tolerance.py``; its digest is verified, so a hand-edited file fails here).
    The file's ``gfx950`` entry is the real AITER backend (``aiter``)."""
    from factories.accuracy.tolerance_file import SUITE_TO_FILE, derived, read

    data = read()
    out = []
    for suite_name in ("emulated", "aiter"):
        d = derived(data, SUITE_TO_FILE[suite_name])
        out.append(
            Tolerance(
                backend=suite_name,
                version=d.version,
                out_atol=d.out_atol,
                out_rtol=d.out_rtol,
                lse_atol=d.lse_atol,
                lse_rtol=d.lse_rtol,
                source=f"factories/accuracy/tolerances.json [{d.backend}], docs/TOLERANCES.md: {d.derivation}",
                stats=d.stat_bounds(),
            )
        )
    return out[0], out[1]


EMULATED_TOLERANCE, REAL_GFX950_TOLERANCE = _load_tolerances()

#: Backend name (``factories.aiter.backend.Backend.name``) -> its tolerance.
TOLERANCES: dict[str, Tolerance] = {
    EMULATED_TOLERANCE.backend: EMULATED_TOLERANCE,
    REAL_GFX950_TOLERANCE.backend: REAL_GFX950_TOLERANCE,
}


def tolerance_for(backend: str) -> Tolerance:
    try:
        return TOLERANCES[backend]
    except KeyError:
        raise KeyError(
            f"no tolerance for backend {backend!r}; known: {sorted(TOLERANCES)}"
        ) from None


# --------------------------------------------------------------------------------------------
# The float64 reference
# --------------------------------------------------------------------------------------------

#: Elements of one [H, rows, keys] float64 score block (2^24 -> 128 MiB, a few live copies).
REFERENCE_BLOCK_ELEMENTS = {"cpu": 1 << 24, "cuda": 1 << 28}


def causal_reference(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    lens: Sequence[int],
    softmax_scale: float,
    *,
    scales: tuple[float, float, float] = (1.0, 1.0, 1.0),
    block_elements: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(out [T, H, Dv], lse [T, H])`` in float64: packed requests of ``lens`` tokens, KV = Q
    (no prefix), bottom-right causal (row i of a request sees keys 0..i), natural-log LSE.

    ``q``/``k``/``v`` are the fp8 (or any float) tensors the kernel reads, dequantized exactly
    (``x * scale``). Each request is cut into blocks of q rows; a block of rows [i0, i1) reads keys
    [0, i1) and masks only the diagonal square, so work and memory follow the causal triangle.
    """
    device = q.device
    num_tokens, num_heads, _ = q.shape
    if sum(lens) != num_tokens or k.size(0) != num_tokens or v.size(0) != num_tokens:
        raise ValueError(
            f"lens {list(lens)} do not pack q/k/v of {num_tokens}/{k.size(0)}/{v.size(0)} rows"
        )
    budget = block_elements or REFERENCE_BLOCK_ELEMENTS.get(
        device.type, REFERENCE_BLOCK_ELEMENTS["cuda"]
    )
    qs, ks, vs = (float(s) for s in scales)
    out = torch.empty(num_heads, num_tokens, v.size(-1), dtype=torch.float64, device=device)
    lse = torch.empty(num_heads, num_tokens, dtype=torch.float64, device=device)
    start = 0
    for n in lens:
        if n == 0:
            continue
        # Head-major float64 copies of this request only: [H, n, D].
        qd = (
            q[start : start + n]
            .to(torch.float64)
            .transpose(0, 1)
            .contiguous()
            .mul_(qs * softmax_scale)
        )
        kt = (
            k[start : start + n].to(torch.float64).permute(1, 2, 0).contiguous().mul_(ks)
        )  # [H, D, n]
        vd = v[start : start + n].to(torch.float64).transpose(0, 1).contiguous().mul_(vs)
        rows = max(1, min(n, budget // max(1, num_heads * n)))
        for i0 in range(0, n, rows):
            i1 = min(n, i0 + rows)
            s = torch.bmm(qd[:, i0:i1], kt[:, :, :i1])  # [H, r, i1]
            r = i1 - i0
            diag = torch.ones(r, r, dtype=torch.bool, device=device).triu_(1)
            s[:, :, i0:i1].masked_fill_(diag, float("-inf"))
            m = s.amax(dim=-1, keepdim=True)  # finite: key i0..i is always visible
            s.sub_(m).exp_()
            total = s.sum(dim=-1)
            o = torch.bmm(s, vd[:, :i1]).div_(total[..., None])
            out[:, start + i0 : start + i1] = o
            lse[:, start + i0 : start + i1] = total.log_().add_(m[..., 0])
            del s, o
        start += n
    return out.transpose(0, 1), lse.transpose(0, 1)


# --------------------------------------------------------------------------------------------
# Recording kernels
# --------------------------------------------------------------------------------------------

KERNELS = ("mla_prefill_ps_asm_fwd", "mla_reduce_v1")

#: Output buffers each kernel writes and nothing reads before: poisoned (NaN) before the call.
#: ``final_output`` of the reduce is NOT here: the prefill kernel already wrote unsplit rows to it.
POISONED_OUTPUTS = {
    "mla_prefill_ps_asm_fwd": ("splitData", "splitLse", "output"),
    "mla_reduce_v1": ("final_lse",),
}


@attrs.define
class KernelCall:
    """One kernel call: arguments bound to AITER's pinned signature (defaults applied), tensors by
    reference; ``bind_error`` when the call did not bind (it is forwarded regardless)."""

    function: str
    arguments: dict[str, Any]
    bind_error: str | None = None


@attrs.define
class KernelRecord:
    calls: list[KernelCall] = attrs.field(factory=list)

    def last(self, function: str) -> KernelCall | None:
        for call in reversed(self.calls):
            if call.function == function:
                return call
        return None


def poison_(t: Any) -> None:
    """NaN for float tensors (a row nobody writes then fails every finiteness check)."""
    if isinstance(t, torch.Tensor) and t.is_floating_point() and t.numel():
        t.fill_(float("nan"))


def _bind(function: str, args: tuple, kwargs: dict) -> tuple[dict[str, Any], str | None]:
    from factories.aiter.signatures import pinned

    try:
        bound = pinned(function).to_inspect().bind(*args, **kwargs)
    except TypeError as exc:
        return {}, f"{function}: {exc}"
    bound.apply_defaults()
    return dict(bound.arguments), None


def recording_kernels(
    backend: types.ModuleType, *, poison: bool = True
) -> tuple[types.ModuleType, KernelRecord]:
    """A module whose ``mla_prefill_ps_asm_fwd``/``mla_reduce_v1`` poison their outputs, call
    ``backend``'s and record what they were handed. Pass it to ``make_impl``: the impl's kernel
    fields are taken from the module it is given."""
    record = KernelRecord()
    module = types.ModuleType(f"{backend.__name__}__recorded")

    def wrap(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def recorded(*args: Any, **kwargs: Any) -> Any:
            arguments, error = _bind(name, args, kwargs)
            if poison:
                for buffer in POISONED_OUTPUTS[name]:
                    poison_(arguments.get(buffer))
            record.calls.append(KernelCall(name, arguments, error))
            return fn(*args, **kwargs)

        with contextlib.suppress(TypeError, ValueError):
            recorded.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
        recorded.__name__ = name
        return recorded

    for name in KERNELS:
        setattr(module, name, wrap(name, getattr(backend, name)))
    return module, record


# --------------------------------------------------------------------------------------------
# Plan readers (what the kernel and the reduce were told to write)
# --------------------------------------------------------------------------------------------


def _host(t: torch.Tensor) -> np.ndarray:
    return t.detach().to("cpu").numpy().astype(np.int64, copy=False)


def planned_split_rows(
    work_indptr: torch.Tensor, work_info: torch.Tensor, total_rows: int
) -> np.ndarray:
    """Rows covered by a work that writes a partial (``partial_o_loc >= 0``): bool ``[total_rows]``.

    Only works inside ``work_indptr``'s ranges count (contract §3.1: the grid is
    ``work_indptr.numel() - 1``). Out-of-range rows are clipped; the caller compares with the
    reduce's rows, so garbage shows up as a mismatch.
    """
    wi = _host(work_indptr).reshape(-1)
    info = (
        _host(work_info).reshape(-1, 8)
        if work_info.numel() % 8 == 0
        else np.zeros((0, 8), np.int64)
    )
    rows = np.zeros(total_rows, dtype=bool)
    for wg in range(len(wi) - 1):
        lo, hi = max(int(wi[wg]), 0), min(int(wi[wg + 1]), len(info))
        for w in range(lo, hi):
            if info[w, 1] >= 0:
                rows[max(int(info[w, 2]), 0) : max(min(int(info[w, 3]), total_rows), 0)] = True
    return rows


def reduced_rows(
    reduce_indptr: torch.Tensor, reduce_final_map: torch.Tensor | None, total_rows: int
) -> tuple[np.ndarray, list[str]]:
    """Rows ``mla_reduce_v1`` writes (``final_lse`` included): groups with >= 2 partials, up to
    the first group that starts at ``reduce_indptr[-1]`` (the persistent kernel's stop; §4.2-4.3).

    Returns the bool mask and the problems found reading the maps (a malformed map is a problem,
    not an exception, so mutants that garble it are reported rather than crash the check).
    """
    rows = np.zeros(total_rows, dtype=bool)
    problems: list[str] = []
    ri = _host(reduce_indptr).reshape(-1)
    if reduce_final_map is None:
        problems.append("reduce_final_map is None (the PS prefill reduce needs explicit q ranges)")
        return rows, problems
    if reduce_final_map.dim() != 2 or reduce_final_map.size(-1) != 2:
        problems.append(
            f"reduce_final_map has shape {tuple(reduce_final_map.shape)}, not [groups, 2]"
        )
        return rows, problems
    fm = _host(reduce_final_map)
    if len(ri) < 1:
        return rows, problems
    last = ri[-1]
    for g in range(min(len(ri) - 1, len(fm))):
        if ri[g] == last:
            break
        if ri[g + 1] - ri[g] < 2:
            continue
        q0, q1 = int(fm[g, 0]), int(fm[g, 1])
        if not 0 <= q0 < q1 <= total_rows:
            problems.append(f"reduce group {g} has q range [{q0}, {q1}) outside [0, {total_rows})")
            continue
        rows[q0:q1] = True
    return rows, problems


def match_heads(kernel_t: torch.Tensor, real_t: torch.Tensor) -> list[int | None]:
    """For each head column of what the kernel was handed, the real head it is a byte-exact copy
    of (None: none). Derived from the data, not from vLLM's padding rule."""

    def head_major_bytes(t: torch.Tensor) -> torch.Tensor:
        t = t.detach()
        t = t.view(torch.uint8) if t.element_size() == 1 and t.is_contiguous() else t
        return t.transpose(0, 1).contiguous()  # [H, T, D]: one head is one contiguous block

    if (
        kernel_t.shape[0] != real_t.shape[0]
        or kernel_t.shape[2:] != real_t.shape[2:]
        or kernel_t.dtype != real_t.dtype
    ):
        return [None] * kernel_t.size(1)
    if kernel_t.shape == real_t.shape and torch.equal(
        kernel_t.view(torch.uint8) if kernel_t.element_size() == 1 else kernel_t,
        real_t.view(torch.uint8) if real_t.element_size() == 1 else real_t,
    ):
        return list(range(real_t.size(1)))
    kb, rb = head_major_bytes(kernel_t), head_major_bytes(real_t)
    probe = slice(0, min(rb.size(1), 64))
    prints: dict[bytes, list[int]] = {}
    for h in range(rb.size(0)):
        prints.setdefault(rb[h, probe].cpu().numpy().tobytes(), []).append(h)
    mapping: list[int | None] = []
    for c in range(kb.size(0)):
        found = None
        for h in prints.get(kb[c, probe].cpu().numpy().tobytes(), []):
            if torch.equal(kb[c], rb[h]):
                found = h
                break
        mapping.append(found)
    return mapping


# --------------------------------------------------------------------------------------------
# The comparison
# --------------------------------------------------------------------------------------------


@attrs.frozen
class Comparison:
    """One tensor against its reference over the elements checked."""

    name: str
    checked: int
    max_abs_err: float
    worst_ratio: float  # max |err| / allowed over the checked elements; > 1 fails
    worst_at: tuple[int, ...]  # (row, head) of the worst element
    failing: int  # elements over the bound (non-finite ones included)

    @property
    def ok(self) -> bool:
        return self.failing == 0


def compare(
    name: str,
    got: torch.Tensor,
    ref: torch.Tensor,
    allowed: torch.Tensor,
    mask: torch.Tensor | None = None,
) -> Comparison:
    """``got`` vs ``ref`` (same shape, leading dims [rows, heads, ...]) where ``mask`` [rows] holds.
    A non-finite difference (NaN written or left unwritten, inf) counts as failing, except
    ``-inf == -inf`` (an LSE of a row that sees nothing), which is an exact match."""
    err = got.to(torch.float64).sub_(ref).abs_()
    if not bool(torch.isfinite(ref).all()):
        same_inf = torch.isinf(ref) & (got.to(torch.float64) == ref)
        err.masked_fill_(same_inf, 0.0)
    err.nan_to_num_(nan=math.inf)
    if mask is not None:
        mask = mask.to(err.device)
        err[~mask] = 0.0
        checked = int(mask.sum()) * (err.numel() // max(err.size(0), 1))
    else:
        checked = err.numel()
    if checked == 0:
        return Comparison(name, 0, 0.0, 0.0, (), 0)
    failing = int((~(err <= allowed)).sum())
    max_abs = float(err.max())
    ratio = err.div_(allowed)
    flat = int(torch.argmax(ratio))
    at = tuple(int(i) for i in np.unravel_index(flat, tuple(ratio.shape)))[:2]
    return Comparison(name, checked, max_abs, float(ratio.reshape(-1)[flat]), at, failing)


@attrs.frozen
class AccuracyReport:
    """The result of one check; ``ok`` iff no problem. ``problems`` are one line each."""

    tolerance: Tolerance
    out: Comparison
    lse: Comparison | None
    unwritten_rows: int
    lse_rows: int
    problems: tuple[str, ...]
    stats: Any = None  # factories.accuracy.error_stats.ErrorStats of out vs ref (when the bound has stats)

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        head = (
            f"out: max|err| {self.out.max_abs_err:.3e} (worst {self.out.worst_ratio:.2f}x the bound "
            f"at row/head {self.out.worst_at}) over {self.out.checked} elements"
        )
        if self.lse is not None:
            head += (
                f"; final_lse: max|err| {self.lse.max_abs_err:.3e} ({self.lse.worst_ratio:.2f}x) "
                f"on {self.lse_rows} reduced rows"
            )
        if self.stats is not None:
            head += (
                f"; rel. Frobenius {self.stats.rel_fro:.3e}, slope-1 {self.stats.slope_dev:+.3e}, "
                f"bias {self.stats.bias:+.3e}"
            )
        lines = [head, f"bound: {self.tolerance.describe()}"]
        lines += [f"PROBLEM: {p}" for p in self.problems]
        return "\n".join(lines)


def check_outputs(
    out: torch.Tensor,
    ref_out: torch.Tensor,
    tolerance: Tolerance,
    *,
    final_lse: torch.Tensor | None = None,
    ref_lse: torch.Tensor | None = None,
    lse_rows: np.ndarray | None = None,
    extra_problems: Sequence[str] = (),
) -> AccuracyReport:
    """Every row of ``out`` [T, H, Dv] against ``ref_out``; ``final_lse`` [T, H] (columns already
    aligned with ``ref_lse``) on ``lse_rows`` only, and NaN (untouched) everywhere else.

    Buffers must have been poisoned with NaN before the run: a NaN row is an unwritten row.
    """
    problems = list(extra_problems)
    total = out.size(0)
    nan_rows = torch.isnan(out.reshape(total, -1)).any(dim=1)
    unwritten = int(nan_rows.sum())
    if unwritten:
        first = int(torch.nonzero(nan_rows)[0])
        problems.append(
            f"{unwritten} of {total} output rows were never written (first: row {first})"
        )
    out_cmp = compare("out", out, ref_out, tolerance.out_allowed(ref_out))
    if out_cmp.failing:
        problems.append(
            f"{out_cmp.failing} output elements exceed the bound; worst {out_cmp.worst_ratio:.3g}x "
            f"at (row, head) {out_cmp.worst_at}, max|err| {out_cmp.max_abs_err:.3e}"
        )
    stats = None
    if tolerance.stats is not None:
        # Systematic errors below the element-wise floor (a scale error): docs/TOLERANCES.md.
        from factories.accuracy.error_stats import error_stats

        stats = error_stats(out, ref_out)
        problems += tolerance.stats.violations(stats)
    lse_cmp = None
    n_lse = 0
    if final_lse is not None and ref_lse is not None and lse_rows is not None:
        mask = torch.from_numpy(lse_rows)
        n_lse = int(mask.sum())
        lse_cmp = compare(
            "final_lse",
            final_lse,
            ref_lse,
            tolerance.lse_allowed(ref_lse),
            mask.to(final_lse.device),
        )
        if lse_cmp.failing:
            problems.append(
                f"{lse_cmp.failing} final_lse elements on reduced rows exceed the bound; worst "
                f"{lse_cmp.worst_ratio:.3g}x at (row, head) {lse_cmp.worst_at}"
            )
        outside = ~mask.to(final_lse.device)
        written_outside = ~torch.isnan(final_lse[outside])
        if bool(written_outside.any()):
            problems.append(
                f"final_lse was written on {int(written_outside.any(dim=-1).sum())} rows outside the "
                "reduce groups (the reduce writes only merged rows, contract §4.2)"
            )
    return AccuracyReport(tolerance, out_cmp, lse_cmp, unwritten, n_lse, tuple(problems), stats)


# --------------------------------------------------------------------------------------------
# The run through vLLM's real entry points
# --------------------------------------------------------------------------------------------


@attrs.frozen
class Fp8PrefillRun:
    """Inputs and everything observed of one forward through vLLM's FP8 prefill path."""

    prefill_lens: tuple[int, ...]
    num_decodes: int
    num_heads: int
    cu_count: int
    softmax_scale: float
    fp8_dtype: torch.dtype
    q: torch.Tensor = attrs.field(eq=False, repr=False)  # bf16, as forward_mha hands them over
    k: torch.Tensor = attrs.field(eq=False, repr=False)
    v: torch.Tensor = attrs.field(eq=False, repr=False)
    out: torch.Tensor = attrs.field(eq=False, repr=False)  # [T, H * 128] bf16
    kernels: KernelRecord = attrs.field(eq=False, repr=False)
    num_partial_tiles: int

    @property
    def total_tokens(self) -> int:
        return sum(self.prefill_lens)


def plan_buffer_attrs() -> tuple[str, ...]:
    """The builder's device buffers the planner's staging copy fills (factories.aiter.ps_buffers)."""
    from factories.aiter.ps_buffers import PS_BUFFERS

    return tuple(b.builder_attr for b in PS_BUFFERS if b.planner_writes)


#: What the builder's device plan buffers hold until the staging copy overwrites them. -1
#: everywhere is a plan of no work (every workgroup's range is empty, the reduce stops at group 0),
#: so a copy that never happens yields unwritten (NaN) rows -- also on the real GPU, safely.
PLAN_POISON = -1


def run_fp8_prefill(
    prefill_lens: Sequence[int],
    num_heads: int,
    backend: types.ModuleType,
    *,
    num_decodes: int = 0,
    cu_count: int,
    device: torch.device | str | None = None,
    seed: int = 0,
    limits: Any = None,
    impl_cls: type | None = None,
    builder_cls: type | None = None,
) -> Fp8PrefillRun:
    """Plan and run one batch through vLLM's three methods with ``backend`` as AITER.

    ``_init_fp8_prefill_ps_buffers`` (limits: all requests, decodes included, and all tokens, as
    the runner sizes them), device plan buffers poisoned with :data:`PLAN_POISON`,
    ``_build_fp8_prefill_ps_metadata``, the workspace locked (as ``GPUModelRunner`` does after
    warm-up), then ``_mla_fp8_prefill_attn`` into an output poisoned with NaN, through kernels that
    poison their own outputs and record their arguments.
    """
    from vllm.platforms import current_platform

    from factories.aiter.backend import aiter_module_installed
    from factories.stubs.builders import make_builder, make_impl, make_prefill_batch, make_qkv
    from factories.stubs.device_shims import emulated_device
    from factories.stubs.pipeline import Limits, build_ps_plan, init_ps_buffers, run_forward
    from factories.stubs.workspace import lock, workspace_device, workspace_session

    dev = torch.device(device) if device is not None else workspace_device()
    lens = tuple(int(n) for n in prefill_lens)
    with aiter_module_installed(backend), emulated_device(cu_count), workspace_session(dev):
        batch = make_prefill_batch(lens, num_decodes=num_decodes, device=dev)
        builder = make_builder(num_heads, builder_cls=builder_cls)
        init_ps_buffers(
            builder,
            limits or Limits(len(lens) + num_decodes, max(lens), sum(lens) + num_decodes),
            dev,
        )
        for name in plan_buffer_attrs():
            getattr(builder, name).fill_(PLAN_POISON)
        build_ps_plan(builder, batch)
        lock()
        kernels, record = recording_kernels(backend)
        impl = make_impl(num_heads, kernels, impl_cls=impl_cls)
        total = batch.total_prefill_tokens
        q, k, v = make_qkv(total, num_heads, dev, seed)
        out = torch.full(
            (total, num_heads * V_HEAD_DIM), float("nan"), dtype=torch.bfloat16, device=dev
        )
        run_forward(impl, q, k, v, batch, out)
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
        # Workspace views stay valid after the reset (the views hold the storage), but copy what
        # the check reads so nothing later can scribble on it.
        for call in record.calls:
            for key in ("final_lse", "splitData", "splitLse"):
                t = call.arguments.get(key)
                if isinstance(t, torch.Tensor):
                    call.arguments[key] = t.clone()
        return Fp8PrefillRun(
            prefill_lens=lens,
            num_decodes=num_decodes,
            num_heads=num_heads,
            cu_count=cu_count,
            softmax_scale=float(impl.scale),
            fp8_dtype=current_platform.fp8_dtype(),
            q=q,
            k=k,
            v=v,
            out=out,
            kernels=record,
            num_partial_tiles=int(batch.metadata.fp8_prefill_num_partial_tiles),
        )
    raise AssertionError("unreachable")  # pragma: no cover (a context manager swallowed an error)


def check_fp8_prefill(
    run: Fp8PrefillRun, tolerance: Tolerance, *, expected_scale: float | None = None
) -> AccuracyReport:
    """The run against the float64 reference on the fp8 tensors vLLM hands the kernel.

    The reference casts the bf16 inputs with the platform's fp8 dtype (scale 1), as vLLM does,
    and is computed on the real heads. The kernel's (padded) Q/K/V columns are matched byte for
    byte to real heads, which both proves the kernel read those very tensors and tells which
    reference head each ``final_lse`` column must equal.
    """
    problems: list[str] = []
    total, heads = run.total_tokens, run.num_heads
    q8, k8, v8 = (t.to(run.fp8_dtype) for t in (run.q, run.k, run.v))
    scale = run.softmax_scale if expected_scale is None else expected_scale
    ref_out, ref_lse = causal_reference(q8, k8, v8, run.prefill_lens, scale)
    out = run.out.view(total, heads, V_HEAD_DIM)

    fwd = run.kernels.last("mla_prefill_ps_asm_fwd")
    red = run.kernels.last("mla_reduce_v1")
    final_cols = lse_rows = None
    if fwd is None or red is None:
        problems.append("the forward did not call both kernels")
    elif fwd.bind_error or red.bind_error:
        problems += [e for e in (fwd.bind_error, red.bind_error) if e]
    else:
        a, r = fwd.arguments, red.arguments
        if a["is_causal"] is not True:
            problems.append(f"the kernel was called with is_causal={a['is_causal']!r}")
        if abs(float(a["softmax_scale"]) - scale) > 1e-12 * abs(scale):
            problems.append(f"the kernel got softmax_scale {a['softmax_scale']}, expected {scale}")
        mapping = [match_heads(a[n], real) for n, real in (("Q", q8), ("K", k8), ("V", v8))]
        if mapping[0] != mapping[1] or mapping[0] != mapping[2]:
            problems.append(f"Q/K/V head columns map to different real heads: {mapping}")
        cols = mapping[0]
        missing = [c for c, h in enumerate(cols) if h is None]
        if missing:
            problems.append(
                f"kernel head columns {missing} are not byte copies of any real head's fp8 q"
            )
        if {h for h in cols if h is not None} != set(range(heads)):
            problems.append(f"not every real head reaches the kernel: columns map to {cols}")
        split = planned_split_rows(a["work_indptr"], a["work_info_set"], total)
        lse_rows, read_problems = reduced_rows(r["reduce_indptr"], r["reduce_final_map"], total)
        problems += read_problems
        if not np.array_equal(split, lse_rows):
            only_k = np.flatnonzero(split & ~lse_rows)
            only_r = np.flatnonzero(lse_rows & ~split)
            problems.append(
                f"the kernel's plan splits {int(split.sum())} rows, the reduce merges {int(lse_rows.sum())}: "
                f"split but not merged {only_k[:4].tolist()}..., merged but not split {only_r[:4].tolist()}..."
            )
        final_lse = r["final_lse"]
        if isinstance(final_lse, torch.Tensor) and not missing:
            final_cols = (final_lse, torch.stack([ref_lse[:, h] for h in cols], dim=1))
        elif not isinstance(final_lse, torch.Tensor):
            problems.append("the reduce got no final_lse tensor")
    if final_cols is None:
        return check_outputs(out, ref_out, tolerance, extra_problems=problems)
    return check_outputs(
        out,
        ref_out,
        tolerance,
        final_lse=final_cols[0],
        ref_lse=final_cols[1],
        lse_rows=lse_rows,
        extra_problems=problems,
    )


def check_or_raised(run_and_check: Callable[[], AccuracyReport]) -> AccuracyReport | BaseException:
    """Run ``run_and_check``; an exception it raises is returned (a run that raises has failed)."""
    try:
        return run_and_check()
    except Exception as exc:  # noqa: BLE001 - any error is a detected failure for mutation tests
        return exc
