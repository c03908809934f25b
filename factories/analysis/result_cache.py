"""A persistent cache of per-test-file audit results, keyed by content.

A commit hook audits the same few hundred test files again and again against a vLLM tree that
hardly moves; re-deriving every finding costs several times parsing them.  So the audit of one
test file (``file_audit.FileAudit``: its stubs' records, its stand-ins' findings, what its
stubs depend on) is stored under a key made of everything that can change it:

* the bytes of the test file (and its path, the vLLM root and the overlay's folders, since
  findings spell paths);
* the analyzer's own code (every source of ``factories/analysis`` and ``factories/errors``,
  hashed), the Python version (the AST differs) and the options that change what is computed
  (``--standins``);
* and, checked on every look-up, the content hash of *every* module the file's audit asked the
  tree for (vLLM modules, helper test modules), or that it does not exist.  The audit records
  these with ``SourceTree.recording()`` around the file's analysis, with analysis objects of its
  own (no memo of another file's audit answers for it), so a module that another file happened
  to parse first is recorded too.

A hit is the same value a cold run computes, so the report built from it is byte-identical; a
consulted module edited, added or removed is a miss.  Entries are JSON files written atomically
(a temporary file, then ``os.replace``); one that cannot be read or decoded is ignored with one
line through ``warn`` and recomputed, never a traceback.  Where caches live is decided in
``factories.locations`` (stdlib only), which the release cache reads too.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import attrs

from factories.locations import cache_dir

#: Where ``audit-stubs`` keeps its results when ``--cache-dir`` is not given, overriding
#: ``cache_dir() / "audit-results"``: a test session points it at a folder of its own, so the
#: CLIs its tests launch never fill the user's cache.
RESULTS_ENV = "VLLM_GUARD_AUDIT_RESULTS"
#: Bumped when the entry layout changes (the analyzer's hash covers the rest).
FORMAT = 1


def default_results_dir() -> Path:
    """Where ``audit-stubs`` keeps its results unless told otherwise: ``$VLLM_GUARD_AUDIT_RESULTS``,
    else ``audit-results`` in the project's cache."""
    configured = os.environ.get(RESULTS_ENV)
    return Path(configured) if configured else cache_dir() / "audit-results"


def analyzer_digest() -> str:
    """Hash of the analyzer's code: every ``.py`` under ``factories/analysis`` and
    ``factories/errors.py`` (messages), by relative path and bytes.  A changed analyzer never
    reuses a result of the old one."""
    package = Path(__file__).resolve().parent
    digest = hashlib.blake2b(digest_size=20)
    sources = sorted(package.rglob("*.py")) + [package.parent / "errors.py"]
    for path in sources:
        digest.update(path.relative_to(package.parent).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def _stderr(line: str) -> None:
    print(line, file=sys.stderr)


@attrs.frozen
class ResultCache:
    """Entries under ``folder``; ``salt`` is what every key of one kind of run shares (the
    analyzer's hash, the options, the roots: ``ResultCache.at``)."""

    folder: Path
    salt: str
    warn: Callable[[str], None] = attrs.field(default=_stderr, eq=False, repr=False)
    _write_failed: list[Path] = attrs.field(factory=list, eq=False, repr=False, init=False)

    @classmethod
    def at(
        cls,
        folder: Path,
        options: Iterable[str],
        warn: Callable[[str], None] = _stderr,
    ) -> ResultCache:
        """A cache in ``folder`` for runs with ``options`` (strings that change results)."""
        salt = hashlib.blake2b(digest_size=20)
        for part in (f"format={FORMAT}", f"python={sys.version_info[:2]}", analyzer_digest()):
            salt.update(part.encode() + b"\0")
        for option in options:
            salt.update(option.encode() + b"\0")
        return cls(Path(folder), salt.hexdigest(), warn)

    def key(self, *parts: str) -> str:
        """The entry name for ``parts`` (a kind, a path, content hashes) under this salt."""
        digest = hashlib.blake2b(self.salt.encode(), digest_size=20)
        for part in parts:
            digest.update(b"\0" + part.encode())
        return digest.hexdigest()

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def read(self, key: str) -> tuple[dict[str, str | None], object] | None:
        """(consulted module -> content hash, payload) of entry ``key``, not checked against
        the tree; None where there is none or it is corrupt (one line through ``warn``)."""
        path = self._path(key)
        try:
            raw = path.read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None  # no entry (or no cache folder: the write says so, once)
        except OSError as exc:
            self.warn(f"audit cache: ignoring unreadable entry {path}: {exc.strerror or exc}")
            return None
        try:
            entry = json.loads(raw)
            consulted = entry["consulted"]
            if entry["format"] != FORMAT or not isinstance(consulted, dict):
                raise ValueError("unexpected layout")
            return consulted, entry["payload"]
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            self.warn(f"audit cache: ignoring corrupt entry {path} ({type(exc).__name__})")
            return None

    def get(self, key: str, current: Callable[[str], str | None]) -> object | None:
        """The payload of ``key`` if every module it consulted still has the hash it had
        (``current``: module -> hash now, None where absent); else None (a miss)."""
        found = self.read(key)
        if found is None:
            return None
        consulted, payload = found
        if any(current(module) != digest for module, digest in consulted.items()):
            return None
        return payload

    def put(self, key: str, consulted: Mapping[str, str | None], payload: object) -> None:
        """Store an entry atomically (a reader sees the old entry, the new one or none).  A
        cache that cannot be written is skipped with one line: it never fails an audit."""
        path = self._path(key)
        data = json.dumps(
            {"format": FORMAT, "consulted": dict(sorted(consulted.items())), "payload": payload},
            separators=(",", ":"),
        )
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{key}.", suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    out.write(data)
                os.replace(tmp, path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except OSError as exc:
            if not self._write_failed:  # one line per run, not one per test file
                self._write_failed.append(path)
                self.warn(f"audit cache: cannot write {path}: {exc.strerror or exc}")
