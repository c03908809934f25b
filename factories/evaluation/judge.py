"""Judge ``audit-stubs`` by running vLLM's own stub-bearing tests (issue 12, Acceptance).

Why: the static audit claims "this stub will fail on the path this test takes".  Running the
test answers it: an error-level finding on a method that a *passing* test called on that very
stub is a false alarm, and an ``AttributeError`` raised on a stub that no error names is a
missed drift.  This module selects the files, hands them to ``factories.testing.stub_runner``
in the interpreter of the vLLM under test (this process imports neither torch nor vllm), and
compares the recorded run with the audit's JSON.
"""

from __future__ import annotations

import fnmatch
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from factories.errors import JudgeError

REPO = Path(__file__).resolve().parents[2]
FAILING = ("failed", "error", "timeout")
# AttributeErrors raised while *printing* a stub (pytest's failure report, a log line calling
# repr on an nn.Module stub that never ran __init__) are not drifts of the code under test
PRINTING = ("__repr__", "__str__", "extra_repr", "__format__")


def stub_files(tests: Path, patterns: Sequence[str] = ()) -> list[str]:
    """Test files (relative to the release root) whose text calls ``object.__new__(``."""
    if not tests.is_dir():
        raise JudgeError(f"{tests}: not a folder")
    found = []
    for path in sorted(tests.rglob("*.py")):
        rel = path.relative_to(tests.parent).as_posix()
        if patterns and not any(fnmatch.fnmatch(rel, p) or p in rel for p in patterns):
            continue
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if "object.__new__(" in text and path.name != "conftest.py":
            found.append(rel)
    return found


def collect_workdir(workdir: Path) -> dict[str, Any]:
    """The run so far, from a runner's work folder (a run still going or one cut short).

    Files whose child has not written its JSON yet are left out, so the counts are partial.
    """
    spec = _load(workdir / "spec.json")
    files: dict[str, Any] = {}
    for n, rel in enumerate(spec["files"]):
        out = workdir / "per-file" / f"{n:04d}.json"
        if out.is_file():
            files[rel] = {"status": "ran", **_load(out)}
    result = {"files": files, "partial": f"{len(files)} of {len(spec['files'])} files"}
    _relative_sites(result, Path(spec["tests"]))
    return result


def _relative_sites(result: dict[str, Any], tests: Path) -> None:
    """Stub sites as ``tests/...:line``, the form ``audit-stubs`` uses."""
    root = tests.resolve().parent
    for record in result["files"].values():
        for stub in record.get("stubs", []):
            path, _, line = stub["site"].rpartition(":")
            try:
                stub["site"] = f"{Path(path).resolve().relative_to(root).as_posix()}:{line}"
            except ValueError:
                pass


def run_tests(
    tests: Path,
    python: str,
    files: Sequence[str],
    timeout: float,
    workdir: Path,
    preimport: bool = True,
) -> dict[str, Any]:
    """Run the files under the tracker in ``python``; the runner's combined JSON.

    ``preimport=False`` skips importing torch and vLLM in the forking parent (for fixtures
    that need neither).
    """
    spec = {
        "preimport": preimport,
        "tests": str(tests.resolve()),
        "files": list(files),
        "timeout": timeout,
        "out_dir": str(workdir / "per-file"),
        "result": str(workdir / "result.json"),
    }
    spec_path = workdir / "spec.json"
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    started = time.monotonic()
    try:
        proc = subprocess.run(
            [python, "-m", "factories.testing.stub_runner", str(spec_path)],
            env=env,
            cwd=workdir,
            check=False,
        )
    except OSError as exc:
        raise JudgeError(f"{python}: cannot run: {exc}") from exc
    if proc.returncode != 0 or not Path(spec["result"]).is_file():
        raise JudgeError(f"the runner failed (exit {proc.returncode}); see {workdir}")
    result = json.loads(Path(spec["result"]).read_text(encoding="utf-8"))
    result["wall_s"] = round(time.monotonic() - started, 1)
    _relative_sites(result, tests)
    result["tests_root"] = str(tests)
    return result


# ------------------------------------------------------------------ comparison


def _bare(method: str) -> str:
    return method.rpartition(".")[2]


