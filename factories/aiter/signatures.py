"""AITER's four PS-prefill entry points, pinned as data.

Why: vLLM calls these functions positionally, and AITER has already broken positional callers by
*inserting* parameters (``max_seqlen_q`` in af113a3f89, ``num_kv_splits`` in ff61bb3997, both
before ``final_output`` of ``mla_reduce_v1``; contract §4.1). A signature table that is plain data
can be compared with the emulation (so the test double cannot drift) and, on a gfx950 machine, with
the real ``aiter`` (so the table cannot drift from upstream). Names, order, kinds and defaults are
pinned; annotations are not (upstream changed ``Optional[X]`` to ``X | None`` in 044f906a8d, which
changes no call).

Source: ROCm/aiter ``aiter/ops/attention.py`` at e4048607a5 (2026-08-22): lines 1004-1009,
1047-1065, 1068-1087 and 1449-1459. That is the ``pre-3606`` revision; the ``3606`` revision
(ROCm/aiter#3606, AITER v0.1.22.post1 on) appends ``need_lse=False`` to ``get_ps_metadata_v1`` and
leaves the other three as they were (contract §8.1 says what of this was read and what was taken
from the PR discussion). :func:`pinned` answers for the revision in force
(:mod:`factories.aiter.revision`).
"""

from __future__ import annotations

import enum
import inspect
from collections.abc import Callable
from typing import Any

import attrs

from factories.aiter.revision import AiterContract, current_contract

_ParamKind = type(inspect.Parameter.POSITIONAL_OR_KEYWORD)


class _NoDefault(enum.Enum):
    """Marker for "this parameter has no default" (``inspect.Parameter.empty`` is a class)."""

    NO_DEFAULT = "NO_DEFAULT"

    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT = _NoDefault.NO_DEFAULT
_POK = inspect.Parameter.POSITIONAL_OR_KEYWORD


@attrs.frozen
class Param:
    """One parameter: name, kind (positional-or-keyword for all of AITER's stubs) and default."""

    name: str
    default: Any = NO_DEFAULT
    kind: _ParamKind = _POK

    @classmethod
    def of(cls, p: inspect.Parameter) -> Param:
        default = NO_DEFAULT if p.default is inspect.Parameter.empty else p.default
        return cls(name=p.name, default=default, kind=p.kind)

    def to_inspect(self) -> inspect.Parameter:
        default = inspect.Parameter.empty if self.default is NO_DEFAULT else self.default
        return inspect.Parameter(self.name, self.kind, default=default)


@attrs.frozen
class FunctionSignature:
    """An ordered parameter list of one named function."""

    name: str
    params: tuple[Param, ...] = attrs.field(converter=tuple)

    @classmethod
    def of(cls, fn: Callable[..., Any], name: str | None = None) -> FunctionSignature:
        """Read a callable's signature (follows ``__wrapped__``, as AITER's ``compile_ops``
        wraps)."""
        sig = inspect.signature(fn)
        return cls(
            name=name or getattr(fn, "__name__", repr(fn)),
            params=tuple(Param.of(p) for p in sig.parameters.values()),
        )

    def to_inspect(self) -> inspect.Signature:
        return inspect.Signature([p.to_inspect() for p in self.params])

    def differences(self, actual: FunctionSignature) -> tuple[str, ...]:
        """Human-readable differences, position by position (empty when they agree)."""
        out: list[str] = []
        if actual.name != self.name:
            out.append(f"name: expected {self.name!r}, got {actual.name!r}")
        for i in range(max(len(self.params), len(actual.params))):
            exp = self.params[i] if i < len(self.params) else None
            act = actual.params[i] if i < len(actual.params) else None
            if exp != act:
                out.append(f"{self.name} parameter #{i}: expected {exp}, got {act}")
        return tuple(out)


def _sig(name: str, *params: Param | str) -> FunctionSignature:
    return FunctionSignature(name, tuple(p if isinstance(p, Param) else Param(p) for p in params))


