#!/usr/bin/env python3
"""Benchmark the stub audit as a ratio to the parse time of the files it opens.

Machines here differ by 2x, so a speed is stated against a floor measured in the same run: the
time ``ast.parse`` takes, once each, on exactly the files the audit opened (test files and vLLM
modules; recorded by wrapping ``ModuleInfo.from_source`` in the audit's process and its worker
processes, a file several workers parsed counted once).  Each job is ``tools/audit_stubs.py``
in a fresh process (imports, pre-filter, parsing, analysis), with the audit's own ``--jobs``
(one worker per CPU) unless ``--audit-jobs N`` says otherwise; the CPU column is that of the
audit and its workers together:

* **tree**: every file of a release's ``tests/`` (default: the cached 0.34.0);
* **specs**: this project's own stub specs (the no-FILE mode);
* **trigger**: a change to ``vllm/v1/attention/backends/mla/rocm_aiter_mla.py`` (the
  pre-commit hook's source-change trigger);
* the same tree and trigger with ``--standins``, and with the result cache: **cold** (an
  empty cache folder each run: the audit plus writing every entry) and **warm** (a folder a
  cold run of the whole tree with the same options filled: the last run of the cold-cache
  job where it ran, else one more cold run; for a trigger that is what gives it its reverse
  index).  Jobs without "cache" in their name run with ``--no-cache``;
* **main job**: the README's ``--release-summary`` (the specs, then the pinned release's
  own ``tests/`` twice, without and with stand-ins), without a cache and from a warm one;
* **module edited**: the pre-commit case, on a copy of the tree: a warm cache, then before each
  run an edit (one more comment line) to the trigger's module, so the files whose audit read it
  are analysed again and the others come from the cache.

A warm run opens few files or none, so the floor of a warm job is that of the cold run of the
same command (``--no-cache``): the parse time of the files a cold run opens, whatever the
cache saves.

``--against REV`` also times the analyzer of git revision ``REV`` of this repository (its
``factories/`` and ``tools/``, exported to a temporary folder), runs interleaved with the
current tree's so that a load change hits both, and prints both ratios: "no slower than
before" is a ratio no larger than the other's, read off one run.  Only the jobs without a
cache or ``--standins`` run there (a revision before them has neither), and the main job (a
revision before its cache and workers runs it in one process, without a cache).

Median of ``--runs`` (3) per job and code; the floor is the median of 3 in-process parses with
the cyclic GC paused, as the audit parses.  Prints a markdown table for ``docs/BENCHMARKS.md``.
Never imports torch or vllm.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import datetime as _dt
import gc
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from factories.errors import ReleaseNotFetchedError  # noqa: E402
from factories.testing.releases import release_source  # noqa: E402

TRIGGER_MODULE = "vllm/v1/attention/backends/mla/rocm_aiter_mla.py"
HEAD = "HEAD (working tree)"

# Runs the audit CLI of the code at argv[1] with argv[3:], appending the files it parsed to
# argv[2], one per line, from every process (the audit's worker processes parse too; a line
# written at once by a line-buffered append survives a worker's exit); the wrapper only
# records, the parse itself is the audit's own.
_PROBE = """
import os, sys
code, record, args = sys.argv[1], sys.argv[2], sys.argv[3:]
sys.path.insert(0, code)
from factories.analysis import source_tree
logs = {}
parse = source_tree.ModuleInfo.from_source.__func__
def recorded(cls, name, path, source, is_package):
    log = logs.get(os.getpid())
    if log is None:
        log = logs[os.getpid()] = open(record, "a", buffering=1, encoding="utf-8")
    log.write(str(path) + "\\n")
    return parse(cls, name, path, source, is_package)
