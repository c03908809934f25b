"""Parameter read-sets: what a call reads from the stand-ins it is handed (``ChainRead``).

A table of inline cases, as mypy's stubtest tables its own: a tiny ``vllm/`` tree, the method
analysed, and every chain read expected with its placement.  ``CERTAIN``: on every path the
test's values select; ``POSSIBLE``: on some; ``GUARDED``: the read tolerates a missing name
(a ``getattr`` default, a ``hasattr`` guard), whatever its placement; ``past(kind, n)``: the
read judges only the links past its first ``n``, which the code allows to be missing
(``ChainRead.optional``).  A chain the case leaves out must not be read: the table pins what
is *not* a read as much as what is.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path

import attrs
import pytest

from factories.analysis.classes import ClassIndex, FunctionRef
from factories.analysis.readset import CallContext, ReadSetAnalyzer, annotation_class, declares
from factories.analysis.source_tree import SourceTree

CERTAIN, POSSIBLE, GUARDED = "certain", "possible", "guarded"


def past(kind: str, n: int) -> str:
    """A read placed as ``kind`` that does not judge its first ``n`` links."""
    return f"{kind} past {n}"


#: ``vllm/helpers.py`` of every case: module functions a stand-in is passed on to.
HELPERS = """
    def plan(common, n=0):
        cpu = common.query_start_loc_cpu
        if n:
            return common.seq_lens
        return cpu

    def deeper(meta):
        return plan(meta.common)