GET_PS_METADATA_INFO_V1 = _sig(
    "get_ps_metadata_info_v1",
    "batch_size",
    "num_head_k",
    "max_qlen",
    Param("qlen_granularity", 256),
)

# Defaults are the *Python stub's* (16/16); the pybind module's are 1/1 (contract §2.1, §7.1).
GET_PS_METADATA_V1 = _sig(
    "get_ps_metadata_v1",
    "seqlens_qo_indptr",
    "pages_kv_indptr",
    "context_lens",
    "gqa_ratio",
    "num_heads_k",
    "work_metadata_ptrs",
    "work_indptr",
    "work_info",
    "reduce_indptr",
    "reduce_final_map",
    "reduce_partial_map",
    Param("qhead_granularity", 1),
    Param("qlen_granularity", 256),
    Param("kvlen_granularity", 16),
    Param("block_size", 16),
    Param("is_causal", True),
)

MLA_PREFILL_PS_ASM_FWD = _sig(
    "mla_prefill_ps_asm_fwd",
    "Q",
    "K",
    "V",
    "qo_indptr",
    "kv_indptr",
    "kv_page_indices",
    "work_indptr",
    "work_info_set",
    "max_seqlen_q",
    "softmax_scale",
    "is_causal",
    "splitData",
    "splitLse",
    "output",
    Param("q_scale", None),
    Param("k_scale", None),
    Param("v_scale", None),
)

# The CURRENT 9-parameter form (max_seqlen_q and num_kv_splits inserted before final_output).
MLA_REDUCE_V1 = _sig(
    "mla_reduce_v1",
    "partial_output",
    "partial_lse",
    "reduce_indptr",
    "reduce_final_map",
    "reduce_partial_map",
    "max_seqlen_q",
    "num_kv_splits",
    "final_output",
    Param("final_lse", None),
)

#: The wheel 0.1.7.post2.dev18 form, kept to show what old positional callers bind to.
MLA_REDUCE_V1_WHEEL_0_1_7 = _sig(
    "mla_reduce_v1",
    "partial_output",
    "partial_lse",
    "reduce_indptr",
    "reduce_final_map",
    "reduce_partial_map",
    "final_output",
    Param("final_lse", None),
)

#: ``get_ps_metadata_v1`` after ROCm/aiter#3606: ``need_lse`` appended, default False (sglang's
#: AITER backend passes it by keyword with that default; contract §8.1).
GET_PS_METADATA_V1_3606 = FunctionSignature(
    "get_ps_metadata_v1", (*GET_PS_METADATA_V1.params, Param("need_lse", False))
)

#: The four signatures per contract revision, in ``AITER_FUNCTIONS`` order.
PINNED_BY_CONTRACT: dict[AiterContract, tuple[FunctionSignature, ...]] = {
    AiterContract.PRE_3606: (
        GET_PS_METADATA_INFO_V1,
        GET_PS_METADATA_V1,
        MLA_PREFILL_PS_ASM_FWD,
        MLA_REDUCE_V1,
    ),
    AiterContract.PR_3606: (
        GET_PS_METADATA_INFO_V1,
        GET_PS_METADATA_V1_3606,
        MLA_PREFILL_PS_ASM_FWD,
        MLA_REDUCE_V1,
    ),
}

#: The pre-3606 table (e4048607a5), the one every revision shares three entries with.
PINNED_SIGNATURES: tuple[FunctionSignature, ...] = PINNED_BY_CONTRACT[AiterContract.PRE_3606]


def pinned_signatures(contract: AiterContract | None = None) -> tuple[FunctionSignature, ...]:
    """The four pinned signatures of ``contract`` (None: the revision in force)."""
    return PINNED_BY_CONTRACT[current_contract() if contract is None else contract]


def pinned(name: str, contract: AiterContract | None = None) -> FunctionSignature:
    """The pinned signature of one of the four functions, by name, under ``contract`` (None:
    the revision in force)."""
    for sig in pinned_signatures(contract):
        if sig.name == name:
            return sig
    raise KeyError(name)
