"""Judge ``audit-stubs`` by running vLLM's own stub-bearing tests (issue 12, Acceptance).

Why: the static audit claims "this stub will fail on the path this test takes".  Running the
test answers it: an error-level finding on a method that a *passing* test called on that very
stub is a false alarm, and an ``AttributeError`` raised on a stub that no error names is a
missed drift.  This module selects the files, hands them to ``factories.testing.stub_runner``
in the interpreter of the vLLM under test (this process imports neither torch nor vllm), and
compares the recorded run with the audit's JSON.

Namespace stand-ins (issue 19, item 5; ``--standins``): the run also records, per
``SimpleNamespace``/``argparse.Namespace`` built-at site (``tests/x.py:12``, the form
``audit-stubs --standins`` prints as the stand-in's "builds at"), the names vLLM code read from
it and the ``AttributeError``s it raised inside vLLM code.  ``compare_standins`` judges the
audit's stand-in findings with them: a raised error that failed a test and no error-level
finding names (same site, same attribute as the chain's last link) is missed; an error-level
finding whose attribute a passing test's vLLM code read from that very site is a false alarm.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
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


def _files_naming(tests: Path, needle: str, patterns: Sequence[str]) -> list[str]:
    """Test files (relative to the release root, ``conftest.py`` left out) whose text holds
    ``needle``, among those ``patterns`` select (fnmatch or substring; all where none)."""
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
        if needle in text and path.name != "conftest.py":
            found.append(rel)
    return found


def stub_files(tests: Path, patterns: Sequence[str] = ()) -> list[str]:
    """Test files (relative to the release root) whose text calls ``object.__new__(``."""
    return _files_naming(tests, "object.__new__(", patterns)


def standin_files(tests: Path, patterns: Sequence[str] = ()) -> list[str]:
    """Test files (relative to the release root) whose text names ``SimpleNamespace``."""
    return _files_naming(tests, "SimpleNamespace", patterns)


def files_with_standin_findings(audit: list[dict[str, Any]], tests: Path) -> list[str]:
    """Test files (``tests/...``) in which ``audit`` reports a stand-in finding, any level."""
    root = tests.resolve().parent
    found = set()
    for finding in audit:
        if not is_standin_finding(finding) or not finding.get("stub_location"):
            continue
        path = Path(finding["stub_location"].rpartition(":")[0])
        if path.is_absolute():
            try:
                path = path.resolve().relative_to(root)
            except ValueError:
                continue
        if (root / path).is_file():
            found.add(path.as_posix())
    return sorted(found)


def by_standin_findings(
    files: Sequence[str], audit: list[dict[str, Any]], tests: Path
) -> list[str]:
    """``files`` with those holding an error-level stand-in finding of ``audit`` first, then
    those holding a note, then the rest (each group in its order): a run cut short, or read
    while it goes on, has judged the audit's errors first."""
    errors = set(files_with_standin_findings(_errors_only(audit), tests))
    any_level = set(files_with_standin_findings(audit, tests))
    return sorted(files, key=lambda f: (f not in errors, f not in any_level))


def _errors_only(audit: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [f for f in audit if f.get("severity") == "error"]


def _selected(rel: str, patterns: Sequence[str]) -> bool:
    return not patterns or any(fnmatch.fnmatch(rel, p) or p in rel for p in patterns)


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
    """Stub and namespace sites as ``tests/...:line``, the form ``audit-stubs`` uses."""
    root = tests.resolve().parent
    for record in result["files"].values():
        for stub in [*record.get("stubs", []), *record.get("namespaces", [])]:
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
    preimport_file_imports: bool = False,
) -> dict[str, Any]:
    """Run the files under the tracker in ``python``; the runner's combined JSON.

    ``preimport=False`` skips importing torch and vLLM in the forking parent (for fixtures
    that need neither); ``preimport_file_imports`` also imports there the ``vllm.*`` modules
    the files import (``stub_runner._vllm_imports``).
    """
    spec = {
        "preimport": preimport,
        "preimport_file_imports": preimport_file_imports,
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


# ------------------------------------------------------------------ stand-ins

# the kinds ``audit-stubs --standins`` names in a stand-in finding's message
_STANDIN_MESSAGE = re.compile(
    r"the (types\.SimpleNamespace|argparse\.Namespace) the test builds at"
)


def is_standin_finding(finding: dict[str, Any]) -> bool:
    """A finding about a namespace stand-in: ``missing-field``, or a note (or a replayed
    ``self``'s ``missing-attribute``) whose message names the namespace the test builds."""
    return finding.get("kind") == "missing-field" or bool(
        _STANDIN_MESSAGE.search(finding.get("message") or "")
    )


def _last_link(finding: dict[str, Any]) -> str:
    """``metadata.prefill.max_query_len`` -> ``max_query_len``: the name the stand-in lacks."""
    return (finding.get("name") or "").rpartition(".")[2]


def namespace_errors(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One entry per (namespace site, attribute): every AttributeError raised on a namespace
    stand-in inside vLLM code, with the tests it was raised in and its ``group``:

    * ``drifts``: it ended a failing test (the error, or one it caused, is pytest's failure);
    * ``failing``: an attribute load (``ns.x``, not ``getattr``/``hasattr``) in a test that
      failed for another error: vLLM code caught it and went on, e.g. ``except Exception:
      hash8 = "nohash"``, and the test then failed on the result;
    * ``handled``: only in passing tests (``getattr`` defaults, ``hasattr``, ``try``,
      ``pytest.raises``) or only probed with a builtin call in failing ones.
    """
    raised: dict[tuple[str, str], dict[str, Any]] = {}
    for rel, record in result["files"].items():
        for ns in record.get("namespaces", []):
            for error in ns["attribute_errors"]:
                key = (ns["site"], error["name"])
                entry = raised.setdefault(
                    key,
                    {
                        "test_file": rel,
                        "site": ns["site"],
                        "kind": ns["kind"],
                        "attribute": error["name"],
                        "locations": [],
                        "how": [],
                        "tests": [],
                        "outcomes": [],
                        "group": "handled",
                    },
                )
                for field, value in (
                    ("locations", error["location"]),
                    ("how", error["how"]),
                    ("tests", error["test"]),
                    ("outcomes", error["outcome"]),
                ):
                    if value not in entry[field]:
                        entry[field].append(value)
                failing = error["outcome"] in FAILING
                if failing and error["ended_test"]:
                    entry["group"] = "drifts"
                elif failing and error["how"] == "attribute" and entry["group"] == "handled":
                    entry["group"] = "failing"
    return sorted(raised.values(), key=lambda e: (e["site"], e["attribute"]))


def _passing_reads(result: dict[str, Any]) -> dict[tuple[str, str], dict[str, str]]:
    """(namespace site, attribute) -> {passing test: vLLM ``file:line`` of its first read}."""
    reads: dict[tuple[str, str], dict[str, str]] = {}
    for record in result["files"].values():
        tests = record.get("tests", {})
        for ns in record.get("namespaces", []):
            for name, seen in ns["reads"].items():
                for test, where in seen.items():
                    if tests.get(test, {}).get("outcome") == "passed":
                        reads.setdefault((ns["site"], name), {})[test] = where
    return reads


def compare_standins(result: dict[str, Any], audit: list[dict[str, Any]]) -> dict[str, Any]:
    """The run's namespace record against ``audit-stubs --standins`` (module docstring).

    (a) every AttributeError raised on a namespace in vLLM code: named by an error-level
    finding on the same site whose chain ends in that attribute, only by a note, or missed
    (kept apart by ``namespace_errors``'s group: ``drifts``, ``failing``, ``handled``);
    (b) every error-level stand-in finding: contradicted when a passing test, one the finding
    names if it names any, read that attribute from that site in vLLM code without it raising
    there.
    """
    standin = [f for f in audit if is_standin_finding(f)]
    errors = [f for f in audit if f.get("severity") == "error"]
    notes = [f for f in audit if f.get("severity") != "error"]

    def naming(findings: list[dict[str, Any]], entry: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            f
            for f in findings
            if f.get("stub_location") == entry["site"] and _last_link(f) == entry["attribute"]
        ]

    judged: dict[str, list[dict[str, Any]]] = {
        f"{group}_{verdict}": []
        for group in ("drifts", "failing", "handled")
        for verdict in ("named_by_errors", "named_only_by_notes", "missed")
    }
    for entry in namespace_errors(result):
        group = entry["group"]
        by_errors, by_notes = naming(errors, entry), naming(notes, entry)
        if by_errors:
            verdict, kinds = "named_by_errors", sorted({f["kind"] for f in by_errors})
        elif by_notes:
            verdict, kinds = "named_only_by_notes", sorted({f["kind"] for f in by_notes})
        else:
            verdict, kinds = "missed", []
        near = sorted(
            {
                f["stub_location"]
                for f in standin
                if _last_link(f) == entry["attribute"]
                and (f.get("stub_location") or "").rpartition(":")[0]
                == entry["site"].rpartition(":")[0]
                and f["stub_location"] != entry["site"]
            }
        )
        judged[f"{group}_{verdict}"].append({**entry, "finding_kinds": kinds, "near": near})

    reads, raised = _passing_reads(result), namespace_errors(result)
    raised_in = {(e["site"], e["attribute"]): set(e["tests"]) for e in raised}
    run_sites = {n["site"] for r in result["files"].values() for n in r.get("namespaces", [])}
    error_findings = [f for f in standin if f.get("severity") == "error"]
    false_alarms, not_contradicted = [], 0
    for finding in error_findings:
        key = (finding.get("stub_location"), _last_link(finding))
        passed = {
            t: where
            for t, where in reads.get(key, {}).items()
            if _is_named_test(t, finding.get("tests") or ()) and t not in raised_in.get(key, ())
        }
        if passed:
            false_alarms.append({**finding, "read_by": dict(sorted(passed.items())[:5])})
        else:
            not_contradicted += 1
    return {
        "standin_findings": len(standin),
        "error_findings": len(error_findings),
        "error_findings_on_namespaces_that_ran": sum(
            1 for f in error_findings if f.get("stub_location") in run_sites
        ),
        "namespaces_built": len(run_sites),
        "false_alarms": false_alarms,
        "errors_not_contradicted": not_contradicted,
        "raised": len(raised),
        "drifts": sum(len(v) for k, v in judged.items() if k.startswith("drifts_")),
        "failing": sum(len(v) for k, v in judged.items() if k.startswith("failing_")),
        **judged,
    }


def summarize(result: dict[str, Any]) -> dict[str, Any]:
    """Counts over the whole run: files, tests by outcome, stubs, AttributeErrors."""
    outcomes: dict[str, int] = {}
    statuses: dict[str, int] = {}
    stubs = errors = namespaces = ns_errors = 0
    for record in result["files"].values():
        statuses[record["status"]] = statuses.get(record["status"], 0) + 1
        for test in record.get("tests", {}).values():
            outcomes[test["outcome"]] = outcomes.get(test["outcome"], 0) + 1
        stubs += len(record.get("stubs", []))
        errors += sum(len(s["attribute_errors"]) for s in record.get("stubs", []))
        namespaces += len(record.get("namespaces", []))
        ns_errors += sum(len(n["attribute_errors"]) for n in record.get("namespaces", []))
    return {
        "files": len(result["files"]),
        "file_status": statuses,
        "tests": outcomes,
        "stubs_created": stubs,
        "attribute_errors": errors,
        "namespace_sites": namespaces,
        "namespace_attribute_errors": ns_errors,
        "wall_s": result.get("wall_s"),
    }


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="judge_stubs_by_running",
        description="Run vLLM's object.__new__-stub tests under a tracker and judge an "
        "audit-stubs JSON against what they did.",
    )
    parser.add_argument(
        "--standins",
        action="store_true",
        help="run the files that name SimpleNamespace instead (namespaces are tracked in "
        "every run), and judge the audit's stand-in findings (audit-stubs --standins)",
    )
    parser.add_argument(
        "--files-from-audit",
        type=Path,
        metavar="AUDIT.json",
        help="with --tests: run the files where this audit reports a stand-in finding "
        "(any level; argparse.Namespace-only files too) instead",
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
    parser.add_argument(
        "--shard",
        metavar="I/N",
        help="run every N-th selected file starting at the I-th (0-based), so that N runs "
        "share the files; --merge joins their JSON",
    )
    parser.add_argument(
        "--merge",
        nargs="+",
        type=Path,
        metavar="RUN.json",
        help="join these runs (shards, or a run and the rest of it) into --json, then report",
    )
    parser.add_argument("--timeout-per-file", type=float, default=300.0)
    parser.add_argument(
        "--preimport-file-imports",
        action="store_true",
        help="import the vllm.* modules the selected files import once, in the forking "
        "parent (saves their import time in every file)",
    )
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
            if args.files_from_audit is not None:  # argparse-only files too
                files = files_with_standin_findings(_load(args.files_from_audit), args.tests)
                files = [f for f in files if _selected(f, args.files)]
            else:
                select = standin_files if args.standins else stub_files
                files = select(args.tests, args.files)
            if args.compare_audit is not None and args.standins:
                files = by_standin_findings(files, _load(args.compare_audit), args.tests)
            if args.shard:
                index, count = _shard(args.shard)
                files = files[index::count]
            if not files:
                what = "names SimpleNamespace" if args.standins else "calls object.__new__("
                raise JudgeError(f"{args.tests}: no (selected) test file {what}")
            workdir = args.workdir or Path(tempfile.mkdtemp(prefix="judge-stubs-"))
            workdir.mkdir(parents=True, exist_ok=True)
            result = run_tests(
                args.tests,
                args.python,
                files,
                args.timeout_per_file,
                workdir,
                preimport_file_imports=args.preimport_file_imports,
            )
            result["summary"] = summarize(result)
            args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")
        elif args.merge:
            result = merge_results([_load(path) for path in args.merge])
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
            audit = _load(args.compare_audit)
            if not isinstance(audit, list):
                raise JudgeError(f"{args.compare_audit}: not an audit-stubs --format json list")
            report = compare(result, audit)
            out = args.json.with_name(args.json.stem + ".compare.json")
            out.write_text(json.dumps(report, indent=1), encoding="utf-8")
            print(_report_text(report))
            print(f"comparison written to {out}")
            if args.standins:
                report = compare_standins(result, audit)
                out = args.json.with_name(args.json.stem + ".standins.compare.json")
                out.write_text(json.dumps(report, indent=1), encoding="utf-8")
                print(_standin_report_text(report))
                print(f"stand-in comparison written to {out}")
    except JudgeError as exc:
        print(f"judge_stubs_by_running: {exc}", file=sys.stderr)
        return 2
    return 0


def _shard(text: str) -> tuple[int, int]:
    index, _, count = text.partition("/")
    try:
        i, n = int(index), int(count)
    except ValueError:
        raise JudgeError(f"--shard {text}: expected I/N, e.g. 0/2") from None
    if not 0 <= i < n:
        raise JudgeError(f"--shard {text}: I must be in 0..N-1")
    return i, n


def merge_results(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One run of the files of several (shards of one selection); a file in two keeps the
    later record.  Wall time is the longest shard's: the shards ran side by side."""
    files: dict[str, Any] = {}
    for run in runs:
        if not isinstance(run, dict) or not isinstance(run.get("files"), dict):
            raise JudgeError("--merge: a run JSON has no 'files'")
        files.update(run["files"])
    walls = [run["wall_s"] for run in runs if isinstance(run.get("wall_s"), (int, float))]
    merged: dict[str, Any] = {"files": files, "shards": len(runs)}
    if walls:
        merged["wall_s"] = max(walls)
    partial = [run["partial"] for run in runs if run.get("partial")]
    if partial:
        merged["partial"] = "; ".join(partial)
    return merged


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


def _standin_report_text(report: dict[str, Any]) -> str:
    lines = [
        f"stand-in findings: {report['standin_findings']}, error-level "
        f"{report['error_findings']} ({report['error_findings_on_namespaces_that_ran']} on "
        f"namespace sites the run built; {report['namespaces_built']} sites built)",
        f"false alarms (a passing test's vLLM code read the flagged attribute from that "
        f"namespace): {len(report['false_alarms'])}",
        f"AttributeErrors raised on namespaces in vLLM code: {report['raised']} "
        f"(site, attribute); drifts (ended a failing test) {report['drifts']}: named by errors "
        f"{len(report['drifts_named_by_errors'])}, only by notes "
        f"{len(report['drifts_named_only_by_notes'])}, missed {len(report['drifts_missed'])}",
        f"raised by an attribute load in a test that failed otherwise (vLLM caught it) "
        f"{report['failing']}: named by errors {len(report['failing_named_by_errors'])}, only "
        f"by notes {len(report['failing_named_only_by_notes'])}, missed "
        f"{len(report['failing_missed'])}",
        f"handled (caught, probed with getattr/hasattr, expected): named by errors "
        f"{len(report['handled_named_by_errors'])}, only by notes "
        f"{len(report['handled_named_only_by_notes'])}, missed {len(report['handled_missed'])}",
    ]
    labels = [f"{g}_{v}" for g in ("drifts", "failing") for v in ("named_by_errors", "missed")]
    for label in [*labels, "drifts_named_only_by_notes", "failing_named_only_by_notes"]:
        for e in report[label]:
            near = f" (findings at {', '.join(e['near'])})" if e["near"] else ""
            lines.append(
                f"  {label}: {e['site']} .{e['attribute']} at {', '.join(e['locations'])}{near}"
            )
    for f in report["false_alarms"]:
        lines.append(
            f"  false alarm: {f['stub_location']} {f['kind']} {f['name']} "
            f"(read by {', '.join(f'{t} at {w}' for t, w in f['read_by'].items())})"
        )
    return "\n".join(lines)
