"""What vLLM hands AITER, checked per argument: a spy around the AITER module in use.

R1 of the known regressions: ``mla_reduce_v1`` gained a positional ``num_kv_splits`` and vLLM's
positional call bound a tensor to an int slot.  Counting arguments cannot catch the mirror image
(an argument dropped while a trailing default absorbs the shift), so every call is bound to
AITER's pinned signature and each bound value is checked against the kind that parameter takes.
The spy also records the planner settings, so the plan's ``is_causal`` and granularities can be
compared with what the kernel is called with.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from typing import Any

import attrs
import torch

from factories.aiter.signatures import pinned

TENSOR, INT, FLOAT, BOOL, OPT_TENSOR = "tensor", "int", "float", "bool", "tensor or None"

#: The kind of value each AITER parameter takes (aiter/ops/attention.py at e4048607a5).
PARAM_KINDS: dict[str, dict[str, str]] = {
    "get_ps_metadata_info_v1": {
        "batch_size": INT, "num_head_k": INT, "max_qlen": INT, "qlen_granularity": INT,
    },
    "get_ps_metadata_v1": {
        "seqlens_qo_indptr": TENSOR, "pages_kv_indptr": TENSOR, "context_lens": TENSOR,
        "gqa_ratio": INT, "num_heads_k": INT, "work_metadata_ptrs": TENSOR,
        "work_indptr": TENSOR, "work_info": TENSOR, "reduce_indptr": TENSOR,
        "reduce_final_map": TENSOR, "reduce_partial_map": TENSOR, "qhead_granularity": INT,
        "qlen_granularity": INT, "kvlen_granularity": INT, "block_size": INT, "is_causal": BOOL,
    },
    "mla_prefill_ps_asm_fwd": {
        "Q": TENSOR, "K": TENSOR, "V": TENSOR, "qo_indptr": TENSOR, "kv_indptr": TENSOR,
        "kv_page_indices": TENSOR, "work_indptr": TENSOR, "work_info_set": TENSOR,
        "max_seqlen_q": INT, "softmax_scale": FLOAT, "is_causal": BOOL, "splitData": TENSOR,
        "splitLse": TENSOR, "output": TENSOR, "q_scale": TENSOR, "k_scale": TENSOR,
        "v_scale": TENSOR,
    },
    "mla_reduce_v1": {
        "partial_output": TENSOR, "partial_lse": TENSOR, "reduce_indptr": TENSOR,
        "reduce_final_map": OPT_TENSOR, "reduce_partial_map": TENSOR, "max_seqlen_q": INT,
        "num_kv_splits": INT, "final_output": TENSOR, "final_lse": OPT_TENSOR,
    },
}


def _kind_ok(kind: str, value: Any) -> bool:
    if kind == TENSOR:
        return isinstance(value, torch.Tensor)
    if kind == OPT_TENSOR:
        return value is None or isinstance(value, torch.Tensor)
    if kind == BOOL:
        return isinstance(value, bool)
    if kind == INT:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == FLOAT:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    raise ValueError(kind)


@attrs.frozen
class CallProblem:
    function: str
    parameter: str
    message: str


@attrs.frozen
class RecordedCall:
    """One AITER call: the function, its arguments bound to the pinned signature (with
    defaults applied), and the problems found while binding."""

    function: str
    arguments: dict[str, Any] = attrs.field(eq=False)
    problems: tuple[CallProblem, ...]


def check_call(function: str, args: tuple, kwargs: dict) -> RecordedCall:
    signature = pinned(function).to_inspect()
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as exc:
        return RecordedCall(function, {}, (CallProblem(function, "*", str(exc)),))
    bound.apply_defaults()
    problems = []
    for name, value in bound.arguments.items():
        kind = PARAM_KINDS[function][name]
        if not _kind_ok(kind, value):
            problems.append(
                CallProblem(function, name, f"{name} takes {kind}, got {type(value).__name__}")
            )
    return RecordedCall(function, dict(bound.arguments), tuple(problems))


def spy_module(module: types.ModuleType) -> tuple[types.ModuleType, list[RecordedCall]]:
    """A stand-in for ``module`` whose four functions record (and check) every call, then run.

    A call that does not bind is recorded and *not* forwarded, so the contract reports the
    binding problem instead of whatever the kernel would do with misplaced arguments.
    """
    calls: list[RecordedCall] = []
    spy = types.ModuleType(f"{module.__name__}__spy")

    def wrap(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def recorded(*args: Any, **kwargs: Any) -> Any:
            call = check_call(name, args, kwargs)
            calls.append(call)
            if call.problems:
                return None if name != "get_ps_metadata_info_v1" else fn(*args, **kwargs)
            return fn(*args, **kwargs)

        recorded.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
        recorded.__name__ = name
        return recorded

    for name in PARAM_KINDS:
        setattr(spy, name, wrap(name, getattr(module, name)))
    for name in dir(module):
        if not name.startswith("__") and not hasattr(spy, name):
            setattr(spy, name, getattr(module, name))
    return spy, calls


def kernel_requirements(calls: list[RecordedCall]) -> list[str]:
    """What the recorded plan settings violate of the fp8 kernel's needs (contract §3.6)."""
    problems = []
    plans = [c for c in calls if c.function == "get_ps_metadata_v1" and not c.problems]
    kernels = [c for c in calls if c.function == "mla_prefill_ps_asm_fwd" and not c.problems]
    for plan in plans:
        a = plan.arguments
        if a["qhead_granularity"] != 1:
            problems.append(f"qhead_granularity {a['qhead_granularity']} != 1")
        if a["qlen_granularity"] != 256:
            problems.append(f"qlen_granularity {a['qlen_granularity']} != 256 (partial slots are 256 rows)")
        if a["kvlen_granularity"] % 128:
            problems.append(f"kvlen_granularity {a['kvlen_granularity']} is not a multiple of 128")
        if a["block_size"] != 1:
            problems.append(f"block_size {a['block_size']} != 1 (the kernel treats pages as tokens)")
        if a["gqa_ratio"] != 1:
            problems.append(f"gqa_ratio {a['gqa_ratio']} != 1 (only Gqa=1 kernels exist)")
        for kernel in kernels:
            if kernel.arguments["is_causal"] != a["is_causal"]:
                problems.append(
                    f"planner is_causal={a['is_causal']} but kernel is_causal="
                    f"{kernel.arguments['is_causal']}"
                )
    return problems
