"""One output (and its ``final_lse``) against the float64 reference: :func:`check_outputs`.

Why apart from the run: the vLLM-level check, the kernel-level GPU runner, the calibration and
the kernel mutants all judge tensors the same way, and none of them needs vLLM for it. Buffers
are NaN-poisoned before a run, so a NaN row is an unwritten row and fails.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import attrs
import numpy as np
import torch

from factories.accuracy.error_stats import ErrorStats, error_stats
from factories.accuracy.tolerance import Tolerance


@attrs.frozen
class Comparison:
    """One tensor against its reference over the elements checked."""

    name: str
    checked: int
    max_abs_err: float
    worst_ratio: float  # max |err| / allowed over the checked elements; > 1 fails
    worst_at: tuple[int, ...]  # (row, head) of the worst element
    failing: int  # elements over the bound (non-finite ones included)

    @property
    def ok(self) -> bool:
        return self.failing == 0


def compare(
    name: str,
    got: torch.Tensor,
    ref: torch.Tensor,
    allowed: torch.Tensor,
    mask: torch.Tensor | None = None,
) -> Comparison:
    """``got`` vs ``ref`` (same shape, leading dims [rows, heads, ...]) where ``mask`` [rows] holds.
    A non-finite difference (NaN written or left unwritten, inf) counts as failing, except
    ``-inf == -inf`` (an LSE of a row that sees nothing), which is an exact match."""
    err = got.to(torch.float64).sub_(ref).abs_()
    if not bool(torch.isfinite(ref).all()):
        same_inf = torch.isinf(ref) & (got.to(torch.float64) == ref)
        err.masked_fill_(same_inf, 0.0)
    err.nan_to_num_(nan=math.inf)
    if mask is not None:
        mask = mask.to(err.device)
        err[~mask] = 0.0
        checked = int(mask.sum()) * (err.numel() // max(err.size(0), 1))
    else:
        checked = err.numel()
    if checked == 0:
        return Comparison(name, 0, 0.0, 0.0, (), 0)
    failing = int((~(err <= allowed)).sum())
    max_abs = float(err.max())
    ratio = err.div_(allowed)
    flat = int(torch.argmax(ratio))
    at = tuple(int(i) for i in np.unravel_index(flat, tuple(ratio.shape)))[:2]
    return Comparison(name, checked, max_abs, float(ratio.reshape(-1)[flat]), at, failing)


@attrs.frozen
class AccuracyReport:
    """The result of one check; ``ok`` iff no problem. ``problems`` are one line each."""

    tolerance: Tolerance
    out: Comparison
    lse: Comparison | None
    unwritten_rows: int
    lse_rows: int
    problems: tuple[str, ...]
    #: The error statistic of out vs ref, when the bound has statistic bounds.
    stats: ErrorStats | None = None
    #: Per row, the largest |final_lse - ref| over heads on merged rows (NaN elsewhere): what a
    #: calibration fits a key-count-dependent LSE bound to.
    lse_row_err: np.ndarray | None = attrs.field(default=None, eq=False, repr=False)

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        head = (
            f"out: max|err| {self.out.max_abs_err:.3e} "
            f"(worst {self.out.worst_ratio:.2f}x the bound "
            f"at row/head {self.out.worst_at}) over {self.out.checked} elements"
        )
        if self.lse is not None:
            head += (
                f"; final_lse: max|err| {self.lse.max_abs_err:.3e} ({self.lse.worst_ratio:.2f}x) "
                f"on {self.lse_rows} reduced rows"
            )
        if self.stats is not None:
            head += (
                f"; rel. Frobenius {self.stats.rel_fro:.3e}, slope-1 {self.stats.slope_dev:+.3e}, "
                f"bias {self.stats.bias:+.3e}"
            )
        lines = [head, f"bound: {self.tolerance.describe()}"]
        lines += [f"PROBLEM: {p}" for p in self.problems]
        return "\n".join(lines)


def check_outputs(
    out: torch.Tensor,
    ref_out: torch.Tensor,
    tolerance: Tolerance,
    *,
    final_lse: torch.Tensor | None = None,
    ref_lse: torch.Tensor | None = None,
    lse_rows: np.ndarray | None = None,
    lse_keys: np.ndarray | None = None,
    extra_problems: Sequence[str] = (),
) -> AccuracyReport:
    """Every row of ``out`` [T, H, Dv] against ``ref_out``; ``final_lse`` [T, H] (columns already
    aligned with ``ref_lse``) on ``lse_rows`` only, and NaN (untouched) everywhere else.
    ``lse_keys [T]``: each row's key count, for a bound that grows with it (``lse_per_key``).

    Buffers must have been poisoned with NaN before the run: a NaN row is an unwritten row.
    """
    problems = list(extra_problems)
    total = out.size(0)
    nan_rows = torch.isnan(out.reshape(total, -1)).any(dim=1)
    unwritten = int(nan_rows.sum())
    if unwritten:
        first = int(torch.nonzero(nan_rows)[0])
        problems.append(
            f"{unwritten} of {total} output rows were never written (first: row {first})"
        )
    out_cmp = compare("out", out, ref_out, tolerance.out_allowed(ref_out))
    if out_cmp.failing:
        problems.append(
            f"{out_cmp.failing} output elements exceed the bound; worst {out_cmp.worst_ratio:.3g}x "
            f"at (row, head) {out_cmp.worst_at}, max|err| {out_cmp.max_abs_err:.3e}"
        )
    stats = None
    if tolerance.stats is not None:
        # Systematic errors below the element-wise floor (a scale error): docs/TOLERANCES.md.
        stats = error_stats(out, ref_out)
        problems += tolerance.stats.violations(stats)
    lse_cmp = None
    n_lse = 0
    row_err = None
    if final_lse is not None and ref_lse is not None and lse_rows is not None:
        mask = torch.from_numpy(lse_rows)
        n_lse = int(mask.sum())
        lse_cmp = compare(
            "final_lse",
            final_lse,
            ref_lse,
            tolerance.lse_allowed(
                ref_lse, None if lse_keys is None else torch.from_numpy(np.asarray(lse_keys))
            ),
            mask.to(final_lse.device),
        )
        if lse_cmp.failing:
            problems.append(
                f"{lse_cmp.failing} final_lse elements on reduced rows exceed the bound; worst "
                f"{lse_cmp.worst_ratio:.3g}x at (row, head) {lse_cmp.worst_at}"
            )
        err = (final_lse.double() - ref_lse.to(final_lse.device).double()).abs()
        row_err = err.nan_to_num(nan=math.inf).amax(dim=-1).cpu().numpy()
        row_err[~lse_rows] = math.nan
        outside = ~mask.to(final_lse.device)
        written_outside = ~torch.isnan(final_lse[outside])
        if bool(written_outside.any()):
            problems.append(
                f"final_lse was written on {int(written_outside.any(dim=-1).sum())} rows "
                "outside the "
                "reduce groups (the reduce writes only merged rows, contract §4.2)"
            )
    return AccuracyReport(
        tolerance, out_cmp, lse_cmp, unwritten, n_lse, tuple(problems), stats, row_err
    )
