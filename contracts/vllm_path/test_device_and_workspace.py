"""Device dependencies, the workspace reservation, and the workspace session.

A new device call in the FP8 path must fail here rather than be patched silently; the
reservation made by ``_init_fp8_prefill_ps_buffers`` must cover what the forward draws from the
locked workspace for any batch within the builder's limits.  The ``selfcheck`` tests
(``--selfcheck``) mutate the pinned release source, not the vLLM under test.
"""

from __future__ import annotations

import types

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from factories.stubs.builders import make_builder, make_impl, make_prefill_batch, make_qkv
from factories.stubs.device_shims import (
    CPU_SAFE_CALLS,
    DEVICE_CALLS,
    emulated_device,
    is_device_call,
)
from factories.stubs.drift import source_root_of
from factories.stubs.fp8_path import analyze_fp8_path
from factories.stubs.pipeline import Limits, build_ps_plan, init_ps_buffers, run_forward
from factories.stubs.workspace import lock, reserved_bytes, workspace_session
from factories.testing.hypothesis_profiles import contract_settings


def device_calls(root) -> set[str]:
    """Device-touching calls the three methods reach, workspace growth included."""
    path = analyze_fp8_path(root)
    reports = list(path.reports)
    if any(
        c.target.endswith("current_workspace_manager().get_simultaneous")
        for r in reports
        for c in r.calls
    ):
        manager = path.resolve("vllm.v1.worker.workspace", "WorkspaceManager")
        reports.append(path.auditor.analyzer.analyze(manager, "get_simultaneous"))
    found = set()
    for report in reports:
        for call in report.calls:
            if is_device_call(call.target, call.shape.keywords):
                key = call.target + ("[pin_memory]" if "pin_memory" in call.shape.keywords else "")
                found.add(key)
    return found


def covered() -> set[str]:
    return {
        c.target + (f"[{c.keyword}]" if c.keyword else "") for c in DEVICE_CALLS + CPU_SAFE_CALLS
    }


def test_device_calls_are_exactly_the_shimmed_ones(aiter_mla):
    assert device_calls(source_root_of(aiter_mla.AiterMLAImpl)[0]) == covered()


@pytest.mark.selfcheck
def test_a_new_device_call_fails_loudly(mutant_tree):
    tree = mutant_tree(
        (
            "        staging_free.record()\n",
            "        staging_free.record()\n        torch.cuda.synchronize()\n",
        )
    )
    assert device_calls(tree) - covered() == {"torch.cuda.synchronize"}


def null_kernels() -> types.ModuleType:
    """Kernels that do nothing: the reservation contract exercises only the workspace."""
    module = types.ModuleType("null_kernels")
    module.mla_prefill_ps_asm_fwd = lambda *args, **kwargs: None
    module.mla_reduce_v1 = lambda *args, **kwargs: None
    return module


