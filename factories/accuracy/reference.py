"""Float64 reference attention on fp8-dequantized inputs, with natural-log LSE.

Why: to judge the emulated (or real) pipeline we need an answer that shares nothing with it but
the *inputs*: no planner, no tiles, no splits, no fp32. It dequantizes the same fp8 tensors the
kernel reads (so fp8 rounding cancels and the comparison can be tight, see known-regressions B3)
and computes plain varlen attention per request in float64: bottom-right causal (row i of a
request with q_len rows and kv_len keys sees key j iff ``j <= kv_len - q_len + i``) or non-causal.
K/V rows are gathered through ``kv_page_indices`` like the kernel does (page size 1).

Rows that see no key (causal with kv_len < q_len) get out = 0 and lse = -inf, the kernel's
convention (``1/l -> 0``).
"""

from __future__ import annotations

import torch


def _dequant(x: torch.Tensor, scale: torch.Tensor | float) -> torch.Tensor:
    s = scale.reshape(-1)[0].to(x.device, torch.float64) if isinstance(scale, torch.Tensor) else float(scale)
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
    pages = None if kv_page_indices is None else kv_page_indices.to(device=device, dtype=torch.int64)
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
