"""``audit-stubs --standins`` on a real release: a read the namespaces of the tests lack.

The 0.34.0 source is copied and one line of the AITER MLA backend is edited so that a method
reads a field the test's ``SimpleNamespace`` does not give: as an argument of a stub's method
(``common``), set on a stub's field (``builder.mla_dims``), and made ``self`` of an unbound
method (``AiterMLAMetadataBuilder._build_decode(stub, ...)``), and nested in an argument
(``metadata.prefill``).  A spec'd mock is proven the same way: ``FileMapper.from_offloading_spec``
edited to read a name ``OffloadingSpec.__init__`` sets (no class-level name, so
``MagicMock(spec=OffloadingSpec)`` raises for it).  Unedited, and edited to read only what the
stand-ins answer (a field they set, a class-level name of the spec, a ``getattr`` with a
default), the same test files give no error.  So is a mock made ``self`` of a method a
fixture binds to it (``LMCacheConnectorV1.take_events.__get__(connector)``), run where the
test calls it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from factories.analysis.audit import StubAuditor
from factories.analysis.findings import FindingKind, Severity

pytestmark = pytest.mark.selfcheck

BACKEND = "vllm/v1/attention/backends/mla/rocm_aiter_mla.py"
PREFILL_TEST = "tests/kernels/attention/test_rocm_aiter_mla_fp8_prefill.py"
SPLIT_TEST = "tests/v1/attention/test_rocm_aiter_mla_mtp_split.py"
FILE_MAPPER = "vllm/v1/kv_offload/file_mapper.py"
MAPPER_TEST = "tests/v1/kv_offload/test_file_mapper.py"
MAPPER_ANCHOR = "        config = offloading_spec.config\n"
LMCACHE = "vllm/distributed/kv_transfer/kv_connector/v1/lmcache_connector.py"
LMCACHE_TEST = "tests/v1/kv_connector/unit/test_lmcache_connector.py"
EVENTS_ANCHOR = (
    "        if self._kv_cache_events is not None:\n            self._kv_cache_events.aggregate()\n"
)
TESTS = (PREFILL_TEST, SPLIT_TEST, MAPPER_TEST, LMCACHE_TEST)
STANDIN_KINDS = {FindingKind.MISSING_FIELD, FindingKind.MISSING_ATTRIBUTE}

EDITS = [
    pytest.param(
        BACKEND,
        "        from aiter import get_ps_metadata_v1\n",
        "        _ = common_attn_metadata.num_actual_tokens\n"
        "        from aiter import get_ps_metadata_v1\n",
        PREFILL_TEST,
        "common_attn_metadata.num_actual_tokens",
        "common = SimpleNamespace(",
        id="argument-of-a-stub-method",
    ),
    pytest.param(
        BACKEND,
        "        from aiter import get_ps_metadata_info_v1\n",
        "        _ = self.mla_dims.qk_nope_head_dim\n"
        "        from aiter import get_ps_metadata_info_v1\n",
        PREFILL_TEST,
        "self.mla_dims.qk_nope_head_dim",
        "builder.mla_dims = SimpleNamespace(",
        id="field-of-a-stub",
    ),
    pytest.param(
        BACKEND,
        "        causal = self._decode_causal\n",
        "        causal = self._decode_causal\n        _ = self._new_field\n",
        SPLIT_TEST,
        "_new_field",
        "SimpleNamespace(",
        id="made-self",
    ),
    pytest.param(
        BACKEND,
        "        qo_indptr = prefill.query_start_loc\n",
        "        _ = metadata.prefill.chunked_context\n"
        "        qo_indptr = prefill.query_start_loc\n",
        PREFILL_TEST,
        "metadata.prefill.chunked_context",
        "prefill = SimpleNamespace(",
        id="namespace-nested-in-an-argument",
    ),
    pytest.param(
        FILE_MAPPER,
        MAPPER_ANCHOR,
        MAPPER_ANCHOR + "        _ = offloading_spec.tokens_per_hash\n",
        MAPPER_TEST,
        "offloading_spec.tokens_per_hash",
        "MagicMock(spec=OffloadingSpec)",
        id="spec-d-mock-argument",
    ),
    pytest.param(
        LMCACHE,
        EVENTS_ANCHOR,
        "        _ = self._vllm_config\n" + EVENTS_ANCHOR,
        LMCACHE_TEST,
        "self._vllm_config",
        "MagicMock(spec=LMCacheConnectorV1)",
        id="spec-d-mock-made-self-by-a-method-a-fixture-binds",
    ),
]

# Reads the same stand-ins answer: a field the test sets, a class-level name of a mock's spec,
# or one ``getattr`` gives a default.
HARMLESS_EDITS = [
    pytest.param(
        BACKEND,
        "        from aiter import get_ps_metadata_v1\n",
        '        _ = getattr(common_attn_metadata, "num_actual_tokens", None)\n'
        "        from aiter import get_ps_metadata_v1\n",
        PREFILL_TEST,
        id="getattr-with-a-default",
    ),
    pytest.param(
        BACKEND,
        "        from aiter import get_ps_metadata_v1\n",
        "        _ = common_attn_metadata.query_start_loc_cpu\n"
        "        from aiter import get_ps_metadata_v1\n",
        PREFILL_TEST,
        id="a-field-the-namespace-sets",
    ),
    pytest.param(
        BACKEND,
        "        from aiter import get_ps_metadata_info_v1\n",
        "        _ = self.mla_dims.v_head_dim\n        from aiter import get_ps_metadata_info_v1\n",
        PREFILL_TEST,
        id="a-field-the-stub-field-namespace-sets",
    ),
    pytest.param(
        BACKEND,
        "        causal = self._decode_causal\n",
        '        causal = self._decode_causal\n        _ = getattr(self, "_new_field", None)\n',
        SPLIT_TEST,
        id="getattr-on-a-namespace-made-self",
    ),
    pytest.param(
        FILE_MAPPER,
        MAPPER_ANCHOR,
        MAPPER_ANCHOR + "        _ = offloading_spec.get_manager\n",
        MAPPER_TEST,
        id="a-class-level-name-of-the-mock-s-spec",
    ),
    pytest.param(
        FILE_MAPPER,
        MAPPER_ANCHOR,
        MAPPER_ANCHOR + '        _ = getattr(offloading_spec, "tokens_per_hash", 16)\n',
        MAPPER_TEST,
        id="getattr-on-a-spec-d-mock",
    ),
    pytest.param(
        FILE_MAPPER,
        MAPPER_ANCHOR,
        MAPPER_ANCHOR + "        _ = offloading_spec.config.cache\n",
        MAPPER_TEST,
        id="a-field-the-test-sets-on-the-mock",
    ),
    pytest.param(
        LMCACHE,
        EVENTS_ANCHOR,
        "        _ = self._lmcache_engine\n" + EVENTS_ANCHOR,
        LMCACHE_TEST,
        id="a-field-the-fixture-sets-on-the-mock-made-self",
    ),
]


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src / "vllm", dst / "vllm")
    for test in TESTS:
        (dst / test).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src / test, dst / test)
    return dst


def _edit(root: Path, target: str, anchor: str, edited: str) -> int:
    """Replace the one ``anchor`` of the vLLM file ``target`` by ``edited``; the anchor's line."""
    source = root / target
    text = source.read_text(encoding="utf-8")
    assert text.count(anchor) == 1, anchor
    source.write_text(text.replace(anchor, edited), encoding="utf-8")
    return text[: text.index(anchor)].count("\n") + 1


