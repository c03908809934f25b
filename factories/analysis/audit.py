"""Audit stubs against the current vLLM source: the one place findings are produced.

Audit = for each method the stub calls, in order: the call's shape against the current
signature, then the attributes that call reads before anything (the stub or an earlier call)
wrote them.  Stub fields that neither an analysed method nor the test itself reads are *stale*
(a warning).  Literal stub fields and literal class attributes the instance still reads from its
class decide branches.  The same function serves test files found on disk and this project's own
stub specs (``factories.stubs.specs``).
"""

from __future__ import annotations

import ast
import hashlib
import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from factories.analysis import extraction, workers
from factories.analysis.allowlist import NO_ALLOWLIST, Allowlist
from factories.analysis.baseline import finding_file, is_suppressed, suppressed_kinds
from factories.analysis.class_audit import ClassAuditor
from factories.analysis.classes import ClassIndex, ClassInfo, MemberKind, Missing
from factories.analysis.extraction import Stub, has_object_new
from factories.analysis.file_audit import Census, FileAudit, StubRecord, StubSite
from factories.analysis.findings import Finding, FindingKind, Location, Severity
from factories.analysis.readset import ReadSetAnalyzer
from factories.analysis.report import (
    FieldUsage,
    NamespaceSite,
    NamespaceUse,
    dedup_key,
    merged_tests,
    report_order,
    stale_fields,
    stale_namespace_fields,
    unreadable_input,
    unreadable_module,
    unresolved,
)
from factories.analysis.source_tree import ModuleInfo, Overlay, SourceTree, gc_paused
from factories.errors import AuditInputError, SourceError

if TYPE_CHECKING:  # annotations; the trigger and the stand-in audit load where a run uses them
    from factories.analysis.result_cache import ResultCache
    from factories.analysis.since import KnownReads
    from factories.analysis.standin_audit import StandInTable
    from factories.analysis.trigger import TextScan


@attrs.frozen
class AuditSummary:
    files: int
    files_with_stubs: int
    stubs: int
    resolved: int
    unresolved: int
    audited: int
    findings_by_kind: tuple[tuple[str, int], ...]
    # Files and folders among the inputs that could not be read: not in ``files`` (they were
    # not audited), each an ``unreadable-file`` finding.
    unreadable: int = 0
    # Stubs not audited because a vLLM module they need cannot be read (not in ``unresolved``).
    blocked: int = 0
    # Findings an ``# audit-stubs: ignore[...]`` comment silenced.
    suppressed: int = 0
    # With ``--standins``: the stand-ins the files build, by kind (``FileAudit.census``).
    census: Census = ()

    def __str__(self) -> str:
        kinds = ", ".join(f"{k}={n}" for k, n in self.findings_by_kind) or "none"
        if self.files == 0 and not self.unreadable:  # the no-FILE mode: this project's specs
            return (
                f"audited {self.stubs} stub spec(s) of factories/stubs/specs.py, {self.resolved} "
                f"resolved into the vLLM source, {self.audited} with method calls audited; "
                f"findings: {kinds}"
            )
        missed = f" ({self.unreadable} more could not be read)" if self.unreadable else ""
        blocked = f"; {self.blocked} need a vLLM module that cannot be read" if self.blocked else ""
        silenced = f"; {self.suppressed} silenced inline" if self.suppressed else ""
        return (
            f"audited {self.files} file(s){missed}, {self.files_with_stubs} with object.__new__ "
            f"stubs: {self.stubs} stub(s) found, {self.resolved} resolved into the vLLM source "
            f"({self.unresolved} unresolved: dynamic or outside vLLM{blocked}), "
            f"{self.audited} with method calls audited; findings: {kinds}{silenced}"
        )


@attrs.frozen
class AuditResult:
    findings: tuple[Finding, ...]
    summary: AuditSummary
    unused_allowlist: tuple[str, ...] = ()
    # The test files audited (as found), so a baseline judges only their entries.
    files: tuple[Path, ...] = ()

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity is Severity.ERROR)

    @property
    def incomplete(self) -> bool:
        """Some input could not be read, so the audit did not see everything (exit 2)."""
        return any(f.kind is FindingKind.UNREADABLE_FILE for f in self.findings)


def locate_vllm_source(explicit: str | None) -> Path:
    """The folder holding ``vllm/``: the given one, or the installed package's parent.

    ``importlib.util.find_spec`` on a top-level name does not execute the package, so this
    never imports vLLM (or torch).
    """
    if explicit is None:
        import importlib.util

        spec = importlib.util.find_spec("vllm")
        if spec is None or not spec.submodule_search_locations:
            raise AuditInputError(
                "vllm is not installed here; pass --vllm-src DIR (a folder that holds vllm/)"
            )
        return Path(next(iter(spec.submodule_search_locations))).parent
    root = Path(explicit)
    if not root.is_dir():
        raise AuditInputError(f"--vllm-src {explicit}: no such directory")
    if not (root / "vllm" / "__init__.py").is_file():
        if root.name == "vllm" and (root / "__init__.py").is_file():
            return root.parent
        raise AuditInputError(
            f"--vllm-src {explicit}: no vllm/ package inside; pass the folder that holds vllm/"
        )
    return root


