"""Stub specs as data: what this project's factories set on each ``object.__new__`` object.

One source of truth.  ``factories.make_impl``/``make_builder`` set exactly these fields and make
exactly these calls; before building anything they audit these specs against the imported vLLM
class (``factories.stubs.drift``), and ``tools/audit_stubs.py`` with no FILE audits the same specs
against a source tree.  Adding a field here without a reason, or a reason without a field, is
visible in review; a field vLLM stops reading shows up as *stale*.
"""

from __future__ import annotations

import sys
from pathlib import Path

import attrs

from factories.analysis.binding import CallShape
from factories.analysis.extraction import EventKind, NamedClass, Stub, StubEvent
from factories.analysis.findings import Location
from factories.analysis.source_tree import ImportTarget, ModuleInfo

AITER_MLA_MODULE = "vllm.v1.attention.backends.mla.rocm_aiter_mla"


@attrs.frozen
class FieldSpec:
    """One attribute a factory sets, and why the stub needs it."""

    name: str
    reason: str


@attrs.frozen
class CallSpec:
    """A method the scenario calls, with the argument names the factory passes."""

    method: str
    positional: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()

    @property
    def shape(self) -> CallShape:
        return CallShape(len(self.positional), self.keywords)


@attrs.frozen
class StubSpec:
    """The stub of one class for one scenario: fields set, then calls made, in order."""

    module: str
    class_name: str
    scenario: str
    fields: tuple[FieldSpec, ...]
    calls: tuple[CallSpec, ...]
    defined_at: Location

    @property
    def field_names(self) -> frozenset[str]:
        return frozenset(f.name for f in self.fields)


def _spec(**kwargs) -> StubSpec:
    frame = sys._getframe(1)
    return StubSpec(**kwargs, defined_at=Location(str(Path(__file__)), frame.f_lineno))


IMPL_FP8_PREFILL = _spec(
    module=AITER_MLA_MODULE,
    class_name="AiterMLAImpl",
    scenario="fp8 prefill forward",
    fields=(
        FieldSpec("num_heads", "real head count; the forward pads it to a multiple of 16"),
        FieldSpec("v_head_dim", "sizes the scratch and the output view (128 for MLA)"),
        FieldSpec("scale", "softmax scale handed to mla_prefill_ps_asm_fwd"),
        FieldSpec("_mla_prefill_ps_asm_fwd", "the PS prefill kernel (real or emulated AITER)"),
        FieldSpec("_mla_reduce_v1", "the split-merge kernel (real or emulated AITER)"),
        FieldSpec(
            "_fp8_prefill_one_scale",
            "None: the forward allocates its unit dequant scale lazily (read since 0.33.0)",
        ),
    ),
    calls=(CallSpec("_mla_fp8_prefill_attn", positional=("q", "k", "v", "attn_metadata", "out")),),
)

BUILDER_FP8_PREFILL = _spec(
    module=AITER_MLA_MODULE,
    class_name="AiterMLAMetadataBuilder",
    scenario="fp8 prefill PS plan",
    fields=(
        FieldSpec("num_heads", "real head count; the plan is built for the padded width"),
        FieldSpec("mla_dims", "only .v_head_dim is read, to size the workspace reservation"),
    ),
    calls=(
        CallSpec(
            "_init_fp8_prefill_ps_buffers",
            keywords=(
                "max_num_reqs",
                "max_prefill_qlen",
                "max_num_batched_tokens",
                "attn_out_dtype",
                "device",
            ),
        ),
        CallSpec("_build_fp8_prefill_ps_metadata", positional=("metadata", "common_attn_metadata")),
    ),
)

ALL_SPECS: tuple[StubSpec, ...] = (IMPL_FP8_PREFILL, BUILDER_FP8_PREFILL)


def stub_from_spec(spec: StubSpec) -> Stub:
    """The spec as the analyzer's ``Stub``: same audit path as a stub found in a test file."""
    module = ModuleInfo.from_source(
        "factories.stubs.specs", Path(spec.defined_at.path), "", is_package=False
    )
    module.imports[spec.class_name] = ImportTarget(spec.module, spec.class_name)
    events = [StubEvent(EventKind.SET, f.name, spec.defined_at) for f in spec.fields]
    events += [StubEvent(EventKind.CALL, c.method, spec.defined_at, c.shape) for c in spec.calls]
    return Stub(
        class_ref=NamedClass(spec.class_name),
        location=spec.defined_at,
        module=module,
        events=tuple(events),
    )


def stubs_from_specs(specs: tuple[StubSpec, ...]) -> list[Stub]:
    """The specs as stubs; the auditor resolves each through its synthetic module's import."""
    return [stub_from_spec(spec) for spec in specs]
