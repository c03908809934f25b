"""Only ``factories.analysis.readset`` sets attributes on a ``ReadSetAnalyzer``.

What a test arranges around a call travels to ``analyze()`` as a ``CallContext`` value
(``contracts/analyzer/test_call_context.py`` shows the answers do not depend on order); this
scan of the repository's source keeps anyone from going back to setting it on the shared
analyzer as attributes, the way ``audit.py`` once did.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


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
