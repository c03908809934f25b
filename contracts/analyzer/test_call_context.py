"""What ``ReadSetAnalyzer.analyze`` returns is a function of its arguments and ``CallContext``.

The audit shares one analyzer (and its memo) across every stub of a run.  What one test
arranged around a call (patched methods and functions, ``pytest.raises``) used to be set on
that analyzer as attributes and left there, so a report could depend on which stub was audited
before.  These tests audit and analyse in both orders and expect the same answers; the scan
that keeps code outside ``factories.analysis.readset`` from setting attributes on an analyzer
is a repository rule (``tests/repository/test_analyzer_ownership.py``).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

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
