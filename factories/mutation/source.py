"""Mutated temporary copies of a vLLM source tree, for tests that prove a check can fail.

Every contract in this project has a test that breaks vLLM in one line and expects the check to
notice.  The copy is hard-linked (``cp -al``: fast, no extra disk) except for the mutated file,
which is written fresh, so the original tree is never touched.  A mutation whose ``old`` text
is not found exactly once raises: a mutant that silently stops applying would make the test
pass for the wrong reason.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import attrs

from factories.errors import MutationDoesNotApplyError


@attrs.frozen
class Mutation:
    """Replace ``old`` (which must occur exactly ``count`` times) by ``new`` in ``relpath``."""

    relpath: str
    old: str
    new: str
    count: int = 1
    description: str = ""

    def apply_to_text(self, text: str) -> str:
        found = text.count(self.old)
        if found != self.count:
            raise MutationDoesNotApplyError(
                f"{self.relpath}: expected {self.count} occurrence(s) of {self.old!r}, "
                f"found {found} ({self.description or 'mutation'})"
            )
        return text.replace(self.old, self.new)


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _sources_only(folder: str, names: list[str]) -> set[str]:
    """Skip caches and binaries (vLLM wheels carry large .so files): the analyzer and the
    mutant loader read Python sources only."""
    base = Path(folder)
    return {
        n
        for n in names
        if n == "__pycache__" or ((base / n).is_file() and not n.endswith((".py", ".pyi")))
    }


@contextlib.contextmanager
def mutated_tree(
    root: Path,
    *mutations: Mutation,
    packages: tuple[str, ...] = ("vllm",),
    data_files: bool = False,
) -> Iterator[Path]:
    """A temporary root holding ``packages`` of ``root`` with ``mutations`` applied.

    Python sources only, unless ``data_files`` (a tree that is imported whole, not only
    analysed: vLLM reads a few JSON and template files at import)."""
    with tempfile.TemporaryDirectory(prefix="vllm-mutant-") as tmp:
        dest = Path(tmp)
        for package in packages:
            shutil.copytree(
                root / package,
                dest / package,
                copy_function=_link_or_copy,
                ignore=(lambda folder, names: {"__pycache__"} & set(names))
                if data_files
                else _sources_only,
            )
        for mutation in mutations:
            target = dest / mutation.relpath
            text = target.read_text(encoding="utf-8")  # earlier mutations of the file included
            target.unlink()  # a hard link: never write through it into the original
            target.write_text(mutation.apply_to_text(text), encoding="utf-8")
        yield dest


def mutate_file(path: Path, dest_dir: Path, *mutations: Mutation) -> Path:
    """A copy of one test file with ``mutations`` applied in order, written under ``dest_dir``
    with the same name (the original stays untouched for the other tests)."""
    text = path.read_text(encoding="utf-8")
    for mutation in mutations:
        text = mutation.apply_to_text(text)
    dest_dir.mkdir(parents=True, exist_ok=True)
    target = dest_dir / path.name
    target.write_text(text, encoding="utf-8")
    return target


_MUTANT_SERIAL = iter(range(1_000_000))


@contextlib.contextmanager
def mutated_module(
    module_name: str, *mutations: Mutation, root: Path | None = None
) -> Iterator[object]:
    """Import a mutated copy of a vLLM module, beside the real one.

    ``root`` is the folder holding the ``vllm/`` whose file is mutated: a pinned release source
    (``factories.testing.selfcheck.selfcheck_source()``, what the contracts' self-proofs use, so
    a refactor of the vLLM under test never moves their anchors), or by default the folder of
    the already-importable module itself.  The package tree is hard-linked into a temporary root
    with the mutations applied, and the mutated file is executed as a new module (unique name,
    registered in ``sys.modules`` for the block so dataclasses and ``inspect`` find it).  Its
    imports resolve to the real, already-imported vLLM, so this costs one module execution, not
    a vLLM import.  ``inspect.getsourcefile`` of its classes points into the mutated tree, which
    is what the factories' drift check and the analyzer read.
    """
    parts = module_name.split(".")
    if root is None:
        real = importlib.import_module(module_name)
        real_file = Path(real.__file__ or "")
        root = real_file.parents[len(parts) - 1]
    else:
        root = Path(root)
        base = root.joinpath(*parts)
        real_file = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
        if not real_file.is_file():
            raise FileNotFoundError(f"{module_name} has no source file under {root}")
    relpath = real_file.relative_to(root).as_posix()
    for mutation in mutations:
        if mutation.relpath != relpath:
            raise ValueError(f"{mutation.relpath} is not the file of {module_name} ({relpath})")
    with mutated_tree(root, *mutations, packages=(parts[0],)) as tree:
        name = f"{module_name}__mutant{next(_MUTANT_SERIAL)}"
        spec = importlib.util.spec_from_file_location(name, tree / relpath)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
            yield module
        finally:
            sys.modules.pop(name, None)
