"""The stub audit against real vLLM releases: the drift that actually happened is flagged.

Inputs are the release sdists (``tools/fetch_vllm.py``): vLLM's own FP8 prefill test at one
release, audited against the source of the next.  Nothing here encodes a release number in the
analyzer; the releases are data.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from factories.analysis.audit import StubAuditor
from factories.analysis.findings import FindingKind
from factories.mutation.source import Mutation, mutate_file, mutated_tree
from factories.testing.releases import RELEASES

#: Tests of this project's analyzer on pinned release sources, never on the vLLM under test:
#: they run with --selfcheck (CI), not in a developer's plain ``pytest contracts/``.
pytestmark = pytest.mark.selfcheck

FP8_TEST = "tests/kernels/attention/test_rocm_aiter_mla_fp8_prefill.py"
AITER_MLA = "vllm/v1/attention/backends/mla/rocm_aiter_mla.py"
SEED = Path(__file__).resolve().parent.parent / "stub_fixtures" / "seed_fp8_prefill_stubs.py"


def _audit(src: Path, *files: Path):
    return StubAuditor(src).audit_paths(list(files))


def _audit_edited_fp8_test(root: Path, tmp_path: Path, *edits: tuple[str, str]):
    """vLLM's FP8 test of ``root`` with each ``(old, new)`` edit applied, audited against
    ``root``: the drift a test author makes, rather than the one vLLM makes."""
    mutations = [Mutation(FP8_TEST, old, new) for old, new in edits]
    return _audit(root, mutate_file(root / FP8_TEST, tmp_path, *mutations))


def _summary(result) -> set[tuple[str, str, str]]:
    return {(f.kind.value, f.method, f.name) for f in result.errors}


def test_seed_stub_against_0_34_has_exactly_the_two_known_breaks(release_src):
    result = _audit(release_src("0.34.0"), SEED)
    assert _summary(result) == {
        ("missing-attribute", "_mla_fp8_prefill_attn", "_fp8_prefill_one_scale"),
        ("missing-argument", "_init_fp8_prefill_ps_buffers", "attn_out_dtype"),
    }
    [one_scale] = [f for f in result.errors if f.name == "_fp8_prefill_one_scale"]
    # Points at the read inside _mla_fp8_prefill_attn (the ``if ... is None`` test) ...
    source = Path(one_scale.vllm_location.path).read_text().splitlines()
    assert "self._fp8_prefill_one_scale is None" in source[one_scale.vllm_location.line - 1]
    # ... and at the stub that lacks it.
    assert one_scale.stub_location.path == str(SEED)
    assert (
        "object.__new__(AiterMLAImpl)"
        in SEED.read_text().splitlines()[one_scale.stub_location.line - 1]
    )
    [arg] = [f for f in result.errors if f.name == "attn_out_dtype"]
    assert (
        "_init_fp8_prefill_ps_buffers(" in SEED.read_text().splitlines()[arg.stub_location.line - 1]
    )


def test_seed_stub_is_clean_once_both_are_supplied(release_src, tmp_path):
    fixed = SEED.read_text()
    fixed = fixed.replace(
        "    impl._mla_reduce_v1 = mla_reduce_v1\n",
        "    impl._mla_reduce_v1 = mla_reduce_v1\n    impl._fp8_prefill_one_scale = None\n",
    )
    fixed = fixed.replace(
        "        device=device,\n",
        "        attn_out_dtype=torch.bfloat16,\n        device=device,\n",
    )
    path = tmp_path / SEED.name
    path.write_text(fixed)
    result = _audit(release_src("0.34.0"), path)
    assert result.findings == ()
    assert result.summary.resolved == 2 and result.summary.audited == 2


@pytest.mark.parametrize(
    "test_release, source_release, expected",
    [
        (
            "0.28.0",
            "0.29.0",
            {("missing-argument", "_init_fp8_prefill_ps_buffers", "attn_out_dtype")},
        ),
        (
            "0.32.0",
            "0.33.0",
            {("missing-attribute", "_mla_fp8_prefill_attn", "_fp8_prefill_one_scale")},
        ),
    ],
)
def test_release_drift_is_flagged(release_src, test_release, source_release, expected):
    result = _audit(release_src(source_release), release_src(test_release) / FP8_TEST)
    assert _summary(result) == expected


@pytest.mark.parametrize("release", RELEASES)
def test_each_release_test_is_clean_against_its_own_source(release_src, release):
    root = release_src(release)
    result = _audit(root, root / FP8_TEST)
    assert result.summary.stubs == 2 and result.summary.resolved == 2
    assert result.findings == ()


def test_new_read_in_a_helper_the_entry_calls_is_flagged(release_src):
    """A ``self.X`` read added to a helper the entry point reaches through ``self.m()``."""
    root = release_src("0.34.0")
    mutation = Mutation(
        AITER_MLA,
        "        v_head_dim = self.v_head_dim\n        tile_q = _FP8_PREFILL_TILE_Q\n",
        "        v_head_dim = self.v_head_dim\n        tile_q = self._tile_q_for(v_head_dim)\n",
    )
    helper = Mutation(
        AITER_MLA,
        "    def _mla_fp8_prefill_attn(\n",
        "    def _tile_q_for(self, v_head_dim):\n"
        "        return self._fp8_tile_q_override or _FP8_PREFILL_TILE_Q\n\n"
        "    def _mla_fp8_prefill_attn(\n",
    )
    with mutated_tree(root, mutation) as tree:
        text = (tree / AITER_MLA).read_text()
        (tree / AITER_MLA).unlink()
        (tree / AITER_MLA).write_text(helper.apply_to_text(text))
        result = _audit(tree, root / FP8_TEST)
    assert _summary(result) == {
        ("missing-attribute", "_mla_fp8_prefill_attn", "_fp8_tile_q_override")
    }


def test_behaviour_preserving_edits_stay_clean(release_src):
    """A renamed local and a class-level default for a new field are not drift."""
    root = release_src("0.34.0")
    renamed_local = Mutation(
        AITER_MLA, "one_scale = self._fp8_prefill_one_scale", "unit = self._fp8_prefill_one_scale"
    )
    uses = Mutation(
        AITER_MLA,
        "            one_scale,\n            one_scale,\n            one_scale,\n",
        "            unit,\n            unit,\n            unit,\n",
    )
    class_default = Mutation(
        AITER_MLA,
        "        v_head_dim = self.v_head_dim\n        tile_q = _FP8_PREFILL_TILE_Q\n",
        "        v_head_dim = self.v_head_dim\n        tile_q = self._fp8_tile_q\n",
    )
    attr = Mutation(
        AITER_MLA,
        "class AiterMLAImpl(MLACommonImpl[AiterMLAMetadata]):\n",
        "class AiterMLAImpl(MLACommonImpl[AiterMLAMetadata]):\n    _fp8_tile_q: int = 256\n",
    )
    with mutated_tree(root, renamed_local, uses, class_default, attr) as tree:
        result = _audit(tree, root / FP8_TEST)
    assert result.findings == ()


def test_removed_class_is_drift_with_close_names(release_src, tmp_path):
    result = _audit_edited_fp8_test(
        release_src("0.34.0"),
        tmp_path,
        ("impl = object.__new__(AiterMLAImpl)", "impl = object.__new__(AiterMLAImp)"),
        (
            "from vllm.v1.attention.backends.mla.rocm_aiter_mla import AiterMLAImpl\n",
            "from vllm.v1.attention.backends.mla.rocm_aiter_mla import AiterMLAImp\n",
        ),
    )
    [finding] = result.errors
    assert finding.kind is FindingKind.MISSING_CLASS
    assert "AiterMLAImpl" in finding.message  # the close name is suggested


def test_removed_method_is_drift_with_close_names(release_src, tmp_path):
    result = _audit_edited_fp8_test(
        release_src("0.34.0"),
        tmp_path,
        ("impl._mla_fp8_prefill_attn(", "impl._mla_fp8_prefill_atn("),
    )
    [finding] = result.errors
    assert finding.kind is FindingKind.MISSING_METHOD
    assert "_mla_fp8_prefill_attn" in finding.message


def test_new_required_parameter_is_flagged(release_src):
    root = release_src("0.34.0")
    mutation = Mutation(
        AITER_MLA,
        "        attn_out_dtype: torch.dtype,\n        device: torch.device,\n    ) -> None:",
        "        attn_out_dtype: torch.dtype,\n        device: torch.device,\n"
        "        num_cus: int,\n    ) -> None:",
    )
    with mutated_tree(root, mutation) as tree:
        result = _audit(tree, root / FP8_TEST)
    assert _summary(result) == {("missing-argument", "_init_fp8_prefill_ps_buffers", "num_cus")}


def test_dropping_a_field_a_branch_guards_is_still_flagged(release_src, tmp_path):
    """Reads on any branch count: removing a stub field read only under ``if`` is drift."""
    result = _audit_edited_fp8_test(
        release_src("0.34.0"), tmp_path, ("    impl.v_head_dim = V_HEAD_DIM\n", "")
    )
    assert ("missing-attribute", "_mla_fp8_prefill_attn", "v_head_dim") in _summary(result)
