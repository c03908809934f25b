"""One forward through vLLM's FP8 prefill path, and its check against the float64 reference.

:func:`run_fp8_prefill` drives ``_init_fp8_prefill_ps_buffers`` ->
``_build_fp8_prefill_ps_metadata`` -> (workspace locked) -> ``_mla_fp8_prefill_attn`` through the
factories, with every output buffer poisoned first and the kernels seen through the AITER spy
(:mod:`factories.aiter.spy`), so ``final_lse`` and the partials can be read out of vLLM's
workspace after the forward.
:func:`check_fp8_prefill` judges every output row, ``final_lse`` on exactly the rows the reduce
was told to write, and the plan the kernel got against the plan the reduce got.

vLLM and the factories that import it are imported inside the functions: the module imports
where vLLM does not exist (the kernel-level GPU runner).
"""

from __future__ import annotations

import types
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import numpy as np
import torch

from factories.accuracy.compare import AccuracyReport, check_outputs
from factories.accuracy.plans import match_heads, planned_split_rows, reduced_rows
from factories.accuracy.reference import causal_key_counts, causal_reference
from factories.accuracy.tolerance import Tolerance
from factories.aiter.layout import PREFILL_KERNEL, REDUCE_KERNEL, V_HEAD_DIM
from factories.aiter.spy import RecordedCall, last_call, spy_module

#: Output buffers each kernel writes and nothing reads before: poisoned (NaN) before the call.
#: ``final_output`` of the reduce is NOT here: the prefill kernel already wrote unsplit rows to it.
POISONED_OUTPUTS = {
    PREFILL_KERNEL: ("splitData", "splitLse", "output"),
    REDUCE_KERNEL: ("final_lse",),
}


def poison_(t: Any) -> None:
    """NaN for float tensors (a row nobody writes then fails every finiteness check)."""
    if isinstance(t, torch.Tensor) and t.is_floating_point() and t.numel():
        t.fill_(float("nan"))


def _poison_outputs(call: RecordedCall) -> None:
    for buffer in POISONED_OUTPUTS[call.function]:
        poison_(call.arguments.get(buffer))


def recording_kernels(
    backend: types.ModuleType, *, poison: bool = True
) -> tuple[types.ModuleType, list[RecordedCall]]:
    """``backend`` seen through the spy: its prefill kernel and reduce poison their outputs
    (unless ``poison`` is false), are recorded, and are forwarded as called even when a call
    does not bind (what the backend then does is what vLLM would get). Pass the module to
    ``make_impl``: the impl's kernel fields are taken from the module it is given."""
    return spy_module(
        backend,
        functions=(PREFILL_KERNEL, REDUCE_KERNEL),
        on_call=_poison_outputs if poison else None,
        forward_problem_calls=True,
    )


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
    #: The prefill kernel's and the reduce's calls, arguments bound (``factories.aiter.spy``).
    kernels: list[RecordedCall] = attrs.field(eq=False, repr=False)
    num_partial_tiles: int

    @property
    def total_tokens(self) -> int:
        return sum(self.prefill_lens)


def plan_buffer_attrs() -> tuple[str, ...]:
    """The builder's device buffers the planner's staging copy fills
    (``factories.aiter.ps_buffers``)."""
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
        kernels, calls = recording_kernels(backend)
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
        for call in calls:
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
            kernels=calls,
            num_partial_tiles=int(batch.metadata.fp8_prefill_num_partial_tiles),
        )
    raise AssertionError("unreachable")  # pragma: no cover (a context manager swallowed an error)


def check_fp8_prefill(
    run: Fp8PrefillRun,
    tolerance: Tolerance,
    *,
    expected_scale: float | None = None,
    reference: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> AccuracyReport:
    """The run against the float64 reference on the fp8 tensors vLLM hands the kernel.

    The reference casts the bf16 inputs with the platform's fp8 dtype (scale 1), as vLLM does,
    and is computed on the real heads. The kernel's (padded) Q/K/V columns are matched byte for
    byte to real heads, which both proves the kernel read those very tensors and tells which
    reference head each ``final_lse`` column must equal. ``reference`` is that ``(out, lse)``
    when the caller computed it already (the calibration needs it too, and it dominates the cost).
    """
    problems: list[str] = []
    total, heads = run.total_tokens, run.num_heads
    q8, k8, v8 = (t.to(run.fp8_dtype) for t in (run.q, run.k, run.v))
    scale = run.softmax_scale if expected_scale is None else expected_scale
    if reference is None:
        reference = causal_reference(q8, k8, v8, run.prefill_lens, scale)
    ref_out, ref_lse = reference
    out = run.out.view(total, heads, V_HEAD_DIM)

    fwd = last_call(run.kernels, PREFILL_KERNEL)
    red = last_call(run.kernels, REDUCE_KERNEL)
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
                f"the kernel's plan splits {int(split.sum())} rows, the reduce merges "
                f"{int(lse_rows.sum())}: split but not merged {only_k[:4].tolist()}..., "
                f"merged but not split {only_r[:4].tolist()}..."
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
        lse_keys=causal_key_counts(run.prefill_lens),
        extra_problems=problems,
    )


def check_or_raised(run_and_check: Callable[[], AccuracyReport]) -> AccuracyReport | BaseException:
    """Run ``run_and_check``; an exception it raises is returned (a run that raises has failed)."""
    try:
        return run_and_check()
    except Exception as exc:  # any error is a detected failure for mutation tests
        return exc
