"""What vLLM hands AITER, bound and recorded once: the one spy around the AITER module in use.

R1 of the known regressions: ``mla_reduce_v1`` gained a positional ``num_kv_splits`` and vLLM's
positional call bound a tensor to an int slot.  Counting arguments cannot catch the mirror image
(an argument dropped while a trailing default absorbs the shift), so every call is bound to
AITER's pinned signature (:mod:`factories.aiter.signatures`) and each bound value is checked
against the kind that parameter takes.

Two users read the same record: the call-binding contract (per-argument kinds, and the planner
settings against what the kernel is called with, :func:`kernel_requirements`) and the accuracy
run, which poisons the kernels' outputs through ``on_call`` and reads ``final_lse`` and the
partials out of the bound arguments after the forward.
"""

from __future__ import annotations

import contextlib
import enum
import inspect
import types
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import attrs
import torch

from factories.aiter.layout import (
    AITER_FUNCTIONS,
    KERNEL_KV_STEP,
    KERNEL_TILE_ROWS,
    PLAN_FUNCTION,
    PLAN_INFO_FUNCTION,
    PREFILL_KERNEL,
    REDUCE_KERNEL,
)
from factories.aiter.signatures import pinned


class ArgKind(enum.Enum):
    """The kind of value an AITER parameter takes (what the C++ binding accepts there)."""

    TENSOR = "tensor"
    INT = "int"
    FLOAT = "float"
    BOOL = "bool"
    OPT_TENSOR = "tensor or None"

    def accepts(self, value: Any) -> bool:
        """bool is an int to Python but not to the binding, so it is refused for INT/FLOAT."""
        if self is ArgKind.TENSOR:
            return isinstance(value, torch.Tensor)
        if self is ArgKind.OPT_TENSOR:
            return value is None or isinstance(value, torch.Tensor)
        if self is ArgKind.BOOL:
            return isinstance(value, bool)
        if self is ArgKind.INT:
            return isinstance(value, int) and not isinstance(value, bool)
        return isinstance(value, (int, float)) and not isinstance(value, bool)


TENSOR, INT, FLOAT, BOOL, OPT_TENSOR = (
    ArgKind.TENSOR,
    ArgKind.INT,
    ArgKind.FLOAT,
    ArgKind.BOOL,
    ArgKind.OPT_TENSOR,
)

#: The kind of value each AITER parameter takes (aiter/ops/attention.py at e4048607a5).
PARAM_KINDS: dict[str, dict[str, ArgKind]] = {
    PLAN_INFO_FUNCTION: {
        "batch_size": INT,
        "num_head_k": INT,
        "max_qlen": INT,
        "qlen_granularity": INT,
    },
    PLAN_FUNCTION: {
        "seqlens_qo_indptr": TENSOR,
        "pages_kv_indptr": TENSOR,
        "context_lens": TENSOR,
        "gqa_ratio": INT,
        "num_heads_k": INT,
        "work_metadata_ptrs": TENSOR,
        "work_indptr": TENSOR,
        "work_info": TENSOR,
        "reduce_indptr": TENSOR,
        "reduce_final_map": TENSOR,
        "reduce_partial_map": TENSOR,
        "qhead_granularity": INT,
        "qlen_granularity": INT,
        "kvlen_granularity": INT,
        "block_size": INT,
        "is_causal": BOOL,
        "need_lse": BOOL,  # 3606 revision only (contract §8.1)
    },
    PREFILL_KERNEL: {
        "Q": TENSOR,
        "K": TENSOR,
        "V": TENSOR,
        "qo_indptr": TENSOR,
        "kv_indptr": TENSOR,
        "kv_page_indices": TENSOR,
        "work_indptr": TENSOR,
        "work_info_set": TENSOR,
        "max_seqlen_q": INT,
        "softmax_scale": FLOAT,
        "is_causal": BOOL,
        "splitData": TENSOR,
        "splitLse": TENSOR,
        "output": TENSOR,
        "q_scale": TENSOR,
        "k_scale": TENSOR,
        "v_scale": TENSOR,
    },
    REDUCE_KERNEL: {
        "partial_output": TENSOR,
        "partial_lse": TENSOR,
        "reduce_indptr": TENSOR,
        "reduce_final_map": OPT_TENSOR,
        "reduce_partial_map": TENSOR,
        "max_seqlen_q": INT,
        "num_kv_splits": INT,
        "final_output": TENSOR,
        "final_lse": OPT_TENSOR,
    },
}


class ProblemKind(enum.Enum):
    """What is wrong with a recorded call (or with the calls taken together)."""

    UNBOUND = "unbound"  # the arguments do not bind to the pinned signature at all
    WRONG_KIND = "wrong kind"  # a bound value is not of the kind its parameter takes
    PLAN_SETTING = "plan setting"  # a planner setting the fp8 kernel cannot run with
    CAUSAL_MISMATCH = "causal mismatch"  # the planner and the kernel disagree on is_causal


@attrs.frozen
class CallProblem:
    """One finding about AITER calls; ``parameter`` is ``*`` when the call as a whole is wrong."""

    kind: ProblemKind
    function: str
    parameter: str
    message: str

    def __str__(self) -> str:
        return f"{self.function}: {self.message}"


