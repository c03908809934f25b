"""The emulated kernels refuse what the real gfx950 device rejects, faults on, or gets silently
wrong.

Why: AITER's Python API accepts ``None`` scales, any fp8 flavour, any head dims and any head
counts; the device then faults (null scale pointers are dereferenced), asserts ("Unsupported
dtype" for e4m3fnuz on gfx950), or computes garbage (no strides are passed, only Gqa=1 kernels
exist, the reduce router has a fixed (H, Dv) table). Contract §3.3, §3.5, §3.6, §4.2. A test
double that accepted these calls would let vLLM glue pass CI and fail on the MI355.
"""

from __future__ import annotations

import pytest
import torch

from factories.aiter.batch import plan_batch
from factories.aiter.emulation import (
    PlannerSettings,
    PreconditionError,
    UnsupportedDtypeError,
    mla_prefill_ps_asm_fwd,
    mla_reduce_v1,
)
from factories.aiter.emulation.kernels import REDUCE_SUPPORTED_HEADS

H, T = 2, 300


def _fp8(*shape: int) -> torch.Tensor:
    return (torch.randn(*shape) * 0.5).to(torch.float8_e4m3fn)


@pytest.fixture(scope="module")
def call():
    """Keyword arguments of one valid prefill call (a split-producing plan, cu = 8)."""
    torch.manual_seed(0)
    plan = plan_batch([T], [T], H, PlannerSettings.for_fp8_prefill_kernel(True), cu_count=8)
    rows = plan.partial_rows
    return dict(
        Q=_fp8(T, H, 192),
        K=_fp8(T, H, 192),
        V=_fp8(T, H, 128),
        qo_indptr=plan.qo_indptr,
        kv_indptr=plan.kv_indptr,
        kv_page_indices=torch.arange(T, dtype=torch.int32),
        work_indptr=plan.work_indptr,
        work_info_set=plan.work_info,
        max_seqlen_q=T,
        softmax_scale=192**-0.5,
        is_causal=True,
        splitData=torch.empty(rows, H, 128),
        splitLse=torch.empty(rows, H),
        output=torch.empty(T, H, 128, dtype=torch.bfloat16),
        q_scale=torch.ones(1),
        k_scale=torch.ones(1),
        v_scale=torch.ones(1),
    ), plan


def test_valid_call_runs(call):
    kwargs, _ = call
    mla_prefill_ps_asm_fwd(**kwargs)


@pytest.mark.parametrize("arg", ["Q", "K"])
def test_e4m3fnuz_is_rejected_like_the_gfx950_dtype_map(call, arg):
    kwargs, _ = call
    kwargs = dict(kwargs, **{arg: kwargs[arg].float().to(torch.float8_e4m3fnuz)})
    with pytest.raises(UnsupportedDtypeError, match="Unsupported dtype"):
        mla_prefill_ps_asm_fwd(**kwargs)


def test_non_fp8_q_is_rejected(call):
    kwargs, _ = call
    with pytest.raises(PreconditionError, match="Q must be"):
        mla_prefill_ps_asm_fwd(**dict(kwargs, Q=kwargs["Q"].to(torch.bfloat16)))


@pytest.mark.parametrize("scale", ["q_scale", "k_scale", "v_scale"])
def test_none_scale_is_an_error_because_the_kernel_dereferences_it(call, scale):
    kwargs, _ = call
    with pytest.raises(PreconditionError, match=f"{scale} is None"):
        mla_prefill_ps_asm_fwd(**dict(kwargs, **{scale: None}))


def test_omitted_scales_are_an_error_too(call):
    kwargs, _ = call
    kwargs = {k: v for k, v in kwargs.items() if k not in ("q_scale", "k_scale", "v_scale")}
    with pytest.raises(PreconditionError, match="q_scale is None"):
        mla_prefill_ps_asm_fwd(**kwargs)


@pytest.mark.parametrize(
    "arg, shape",
    [("Q", (T, H, 128)), ("K", (T, H, 576)), ("V", (T, H, 192)), ("V", (T, H, 512))],
)
def test_head_dims_other_than_192_128_are_rejected(call, arg, shape):
    kwargs, _ = call
    with pytest.raises(PreconditionError, match="head dims"):
        mla_prefill_ps_asm_fwd(**dict(kwargs, **{arg: _fp8(*shape)}))