def _standin_errors(root: Path, test: str):
    result = StubAuditor(root).audit_paths([root / test], standins=True)
    return [
        f
        for f in result.findings
        if f.severity is Severity.ERROR
        and (f.kind is FindingKind.MISSING_FIELD or "made self" in f.message)
    ]


@pytest.mark.parametrize(("target", "anchor", "edited", "test", "name", "built_by"), EDITS)
def test_an_edit_that_reads_a_field_the_stand_in_lacks_is_an_error(
    release_src, tmp_path, target, anchor, edited, test, name, built_by
):
    root = _copy(release_src("0.34.0"), tmp_path)
    edit_line = _edit(root, target, anchor, edited)
    errors = [f for f in _standin_errors(root, test) if f.name == name]
    assert len(errors) == 1, errors
    (error,) = errors
    assert error.vllm_location is not None
    assert Path(error.vllm_location.path).name == Path(target).name
    assert error.vllm_location.line in (edit_line, edit_line + 1)
    assert error.stub_location is not None
    lines = (root / test).read_text(encoding="utf-8").splitlines()
    assert built_by in lines[error.stub_location.line - 1]


def test_unedited_the_stand_ins_give_no_error(release_src):
    root = release_src("0.34.0")
    for test in TESTS:
        assert _standin_errors(root, test) == []


@pytest.mark.parametrize(("target", "anchor", "edited", "test"), HARMLESS_EDITS)
def test_an_edit_the_stand_ins_answer_gives_no_error(
    release_src, tmp_path, target, anchor, edited, test
):
    root = _copy(release_src("0.34.0"), tmp_path)
    _edit(root, target, anchor, edited)
    assert _standin_errors(root, test) == []