def shaped_qkv(total: int, heads: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """q, k, v of ``make_qkv``'s shapes and dtype, their values left unset: with null kernels
    only the shapes reach the workspace. Drawing random values for up to ~30k tokens x 128
    heads was most of this contract's run time (measured: 2.5 s of a 4.1 s example), and
    zero-filling them still a fifth of what remained."""
    q, k, v = make_qkv(1, heads)
    return tuple(torch.empty((total, *t.shape[1:]), dtype=t.dtype) for t in (q, k, v))


def forward_within_reservation(
    num_heads, lens, decodes, limits, cu, builder_cls=None, impl_cls=None
):
    """Plan with the builder, lock the workspace, run the forward; growth raises."""
    with emulated_device(cu), workspace_session():
        batch = make_prefill_batch(lens, num_decodes=decodes)
        builder = make_builder(num_heads, builder_cls=builder_cls)
        init_ps_buffers(builder, limits, torch.device("cpu"))
        build_ps_plan(builder, batch)
        lock()
        impl = make_impl(num_heads, null_kernels(), impl_cls=impl_cls)
        total = batch.total_prefill_tokens
        q, k, v = shaped_qkv(total, num_heads)
        run_forward(impl, q, k, v, batch, q.new_empty(total, num_heads * 128))
        return batch.metadata.fp8_prefill_num_partial_tiles


@st.composite
def batches_within_limits(draw):
    lens = draw(st.lists(st.integers(1, 3000), min_size=1, max_size=8))
    limits = Limits(
        max_num_reqs=len(lens) + draw(st.integers(0, 8)),
        max_prefill_qlen=max(lens) + draw(st.integers(0, 2000)),
        max_num_batched_tokens=sum(lens) + draw(st.integers(0, 4000)),
    )
    return lens, draw(st.integers(0, 4)), limits


# 25 examples under --contracts-profile ci (.ci/run), a derandomized few by default.
# aiter_in_mode only installs a module: nothing in it changes between examples.
@contract_settings(25, ci_derandomize=False)
@given(
    case=batches_within_limits(),
    heads=st.sampled_from([12, 16, 24, 32, 128]),
    cu=st.sampled_from([256, 304]),
)
def test_reservation_covers_forward_scratch(aiter_in_mode, case, heads, cu):
    """vLLM's token-budget bound (``cdiv(tokens, 256) + reqs - 1`` tiles plus one partial tile
    per CU) covers the scratch of any batch within its limits, under each AITER revision, also
    when ``need_lse`` gives every tile a partial slot."""
    lens, decodes, limits = case
    forward_within_reservation(heads, lens, decodes, limits, cu)


@pytest.mark.selfcheck
def test_reservation_without_cu_term_is_caught(emulated_aiter, mutant):
    module = mutant(
        (
            "max_num_partial_tiles = qo_tile_cnt + current_platform.num_compute_units()",
            "max_num_partial_tiles = qo_tile_cnt",
        )
    )
    with pytest.raises(AssertionError, match="Workspace is locked"):
        forward_within_reservation(
            16, [1000], 0, Limits(1, 1000, 1000), 256, builder_cls=module.AiterMLAMetadataBuilder
        )


def align(n: int) -> int:
    return -(-n // 256) * 256


def reservation_ceiling(width: int, padded: bool, limits: Limits, cu: int, v: int = 128) -> int:
    """Bytes the builder may reserve: scratch for every partial tile of the worst batch, the
    final LSE, and the padded output (vllm-fp8-prefill-surface.md, 1a)."""
    tiles = -(-limits.max_num_batched_tokens // 256) + limits.max_num_reqs - 1 + cu
    total = align(tiles * 256 * width * v * 4) + align(tiles * 256 * width * 4)
    total += align(limits.max_num_batched_tokens * width * 4)
    if padded:
        total += align(limits.max_num_batched_tokens * width * v * 2)
    return total


@pytest.mark.parametrize("num_heads", [12, 16, 24, 32, 128])
@pytest.mark.parametrize(
    "limits", [Limits(256, 8192, 8192), Limits(1024, 16384, 16384)], ids=["8k", "16k"]
)
def test_reservation_byte_ceiling(emulated_aiter, aiter_mla, reservation_report, num_heads, limits):
    cu = 256
    width = aiter_mla.AiterMLAHelper.get_fp8_prefill_num_heads(num_heads)
    with emulated_device(cu), workspace_session():
        init_ps_buffers(make_builder(num_heads), limits, torch.device("cpu"))
        reserved = reserved_bytes()
    ceiling = reservation_ceiling(width, width != num_heads, limits, cu)
    reservation_report.append(
        f"heads={num_heads:>3} (W={width:>3}) reqs={limits.max_num_reqs:>4} "
        f"tokens={limits.max_num_batched_tokens:>5} cu={cu}: reserved {reserved / 2**20:8.1f} MiB "
        f"<= ceiling {ceiling / 2**20:8.1f} MiB"
    )
    assert reserved <= ceiling


@pytest.mark.selfcheck
def test_byte_ceiling_fails_on_a_larger_reservation(emulated_aiter, mutant):
    """Sizing scratch by max_prefill_qlen * max_num_reqs (AITER's loose bound) is caught."""
    limits = Limits(64, 8192, 8192)
    module = mutant(
        (
            "            cdiv(max_num_batched_tokens, _FP8_PREFILL_TILE_Q) + max_num_reqs - 1\n",
            "            cdiv(max_prefill_qlen, _FP8_PREFILL_TILE_Q) * max_num_reqs\n",
        )
    )
    with emulated_device(256), workspace_session():
        builder = make_builder(16, builder_cls=module.AiterMLAMetadataBuilder)
        init_ps_buffers(builder, limits, torch.device("cpu"))
        reserved = reserved_bytes()
    assert reserved > reservation_ceiling(16, False, limits, 256)


def test_workspace_session_resets_after_an_exception(aiter_mla):
    from vllm.v1.worker.workspace import is_workspace_manager_initialized

    with pytest.raises(RuntimeError, match="boom"):
        with workspace_session(torch.device("cpu")):
            lock()
            raise RuntimeError("boom")
    assert not is_workspace_manager_initialized()


def test_a_failing_test_leaves_no_workspace_behind(aiter_mla, pytester):
    """Run a failing test that uses the fp8_env fixture in-process, then look at the global."""
    from vllm.v1.worker.workspace import is_workspace_manager_initialized

    pytester.makeconftest(
        "import pytest\n"
        "from factories.stubs.workspace import workspace_session, lock\n"
        "@pytest.fixture\n"
        "def ws():\n"
        "    with workspace_session():\n"
        "        yield\n"
    )
    pytester.makepyfile(
        "def test_fails(ws):\n"
        "    from factories.stubs.workspace import lock\n"
        "    lock()\n"
        "    assert False\n"
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    assert not is_workspace_manager_initialized()


def test_cuda_is_the_device_string_on_rocm():
    """PyTorch's HIP build exposes AMD GPUs under the ``cuda`` device type; vLLM's tests and
    the workspace use ``torch.device("cuda")`` on MI355 for that reason."""
    if getattr(torch.version, "hip", None) is None:
        pytest.skip("not a ROCm build of torch (torch.version.hip is None)")
    assert torch.cuda.is_available()
    assert torch.empty(1, device="cuda").device.type == "cuda"