@attrs.frozen
class Analysis:
    """The analysis objects over one tree: class index, read-set analyzer, class auditor.

    Each memoises what it derived.  A test file audited for the result cache gets its own
    (``Analysis.over``), so that every module its audit needs is asked of the tree while the
    file's recording runs, instead of being answered from a memo another file's audit filled
    (which would leave the module out of the file's consulted list).
    """

    index: ClassIndex
    analyzer: ReadSetAnalyzer
    checker: ClassAuditor

    @classmethod
    def over(cls, tree: SourceTree) -> Analysis:
        index = ClassIndex(tree)
        analyzer = ReadSetAnalyzer(index)
        return cls(index, analyzer, ClassAuditor(tree, index, analyzer))


@attrs.frozen
class _ToCompute:
    """A file ``StubAuditor._looked_up`` could not answer without analysing it: ``recorded``,
    in an analysis of its own that records the modules it consults (written to the cache
    under ``key`` where there is one); else in the auditor's shared analysis."""

    recorded: bool
    key: str | None = None


@attrs.define
class _Progress:
    """``[audit] i/N files`` for every 500th file, once ``i`` files are settled (the count a
    run with workers reaches as they answer, and one without before each file)."""

    say: Callable[[str], None]
    total: int
    _next: int = 0

    def __call__(self, settled: int) -> None:
        while self._next < self.total and self._next <= settled:
            self.say(f"[audit] {self._next}/{self.total} files")
            self._next += 500


