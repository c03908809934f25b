#!/usr/bin/env python3
"""Measure how long importing a vLLM module takes, in fresh interpreter processes.

    python tools/bench_vllm_import.py [-n 5] [--mode cold|warm|nopyc|all] [--python PY]
                                      [--module MOD] [--fake-aiter] [--json]

Every sample is a new subprocess of the target interpreter (default: .venv/bin/python of
this repository, else the running one) that imports MOD (default
vllm.v1.attention.backends.mla.rocm_aiter_mla).  Two numbers are kept per sample:
``import`` (time.perf_counter() around the import inside the child) and ``process``
(wall time of the whole child: interpreter start-up + import + exit); the child's CPU
time (user + sys) is recorded too, being less sensitive to other load on the machine.
The median of each is reported.

Modes:
  warm   one untimed priming run (which may write missing .pyc files), then N runs with
         the OS page cache and the bytecode caches hot: the steady state of a test session.
  cold   before every run, the files of the interpreter's stdlib and site-packages
         (including system site-packages of a --system-site-packages venv) are evicted
         from the OS page cache with posix_fadvise(POSIX_FADV_DONTNEED): the first import
         after a reboot or on a fresh CI machine, .pyc files present (pip compiles them at
         install time).  No root privileges needed; nothing else is dropped.
  nopyc  bytecode caches bypassed (PYTHONPYCACHEPREFIX = a fresh empty directory per run),
         page cache hot: the cost of compiling every module from source, i.e. what an
         install made with --no-compile pays on first import.
  all    warm, cold, then nopyc.

Uses only the standard library.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MODULE = "vllm.v1.attention.backends.mla.rocm_aiter_mla"

CHILD = r"""
import sys, time, json
if {fake_aiter!r}:
    import types, importlib.machinery
    m = types.ModuleType("aiter")
    m.__spec__ = importlib.machinery.ModuleSpec("aiter", None)
    sys.modules["aiter"] = m