@pytest.mark.parametrize("arg, dim", [("K", 192), ("V", 128)])
def test_unequal_q_and_kv_head_counts_are_rejected(call, arg, dim):
    kwargs, _ = call
    with pytest.raises(PreconditionError, match="H_q must equal H_kv"):
        mla_prefill_ps_asm_fwd(**dict(kwargs, **{arg: _fp8(T, 1, dim)}))


def test_non_contiguous_q_is_rejected(call):
    kwargs, _ = call
    q = _fp8(H, T, 192).transpose(0, 1)
    with pytest.raises(PreconditionError, match="contiguous"):
        mla_prefill_ps_asm_fwd(**dict(kwargs, Q=q))


def test_work_indptr_none_is_an_error(call):
    kwargs, _ = call
    with pytest.raises(PreconditionError, match="work_indptr is None"):
        mla_prefill_ps_asm_fwd(**dict(kwargs, work_indptr=None))


def test_partial_buffer_too_small_for_a_256_row_slot(call):
    kwargs, plan = call
    max_loc = int(plan.work_info[: int(plan.work_indptr[-1]), 1].max())
    rows = max_loc + 100
    with pytest.raises(PreconditionError, match="partial slot"):
        mla_prefill_ps_asm_fwd(
            **dict(kwargs, splitData=torch.empty(rows, H, 128), splitLse=torch.empty(rows, H))
        )


# --- mla_reduce_v1 ------------------------------------------------------------------------------


def _reduce_args(num_heads: int, dv: int = 128, out_dtype=torch.bfloat16):
    ri = torch.tensor([0, 2], dtype=torch.int32)
    fm = torch.tensor([[0, 4]], dtype=torch.int32)
    pm = torch.tensor([0, 256], dtype=torch.int32)
    return (
        torch.zeros(512, num_heads, dv),
        torch.zeros(512, num_heads),
        ri,
        fm,
        pm,
        256,
        0,
        torch.empty(4, num_heads, dv, dtype=out_dtype),
        torch.empty(4, num_heads),
    )


@pytest.mark.parametrize(
    "num_heads, dv", [(3, 128), (12, 128), (256, 128), (16, 256), (4, 512), (8, 64)]
)
def test_reduce_rejects_unsupported_head_count_and_dim(num_heads, dv):
    assert num_heads not in REDUCE_SUPPORTED_HEADS.get(dv, frozenset())
    with pytest.raises(PreconditionError, match="doesn't support"):
        mla_reduce_v1(*_reduce_args(num_heads, dv))


@pytest.mark.parametrize("num_heads, dv", [(1, 128), (40, 128), (16, 512), (64, 64)])
def test_reduce_accepts_supported_pairs(num_heads, dv):
    mla_reduce_v1(*_reduce_args(num_heads, dv))


def test_reduce_requires_fp32_partials():
    args = list(_reduce_args(16))
    args[0] = args[0].to(torch.bfloat16)
    with pytest.raises(PreconditionError, match="float32"):
        mla_reduce_v1(*args)


def test_reduce_rejects_fp32_output():
    with pytest.raises(PreconditionError, match="output type"):
        mla_reduce_v1(*_reduce_args(16, out_dtype=torch.float32))


def test_reduce_rejects_a_group_larger_than_max_splits():
    args = list(_reduce_args(1))  # one head: 300 slots of 256 rows stay small
    n = 300  # > 256 CUs and num_kv_splits = 0
    args[0], args[1] = torch.zeros(256 * n, 1, 128), torch.zeros(256 * n, 1)
    args[2] = torch.tensor([0, n], dtype=torch.int32)
    args[4] = torch.arange(n, dtype=torch.int32) * 256
    with pytest.raises(PreconditionError, match="max_splits"):
        mla_reduce_v1(*args)
    args[6] = n  # num_kv_splits raises the budget
    mla_reduce_v1(*args)
