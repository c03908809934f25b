"""Mutated temporary copies of a vLLM source tree, for tests that prove a check can fail.

Every contract in this project has a test that breaks vLLM in one line and expects the check to
notice.  The copy is hard-linked (``cp -al``: fast, no extra disk) except for the mutated file,
which is written fresh, so the original tree is never touched.  A mutation whose ``old`` text
is not found exactly once raises: a mutant that silently stops applying would make the test
pass for the wrong reason.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import attrs


class MutationDoesNotApply(AssertionError):
    """The text to replace is missing or ambiguous in this vLLM version."""


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
            raise MutationDoesNotApply(
                f"{self.relpath}: expected {self.count} occurrence(s) of {self.old!r}, "
                f"found {found} ({self.description or 'mutation'})"
            )
        return text.replace(self.old, self.new)


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


@contextlib.contextmanager
def mutated_tree(root: Path, *mutations: Mutation, packages: tuple[str, ...] = ("vllm",)) -> Iterator[Path]:
    """A temporary root holding ``packages`` of ``root`` with ``mutations`` applied."""
    with tempfile.TemporaryDirectory(prefix="vllm-mutant-") as tmp:
        dest = Path(tmp)
        for package in packages:
            shutil.copytree(
                root / package,
                dest / package,
                copy_function=_link_or_copy,
                ignore=shutil.ignore_patterns("__pycache__"),
            )
        for mutation in mutations:
            target = dest / mutation.relpath
            text = (root / mutation.relpath).read_text(encoding="utf-8")
            target.unlink()
            target.write_text(mutation.apply_to_text(text), encoding="utf-8")
        yield dest


def mutate_file(path: Path, mutation: Mutation, dest_dir: Path) -> Path:
    """A mutated copy of one test file, written under ``dest_dir`` with the same name."""
    dest_dir.mkdir(parents=True, exist_ok=True)
    target = dest_dir / path.name
    target.write_text(mutation.apply_to_text(path.read_text(encoding="utf-8")), encoding="utf-8")
    return target
