"""Float64 reference attention on fp8-dequantized inputs, with natural-log LSE.

Why: to judge the emulated (or real) pipeline we need an answer that shares nothing with it but
the *inputs*: no planner, no tiles, no splits, no fp32. It dequantizes the same fp8 tensors the
kernel reads (so fp8 rounding cancels and the comparison can be tight, see known-regressions B3)
and computes plain varlen attention per request in float64: bottom-right causal (row i of a
request with q_len rows and kv_len keys sees key j iff ``j <= kv_len - q_len + i``) or non-causal.
K/V rows are gathered through ``kv_page_indices`` like the kernel does (page size 1).

Rows that see no key (causal with kv_len < q_len) get out = 0 and lse = -inf, the kernel's
convention (``1/l -> 0``).

:func:`causal_reference` is the same answer for the accuracy suite's batches (KV = Q, packed
requests), chunked over q rows so a 16k-token request needs ~100 MB, not ``H * L * L * 8``
bytes; a test pins it to :func:`reference_attention`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch


def _dequant(x: torch.Tensor, scale: torch.Tensor | float) -> torch.Tensor:
    if isinstance(scale, torch.Tensor):
        s = scale.reshape(-1)[0].to(x.device, torch.float64)
    else:
        s = float(scale)
    return x.to(torch.float64) * s


def reference_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    q_scale: torch.Tensor | float,
    k_scale: torch.Tensor | float,
    v_scale: torch.Tensor | float,
    qo_indptr: torch.Tensor,
    kv_indptr: torch.Tensor,
    *,
    softmax_scale: float,
    is_causal: bool,
    kv_page_indices: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(out float64 [T, H, Dv], lse float64 [T, H])`` on ``q``'s device.

    ``q`` ``[T, H, Dqk]``, ``k`` ``[P, H, Dqk]``, ``v`` ``[P, H, Dv]`` (fp8 or any float dtype),
    per-tensor dequant scales (``x ~= x_q * scale``). ``kv_page_indices[kv_indptr[b] + j]`` is the
    physical row of key j of request b; identity when None. One vectorized pass per request.
    """
    device = q.device
    qd = _dequant(q, q_scale)
    kd = _dequant(k, k_scale)
    vd = _dequant(v, v_scale)
    num_tokens, num_heads, _ = q.shape
    out = torch.zeros(num_tokens, num_heads, v.size(-1), dtype=torch.float64, device=device)
    lse = torch.full((num_tokens, num_heads), float("-inf"), dtype=torch.float64, device=device)
    qo = qo_indptr.to("cpu").tolist()
    kv = kv_indptr.to("cpu").tolist()
    pages = (
        None if kv_page_indices is None else kv_page_indices.to(device=device, dtype=torch.int64)
    )
    for b in range(len(qo) - 1):
        q0, q1, k0, k1 = qo[b], qo[b + 1], kv[b], kv[b + 1]
        q_len, kv_len = q1 - q0, k1 - k0
        if q_len <= 0 or kv_len <= 0:
            continue
        rows = torch.arange(k0, k1, device=device) if pages is None else pages[k0:k1]
        kb, vb = kd[rows], vd[rows]  # [kv_len, H, D]
        scores = torch.einsum("qhd,khd->hqk", qd[q0:q1], kb) * softmax_scale
        if is_causal:
            i = torch.arange(q_len, device=device)[:, None]
            j = torch.arange(kv_len, device=device)[None, :]
            scores = scores.masked_fill(j > kv_len - q_len + i, float("-inf"))
        lse_b = torch.logsumexp(scores, dim=-1)  # [H, q_len]; -inf where nothing is visible
        finite = torch.isfinite(lse_b)
        probs = torch.exp(scores - torch.where(finite, lse_b, torch.zeros_like(lse_b))[..., None])
        out[q0:q1] = torch.einsum("hqk,khd->qhd", probs, vb)
        lse[q0:q1] = lse_b.transpose(0, 1)
    return out, lse


#: Elements of one [H, rows, keys] float64 score block (2^24 -> 128 MiB, a few live copies).
REFERENCE_BLOCK_ELEMENTS = {"cpu": 1 << 24, "cuda": 1 << 28}


def causal_key_counts(lens: Sequence[int]) -> np.ndarray:
    """Keys each row sees in :func:`causal_reference`'s layout (row i of a request: ``i + 1``),
    as an int64 array over the packed rows: what a key-count-dependent LSE bound is fed."""
    parts = [np.arange(1, int(n) + 1, dtype=np.int64) for n in lens]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def causal_reference(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    lens: Sequence[int],
    softmax_scale: float,
    *,
    scales: tuple[float, float, float] = (1.0, 1.0, 1.0),
    block_elements: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(out [T, H, Dv], lse [T, H])`` in float64: packed requests of ``lens`` tokens, KV = Q
    (no prefix), bottom-right causal (row i of a request sees keys 0..i), natural-log LSE.

    ``q``/``k``/``v`` are the fp8 (or any float) tensors the kernel reads, dequantized exactly
    (``x * scale``). Each request is cut into blocks of q rows; a block of rows [i0, i1) reads keys
    [0, i1) and masks only the diagonal square, so work and memory follow the causal triangle.
    """
    device = q.device
    num_tokens, num_heads, _ = q.shape
    if sum(lens) != num_tokens or k.size(0) != num_tokens or v.size(0) != num_tokens:
        raise ValueError(
            f"lens {list(lens)} do not pack q/k/v of {num_tokens}/{k.size(0)}/{v.size(0)} rows"
        )
    budget = block_elements or REFERENCE_BLOCK_ELEMENTS.get(
        device.type, REFERENCE_BLOCK_ELEMENTS["cuda"]
    )
    qs, ks, vs = (float(s) for s in scales)
    out = torch.empty(num_heads, num_tokens, v.size(-1), dtype=torch.float64, device=device)
    lse = torch.empty(num_heads, num_tokens, dtype=torch.float64, device=device)
    start = 0
    for n in lens:
        if n == 0:
            continue
        # Head-major float64 copies of this request only: [H, n, D].
        qd = (
            q[start : start + n]
            .to(torch.float64)
            .transpose(0, 1)
            .contiguous()
            .mul_(qs * softmax_scale)
        )
        kt = (
            k[start : start + n].to(torch.float64).permute(1, 2, 0).contiguous().mul_(ks)
        )  # [H, D, n]
        vd = v[start : start + n].to(torch.float64).transpose(0, 1).contiguous().mul_(vs)
        rows = max(1, min(n, budget // max(1, num_heads * n)))
        for i0 in range(0, n, rows):
            i1 = min(n, i0 + rows)
            s = torch.bmm(qd[:, i0:i1], kt[:, :, :i1])  # [H, r, i1]
            r = i1 - i0
            diag = torch.ones(r, r, dtype=torch.bool, device=device).triu_(1)
            s[:, :, i0:i1].masked_fill_(diag, float("-inf"))
            m = s.amax(dim=-1, keepdim=True)  # finite: key i0..i is always visible
            s.sub_(m).exp_()
            total = s.sum(dim=-1)
            o = torch.bmm(s, vd[:, :i1]).div_(total[..., None])
            out[:, start + i0 : start + i1] = o
            lse[:, start + i0 : start + i1] = total.log_().add_(m[..., 0])
            del s, o
        start += n
    return out.transpose(0, 1), lse.transpose(0, 1)
