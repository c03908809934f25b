"""Run vLLM test files one by one under the stub tracker, in the venv of the vLLM under test.

Why a forked child per file from one parent: importing torch and vLLM costs several seconds
of CPU per process; the parent imports them (and the modules the tests root ``conftest.py``
imports) once, then each file runs ``pytest.main`` in a fresh ``fork()`` so that one file's
monkeypatching, module state or crash cannot leak into the next, and a hung file is killed at
its deadline (SIGTERM first: the plugin then writes what it saw).

Invoked by ``factories.evaluation.judge`` as ``PY -m factories.testing.stub_runner SPEC.json``;
the spec names the tests folder, the files, the output folder and the timeout.  Standard
library only until ``main`` runs (``namespace_tracker`` is standard library only too).
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import signal
import sys
import time
from pathlib import Path

from factories.testing.namespace_tracker import builds_standins  # standard library only

PLUGIN = "factories.testing.stub_tracker"


def _preimport(tests: Path) -> list[str]:
    """torch, vllm and the tests root conftest's top-level imports; failures are ignored.

    ``tests.*`` helper modules are imported too (about 6 s per file saved) unless their text
    builds a stub or a namespace: those must be imported by the child, through the tracker's
    rewrite.
    """
    names = ["torch", "vllm", "pytest", *_plugin_modules()]
    attributes: dict[str, list[str]] = {}  # ``from vllm import LLM``: a lazy attribute
    conftest = tests / "conftest.py"
    if conftest.is_file():
        tree = ast.parse(conftest.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.Import):
                names += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.append(node.module)
                attributes.setdefault(node.module, []).extend(a.name for a in node.names)
    # the tests' own modules last, with the release root on sys.path only then: that root
    # also holds the release's vllm/ source, which must never shadow the installed vLLM
    names.sort(key=lambda name: name.split(".")[0] == "tests")
    done = []
    for name in names:
        if name.split(".")[0] == "tests":
            if _builds_stubs(tests.parent, name):
                continue
            if str(tests.parent) not in sys.path:
                sys.path.insert(0, str(tests.parent))
        try:
            module = importlib.import_module(name)
            for attribute in attributes.get(name, ()):
                getattr(module, attribute, None)
            done.append(name)
        except BaseException:
            pass
    return done


def _plugin_modules() -> list[str]:
    """The installed pytest plugins (``pytest11`` entry points: pytest-asyncio, hypothesis,
    xdist, ...).  Imported in the parent, the child's pytest finds them loaded instead of
    assertion-rewriting every module of their distributions again (the tracker bypasses the
    pyc cache: about 5 s per file on this machine)."""
    from importlib.metadata import entry_points

    return [ep.module for ep in entry_points(group="pytest11")]


def _vllm_imports(root: Path, files: list[str]) -> list[str]:
    """The ``vllm.*`` modules the files import at their top level, most imported first.

    Why: importing vLLM's model runner, attention backends or serving stack costs 10-20 s of
    CPU per test file on a loaded 2-core machine; a fork of a parent that imported them once
    starts with them (about 450 namespace files instead of 161 stub files made this matter).
    A test that sets an environment variable before importing vLLM still sees its own value:
    ``vllm.envs`` reads the environment lazily.
    """
    counts: dict[str, int] = {}
    for rel in files:
        try:
            tree = ast.parse((root / rel).read_text(encoding="utf-8"))
        except (OSError, SyntaxError, ValueError):
            continue
        for node in tree.body:
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module]
            for name in names:
                if name.split(".")[0] == "vllm":
                    counts[name] = counts.get(name, 0) + 1
    return sorted(counts, key=lambda name: (-counts[name], name))


def _builds_stubs(root: Path, module: str) -> bool:
    base = root.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file() and builds_standins(path.read_text(encoding="utf-8")):
            return True
    return False


def _run_child(root: Path, rel: str, out: Path, log: Path, extra: list[str]) -> None:
    """In the forked child: run pytest on one file, never return."""
    try:
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.chdir(root)
        os.environ["JUDGE_STUBS_OUT"] = str(out)
        os.environ["JUDGE_STUBS_ROOT"] = str(root / "tests")
        import pytest

        args = [rel, "-p", PLUGIN, "-p", "no:cacheprovider", "-q", "-rN", "--rootdir", str(root)]
        rc = pytest.main(args + extra)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(int(rc))
    except BaseException:
        import traceback

        traceback.print_exc()
        sys.stderr.flush()
        os._exit(99)


def _wait(pid: int, deadline: float) -> tuple[str, int]:
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            if os.WIFSIGNALED(status):
                return "crashed", -os.WTERMSIG(status)
            return "ran", os.WEXITSTATUS(status)
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGTERM)
            end = time.monotonic() + 10
            while time.monotonic() < end:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    return "timeout", 124
                time.sleep(0.2)
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return "timeout", 137
        time.sleep(0.1)


def main(argv: list[str] | None = None) -> int:
    spec = json.loads(Path((argv or sys.argv[1:])[0]).read_text(encoding="utf-8"))
    tests = Path(spec["tests"]).resolve()
    root = tests.parent
    outdir = Path(spec["out_dir"])
    outdir.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # no network: fail fast, never hang
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    started = time.monotonic()
    imported = _preimport(tests) if spec.get("preimport", True) else []
    if spec.get("preimport_file_imports", False):
        for name in _vllm_imports(root, spec["files"]):
            try:
                importlib.import_module(name)
                imported.append(name)
            except BaseException:  # the child meets the same error, in its own report
                pass
    import_s = time.monotonic() - started
    vllm = sys.modules.get("vllm")
    results: dict[str, dict[str, object]] = {}
    for n, rel in enumerate(spec["files"]):
        out, log = outdir / f"{n:04d}.json", outdir / f"{n:04d}.log"
        t0 = time.monotonic()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _run_child(root, rel, out, log, list(spec.get("pytest_args", [])))
        status, rc = _wait(pid, t0 + float(spec["timeout"]))
        record: dict[str, object] = {
            "status": status,
            "rc": rc,
            "wall_s": round(time.monotonic() - t0, 2),
            "log": str(log),
        }
        if out.is_file():
            record.update(json.loads(out.read_text(encoding="utf-8")))
        results[rel] = record
        print(
            f"[judge] {n + 1}/{len(spec['files'])} {rel}: {status} rc={rc} {record['wall_s']}s",
            file=sys.stderr,
            flush=True,
        )
    summary = {
        "python": sys.executable,
        "vllm_version": getattr(vllm, "__version__", None),
        "vllm_file": getattr(vllm, "__file__", None),
        "preimported": imported,
        "preimport_s": round(import_s, 2),
        "files": results,
    }
    Path(spec["result"]).write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