t0 = time.perf_counter()
import importlib
importlib.import_module({module!r})
t1 = time.perf_counter()
print("BENCH_RESULT " + json.dumps({{"import_s": t1 - t0, "modules": len(sys.modules)}}))
"""


def default_python() -> str:
    venv_py = os.path.join(REPO_ROOT, ".venv", "bin", "python")
    return venv_py if os.path.exists(venv_py) else sys.executable


def interpreter_dirs(python: str) -> list[str]:
    code = (
        "import json, site, sys, sysconfig\n"
        "p = sysconfig.get_paths()\n"
        "d = {p['stdlib'], p['platstdlib'], p['purelib'], p['platlib']}\n"
        "d.update(getattr(site, 'getsitepackages', lambda: [])())\n"
        "d.update(x for x in sys.path if x.endswith(('site-packages', 'dist-packages')))\n"
        "print(json.dumps(sorted(d)))\n"
    )
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
    dirs = [d for d in json.loads(out.stdout) if os.path.isdir(d)]
    # drop nested duplicates (site-packages lives under stdlib's parent on some layouts)
    dirs.sort(key=len)
    kept: list[str] = []
    for d in dirs:
        if not any(d == k or d.startswith(k.rstrip(os.sep) + os.sep) for k in kept):
            kept.append(d)
    return kept


def evict(dirs: list[str]) -> tuple[int, int]:
    """posix_fadvise(DONTNEED) every regular file under dirs; returns (files, bytes)."""
    files = nbytes = 0
    for root in dirs:
        for dirpath, _dirnames, filenames in os.walk(root):
            for name in filenames:
                path = os.path.join(dirpath, name)
                try:
                    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
                except OSError:
                    continue
                try:
                    nbytes += os.fstat(fd).st_size
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                    files += 1
                except OSError:
                    pass
                finally:
                    os.close(fd)
    return files, nbytes


def run_once(python: str, module: str, fake_aiter: bool, env: dict) -> dict:
    code = CHILD.format(module=module, fake_aiter=fake_aiter)
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [python, "-c", code], capture_output=True, text=True, env=env, cwd=tempfile.gettempdir()
    )
    wall = time.perf_counter() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    for line in proc.stdout.splitlines():
        if line.startswith("BENCH_RESULT "):
            res = json.loads(line[len("BENCH_RESULT ") :])
            res["process_s"] = wall
            res["cpu_s"] = cpu
            return res
    tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
    raise SystemExit(
        f"bench_vllm_import: importing {module} failed (exit {proc.returncode}):\n{tail}"
    )


def bench(mode: str, n: int, python: str, module: str, fake_aiter: bool, dirs: list[str]) -> dict:
    base_env = dict(os.environ)
    base_env.pop("PYTHONPYCACHEPREFIX", None)
    samples = []
    if mode == "warm":
        prime = dict(base_env)
        prime.pop("PYTHONDONTWRITEBYTECODE", None)  # let the priming run fill __pycache__
        run_once(python, module, fake_aiter, prime)
    for i in range(n):
        env = dict(base_env)
        if mode == "cold":
            files, nbytes = evict(dirs)
            if i == 0:
                print(
                    f"[bench] cold: evicting {files} files ({nbytes / 2**30:.2f} GiB) "
                    f"from the page cache before each run",
                    file=sys.stderr,
                )
        tmp = None
        if mode == "nopyc":
            tmp = tempfile.mkdtemp(prefix="bench-pyc-")
            env["PYTHONPYCACHEPREFIX"] = tmp
            env["PYTHONDONTWRITEBYTECODE"] = "1"
        try:
            res = run_once(python, module, fake_aiter, env)
        finally:
            if tmp:
                import shutil

                shutil.rmtree(tmp, ignore_errors=True)
        samples.append(res)
        print(
            f"[bench] {mode} run {i + 1}/{n}: import {res['import_s']:.2f} s, "
            f"process {res['process_s']:.2f} s, cpu {res['cpu_s']:.2f} s, "
            f"load {os.getloadavg()[0]:.2f}",
            file=sys.stderr,
            flush=True,
        )
    imp = [s["import_s"] for s in samples]
    proc = [s["process_s"] for s in samples]
    cpu = [s["cpu_s"] for s in samples]
    return {
        "mode": mode,
        "n": n,
        "import_median_s": statistics.median(imp),
        "import_min_s": min(imp),
        "import_max_s": max(imp),
        "process_median_s": statistics.median(proc),
        "cpu_median_s": statistics.median(cpu),
        "modules_loaded": samples[-1]["modules"],
        "import_s": imp,
        "process_s": proc,
        "cpu_s": cpu,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=5, help="timed runs per mode (default 5)")
    ap.add_argument("--mode", choices=("warm", "cold", "nopyc", "all"), default="all")
    ap.add_argument("--python", default=None, help="interpreter (default: .venv/bin/python)")
    ap.add_argument("--module", default=DEFAULT_MODULE)
    ap.add_argument(
        "--fake-aiter",
        action="store_true",
        help="put a fake `aiter` (with __spec__) into sys.modules first",
    )
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    args = ap.parse_args(argv)
    if args.n < 1:
        ap.error("-n must be >= 1")

    python = args.python or default_python()
    modes = ("warm", "cold", "nopyc") if args.mode == "all" else (args.mode,)
    dirs = interpreter_dirs(python) if "cold" in modes else []
    results = [bench(m, args.n, python, args.module, args.fake_aiter, dirs) for m in modes]

    if args.json:
        print(
            json.dumps(
                {
                    "python": python,
                    "module": args.module,
                    "loadavg": os.getloadavg(),
                    "cpus": os.cpu_count(),
                    "results": results,
                },
                indent=2,
            )
        )
    else:
        print(f"{args.module} via {python}")
        for r in results:
            print(
                f"  {r['mode']:<5}  import median {r['import_median_s']:6.2f} s "
                f"(min {r['import_min_s']:.2f}, max {r['import_max_s']:.2f}, n={r['n']})   "
                f"process median {r['process_median_s']:6.2f} s   "
                f"child cpu median {r['cpu_median_s']:6.2f} s   "
                f"{r['modules_loaded']} modules"
            )
        print(
            f"  load average (1 min) at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
