#!/usr/bin/env python3
"""Benchmark the stub audit: what pre-commit and CI pay for it.

Two numbers, measured the way each is used:

* **tree** -- ``tools/audit_stubs.py`` over a whole vLLM ``tests/`` folder, cold: a fresh process
  per run (imports, parsing, analysis), median of ``--runs`` (3).  Wall time and the child's CPU
  time (user + sys), so a busy machine shows as wall >> CPU instead of as a slow analyzer.
* **specs** -- this project's own stub specs (the no-FILE mode), warm: in-process, after one
  warm-up, median of ``--warm-runs`` (20) of
  ``StubAuditor(root).audit_stubs(stubs_from_specs(...))`` with a NEW auditor per run, so no
  parse or analysis cache carries over (the OS file cache does).  The goal is <= 0.3 s.

Prints a markdown table (header and one row: date, machine, the numbers) for
``docs/BENCHMARKS.md``.  Never imports torch or vllm.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from factories.analysis.audit import StubAuditor  # noqa: E402
from factories.errors import ReleaseNotFetchedError  # noqa: E402
from factories.stubs.specs import ALL_SPECS, stubs_from_specs  # noqa: E402
from factories.testing.releases import release_source  # noqa: E402

AUDIT_TOOL = REPO / "tools" / "audit_stubs.py"
GOAL_WARM_S = 0.3


def machine() -> tuple[str, int]:
    """CPU model (``lscpu``'s "Model name") and ``nproc``."""
    model = platform.processor() or platform.machine()
    try:
        out = subprocess.run(
            ["lscpu"], capture_output=True, text=True, timeout=10, env={**os.environ, "LC_ALL": "C"}
        ).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
                break
    except (OSError, subprocess.SubprocessError):
        pass
    if hasattr(os, "sched_getaffinity"):
        return model, len(os.sched_getaffinity(0))
    return model, os.cpu_count() or 1


def tree_run(vllm_src: Path, tests: Path) -> tuple[float, float, str]:
    """One cold CLI run: (wall s, child CPU s, the CLI's summary line)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, str(AUDIT_TOOL), "--vllm-src", str(vllm_src), "--format", "json"]
        + [str(tests)],
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):  # 1 = findings, which is the normal case here
        raise SystemExit(
            f"bench_audit: audit failed (exit {proc.returncode}): {proc.stderr.strip()}"
        )
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    summary = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""
    return wall, cpu, summary


def specs_run(vllm_src: Path) -> tuple[float, float]:
    """One warm in-process audit of the project's specs with a fresh auditor."""
    wall0, cpu0 = time.perf_counter(), time.process_time()
    auditor = StubAuditor(vllm_src)
    auditor.audit_stubs(stubs_from_specs(ALL_SPECS), n_files=0, n_with_stubs=0)
    return time.perf_counter() - wall0, time.process_time() - cpu0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_audit", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--vllm-src",
        type=Path,
        help="folder holding vllm/ and tests/ "
        '(default: factories.testing.releases.release_source("0.34.0"))',
    )
    parser.add_argument(
        "--tests", type=Path, help="tests folder to audit (default: VLLM_SRC/tests)"
    )
    parser.add_argument("--runs", type=int, default=3, help="cold whole-tree runs (median)")
    parser.add_argument("--warm-runs", type=int, default=20, help="warm spec audits (median)")
    parser.add_argument("--no-header", action="store_true", help="print only the table row")
    args = parser.parse_args(argv)

    try:
        vllm_src = args.vllm_src or release_source("0.34.0")
    except ReleaseNotFetchedError as exc:
        parser.error(str(exc))
    tests = args.tests or vllm_src / "tests"
    if not (vllm_src / "vllm" / "__init__.py").is_file() or not tests.is_dir():
        parser.error(f"{vllm_src} must hold vllm/ and {tests} must be a folder")

    tree = [tree_run(vllm_src, tests) for _ in range(args.runs)]
    specs_run(vllm_src)  # warm-up: imports, OS file cache
    warm = [specs_run(vllm_src) for _ in range(args.warm_runs)]

    tree_wall = statistics.median(t[0] for t in tree)
    tree_cpu = statistics.median(t[1] for t in tree)
    warm_wall = statistics.median(w[0] for w in warm)
    warm_cpu = statistics.median(w[1] for w in warm)
    model, nproc = machine()
    version = vllm_src.resolve().name.removeprefix("vllm-")
    findings = tree[-1][2].split("findings: ", 1)[-1] if "findings: " in tree[-1][2] else "?"
    verdict = "meets" if warm_wall <= GOAL_WARM_S else "misses"

    if not args.no_header:
        print(
            "| date | machine | nproc | vLLM | tree audit wall / CPU (cold, median of "
            f"{args.runs}) | specs audit wall / CPU (warm, median of {args.warm_runs}) "
            "| tree findings |"
        )
        print("|---|---|---|---|---|---|---|")
    print(
        f"| {_dt.date.today().isoformat()} | {model} | {nproc} | {version} "
        f"| {tree_wall:.2f} s / {tree_cpu:.2f} s "
        f"| {warm_wall * 1000:.0f} ms / {warm_cpu * 1000:.0f} ms "
        f"({verdict} the {GOAL_WARM_S} s goal) "
        f"| {findings} |"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
