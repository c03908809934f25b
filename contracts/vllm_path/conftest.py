"""Fixtures for contracts that run vLLM's real FP8 prefill code on this machine.

The contracts run on the vLLM under test; their self-proofs (marked ``selfcheck``, run with
``--selfcheck``) get mutants of the pinned release source through ``mutant``/``mutant_tree``.

vLLM is imported once per session; the emulated AITER is installed as ``aiter`` per test; the
device shims and the workspace manager are scoped to each test and always undone.
"""

from __future__ import annotations

import contextlib

import pytest
import torch

from factories.aiter.backend import aiter_module_installed
from factories.aiter.revision import CONTRACT_MODES
from factories.testing.suite_env import vllm_or_skip
from factories.testing.summary_section import SummarySection

AITER_MLA_FILE = "vllm/v1/attention/backends/mla/rocm_aiter_mla.py"
RESERVATIONS = SummarySection("FP8 prefill workspace reservation (byte ceiling)")


def pytest_configure(config):
    RESERVATIONS.register(config)


@pytest.fixture
def reservation_report(request) -> list:
    """Lines appended here are printed in the terminal summary."""
    return RESERVATIONS.lines(request.config)


@pytest.fixture(autouse=True)
def _requires_vllm():
    """Every test in this folder runs vLLM code: skip (or fail under CI) without it."""
    vllm_or_skip()


@pytest.fixture(scope="session")
def aiter_mla():
    """vLLM's ``rocm_aiter_mla`` module (skips with the reason where it is unusable)."""
    vllm_or_skip()
    import vllm.v1.attention.backends.mla.rocm_aiter_mla as module

    return module


def as_mutation(edit):
    """A ``Mutation`` as is; ``(old, new)`` as that edit of ``rocm_aiter_mla.py``, once."""
    from factories.mutation.source import Mutation

    return edit if isinstance(edit, Mutation) else Mutation(AITER_MLA_FILE, *edit)


@pytest.fixture
def mutant(aiter_mla, selfcheck_root):
    """``mutant((old, new), ...)`` -> the *pinned release's* ``rocm_aiter_mla`` with each edit
    applied (each ``old`` exactly once; pass a ``Mutation`` for another count; no edit: the
    pinned module as released), executed beside the vLLM under test and kept until the test
    ends.  One place for the path, the module and the lifetime, so a self-proof is its edit,
    the call and the failure it expects -- and its anchors never move with the vLLM under test.
    """
    from factories.mutation.source import mutated_module
    from factories.stubs.specs import AITER_MLA_MODULE

    with contextlib.ExitStack() as stack:

        def mutate(*edits):
            mutations = [as_mutation(e) for e in edits]
            return stack.enter_context(
                mutated_module(AITER_MLA_MODULE, *mutations, root=selfcheck_root)
            )

        yield mutate


@pytest.fixture
def mutant_tree(selfcheck_root):
    """``mutant_tree((old, new), ...)`` -> a temporary root holding the pinned release's
    ``vllm/`` with the edits applied to ``rocm_aiter_mla.py``, for the analyzer (no import)."""
    from factories.mutation.source import mutated_tree

    with contextlib.ExitStack() as stack:

        def mutate(*edits):
            mutations = [as_mutation(e) for e in edits]
            return stack.enter_context(mutated_tree(selfcheck_root, *mutations))

        yield mutate


@pytest.fixture(scope="session")
def aiter_call_sites(aiter_mla):
    """``{"get_ps_metadata_v1": "<vllm file>:<line>", ...}``: where the vLLM under test calls
    each AITER function (read by the analyzer), so a runtime contract that fails names the vLLM
    line that made the call, not only the test's assertion."""
    from factories.stubs.builders import KERNEL_FIELDS
    from factories.stubs.drift import source_root_of
    from factories.stubs.fp8_path import analyze_fp8_path

    sites: dict[str, list[str]] = {}
    for report in analyze_fp8_path(source_root_of(aiter_mla.AiterMLAImpl)[0]).reports:
        for call in report.calls:
            name = call.target.removeprefix("aiter.")
            name = KERNEL_FIELDS.get(name.removeprefix("self."), name)
            sites.setdefault(name, []).append(str(call.location))
    return {name: ", ".join(where) for name, where in sites.items()}


@pytest.fixture
def emulated_aiter(aiter_mla):
    """The emulation installed as ``aiter`` for one test."""
    import factories.aiter.emulation as emulation

    with aiter_module_installed(emulation):
        yield emulation


@pytest.fixture(
    params=[(contract, need_lse) for contract, need_lse, _ in CONTRACT_MODES],
    ids=[name for *_, name in CONTRACT_MODES],
)
def aiter_in_mode(aiter_mla, request):
    """One test per ``(contract, need_lse)`` of ``CONTRACT_MODES``: the emulation installed as
    ``aiter`` under that contract revision, planning with ``need_lse`` when asked."""
    import factories.aiter.emulation as emulation
    from factories.aiter.revision import aiter_contract, passing_need_lse

    contract, need_lse = request.param
    module = passing_need_lse(emulation) if need_lse else emulation
    with aiter_contract(contract), aiter_module_installed(module):
        yield module


@pytest.fixture
def device() -> torch.device:
    from factories.stubs.workspace import workspace_device

    return workspace_device()


@pytest.fixture(params=[256], ids=lambda cu: f"cu{cu}")
def cu_count(request) -> int:
    return request.param


@pytest.fixture
def fp8_env(emulated_aiter, cu_count, device):
    """Emulated AITER + device shims for ``cu_count`` CUs + a fresh vLLM workspace."""
    from factories.stubs.device_shims import emulated_device
    from factories.stubs.workspace import workspace_session

    with emulated_device(cu_count), workspace_session(device):
        yield emulated_aiter


@pytest.fixture
def plan_batch(fp8_env, device):
    """``plan_batch(num_heads, batch, limits=None, builder_cls=None)`` -> the planned builder.

    Runs vLLM's ``_init_fp8_prefill_ps_buffers`` then ``_build_fp8_prefill_ps_metadata`` on
    ``batch`` (a ``factories.stubs.builders.PrefillBatch``) with the emulated AITER.
    """
    from factories.stubs.builders import make_builder
    from factories.stubs.pipeline import Limits, build_ps_plan, init_ps_buffers

    def plan(num_heads, batch, limits=None, builder_cls=None):
        builder = make_builder(num_heads, builder_cls=builder_cls)
        init_ps_buffers(builder, limits or Limits.for_batch(batch), device)
        build_ps_plan(builder, batch)
        return builder

    return plan
