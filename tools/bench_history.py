#!/usr/bin/env python3
"""Replay vLLM's release history against the stub audit (``factories.evaluation.history``).

For each consecutive pair N -> N+1 of the fetched releases: the attributes vLLM's tests added to
existing ``object.__new__`` stubs (repairs), how many of them the audit's error-level findings
name when release N's tests are audited against release N+1's source (recall), and how many
repaired stubs are still flagged against their own release (false alarms); plus each release's
error count on its own tests; and the same cross audit with release N as the base
(``--base-src``, what the pre-commit hook's ``--since`` does per commit): the repairs its errors
name and its newly-read errors.  A thin CLI so that the logic is tested as a module; it measures
whatever analyzer is on ``sys.path``.  ``--standins``: the same replay's ground truth for
``types.SimpleNamespace`` / ``argparse.Namespace`` stand-ins instead
(``factories.evaluation.standin_history``): the fields matched stand-ins gained, how many of
them ``audit-stubs --standins`` names on release N's tests against N+1's source (by errors, at
any level), the repaired stand-ins still flagged at N+1, N+1's stand-in errors on its own
tests, and each release's population of them.  Exit 0 with the report, 2 with one line on bad input.
Never imports torch or vllm.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import itertools
import json
import sys
from pathlib import Path
from typing import NoReturn

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from factories.errors import GuardError  # noqa: E402
from factories.evaluation import history, standin_history  # noqa: E402
from factories.testing.releases import RELEASES, cache_dir  # noqa: E402

PROG = "bench_history"


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
        "--list-misses",
        action="store_true",
        help="print each repair the audit's errors did not name (file:line, class or "
        "target, attribute; with --standins also why, as far as the findings tell)",
    )
    parser.add_argument(
        "--standins",
        action="store_true",
        help="report the SimpleNamespace / argparse.Namespace stand-in history instead",
    )
    parser.add_argument(
        "--list-repairs",
        action="store_true",
        help="with --standins: print each repaired stand-in (pair, file:line at N+1, scope, "
        "target, fields)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.list_repairs and not args.standins:
        parser.error("--list-repairs lists stand-in repairs: add --standins")
    releases = [v.strip() for v in args.releases.split(",") if v.strip()]
    try:
        if len(releases) < 2:
            raise GuardError(f"--releases {args.releases!r}: name at least two releases")
        if args.pairs:
            pairs = [
                history.parse_pair(p, releases) for arg in args.pairs for p in arg.split(",") if p
            ]
        else:
            pairs = list(itertools.pairwise(releases))
        progress = (lambda _: None) if args.quiet else (lambda m: print(m, file=sys.stderr))
        run = standin_history.run_standin_history if args.standins else history.run_history
        report = run(args.src_root, releases, pairs, progress)
    except GuardError as exc:
        sys.stderr.write(f"{PROG}: error: {exc}\n")
        return 2
    today = _dt.date.today().isoformat()
    if args.standins:
        print(
            f"Fields vLLM's tests added to namespace stand-ins vs the stand-in audit "
            f"({today}, {report.seconds:.0f} s)"
        )
        print()
        print(standin_history.format_table(report))
        if args.list_repairs:
            print("\nRepaired stand-ins (pair, file:line at N+1, scope, target, added fields):")
            print(standin_history.format_repairs(report) or "(none)")
        if args.list_misses:
            print("\nMissed repairs (pair, stand-in at N, scope, target, field: why):")
            print(standin_history.format_misses(report) or "(none)")
    else:
        print(f"vLLM release history vs the stub audit ({today}, {report.seconds:.0f} s)\n")
        print(history.format_table(report))
        if args.list_misses:
            print("\nMissed repairs (pair, stub at N, scope, class, attribute):")
            print(history.format_misses(report) or "(none)")
    if args.json is not None:
        try:
            args.json.write_text(json.dumps(report.to_json(), indent=2) + "\n")
        except OSError as exc:
            sys.stderr.write(f"{PROG}: error: cannot write {args.json}: {exc.strerror}\n")
            return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
