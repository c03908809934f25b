#!/usr/bin/env python3
"""How long ``pytest contracts/`` takes, next to the bare import of vLLM's rocm_aiter_mla.

    python tools/bench_contracts.py [--python PY] [-n 3] [--plain-only]

Runs, in fresh processes of the target interpreter (default: .venv/bin/python, else this one):
the bare import of ``vllm.v1.attention.backends.mla.rocm_aiter_mla`` (median of N), then the
plain ``pytest contracts/`` (what a developer runs after every refactor: the contracts on the
vLLM under test, fast Hypothesis profile) once per folder and once whole, then
``pytest contracts/ --selfcheck --contracts-profile ci`` (what CI runs: the self-proofs on the
pinned release too), reporting wall time and child CPU time. Issue #10's goal is the plain
``pytest contracts/`` <= 2x the bare import, in one run of this tool; this prints the ratio
(wall, and CPU: on a shared machine the CPU ratio is the steadier of the two). ``--plain-only``
times just the bare imports and the plain run.
A benchmark, never a test: no number here is asserted anywhere.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MODULE = "vllm.v1.attention.backends.mla.rocm_aiter_mla"
PARTS = (
    "contracts/analysis",
    "contracts/analyzer",
    "contracts/aiter_ps",
    "contracts/test_ps_table.py",
    "contracts/vllm_path",
)


def timed(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float, int]:
    """(wall s, child CPU s, exit status) of one subprocess."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.returncode


def machine() -> str:
    model = platform.processor() or platform.machine()
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_py = REPO / ".venv" / "bin" / "python"
    parser.add_argument(
        "--python", default=str(default_py if default_py.exists() else sys.executable)
    )
    parser.add_argument("-n", type=int, default=3, help="import samples (median)")
    parser.add_argument(
        "--plain-only",
        action="store_true",
        help="only the bare imports and plain `pytest contracts/`",
    )
    args = parser.parse_args()
    if args.n < 1:
        print("bench_contracts: error: -n must be >= 1", file=sys.stderr)
        return 2
    py = args.python
    print(f"[bench] python {py}", file=sys.stderr)
    imports = []
    for i in range(args.n):
        imports.append(timed([py, "-c", f"import {MODULE}"]))
        print(f"[bench] import {i + 1}/{args.n}: {imports[-1][0]:.1f} s", file=sys.stderr)
    if any(status for *_, status in imports):
        print(f"bench_contracts: error: {py} cannot import {MODULE}", file=sys.stderr)
        return 2
    import_wall = statistics.median(w for w, _, _ in imports)
    import_cpu = statistics.median(c for _, c, _ in imports)
    rows = []
    load_before = os.getloadavg()[0]
    runs = [("contracts", ["contracts"])]
    if not args.plain_only:
        runs = [(part, [part]) for part in PARTS] + runs
        runs.append(("contracts --selfcheck --contracts-profile ci", ["contracts", "--selfcheck"]))
    for label, args_ in runs:
        cmd = [py, "-m", "pytest", *args_, "-q", "-p", "no:cacheprovider"]
        env = dict(
            os.environ, VLLM_GUARD_CONTRACTS_PROFILE="ci" if "--selfcheck" in args_ else "fast"
        )
        wall, cpu, status = timed(cmd, env)
        print(f"[bench] pytest {label}: {wall:.1f} s (exit {status})", file=sys.stderr)
        rows.append((label, wall, cpu, status))
    load = os.getloadavg()[0]
    plain, plain_cpu = next((wall, cpu) for label, wall, cpu, _ in rows if label == "contracts")
    date = datetime.date.today().isoformat()
    print(
        f"\n{date}, {machine()}, 1-min load {load_before:.1f} before / {load:.1f} after; "
        f"bare import of {MODULE}: "
        f"{import_wall:.1f} s wall / {import_cpu:.1f} s CPU (median of {args.n})\n"
    )
    print("| pytest target | wall s | CPU s | exit | wall / bare import | CPU / bare import |")
    print("|---|---|---|---|---|---|")
    for part, wall, cpu, status in rows:
        print(
            f"| `{part}` | {wall:.1f} | {cpu:.1f} | {status} | {wall / import_wall:.2f}x "
            f"| {cpu / import_cpu:.2f}x |"
        )
    verdict = "met" if plain <= 2.0 * import_wall else "NOT met"
    print(
        f"\nplain `pytest contracts/`: {plain / import_wall:.2f}x the bare import's wall "
        f"({plain_cpu / import_cpu:.2f}x its CPU); goal <= 2x {verdict}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
