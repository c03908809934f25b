"""A broken vLLM fails the accuracy suite: each mutant is a one-line break of
``vllm/v1/attention/backends/mla/rocm_aiter_mla.py``, imported beside the real module
(``factories.mutation.source.mutated_module``), driven exactly as the suite drives the real one.

The batch splits tiles (CU count 80: 5 TGs per cluster at 16 heads; a 1000-token request), so the
reduce and its maps are exercised -- with an unsplit-only plan swapped maps would be invisible.
A control run of the unmutated module on the same batch passes, so each failure is the mutant's.

Mutants always run on the *emulated* AITER, also on gfx950: a garbled plan handed to the real
asm kernel reads out of bounds on the GPU, which is not something a test should do on purpose.
"""

from __future__ import annotations

import pytest

from factories.accuracy import (
    EMULATED_TOLERANCE,
    AccuracyReport,
    check_fp8_prefill,
    check_or_raised,
    run_fp8_prefill,
)
from factories.mutation.source import Mutation, mutated_module

pytestmark = pytest.mark.requires_vllm

AITER_MLA = "vllm.v1.attention.backends.mla.rocm_aiter_mla"
AITER_MLA_FILE = "vllm/v1/attention/backends/mla/rocm_aiter_mla.py"
SPLIT_BATCH = {
    "prefill_lens": (1000, 300, 1, 517),
    "num_heads": 16,
    "num_decodes": 2,
    "cu_count": 80,
}

MUTANTS = {
    "kernel-is-causal-false": Mutation(
        AITER_MLA_FILE,
        "            True,  # is_causal\n",
        "            False,  # is_causal\n",
        description="mla_prefill_ps_asm_fwd called non-causal on a causal plan",
    ),
    "reduce-maps-swapped": Mutation(
        AITER_MLA_FILE,
        "            attn_metadata.fp8_prefill_reduce_final_map,\n"
        "            attn_metadata.fp8_prefill_reduce_partial_map,\n",
        "            attn_metadata.fp8_prefill_reduce_partial_map,\n"
        "            attn_metadata.fp8_prefill_reduce_final_map,\n",
        description="reduce_final_map and reduce_partial_map swapped at the _mla_reduce_v1 call",
    ),
    "staging-copy-dropped": Mutation(
        AITER_MLA_FILE,
        "            dst.copy_(src, non_blocking=True)\n",
        "            pass\n",
        description="the pinned-staging -> device copy of the plan never happens",
    ),
}


def run_and_check(module=None) -> AccuracyReport:
    import factories.aiter.emulation as emulation

    kwargs = {}
    if module is not None:
        kwargs = {"impl_cls": module.AiterMLAImpl, "builder_cls": module.AiterMLAMetadataBuilder}
    run = run_fp8_prefill(backend=emulation, **SPLIT_BATCH, **kwargs)
    report = check_fp8_prefill(run, EMULATED_TOLERANCE)
    assert run.num_partial_tiles > 0 or module is not None, "the mutation batch must split tiles"
    return report


def test_control_the_unmutated_module_passes_on_the_mutation_batch():
    report = run_and_check()
    assert report.ok, report.summary()
    assert report.lse_rows > 0, "the batch must exercise the reduce"


def test_kernel_called_non_causal_fails_the_numeric_check():
    """Non-causal kernel on a causal plan: rows see keys past the diagonal inside each 128-key
    chunk of their kv range. The output comparison itself fails (not just the argument check)."""
    with mutated_module(AITER_MLA, MUTANTS["kernel-is-causal-false"]) as mutant:
        outcome = check_or_raised(lambda: run_and_check(mutant))
    assert isinstance(outcome, AccuracyReport), f"the run raised {outcome!r}"
    assert outcome.out.failing > 0, outcome.summary()
    assert any("is_causal=False" in p for p in outcome.problems)


def lenient_emulation():
    """The emulation, except that its reduce ignores plans it would reject (as a GPU kernel that
    does not validate would): shows the *check*, not the emulation's validation, catches it."""
    import types

    import factories.aiter.emulation as emulation
    from factories.aiter.emulation import PreconditionError

    module = types.ModuleType("lenient_emulation")
    for name in emulation.AITER_FUNCTIONS:
        setattr(module, name, getattr(emulation, name))

    def mla_reduce_v1(*args, **kwargs):
        try:
            emulation.mla_reduce_v1(*args, **kwargs)
        except (PreconditionError, RuntimeError):
            pass

    module.mla_reduce_v1 = mla_reduce_v1
    return module


def test_swapped_reduce_maps_fail_the_run_and_the_check():
    """The reduce reads partial row offsets as q ranges and q ranges as partial offsets.

    1. The emulated reduce rejects the garbled maps (an offset outside the partial buffers is a
       ``PreconditionError``; on the device, an out-of-bounds read): the run raises.
    2. With a reduce that does not validate, the check fails on its own: the rows the reduce was
       told to merge are not the rows the kernel split, and split rows stay unwritten or wrong.
    """
    from factories.aiter.emulation import PreconditionError

    with mutated_module(AITER_MLA, MUTANTS["reduce-maps-swapped"]) as mutant:
        raised = check_or_raised(lambda: run_and_check(mutant))
        run = run_fp8_prefill(
            backend=lenient_emulation(),
            impl_cls=mutant.AiterMLAImpl,
            builder_cls=mutant.AiterMLAMetadataBuilder,
            **SPLIT_BATCH,
        )
    assert isinstance(raised, PreconditionError), repr(raised)
    report = check_fp8_prefill(run, EMULATED_TOLERANCE)
    assert not report.ok
    assert any("the kernel's plan splits" in p for p in report.problems), report.summary()
    assert report.unwritten_rows > 0 or report.out.failing > 0, report.summary()


def test_dropped_staging_copy_leaves_rows_unwritten():
    """The device plan buffers keep their pre-build poison (-1: no work anywhere), so the kernel
    writes nothing and every NaN-poisoned output row stays NaN."""
    with mutated_module(AITER_MLA, MUTANTS["staging-copy-dropped"]) as mutant:
        outcome = check_or_raised(lambda: run_and_check(mutant))
    assert isinstance(outcome, AccuracyReport), f"the run raised {outcome!r}"
    assert outcome.unwritten_rows == sum(SPLIT_BATCH["prefill_lens"]), outcome.summary()
    assert outcome.out.failing > 0