"""


@attrs.frozen
class Case:
    """``source``: ``vllm/mod.py``; ``method`` of ``cls`` is analysed with the stub fields
    ``initial`` (``constants``: their literal values), the parameters ``standins`` holding
    stand-ins the test passed (followed into module functions); ``reads``: every chain read
    expected, by its dotted text."""

    id: str
    source: str
    method: str
    reads: Mapping[str, str]
    cls: str = "Builder"
    initial: tuple[str, ...] = ()
    constants: Mapping[str, object] = attrs.field(factory=dict)
    standins: frozenset[str] = frozenset()


CASES = [
    Case(
        "seed-shapes-through-a-local-alias",
        """
        class Builder:
            def build(self, metadata, common_attn_metadata):
                prefill = metadata.prefill
                assert prefill is not None
                qo_indptr = prefill.query_start_loc
                cpu = common_attn_metadata.query_start_loc_cpu
                return qo_indptr, cpu[metadata.num_decodes :], self.mla_dims.v_head_dim
        """,
        "build",
        {
            "metadata.prefill": CERTAIN,
            "metadata.prefill.query_start_loc": CERTAIN,
            "common_attn_metadata.query_start_loc_cpu": CERTAIN,
            "metadata.num_decodes": CERTAIN,
            "self.mla_dims.v_head_dim": CERTAIN,
        },
        initial=("mla_dims",),
    ),
    Case(
        "undecided-branch-possible-both-arms-certain",
        """
        class Builder:
            def build(self, metadata, flag):
                if flag:
                    a = metadata.only_here
                    b = metadata.both
                else:
                    b = metadata.both
                return metadata.after
        """,
        "build",
        {"metadata.only_here": POSSIBLE, "metadata.both": CERTAIN, "metadata.after": CERTAIN},
    ),
    Case(
        "branch-a-stub-literal-decides-is-not-read",
        """
        class Builder:
            def build(self, metadata):
                if self.enabled:
                    return metadata.feature
                return metadata.plain
        """,
        "build",
        {"metadata.plain": CERTAIN},
        initial=("enabled",),
        constants={"enabled": False},
    ),
    Case(
        "early-return-loop-and-handler-make-reads-possible",
        """
        class Builder:
            def build(self, metadata, items):
                for item in items:
                    metadata.in_loop
                try:
                    metadata.in_try
                except ValueError:
                    metadata.in_handler
                if metadata.empty is None:
                    return None
                return metadata.past_return
        """,
        "build",
        {
            "metadata.in_loop": POSSIBLE,
            "metadata.in_try": CERTAIN,
            "metadata.in_handler": POSSIBLE,
            "metadata.empty": CERTAIN,
            "metadata.past_return": POSSIBLE,
        },
    ),
    Case(
        "getattr-default-and-hasattr-are-guarded-getattr-plain-is-a-read",
        """
        class Builder:
            def build(self, metadata):
                a = getattr(metadata, "optional", None)
                b = getattr(metadata.prefill, "chunk", 0)
                c = getattr(metadata, "needed")
                if hasattr(metadata, "probed"):
                    d = metadata.probed.inner
                return a, b, c
        """,
        "build",
        {
            "metadata.optional": GUARDED,
            "metadata.prefill": CERTAIN,
            "metadata.prefill.chunk": GUARDED,
            "metadata.needed": CERTAIN,
            "metadata.probed": GUARDED,
            "metadata.probed.inner": past(POSSIBLE, 1),
        },
    ),
    Case(
        "written-before-read-is-not-the-stand-ins",
        """
        class Builder:
            def build(self, metadata, flag):
                metadata.out = make()
                metadata.out.fill_(0)
                setattr(metadata, "other", 1)
                if flag:
                    metadata.maybe = 1
                return metadata.other.x, metadata.maybe.y
        """,
        "build",
        {"metadata.maybe.y": CERTAIN},
    ),
    Case(
        "tests-read-the-chain-not-deeper-chains-stop-at-calls-and-pass-subscripts-as-an-element",
        """
        class Builder:
            def build(self, metadata):
                if isinstance(metadata.kind, int):
                    pass
                first = metadata.items[0].value
                made = metadata.factory().field
                return metadata.tensor.shape
        """,
        "build",
        {
            "metadata.kind": CERTAIN,
            "metadata.items": CERTAIN,
            "metadata.items.[].value": CERTAIN,
            "metadata.factory": CERTAIN,
            "metadata.tensor.shape": CERTAIN,
        },
    ),
    Case(
        "followed-into-a-method-with-a-sub-object-certainty-composes",
        """
        class Builder:
            def build(self, metadata, flag):
                self._helper(metadata.prefill)
                if flag:
                    self._other(prefill=metadata.prefill)

            def _helper(self, prefill):
                return prefill.query_start_loc

            def _other(self, prefill):
                return prefill.max_query_len
        """,
        "build",
        {
            "metadata.prefill": CERTAIN,
            "metadata.prefill.query_start_loc": CERTAIN,
            "metadata.prefill.max_query_len": POSSIBLE,
        },
    ),
    Case(
        "a-callees-own-parameter-is-not-a-stand-in",
        """
        class Builder:
            def build(self, metadata):
                local = make()
                self._helper(local)

            def _helper(self, metadata):
                return metadata.shape
        """,
        "build",
        {},
    ),
    Case(
        "followed-into-module-functions-through-imports",
        """
        from vllm import helpers
        from vllm.helpers import deeper

        class Builder:
            def build(self, common, metadata):
                helpers.plan(common)
                deeper(metadata)
        """,
        "build",
        {
            "common.query_start_loc_cpu": CERTAIN,
            "metadata.common": CERTAIN,
            "metadata.common.query_start_loc_cpu": CERTAIN,
        },
        standins=frozenset({"common", "metadata"}),
    ),
    Case(
        "module-functions-are-followed-only-for-the-stand-ins-the-test-passed",
        """
        from vllm import helpers
        from vllm.helpers import deeper

        class Builder:
            def build(self, common, metadata):
                helpers.plan(common)
                deeper(metadata)
        """,
        "build",
        {"common.query_start_loc_cpu": CERTAIN},
        standins=frozenset({"common"}),
    ),
    Case(
        "a-literal-argument-decides-the-functions-branch",
        """
        from vllm.helpers import plan

        class Builder:
            def build(self, common):
                plan(common, n=1)
        """,
        "build",
        {"common.query_start_loc_cpu": CERTAIN, "common.seq_lens": CERTAIN},
        standins=frozenset({"common"}),
    ),
    Case(
        "method-call-on-a-stand-in-reads-the-callable-field",
        """
        class Builder:
            def build(self, metadata):
                metadata.compute(1)
                self.dims.total()
                self.helper_method()

            def helper_method(self):
                pass
        """,
        "build",
        {"metadata.compute": CERTAIN, "self.dims.total": CERTAIN},
        initial=("dims",),
    ),
    Case(
        "a-self-field-written-first-and-a-property-are-not-nested-stand-ins",
        """
        class Builder:
            @property
            def dims(self):
                return self._dims

            def build(self):
                self.made = make()
                return self.made.x, self.dims.v_head_dim, self.kept.y
        """,
        "build",
        {"self.kept.y": CERTAIN},
        initial=("_dims", "kept"),
    ),
    Case(
        "a-local-bound-by-getattr-reads-the-stand-in-past-a-defaulted-link",
        """
        class Builder:
            def build(self, cfg):
                spec = getattr(cfg, "spec", None)
                plain = getattr(cfg, "model")
                if spec is None:
                    return plain.dtype
                return spec.extra + spec.tokens
        """,
        "build",
        {
            "cfg.spec": GUARDED,
            "cfg.model": CERTAIN,
            "cfg.model.dtype": POSSIBLE,
            "cfg.spec.extra": past(POSSIBLE, 1),
            "cfg.spec.tokens": past(POSSIBLE, 1),
        },
    ),
    Case(
        "a-getattr-default-passed-on-is-allowed-missing-in-the-callee-too",
        """
        from vllm.helpers import deeper

        class Builder:
            def build(self, cfg):
                spec = getattr(cfg, "spec", None)
                return deeper(spec)
        """,
        "build",
        {
            "cfg.spec": GUARDED,
            "cfg.spec.common": past(CERTAIN, 1),
            "cfg.spec.common.query_start_loc_cpu": past(CERTAIN, 1),
        },
        standins=frozenset({"cfg"}),
    ),
    Case(
        "locals-unpacked-from-a-tuple-of-chains-read-the-stand-in",
        """
        class Builder:
            def build(self, module, pair):
                gate, experts = module.gate, module.experts
                first, second = pair
                return gate.size, experts.top_k, first.x
        """,
        "build",
        {
            "module.gate": CERTAIN,
            "module.experts": CERTAIN,
            "module.gate.size": CERTAIN,
            "module.experts.top_k": CERTAIN,
        },
    ),
    Case(
        "a-local-or-a-parameter-holding-a-field-of-self-reads-what-the-field-holds",
        """
        class Builder:
            @property
            def dims(self):
                return self._dims

            def build(self):
                runner, dims = self.runner, self.dims
                return runner.prefix, dims.v, self._width(self.cfg)

            def _width(self, cfg):
                return cfg.width
        """,
        "build",
        {"self.runner.prefix": CERTAIN, "self.cfg.width": CERTAIN},
        initial=("runner", "cfg", "_dims"),
    ),
]


def _tree(tmp_path: Path, source: str) -> ClassIndex:
    package = tmp_path / "vllm"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "helpers.py").write_text(textwrap.dedent(HELPERS))
    (package / "mod.py").write_text(textwrap.dedent(source))
    return ClassIndex(SourceTree(tmp_path))


def _view(chain_reads) -> dict[str, str]:
    out = {}
    for c in chain_reads:
        kind = GUARDED if c.guarded else CERTAIN if c.certain else POSSIBLE
        out[c.name] = past(kind, c.optional) if c.optional and not c.guarded else kind
    return out


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_chain_reads(case: Case, tmp_path: Path) -> None:
    index = _tree(tmp_path, case.source)
    cls = index.resolve_absolute(f"vllm.mod.{case.cls}")
    assert cls is not None
    context = CallContext(standins=case.standins, chains=True)
    report = ReadSetAnalyzer(index).analyze(
        cls, case.method, case.initial, case.constants, context=context
    )
    assert _view(report.chain_reads) == dict(case.reads)


def test_chain_prefixes_let_a_consumer_stop_at_a_real_object(tmp_path: Path) -> None:
    index = _tree(tmp_path, CASES[0].source)
    cls = index.resolve_absolute("vllm.mod.Builder")
    report = ReadSetAnalyzer(index).analyze(
        cls, "build", ("mla_dims",), context=CallContext(chains=True)
    )
    (read,) = [c for c in report.chain_reads if c.name == "metadata.prefill.query_start_loc"]
    assert read.prefixes == (("prefill",), ("prefill", "query_start_loc"))


ANNOTATED = """
    from dataclasses import dataclass
    from typing import Optional, Union

    @dataclass
    class Prefill:
        query_start_loc: object
        max_query_len: int = 0

    class Common:
        def __init__(self):
            self.query_start_loc_cpu = None

    class Builder:
        def build(
            self,
            metadata: Optional["Prefill"],
            common: Common | None,
            either: Union[Prefill, Common],
            plain: int,
        ):
            return metadata.query_start_loc, metadata.extra, common.query_start_loc_cpu
