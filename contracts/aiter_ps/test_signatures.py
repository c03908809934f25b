"""Pin the four AITER PS-prefill signatures: the emulation against the table, and, where a real
``aiter`` is importable, the real package against the same table.

Why: ``mla_reduce_v1`` gained ``max_seqlen_q`` and then ``num_kv_splits`` *positionally before*
``final_output`` (contract §4.1); positional callers written for the older form bind the output
buffer to an int without any error on the Python side. A pinned table catches such a change the
day the dependency moves, and keeps the emulation from drifting from it.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
import types

import pytest

import factories.aiter.emulation as emulation
from factories.aiter.emulation.planner import ByContract
from factories.aiter.revision import CONTRACTS, AiterContract, aiter_contract, contract_of
from factories.aiter.signatures import (
    MLA_REDUCE_V1,
    MLA_REDUCE_V1_WHEEL_0_1_7,
    PINNED_SIGNATURES,
    FunctionSignature,
    pinned,
    pinned_signatures,
)

NAMES = [s.name for s in PINNED_SIGNATURES]


@pytest.mark.parametrize("contract", CONTRACTS, ids=str)
@pytest.mark.parametrize("name", NAMES)
def test_emulation_matches_the_pinned_signature(name, contract):
    """Under each contract revision, the emulated module shows that revision's signature."""
    expected = pinned(name, contract)
    with aiter_contract(contract):
        actual = FunctionSignature.of(getattr(emulation, name), name)
        parameters = inspect.signature(getattr(emulation, name)).parameters.values()
    assert expected.differences(actual) == ()
    stripped = [p.replace(annotation=inspect.Parameter.empty) for p in parameters]
    assert stripped == list(expected.to_inspect().parameters.values())


@pytest.mark.parametrize("contract", CONTRACTS, ids=str)
def test_each_revisions_planner_body_has_its_pinned_signature(contract):
    """The per-revision bodies are plain functions, so the pin is not circular: the table is
    compared with code written separately for each revision."""
    assert isinstance(emulation.get_ps_metadata_v1, ByContract)
    body = emulation.get_ps_metadata_v1.by_contract[contract]
    actual = FunctionSignature.of(body, "get_ps_metadata_v1")
    assert pinned("get_ps_metadata_v1", contract).differences(actual) == ()


def test_revisions_differ_exactly_by_a_trailing_need_lse():
    old, new = (pinned_signatures(c) for c in CONTRACTS)
    diffs = [d for a, b in zip(old, new) for d in a.differences(b)]
    assert diffs == [
        "get_ps_metadata_v1 parameter #16: expected None, "
        "got Param(name='need_lse', default=False, kind=<_ParameterKind.POSITIONAL_OR_KEYWORD: 1>)"
    ]


@pytest.mark.parametrize(
    "params, expected",
    [
        ("a, b, is_causal=True", AiterContract.PRE_3606),
        ("a, b, is_causal=True, need_lse=False", AiterContract.PR_3606),
        ("a, need_lse=False, **kw", AiterContract.PR_3606),
    ],
    ids=["without-need_lse", "trailing-need_lse", "need_lse-anywhere"],
)
def test_contract_is_read_off_a_modules_planner_signature(params, expected):
    module = types.ModuleType("fake_aiter")
    exec(f"def get_ps_metadata_v1({params}): pass", module.__dict__)
    assert contract_of(module) is expected
    assert contract_of(types.ModuleType("no_planner")) is None


def test_table_pins_the_current_reduce_order_and_stub_defaults():
    """The facts the table encodes, spelled out (contract §2.1, §3.1, §4.1)."""
    reduce_names = [p.name for p in MLA_REDUCE_V1.params]
    assert reduce_names[5:8] == ["max_seqlen_q", "num_kv_splits", "final_output"]
    assert [p.name for p in MLA_REDUCE_V1_WHEEL_0_1_7.params][5] == "final_output"
    planner = {p.name: p.default for p in pinned("get_ps_metadata_v1").params}
    assert (
        planner["qhead_granularity"],
        planner["qlen_granularity"],
        planner["kvlen_granularity"],
        planner["block_size"],
        planner["is_causal"],
    ) == (1, 256, 16, 16, True)
    assert [p.default for p in pinned("mla_prefill_ps_asm_fwd").params[-3:]] == [None, None, None]
    assert pinned("get_ps_metadata_info_v1").params[-1].default == 256


def test_differences_name_the_misbound_parameter():
    diffs = MLA_REDUCE_V1.differences(MLA_REDUCE_V1_WHEEL_0_1_7)
    assert any("parameter #5" in d and "max_seqlen_q" in d and "final_output" in d for d in diffs)


def test_package_exposes_exactly_the_four_aiter_functions():
    public_callables = {
        n for n in emulation.AITER_FUNCTIONS if callable(getattr(emulation, n, None))
    }
    assert public_callables == set(NAMES)


def test_package_can_stand_in_for_aiter(monkeypatch):
    monkeypatch.setitem(sys.modules, "aiter", emulation)
    aiter = importlib.import_module("aiter")
    from aiter import mla_reduce_v1  # noqa: F401  (the import form vLLM uses)

    assert aiter is emulation
    assert aiter.__spec__ is not None and aiter.__spec__.name == "factories.aiter.emulation"


def _real_aiter() -> types.ModuleType:
    """The real ``aiter`` package, or skip saying precisely why it is not available."""
    existing = sys.modules.get("aiter")
    if existing is not None and getattr(existing, "IS_AITER_EMULATION", False):
        pytest.skip(
            "sys.modules['aiter'] is the emulation (injected by a test); "
            "the real package is not loaded"
        )
    if existing is None:
        spec = importlib.util.find_spec("aiter")
        if spec is None:
            pytest.skip(
                "real AITER is not installed (ROCm-only; this is the gfx950 half of the pin)"
            )
        if spec.origin is None:  # PEP 420 namespace package: a bare directory named aiter
            pytest.skip(
                "real AITER is not installed; 'aiter' resolves only to a namespace package at "
                f"{list(spec.submodule_search_locations or [])} (a test directory on sys.path)"
            )
    try:
        module = importlib.import_module("aiter")
    except Exception as exc:  # ROCm/HIP missing, JIT setup failing, ...
        pytest.skip(
            f"real AITER is installed but fails to import here: {type(exc).__name__}: {exc}"
        )
    if getattr(module, "IS_AITER_EMULATION", False):
        pytest.skip("'aiter' resolves to the emulation")
    if getattr(module, "__file__", None) is None:
        pytest.skip(
            f"'aiter' is a namespace package at {list(getattr(module, '__path__', []))}, not AITER"
        )
    return module


@pytest.mark.parametrize("name", NAMES)
def test_real_aiter_matches_the_pinned_signature(name):
    """Against the table of the revision the real package shows (its planner's need_lse)."""
    aiter = _real_aiter()
    fn = getattr(aiter, name, None)
    assert fn is not None, f"real aiter has no {name}"
    contract = contract_of(aiter)
    assert pinned(name, contract).differences(FunctionSignature.of(fn, name)) == ()
