"""The factories audit themselves, stand-ins are the real dataclasses' fields, and the reads a
run makes are ones the analyzer predicted.

The ``selfcheck`` tests (``--selfcheck``) mutate the pinned release source, not the vLLM under
test: see ``contracts/conftest.py``."""

from __future__ import annotations

import dataclasses
import types

import pytest
import torch

from factories.errors import StandInError, StubDriftError
from factories.mutation.source import Mutation
from factories.stubs.builders import make_builder, make_impl, make_prefill_batch, make_qkv
from factories.stubs.drift import source_root_of
from factories.stubs.fp8_path import analyze_fp8_path
from factories.stubs.pipeline import Limits, build_ps_plan, init_ps_buffers, run_forward
from factories.stubs.specs import AITER_MLA_MODULE
from factories.stubs.standins import StandIn
from factories.testing.recording import recording_reads

AITER_MLA_FILE = "vllm/v1/attention/backends/mla/rocm_aiter_mla.py"
REAL_NHEAD_USES = 10  # every use of the local in _mla_fp8_prefill_attn (0.33.0 and 0.34.0)
NEW_READ_IN_ENTRY = Mutation(
    AITER_MLA_FILE,
    "        v_head_dim = self.v_head_dim\n        tile_q = _FP8_PREFILL_TILE_Q\n",
    "        v_head_dim = self.v_head_dim\n        tile_q = self._fp8_tile_q\n",
)


@pytest.mark.selfcheck
def test_make_impl_raises_before_any_method_runs(emulated_aiter, mutant):
    module = mutant(NEW_READ_IN_ENTRY)
    calls = []
    module.AiterMLAImpl._mla_fp8_prefill_attn = lambda *a: calls.append(a)
    with pytest.raises(StubDriftError) as info:
        make_impl(16, emulated_aiter, impl_cls=module.AiterMLAImpl)
    [finding] = info.value.findings
    source = open(finding.vllm_location.path).read().splitlines()
    assert finding.name == "_fp8_tile_q"
    assert finding.vllm_location.path.endswith(AITER_MLA_FILE)
    assert "self._fp8_tile_q" in source[finding.vllm_location.line - 1]
    assert "_fp8_tile_q" in str(info.value) and f":{finding.vllm_location.line})" in str(info.value)
    assert calls == []


@pytest.mark.selfcheck
@pytest.mark.parametrize(
    "edits, match",
    [
        # a new read in a helper the entry calls
        (
            [
                (
                    "        num_head_k = "
                    "AiterMLAHelper.get_fp8_prefill_num_heads(self.num_heads)\n"
                    "        v_head_dim = self.mla_dims.v_head_dim\n",
                    "        num_head_k = self._fp8_width()\n"
                    "        v_head_dim = self.mla_dims.v_head_dim\n",
                ),
                (
                    "    def _init_fp8_prefill_ps_buffers(\n",
                    "    def _fp8_width(self):\n"
                    "        return AiterMLAHelper.get_fp8_prefill_num_heads("
                    "self.num_heads + self._extra_heads)\n\n"
                    "    def _init_fp8_prefill_ps_buffers(\n",
                ),
            ],
            "_extra_heads",
        ),
        # a new required parameter
        (
            [
                (
                    "        attn_out_dtype: torch.dtype,\n        device: torch.device,\n"
                    "    ) -> None:",
                    "        attn_out_dtype: torch.dtype,\n        device: torch.device,\n"
                    "        num_cus: int,\n    ) -> None:",
                ),
            ],
            "missing required argument 'num_cus'",
        ),
    ],
    ids=["new-read-in-a-helper", "new-required-parameter"],
)
def test_make_builder_catches_drift(emulated_aiter, mutant, edits, match):
    module = mutant(*edits)
    with pytest.raises(StubDriftError, match=match):
        make_builder(16, builder_cls=module.AiterMLAMetadataBuilder)