class StubAuditor:
    """Audits stubs against one vLLM source tree.  Caches parsed files and method analyses;
    with a ``cache`` (``result_cache.ResultCache``), also each test file's results across
    runs, keyed by its content and that of every module its audit consulted."""

    def __init__(
        self,
        vllm_src: Path,
        overlay: Overlay | None = None,
        cache: ResultCache | None = None,
        jobs: int = 1,
    ) -> None:
        self.tree = SourceTree(vllm_src, overlay)
        # Worker processes for the files' analyses (``workers``): 1 none, 0 one per CPU.
        self.jobs = jobs
        self._shared = Analysis.over(self.tree)
        self.index = self._shared.index
        self.analyzer = self._shared.analyzer
        self.checker = self._shared.checker
        self.cache = cache
        self._exports: dict[Path, tuple[str, list]] = {}
        # Files the stand-in trigger audited to decide (path, --standins) -> their audit.
        self._decided: dict[tuple[Path, bool], FileAudit] = {}
        # The test file parsed last (``test_module``), and the reader of its cases that its
        # extractions share (``test_reader``), once one is asked for.
        self._last_test: tuple[Path, ModuleInfo] | None = None
        self._last_reader: extraction.CaseReader | None = None

    # -- test files ---------------------------------------------------------------------

    def test_module(self, path: Path) -> ModuleInfo:
        """Test file ``path`` parsed: once for the several questions its audit asks in turn
        (its stubs, its stand-ins, their table, the comments that silence a finding), not
        once per question.  Only the last file is kept, so a run holds one test tree at a
        time.  Raises ``SourceError`` on every call for a file that cannot be read."""
        path = Path(path)
        if self._last_test is None or self._last_test[0] != path:
            module = self.tree.load(self.tree.module_name_for(path), path)
            self._last_test = (path, module)
            self._last_reader = None
        return self._last_test[1]

    def test_reader(self, path: Path) -> extraction.CaseReader:
        """The reader of test file ``path``'s cases (with its ``ModuleScope``: parent links,
        scopes, callers), one for every extraction of the file (its stubs, the stubs helpers
        return into it, its stand-ins): what each finds out about the module is the module's,
        whichever asks first, so it is found once.  Kept with ``test_module``'s file."""
        module = self.test_module(path)
        if self._last_reader is None:
            self._last_reader = extraction.CaseReader(extraction.ModuleScope(module))
        return self._last_reader

    def extract(self, path: Path) -> list[Stub]:
        module = self.test_module(path)
        extractor = extraction.StubExtractor(module, self.test_reader(path))  # loaded on first use
        found = extractor.stubs()
        if extractor.exports:
            self._exports[path] = (module.name, extractor.exports)
        return found

    def imported_uses(self, files: Sequence[Path], exporters: Iterable[Path]) -> list[Stub]:
        """Stubs that helpers of the ``exporters`` (``tests/.../utils.py``) return, followed
        into the other test ``files`` that import and call those helpers."""
        exports = [(p, *self._exports[p]) for p in exporters if p in self._exports]
        out: list[Stub] = []
        for path in files:
            out.extend(self._imported_into(path, exports))
        return out

    def _imported_into(self, path: Path, exports: Sequence[tuple[Path, str, list]]) -> list[Stub]:
        """The stubs of ``exports`` (exporter, its module name, its helpers) that test file
        ``path`` imports and calls."""
        if not exports:
            return []
        names = {name for _, _, found in exports for name, _, _ in found}
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return []  # reported where the file is audited
        if not any(name in text for name in names):
            return []
        try:
            module = self.test_module(path)
        except SourceError:
            return []  # reported where the file is audited
        extractor = extraction.StubExtractor(module, self.test_reader(path))  # loaded on first use
        out: list[Stub] = []
        for exporter, source, found in exports:
            if exporter == path:
                continue  # its own callers were followed when it was extracted
            for name, base, track in found:
                if name in text:
                    out.extend(extractor.imported_uses(source, name, base, track))
        return out

    def _stubs_of(self, path: Path, explicit: bool) -> list[Stub]:
        """The stubs of one test file.  Files named explicitly are always parsed; files found
        in a folder are skipped cheaply when they hold no stub.  Raises ``SourceError``."""
        if not explicit:
            try:
                if not has_object_new(path):
                    return []
            except OSError as exc:
                raise SourceError(path, 1, f"cannot read: {exc.strerror or exc}") from None
        return self.extract(path)

    def dependencies(self, stub: Stub, analysis: Analysis | None = None) -> frozenset[str]:
        """The vLLM modules a change to which can change ``stub``'s findings: those its class
        name resolves through, those of every class in its MRO (where every method analysed
        for it lives) and of the names their bases and the test's patches resolve through.
        The source-change trigger's reverse index (``factories.analysis.trigger``)."""
        checker = (analysis or self._shared).checker
        index = checker.index
        with self.tree.recording() as asked:
            try:
                target = checker.class_of(stub)
                if isinstance(target, Missing):
                    asked.add(target.module.name)
                if isinstance(target, ClassInfo):
                    for klass in index.mro(target)[0]:
                        asked.add(klass.module.name)
                        for base in klass.node.bases:
                            expr = base.value if isinstance(base, ast.Subscript) else base
                            index.resolve(klass.module, ast.unparse(expr))
                    checker.replaced_methods(stub, target)
            except SourceError as exc:
                asked.add(self.tree.module_name_for(exc.path))
        return frozenset(m for m in asked if m == "vllm" or m.startswith("vllm."))

    def triggered(
        self, changed: set[str], scan: TextScan | None = None, standins: bool = False
    ) -> dict[Path, list[Stub]]:
        """Test files under ``<root>/tests`` holding a stub that depends on a ``changed``
        module, with their stubs; the text pre-filter only narrows which files are analysed.
        A candidate that cannot be read or parsed is kept (its audit reports it).

        With ``standins``, also those whose stand-ins' audit consulted a changed module (the
        callee chains the namespaces meet).  With a result cache, a file whose entry is still
        good for every module it consulted but the changed ones is decided from the entry (the
        analysis of the current tree would run exactly as recorded up to its first read of a
        changed module, so the recorded lists decide exactly); the others as without one."""
        from factories.analysis.trigger import TextScan, dependent_stubs  # the hook's path only

        scan = scan or TextScan(self.tree)
        extracted: dict[Path, list[Stub]] = {}
        unreadable: list[Path] = []
        dependent: list[Path] = []
        with gc_paused():
            pool = dict(scan.stub_texts())
            if standins:
                pool.update(scan.standin_texts())
            undecided: set[Path] = set()
            for path, data in pool.items():
                verdict = self._cached_verdict(path, data, changed, standins)
                if verdict is None:
                    undecided.add(path)
                elif verdict:
                    dependent.append(path)
            candidates: set[Path] = set()
            if undecided:  # the text scan reads all of vllm/: only where an entry is missing
                candidates = set(scan.candidate_files(changed))
                if standins:
                    candidates |= set(scan.standin_candidate_files(changed))
            to_decide = sorted(candidates & undecided)
            if standins:  # decided by each file's own recorded audit
                for path, found in self._file_audits(to_decide, set(), True, {}, True).items():
                    if isinstance(found, SourceError):
                        unreadable.append(path)
                        continue
                    self._decided[(path, True)] = found
                    if _meets(found, changed, standins):
                        dependent.append(path)
                to_decide = []
            for path in to_decide:
                try:
                    extracted[path] = self.extract(path)
                except SourceError:
                    unreadable.append(path)
            dependent += dependent_stubs(extracted, self.dependencies, changed)
        return {path: extracted.get(path, []) for path in sorted(set(unreadable + dependent))}

    def _cached_verdict(
        self, path: Path, data: bytes, changed: set[str], standins: bool
    ) -> bool | None:
        """Whether the cached audit of ``path`` says it depends on ``changed``; None where
        there is no entry, or a module it consulted differs and is not among ``changed``."""
        if self.cache is None:
            return None
        found = self.cache.read(self._key(path, data, standins))
        if found is None:
            return None
        consulted, payload = found
        for module, digest in consulted.items():
            if module not in changed and self.tree.digest(module) != digest:
                return None
        try:  # the trigger's part of the entry only: its findings are not needed to decide
            unit = FileAudit(
                has_standins=bool(payload["has_standins"]),  # type: ignore[index]
                dependencies=frozenset(payload["dependencies"]),  # type: ignore[index]
                consulted=frozenset(payload["consulted"]),  # type: ignore[index]
            )
        except (KeyError, TypeError, ValueError) as exc:
            self.cache.warn(f"audit cache: ignoring a corrupt entry ({type(exc).__name__})")
            return None
        return _meets(unit, changed, standins)

    def audit_paths(
        self,
        paths: Sequence[Path],
        allowlist: Allowlist = NO_ALLOWLIST,
        progress=None,
        known: Mapping[Path, list[Stub]] | None = None,
        since: KnownReads | None = None,
        standins: bool = False,
    ) -> AuditResult:
        """Audit test files and folders; ``known`` are stubs already extracted by path (the
        trigger's), so those files are not parsed twice; ``since``: the reads a base version
        already had (``factories.analysis.since``), so that new ones are errors; ``standins``:
        also the namespaces the tests hand the stubs' calls or make ``self``
        (``factories.analysis.standin_audit``)."""
        with gc_paused():
            return self._audit_paths(paths, allowlist, progress, known or {}, since, standins)

    def _audit_paths(
        self,
        paths: Sequence[Path],
        allowlist: Allowlist,
        progress,
        known: Mapping[Path, list[Stub]],
        since: KnownReads | None,
        standins: bool = False,
    ) -> AuditResult:
        files, unreadable = expand_paths(paths)
        n_read = len(files)
        explicit = {p for p in paths if p.is_file()}
        units: dict[Path, FileAudit] = {}
        blobs: dict[Path, bytes] = {}  # with a cache: each file's bytes, read once
        audits = self._file_audits(files, explicit, standins, known, blobs=blobs, progress=progress)
        for path, found in audits.items():
            if isinstance(found, SourceError):
                unreadable.append(found)  # reported; the other files are still audited
                n_read -= 1
            else:
                units[path] = found
        records = [r for unit in units.values() for r in unit.records]
        # Helpers shared between test modules live in modules that are not tests themselves
        # (``utils.py``, ``common.py``); a test module's own helpers serve its own tests.
        shared = [p for p in files if p in units and units[p].exports]
        shared = [p for p in shared if not p.name.startswith("test_")]
        if shared:
            for path in files:
                records += self._imported_records(path, shared, units, standins, blobs)
        if shared and standins:
            # A helper audited without the test modules beside it that call it (a file
            # named alone): its stubs are judged where those modules use them, as a run
            # over their folder judges them; only what they import is followed, not their
            # own stubs, and only findings on the files the run audits are reported.
            listed = set(files)
            for path in _importers(shared, files):
                for record in self._imported_records(
                    path, shared, {**units, path: FileAudit()}, standins, blobs
                ):
                    kept = tuple(
                        f
                        for f in record.findings
                        if f.stub_location is not None and Path(f.stub_location.path) in listed
                    )
                    records.append(attrs.evolve(record, findings=kept))
        result = self._merged(
            records,
            [f for unit in units.values() for f in unit.selves],
            [f for unit in units.values() for f in unit.handed],
            n_read,
            sum(1 for unit in units.values() if unit.stubs),
            allowlist,
            unreadable,
            since,
            [s for unit in units.values() for s in unit.sites],
            [u for unit in units.values() for u in unit.uses],
        )
        audited = tuple(p for p in files if not any(e.path == p for e in unreadable))
        summary = result.summary
        if standins:
            summary = attrs.evolve(
                summary, census=extraction.census_sum(unit.census for unit in units.values())
            )
        return attrs.evolve(result, files=audited, summary=summary)

    # -- one test file, cached --------------------------------------------------------

    def _key(self, path: Path, data: bytes, standins: bool, *more: str) -> str:
        """The cache key of one test file's audit: its path and content, and whether the
        stand-ins are audited (one cache serves both kinds of run)."""
        assert self.cache is not None
        mode = "standins" if standins else "stubs"
        return self.cache.key("file", str(path), _digest(data), mode, *more)

    def _decoded(self, payload: object) -> FileAudit | None:
        try:
            return FileAudit.from_json(payload)  # type: ignore[arg-type]
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            assert self.cache is not None
            self.cache.warn(f"audit cache: ignoring a corrupt entry ({type(exc).__name__})")
            return None

    def _file_audit(
        self,
        path: Path,
        explicit: bool,
        standins: bool,
        known: Sequence[Stub] | None,
        recorded: bool = False,
        blobs: dict[Path, bytes] | None = None,
    ) -> FileAudit:
        """One test file's part of the audit, from the cache where it holds it.  Raises
        ``SourceError`` where the file cannot be read or parsed (never cached).  ``recorded``:
        with the modules it consulted and its dependencies even without a cache (the
        stand-in trigger decides by them)."""
        found = self._looked_up(path, explicit, standins, known, recorded, blobs)
        if isinstance(found, FileAudit):
            return found
        return self._computed(path, explicit, standins, known, found)

    def _looked_up(
        self,
        path: Path,
        explicit: bool,
        standins: bool,
        known: Sequence[Stub] | None,
        recorded: bool,
        blobs: dict[Path, bytes] | None,
    ) -> FileAudit | _ToCompute:
        """``_file_audit``'s answer where it needs no analysis (decided by the trigger, no
        stub or stand-in in the text, a cache hit), else how to compute it."""
        if (path, standins) in self._decided:
            return self._decided[(path, standins)]
        if self.cache is None and not recorded:
            return _ToCompute(recorded=False)
        try:
            data = self.tree.read_bytes(path)
        except OSError:
            return _ToCompute(recorded=False)
        if blobs is not None:
            blobs[path] = data
        if not explicit and not known:
            text = data.decode("utf-8", errors="replace")  # as ``has_object_new`` reads it
            if "object.__new__(" not in text and not (
                standins and extraction.might_hold_standins(text)
            ):
                return FileAudit()
        key = self._key(path, data, standins) if self.cache is not None else None
        if key is not None:
            assert self.cache is not None
            payload = self.cache.get(key, self.tree.digest)
            unit = None if payload is None else self._decoded(payload)
            if unit is not None:
                return unit
        return _ToCompute(recorded=True, key=key)

    def _computed(
        self,
        path: Path,
        explicit: bool,
        standins: bool,
        known: Sequence[Stub] | None,
        how: _ToCompute,
    ) -> FileAudit:
        """The analysis ``_looked_up`` left to do, in analysis objects of the file's own: no
        memo of another file's walks answers for it, so its findings are the same whichever
        files a run audits before it, or beside it in another process.  A recorded one is
        written to the cache."""
        if not how.recorded:
            return self._compute_file(path, explicit, standins, known, Analysis.over(self.tree))
        with self.tree.recording() as asked:
            unit = self._compute_file(
                path, explicit, standins, known, Analysis.over(self.tree), recorded=True
            )
        unit = attrs.evolve(unit, consulted=frozenset(asked))
        if how.key is not None:
            assert self.cache is not None
            self.cache.put(how.key, {m: self.tree.digest(m) for m in asked}, unit.to_json())
        return unit

    def _file_audits(
        self,
        paths: Sequence[Path],
        explicit: set[Path],
        standins: bool,
        known: Mapping[Path, Sequence[Stub]],
        recorded: bool = False,
        blobs: dict[Path, bytes] | None = None,
        progress=None,
    ) -> dict[Path, FileAudit | SourceError]:
        """``_file_audit`` of each of ``paths`` (or the ``SourceError`` it raised), the
        analyses spread over ``jobs`` worker processes where there are enough of them
        (``workers``); a file with stubs already extracted (``known``) runs here."""
        looked = {
            path: self._looked_up(
                path, path in explicit, standins, known.get(path), recorded, blobs
            )
            for path in paths
        }
        pending = [p for p in paths if isinstance(looked[p], _ToCompute) and not known.get(p)]
        count = workers.worker_count(self.jobs, len(pending))
        told = (
            _Progress(progress, len(paths)) if progress is not None and len(paths) > 200 else None
        )
        done: dict[Path, FileAudit | SourceError] = {}
        if count:
            settled = len(paths) - len(pending)  # no analysis to wait for

            def compute(path: Path) -> FileAudit:
                how = looked[path]
                assert isinstance(how, _ToCompute)
                return self._computed(path, path in explicit, standins, None, how)

            done = workers.audits_in_workers(
                pending, compute, count, None if told is None else lambda n: told(settled + n)
            )
        out: dict[Path, FileAudit | SourceError] = {}
        for i, path in enumerate(paths):
            if told is not None and not count:
                told(i)
            found = done.get(path, looked[path])
            if isinstance(found, _ToCompute):  # here: no workers, or none answered for it
                try:
                    found = self._computed(path, path in explicit, standins, known.get(path), found)
                except SourceError as exc:
                    found = exc
            out[path] = found
        return out

    def _compute_file(
        self,
        path: Path,
        explicit: bool,
        standins: bool,
        known: Sequence[Stub] | None,
        analysis: Analysis,
        recorded: bool = False,
    ) -> FileAudit:
        found = list(known) if known else self._stubs_of(path, explicit)
        roots = self.standins_found(path, bool(found)) if standins else ()
        table = self._table_of(path, roots, analysis.index)
        records = tuple(self._record(analysis, stub, table) for stub in found)
        selves: tuple[Finding, ...] = ()
        handed: tuple[Finding, ...] = ()
        uses: tuple[NamespaceUse, ...] = ()
        if table is not None:
            selves = tuple(self._standin_selves_of(analysis, table))
            found_handed, found_uses = self._handed_of(analysis, str(path), table)
            handed, uses = tuple(found_handed), tuple(found_uses)
        dependencies: frozenset[str] = frozenset()
        if recorded:  # the trigger's index too
            dependencies = frozenset().union(*(self.dependencies(s, analysis) for s in found))
        exported = self._exports.get(path)
        return FileAudit(
            stubs=len(found),
            records=records,
            selves=selves,
            handed=handed,
            has_standins=table is not None,
            sites=table.sites if table is not None else (),
            uses=uses,
            exports=tuple(name for name, _, _ in exported[1]) if exported else (),
            dependencies=dependencies,
            census=extraction.census(roots) if roots else (),
        )

    def _imported_records(
        self,
        path: Path,
        shared: Sequence[Path],
        units: Mapping[Path, FileAudit],
        standins: bool,
        blobs: Mapping[Path, bytes],
    ) -> list[StubRecord]:
        """The records of the stubs that the ``shared`` helpers' exports return into test
        file ``path`` (cached under the file's and every exporter's content)."""
        if path not in units:
            return []  # unreadable: reported, nothing imported into it
        if self.cache is None:
            self._extract_exporters(shared)
            exports = [(p, *self._exports[p]) for p in shared if p in self._exports]
            analysis = Analysis.over(self.tree)  # the importing file's own, as in ``_computed``
            stubs = self._imported_into(path, exports)
            table = self._imported_table(path, units, stubs, analysis) if standins else None
            return [self._record(analysis, stub, table) for stub in stubs]
        names = {name for p in shared for name in units[p].exports}
        data = blobs.get(path)
        if data is None:
            try:
                data = self.tree.read_bytes(path)
            except OSError:
                return []
        if not any(name in data.decode("utf-8", errors="replace") for name in names):
            return []
        exporters = [
            f"{p}={_digest(blobs[p]) if p in blobs else self.tree.file_digest(p)}" for p in shared
        ]
        key = self._key(path, data, standins, "imported", *exporters)
        payload = self.cache.get(key, self.tree.digest)
        unit = None if payload is None else self._decoded(payload)
        if unit is not None:
            return list(unit.records)
        self._extract_exporters(shared)
        exports = [(p, *self._exports[p]) for p in shared if p in self._exports]
        with self.tree.recording() as asked:
            analysis = Analysis.over(self.tree)
            stubs = self._imported_into(path, exports)
            table = self._imported_table(path, units, stubs, analysis) if standins else None
            records = tuple(self._record(analysis, stub, table) for stub in stubs)
        consulted = {m: self.tree.digest(m) for m in asked}
        self.cache.put(key, consulted, FileAudit(records=records).to_json())
        return list(records)

    def _extract_exporters(self, shared: Sequence[Path]) -> None:
        """The helpers of the ``shared`` modules, where this process has not extracted them:
        their audit came from the cache or from a worker process."""
        for exporter in shared:
            if exporter not in self._exports:
                self.extract(exporter)

    def _imported_table(
        self,
        path: Path,
        units: Mapping[Path, FileAudit],
        stubs: Sequence[Stub],
        analysis: Analysis,
    ) -> StandInTable | None:
        """The stand-ins the stubs that helpers return into test file ``path`` meet: the
        file's own, and those each helper's module sets on its stubs or hands their calls
        (``StubStandIns.joined``)."""
        if not stubs:
            return None
        table = self.standins_of(path, bool(units[path].stubs), analysis.index)
        for helper in dict.fromkeys(stub.module.path for stub in stubs):
            if helper == path:
                continue
            own = self.standins_of(helper, True, analysis.index)
            if own is None:
                continue
            if table is None:
                table = attrs.evolve(own, selves=(), handed=(), sites=())
            else:
                table = attrs.evolve(table, stubs=table.stubs.joined(own.stubs))
        return table

    def _record(self, analysis: Analysis, stub: Stub, table: StandInTable | None) -> StubRecord:
        """One stub's verdict (``table``: the stand-ins of the test file whose calls these
        are, or None)."""
        site = StubSite(stub.location, stub.class_expr)
        silenced = self._silenced(stub, stub.location)
        try:
            target = analysis.checker.class_of(stub)
            if isinstance(target, ClassInfo):
                found, usage = analysis.checker.audit_class(
                    stub, target, table.stubs if table is not None else None
                )
            else:
                found, usage = analysis.checker.audit_stub(stub, target), None
                if not found:
                    found = [unresolved(stub, target)]
        except SourceError as exc:
            # Unaudited: no stale-field verdict for the fields this site sets.
            return StubRecord(
                site, silenced, "blocked", usage=FieldUsage.unknown(stub), blocked_by=exc
            )
        kept: list[Finding] = []
        suppressed = 0
        for finding in found:
            if self._is_silenced(stub, silenced, finding):
                suppressed += 1
            else:
                kept.append(finding)
        return StubRecord(
            site,
            silenced,
            "unresolved" if usage is None else "resolved",
            has_calls=bool(stub.calls),
            findings=tuple(kept),
            suppressed=suppressed,
            usage=usage,
        )

    def audit_stubs(
        self,
        stubs: Sequence[Stub],
        n_files: int,
        n_with_stubs: int,
        allowlist: Allowlist = NO_ALLOWLIST,
        unreadable: Sequence[SourceError] = (),
        since: KnownReads | None = None,
        standins: Mapping[str, StandInTable] | None = None,
    ) -> AuditResult:
        """Findings for ``stubs``; ``unreadable`` are the input files that could not be read;
        ``since`` marks the undecided reads a base version did not have (before the allowlist,
        which may name the new kind); ``standins``: by test file, the namespaces its tests
        hand vLLM code (``StandInTable``), audited with the stubs' calls and on their own.

        A vLLM module that does not parse stops only the stubs that need it: they become one
        ``unreadable-file`` finding per module, and every other stub is still audited.
        """
        tables = standins or {}
        records = [
            self._record(self._shared, stub, tables.get(_calling_path(stub))) for stub in stubs
        ]
        selves = [f for t in tables.values() for f in self._standin_selves_of(self._shared, t)]
        handed: list[Finding] = []
        uses: list[NamespaceUse] = []
        for path, table in tables.items():
            found, met = self._handed_of(self._shared, path, table)
            handed += found
            uses += met
        sites = [site for table in tables.values() for site in table.sites]
        return self._merged(
            records,
            selves,
            handed,
            n_files,
            n_with_stubs,
            allowlist,
            unreadable,
            since,
            sites,
            uses,
        )

    def _merged(
        self,
        records: Sequence[StubRecord],
        selves: Sequence[Finding],
        handed: Sequence[Finding],
        n_files: int,
        n_with_stubs: int,
        allowlist: Allowlist,
        unreadable: Sequence[SourceError],
        since: KnownReads | None,
        namespaces: Sequence[NamespaceSite] = (),
        walks: Sequence[NamespaceUse] = (),
    ) -> AuditResult:
        """The run's findings from the files' parts: merged over tests, the stand-ins' own,
        stale fields over every use of a site (a stub's; a namespace's, ``namespaces`` and
        the ``walks`` that met them, with ``--standins``), ``since``, the allowlist, the
        order."""
        findings: dict[tuple, Finding] = {}
        sites: set[Location] = set()
        resolved_sites: set[Location] = set()
        audited_sites: set[Location] = set()
        usages: dict[Location, list[FieldUsage]] = {}
        broken: dict[Path, tuple[SourceError, list[StubSite]]] = {}
        blocked_sites: set[Location] = set()
        silenced_at: dict[Location, frozenset[str] | None] = {}
        suppressed = 0
        for record in records:
            where = record.site.location
            sites.add(where)
            silenced_at.setdefault(where, record.silenced)
            if record.blocked_by is not None:
                exc = record.blocked_by
                broken.setdefault(exc.path, (exc, []))[1].append(record.site)
                blocked_sites.add(where)
                usages.setdefault(where, []).append(record.usage)  # type: ignore[arg-type]
                continue
            suppressed += record.suppressed
            if record.usage is not None:
                resolved_sites.add(where)
                if record.has_calls:
                    audited_sites.add(where)
                usages.setdefault(where, []).append(record.usage)
            for finding in record.findings:
                key = dedup_key(finding)
                if key in findings:
                    finding = merged_tests(findings[key], finding)
                findings[key] = finding
        for finding in (*selves, *handed):
            # The same read on several calls: a call that may not reach it (a note) does not
            # hide one that certainly does.
            key = dedup_key(attrs.evolve(finding, kind=FindingKind.MISSING_ATTRIBUTE))
            if key not in findings or finding.severity is Severity.ERROR:
                findings[key] = finding
        for site, uses in usages.items():
            for finding in stale_fields({site: uses}):
                if is_suppressed(silenced_at.get(site), finding):
                    suppressed += 1
                    continue
                findings.setdefault(dedup_key(finding), finding)
        for finding, silenced in stale_namespace_fields(namespaces, walks):
            if silenced:
                suppressed += 1
            else:
                findings.setdefault(dedup_key(finding), finding)
        used: set[str] = set()
        kept: list[Finding] = [unreadable_input(exc) for exc in unreadable]
        kept.extend(unreadable_module(self.tree, exc, users) for exc, users in broken.values())
        marked = since.mark(findings.values()) if since is not None else findings.values()
        for finding in marked:
            pattern = None  # an empty allowlist needs no file name (a resolve() each)
            if allowlist.patterns:
                pattern = allowlist.matches(finding, finding_file(finding, self.tree.root))
            if pattern is None:
                kept.append(finding)
            else:
                used.add(pattern)
        kept.sort(key=report_order)
        counts = Counter(f.kind.value for f in kept)
        summary = AuditSummary(
            files=n_files,
            files_with_stubs=n_with_stubs,
            stubs=len(sites),
            resolved=len(resolved_sites),
            unresolved=len(sites - resolved_sites - blocked_sites),
            audited=len(audited_sites),
            findings_by_kind=tuple(sorted(counts.items())),
            unreadable=len(unreadable),
            blocked=len(blocked_sites - resolved_sites),
            suppressed=suppressed,
        )
        unused = tuple(p for p in allowlist.patterns if p not in used)
        return AuditResult(tuple(kept), summary, unused)

    def standins_of(
        self, path: Path, has_stubs: bool, index: ClassIndex | None = None
    ) -> StandInTable | None:
        """The stand-ins of one test file as the audit judges them (``index``: the tree's
        classes, which settle what a spec'd mock lacks); None where it builds none that
        meets vLLM code."""
        return self._table_of(path, self.standins_found(path, has_stubs), index)

    def _table_of(
        self, path: Path, found: Sequence[extraction.StandIn], index: ClassIndex | None
    ) -> StandInTable | None:
        """``standins_of`` of the stand-ins ``standins_found`` gave for ``path``."""
        if not found:
            return None
        from factories.analysis.standin_audit import StandInTable  # --standins runs only

        return StandInTable.of(
            self.test_module(path), found, index, self.test_reader(path).scope.walk
        )

    def standins_found(self, path: Path, has_stubs: bool) -> tuple[extraction.StandIn, ...]:
        """What the extractor finds in one test file (parsed once: ``test_module`` keeps the
        module the stub extraction loaded); ``()`` for a file that cannot hold one or cannot be read
        (reported where the file's stubs are extracted)."""
        try:
            if not has_stubs and not extraction.might_hold_standins(
                path.read_text(encoding="utf-8", errors="replace")
            ):
                return ()
            module = self.test_module(path)
        except (OSError, SourceError):
            return ()
        reader = self.test_reader(path)
        return tuple(extraction.StandInExtractor(module, reader.scope, reader).standins())

    def _handed_of(
        self, analysis: Analysis, path: str, table: StandInTable
    ) -> tuple[list[Finding], list[NamespaceUse]]:
        """The findings of the namespaces one test file hands to a function or a static or
        class method, and what those walks read of them (``handed_audit``).  A comment on the
        call's line silences a finding, and one on the line that builds the namespace."""
        findings: list[Finding] = []
        uses: list[NamespaceUse] = []
        if not table.handed:
            return findings, uses
        lines = None
        judged = self._handed_judged(analysis, table)
        for handed, (found, met) in judged:
            uses += met
            if lines is None:
                lines = self._standin_lines(path)
            for finding in found:
                built = finding.stub_location
                if is_suppressed(suppressed_kinds(lines, handed.location.line, path), finding):
                    continue
                if (
                    built is not None
                    and built.path == path
                    and is_suppressed(suppressed_kinds(lines, built.line, path), finding)
                ):
                    continue
                findings.append(finding)
        return findings, uses

    def _handed_judged(self, analysis: Analysis, table: StandInTable) -> list[tuple]:
        """Each handed call of ``table`` with its findings and uses (``handed_audit``).
        A namespace one call met before another may hold fields the first stored on it:
        what each walk may have changed of the namespaces it was handed (``Reach``) is
        known once every call is walked, so the calls are judged again with it (the walks
        are the analyzer's memo's)."""
        from factories.analysis.standin_audit import (  # --standins runs only
            handed_audit,
            joined_reach,
        )

        def judge(stubs) -> list[tuple]:
            out = []
            for handed in table.handed:
                try:
                    judged = handed_audit(analysis.index, analysis.analyzer, handed, stubs)
                    out.append((handed, judged))
                except SourceError:
                    continue  # the module is reported where a stub of it is audited
            return out

        first = judge(table.stubs)
        reach = joined_reach(r for _, judged in first for r in judged[2])
        final = judge(attrs.evolve(table.stubs, reach=reach)) if reach else first
        return [(handed, (found, met)) for handed, (found, met, _) in final]

    def _standin_lines(self, path: str) -> Sequence[str]:
        return self.test_module(Path(path)).lines

    def _standin_selves_of(self, analysis: Analysis, table: StandInTable) -> Iterable[Finding]:
        """Namespaces made ``self`` of a plain method (``Cls.m(ns)``), replayed as stubs
        of ``Cls``; a classmethod or staticmethod takes them as an argument instead."""
        for call in table.selves:
            stub = call.stub
            try:
                target = analysis.checker.class_of(stub)
                if not isinstance(target, ClassInfo):
                    continue
                stub = attrs.evolve(stub, events=self._plain_method_calls(analysis, stub, target))
                if not stub.calls:
                    continue
                found, _ = analysis.checker.audit_class(
                    stub, target, table.stubs, namespace_self=True
                )
            except SourceError:
                continue  # the module is reported where a stub of it is audited
            for finding in found:
                if not self._is_silenced(stub, self._silenced(stub, stub.location), finding):
                    yield call.restated(finding)

    def _plain_method_calls(self, analysis: Analysis, stub: Stub, cls: ClassInfo) -> tuple:
        """The stub's events less the calls of names ``cls`` does not define as a plain
        method (a classmethod or staticmethod takes the namespace as an argument)."""
        kept = []
        for event in stub.events:
            member = analysis.index.lookup(cls, event.name) if event in stub.calls else None
            if event in stub.calls and not (
                member is not None
                and (
                    member.kind is MemberKind.METHOD
                    or (event.getter and member.kind is MemberKind.PROPERTY)
                )
            ):
                continue
            kept.append(event)
        return tuple(kept)

    @staticmethod
    def _silenced(stub: Stub, where: Location) -> frozenset[str] | None:
        """Kinds an ``# audit-stubs: ignore[...]`` comment on the line ``where`` of the stub's
        own file silences (``where`` in another file: none)."""
        if where.path != stub.location.path:
            return None
        return suppressed_kinds(stub.module.lines, where.line, where.path)

    def _is_silenced(
        self, stub: Stub, at_creation: frozenset[str] | None, finding: Finding
    ) -> bool:
        """A comment on the stub's ``object.__new__`` line silences its kinds for the whole
        stub; one on the line a finding points at (a call, a set), for that finding."""
        if is_suppressed(at_creation, finding):
            return True
        where = finding.stub_location
        return (
            where is not None
            and where != stub.location
            and is_suppressed(self._silenced(stub, where), finding)
        )


