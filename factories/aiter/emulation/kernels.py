"""Emulated ``mla_prefill_ps_asm_fwd`` (the gfx950 PS prefill kernel) and ``mla_reduce_v1``.

Why: the glue vLLM puts around these two kernels (buffer sizes, partial slots, which rows get an
LSE, scale tensors, fp8 flavour) is where regressions hide, and it cannot be tested without a
gfx950 GPU unless something behaves like the kernels *including the parts that hurt*: partial
slots are written 256 rows at a time (rows past the tile end are poisoned with NaN here, so glue
that reads them fails loudly), unsplit tiles write no LSE, ``final_lse`` is written only for
reduced rows, scales are dereferenced unconditionally (None is an error here, a GPU fault there),
and only the arch-native fp8 is accepted.

Semantics follow contract §3.3-3.6 and §4.2-4.3 (ROCm/aiter e4048607a5; the kernel from its
disassembly, the reduce from ``csrc/kernels/mla/reduce.cu``). Arithmetic is fp32 on exactly
dequantized fp8 values, output rounded to bf16 once, as on the device. That arithmetic is the
default of a parameter (:mod:`.arithmetic`: ``with kernel_arithmetic("p8-unscaled"): ...``) that
both kernels read at call time, so candidate device arithmetics (P rounded to fp8, a truncating
bf16 store) run through the same split pipeline without changing AITER's signatures.

There is no Python loop per row: short works are padded to a multiple of 128 keys and batched by
width (one GEMM pair per batch); on CPU, works of >= 1024 keys run one at a time on views of the
operands (the GEMM is big enough, and a gather would cost more than it saves). The reduce is
vectorized over groups, rows, partials and heads. Everything runs on whatever device the tensors
are on; on CUDA the fp32 GEMMs follow ``torch.get_float32_matmul_precision()``, which must stay
"highest" (the default): TF32 would not be the kernel's arithmetic.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import numpy as np
import torch

from factories.aiter.layout import (
    FINAL_MAP_COLS,
    KERNEL_KV_STEP,
    KERNEL_TILE_ROWS,
    QK_HEAD_DIM,
    V_HEAD_DIM,
    WORK_INFO_COLS,
    WorkInfoCol,
)
from factories.aiter.revision import current_contract
from factories.errors import PreconditionError, UnsupportedDtypeError

from .arithmetic import (
    KernelArithmetic,
    current_arithmetic,
    current_faults,
    rounded_p_softmax_pv,
    store_rounded,
)
from .device_model import current_cu_count, fp8_dtype, host_ints

#: (num_heads, v_head_dim) pairs the reduce router dispatches (reduce.cu l.923-947).
REDUCE_SUPPORTED_HEADS: dict[int, frozenset[int]] = {
    128: frozenset({1, 2, 4, 8, 10, 16, 32, 40, 48, 64, 96, 128}),
    512: frozenset({8, 16, 24, 32, 48, 64, 80, 96, 112, 128}),
    64: frozenset({64}),
}

#: Split count from which ``mla_reduce_v1`` takes the "massive" path (``kMassiveThreshold``).
REDUCE_MASSIVE_THRESHOLD = 4

#: Elements of the largest [works, rows, kv] score block materialised at once, per device type.
_SCORE_BUDGET = {"cpu": 1 << 22, "cuda": 1 << 28}

#: Works that see at least this many keys run alone on operand views instead of being gathered
#: into a padded batch: on CPU, past this size the gather costs more than batching saves; on a
#: GPU gathers are cheap and launches are not, so everything is batched.
_VIEW_MIN_WIDTH = {"cpu": 1024}

_FP8_FAMILY = frozenset(
    getattr(torch, n)
    for n in ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz")
    if hasattr(torch, n)
)


# --------------------------------------------------------------------------------------------
# precondition helpers
# --------------------------------------------------------------------------------------------


def _require(cond: bool, msg: str) -> None:
    if not cond:
        raise PreconditionError(msg)


def _check_fp8(t: torch.Tensor, name: str) -> None:
    native = fp8_dtype()
    if t.dtype == native:
        return
    if t.dtype in _FP8_FAMILY:
        raise UnsupportedDtypeError(
            f"Unsupported dtype {t.dtype} for {name}: the gfx950 dtype map holds only {native}"
        )
    raise PreconditionError(f"mla_prefill_ps_asm_fwd: {name} must be {native}, got {t.dtype}")


def _scale_value(t: torch.Tensor | None, name: str, device: torch.device) -> torch.Tensor:
    _require(
        isinstance(t, torch.Tensor),
        f"mla_prefill_ps_asm_fwd: {name} is None; the kernel loads it with s_load_dword without a "
        "null check, which faults on the GPU (contract §3.5). Pass a 1-element fp32 tensor.",
    )
    assert isinstance(t, torch.Tensor)
    _require(t.dtype == torch.float32, f"{name} must be float32, got {t.dtype}")
    _require(t.numel() >= 1, f"{name} must have at least one element")
    _require(t.device == device, f"{name} is on {t.device} but Q is on {device}")
    return t.reshape(-1)[0]


def _score_budget(device: torch.device) -> int:
    return _SCORE_BUDGET.get(device.type, _SCORE_BUDGET["cuda"])


def _batches(order: np.ndarray, keys: np.ndarray, cost_per_item: np.ndarray, budget: int):
    """Yield index arrays of items with equal key, each batch's total cost within ``budget``."""
    if len(order) == 0:
        return
    sorted_keys = keys[order]
    cut = np.flatnonzero(np.diff(sorted_keys)) + 1
    for group in np.split(order, cut):
        per = int(cost_per_item[group[0]])
        size = max(1, budget // max(per, 1))
        for i in range(0, len(group), size):
            yield group[i : i + size]


# --------------------------------------------------------------------------------------------
# mla_prefill_ps_asm_fwd
# --------------------------------------------------------------------------------------------


def _check_prefill_args(
    Q,
    K,
    V,
    qo_indptr,
    kv_indptr,
    kv_page_indices,
    work_indptr,
    work_info_set,
    splitData,
    splitLse,
    output,
    q_scale,
    k_scale,
    v_scale,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Every precondition of §3.3/§3.5/§3.6; returns the three scales as 0-d device tensors."""
    _check_fp8(Q, "Q")
    _check_fp8(K, "K")
    _require(V.dtype == fp8_dtype(), f"V must be {fp8_dtype()} (unchecked upstream), got {V.dtype}")
    _require(work_indptr is not None, "work_indptr is None: the host dereferences it (segfault)")
    _require(work_info_set is not None, "work_info_set is None: the kernel dereferences it")
    _require(Q.dim() == 3 and K.dim() == 3 and V.dim() == 3, "Q, K, V must be [tokens, heads, dim]")
    _require(
        Q.size(2) == QK_HEAD_DIM and K.size(2) == QK_HEAD_DIM and V.size(2) == V_HEAD_DIM,
        f"head dims must be Q/K {QK_HEAD_DIM} and V {V_HEAD_DIM} (the only kernel is qh192_vh128); "
        f"got Q {Q.size(2)}, K {K.size(2)}, V {V.size(2)}",
    )
    num_heads = Q.size(1)
    _require(
        K.size(1) == num_heads and V.size(1) == num_heads,
        f"H_q must equal H_kv (only Gqa=1 kernels exist): Q {num_heads}, K {K.size(1)}, "
        f"V {V.size(1)}",
    )
    _require(V.size(0) >= K.size(0), "V must have at least K.size(0) rows (buffer size uses K's)")
    _require(output.dtype == torch.bfloat16, f"output must be bfloat16, got {output.dtype}")
    _require(
        tuple(output.shape) == (Q.size(0), num_heads, V_HEAD_DIM),
        f"output must be [T, H, {V_HEAD_DIM}] = {(Q.size(0), num_heads, V_HEAD_DIM)}, "
        f"got {tuple(output.shape)}",
    )
    _require(
        splitData.dtype == torch.float32 and splitLse.dtype == torch.float32,
        "splitData/splitLse must be fp32",
    )
    _require(
        splitData.dim() == 3 and splitData.shape[1:] == (num_heads, V_HEAD_DIM),
        f"splitData must be [R, H, {V_HEAD_DIM}], got {tuple(splitData.shape)}",
    )
    _require(
        tuple(splitLse.shape) == (splitData.size(0), num_heads),
        f"splitLse must be [R, H] = {(splitData.size(0), num_heads)}, got {tuple(splitLse.shape)}",
    )
    named = (("Q", Q), ("K", K), ("V", V), ("output", output))
    named += (("splitData", splitData), ("splitLse", splitLse))
    for name, t in named:
        _require(t.is_contiguous(), f"{name} must be contiguous: the kernel gets no strides")
    indptrs = (("qo_indptr", qo_indptr), ("kv_indptr", kv_indptr))
    for name, t in (*indptrs, ("kv_page_indices", kv_page_indices)):
        _require(t.dtype == torch.int32, f"{name} must be int32, got {t.dtype}")
    device = Q.device
    for name, t in named[1:]:
        _require(t.device == device, f"{name} is on {t.device} but Q is on {device}")
    qs_scale = _scale_value(q_scale, "q_scale", device)
    ks_scale = _scale_value(k_scale, "k_scale", device)
    vs_scale = _scale_value(v_scale, "v_scale", device)
    return qs_scale, ks_scale, vs_scale


def mla_prefill_ps_asm_fwd(
    Q: torch.Tensor,
    K: torch.Tensor,
    V: torch.Tensor,
    qo_indptr: torch.Tensor,
    kv_indptr: torch.Tensor,
    kv_page_indices: torch.Tensor,
    work_indptr: torch.Tensor | None,
    work_info_set: torch.Tensor | None,
    max_seqlen_q: int,
    softmax_scale: float,
    is_causal: bool,
    splitData: torch.Tensor,
    splitLse: torch.Tensor,
    output: torch.Tensor,
    q_scale: torch.Tensor | None = None,
    k_scale: torch.Tensor | None = None,
    v_scale: torch.Tensor | None = None,
) -> None:
    """Run every work of every workgroup (contract §3.4). ``max_seqlen_q`` is ignored, as upstream.

    Per work (b, p, qs, qe, ks, ke, -, hr), head ``h = hr & 0xFFFF``, row r (local q
    ``i = qs - qo_indptr[b] + r``) sees local kv ``j`` in ``[ks_l, lim)`` with
    ``lim = min(kv_len - q_len + i + 1, ke_l)`` (causal, bottom-right) or ``ke_l``.
    ``p == -1``: bf16 ``output[qs:qe, h]``, no LSE. ``p >= 0``: fp32 normalized partial output and
    natural-log LSE into ``splitData/splitLse[p:p+256, h]``; rows past the tile are NaN; rows with
    nothing visible get O = 0 and LSE = -inf.
    """
    del max_seqlen_q  # never used by the host nor passed to the kernel (contract §3.1)
    arithmetic, faults = current_arithmetic(), current_faults()
    qs_scale, ks_scale, vs_scale = _check_prefill_args(
        Q,
        K,
        V,
        qo_indptr,
        kv_indptr,
        kv_page_indices,
        work_indptr,
        work_info_set,
        splitData,
        splitLse,
        output,
        q_scale,
        k_scale,
        v_scale,
    )
    assert work_indptr is not None and work_info_set is not None
    device = Q.device
    num_heads = Q.size(1)
    works = _collect_works(work_indptr, work_info_set)
    if len(works) == 0:
        return
    qo = host_ints(qo_indptr)
    kv = host_ints(kv_indptr)
    pages = kv_page_indices.to(device=device, dtype=torch.int64)
    num_tokens = Q.size(0)
    num_pages = K.size(0)

    b = works[:, WorkInfoCol.BATCH_IDX]
    in_range = (b >= 0) & (b < len(qo) - 1) & (b < len(kv) - 1)
    _require(bool(in_range.all()), "work batch_idx out of range")
    loc = works[:, WorkInfoCol.PARTIAL_O_LOC]
    qs = works[:, WorkInfoCol.QO_START]
    qe = works[:, WorkInfoCol.QO_END]
    head = works[:, WorkInfoCol.Q_HEAD_RANGE] & 0xFFFF
    _require(bool((head < num_heads).all()), f"work head >= num heads {num_heads}")
    _require(bool(((qs >= 0) & (qe <= num_tokens)).all()), "work q range outside Q")
    _require(bool((loc >= -1).all()), "partial_o_loc < -1")
    split = loc >= 0
    _require(
        bool((loc[split] + KERNEL_TILE_ROWS <= splitData.size(0)).all()),
        f"a partial slot [p, p+{KERNEL_TILE_ROWS}) runs past splitData's {splitData.size(0)} rows "
        "(the kernel writes all 256 rows of a slot)",
    )
    kv0 = kv[b]
    q_len = qo[b + 1] - qo[b]
    kv_len = kv[b + 1] - kv0
    ks_l = works[:, WorkInfoCol.KV_START] - kv0
    ke_l = works[:, WorkInfoCol.KV_END] - kv0
    rows = np.clip(qe - qs, 0, KERNEL_TILE_ROWS)
    # Per-row causal limit is s64 + r (asm 0x29D8); the shift is a fault, 0 unless injected.
    s64 = kv_len - q_len + (qs - qo[b]) + 1 + faults.causal_shift
    hi = np.minimum(ke_l, s64 + rows - 1) if is_causal else ke_l
    span = np.maximum(hi - ks_l, 0)
    span[rows == 0] = 0
    touched = span > 0
    if touched.any():
        lo_pos = (kv0 + ks_l)[touched]
        hi_pos = (kv0 + ks_l + span - 1)[touched]
        _require(
            bool((lo_pos >= 0).all() and (hi_pos < kv_page_indices.numel()).all()),
            "a work's kv range runs outside kv_page_indices",
        )

    # Dequantization happens inside the GEMMs on the device; here once, up front, head-major and
    # flattened to [H * rows, D] so a batch's operands are one index_select (a row memcpy) each.
    _require(
        bool(((pages >= 0) & (pages < num_pages)).all()) if pages.numel() else True,
        "kv_page_indices entry outside K/V",
    )
    qk_scale = float((qs_scale * ks_scale * softmax_scale).item())  # fp32 product, as the kernel

    def paged(t: torch.Tensor, dim: int) -> torch.Tensor:
        return t.view(torch.uint8)[pages].view(fp8_dtype()).float().transpose(0, 1).reshape(-1, dim)

    ops = _Operands(
        q=Q.float().transpose(0, 1).reshape(-1, QK_HEAD_DIM),
        k=paged(K, QK_HEAD_DIM),
        v=paged(V, V_HEAD_DIM),
        q_rows=num_tokens,
        kv_rows=pages.numel(),
        qk_scale=qk_scale,
        v_scale=vs_scale,
    )
    ctx = _WorkArrays(
        device=device,
        head=head,
        qs=qs,
        rows=rows,
        loc=loc,
        kv0=kv0,
        ks_l=ks_l,
        ke_l=ke_l,
        s64=s64,
        is_causal=bool(is_causal),
        arithmetic=arithmetic,
    )
    # Long works run one at a time on views of the operands (no gather, no padding: the GEMM is
    # big enough); short ones are padded to a multiple of 128 keys and batched by width, split
    # works apart from unsplit ones (only they need the LSE).
    long = span >= _VIEW_MIN_WIDTH.get(device.type, np.iinfo(np.int64).max)
    width = np.where(long, span, -(-span // KERNEL_KV_STEP) * KERNEL_KV_STEP)
    keys = np.where(long, -1 - np.arange(len(span)), width * 2 + split)
    order = np.argsort(keys, kind="stable")
    budget = _score_budget(device)
    for batch in _batches(order, keys, np.maximum(width, 1) * KERNEL_TILE_ROWS, budget):
        o, lse = _attend(ctx, batch, int(width[batch[0]]), ops, need_lse=bool(split[batch[0]]))
        _store(ctx, batch, o, lse, output, splitData, splitLse)


def _collect_works(work_indptr: torch.Tensor, work_info_set: torch.Tensor) -> np.ndarray:
    """Rows ``work_indptr[wg]..work_indptr[wg+1]-1`` of every workgroup, in launch order."""
    wi = host_ints(work_indptr).reshape(-1)
    info = host_ints(work_info_set).reshape(-1, WORK_INFO_COLS)
    starts, ends = wi[:-1], wi[1:]
    lengths = np.maximum(ends - starts, 0)
    if lengths.sum() == 0:
        return np.zeros((0, 8), dtype=np.int64)
    idx = np.concatenate([np.arange(s, s + n) for s, n in zip(starts, lengths) if n])
    _require(
        bool((idx >= 0).all() and (idx < len(info)).all()), "work_indptr points outside work_info"
    )
    return info[idx]


@attrs.frozen
class _Operands:
    """Dequantized fp32 operands, head-major and flattened to ``[H * rows, D]``."""

    q: torch.Tensor = attrs.field(eq=False)
    k: torch.Tensor = attrs.field(eq=False)
    v: torch.Tensor = attrs.field(eq=False)
    q_rows: int
    kv_rows: int
    qk_scale: float
    v_scale: torch.Tensor = attrs.field(eq=False)


@attrs.frozen
class _WorkArrays:
    """Per-work host integers (one entry per work, launch order) the batched attention needs."""

    device: torch.device
    head: np.ndarray = attrs.field(eq=False)
    qs: np.ndarray = attrs.field(eq=False)  # global q start
    rows: np.ndarray = attrs.field(eq=False)  # q rows the kernel keeps (<= 256)
    loc: np.ndarray = attrs.field(eq=False)  # partial_o_loc
    kv0: np.ndarray = attrs.field(eq=False)  # kv_indptr[b]
    ks_l: np.ndarray = attrs.field(eq=False)  # local kv start
    ke_l: np.ndarray = attrs.field(eq=False)  # local kv end
    s64: np.ndarray = attrs.field(eq=False)  # causal limit of row 0 (asm 0x29D8)
    is_causal: bool
    arithmetic: KernelArithmetic

    def t(self, arr: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(np.ascontiguousarray(arr)).to(self.device)


def _attend(ctx: _WorkArrays, batch: np.ndarray, width: int, ops: _Operands, need_lse: bool):
    """Normalized O ``[n, rmax, 128]`` and natural-log LSE ``[n, rmax]`` (or None) for a batch.

    Visible keys of row r: local ``j`` in ``[ks_l, lim_r)``; with ``width`` padded columns
    ``c = j - ks_l``. Only columns at or past the smallest row-0 limit of the batch can be masked,
    so only that trailing window is touched.
    """
    n = len(batch)
    rmax = int(ctx.rows[batch].max())
    dev = ctx.device
    if width == 0 or rmax == 0:  # nothing visible: O = 0 (1/l -> 0), LSE = -inf
        return (
            torch.zeros(n, rmax, V_HEAD_DIM, device=dev),
            torch.full((n, rmax), float("-inf"), device=dev),
        )
    head, ks_l = ctx.head[batch], ctx.ks_l[batch]
    r = np.arange(rmax)
    if n == 1:  # views: rows and keys of one work are contiguous in the head-major operands
        q0 = int(head[0] * ops.q_rows + ctx.qs[batch][0])
        k0 = int(head[0] * ops.kv_rows + ctx.kv0[batch][0] + ks_l[0])
        q = ops.q[q0 : q0 + rmax].unsqueeze(0)
        k = ops.k[k0 : k0 + width].unsqueeze(0)
        v = ops.v[k0 : k0 + width].unsqueeze(0)
    else:
        q_idx = head[:, None] * ops.q_rows + np.minimum(ctx.qs[batch][:, None] + r, ops.q_rows - 1)
        pos = ctx.kv0[batch][:, None] + ks_l[:, None] + np.arange(width)
        pos = np.clip(pos, 0, max(ops.kv_rows - 1, 0))
        kv_idx = ctx.t((head[:, None] * ops.kv_rows + pos).reshape(-1))
        q = ops.q.index_select(0, ctx.t(q_idx.reshape(-1))).view(n, rmax, QK_HEAD_DIM)
        k = ops.k.index_select(0, kv_idx).view(n, width, QK_HEAD_DIM)
        v = ops.v.index_select(0, kv_idx).view(n, width, V_HEAD_DIM)
    s = torch.baddbmm(
        torch.empty(n, rmax, width, device=dev), q, k.transpose(1, 2), beta=0.0, alpha=ops.qk_scale
    )
    ke = ctx.ke_l[batch][:, None]
    if ctx.is_causal:
        lim = np.minimum(ctx.s64[batch][:, None] + r, ke)
    else:
        lim = np.broadcast_to(ke, (n, rmax))
    lim_c = lim - ks_l[:, None]  # first masked column of each row
    c0 = int(np.clip(lim_c.min(), 0, width))
    if c0 < width:
        cols = torch.arange(c0, width, device=dev)
        s[:, :, c0:].masked_fill_(cols >= ctx.t(lim_c)[:, :, None], float("-inf"))
    if ctx.arithmetic.rounds_p:
        o, lse = rounded_p_softmax_pv(s, v, need_lse, ctx.arithmetic)
        del s
        o = o.mul_(ops.v_scale)
    else:
        lse = torch.logsumexp(s, dim=-1) if need_lse else None  # -inf where nothing is visible
        p = torch.softmax(s, dim=-1)  # NaN on rows with nothing visible; zeroed below
        del s
        o = torch.bmm(p, v).mul_(ops.v_scale)
    empty = lim_c <= 0
    if empty.any():
        o.masked_fill_(ctx.t(empty)[..., None], 0.0)
    return o, lse


def _store(ctx, batch, o, lse, output, split_data, split_lse) -> None:
    """Write a batch's rows where the kernel would: output (bf16) or a 256-row partial slot."""
    rmax = o.size(1)
    num_heads = output.size(1)
    r = np.arange(rmax)
    head, loc = ctx.head[batch], ctx.loc[batch]
    valid = r[None, :] < ctx.rows[batch][:, None]  # rows past the tile end are dropped
    direct = valid & (loc < 0)[:, None]
    if direct.any():
        flat = (ctx.qs[batch][:, None] + r) * num_heads + head[:, None]
        sel = ctx.t(np.flatnonzero(direct))
        output.view(-1, V_HEAD_DIM).index_copy_(
            0, ctx.t(flat[direct]), o.reshape(-1, V_HEAD_DIM).index_select(0, sel).to(output.dtype)
        )
    sp = np.flatnonzero(loc >= 0)
    if len(sp):
        # The kernel writes all 256 rows of a slot; rows past the tile hold junk. Poison them.
        slot = (loc[sp][:, None] + np.arange(KERNEL_TILE_ROWS)) * num_heads + head[sp][:, None]
        split_data.view(-1, V_HEAD_DIM).index_fill_(0, ctx.t(slot.reshape(-1)), float("nan"))
        split_lse.view(-1).index_fill_(0, ctx.t(slot.reshape(-1)), float("nan"))
        keep = np.zeros_like(valid)
        keep[sp] = valid[sp]
        sel = ctx.t(np.flatnonzero(keep))
        dst = ctx.t(slot[:, :rmax][valid[sp]])
        src = o.reshape(-1, V_HEAD_DIM).index_select(0, sel)
        split_data.view(-1, V_HEAD_DIM).index_copy_(0, dst, src)
        assert lse is not None
        split_lse.view(-1).index_copy_(0, dst, lse.reshape(-1).index_select(0, sel))


# --------------------------------------------------------------------------------------------
# mla_reduce_v1
# --------------------------------------------------------------------------------------------


def mla_reduce_v1(
    partial_output: torch.Tensor,
    partial_lse: torch.Tensor,
    reduce_indptr: torch.Tensor,
    reduce_final_map: torch.Tensor | None,
    reduce_partial_map: torch.Tensor,
    max_seqlen_q: int,
    num_kv_splits: int,
    final_output: torch.Tensor,
    final_lse: torch.Tensor | None = None,
) -> None:
    """Merge split tiles into ``final_output`` (contract §4). The exact softmax merge of normalized
    partials with natural-log LSEs, in fp32, rounded once to the output dtype.

    Group g merges ``reduce_partial_map[reduce_indptr[g]:reduce_indptr[g+1]]`` (row offsets) into
    rows ``reduce_final_map[g]``. Groups with <= 1 partial write nothing before ROCm/aiter#3606;
    from it on a group of one partial is reduced too (``num_splits >= 1``, reduce.cu l.765/862 of
    the PR head), which is how ``need_lse`` plans get ``final_lse`` for every row. Processing
    stops at the first group whose start equals ``reduce_indptr[-1]`` (the persistent kernel's
    stop signal). ``final_lse`` is written only for merged rows. ``max_seqlen_q`` is a
    performance hint; ``num_kv_splits`` raises the split budget ``max(CU, num_kv_splits)``.
    """
    _require(
        partial_output.dtype == torch.float32 and partial_lse.dtype == torch.float32,
        "mla_reduce_v1: partial_out and partial_lse must be float32!",
    )
    num_heads = partial_output.size(-2)
    head_dim = final_output.size(-1)
    if num_heads not in REDUCE_SUPPORTED_HEADS.get(head_dim, frozenset()):
        raise PreconditionError(
            f"kn_mla_reduce_v1 doesn't support the specified settings: #heads: {num_heads}, "
            f"head dimension: {head_dim}."
        )
    _require(
        final_output.dtype in (torch.bfloat16, torch.float16),
        f"kn_mla_reduce_v1 doesn't support output type {final_output.dtype}.",
    )
    _require(final_output.stride(-1) == 1, "final_output's last dim must be contiguous")
    _require(
        partial_output.is_contiguous() and partial_lse.is_contiguous(),
        "partial_output/partial_lse are assumed contiguous (strides hard-coded from H and Dv)",
    )
    _require(partial_output.size(-1) == head_dim, "partial_output and final_output Dv differ")
    _require(
        tuple(partial_lse.shape) == tuple(partial_output.shape[:-1]), "partial_lse must be [R, H]"
    )
    if final_lse is not None:
        _require(final_lse.dtype == torch.float32, "final_lse must be float32")
        _require(
            final_lse.is_contiguous() and tuple(final_lse.shape) == tuple(final_output.shape[:-1]),
            "final_lse must be a contiguous [T, H] tensor",
        )
    _require(int(max_seqlen_q) >= 1, "max_seqlen_q must be >= 1 (it caps workgroups per group)")
    _require(int(num_kv_splits) >= 0, "num_kv_splits must be >= 0 (0 = auto)")
    max_splits = max(current_cu_count(), int(num_kv_splits))
    rounding = current_arithmetic().reduce_store
    faults = current_faults()
    drop_last = faults.reduce_drops_last_partial
    min_splits = (
        1 if current_contract().reduces_single_partials and not faults.ignores_need_lse else 2
    )

    ri = host_ints(reduce_indptr).reshape(-1)
    pm = host_ints(reduce_partial_map).reshape(-1)
    fm = (
        None
        if reduce_final_map is None
        else host_ints(reduce_final_map).reshape(-1, FINAL_MAP_COLS)
    )
    groups = _reduce_groups(ri, pm, fm, max_splits, drop_last=drop_last, min_splits=min_splits)
    if not groups:
        return
    dev = final_output.device
    po = partial_output.reshape(-1, num_heads, head_dim)
    pl = partial_lse.reshape(-1, num_heads)
    budget = max(1, _score_budget(dev) // (num_heads * head_dim))
    # Batch whole groups so that (rows of the batch) * (largest split count) stays in budget.
    batch: list[tuple[int, int, np.ndarray]] = []
    rows_in_batch = nmax = 0
    for group in groups:
        rows = max(group[1] - group[0], 0)
        n_next = max(nmax, len(group[2]))
        if batch and (rows_in_batch + rows) * n_next > budget:
            _merge(batch, po, pl, final_output, final_lse, dev, rounding)
            batch, rows_in_batch, n_next = [], 0, len(group[2])
        batch.append(group)
        rows_in_batch += rows
        nmax = n_next
    _merge(batch, po, pl, final_output, final_lse, dev, rounding)


def _reduce_groups(
    ri: np.ndarray,
    pm: np.ndarray,
    fm: np.ndarray | None,
    max_splits: int,
    *,
    drop_last: bool = False,
    min_splits: int = 2,
) -> list[tuple[int, int, np.ndarray]]:
    """``(q_start, q_end, partial_offsets)`` of every group that writes (n >= ``min_splits``:
    2 before #3606, 1 after), in order. ``drop_last`` is the injected fault: the first such group
    loses its last partial."""
    num_tiles = len(ri) - 1
    if num_tiles <= 0:
        return []
    last = ri[num_tiles]
    out = []
    for g in range(num_tiles):
        if ri[g] == last:  # kn_mla_reduce_v1_ps: `reduce_tile_start == last_reduce_tile` -> stop
            break
        n = int(ri[g + 1] - ri[g])
        if n < min_splits:  # pre-3606: "meaningless", not written (reduce.cu l.765-771, 863-869)
            continue
        _require(
            n <= max_splits,
            f"reduce group {g} has {n} partials, more than max_splits = {max_splits}",
        )
        parts = pm[ri[g] : ri[g + 1]]
        _require(len(parts) == n, f"reduce_partial_map too short for group {g}")
        if drop_last and not out:
            parts = parts[:-1]
        if fm is None:
            _require(n >= 2, f"reduce group {g} has one partial and no reduce_final_map")
            length = int(parts[1] - parts[0])
            qs, qe = g * length, (g + 1) * length
        else:
            qs, qe = int(fm[g, 0]), int(fm[g, 1])
        out.append((qs, qe, parts))
    return out


def _merge(groups, po, pl, final_output, final_lse, dev, rounding: str) -> None:
    """Exact LSE merge of a batch of groups, vectorized over rows, partials and heads; the store
    rounds per ``rounding`` (the arithmetic's ``reduce_store``)."""
    nmax = max(len(p) for _, _, p in groups)
    lengths = np.array([max(qe - qs, 0) for qs, qe, _ in groups], dtype=np.int64)
    if lengths.sum() == 0:
        return
    parts = np.zeros((len(groups), nmax), dtype=np.int64)
    present = np.zeros((len(groups), nmax), dtype=bool)
    for i, (_, _, p) in enumerate(groups):
        parts[i, : len(p)] = p
        present[i, : len(p)] = True
    counts = np.array([len(p) for _, _, p in groups], dtype=np.int64)
    g_of_row = np.repeat(np.arange(len(groups)), lengths)
    qs_arr = np.array([qs for qs, _, _ in groups], dtype=np.int64)
    row_in_group = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    out_rows = qs_arr[g_of_row] + row_in_group
    local = out_rows - qs_arr[g_of_row]
    src = parts[g_of_row] + local[:, None]  # [rows, nmax] partial rows
    ok = present[g_of_row]
    _require(
        bool((src[ok] >= 0).all() and (src[ok] < pl.size(0)).all()),
        "partial row outside partial buffers",
    )
    src = np.where(ok, src, 0)
    src_t = torch.from_numpy(src).to(dev)
    ok_t = torch.from_numpy(ok).to(dev)
    neg_inf = torch.tensor(float("-inf"), device=dev)
    lse = torch.where(ok_t[..., None], pl[src_t], neg_inf)  # [rows, n, H]
    zero = torch.zeros((), device=dev)
    o = torch.where(ok_t[..., None, None], po[src_t], zero)  # [rows, n, H, Dv]
    m = lse.amax(dim=1)  # [rows, H]
    w = torch.exp(lse - m[:, None])  # NaN where m == -inf (all partials empty)
    total = torch.where(ok_t[..., None], w, torch.zeros((), device=dev)).sum(dim=1)
    bad = (total == 0) | torch.isnan(total)
    big_l = torch.where(bad, torch.tensor(float("inf"), device=dev), torch.log(total) + m)
    massive = torch.from_numpy(counts[g_of_row] >= REDUCE_MASSIVE_THRESHOLD).to(dev)[:, None, None]
    # massive path: sum_i exp(l_i - L) o_i  (all -inf: L = +inf -> weights 0 -> writes 0)
    w_massive = torch.exp(lse - big_l[:, None])
    out_massive = (w_massive[..., None] * o).sum(dim=1)
    # simple path: online form, sum_i exp(l_i - m) o_i / S  (all -inf: NaN)
    w_simple = torch.where(ok_t[..., None], w, torch.zeros((), device=dev))
    out_simple = (w_simple[..., None] * o).sum(dim=1) / total[..., None]
    out = torch.where(massive, out_massive, out_simple)
    rows_t = torch.from_numpy(out_rows).to(dev)
    final_output[rows_t] = store_rounded(out, final_output.dtype, rounding)
    if final_lse is not None:
        final_lse[rows_t] = big_l


__all__: Sequence[str] = (
    "REDUCE_SUPPORTED_HEADS",
    "PreconditionError",
    "UnsupportedDtypeError",
    "mla_prefill_ps_asm_fwd",
    "mla_reduce_v1",
)