def observed_drifts(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One entry per (stub site, class, attribute) whose AttributeError failed a test."""
    drifts: dict[tuple[str, str, str], dict[str, Any]] = {}
    for rel, record in result["files"].items():
        for stub in record.get("stubs", []):
            for error in stub["attribute_errors"]:
                if error["outcome"] not in FAILING or not error["name"]:
                    continue
                if _bare(error["method"]) in PRINTING:
                    continue
                key = (stub["site"], stub["class"], error["name"])
                entry = drifts.setdefault(
                    key,
                    {
                        "test_file": rel,
                        "site": stub["site"],
                        "class": stub["class"],
                        "attribute": error["name"],
                        "methods": [],
                        "tests": [],
                    },
                )
                if error["method"] not in entry["methods"]:
                    entry["methods"].append(error["method"])
                entry["tests"].append(error["test"])
    return sorted(drifts.values(), key=lambda d: (d["site"], d["attribute"]))


def _passing_calls(result: dict[str, Any]) -> dict[tuple[str, str], set[str]]:
    """(stub site, bare method name) -> passing tests that called that method on that stub."""
    calls: dict[tuple[str, str], set[str]] = {}
    for record in result["files"].values():
        tests = record.get("tests", {})
        for stub in record.get("stubs", []):
            for method, seen in stub["methods"].items():
                passed = {t for t in seen["tests"] if tests.get(t, {}).get("outcome") == "passed"}
                if passed:
                    calls.setdefault((stub["site"], _bare(method)), set()).update(passed)
    return calls


def _raised(result: dict[str, Any]) -> dict[tuple[str, str], set[str]]:
    """(stub site, attribute) -> tests in which reading it on that stub raised AttributeError."""
    raised: dict[tuple[str, str], set[str]] = {}
    for record in result["files"].values():
        for stub in record.get("stubs", []):
            for error in stub["attribute_errors"]:
                raised.setdefault((stub["site"], error["name"]), set()).add(error["test"])
    return raised


def _is_named_test(nodeid: str, tests: Sequence[str]) -> bool:
    """Whether the pytest ``nodeid`` (``tests/x.py::Cls::test_y[case]``) is one of a finding's
    ``tests`` (``Cls::test_y[case]``, or ``Cls::test_y`` for every case); a finding naming no
    test is about any test that makes the call."""
    if not tests:
        return True
    name = nodeid.partition("::")[2]
    return any(t == name or ("[" not in t and name.partition("[")[0] == t) for t in tests)


def _names(finding: dict[str, Any], drift: dict[str, Any]) -> str | None:
    """'exact' when the finding is on the drift's stub site, 'file' on its class in that file."""
    if finding.get("name") != drift["attribute"] or not finding.get("stub_location"):
        return None
    if finding["stub_location"] == drift["site"]:
        return "exact"
    same_file = finding["stub_location"].rpartition(":")[0] == drift["site"].rpartition(":")[0]
    if same_file and finding.get("class") == drift["class"].rpartition(".")[2]:
        return "file"
    return None


def compare(result: dict[str, Any], audit: list[dict[str, Any]]) -> dict[str, Any]:
    """False alarms, missed drifts and named drifts (see the module docstring).

    A false alarm: an error-level finding on ``Class.method`` for a stub on which a passing
    test called that method without the flagged name raising AttributeError on the stub.
    """
    errors = [f for f in audit if f.get("severity") == "error"]
    others = [f for f in audit if f.get("severity") != "error"]
    calls, raised = _passing_calls(result), _raised(result)
    run_sites = {s["site"] for r in result["files"].values() for s in r.get("stubs", [])}
    false_alarms, unjudged = [], 0
    for finding in errors:
        site = finding.get("stub_location")
        passed = calls.get((site, finding.get("method")), set())
        # a finding that names the tests on whose path it lies is judged by those tests only
        passed = {t for t in passed if _is_named_test(t, finding.get("tests") or ())}
        # a test that expected the AttributeError (pytest.raises) proves the finding right
        if passed - raised.get((site, finding.get("name")), set()):
            false_alarms.append(finding)
        else:
            unjudged += 1
    named, notes_only, missed = [], [], []
    for drift in observed_drifts(result):
        match = next((m for f in errors if (m := _names(f, drift))), None)
        if match:
            named.append({**drift, "match": match})
            continue
        kinds = sorted({f["kind"] for f in others if _names(f, drift)})
        (notes_only if kinds else missed).append({**drift, "note_kinds": kinds})
    return {
        "error_findings": len(errors),
        "error_findings_on_stubs_that_ran": sum(
            1 for f in errors if f.get("stub_location") in run_sites
        ),
        "false_alarms": false_alarms,
        "errors_not_contradicted": unjudged,
        "observed_drifts": len(named) + len(notes_only) + len(missed),
        "named_by_errors": named,
        "named_only_by_notes": notes_only,
        "missed": missed,
    }


def summarize(result: dict[str, Any]) -> dict[str, Any]:
    """Counts over the whole run: files, tests by outcome, stubs, AttributeErrors."""
    outcomes: dict[str, int] = {}
    statuses: dict[str, int] = {}
    stubs = errors = 0
    for record in result["files"].values():
        statuses[record["status"]] = statuses.get(record["status"], 0) + 1
        for test in record.get("tests", {}).values():
            outcomes[test["outcome"]] = outcomes.get(test["outcome"], 0) + 1
        stubs += len(record.get("stubs", []))
        errors += sum(len(s["attribute_errors"]) for s in record.get("stubs", []))
    return {
        "files": len(result["files"]),
        "file_status": statuses,
        "tests": outcomes,
        "stubs_created": stubs,
        "attribute_errors": errors,
        "wall_s": result.get("wall_s"),
    }


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="judge_stubs_by_running",
        description="Run vLLM's object.__new__-stub tests under a tracker and judge an "
        "audit-stubs JSON against what they did.",
    )
    parser.add_argument("--tests", type=Path, help="a vLLM release's tests/ folder")
    parser.add_argument("--python", help="interpreter of a venv with the vLLM under test")
    parser.add_argument("--json", type=Path, required=True, help="where to write the run")
    parser.add_argument(
        "--files",
        nargs="*",
        default=(),
        help="only these files (substring or fnmatch pattern on tests/...)",
    )
    parser.add_argument("--timeout-per-file", type=float, default=300.0)
    parser.add_argument(
        "--workdir",
        type=Path,
        help="keep per-file JSON and logs here; without --tests, collect the run so far "
        "from this folder into --json",
    )
    parser.add_argument(
        "--compare-audit",
        type=Path,
        metavar="AUDIT.json",
        help="audit-stubs --format json output to judge; without --tests, "
        "--json is an earlier run to compare with",
    )
    args = parser.parse_args(argv)
    try:
        if args.tests is not None:
            if not args.python:
                parser.error("--tests needs --python")
            files = stub_files(args.tests, args.files)
            if not files:
                raise JudgeError(f"{args.tests}: no test file calls object.__new__(")
            workdir = args.workdir or Path(tempfile.mkdtemp(prefix="judge-stubs-"))
            workdir.mkdir(parents=True, exist_ok=True)
            result = run_tests(args.tests, args.python, files, args.timeout_per_file, workdir)
            result["summary"] = summarize(result)
            args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")
        elif args.workdir is not None:
            result = collect_workdir(args.workdir)
            result["summary"] = summarize(result)
            args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")
        else:
            result = _load(args.json)
        print(json.dumps(result.get("summary") or summarize(result), indent=1))
        if args.compare_audit is not None:
            report = compare(result, _load(args.compare_audit))
            out = args.json.with_name(args.json.stem + ".compare.json")
            out.write_text(json.dumps(report, indent=1), encoding="utf-8")
            print(_report_text(report))
            print(f"comparison written to {out}")
    except JudgeError as exc:
        print(f"judge_stubs_by_running: {exc}", file=sys.stderr)
        return 2
    return 0


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise JudgeError(f"{path}: {exc}") from exc


def _report_text(report: dict[str, Any]) -> str:
    lines = [
        f"error findings: {report['error_findings']} "
        f"({report['error_findings_on_stubs_that_ran']} on stubs the run created)",
        f"false alarms (a passing test called the flagged method on that stub): "
        f"{len(report['false_alarms'])}",
        f"observed drifts (AttributeError on a stub that failed a test): "
        f"{report['observed_drifts']}: named by errors {len(report['named_by_errors'])}, "
        f"only by notes {len(report['named_only_by_notes'])}, missed {len(report['missed'])}",
    ]
    for label in ("named_by_errors", "named_only_by_notes", "missed"):
        for d in report[label]:
            lines.append(
                f"  {label}: {d['site']} {d['class']}.{d['attribute']} "
                f"(in {', '.join(d['methods'])})"
            )
    for f in report["false_alarms"]:
        lines.append(
            f"  false alarm: {f['stub_location']} {f['kind']} "
            f"{f['class']}.{f['method']}: {f['name']}"
        )
    return "\n".join(lines)