"""


def test_annotations_name_the_class_and_what_it_declares(tmp_path: Path) -> None:
    index = _tree(tmp_path, ANNOTATED)
    cls = index.resolve_absolute("vllm.mod.Builder")
    found = ReadSetAnalyzer(index).param_classes(cls, "build")
    assert {name: c.name for name, c in found.items()} == {
        "metadata": "Prefill",
        "common": "Common",
    }
    prefill, common = found["metadata"], found["common"]
    assert declares(index, prefill, "query_start_loc")  # a dataclass field: drift if lacking
    assert declares(index, prefill, "max_query_len")
    assert not declares(index, prefill, "extra")  # duck typing
    assert declares(index, common, "query_start_loc_cpu")  # stored by ``__init__``
    module = index.tree.module("vllm.mod")
    assert annotation_class(index, module, None) is None


def test_analyze_function_reads_what_a_module_function_is_handed(tmp_path: Path) -> None:
    index = _tree(tmp_path, "")
    helpers = index.tree.module("vllm.helpers")
    function = index.resolve(helpers, "deeper")
    assert isinstance(function, FunctionRef)
    context = CallContext(standins=frozenset({"meta"}), chains=True)
    analyzer = ReadSetAnalyzer(index)
    report = analyzer.analyze_function(function, context)
    assert analyzer.param_classes(function) == {}
    assert _view(report.chain_reads) == {
        "meta.common": CERTAIN,
        "meta.common.query_start_loc_cpu": CERTAIN,
    }


def test_no_chain_is_recorded_unless_the_context_asks(tmp_path: Path) -> None:
    """The stub audit reads no chains and must not pay for them (``CallContext.chains``)."""
    index = _tree(tmp_path, CASES[0].source)
    cls = index.resolve_absolute("vllm.mod.Builder")
    assert ReadSetAnalyzer(index).analyze(cls, "build", ("mla_dims",)).chain_reads == ()
