"""Aggregate error statistics that see systematic errors below the element-wise noise floor.

Why: an element-wise bound has to admit the worst *single* element a correct kernel can produce.
With an fp8 probability matrix that is ~0.05 (a row with two visible keys, |v| ~ 4), so a uniform
scale error of a few percent -- a softmax scale 2% off, a v_scale mixed up -- hides under it
(known-regressions B3, R15: cosine and loose max-norm gates cannot see scale errors). Summed over
the ~10^5-10^7 elements of a batch, though, such an error does not average out while rounding
noise does:

- ``rel_fro = ||out - ref||_F / ||ref||_F``: the overall size of the error. Rounding gives a
  nearly constant floor (bf16: ~1.6e-3; an fp8 P: ~1.8e-2); a 2% scale error adds ~1-2e-2.
- ``slope - 1`` with ``slope = <out, ref> / <ref, ref>`` (least squares of ``out`` on ``ref``
  through the origin): the component of the error *along* the reference. Rounding is nearly
  unbiased, so it stays ~1e-5 (bf16) / ~3e-4 (fp8 P); ``softmax_scale * (1 + e)`` moves it by
  ~0.5 e, ``v * 0.5`` by -0.5.
- ``bias = mean(out - ref) / rms(ref)``: an offset that does not scale with the signal.

Bounds are not guessed here: ``tools/calibrate_tolerance.py`` measures each statistic of the
low-precision model (:mod:`factories.accuracy.error_model`) against the float64 golden over its
sweep and writes ``margin * max`` to the tolerance file (:class:`StatBounds`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import attrs
import torch


@attrs.frozen
class ErrorStats:
    """The three statistics of one output against its reference, over ``elements`` elements."""

    rel_fro: float
    slope_dev: float  # slope - 1
    bias: float
    elements: int

    def as_dict(self) -> dict[str, float]:
        return {"rel_fro": self.rel_fro, "slope_dev": self.slope_dev, "bias": self.bias}


def error_stats(
    out: torch.Tensor, ref: torch.Tensor, mask: torch.Tensor | None = None
) -> ErrorStats:
    """Statistics of ``out`` against ``ref`` (same shape; float64 arithmetic). ``mask`` selects
    leading-dim rows (e.g. ``[T]``); default all. Non-finite values in ``out`` make every
    statistic ``inf`` (a NaN row is a failure, never a silently skipped element)."""
    if out.shape != ref.shape:
        raise ValueError(f"shape mismatch: out {tuple(out.shape)} vs ref {tuple(ref.shape)}")
    o = out.to(torch.float64)
    r = ref.to(torch.float64)
    if mask is not None:
        mask = mask.to(o.device)
        o, r = o[mask], r[mask]
    n = o.numel()
    if n == 0:
        return ErrorStats(0.0, 0.0, 0.0, 0)
    if not bool(torch.isfinite(o).all()):
        return ErrorStats(math.inf, math.inf, math.inf, n)
    d = o - r
    rr = float((r * r).sum())
    if rr == 0.0:  # all-zero reference: any error is infinitely large relative to it
        err = float(d.abs().max())
        return ErrorStats(
            0.0 if err == 0 else math.inf,
            0.0 if err == 0 else math.inf,
            0.0 if err == 0 else math.inf,
            n,
        )
    rel_fro = float(d.norm()) / math.sqrt(rr)
    slope_dev = float((d * r).sum()) / rr
    bias = float(d.mean()) / math.sqrt(rr / n)
    return ErrorStats(rel_fro, slope_dev, bias, n)


@attrs.frozen
class StatBounds:
    """``rel_fro <= rel_fro_max``, ``|slope - 1| <= slope_dev_max``, ``|bias| <= bias_max``."""

    rel_fro_max: float
    slope_dev_max: float
    bias_max: float

    @classmethod
    def from_mapping(cls, data: Mapping[str, float]) -> StatBounds:
        return cls(
            float(data["rel_fro_max"]), float(data["slope_dev_max"]), float(data["bias_max"])
        )

    def violations(self, stats: ErrorStats) -> list[str]:
        """One line per statistic over its bound (empty: within every bound)."""
        out = []
        if not stats.rel_fro <= self.rel_fro_max:
            out.append(f"relative Frobenius error {stats.rel_fro:.3e} > {self.rel_fro_max:.3e}")
        if not abs(stats.slope_dev) <= self.slope_dev_max:
            out.append(
                f"slope of out on ref is 1{stats.slope_dev:+.3e}, "
                f"|slope-1| > {self.slope_dev_max:.3e} "
                "(a systematic scale error)"
            )
        if not abs(stats.bias) <= self.bias_max:
            out.append(f"mean error {stats.bias:+.3e} rms(ref), |bias| > {self.bias_max:.3e}")
        return out

    def worst_ratio(self, stats: ErrorStats) -> float:
        """Largest statistic / bound (> 1 fails)."""
        pairs = (
            (stats.rel_fro, self.rel_fro_max),
            (abs(stats.slope_dev), self.slope_dev_max),
            (abs(stats.bias), self.bias_max),
        )
        return max((v / b if b > 0 else (math.inf if v > 0 else 0.0)) for v, b in pairs)


__all__ = ["ErrorStats", "StatBounds", "error_stats"]
