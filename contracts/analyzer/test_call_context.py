"""What ``ReadSetAnalyzer.analyze`` returns is a function of its arguments and ``CallContext``.

The audit shares one analyzer (and its memo) across every stub of a run.  What one test
arranged around a call (patched methods and functions, ``pytest.raises``) used to be set on
that analyzer as attributes and left there, so a report could depend on which stub was audited
before.  These tests audit and analyse in both orders and expect the same answers, and keep
code outside ``factories.analysis.readset`` from setting attributes on an analyzer.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from factories.analysis.audit import StubAuditor
from factories.analysis.classes import ClassInfo
from factories.analysis.findings import FindingKind
from factories.analysis.readset import CallContext, MethodReport

REPO = Path(__file__).resolve().parents[2]

SOURCE = """
    def helper():
        return 1

    class Impl:
        def run(self):
            self.prepare()
            helper()
            return self.after

        def prepare(self):
            if self.mode:
                return self.config
            return None
"""

#: Patches a method and a function (whose replacement raises) and expects the raise.
ARRANGED = """
    from unittest.mock import Mock

    import pytest

    import vllm.mod as mod
    from vllm.mod import Impl

    class Stop(Exception):
        pass

    def test_arranged(monkeypatch):
        impl = object.__new__(Impl)
        monkeypatch.setattr(Impl, "prepare", lambda self: None)
        monkeypatch.setattr(mod, "helper", Mock(side_effect=Stop))
        with pytest.raises(Stop):
            impl.run()
"""

#: The same call with nothing arranged around it.
PLAIN = """
    from vllm.mod import Impl

    def test_plain():
        impl = object.__new__(Impl)
        impl.mode = True
        impl.run()
"""

ARRANGED_CONTEXT = CallContext(
    replaced=frozenset({("vllm.mod.Impl", "prepare")}),
    patched_functions=frozenset({"vllm.mod.helper"}),
    raising=frozenset({"vllm.mod.helper"}),
    expect_raise=True,
)


#: ``impl.mode = True``, as ``PLAIN`` sets it.
STUB = {"initial": ("mode",), "constants": {"mode": True}, "provided": ("mode",)}


def _tree(tmp_path: Path) -> tuple[Path, dict[str, Path]]:
    root = tmp_path / "src"
    (root / "vllm").mkdir(parents=True)
    (root / "vllm" / "__init__.py").write_text("")
    (root / "vllm" / "mod.py").write_text(textwrap.dedent(SOURCE))
    tests = {}
    for name, text in (("arranged", ARRANGED), ("plain", PLAIN)):
        tests[name] = tmp_path / f"test_{name}.py"
        tests[name].write_text(textwrap.dedent(text))
    return root, tests


def _impl(auditor: StubAuditor) -> ClassInfo:
    found = auditor.index.resolve(auditor.tree.module("vllm.mod"), "Impl")
    assert isinstance(found, ClassInfo)
    return found


def test_audit_findings_do_not_depend_on_which_stub_came_first(tmp_path):
    root, tests = _tree(tmp_path)
    by_order = []
    for order in (("arranged", "plain"), ("plain", "arranged")):
        auditor = StubAuditor(root)  # one per order; within it, both stubs share its analyzer
        by_order.append({name: auditor.audit_paths([tests[name]]).findings for name in order})
    assert by_order[0] == by_order[1]
    missing = {
        name: {f.name for f in findings if f.kind is FindingKind.MISSING_ATTRIBUTE}
        for name, findings in by_order[0].items()
    }
    # The context matters: patched out and raising before ``self.after``, nothing is missing.
    assert missing == {"arranged": set(), "plain": {"config", "after"}}


def test_analyze_is_a_function_of_the_method_and_its_context(tmp_path):
    root, _ = _tree(tmp_path)
    contexts = {"arranged": ARRANGED_CONTEXT, "plain": CallContext()}
    by_order: list[dict[str, MethodReport]] = []
    for order in (("arranged", "plain"), ("plain", "arranged")):
        auditor = StubAuditor(root)
        analyzer, impl = auditor.analyzer, _impl(auditor)
        reports = {}
        for name in order:
            reports[name] = analyzer.analyze(impl, "run", **STUB, context=contexts[name])
        # Asked again, on the same analyzer, after the other context: the same answer.
        for name in order:
            again = analyzer.analyze(impl, "run", **STUB, context=contexts[name])
            assert again == reports[name]
        by_order.append(reports)
    assert by_order[0] == by_order[1]
    required = {name: {a.name for a in r.required} for name, r in by_order[0].items()}
    assert required == {"arranged": set(), "plain": {"config", "after"}}


def _sets_an_analyzer_attribute(target: ast.expr) -> bool:
    """``analyzer.x = ...`` or ``<anything>.analyzer.x = ...``."""
    if not isinstance(target, ast.Attribute):
        return False
    owner = target.value
    return (isinstance(owner, ast.Name) and owner.id == "analyzer") or (
        isinstance(owner, ast.Attribute) and owner.attr == "analyzer"
    )


def test_nothing_outside_the_analyzer_sets_its_attributes():
    offenders = []
    for folder in ("factories", "tools", "contracts", "tests"):
        for path in sorted((REPO / folder).rglob("*.py")):
            if "readset" in path.relative_to(REPO).parts:
                continue
            text = path.read_text()
            if "analyzer" not in text:
                continue  # no name to set an attribute through: nothing to parse
            for node in ast.walk(ast.parse(text, str(path))):
                if isinstance(node, ast.Assign):
                    targets = node.targets
                elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                    targets = [node.target]
                else:
                    continue
                for target in targets:
                    elements = target.elts if isinstance(target, ast.Tuple) else [target]
                    if any(_sets_an_analyzer_attribute(t) for t in elements):
                        offenders.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert not offenders, "pass a CallContext to analyze() instead: " + ", ".join(offenders)


@pytest.mark.parametrize(
    ("statement", "sets"),
    [
        ("self.analyzer.patched_functions = functions", True),  # what audit.py did before
        ("auditor.analyzer.expect_raise = True", True),
        ("analyzer.detached = False", True),
        ("self.analyzer = ReadSetAnalyzer(index)", False),  # owning one is not setting on it
        ("report.analyzer_name = 'x'", False),
        ("context = CallContext(raising=raising)", False),
    ],
)
def test_the_scan_sees_an_attribute_set_on_an_analyzer(statement, sets):
    (node,) = ast.parse(statement).body
    assert _sets_an_analyzer_attribute(node.targets[0]) is sets