source_tree.ModuleInfo.from_source = classmethod(recorded)
from factories.cli import main
raise SystemExit(main(args))
"""


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


def audit_run(code: Path, args: list[str]) -> tuple[float, float, list[str], str]:
    """One audit in a fresh process: (wall s, child CPU s, files parsed, the CLI's last
    stderr line)."""
    with tempfile.NamedTemporaryFile(suffix=".txt") as record:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-c", _PROBE, str(code), record.name, *args],
            capture_output=True,
            text=True,
            timeout=900,
        )
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode not in (0, 1):  # 1 = findings, the normal case on a whole tree
            raise SystemExit(f"bench_audit: audit failed (exit {proc.returncode}): {proc.stderr}")
        opened = Path(record.name).read_text(encoding="utf-8").splitlines()
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = proc.stderr.strip().splitlines()
    return wall, cpu, opened, lines[-1] if lines else ""


def parse_floor(files: list[str], runs: int = 3) -> float:
    """Median seconds to read and ``ast.parse`` each file once (GC paused, as the audit)."""
    sources = [Path(f).read_bytes() for f in dict.fromkeys(files)]
    samples = []
    for _ in range(runs):
        gc.disable()
        start = time.perf_counter()
        for source in sources:
            ast.parse(source)
        samples.append(time.perf_counter() - start)
        gc.enable()
        gc.collect()
    return statistics.median(samples)


def export(revision: str, dest: Path) -> Path:
    """``factories/`` and ``tools/`` of ``revision`` of this repository, written to ``dest``."""
    archive = dest / "code.tar"
    proc = subprocess.run(
        ["git", "-C", str(REPO), "archive", "-o", str(archive), revision, "factories", "tools"],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{Path(sys.argv[0]).stem}: --against {revision}: {proc.stderr.strip()}")
    with tarfile.open(archive) as tar:
        tar.extractall(dest / "code")
    return dest / "code"


@dataclasses.dataclass(frozen=True)
class Job:
    """One command to time.  ``cache``: ``none`` (``--no-cache``), ``cold`` (an empty cache
    folder per run) or ``warm`` (a folder the warm-up filled, running ``prime`` first where
    given); ``floor_of``: the job whose cold files give the floor (warm jobs); ``against``:
    whether an older revision can run it too."""

    name: str
    args: list[str]
    cache: str = "none"
    floor_of: str | None = None
    prime: list[str] | None = None
    against: bool = False


@dataclasses.dataclass
class EditedTree:
    """A copy of the tree (``vllm/`` and the tests) whose trigger module each run edits, with
    the cache folder its runs share."""

    root: Path
    tests: Path
    copy: Path
    cache: Path
    edits: int = 0

    @classmethod
    def copied(cls, root: Path, tests: Path, tmp: Path) -> EditedTree:
        copy = tmp / "edited-src"
        shutil.copytree(root / "vllm", copy / "vllm")
        shutil.copytree(tests, copy / "tests")
        return cls(root, tests, copy, tmp / "edited-cache")

    def moved(self, args: list[str]) -> list[str]:
        """``args`` with the tree's paths turned into the copy's."""
        out = []
        for arg in args:
            if arg.startswith(str(self.tests)):
                arg = str(self.copy / "tests") + arg[len(str(self.tests)) :]
            elif arg.startswith(str(self.root)):
                arg = str(self.copy) + arg[len(str(self.root)) :]
            out.append(arg)
        return out

    def edit(self) -> None:
        """One more comment line at the end of the trigger module: its content hash changes."""
        self.edits += 1
        with open(self.copy / TRIGGER_MODULE, "a", encoding="utf-8") as module:
            module.write(f"\n# bench_audit: edit {self.edits}\n")


def jobs(root: Path, tests: Path) -> list[Job]:
    src = ["--vllm-src", str(root), "--format", "json"]
    tree, trigger = [*src, str(tests)], [*src, str(root / TRIGGER_MODULE)]
    standins = ["--standins"]
    summary = ["--vllm-src", str(root), "--release-summary"]  # the pinned release's tests
    return [
        Job("tree", tree, against=True),
        Job("specs", src, against=True),
        Job("trigger", trigger, against=True),
        Job("tree, cold cache", tree, "cold", floor_of="tree"),
        Job("tree, warm cache", tree, "warm", floor_of="tree"),
        Job("trigger, warm cache", trigger, "warm", floor_of="trigger", prime=tree),
        Job("tree --standins", [*standins, *tree]),
        Job("tree --standins, cold cache", [*standins, *tree], "cold", "tree --standins"),
        Job("tree --standins, warm cache", [*standins, *tree], "warm", "tree --standins"),
        Job("trigger --standins", [*standins, *trigger]),
        Job(
            "trigger --standins, warm cache",
            [*standins, *trigger],
            "warm",
            floor_of="trigger --standins",
            prime=[*standins, *tree],
        ),
        Job(
            "trigger --standins, warm cache, module edited",
            [*standins, *trigger],
            "edited",
            floor_of="trigger --standins",
            prime=[*standins, *tree],
        ),
        Job("main job", summary, against=True),
        Job("main job, warm cache", summary, "warm", floor_of="main job"),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_audit", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--vllm-src", type=Path, help="folder holding vllm/ and tests/ (default: cached 0.34.0)"
    )
    parser.add_argument("--tests", type=Path, help="tests folder (default: VLLM_SRC/tests)")
    parser.add_argument("--runs", type=int, default=3, help="cold runs per job and code (median)")
    parser.add_argument("--against", metavar="REV", help="also time this git revision's audit")
    parser.add_argument("--no-header", action="store_true", help="print only the table rows")
    parser.add_argument(
        "--audit-jobs",
        metavar="N",
        type=int,
        help="run this tree's audits with --jobs N (worker processes; default: the audit's own "
        "default, one per CPU); the rows name it",
    )
    parser.add_argument(
        "--jobs",
        nargs="+",
        metavar="NAME",
        help="only these jobs (their names as the table prints them, e.g. 'tree, warm cache')",
    )
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    try:
        root = args.vllm_src or release_source("0.34.0")
    except ReleaseNotFetchedError as exc:
        parser.error(str(exc))
    tests = args.tests or root / "tests"
    if not (root / "vllm" / "__init__.py").is_file() or not tests.is_dir():
        parser.error(f"{root} must hold vllm/ and {tests} must be a folder")

    workers = [] if args.audit_jobs is None else ["--jobs", str(args.audit_jobs)]
    every = {job.name: job for job in jobs(root, tests)}
    unknown = sorted(set(args.jobs or ()) - set(every))
    if unknown:
        parser.error(f"--jobs: no job named {', '.join(map(repr, unknown))}; jobs: {list(every)}")
    selected = [every[name] for name in args.jobs] if args.jobs else list(every.values())
    model, nproc = machine()
    version = root.resolve().name
    if not args.no_header:
        print(
            f"| date | machine | nproc | vLLM | job | code | files parsed (cold) | parse floor | "
            f"audit wall / CPU (median of {args.runs}) | wall / floor | CPU / floor |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|---|", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-audit-") as tmp:
        codes = {HEAD: REPO}
        if args.against:
            codes[args.against] = export(args.against, Path(tmp))
        opened_by: dict[str, list[str]] = {}  # job -> the files its cold run opened
        # The command whose cold run filled a cache folder -> that folder.
        warm_dirs: dict[tuple[str, ...], Path] = {}

        def cold_opened(name: str) -> list[str]:
            if name not in opened_by:  # its cold job did not run (yet): one cold run
                opened_by[name] = audit_run(REPO, [*workers, "--no-cache", *every[name].args])[2]
            return opened_by[name]

        for job in selected:
            job_codes = {k: v for k, v in codes.items() if k == HEAD or job.against}
            filler = tuple(job.prime or job.args)  # what fills the folder of a warm run
            cold_dirs: list[Path] = []

            edited: EditedTree | None = None
            if job.cache == "edited":
                print(f"[bench_audit] {job.name}: copying the tree", file=sys.stderr, flush=True)
                edited = EditedTree.copied(root, tests, Path(tmp))
                prime = [*workers, "--cache-dir", str(edited.cache), *edited.moved(job.prime or [])]
                print(f"[bench_audit] {job.name}: filling the cache", file=sys.stderr, flush=True)
                audit_run(REPO, prime)

            def command(
                label: str,
                job: Job = job,
                filler: tuple[str, ...] = filler,
                cold_dirs: list[Path] = cold_dirs,
                edited: EditedTree | None = edited,
            ) -> list[str]:
                if label != HEAD:
                    return job.args  # an older revision: no cache to turn off, no workers
                if edited is not None:
                    edited.edit()
                    return [*workers, "--cache-dir", str(edited.cache), *edited.moved(job.args)]
                if job.cache == "none":
                    return [*workers, "--no-cache", *job.args]
                if job.cache == "warm":
                    return [*workers, "--cache-dir", str(warm_dirs[filler]), *job.args]
                cold_dirs.append(Path(tempfile.mkdtemp(prefix="cold-", dir=tmp)))
                return [*workers, "--cache-dir", str(cold_dirs[-1]), *job.args]

            if job.cache == "warm" and filler not in warm_dirs:
                # Filled by one cold run of the whole tree with the same options; for a tree
                # job that run is also its cold run (the floor's files).
                warm_dirs[filler] = Path(tempfile.mkdtemp(prefix="warm-", dir=tmp))
                print(f"[bench_audit] {job.name}: filling the cache", file=sys.stderr, flush=True)
                run = audit_run(REPO, [*workers, "--cache-dir", str(warm_dirs[filler]), *filler])
                if job.prime is None and job.floor_of is not None:
                    opened_by.setdefault(job.floor_of, run[2])
                    floor = parse_floor(run[2])
                    print(  # that cold run is a sample too: one, not a median
                        f"| {_dt.date.today()} | {model} | {nproc} | {version} | "
                        f"{job.name.replace('warm', 'cold')} (the filling run: 1 run) | {HEAD} | "
                        f"{len(set(run[2]))} | {floor:.2f} s | {run[0]:.2f} s / {run[1]:.2f} s "
                        f"| {run[0] / floor:.2f} | {run[1] / floor:.2f} |",
                        flush=True,
                    )
            if job.cache == "warm":
                audit_run(REPO, command(HEAD))  # the entries' files in the OS file cache
            samples: dict[str, list[tuple[float, float, list[str], str]]] = {
                c: [] for c in job_codes
            }
            for _ in range(args.runs):
                for label, code in job_codes.items():  # interleaved: load changes hit every code
                    print(f"[bench_audit] {job.name}: {label}", file=sys.stderr, flush=True)
                    samples[label].append(audit_run(code, command(label)))
            if job.cache == "cold" and filler not in warm_dirs:
                warm_dirs[filler] = cold_dirs[-1]  # a whole cold run's entries: warm
            for label, runs in samples.items():
                opened = runs[-1][2]
                if label == HEAD and job.cache not in ("warm", "edited"):
                    opened_by.setdefault(job.floor_of or job.name, opened)
                if job.floor_of is not None:
                    opened = cold_opened(job.floor_of)
                floor = parse_floor(opened)
                wall = statistics.median(r[0] for r in runs)
                cpu = statistics.median(r[1] for r in runs)
                code = f"{label} {' '.join(workers)}".strip() if label == HEAD else label
                print(
                    f"| {_dt.date.today()} | {model} | {nproc} | {version} | {job.name} | "
                    f"{code} | {len(set(opened))} | {floor:.2f} s | {wall:.2f} s / {cpu:.2f} s "
                    f"| {wall / floor:.2f} | {cpu / floor:.2f} |",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
