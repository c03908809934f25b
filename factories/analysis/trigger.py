"""The source-change trigger: which stubs a change to vLLM modules can break.

Stub drift is caused by commits to ``vllm/``, not to ``tests/``: a method starts reading a new
field and every ``object.__new__`` stub of its class is now short of it.  So a changed vLLM
file is not something to audit but a trigger: the audit runs on exactly the test files holding
a stub that *depends* on a changed module.

A stub depends on (``StubAuditor.dependencies``) every module its class name is resolved
through (the test's import, re-exports, aliases, a module that no longer exists), the module of
every class in its MRO (the methods the test calls, their bases, properties and helpers
followed through ``self.m()``/``super()`` all live in MRO classes, and a base's body decides
member lookup and the literal class defaults that prune branches), the modules those bases are
resolved through, and those of the classes a test patches.  That is the reverse index, built by
the analyzer itself.

Building it for a whole ``tests/`` tree costs the whole-tree audit (~6 s on vLLM 0.34.0), too
slow for a commit hook and not worth a cache that can go stale. ``TextScan.candidate_files`` is
a cheap, *sound* text pre-filter: a stub can depend on module ``m`` only through a chain of
named references that starts at ``m``'s own name (an import of ``m`` spells its last component;
a bare ``from . import x`` is resolved from the file's path) and goes on through the names that
statements mentioning it bind (``from .m import Base``, ``class Sub(Base)``, ``Alias = Sub``,
``import a.m as z``), ending in the test file. The closure of those names over the vLLM tree is
computed on text and on the shallow statements of the few files that mention them; test files
holding ``object.__new__`` and one of the names are the candidates. The decision is still the
analyzer's: ``StubAuditor.triggered`` audits the candidates' stubs and keeps the files with a
stub whose dependencies meet the changed modules (``dependent_stubs`` is that rule on stubs
already extracted). ``contracts/analysis/test_trigger_and_baseline.py``
(``test_the_pre_filter_never_drops_a_dependent_file_on_0_34``) checks on vLLM 0.34.0 that the
pre-filter never drops a file the full index says depends on a module.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import attrs

from factories.analysis._walk import walk
from factories.analysis.extraction import Stub
from factories.analysis.source_tree import ModuleInfo, SourceTree, shallow_statements
from factories.errors import SourceError

_STUB_MARK = b"object.__new__("
_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
# Above this many names to look for, one word index of the tree beats a scan per name.
_SCAN_LIMIT = 48
# More changed modules than this (``pre-commit run --all-files`` hands over all of vllm/): the
# closure would parse most of the tree, so every stub file is a candidate (the analyzer decides).
_MANY_CHANGED = 64
_BARE_RELATIVE = re.compile(rb"^[ \t]*from[ \t]+(\.+)[ \t]+import\b", re.MULTILINE)


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""  # unreadable: the audit of the file (if any) reports it


def _py_files(folder: Path) -> list[Path]:
    return sorted(
        Path(dirpath, name)
        for dirpath, _, names in os.walk(folder)
        for name in names
        if name.endswith(".py")
    )


def _mentions(text: bytes, words: Iterable[str]) -> bool:
    """Whether ``text`` holds one of ``words`` as a whole word (substring test first: the
    C-speed ``in`` rejects almost every file, the regex only confirms)."""
    for word in words:
        raw = word.encode()
        if raw in text and re.search(
            rb"(?<![A-Za-z0-9_])" + re.escape(raw) + rb"(?![A-Za-z0-9_])", text
        ):
            return True
    return False


def _words(node: ast.AST) -> set[str]:
    """Identifiers a statement part spells: names, attribute names, dotted strings' parts."""
    out: set[str] = set()
    for sub in walk(node):
        if isinstance(sub, ast.Name):
            out.add(sub.id)
        elif isinstance(sub, ast.Attribute):
            out.add(sub.attr)
        elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            out.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", sub.value))
    return out