@pytest.mark.selfcheck
@pytest.mark.parametrize(
    "mutations",
    [
        # a renamed local
        (Mutation(AITER_MLA_FILE, "_real_nhead", "real_heads", count=REAL_NHEAD_USES),),
        # an extracted helper reading only stubbed fields
        (
            Mutation(
                AITER_MLA_FILE,
                "        v_head_dim = self.v_head_dim\n        tile_q = _FP8_PREFILL_TILE_Q\n",
                "        v_head_dim = self._v_dim()\n        tile_q = _FP8_PREFILL_TILE_Q\n",
            ),
            Mutation(
                AITER_MLA_FILE,
                "    def _mla_fp8_prefill_attn(\n",
                "    def _v_dim(self):\n        return self.v_head_dim\n\n"
                "    def _mla_fp8_prefill_attn(\n",
            ),
        ),
        # a new field with a class-level default
        (
            NEW_READ_IN_ENTRY,
            Mutation(
                AITER_MLA_FILE,
                "class AiterMLAImpl(MLACommonImpl[AiterMLAMetadata]):\n",
                "class AiterMLAImpl(MLACommonImpl[AiterMLAMetadata]):\n    _fp8_tile_q = 256\n",
            ),
        ),
    ],
    ids=["renamed-local", "extracted-helper", "class-default"],
)
def test_behaviour_preserving_edits_stay_green(fp8_env, plan_batch, device, mutant, mutations):
    """The factories still build, and the forward still runs and writes the output."""
    batch = make_prefill_batch([300], device=device)
    module = mutant(*mutations)
    builder = plan_batch(16, batch, builder_cls=module.AiterMLAMetadataBuilder)
    impl = make_impl(16, fp8_env, impl_cls=module.AiterMLAImpl)
    q, k, v = make_qkv(300, 16, device)
    out = torch.full((300, 16 * 128), float("nan"), dtype=torch.bfloat16, device=device)
    run_forward(impl, q, k, v, batch, out)
    assert builder.fp8_ps_work_indptr is batch.metadata.fp8_prefill_work_indptr
    assert torch.isfinite(out).all()


def test_standins_follow_the_dataclass_fields(aiter_mla):
    batch = make_prefill_batch([5, 7], num_decodes=1)
    declared = {f.name for f in dataclasses.fields(aiter_mla.AiterMLAMetadata)}
    assert set(batch.metadata.values) <= declared
    with pytest.raises(StandInError, match="declares no field 'fp8_prefill_qo_indptrr'"):
        batch.metadata.fp8_prefill_qo_indptrr = None
    with pytest.raises(StandInError, match="slot_mapping is read but the stand-in does not set it"):
        _ = batch.metadata.slot_mapping
    with pytest.raises(TypeError):
        StandIn(types.SimpleNamespace)


@pytest.mark.selfcheck
def test_builder_reading_an_unset_metadata_field_fails(fp8_env, device, mutant):
    module = mutant(
        (
            "        num_decodes = metadata.num_decodes\n",
            "        num_decodes = metadata.num_decodes + 0 * metadata.num_actual_tokens"
            " + 0 * len(metadata.slot_mapping)\n",
        )
    )
    batch = make_prefill_batch([64], device=device)
    builder = make_builder(16, builder_cls=module.AiterMLAMetadataBuilder)
    init_ps_buffers(builder, Limits.for_batch(batch), device)
    with pytest.raises(StandInError, match="slot_mapping"):
        build_ps_plan(builder, batch)


def predicted_reads(root, crippled: bool = False):
    impl_name = f"{AITER_MLA_MODULE}.AiterMLAImpl"
    replaced = frozenset({(impl_name, "_mla_fp8_prefill_attn")}) if crippled else frozenset()
    path = analyze_fp8_path(root, replaced=replaced)
    return path.forward.read_names, frozenset().union(*(r.read_names for r in path.builder))


def observed_reads(fp8_env, device, module=None):
    """Reads a real run makes, on vLLM under test (or on ``module``'s classes).

    The batch is the smallest with every shape the path branches on: a request longer than
    one 256-row tile next to a short one, decodes ahead of them, and 12 heads padded to the
    kernel's 16 (the reads were the same as with 705 tokens x 24 heads, at a third of the
    time)."""
    builder_cls = module.AiterMLAMetadataBuilder if module else None
    impl_cls = module.AiterMLAImpl if module else None
    batch = make_prefill_batch([300, 5], num_decodes=2, device=device)
    builder = make_builder(12, builder_cls=builder_cls)
    with recording_reads(builder) as builder_reads:
        init_ps_buffers(builder, Limits.for_batch(batch), device)
        build_ps_plan(builder, batch)
    impl = make_impl(12, fp8_env, impl_cls=impl_cls)
    q, k, v = make_qkv(305, 12, device)
    with recording_reads(impl) as impl_reads:
        run_forward(impl, q, k, v, batch, q.new_zeros(305, 12 * 128))
    return set(impl_reads), set(builder_reads)


def test_observed_reads_are_predicted(fp8_env, aiter_mla, device):
    impl_seen, builder_seen = observed_reads(fp8_env, device)
    impl_predicted, builder_predicted = predicted_reads(source_root_of(aiter_mla.AiterMLAImpl)[0])
    assert impl_seen and builder_seen
    assert impl_seen <= impl_predicted
    assert builder_seen <= builder_predicted


@pytest.mark.selfcheck
def test_observed_reads_expose_an_analysis_that_misses_a_method(fp8_env, device, mutant):
    """Negative control: a prediction that does not follow the entry point is caught (on the
    pinned release, unedited)."""
    pinned = mutant()
    impl_seen, _ = observed_reads(fp8_env, device, pinned)
    impl_predicted, _ = predicted_reads(source_root_of(pinned.AiterMLAImpl)[0], crippled=True)
    assert not impl_seen <= impl_predicted
