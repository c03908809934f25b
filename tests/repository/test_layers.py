"""The import direction of ``factories``: each sub-package imports only those below it.

The table is the one home of the layering that docs/DESIGN.md draws. A sub-package may import
its own modules and any sub-package of a lower rank, never one of the same or a higher rank, so
the graph stays acyclic and each concern can be read bottom-up. Imports under
``if TYPE_CHECKING:`` are annotations, not dependencies, and are not counted.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

FACTORIES = Path(__file__).resolve().parents[2] / "factories"

#: Sub-package (or top-level module) of ``factories`` -> rank; lower ranks are imported by higher.
LAYERS = {
    "errors": 0,  # every exception; stdlib only
    "analysis": 1,  # the AST analyzer; attrs only
    "aiter": 2,  # AITER's numbers, signatures, emulation, validator, spy, backend choice
    "stubs": 3,  # stub specs, drift check, builders, the FP8 path driver
    "testing": 3,  # pytest glue
    "mutation": 4,  # broken copies of vLLM and broken AITER kernels
    "accuracy": 5,  # reference, tolerances, comparison, run, calibration, kill matrix
    "cli": 6,  # audit-stubs: the analyzer on test files, or on this project's specs
}


def _layer(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "factories" or len(parts) == 1:
        return None
    return parts[1]


def _runtime_imports(tree: ast.Module):
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(n) for child in node.body for n in ast.walk(child))
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name


def violations(layer: str, source: str, path: str) -> list[str]:
    """``path:line: A imports B`` for each import that goes sideways or up."""
    found = []
    for lineno, module in _runtime_imports(ast.parse(source)):
        target = _layer(module)
        if target is None or target == layer:
            continue
        if target not in LAYERS:
            found.append(f"{path}:{lineno}: {module} is in no layer of LAYERS")
        elif LAYERS[target] >= LAYERS[layer]:
            found.append(f"{path}:{lineno}: {layer} (rank {LAYERS[layer]}) imports {target}")
    return found


def test_every_module_is_in_a_layer():
    names = {p.stem if p.is_file() else p.name for p in FACTORIES.iterdir()}
    names -= {"__init__", "__pycache__"}
    assert names == set(LAYERS), "add the new sub-package to LAYERS (and to docs/DESIGN.md)"


def test_imports_go_down_only():
    problems = []
    for path in sorted(FACTORIES.rglob("*.py")):
        parts = path.relative_to(FACTORIES).with_suffix("").parts
        if parts == ("__init__",):
            continue
        problems += violations(parts[0], path.read_text(encoding="utf-8"), str(path))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    ("layer", "source", "bad"),
    [
        ("accuracy", "from factories.aiter.layout import V_HEAD_DIM", 0),
        ("aiter", "from factories.accuracy import run_fp8_prefill", 1),
        ("stubs", "import factories.testing.releases", 1),
        ("analysis", "def f():\n    from factories.stubs.specs import ALL_SPECS", 1),
        ("errors", "if TYPE_CHECKING:\n    from factories.analysis.findings import Finding", 0),
        ("aiter", "from factories.kitchen import sink", 1),
        ("aiter", "from .layout import V_HEAD_DIM", 0),
    ],
)
def test_violation_cases(layer, source, bad):
    assert len(violations(layer, source, "x.py")) == bad
