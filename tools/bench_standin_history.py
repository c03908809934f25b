#!/usr/bin/env python3
"""The fields vLLM's tests added to namespace stand-ins between releases
(``factories.evaluation.standin_history``).

For each consecutive pair N -> N+1 of the fetched releases: the ``types.SimpleNamespace`` /
``argparse.Namespace`` stand-ins of release N's tests that N+1 still has (matched by file,
scope, target and ordinal), those new at N+1, those whose scope was rewritten, and the fields
a matched stand-in gained (repairs); plus each release's population of stand-in calls and the
test files holding them.  The ground truth for an audit of namespace stand-ins.  Exit 0 with
the report, 2 with one line on bad input.  Never imports torch or vllm.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path
from typing import NoReturn

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from factories.errors import GuardError  # noqa: E402
from factories.evaluation.history import parse_pair  # noqa: E402
from factories.evaluation.standin_history import (  # noqa: E402
    format_repairs,
    format_table,
    run_standin_history,
)
from factories.testing.releases import RELEASES, cache_dir  # noqa: E402

PROG = "bench_standin_history"


class _Parser(argparse.ArgumentParser):
    """A usage error is one line and exit 2, like every other bad input."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{PROG}: error: {message} (see --help)\n")
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description=__doc__.split("\n\n")[1].replace("\n", " "))
    parser.add_argument(
        "--src-root",
        type=Path,
        default=cache_dir() / "vllm-src",
        help="folder holding one <version>/ folder (with vllm/ and tests/) per release "
        "(default: the tools/fetch_vllm.py cache)",
    )
    parser.add_argument(
        "--releases",
        default=",".join(RELEASES),
        help="comma-separated releases, oldest first (default: %(default)s)",
    )
    parser.add_argument(
        "--pairs",
        action="append",
        metavar="OLD:NEW",
        help="only these pairs (repeatable or comma-separated); default: every consecutive pair",
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the report here")
    parser.add_argument(
        "--list-repairs",
        action="store_true",
        help="print each repaired stand-in (pair, file:line at N+1, scope, target, fields)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    releases = [v.strip() for v in args.releases.split(",") if v.strip()]
    try:
        if len(releases) < 2:
            raise GuardError(f"--releases {args.releases!r}: name at least two releases")
        if args.pairs:
            pairs = [parse_pair(p, releases) for arg in args.pairs for p in arg.split(",") if p]
        else:
            pairs = list(itertools.pairwise(releases))
        progress = (lambda _: None) if args.quiet else (lambda m: print(m, file=sys.stderr))
        report = run_standin_history(args.src_root, releases, pairs, progress)
    except GuardError as exc:
        sys.stderr.write(f"{PROG}: error: {exc}\n")
        return 2
    print(f"Fields vLLM's tests added to namespace stand-ins ({report.seconds:.0f} s)\n")
    print(format_table(report))
    if args.list_repairs:
        print("\nRepaired stand-ins (pair, file:line at N+1, scope, target, added fields):")
        print(format_repairs(report) or "(none)")
    if args.json is not None:
        try:
            args.json.write_text(json.dumps(report.to_json(), indent=2) + "\n")
        except OSError as exc:
            sys.stderr.write(f"{PROG}: error: cannot write {args.json}: {exc.strerror}\n")
            return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
