"""Plan readers: which rows the kernel and the reduce were told to write, and which real head each
kernel column holds.

Why separate from the check: the vLLM-level check (:func:`factories.accuracy.check_fp8_prefill`),
the kernel-level GPU runner and the differential mode all read the same plan buffers, and a
reader must report a garbled buffer (a mutant's) as a mismatch or a problem, never crash on it.
"""

from __future__ import annotations

import numpy as np
import torch

from factories.aiter.emulation.device_model import host_ints
from factories.aiter.layout import FINAL_MAP_COLS, WORK_INFO_COLS, WorkInfoCol


def planned_split_rows(
    work_indptr: torch.Tensor, work_info: torch.Tensor, total_rows: int
) -> np.ndarray:
    """Rows covered by a work that writes a partial (``partial_o_loc >= 0``): bool ``[total_rows]``.

    Only works inside ``work_indptr``'s ranges count (contract §3.1: the grid is
    ``work_indptr.numel() - 1``). Out-of-range rows are clipped; the caller compares with the
    reduce's rows, so garbage shows up as a mismatch.
    """
    wi = host_ints(work_indptr).reshape(-1)
    info = (
        host_ints(work_info).reshape(-1, WORK_INFO_COLS)
        if work_info.numel() % WORK_INFO_COLS == 0
        else np.zeros((0, WORK_INFO_COLS), np.int64)
    )
    rows = np.zeros(total_rows, dtype=bool)
    for wg in range(len(wi) - 1):
        lo, hi = max(int(wi[wg]), 0), min(int(wi[wg + 1]), len(info))
        for w in range(lo, hi):
            if info[w, WorkInfoCol.PARTIAL_O_LOC] >= 0:
                q0 = max(int(info[w, WorkInfoCol.QO_START]), 0)
                q1 = max(min(int(info[w, WorkInfoCol.QO_END]), total_rows), 0)
                rows[q0:q1] = True
    return rows


def reduced_rows(
    reduce_indptr: torch.Tensor, reduce_final_map: torch.Tensor | None, total_rows: int
) -> tuple[np.ndarray, list[str]]:
    """Rows ``mla_reduce_v1`` writes (``final_lse`` included): groups with >= 2 partials, up to
    the first group that starts at ``reduce_indptr[-1]`` (the persistent kernel's stop; §4.2-4.3).

    Returns the bool mask and the problems found reading the maps (a malformed map is a problem,
    not an exception, so mutants that garble it are reported rather than crash the check).
    """
    rows = np.zeros(total_rows, dtype=bool)
    problems: list[str] = []
    ri = host_ints(reduce_indptr).reshape(-1)
    if reduce_final_map is None:
        problems.append("reduce_final_map is None (the PS prefill reduce needs explicit q ranges)")
        return rows, problems
    if reduce_final_map.dim() != 2 or reduce_final_map.size(-1) != FINAL_MAP_COLS:
        problems.append(
            f"reduce_final_map has shape {tuple(reduce_final_map.shape)}, not [groups, 2]"
        )
        return rows, problems
    fm = host_ints(reduce_final_map)
    if len(ri) < 1:
        return rows, problems
    last = ri[-1]
    for g in range(min(len(ri) - 1, len(fm))):
        if ri[g] == last:
            break
        if ri[g + 1] - ri[g] < 2:
            continue
        q0, q1 = int(fm[g, 0]), int(fm[g, 1])
        if not 0 <= q0 < q1 <= total_rows:
            problems.append(f"reduce group {g} has q range [{q0}, {q1}) outside [0, {total_rows})")
            continue
        rows[q0:q1] = True
    return rows, problems


def match_heads(kernel_t: torch.Tensor, real_t: torch.Tensor) -> list[int | None]:
    """For each head column of what the kernel was handed, the real head it is a byte-exact copy
    of (None: none). Derived from the data, not from vLLM's padding rule."""

    def head_major_bytes(t: torch.Tensor) -> torch.Tensor:
        t = t.detach()
        t = t.view(torch.uint8) if t.element_size() == 1 and t.is_contiguous() else t
        return t.transpose(0, 1).contiguous()  # [H, T, D]: one head is one contiguous block

    if (
        kernel_t.shape[0] != real_t.shape[0]
        or kernel_t.shape[2:] != real_t.shape[2:]
        or kernel_t.dtype != real_t.dtype
    ):
        return [None] * kernel_t.size(1)
    if kernel_t.shape == real_t.shape and torch.equal(
        kernel_t.view(torch.uint8) if kernel_t.element_size() == 1 else kernel_t,
        real_t.view(torch.uint8) if real_t.element_size() == 1 else real_t,
    ):
        return list(range(real_t.size(1)))
    kb, rb = head_major_bytes(kernel_t), head_major_bytes(real_t)
    probe = slice(0, min(rb.size(1), 64))
    prints: dict[bytes, list[int]] = {}
    for h in range(rb.size(0)):
        prints.setdefault(rb[h, probe].cpu().numpy().tobytes(), []).append(h)
    mapping: list[int | None] = []
    for c in range(kb.size(0)):
        found = None
        for h in prints.get(kb[c, probe].cpu().numpy().tobytes(), []):
            if torch.equal(kb[c], rb[h]):
                found = h
                break
        mapping.append(found)
    return mapping
