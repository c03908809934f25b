#!/usr/bin/env python3
"""Identify the arithmetic of mla_prefill_ps_asm_fwd + mla_reduce_v1 from crafted probes.

    python tools/fingerprint_kernel.py --list-variants
    python tools/fingerprint_kernel.py --backend aiter                 # on gfx950: the real kernel
    python tools/fingerprint_kernel.py --backend emulated --variant p8-row-max [--seed 3]

Prints the evidence table (probe, observed, seed noise, margin, expected per variant) and as the
last line ``identified: NAME``, or ``identified: none`` with the nearest variants. The probes, the
noise and the match rule live in ``factories.accuracy.fingerprint``; this script parses arguments.

Exit codes: 0 identified; 1 nothing (or more than one variant) matches; 2 bad input; 3 the
requested backend cannot run here (the line says why).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from factories.errors import AccuracyInputError  # noqa: E402


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2 (not argparse's usage block)
        raise AccuracyInputError(f"{message} (see --help)")


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    from factories.accuracy.fingerprint import FINGERPRINT_VARIANTS, NOT_FINGERPRINTED

    p = _Parser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--list-variants", action="store_true", help="print the variants, one a line")
    p.add_argument("--backend", help="aiter (real kernels, ROCm gfx950 only) or emulated")
    p.add_argument(
        "--variant",
        help="the emulated backend's arithmetic (default fp32-p, the shipped emulation)",
    )
    p.add_argument("--seed", type=int, default=0, help="observation seed (default 0)")
    p.add_argument(
        "--device",
        default="cpu",
        help="where the emulated backend runs (cpu, cuda); the candidates run on the CPU",
    )
    args = p.parse_args(argv)
    if args.list_variants:
        if args.backend or args.variant:
            raise AccuracyInputError("--list-variants takes no --backend or --variant")
        return args
    if args.backend not in ("aiter", "emulated"):
        raise AccuracyInputError(f"--backend must be aiter or emulated, got {args.backend!r}")
    if args.variant is not None:
        if args.backend != "emulated":
            raise AccuracyInputError(
                "--variant chooses the emulation's arithmetic: use --backend emulated"
            )
        if args.variant in NOT_FINGERPRINTED:
            raise AccuracyInputError(
                f"{args.variant} is not told apart from {NOT_FINGERPRINTED[args.variant]} "
                "(an fp32-level difference); pick one of --list-variants"
            )
        if args.variant not in FINGERPRINT_VARIANTS:
            raise AccuracyInputError(f"unknown --variant {args.variant!r}; see --list-variants")
    if args.device not in ("cpu", "cuda"):
        raise AccuracyInputError(f"--device must be cpu or cuda, got {args.device!r}")
    if args.device != "cpu" and args.backend != "emulated":
        raise AccuracyInputError("--device places the emulation: use it with --backend emulated")
    if args.seed < 0:
        raise AccuracyInputError(f"--seed must be >= 0, got {args.seed}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parse_args(argv)
    except AccuracyInputError as exc:
        print(f"fingerprint_kernel: {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    from factories.accuracy import fingerprint as fp

    if args.list_variants:
        print("\n".join(fp.FINGERPRINT_VARIANTS))
        return 0
    if args.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            print("fingerprint_kernel: --device cuda: no CUDA device here", file=sys.stderr)
            return 3
    if args.backend == "aiter":
        from factories.aiter.backend import real_aiter_unusable_reason

        reason = real_aiter_unusable_reason()
        if reason is not None:
            print(f"fingerprint_kernel: --backend aiter cannot run here: {reason}", file=sys.stderr)
            return 3
    ev = fp.fingerprint(
        args.backend,
        variant=args.variant or "fp32-p",
        seed=args.seed,
        emulate_on=args.device,
        progress=lambda m: print(m, file=sys.stderr, flush=True),
    )
    print("\n".join(fp.report(ev)))
    return 0 if ev.identified() else 1


if __name__ == "__main__":
    sys.exit(main())
