"""Each package of ``factories`` says, in its ``__init__.py`` docstring, what every module does.

docs/DESIGN.md sends a reader to those docstrings ("each package's ``__init__.py`` says what its
modules do"), so a module that none of them names is one a reader cannot find. The check is by
name only: every module or sub-package must appear in backticks (``name``, ``name.py``,
``name/`` or the dotted ``factories.pkg.name``) in its package's docstring.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

FACTORIES = Path(__file__).resolve().parents[2] / "factories"
_BACKTICKED = re.compile(r"`+([^`]+?)`+")


def _packages() -> list[Path]:
    return sorted(p.parent for p in FACTORIES.rglob("__init__.py") if "__pycache__" not in p.parts)


def _members(package: Path) -> set[str]:
    names = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    names |= {p.name for p in package.iterdir() if (p / "__init__.py").is_file()}
    return names


def named_in(docstring: str, dotted_package: str) -> set[str]:
    """Module names ``docstring`` names in backticks, as bare names of ``dotted_package``."""
    named = set()
    for token in _BACKTICKED.findall(docstring):
        token = token.strip().lstrip("~").removesuffix("/").removesuffix(".py")
        if token.startswith(f"{dotted_package}."):
            token = token[len(dotted_package) + 1 :]
        named.add(token.split(".")[0])
    return named


def unnamed(package: Path) -> list[str]:
    """Modules of ``package`` its ``__init__.py`` docstring does not name."""
    dotted = ".".join(package.relative_to(FACTORIES.parent).parts)
    docstring = ast.get_docstring(ast.parse((package / "__init__.py").read_text("utf-8"))) or ""
    return sorted(_members(package) - named_in(docstring, dotted))


@pytest.mark.parametrize(
    "package", _packages(), ids=lambda p: ".".join(p.relative_to(FACTORIES.parent).parts)
)
def test_every_module_is_named_in_its_package_docstring(package):
    assert unnamed(package) == [], f"name these in {package / '__init__.py'}'s docstring"


@pytest.mark.parametrize(
    ("docstring", "names"),
    [
        ("``readset`` walks method bodies", {"readset"}),
        ("``readset.py`` and ``extraction/``", {"readset", "extraction"}),
        (":mod:`~factories.analysis.values` holds values", {"values"}),
        ("``factories.analysis.audit.StubAuditor``", {"audit"}),
        ("readset walks method bodies", set()),
    ],
)
def test_named_in_cases(docstring, names):
    assert named_in(docstring, "factories.analysis") == names
