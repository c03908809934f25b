"""The analyzer's view of the FP8 prefill path: the spec'd call sequence of each class.

Several contracts reason about the same three methods (hand-off, call binding, device calls,
observed reads); they all start here, so the sequence analysed is the one ``factories.stubs.specs``
declares and the factories execute, from stub fields onward.
"""

from __future__ import annotations

from pathlib import Path

import attrs

from factories.analysis.audit import StubAuditor
from factories.analysis.classes import ClassInfo
from factories.analysis.readset import CallContext, MethodReport
from factories.stubs.specs import AITER_MLA_MODULE, BUILDER_FP8_PREFILL, IMPL_FP8_PREFILL


@attrs.frozen
class Fp8PathAnalysis:
    """Reports of ``_init_fp8_prefill_ps_buffers`` -> ``_build_fp8_prefill_ps_metadata`` on a
    builder stub and of ``_mla_fp8_prefill_attn`` on an impl stub, for one source tree."""

    auditor: StubAuditor = attrs.field(eq=False, repr=False)
    builder: tuple[MethodReport, ...]
    forward: MethodReport

    @property
    def reports(self) -> tuple[MethodReport, ...]:
        return (*self.builder, self.forward)

    def resolve(self, module: str, name: str) -> ClassInfo:
        found = self.auditor.index.resolve(self.auditor.tree.module(module), name)
        if not isinstance(found, ClassInfo):
            raise LookupError(f"{module}.{name} is not a class in {self.auditor.tree.root}")
        return found


def analyze_fp8_path(
    root: Path, replaced: frozenset[tuple[str, str]] = frozenset()
) -> Fp8PathAnalysis:
    """Analyse the spec'd sequences in the tree at ``root`` (``replaced``: methods not followed)."""
    auditor = StubAuditor(root)
    module = auditor.tree.module(AITER_MLA_MODULE)
    builder_cls = auditor.index.resolve(module, BUILDER_FP8_PREFILL.class_name)
    impl_cls = auditor.index.resolve(module, IMPL_FP8_PREFILL.class_name)
    builder = auditor.analyzer.analyze_sequence(
        builder_cls, [c.method for c in BUILDER_FP8_PREFILL.calls], BUILDER_FP8_PREFILL.field_names
    )
    forward = auditor.analyzer.analyze(
        impl_cls,
        IMPL_FP8_PREFILL.calls[0].method,
        IMPL_FP8_PREFILL.field_names,
        context=CallContext(replaced=replaced),
    )
    return Fp8PathAnalysis(auditor, builder, forward)