def _edges(module: ModuleInfo) -> list[tuple[frozenset[str], str, bool]]:
    """Each binding a shallow statement of ``module`` makes, as (the words that statement
    spells, the name it binds, whether it is a bare relative import ``from . import x``): a
    reference to any of those words may continue through the bound name."""
    out: list[tuple[frozenset[str], str, bool]] = []
    for stmt in shallow_statements(module.tree.body):
        if isinstance(stmt, ast.ClassDef):
            words = set().union(*(_words(b) for b in [*stmt.bases, *stmt.keywords]))
            out.append((frozenset(words), stmt.name, False))
        elif isinstance(stmt, ast.ImportFrom):
            bare = stmt.module is None and stmt.level > 0
            parts = set((stmt.module or "").split(".")) - {""}
            for alias in stmt.names:
                if alias.name != "*":
                    out.append((frozenset(parts | {alias.name}), alias.asname or alias.name, bare))
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    out.append((frozenset(alias.name.split(".")), alias.asname, False))
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            words = frozenset(_words(stmt.value))
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                out.extend((words, n.id, False) for n in walk(target) if isinstance(n, ast.Name))
    return out


@attrs.define
class TextScan:
    """The vLLM and test sources as bytes, read once per process (the pre-filter's input)."""

    tree: SourceTree
    _vllm: dict[Path, bytes] | None = None
    _all_tests: dict[Path, bytes] | None = None
    _tests: dict[Path, bytes] | None = None
    _standins: dict[Path, bytes] | None = None
    _closures: dict[frozenset[str], set[str] | None] = attrs.field(factory=dict)
    _edge_cache: dict[Path, list[tuple[frozenset[str], str, bool]] | None] = attrs.field(
        factory=dict
    )
    _words_index: dict[str, list[Path]] | None = None

    def vllm_texts(self) -> dict[Path, bytes]:
        if self._vllm is None:
            self._vllm = {p: _read(p) for p in _py_files(self.tree.root / "vllm")}
        return self._vllm

    def stub_texts(self) -> dict[Path, bytes]:
        """Test files (under ``tests/``) that hold an ``object.__new__(`` call."""
        if self._tests is None:
            self._tests = {p: t for p, t in self._test_texts().items() if _STUB_MARK in t}
        return self._tests

    def _test_texts(self) -> dict[Path, bytes]:
        """Every ``.py`` file under ``tests/``, read once for both pre-filters."""
        if self._all_tests is None:
            self._all_tests = {p: _read(p) for p in _py_files(self.tree.root / "tests")}
        return self._all_tests

    def referring_names(self, changed: set[str]) -> set[str] | None:
        """The closure of names through which code can reach the ``changed`` modules; None
        when a changed module cannot be parsed (then every stub file is a candidate).

        Each name is searched for in the vLLM texts once; the shallow statements of every file
        that mentions one are re-read with the grown set until it stops growing."""
        key = frozenset(changed)
        if key in self._closures:
            return self._closures[key]
        names = {m.rpartition(".")[2] for m in changed}
        packages = set()
        for module in changed:
            try:
                info = self.tree.module(module)
            except SourceError:
                self._closures[key] = None
                return None
            if info is not None:
                names |= set(info.classes)  # spelled by a same-module subclass, say
                if info.is_package:
                    packages.add(module)
        texts = self.vllm_texts()
        matched: set[Path] = set()
        if packages:  # ``from . import x`` reaches a package without spelling its name
            matched |= {p for p, t in texts.items() if self._bare_relative_targets(p, t) & packages}
        searched: set[str] = set()
        while True:
            fresh = names - searched
            searched |= fresh
            matched |= self._files_mentioning(fresh)
            grown = set(names)
            for path in matched:
                edges = self._edges_at(path)
                if edges is None:
                    self._closures[key] = None
                    return None
                bare = self._bare_relative_targets(path, texts[path]) & packages
                for words, bound, is_bare in edges:
                    if (is_bare and bare) or not words.isdisjoint(names):
                        grown.add(bound)
            if grown == names:
                self._closures[key] = names
                return names
            names = grown

    def _edges_at(self, path: Path) -> list[tuple[frozenset[str], str, bool]] | None:
        if path not in self._edge_cache:
            try:
                info = self.tree.module(self._name_of(path))
            except SourceError:
                info = None
            self._edge_cache[path] = None if info is None else _edges(info)
        return self._edge_cache[path]

    def _files_mentioning(self, names: set[str]) -> set[Path]:
        """vLLM files spelling one of ``names`` as a word.  A few names: a substring scan per
        name; many (a widely imported module's closure): a word index of every file, built
        once (~2 s on 0.34.0), which then answers each name by lookup."""
        texts = self.vllm_texts()
        if self._words_index is None and len(names) <= _SCAN_LIMIT:
            return {p for p, t in texts.items() if _mentions(t, names)}
        if self._words_index is None:
            self._words_index = {}
            for path, text in texts.items():
                for word in set(_WORD.findall(text)):
                    self._words_index.setdefault(word.decode(), []).append(path)
        return {p for n in names for p in self._words_index.get(n, ())}

    def _name_of(self, path: Path) -> str:
        """Module name of a file found under ``<root>/vllm`` (no ``resolve``: it is below)."""
        parts = list(path.relative_to(self.tree.root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        return ".".join(parts)

    def _bare_relative_targets(self, path: Path, text: bytes) -> set[str]:
        """Packages a file imports from by ``from . import x`` (spelling no module name)."""
        if b"from ." not in text:
            return set()
        parts = self._name_of(path).split(".")
        is_package = path.name == "__init__.py"
        out = set()
        for dots in _BARE_RELATIVE.findall(text):
            keep = len(parts) - len(dots) + (1 if is_package else 0)
            out.add(".".join(parts[:keep]))
        return out

    def standin_texts(self) -> dict[Path, bytes]:
        """Test files (under ``tests/``) that may build a stand-in (``might_hold_standins``,
        the audit's own text test)."""
        if self._standins is None:
            from factories.analysis.extraction import might_hold_standins

            self._standins = {}
            for path, text in self._test_texts().items():
                if might_hold_standins(text.decode("utf-8", errors="replace")):
                    self._standins[path] = text
        return self._standins

    def candidate_files(self, changed: set[str]) -> list[Path]:
        """Test files whose stubs *may* depend on ``changed``; a superset of the real ones."""
        return self._mentioning(self.stub_texts(), changed)

    def standin_candidate_files(self, changed: set[str]) -> list[Path]:
        """Test files that may build a stand-in and spell a name of ``changed``'s closure:
        where no cached audit says what a file's stand-ins consulted, the ones the trigger
        audits to find out.  Unlike the stubs' pre-filter this one is not sound: a callee
        chain can reach a module through a function the test names that its closure of
        names does not hold (a cached audit of the whole tree makes the trigger exact)."""
        return self._mentioning(self.standin_texts(), changed)

    def _mentioning(self, texts: dict[Path, bytes], changed: set[str]) -> list[Path]:
        if len(changed) > _MANY_CHANGED:
            return sorted(texts)
        names = self.referring_names(changed)
        if names is None:
            return sorted(texts)
        return sorted(p for p, text in texts.items() if _mentions(text, names))


def changed_module(tree: SourceTree, path: Path) -> str | None:
    """The dotted vLLM module of a changed file under ``<root>/vllm/`` (it need not exist any
    more: a deleted module is a change too), or None for any other file."""
    vllm_dir = (tree.root / "vllm").resolve()
    try:
        Path(path).resolve().relative_to(vllm_dir)
    except ValueError:
        return None
    if Path(path).suffix != ".py":
        return None
    return tree.module_name_for(path)


def dependent_stubs(
    stubs_by_file: dict[Path, Sequence[Stub]],
    dependencies,
    changed: set[str],
) -> list[Path]:
    """Files among ``stubs_by_file`` with a stub whose dependencies meet ``changed``."""
    return sorted(
        path
        for path, stubs in stubs_by_file.items()
        if any(dependencies(stub) & changed for stub in stubs)
    )