@attrs.frozen
class RecordedCall:
    """One AITER call: the function, its arguments bound to the pinned signature (with
    defaults applied; empty when the call did not bind), and the problems found while binding.
    Tensors are held by reference, so a buffer reads what the callee wrote into it."""

    function: str
    arguments: dict[str, Any] = attrs.field(eq=False)
    problems: tuple[CallProblem, ...]

    @property
    def bind_error(self) -> str | None:
        """``function: reason`` when the call did not bind (None when it did)."""
        for problem in self.problems:
            if problem.kind is ProblemKind.UNBOUND:
                return str(problem)
        return None


def check_call(function: str, args: tuple, kwargs: dict) -> RecordedCall:
    """Bind one call to the pinned signature and check each bound value's kind."""
    try:
        bound = pinned(function).to_inspect().bind(*args, **kwargs)
    except TypeError as exc:
        return RecordedCall(
            function, {}, (CallProblem(ProblemKind.UNBOUND, function, "*", str(exc)),)
        )
    bound.apply_defaults()
    problems = []
    for name, value in bound.arguments.items():
        kind = PARAM_KINDS[function][name]
        if not kind.accepts(value):
            problems.append(
                CallProblem(
                    ProblemKind.WRONG_KIND,
                    function,
                    name,
                    f"{name} takes {kind.value}, got {type(value).__name__}",
                )
            )
    return RecordedCall(function, dict(bound.arguments), tuple(problems))


def last_call(calls: Iterable[RecordedCall], function: str) -> RecordedCall | None:
    """The latest recorded call of ``function`` (None: it was never called)."""
    found = None
    for call in calls:
        if call.function == function:
            found = call
    return found


def spy_module(
    module: types.ModuleType,
    *,
    functions: Sequence[str] = AITER_FUNCTIONS,
    on_call: Callable[[RecordedCall], None] | None = None,
    forward_problem_calls: bool = False,
) -> tuple[types.ModuleType, list[RecordedCall]]:
    """A stand-in for ``module`` whose ``functions`` record (and check) every call, then run.

    ``on_call`` sees each recorded call before it is forwarded (the accuracy run poisons the
    output buffers there). By default a call with a problem is recorded and *not* forwarded, so
    the contract reports the binding problem instead of whatever the kernel would do with
    misplaced arguments; the sizing function is always forwarded because the caller cannot go on
    without its shapes. ``forward_problem_calls`` forwards every call as made, so that what the
    callee does with it (raise, write garbage) is what the caller observes.
    Every other attribute of ``module`` is passed through unchanged.
    """
    calls: list[RecordedCall] = []
    spy = types.ModuleType(f"{module.__name__}__spy")

    def wrap(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def recorded(*args: Any, **kwargs: Any) -> Any:
            call = check_call(name, args, kwargs)
            if on_call is not None:
                on_call(call)
            calls.append(call)
            if call.problems and not forward_problem_calls and name != PLAN_INFO_FUNCTION:
                return None
            return fn(*args, **kwargs)

        with contextlib.suppress(TypeError, ValueError):
            recorded.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
        recorded.__name__ = name
        return recorded

    for name in functions:
        setattr(spy, name, wrap(name, getattr(module, name)))
    for name in dir(module):
        if not name.startswith("__") and not hasattr(spy, name):
            setattr(spy, name, getattr(module, name))
    return spy, calls


def kernel_requirements(calls: Sequence[RecordedCall]) -> list[CallProblem]:
    """What the recorded plan settings violate of the fp8 kernel's needs (contract §3.6)."""
    problems: list[CallProblem] = []

    def setting(parameter: str, message: str) -> None:
        problems.append(CallProblem(ProblemKind.PLAN_SETTING, PLAN_FUNCTION, parameter, message))

    plans = [c for c in calls if c.function == PLAN_FUNCTION and not c.problems]
    kernels = [c for c in calls if c.function == PREFILL_KERNEL and not c.problems]
    for plan in plans:
        a = plan.arguments
        if a["qhead_granularity"] != 1:
            setting("qhead_granularity", f"qhead_granularity {a['qhead_granularity']} != 1")
        if a["qlen_granularity"] != KERNEL_TILE_ROWS:
            setting(
                "qlen_granularity",
                f"qlen_granularity {a['qlen_granularity']} != {KERNEL_TILE_ROWS} "
                f"(partial slots are {KERNEL_TILE_ROWS} rows)",
            )
        if a["kvlen_granularity"] % KERNEL_KV_STEP:
            setting(
                "kvlen_granularity",
                f"kvlen_granularity {a['kvlen_granularity']} is not a multiple of {KERNEL_KV_STEP}",
            )
        if a["block_size"] != 1:
            setting(
                "block_size",
                f"block_size {a['block_size']} != 1 (the kernel treats pages as tokens)",
            )
        if a["gqa_ratio"] != 1:
            setting("gqa_ratio", f"gqa_ratio {a['gqa_ratio']} != 1 (only Gqa=1 kernels exist)")
        for kernel in kernels:
            if kernel.arguments["is_causal"] != a["is_causal"]:
                problems.append(
                    CallProblem(
                        ProblemKind.CAUSAL_MISMATCH,
                        PREFILL_KERNEL,
                        "is_causal",
                        f"planner is_causal={a['is_causal']} but kernel is_causal="
                        f"{kernel.arguments['is_causal']}",
                    )
                )
    return problems