def _digest(data: bytes) -> str:
    """A test file's content hash, as ``SourceTree.file_digest`` computes one."""
    return hashlib.blake2b(data, digest_size=20).hexdigest()


def _meets(unit: FileAudit, changed: set[str], standins: bool) -> bool:
    """Whether a test file's audit depends on a ``changed`` module: one its stubs depend on
    (``StubAuditor.dependencies``), or with ``standins``, one its audit consulted where its
    stand-ins meet vLLM code (what their callees read, the chains followed into)."""
    if not unit.dependencies.isdisjoint(changed):
        return True
    return standins and unit.has_standins and not unit.consulted.isdisjoint(changed)


def _calling_path(stub: Stub) -> str:
    """The test file whose calls the stub's events are (a helper's stub: its caller's)."""
    return str((stub.scope_module or stub.module).path)


def _importers(shared: Sequence[Path], files: Sequence[Path]) -> list[Path]:
    """The test modules beside each shared helper (``test_*.py`` of its own folder, not
    below it) that the run does not audit itself: where the stubs its helpers return are
    used.  Its own folder only, so a helper of a large tree's root costs no whole-tree
    scan."""
    listed = set(files)
    out: list[Path] = []
    for helper in shared:
        try:
            found = sorted(helper.parent.glob("test_*.py"))
        except OSError:
            continue  # an unlistable folder: nothing followed there
        out.extend(p for p in found if p not in listed and p not in out and p.is_file())
    return out


def expand_paths(paths: Sequence[Path]) -> tuple[list[Path], list[SourceError]]:
    """Files as given, folders expanded to their ``*.py`` files (sorted); checks existence.

    Also returns the folders below that could not be listed: ``os.walk`` reports them where
    ``Path.rglob`` would skip them silently.  Symlinked folders are not followed (as rglob).
    """
    files: list[Path] = []
    unreadable: list[SourceError] = []

    def cannot_list(exc: OSError) -> None:
        where = Path(exc.filename) if exc.filename else path
        unreadable.append(SourceError(where, 1, f"cannot list folder: {exc.strerror or exc}"))

    for path in paths:
        if path.is_dir():
            found = [
                Path(folder, name)
                for folder, _, names in os.walk(path, onerror=cannot_list)
                for name in names
                if name.endswith(".py")
            ]
            files.extend(sorted(p for p in found if p.is_file()))
        elif path.is_file():
            files.append(path)
        else:
            raise AuditInputError(f"{path}: no such file or directory")
    return files, unreadable
