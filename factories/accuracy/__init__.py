"""Accuracy of the FP8 MLA prefill path against a float64 reference, through vLLM's real entry.

What the accuracy suite (``tests/accuracy``), the calibration and the GPU kernel runner
(``tools/run_gpu_kernel_suite.py``) share, one job per module:

- :mod:`~factories.accuracy.tolerance`: :class:`Tolerance` and :data:`TOLERANCES`, read from the
  versioned, digest-checked ``tolerances.json`` beside it; nothing else holds a number.
- :mod:`~factories.accuracy.cases`: the one table of batches measured.
- :mod:`~factories.accuracy.reference`: :func:`causal_reference`, attention in float64.
- :mod:`~factories.accuracy.plans`: which rows the kernel and the reduce were told to write.
- :mod:`~factories.accuracy.compare`: :func:`check_outputs` -> :class:`AccuracyReport`.
- :mod:`~factories.accuracy.run`: :func:`run_fp8_prefill` through vLLM's three methods and
  :func:`check_fp8_prefill` of what it observed.
- :mod:`~factories.accuracy.calibration`: derives the bounds (``tools/calibrate_tolerance.py``).
- :mod:`~factories.accuracy.fingerprint`: crafted probes that name the kernel pair's arithmetic
  among the candidate variants (``tools/fingerprint_kernel.py``).
- :mod:`~factories.accuracy.error_model`: per backend, the arithmetic a correct kernel does and
  the low-precision reference that quantizes where it does (what the calibration bounds).
- :mod:`~factories.accuracy.error_stats`: aggregate error statistics (relative Frobenius error,
  slope) that see a systematic error below the element-wise noise floor.
- :mod:`~factories.accuracy.kill_matrix`: every kernel mutant of
  :mod:`factories.mutation.broken_kernels` through the real entry, judged by each check.
- :mod:`~factories.accuracy.differential`: two kernels on one plan, the first diverging work
  item named (real AITER vs the emulation on gfx950).

The names below are re-exported because the suite, the tools and ``factories.mutation`` import
them from here. Module import touches neither vLLM nor typeguard (the GPU runner runs where
neither exists).
"""

from __future__ import annotations

from factories.accuracy.compare import AccuracyReport, Comparison, check_outputs, compare
from factories.accuracy.plans import match_heads, planned_split_rows, reduced_rows
from factories.accuracy.reference import (
    REFERENCE_BLOCK_ELEMENTS,
    causal_reference,
    reference_attention,
)
from factories.accuracy.run import (
    PLAN_POISON,
    POISONED_OUTPUTS,
    Fp8PrefillRun,
    check_fp8_prefill,
    check_or_raised,
    plan_buffer_attrs,
    poison_,
    recording_kernels,
    run_fp8_prefill,
)
from factories.accuracy.tolerance import (
    EMULATED_TOLERANCE,
    REAL_GFX950_TOLERANCE,
    SEED_ATOL,
    SEED_RTOL,
    TOLERANCES,
    Tolerance,
    tolerance_for,
)
from factories.aiter.layout import V_HEAD_DIM

__all__ = [
    "EMULATED_TOLERANCE",
    "PLAN_POISON",
    "POISONED_OUTPUTS",
    "REAL_GFX950_TOLERANCE",
    "REFERENCE_BLOCK_ELEMENTS",
    "SEED_ATOL",
    "SEED_RTOL",
    "TOLERANCES",
    "V_HEAD_DIM",
    "AccuracyReport",
    "Comparison",
    "Fp8PrefillRun",
    "Tolerance",
    "causal_reference",
    "check_fp8_prefill",
    "check_or_raised",
    "check_outputs",
    "compare",
    "match_heads",
    "plan_buffer_attrs",
    "planned_split_rows",
    "poison_",
    "recording_kernels",
    "reduced_rows",
    "reference_attention",
    "run_fp8_prefill",
    "tolerance_for",
]
