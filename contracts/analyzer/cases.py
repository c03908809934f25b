"""One inline case of the stub audit: a tiny ``vllm/`` tree, one test file, the findings expected.

As mypy's ``teststubtest.py`` tables ``Case(stub, runtime, error)``, each table here lists
cases whose texts sit beside the findings they must produce, and one parametrized test runs a
table through ``run``.  A case states only the views of the findings it is about (None: not
checked); a view it states must match exactly, so a case pins both the false finding that is
gone and the genuinely missing field that is still reported.

The tree is written once per case into its own folder (the test file is read from disk, as
the audit reads a developer's tests); nothing is shared between cases.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping
from pathlib import Path

import attrs
import pytest

from factories.analysis.audit import AuditResult, StubAuditor
from factories.analysis.findings import Finding, FindingKind
from factories.cli import main

_DEF = re.compile(r"\s*(?:async\s+)?def\s+(\w+)")


def _frozen(value):
    return None if value is None else frozenset(value)


def _sorted(value):
    return None if value is None else tuple(sorted(value))


@attrs.frozen
class Case:
    """``source``: ``vllm/mod.py``'s text, or ``{file under vllm/: text}``; ``test``: the test
    file's text.  The expected views, each None where the case does not check it:

    - ``missing``/``possible``: ``{(method, field)}`` of the missing-attribute errors and of
      the possibly-missing notes; ``stale``: ``{field}`` of the stale-field findings;
    - ``errors``: every error-level finding, each as the tuple of its ``error_fields``
      (``kind`` reads as the kind's value);
    - ``in_tests``: every finding as (the function holding its stub, field), sorted;
    - ``unresolved``: the reasons of the unresolved-stub notes, sorted.

    ``files``: more files, by path relative to the case's folder (the source root is
    ``src/``); ``test_path``: where the test file goes; ``audited``: the path given to the
    audit (default ``test_path``).
    """

    id: str
    test: str
    source: str | Mapping[str, str] = ""
    missing: frozenset[tuple[str, str]] | None = attrs.field(default=None, converter=_frozen)
    possible: frozenset[tuple[str, str]] | None = attrs.field(default=None, converter=_frozen)
    stale: frozenset[str] | None = attrs.field(default=None, converter=_frozen)
    errors: frozenset[tuple] | None = attrs.field(default=None, converter=_frozen)
    error_fields: tuple[str, ...] = ("class_name", "method", "name")
    error_says: str | None = None
    in_tests: tuple[tuple[str, str], ...] | None = attrs.field(default=None, converter=_sorted)
    unresolved: tuple[str, ...] | None = attrs.field(default=None, converter=_sorted)
    files: Mapping[str, str] = attrs.field(factory=dict)
    test_path: str = "test_stub.py"
    audited: str | None = None


def cases(*table: Case) -> list:
    """A table as ``pytest.mark.parametrize`` arguments, each case under its own id."""
    ids = [case.id for case in table]
    assert len(set(ids)) == len(ids), "two cases of one table share an id"
    return [pytest.param(case, id=case.id) for case in table]


def write_tree(folder: Path, files: Mapping[str, str]) -> None:
    """Write ``files`` (path relative to ``folder`` -> text, dedented) under ``folder``."""
    for rel, text in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def audit(folder: Path, case: Case) -> AuditResult:
    """Write ``case``'s tree under ``folder`` and audit its test file (or ``audited``)."""
    modules = {"mod.py": case.source} if isinstance(case.source, str) else case.source
    tree = {"src/vllm/__init__.py": ""}
    tree.update({f"src/vllm/{name}": text for name, text in modules.items()})
    tree.update(case.files)
    tree[case.test_path] = case.test
    write_tree(folder, tree)
    return StubAuditor(folder / "src").audit_paths([folder / (case.audited or case.test_path)])


def _pairs(result: AuditResult, kind: FindingKind) -> set[tuple[str, str]]:
    return {(f.method, f.name) for f in result.findings if f.kind is kind}


def _field(finding: Finding, name: str):
    return finding.kind.value if name == "kind" else getattr(finding, name)


def _holder(finding: Finding) -> str:
    """The function whose body holds the finding's stub: the nearest ``def`` above it that
    is indented less than the stub's line."""
    lines = Path(finding.stub_location.path).read_text(encoding="utf-8").splitlines()
    stub_line = lines[finding.stub_location.line - 1]
    indent = len(stub_line) - len(stub_line.lstrip())
    for line in reversed(lines[: finding.stub_location.line - 1]):
        match = _DEF.match(line)
        if match and len(line) - len(line.lstrip()) < indent:
            return match.group(1)
    return "<module>"


def check(case: Case, result: AuditResult) -> None:
    """Assert every view ``case`` states; the message names the view and all findings."""
    found = [f"{f.kind.value} {f.class_name}.{f.method}:{f.name}" for f in result.findings]
    views = {
        "missing": lambda: _pairs(result, FindingKind.MISSING_ATTRIBUTE),
        "possible": lambda: _pairs(result, FindingKind.POSSIBLY_MISSING_ATTRIBUTE),
        "stale": lambda: {f.name for f in result.findings if f.kind is FindingKind.STALE_FIELD},
        "errors": lambda: {
            tuple(_field(f, name) for name in case.error_fields) for f in result.errors
        },
        "in_tests": lambda: tuple(sorted((_holder(f), f.name) for f in result.findings)),
        "unresolved": lambda: tuple(
            sorted(f.vllm_side for f in result.findings if f.kind is FindingKind.UNRESOLVED_STUB)
        ),
    }
    for view, actual in views.items():
        expected = getattr(case, view)
        if expected is not None:
            got = actual()
            assert got == expected, (view, got, found)
    if case.error_says is not None:
        assert case.error_says in result.errors[0].message, found


def run(folder: Path, case: Case) -> AuditResult:
    """Audit ``case`` in ``folder`` and check it."""
    result = audit(folder, case)
    check(case, result)
    return result


def cli(root: Path, *args: str, capsys) -> tuple[int, str, str]:
    """``audit-stubs --vllm-src root ARGS`` in-process: its exit status (argparse's too) and
    what it printed."""
    try:
        status = main(["--vllm-src", str(root), *args])
    except SystemExit as exc:
        status = int(exc.code or 0)
    out, err = capsys.readouterr()
    return status, out, err
