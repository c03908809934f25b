#!/usr/bin/env python3
"""Derive the FP8 MLA prefill tolerances from an error model, prove they bite, and soak them.

    python tools/calibrate_tolerance.py                 # sweep, derive, write the file + PNG
    python tools/calibrate_tolerance.py --quick         # a small sweep (~1 min), same outputs
    python tools/calibrate_tolerance.py --check         # verify the file's digest, print bounds
    python tools/calibrate_tolerance.py --kill-matrix   # every kernel mutant x every check (md)
    python tools/calibrate_tolerance.py --soak 20       # 20 seeds of the CPU accuracy matrix
    python tools/calibrate_tolerance.py --backend aiter # on gfx950: audit the real kernels

The file is factories/accuracy/tolerances.json, the PNG docs/tolerances.png (``--file``,
``--png``). The derivation, the sweep and every command live in
``factories.accuracy.calibration``; this script parses arguments and picks the default paths.

Exit codes: 0 ok; 1 an audit, a soak case or a predicted kill failed; 2 bad input; 3 the requested
backend cannot run here (the line says why).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from factories.accuracy import calibration  # noqa: E402
from factories.accuracy.tolerance import TOLERANCE_FILE  # noqa: E402
from factories.errors import AccuracyInputError, ToleranceFileError  # noqa: E402

DEFAULT_PNG = REPO / "docs" / "tolerances.png"
COMMANDS = ("check", "kill_matrix", "soak", "replot", "gpu_model_check")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    cal = calibration
    known = ", ".join(cal.MATRIX)
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help=f"small sweep: {len(cal.QUICK_CASES)} cases x {cal.QUICK_SEEDS} seeds",
    )
    p.add_argument(
        "--cases",
        nargs="+",
        metavar="ID",
        help=f"case ids (default: all but the 16k case); known: {known}",
    )
    p.add_argument(
        "--seeds",
        type=int,
        help=f"seeds per case (default {cal.DEFAULT_SEEDS}, --quick {cal.QUICK_SEEDS})",
    )
    p.add_argument("--seed0", type=int, default=0, help="first seed (default 0)")
    p.add_argument(
        "--backend",
        default="emulated",
        help="emulated (default) or aiter (real kernels, gfx950 only)",
    )
    p.add_argument(
        "--variant",
        help="gfx950 arithmetic the bounds are derived for: a name of "
        "tools/fingerprint_kernel.py --list-variants, or 'envelope' (every arithmetic AITER's "
        "sources allow). Default: the fingerprint of the real kernel with --backend aiter, "
        "otherwise envelope",
    )
    p.add_argument("--file", help="tolerance file (default factories/accuracy/tolerances.json)")
    p.add_argument("--png", help="plot path (default docs/tolerances.png)")
    p.add_argument("--dry-run", action="store_true", help="sweep and print, write nothing")
    p.add_argument(
        "--check", action="store_true", help="verify the file's digest and print its bounds"
    )
    p.add_argument("--replot", action="store_true", help="redraw the PNG from the file (no sweep)")
    p.add_argument(
        "--kill-matrix", action="store_true", help="run every kernel mutant against every check"
    )
    p.add_argument(
        "--soak",
        type=int,
        metavar="N",
        help="N consecutive seeds of the CPU accuracy matrix under the file's bounds",
    )
    p.add_argument(
        "--gpu-model-check",
        action="store_true",
        help="the models at the suite's GPU-sized cases (needs CUDA/ROCm)",
    )
    p.add_argument("--soak-out", help="write the soak / GPU check summary JSON here")
    p.add_argument(
        "--soak-base",
        default="emulated",
        choices=("emulated", "gfx950-p8"),
        help="kernels the soak runs: the emulation (judged with the emulated bounds, default) or "
        "the emulation with the modelled gfx950 fp8-P arithmetic (judged with the gfx950 bounds)",
    )
    args = p.parse_args(argv)
    if args.backend not in ("emulated", "aiter"):
        raise AccuracyInputError(f"--backend must be emulated or aiter, got {args.backend!r}")
    if args.variant is not None and args.variant != cal.ENVELOPE:
        from factories.aiter.emulation import ARITHMETIC_VARIANTS

        if args.variant not in ARITHMETIC_VARIANTS:
            raise AccuracyInputError(
                f"unknown --variant {args.variant!r}; give 'envelope' or one of "
                f"{', '.join(ARITHMETIC_VARIANTS)}"
            )
    if args.cases:
        unknown = [c for c in args.cases if c not in cal.MATRIX]
        if unknown:
            raise AccuracyInputError(f"unknown case id(s) {', '.join(unknown)}; known: {known}")
    for name in ("seeds", "soak"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise AccuracyInputError(f"--{name.replace('_', '-')} must be >= 1, got {value}")
    if args.seed0 < 0:
        raise AccuracyInputError(f"--seed0 must be >= 0, got {args.seed0}")
    if sum(bool(getattr(args, c)) for c in COMMANDS) > 1:
        raise AccuracyInputError(
            "--check, --replot, --kill-matrix, --soak and --gpu-model-check are separate "
            "commands; give one"
        )
    if args.png and not args.png.endswith(".png"):
        raise AccuracyInputError(f"--png must name a .png file, got {args.png!r}")
    return args


def unusable_reason(args: argparse.Namespace) -> str | None:
    """Why the requested backend or device cannot run here (None: it can)."""
    if args.backend == "aiter":
        from factories.aiter.backend import real_aiter_unusable_reason

        reason = real_aiter_unusable_reason()
        if reason is not None:
            return f"--backend aiter cannot run here: {reason}"
    if args.gpu_model_check:
        import torch

        if not torch.cuda.is_available():
            return (
                "--gpu-model-check cannot run here: no CUDA/ROCm device "
                "(torch.cuda.is_available() is False)"
            )
    return None


def run(args: argparse.Namespace, argv: Sequence[str]) -> int:
    cal = calibration
    file = Path(args.file) if args.file else TOLERANCE_FILE
    png = Path(args.png) if args.png else DEFAULT_PNG
    soak_out = Path(args.soak_out) if args.soak_out else None
    if args.gpu_model_check:
        return cal.gpu_model_check(file, seed0=args.seed0, out=soak_out)
    if args.check:
        return cal.check(file)
    if args.replot:
        return cal.replot(file, png)
    if args.kill_matrix:
        return cal.kill_matrix(file, quick=args.quick)
    if args.soak:
        return cal.soak(
            file,
            runs=args.soak,
            seed0=args.seed0,
            base=args.soak_base,
            case_ids=args.cases,
            out=soak_out,
        )
    variant = args.variant
    if variant is None and args.backend == "aiter":
        from factories.accuracy.fingerprint import fingerprint, report

        ev = fingerprint("aiter", progress=cal.log)
        for line in report(ev):
            cal.log(line)
        variant = ev.identified()
        if variant is None:
            cal.log(
                "[calibrate] the fingerprint identified no variant (see above): pass --variant "
                "NAME or --variant envelope to derive the bounds anyway"
            )
            return 1
    variant = variant or cal.ENVELOPE
    case_ids = args.cases or (cal.QUICK_CASES if args.quick else cal.DEFAULT_CASES)
    per_case = args.seeds or (cal.QUICK_SEEDS if args.quick else cal.DEFAULT_SEEDS)
    return cal.calibrate(
        case_ids,
        range(args.seed0, args.seed0 + per_case),
        args.backend,
        file=file,
        png=png,
        dry_run=args.dry_run,
        command=" ".join([cal.TOOL_NAME, *argv]),
        variant=variant,
    )


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parse_args(argv)
    except AccuracyInputError as exc:
        print(f"calibrate_tolerance: {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # argparse: usage error (2) or --help (0)
        return int(exc.code or 0)
    reason = unusable_reason(args)
    if reason is not None:
        print(f"calibrate_tolerance: {reason}", file=sys.stderr)
        return 3
    try:
        return run(args, argv)
    except ToleranceFileError as exc:
        print(f"calibrate_tolerance: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
