"""Hand-off and call sites: builder -> metadata -> impl, and vLLM -> AITER.

The hand-off half reads source only (the analyzer), so it also runs on mutated trees without
importing them; the call-site half runs the real methods against a spy of the AITER in use.
The ``selfcheck`` tests (``--selfcheck``) mutate the pinned release source, not the vLLM under
test.
"""

from __future__ import annotations

import enum

import pytest

from factories.aiter.backend import aiter_module_installed
from factories.aiter.revision import CONTRACTS, AiterContract, aiter_contract
from factories.aiter.signatures import pinned
from factories.aiter.spy import ProblemKind, check_call, kernel_requirements, spy_module
from factories.analysis.classes import MemberKind
from factories.analysis.findings import Problem
from factories.stubs.builders import KERNEL_FIELDS, make_impl, make_prefill_batch, make_qkv
from factories.stubs.drift import source_root_of
from factories.stubs.fp8_path import analyze_fp8_path
from factories.stubs.pipeline import Limits, run_forward
from factories.stubs.specs import AITER_MLA_MODULE


class Handoff(enum.Enum):
    """What the builder -> impl hand-off of ``fp8_prefill_*`` fields must satisfy."""

    WRITTEN = "written"  # every field the impl reads, the builder writes
    DECLARED = "declared"  # every field either side touches is declared on AiterMLAMetadata
    ANALYSED = "analysed"  # the analysis saw the impl read at least one field


def handoff_problems(root) -> list[Problem]:
    """Every fp8_prefill_* field the impl reads is written by the builder; both are declared
    fields of AiterMLAMetadata (a dataclass field with a default, or any class member)."""
    path = analyze_fp8_path(root)
    forward, build = path.forward, path.builder[-1]
    metadata_cls = path.resolve(AITER_MLA_MODULE, "AiterMLAMetadata")
    read = {
        p for p in forward.param_paths("attn_metadata", write=False) if p.startswith("fp8_prefill_")
    }
    written = {p for p in build.param_paths("metadata", write=True) if p.startswith("fp8_prefill_")}
    declared = {
        name
        for name, m in path.auditor.index.members(metadata_cls).items()
        if m.kind in (MemberKind.ATTRIBUTE, MemberKind.ANNOTATION_ONLY)
    }
    problems = [
        Problem(Handoff.WRITTEN, n, "the impl reads it but the builder never writes it")
        for n in sorted(read - written)
    ]
    problems += [
        Problem(Handoff.DECLARED, n, "not a declared field of AiterMLAMetadata")
        for n in sorted((read | written) - declared)
    ]
    if not read:
        problems.append(Problem(Handoff.ANALYSED, "fp8_prefill_*", "the impl reads none"))
    return problems


def installed_root(aiter_mla):
    return source_root_of(aiter_mla.AiterMLAImpl)[0]


def test_handoff_is_complete(aiter_mla):
    assert handoff_problems(installed_root(aiter_mla)) == []


@pytest.mark.parametrize(
    "old, new",
    [
        (
            "        metadata.fp8_prefill_kv_indices = kv_indices\n",
            "        metadata.fp8_prefill_kv_idx = kv_indices\n",
        ),
        (
            "            attn_metadata.fp8_prefill_kv_indices,\n",
            "            attn_metadata.fp8_prefill_kv_idx,\n",
        ),
    ],
    ids=["renamed-in-builder", "renamed-in-impl"],
)
@pytest.mark.selfcheck
def test_handoff_catches_a_field_renamed_on_one_side(mutant_tree, old, new):
    problems = handoff_problems(mutant_tree((old, new)))
    assert "fp8_prefill_kv_idx" in {p.subject for p in problems}, problems


class Binding(enum.Enum):
    """What vLLM's AITER call sites must satisfy, read from source."""

    BINDS = "binds"  # the call's shape binds to the pinned signature
    ALL_CALLED = "all-called"  # the three methods call all four AITER functions


def static_call_problems(root, contract: AiterContract | None = None) -> list[Problem]:
    """Every AITER call the three methods make binds to AITER's pinned signature under
    ``contract`` (None: the revision in force); a failure names the vLLM file:line."""
    reports = analyze_fp8_path(root).reports
    problems, seen = [], set()
    for report in reports:
        for call in report.calls:
            name = call.target.removeprefix("aiter.")
            name = KERNEL_FIELDS.get(name.removeprefix("self."), name)
            if name not in (
                "get_ps_metadata_info_v1",
                "get_ps_metadata_v1",
                "mla_prefill_ps_asm_fwd",
                "mla_reduce_v1",
            ):
                continue
            seen.add(name)
            sentinel = object()
            try:
                pinned(name, contract).to_inspect().bind(
                    *[sentinel] * call.shape.n_positional,
                    **{k: sentinel for k in call.shape.keywords},
                )
            except TypeError as exc:
                problems.append(Problem(Binding.BINDS, name, f"{exc} ({call.location})"))
    if len(seen) != 4:
        problems.append(Problem(Binding.ALL_CALLED, "aiter", f"calls only {sorted(seen)}"))
    return problems


