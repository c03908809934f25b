#!/usr/bin/env python3
"""Benchmark the source-change trigger: what a commit touching one vLLM module pays.

``tools/audit_stubs.py --vllm-src ROOT ROOT/<module>`` in a fresh process per run (imports, the
text pre-filter, parsing and analysis of the dependent stubs: no cache carried over but the OS
file cache), median of ``--runs`` (5) after one warm-up run, wall time and the child's CPU time.
For comparison the same for the whole ``tests/`` tree (median of ``--tree-runs``, 3).  Goal: a
change to ``vllm/v1/attention/backends/mla/rocm_aiter_mla.py`` audits its dependents in <= 2 s.

``--since``: the same trigger as the pre-commit hook runs it, ``--since HEAD`` in a git
checkout of the release (built once in a temporary folder, not timed) whose module carries an
uncommitted edit, so that the base version of the module is read from git and the dependent
stubs are audited twice (the base, then the change).

Prints a markdown table row for ``docs/BENCHMARKS.md``.  Never imports torch or vllm.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from factories.errors import ReleaseNotFetchedError  # noqa: E402
from factories.testing.releases import release_source  # noqa: E402
from tools.bench_audit import TRIGGER_MODULE, machine  # noqa: E402

AUDIT_TOOL = REPO / "tools" / "audit_stubs.py"
MODULE = TRIGGER_MODULE
GOAL_S = 2.0


def timed(args: list[str]) -> tuple[float, float, str]:
    """(wall s, child CPU s, stderr's last line) of one fresh audit process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, str(AUDIT_TOOL), *args], capture_output=True, text=True, timeout=600
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"audit failed ({proc.returncode}): {proc.stderr.strip()}")
    return wall, cpu, (proc.stderr.strip().splitlines() or [""])[0]


def median_of(args: list[str], runs: int) -> tuple[float, float, str]:
    samples = [timed(args) for _ in range(runs)]
    return (
        statistics.median(s[0] for s in samples),
        statistics.median(s[1] for s in samples),
        samples[-1][2],
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vllm-src", type=Path, help="default: the cached 0.34.0 release")
    parser.add_argument("--module", default=MODULE, help=f"changed file (default {MODULE})")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tree-runs", type=int, default=3)
    parser.add_argument(
        "--since",
        action="store_true",
        help="time the trigger with --since HEAD in a git checkout holding an edit",
    )
    args = parser.parse_args(argv)
    try:
        root = args.vllm_src or release_source("0.34.0")
    except ReleaseNotFetchedError as exc:
        raise SystemExit(str(exc)) from None
    if args.since:
        with tempfile.TemporaryDirectory(prefix="bench-trigger-") as tmp:
            return report(
                args, git_checkout(root, Path(tmp) / "vllm", args.module), ["--since", "HEAD"]
            )
    return report(args, root, [])


def git_checkout(src: Path, repo: Path, module: str) -> Path:
    """A committed copy of ``src``'s vllm/ and tests/ whose ``module`` then gains an
    uncommitted edit (a new undecided read at the end of its first method)."""
    for package in ("vllm", "tests"):
        shutil.copytree(src / package, repo / package)
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@example.com")
    env.update(GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@example.com")
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run(["git", *command], cwd=repo, check=True, env=env, capture_output=True)
    target = repo / module
    target.write_text(target.read_text() + "\n# an edit: the working tree differs from HEAD\n")
    return repo


def report(args: argparse.Namespace, root: Path, extra: list[str]) -> int:
    trigger = ["--vllm-src", str(root), str(root / args.module), "--quiet", *extra]
    timed(trigger)  # warm-up: the OS file cache
    wall, cpu, _ = median_of(trigger, args.runs)
    note = timed(["--vllm-src", str(root), str(root / args.module), *extra])[2]
    tree_wall, tree_cpu, _ = median_of(
        ["--vllm-src", str(root), str(root / "tests"), "--quiet"], args.tree_runs
    )
    model, nproc = machine()
    verdict = "meets" if wall <= GOAL_S else "MISSES"
    mode = f" ({' '.join(extra)})" if extra else ""
    print(
        "| date | machine | nproc | changed module | trigger wall / CPU (median of "
        f"{args.runs}) | whole tests/ wall / CPU (median of {args.tree_runs}) | ratio | "
        "dependents |"
    )
    print("|---|---|---|---|---|---|---|---|")
    print(
        f"| {_dt.date.today()} | {model} | {nproc} | `{args.module}`{mode} | {wall:.2f} s / "
        f"{cpu:.2f} s ({verdict} the {GOAL_S:.0f} s goal) | {tree_wall:.2f} s / "
        f"{tree_cpu:.2f} s | {wall / tree_wall:.2f} | {note.removeprefix('audit-stubs: ')} |"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
