"""The import direction of ``factories``: each sub-package imports only those below it.

The table is the one home of the layering that docs/DESIGN.md draws. A sub-package may import
its own modules and any sub-package of a lower rank, never one of the same or a higher rank, so
the graph stays acyclic and each concern can be read bottom-up. Every way one module reaches
another counts: imports inside functions, under ``if TYPE_CHECKING:`` (an annotation that names
a higher layer is a dependency on it, even if only the type checker follows it), relative
imports (resolved against the importing module's package), and ``-m factories.x.y`` in an
argument list (a subprocess that runs that module starts it, just as an import would).
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

FACTORIES = Path(__file__).resolve().parents[2] / "factories"

#: Sub-package (or top-level module) of ``factories`` -> rank; lower ranks are imported by higher.
LAYERS = {
    "errors": 0,  # every exception; stdlib only
    "locations": 0,  # where caches live; stdlib only (fetch_vllm runs before any install)
    "analysis": 1,  # the AST analyzer; attrs only
    "aiter": 2,  # AITER's numbers, signatures, emulation, validator, spy, backend choice
    "stubs": 3,  # stub specs, drift check, builders, the FP8 path driver
    "testing": 3,  # pytest glue
    "evaluation": 4,  # the analyzer measured: release history, running vLLM's tests
    "mutation": 4,  # broken copies of vLLM and broken AITER kernels
    "accuracy": 5,  # reference, tolerances, comparison, run, calibration, kill matrix
    "cli": 6,  # audit-stubs: the analyzer on test files, or on this project's specs
}


def _layer(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "factories" or len(parts) == 1:
        return None
    return parts[1]


def _absolute(node: ast.ImportFrom, package: str) -> str:
    """The module a ``from ... import`` names, a relative one resolved against ``package``."""
    if node.level == 0:
        return node.module or ""
    parts = package.split(".")
    base = parts[: len(parts) - (node.level - 1)] if node.level <= len(parts) else []
    return ".".join(base + ([node.module] if node.module else []))


def _launched(node: ast.List | ast.Tuple | ast.Call) -> Iterator[str]:
    """``factories.…`` modules that an argument list runs with ``-m`` (``[py, "-m", "x.y"]``)."""
    items = node.args if isinstance(node, ast.Call) else node.elts
    for flag, target in itertools.pairwise(items):
        if (
            isinstance(flag, ast.Constant)
            and flag.value == "-m"
            and isinstance(target, ast.Constant)
            and isinstance(target.value, str)
            and target.value.startswith("factories.")
        ):
            yield target.value


def _imports(tree: ast.Module, package: str) -> Iterator[tuple[int, str]]:
    """``(line, module)`` for every module the code imports or launches, wherever it does."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = _absolute(node, package)
            if module == "factories":  # ``from factories import cli``: each name is a module
                for alias in node.names:
                    yield node.lineno, f"{module}.{alias.name}"
            else:
                yield node.lineno, module
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, (ast.List, ast.Tuple, ast.Call)):
            for module in _launched(node):
                yield node.lineno, module


def _module_and_package(path: str) -> tuple[str, str]:
    """``factories/aiter/batch.py`` -> (``factories.aiter.batch``, ``factories.aiter``)."""
    parts = Path(path).with_suffix("").parts
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), ".".join(parts[:-1])
    return ".".join(parts), ".".join(parts[:-1])


def violations(path: str, source: str) -> list[str]:
    """``path:line: A imports B`` for each import that goes sideways or up.

    ``path`` is the file's path from the repository root (``factories/aiter/batch.py``): it
    says which layer the code is in and which package its relative imports start from.
    """
    module, package = _module_and_package(path)
    layer = _layer(module)
    found = []
    for lineno, imported in _imports(ast.parse(source), package):
        target = _layer(imported)
        if target is None or target == layer:
            continue
        if target not in LAYERS:
            found.append(f"{path}:{lineno}: {imported} is in no layer of LAYERS")
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
        rel = path.relative_to(FACTORIES.parent).as_posix()
        if rel != "factories/__init__.py":
            problems += violations(rel, path.read_text(encoding="utf-8"))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    ("path", "source", "bad"),
    [
        ("factories/accuracy/run.py", "from factories.aiter.layout import V_HEAD_DIM", 0),
        ("factories/aiter/batch.py", "from factories.accuracy import run_fp8_prefill", 1),
        ("factories/stubs/specs.py", "import factories.testing.releases", 1),
        ("factories/analysis/x.py", "def f():\n    from factories.stubs.specs import ALL_SPECS", 1),
        (
            "factories/errors.py",
            "if TYPE_CHECKING:\n    from factories.analysis.findings import F",
            1,
        ),
        (
            "factories/stubs/drift.py",
            "if TYPE_CHECKING:\n    from factories.aiter import layout",
            0,
        ),
        ("factories/aiter/batch.py", "from factories.kitchen import sink", 1),
        ("factories/aiter/batch.py", "from .layout import V_HEAD_DIM", 0),
        ("factories/aiter/emulation/kernels.py", "from .arithmetic import KernelArithmetic", 0),
        ("factories/aiter/emulation/kernels.py", "from ..layout import V_HEAD_DIM", 0),
        ("factories/aiter/emulation/kernels.py", "from ...accuracy import run", 1),
        ("factories/aiter/emulation/kernels.py", "from ...stubs.specs import ALL_SPECS", 1),
        ("factories/analysis/audit.py", "from ..aiter import layout", 1),
        ("factories/analysis/audit.py", "from .. import errors", 0),
        ("factories/analysis/audit.py", "from .. import cli", 1),
        ("factories/analysis/audit.py", "from factories import cli, errors", 1),
        ("factories/aiter/__init__.py", "from .emulation import planner", 0),
        ("factories/aiter/__init__.py", "from ..stubs import specs", 1),
        ("factories/accuracy/run.py", "from ..analysis import findings", 0),
        ("factories/analysis/judge.py", 'run([py, "-m", "factories.testing.stub_runner", f])', 1),
        ("factories/evaluation/judge.py", 'run([py, "-m", "factories.testing.stub_runner", f])', 0),
        ("factories/testing/x.py", 'subprocess.run((py, "-m", "factories.cli", "--help"))', 1),
        ("factories/testing/x.py", 'f(sys.executable, "-m", "factories.accuracy.run")', 1),
        ("factories/testing/x.py", 'run([py, "-m", "pytest", "factories.cli"])', 0),
        ("factories/testing/x.py", 'run([py, "-c", "factories.cli"])', 0),
    ],
)
def test_violation_cases(path, source, bad):
    assert len(violations(path, source)) == bad
