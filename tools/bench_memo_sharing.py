#!/usr/bin/env python3
"""How much of a cold ``--standins`` audit one shared memo could save: an upper bound.

Each test file is analysed in analysis objects of its own (``Analysis.over``: the class index,
the read-set analyzer with all its memos, the class auditor), so that its findings depend on
nothing else (``docs/DESIGN.md``).  This tool times the same audit with one set of those
objects shared by every file of the run (``Analysis.over`` patched to hand out the first one
again), which is everything a cross-file memo or summary cache inside one cold run could reuse.
The shared run's findings may differ (that order dependence is why the audit does not share);
the tool says whether they do, and does not count it as a speed-up of the product.

Both modes run the audit CLI (``--standins --format json --no-cache --jobs 1``) in fresh
processes, interleaved, ``--runs`` times each (default 3).  Printed per mode: the median wall
seconds of the whole run and of the files' analyses (``StubAuditor._compute_file`` summed),
then the shared mode's analyses as a ratio to the per-file mode's, measured in the same run.
Never imports torch or vllm.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from factories.errors import ReleaseNotFetchedError  # noqa: E402
from factories.testing.releases import release_source  # noqa: E402

sys.path.insert(0, str(REPO / "tools"))
from bench_audit import machine  # noqa: E402

# argv: repo, mode ("own" | "shared"), then the audit's arguments.  Prints one JSON line on
# stderr's last line: the run's seconds, the files' analyses' seconds, the output's hash.
_PROBE = """
import contextlib, hashlib, io, json, sys, time
repo, mode, args = sys.argv[1], sys.argv[2], sys.argv[3:]
sys.path.insert(0, repo)
from factories.analysis import audit
spent = [0.0]
compute = audit.StubAuditor._compute_file
def timed(self, *a, **k):
    start = time.perf_counter()
    try:
        return compute(self, *a, **k)
    finally:
        spent[0] += time.perf_counter() - start
audit.StubAuditor._compute_file = timed
if mode == "shared":
    over, made = audit.Analysis.over, {}
    def shared(tree):
        if id(tree) not in made:
            made[id(tree)] = (tree, over(tree))
        return made[id(tree)][1]
    audit.Analysis.over = staticmethod(shared)
from factories.cli import main
out = io.StringIO()
start = time.perf_counter()
with contextlib.redirect_stdout(out):
    status = main(args)
wall = time.perf_counter() - start
digest = hashlib.sha256(out.getvalue().encode()).hexdigest()
print(json.dumps({"status": status, "wall": wall, "files": spent[0], "out": digest}),
      file=sys.stderr)
"""

MODES = ("own", "shared")


def one_run(mode: str, args: list[str]) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, str(REPO), mode, *args],
        capture_output=True,
        text=True,
        timeout=900,
    )
    lines = proc.stderr.strip().splitlines()
    try:
        found = json.loads(lines[-1])
    except (IndexError, ValueError):
        raise SystemExit(
            f"bench_memo_sharing: the {mode} run failed: {proc.stderr[-2000:]}"
        ) from None
    if found["status"] not in (0, 1):
        raise SystemExit(f"bench_memo_sharing: the {mode} run exited {found['status']}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="bench_memo_sharing", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--vllm-src", type=Path, help="folder holding vllm/ and tests/ (default: cached 0.34.0)"
    )
    parser.add_argument("--runs", type=int, default=3, help="runs per mode (median)")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs: at least 1")
    try:
        root = args.vllm_src or release_source("0.34.0")
    except ReleaseNotFetchedError as exc:
        parser.exit(2, f"bench_memo_sharing: {exc}\n")
    if not (root / "tests").is_dir() or not (root / "vllm").is_dir():
        parser.exit(2, f"bench_memo_sharing: {root} holds no vllm/ and tests/\n")
    audit = [
        "--vllm-src", str(root), "--standins", "--format", "json", "--quiet", "--no-cache",
        "--jobs", "1", str(root / "tests"),
    ]  # fmt: skip
    samples: dict[str, list[dict]] = {mode: [] for mode in MODES}
    for i in range(args.runs):
        for mode in MODES:  # interleaved: a load change hits both
            print(f"[bench_memo_sharing] run {i + 1}/{args.runs}: {mode}", file=sys.stderr)
            samples[mode].append(one_run(mode, audit))
    model, nproc = machine()
    medians = {
        mode: (
            statistics.median(r["wall"] for r in runs),
            statistics.median(r["files"] for r in runs),
        )
        for mode, runs in samples.items()
    }
    same = len({r["out"] for runs in samples.values() for r in runs}) == 1
    print(f"{_dt.date.today()}, {model}, {nproc} CPUs, {root}, median of {args.runs}:")
    print("| analysis objects | run wall | files' analyses |")
    print("|---|---|---|")
    for mode, label in zip(MODES, ("one set per file (the audit)", "one set for the run")):
        wall, files = medians[mode]
        print(f"| {label} | {wall:.2f} s | {files:.2f} s |")
    ratio = medians["shared"][1] / medians["own"][1]
    print(f"shared / per file, files' analyses: {ratio:.3f} ({(1 - ratio) * 100:.1f} % saved)")
    print(f"output the same in every run: {'yes' if same else 'no'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
