"""The package walks ASTs only through ``factories.analysis._walk``: ruff's banned-api rule
(TID251, configured in pyproject.toml) fails the lint on ``ast.walk`` or
``ast.iter_child_nodes`` in ``factories/``, and leaves tests, contracts and tools alone (they
walk a tree once). Each case lints a one-line probe as if it sat at that path."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

CASES = [
    ("factories/analysis/_probe.py", "import ast\nx = list(ast.walk(ast.parse('1')))\n", True),
    ("factories/_probe.py", "import ast\nx = list(ast.iter_child_nodes(ast.parse('1')))\n", True),
    ("factories/analysis/_probe.py", "from factories.analysis._walk import walk\n", False),
    ("tests/_probe.py", "import ast\nx = list(ast.walk(ast.parse('1')))\n", False),
    ("tools/_probe.py", "import ast\nx = list(ast.walk(ast.parse('1')))\n", False),
]


@pytest.mark.parametrize(("path", "source", "banned"), CASES)
def test_ast_walk_is_banned_in_the_package_only(path: str, source: str, banned: bool) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--select", "TID251", "--stdin-filename", path],
        input=source,
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert ("TID251" in done.stdout) is banned, done.stdout + done.stderr
