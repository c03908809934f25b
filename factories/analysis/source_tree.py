"""A vLLM source tree read as text: modules, their imports, and what their names refer to.

The analyzer must never import vLLM (it runs in pre-commit, with no torch), so every question
"what does this name mean" is answered from the AST.  A ``SourceTree`` is rooted at a folder
that holds ``vllm/`` (an sdist, a git checkout, or the installed package's parent folder) and
parses each file at most once.
"""

from __future__ import annotations

import ast
import contextlib
import gc
import hashlib
import io
import tokenize
from collections.abc import Iterator, Mapping
from pathlib import Path

import attrs

from factories.analysis._walk import statements, walk
from factories.errors import SourceError


@attrs.frozen
class ImportTarget:
    """What an imported name stands for: ``module`` (dotted) and, for ``from`` imports, ``name``."""

    module: str
    name: str | None

    @property
    def dotted(self) -> str:
        return f"{self.module}.{self.name}" if self.name else self.module


def collect_imports(body: list[ast.stmt], module: str, is_package: bool) -> dict[str, ImportTarget]:
    """Local name -> import target for the import statements directly in ``body``.

    Imports under ``if``/``try`` blocks (``TYPE_CHECKING``, optional dependencies) count too:
    the analyzer wants to know what a name *can* refer to, not whether it is bound at run time.
    """
    table: dict[str, ImportTarget] = {}
    for node in shallow_statements(body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    table[alias.asname] = ImportTarget(alias.name, None)
                else:
                    top = alias.name.split(".")[0]
                    table[top] = ImportTarget(top, None)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute_module(node, module, is_package)
            for alias in node.names:
                if alias.name != "*":
                    table[alias.asname or alias.name] = ImportTarget(base, alias.name)
    return table


def function_imports(
    func: ast.FunctionDef | ast.AsyncFunctionDef, module: str, is_package: bool
) -> dict[str, ImportTarget]:
    """Local name -> import target for every import inside ``func``, at any depth (nested
    blocks and defs too): the names a function imports for itself."""
    table: dict[str, ImportTarget] = {}
    for sub in statements(func):
        if isinstance(sub, (ast.Import, ast.ImportFrom)):
            table.update(collect_imports([sub], module, is_package))
    return table


def shallow_statements(body: list[ast.stmt]):
    """Statements of ``body`` plus those nested in if/try/with blocks (not in defs)."""
    for node in body:
        yield node
        if isinstance(node, (ast.If, ast.Try, ast.With)):
            for field in ("body", "orelse", "finalbody"):
                yield from shallow_statements(getattr(node, field, []) or [])
            for handler in getattr(node, "handlers", []) or []:
                yield from shallow_statements(handler.body)


def _absolute_module(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    keep = len(parts) - node.level + (1 if is_package else 0)
    base = ".".join(parts[:keep])
    return f"{base}.{node.module}" if node.module else base


@attrs.define
class ModuleInfo:
    """One parsed module: its top-level classes, functions, assignments and imports."""

    name: str
    path: Path
    tree: ast.Module
    is_package: bool
    classes: dict[str, ast.ClassDef] = attrs.field(factory=dict)
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = attrs.field(factory=dict)
    assigned: set[str] = attrs.field(factory=set)
    imports: dict[str, ImportTarget] = attrs.field(factory=dict)
    # The source ``tree`` was parsed from, split into ``lines`` on first use: a test module's
    # audit reads its lines (its statements' texts, its ``# audit-stubs: ignore`` comments),
    # while the vLLM modules a run parses (a thousand and more) never need theirs.
    _source: str | bytes = attrs.field(default="", repr=False, eq=False)
    _lines: list[str] | None = attrs.field(default=None, init=False, repr=False, eq=False)

    @property
    def lines(self) -> list[str]:
        """The source's lines, decoded as Python decodes the file (``decode_source``)."""
        if self._lines is None:
            source = self._source
            text = decode_source(source) if isinstance(source, bytes) else source
            self._lines, self._source = text.splitlines(), ""
        return self._lines

    @classmethod
    def from_source(
        cls, name: str, path: Path, source: str | bytes, is_package: bool
    ) -> ModuleInfo:
        """Parse ``source``; bytes are decoded exactly as Python decodes a source file."""
        try:
            with gc_paused():
                tree = ast.parse(source, filename=str(path))
        except SyntaxError as exc:
            # Bytes: a bad coding line, a BOM that contradicts it, or undecodable text are
            # SyntaxErrors too, located by the compiler.
            raise SourceError(path, exc.lineno or 1, f"syntax error: {exc.msg}") from None
        except ValueError as exc:  # null bytes (a SyntaxError itself from Python 3.12 on)
            raise SourceError(path, 1, f"syntax error: {exc}") from None
        except RecursionError:
            raise SourceError(path, 1, "syntax error: too deeply nested to parse") from None
        info = cls(name=name, path=path, tree=tree, is_package=is_package, source=source)
        for node in shallow_statements(tree.body):
            if isinstance(node, ast.ClassDef):
                info.classes.setdefault(node.name, node)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                info.functions.setdefault(node.name, node)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    for sub in walk(target):
                        if isinstance(sub, ast.Name):
                            info.assigned.add(sub.id)
        info.imports = collect_imports(tree.body, name, is_package)
        return info


def decode_source(data: bytes) -> str:
    """Source bytes as the text Python compiles: the encoding from the BOM or the PEP 263
    coding line (``tokenize.detect_encoding``) and universal newlines, as ``tokenize.open``."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    with io.TextIOWrapper(io.BytesIO(data), encoding) as text:
        return text.read()


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while building or walking many ASTs.

    Parsing allocates millions of nodes; with earlier trees alive, every automatic collection
    re-traverses all of them.  ASTs hold no reference cycles, so nothing is lost by waiting;
    measured on vLLM 0.34.0's tests: 15.8 s with the collector running, 5.8 s paused.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@attrs.frozen
class Overlay:
    """Another version of part of a tree, read instead of the files on disk: the base a
    change is compared with (``factories.analysis.since``).

    ``files`` maps a path relative to the root (``vllm/x/y.py``) to its bytes in that version,
    or to None where the file does not exist there; ``folders`` maps a folder relative to the
    root (``vllm``) to another folder whose files stand in for it wholesale (another release).
    Paths under the root keep their names, so test modules and stub locations are the same in
    both versions.
    """

    files: Mapping[str, bytes | None] = attrs.field(factory=dict)
    folders: Mapping[str, Path] = attrs.field(factory=dict)

    def where(self, root: Path, rel: str) -> Path | None:
        """The file that holds ``rel`` in this version, or None where it has none."""
        if rel in self.files:
            return root / rel if self.files[rel] is not None else None
        path = root / rel
        for folder, other in self.folders.items():
            if rel.startswith(folder + "/"):
                path = Path(other) / rel[len(folder) + 1 :]
                break
        return path if path.is_file() else None


class SourceTree:
    """Modules under ``root`` (the folder holding ``vllm/``), parsed lazily and cached;
    ``overlay`` reads some of them in another version."""

    def __init__(self, root: Path, overlay: Overlay | None = None) -> None:
        self.root = Path(root)
        self.overlay = overlay if overlay is not None else Overlay()
        self._modules: dict[str, ModuleInfo | SourceError | None] = {}
        # While not None, every dotted name ``module()`` is asked for (found or not): the
        # modules a resolution went through, for the source-change trigger's index.
        self.asked: set[str] | None = None
        self._digests: dict[str, str | None] = {}

    def module_file(self, module: str) -> tuple[Path, bool] | None:
        """The file of a dotted module name under root and whether it is a package."""
        rel = "/".join(module.split("."))
        for candidate, is_package in ((f"{rel}/__init__.py", True), (f"{rel}.py", False)):
            path = self.overlay.where(self.root, candidate)
            if path is not None:
                return path, is_package
        return None

    def module(self, module: str) -> ModuleInfo | None:
        """Parsed module, or None when it is not part of this tree (torch, aiter, ...).

        A module of the tree that cannot be read or parsed raises ``SourceError`` on every
        call, not only the first: answering None later would pass it off as outside the tree.
        """
        if self.asked is not None:
            self.asked.add(module)
        if module not in self._modules:
            found = self.module_file(module)
            self._modules[module] = None
            if found is not None:
                path, is_package = found
                try:
                    self._modules[module] = self.load(module, path, is_package)
                except SourceError as exc:
                    self._modules[module] = exc
        cached = self._modules[module]
        if isinstance(cached, SourceError):  # a fresh one: no traceback piling up
            raise SourceError(cached.path, cached.line, cached.reason)
        return cached

    @contextlib.contextmanager
    def recording(self) -> Iterator[set[str]]:
        """Collect the module names asked for inside the block.  A nested block collects its
        own (one stub's dependencies inside one test file's audit) and hands them on to the
        enclosing block when it ends, so each block holds everything asked inside it."""
        outer = self.asked
        asked: set[str] = set()
        self.asked = asked
        try:
            yield asked
        finally:
            self.asked = outer
            if outer is not None:
                outer |= asked

    def digest(self, module: str) -> str | None:
        """Content hash of the file the tree reads for dotted ``module`` (overlay included),
        or None where the tree has none: what a result cache compares to know that a module
        an audit consulted is still the same.  Hashed once per tree (per run)."""
        if module not in self._digests:
            found = self.module_file(module)
            self._digests[module] = None if found is None else self.file_digest(found[0])
        return self._digests[module]

    def file_digest(self, path: Path) -> str:
        """Content hash of the bytes the tree reads for ``path`` ("unreadable" where it
        cannot be read: that state is a content too, and reading it again may differ)."""
        try:
            data = self.read_bytes(path)
        except OSError:
            return "unreadable"
        return hashlib.blake2b(data, digest_size=20).hexdigest()

    def read_bytes(self, path: Path) -> bytes:
        """The bytes of ``path`` in this tree's version (the overlay's, else the disk's)."""
        data = self._overlaid(path)
        return path.read_bytes() if data is None else data

    def load(self, name: str, path: Path, is_package: bool = False) -> ModuleInfo:
        """Parse ``path`` as module ``name`` (also used for test files outside the tree)."""
        try:
            data = self.read_bytes(path)
        except OSError as exc:
            raise SourceError(path, 1, f"cannot read: {exc.strerror or exc}") from None
        return ModuleInfo.from_source(name, path, data, is_package)

    def _overlaid(self, path: Path) -> bytes | None:
        """The overlay's bytes for ``path`` (a file under root), or None to read the disk."""
        if not self.overlay.files:
            return None
        try:
            rel = Path(path).relative_to(self.root).as_posix()
        except ValueError:
            return None
        return self.overlay.files.get(rel)

    def module_name_for(self, path: Path) -> str:
        """Dotted module name of a file, relative to root when it lies under it."""
        try:
            rel = Path(path).resolve().relative_to(self.root.resolve())
        except ValueError:
            return Path(path).stem
        parts = list(rel.with_suffix("").parts)
        if parts and parts[-1] == "__init__":
            parts.pop()
        return ".".join(parts)
