"""The audit runs on every Python the package claims (``requires-python``), with attrs only.

pre-commit installs ``audit-stubs`` into whatever Python a vLLM checkout uses, so the modules the
console script loads must not use syntax or stdlib newer than the oldest Python allowed, nor
import anything but the standard library and attrs.  The checks read the source (no second
interpreter needed): ``ast.parse(feature_version=...)`` rejects newer grammar, and a short list
of stdlib names added after 3.10 catches the likely slips.
"""

from __future__ import annotations

import ast
import functools
import sys
from pathlib import Path

import attrs
import pytest

REPO = Path(__file__).resolve().parents[2]
OLDEST = (3, 10)
ENTRY_POINTS = ("factories/cli.py", "tools/audit_stubs.py")
# Stdlib names that exist only from 3.11 on, as ``module`` or ``module.attribute``.
NEWER_STDLIB = frozenset(
    {
        "tomllib",
        "wsgiref.types",
        "typing.Self",
        "typing.LiteralString",
        "typing.Never",
        "typing.assert_never",
        "typing.reveal_type",
        "typing.override",
        "typing.TypeAliasType",
        "enum.StrEnum",
        "enum.verify",
        "datetime.UTC",
        "itertools.batched",
        "asyncio.TaskGroup",
        "contextlib.chdir",
        "hashlib.file_digest",
    }
)
NEWER_NAMES = frozenset({"ExceptionGroup", "BaseExceptionGroup"})


def _module_file(dotted: str) -> Path | None:
    base = REPO.joinpath(*dotted.split("."))
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


@attrs.frozen
class Module:
    """One module of the closure as the checks see it: the names it uses (imported, and
    ``name``/``name.attr`` anywhere) and the top-level packages each absolute import names,
    by line."""

    names: frozenset[str]
    imports: tuple[tuple[int, frozenset[str]], ...]


@functools.cache
def audit_closure() -> dict[Path, Module]:
    """Every project module the console script can load, parsed as the oldest Python would
    (the parse is the grammar check) and walked once: the checks below share this one result.

    Imports inside functions count too (``cli`` imports the specs lazily), and so do the
    ``__init__.py`` of every package on the way.
    """
    todo = [REPO / p for p in ENTRY_POINTS]
    seen: dict[Path, Module] = {}
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        tree = ast.parse(path.read_bytes(), str(path), feature_version=OLDEST)
        seen[path] = module = _read(tree)
        for name in module.names:
            parts = name.split(".")
            if parts[0] != "factories":
                continue
            for cut in range(len(parts), 0, -1):
                found = _module_file(".".join(parts[:cut]))
                if found is not None:
                    todo.append(found)
                    break
        todo.extend(
            folder / "__init__.py"
            for folder in path.parents
            if REPO in folder.parents and (folder / "__init__.py").is_file()
        )
    return seen


def _read(tree: ast.Module) -> Module:
    """``tree``'s ``Module``, in one walk."""
    names: set[str] = set()
    imports: list[tuple[int, frozenset[str]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
            imports.append((node.lineno, frozenset(a.name.split(".")[0] for a in node.names)))
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
            imports.append((node.lineno, frozenset({node.module.split(".")[0]})))
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            names.add(f"{node.value.id}.{node.attr}")
        elif isinstance(node, ast.Name):
            names.add(node.id)
    return Module(frozenset(names), tuple(imports))


def test_closure_is_the_analyzer_and_not_the_torch_side():
    files = {str(p.relative_to(REPO)) for p in audit_closure()}
    assert "factories/analysis/readset/__init__.py" in files
    assert not any(f.startswith(("factories/aiter", "factories/accuracy")) for f in files), files


def test_audit_modules_parse_as_the_oldest_supported_python():
    assert audit_closure()  # audit_closure parses with feature_version=OLDEST


def test_audit_modules_use_no_stdlib_newer_than_the_oldest_python():
    for path, module in audit_closure().items():
        used = module.names
        assert not used & NEWER_STDLIB, f"{path}: {sorted(used & NEWER_STDLIB)}"
        assert not used & NEWER_NAMES, f"{path}: {sorted(used & NEWER_NAMES)}"


def test_audit_modules_import_only_the_stdlib_and_attrs():
    allowed = set(sys.stdlib_module_names) | {"attrs", "factories", "__future__"}
    for path, module in audit_closure().items():
        for lineno, tops in module.imports:
            assert tops <= allowed, f"{path}:{lineno} imports {sorted(tops - allowed)}"


def test_requires_python_has_no_upper_cap():
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["requires-python"] == f">={OLDEST[0]}.{OLDEST[1]}"