@pytest.mark.parametrize("contract", CONTRACTS, ids=str)
def test_aiter_calls_bind_statically(aiter_mla, contract):
    assert static_call_problems(installed_root(aiter_mla), contract) == []


@pytest.mark.selfcheck
def test_static_binding_of_a_need_lse_keyword_per_revision(mutant_tree):
    """A vLLM that passes ``need_lse=True`` binds under the 3606 revision and fails before it,
    naming the line of its ``get_ps_metadata_v1`` call."""
    tree = mutant_tree(
        (
            "            block_size=block_size,\n            is_causal=True,\n        )\n",
            "            block_size=block_size,\n            is_causal=True,\n"
            "            need_lse=True,\n        )\n",
        )
    )
    assert static_call_problems(tree, AiterContract.PR_3606) == []
    [problem] = static_call_problems(tree, AiterContract.PRE_3606)
    assert (problem.kind, problem.subject) == (Binding.BINDS, "get_ps_metadata_v1")
    assert "need_lse" in problem.message and "rocm_aiter_mla.py:" in problem.message, problem


@pytest.mark.selfcheck
def test_static_binding_catches_an_extra_positional(mutant_tree):
    tree = mutant_tree(
        (
            "            0,\n            out_3d,\n            final_lse,\n",
            "            0,\n            0,\n            out_3d,\n            final_lse,\n",
        )
    )
    problems = static_call_problems(tree)
    assert any(
        (p.kind, p.subject) == (Binding.BINDS, "mla_reduce_v1") and "too many" in p.message
        for p in problems
    ), problems


def run_spied(emulated_aiter, device, impl_cls=None, builder_cls=None, plan_batch=None):
    spy, calls = spy_module(emulated_aiter)
    batch = make_prefill_batch([300, 33], num_decodes=1, device=device)
    with aiter_module_installed(spy):
        plan_batch(16, batch, Limits.for_batch(batch), builder_cls=builder_cls)
        impl = make_impl(16, spy, impl_cls=impl_cls)
        q, k, v = make_qkv(batch.total_prefill_tokens, 16, device)
        out = q.new_zeros(batch.total_prefill_tokens, 16 * 128)
        run_forward(impl, q, k, v, batch, out)
    return calls


@pytest.mark.parametrize("contract", CONTRACTS, ids=str)
def test_runtime_calls_bind_with_the_right_kinds(
    fp8_env, plan_batch, device, aiter_call_sites, contract
):
    with aiter_contract(contract):
        calls = run_spied(fp8_env, device, plan_batch=plan_batch)
    assert [c.function for c in calls] == [
        "get_ps_metadata_info_v1",
        "get_ps_metadata_v1",
        "mla_prefill_ps_asm_fwd",
        "mla_reduce_v1",
    ]
    misbound = {c.function: c.problems for c in calls if c.problems}
    assert misbound == {}, "; ".join(
        f"{name} called at {aiter_call_sites.get(name, '?')}: {problems}"
        for name, problems in misbound.items()
    )
    unmet = kernel_requirements(calls)
    planned_at = aiter_call_sites.get("get_ps_metadata_v1", "?")
    assert unmet == [], f"the plan made at {planned_at} breaks the kernel: {unmet}"


@pytest.mark.selfcheck
def test_runtime_catches_a_dropped_positional(fp8_env, plan_batch, device, mutant):
    """Dropping ``0`` (num_kv_splits) shifts out_3d into an int slot: the R1 mirror image."""
    module = mutant(
        (
            "            0,\n            out_3d,\n            final_lse,\n",
            "            out_3d,\n            final_lse,\n",
        )
    )
    calls = run_spied(fp8_env, device, impl_cls=module.AiterMLAImpl, plan_batch=plan_batch)
    [reduce] = [c for c in calls if c.function == "mla_reduce_v1"]
    assert {p.parameter for p in reduce.problems} == {"num_kv_splits"}


@pytest.mark.parametrize(
    "old, new, mutated, expected",
    [
        (
            "            True,  # is_causal\n",
            "            False,  # is_causal\n",
            "impl_cls",
            (ProblemKind.CAUSAL_MISMATCH, "is_causal"),
        ),
        (
            "        kvlen_granularity = 128\n",
            "        kvlen_granularity = 64\n",
            "builder_cls",
            (ProblemKind.PLAN_SETTING, "kvlen_granularity"),
        ),
    ],
    ids=["kernel-is-causal-false", "kvlen-granularity-64"],
)
@pytest.mark.selfcheck
def test_runtime_catches_a_plan_setting_the_kernel_cannot_run(
    fp8_env, plan_batch, device, mutant, old, new, mutated, expected
):
    module = mutant((old, new))
    cls = {"impl_cls": module.AiterMLAImpl, "builder_cls": module.AiterMLAMetadataBuilder}
    calls = run_spied(fp8_env, device, plan_batch=plan_batch, **{mutated: cls[mutated]})
    assert [(p.kind, p.parameter) for p in kernel_requirements(calls)] == [expected]


def test_check_call_reports_misbinding():
    assert check_call("mla_reduce_v1", tuple(range(10)), {}).problems[0].parameter == "*"
