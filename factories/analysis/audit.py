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
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from factories.analysis import extraction
from factories.analysis.allowlist import NO_ALLOWLIST, Allowlist
from factories.analysis.baseline import finding_file, is_suppressed, suppressed_kinds
from factories.analysis.class_audit import ClassAuditor
from factories.analysis.classes import ClassIndex, ClassInfo, MemberKind, Missing
from factories.analysis.extraction import Stub, has_object_new
from factories.analysis.findings import Finding, FindingKind, Location, Severity
from factories.analysis.readset import ReadSetAnalyzer
from factories.analysis.report import (
    FieldUsage,
    dedup_key,
    merged_tests,
    report_order,
    stale_fields,
    unreadable_input,
    unreadable_module,
    unresolved,
)
from factories.analysis.source_tree import Overlay, SourceTree, gc_paused
from factories.errors import AuditInputError, SourceError

if TYPE_CHECKING:  # annotations; the trigger and the stand-in audit load where a run uses them
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


class StubAuditor:
    """Audits stubs against one vLLM source tree.  Caches parsed files and method analyses."""

    def __init__(self, vllm_src: Path, overlay: Overlay | None = None) -> None:
        self.tree = SourceTree(vllm_src, overlay)
        self.index = ClassIndex(self.tree)
        self.analyzer = ReadSetAnalyzer(self.index)
        self.checker = ClassAuditor(self.tree, self.index, self.analyzer)
        self._exports: dict[Path, tuple[str, list]] = {}

    # -- test files ---------------------------------------------------------------------

    def extract(self, path: Path) -> list[Stub]:
        module = self.tree.load(self.tree.module_name_for(path), path)
        extractor = extraction.StubExtractor(module)  # loaded on first use
        found = extractor.stubs()
        if extractor.exports:
            self._exports[path] = (module.name, extractor.exports)
        return found

    def imported_uses(self, files: Sequence[Path], exporters: Iterable[Path]) -> list[Stub]:
        """Stubs that helpers of the ``exporters`` (``tests/.../utils.py``) return, followed
        into the other test ``files`` that import and call those helpers."""
        exports = [(p, *self._exports[p]) for p in exporters if p in self._exports]
        if not exports:
            return []
        names = {name for _, _, found in exports for name, _, _ in found}
        out: list[Stub] = []
        for path in files:
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue  # reported where the file is audited
            if not any(name in text for name in names):
                continue
            try:
                module = self.tree.load(self.tree.module_name_for(path), path)
            except SourceError:
                continue  # reported where the file is audited
            extractor = extraction.StubExtractor(module)  # loaded on first use
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

    def dependencies(self, stub: Stub) -> frozenset[str]:
        """The vLLM modules a change to which can change ``stub``'s findings: those its class
        name resolves through, those of every class in its MRO (where every method analysed
        for it lives) and of the names their bases and the test's patches resolve through.
        The source-change trigger's reverse index (``factories.analysis.trigger``)."""
        with self.tree.recording() as asked:
            try:
                target = self.checker.class_of(stub)
                if isinstance(target, Missing):
                    asked.add(target.module.name)
                if isinstance(target, ClassInfo):
                    for klass in self.index.mro(target)[0]:
                        asked.add(klass.module.name)
                        for base in klass.node.bases:
                            expr = base.value if isinstance(base, ast.Subscript) else base
                            self.index.resolve(klass.module, ast.unparse(expr))
                    self.checker.replaced_methods(stub, target)
            except SourceError as exc:
                asked.add(self.tree.module_name_for(exc.path))
        return frozenset(m for m in asked if m == "vllm" or m.startswith("vllm."))

    def triggered(self, changed: set[str], scan: TextScan | None = None) -> dict[Path, list[Stub]]:
        """Test files under ``<root>/tests`` holding a stub that depends on a ``changed``
        module, with their stubs; the text pre-filter only narrows which files are analysed.
        A candidate that cannot be read or parsed is kept (its audit reports it)."""
        from factories.analysis.trigger import TextScan, dependent_stubs  # the hook's path only

        scan = scan or TextScan(self.tree)
        extracted: dict[Path, list[Stub]] = {}
        unreadable: list[Path] = []
        with gc_paused():
            for path in scan.candidate_files(changed):
                try:
                    extracted[path] = self.extract(path)
                except SourceError:
                    unreadable.append(path)
            dependent = dependent_stubs(extracted, self.dependencies, changed)
        return {path: extracted.get(path, []) for path in sorted(unreadable + dependent)}

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
        stubs: list[Stub] = []
        tables: dict[str, StandInTable] = {}
        with_stubs = 0
        for i, path in enumerate(files):
            if progress is not None and len(files) > 200 and i % 500 == 0:
                progress(f"[audit] {i}/{len(files)} files")
            try:
                found = known[path] if known.get(path) else self._stubs_of(path, path in explicit)
            except SourceError as exc:
                unreadable.append(exc)  # reported; the other files are still audited
                n_read -= 1
                continue
            if found:
                with_stubs += 1
            stubs.extend(found)
            if standins:
                table = self.standins_of(path, bool(found))
                if table is not None:
                    tables[str(path)] = table
        # Helpers shared between test modules live in modules that are not tests themselves
        # (``utils.py``, ``common.py``); a test module's own helpers serve its own tests.
        shared = [p for p in files if p in self._exports and not p.name.startswith("test_")]
        stubs.extend(self.imported_uses(files, shared))
        result = self.audit_stubs(
            stubs, n_read, with_stubs, allowlist, unreadable, since, tables if standins else None
        )
        audited = tuple(p for p in files if not any(e.path == p for e in unreadable))
        return attrs.evolve(result, files=audited)

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
        findings: dict[tuple, Finding] = {}
        sites: set[Location] = set()
        resolved_sites: set[Location] = set()
        audited_sites: set[Location] = set()
        usages: dict[Location, list[FieldUsage]] = {}
        broken: dict[Path, tuple[SourceError, list[Stub]]] = {}
        blocked_sites: set[Location] = set()
        silenced_at: dict[Location, frozenset[str] | None] = {}
        suppressed = 0
        for stub in stubs:
            sites.add(stub.location)
            silenced_at.setdefault(stub.location, self._silenced(stub, stub.location))
            try:
                target = self.checker.class_of(stub)
                if isinstance(target, ClassInfo):
                    table = standins.get(_calling_path(stub)) if standins is not None else None
                    found, usage = self.checker.audit_class(
                        stub, target, table.stubs if table is not None else None
                    )
                else:
                    found, usage = self.checker.audit_stub(stub, target), None
                    if not found:
                        found = [unresolved(stub, target)]
            except SourceError as exc:
                broken.setdefault(exc.path, (exc, []))[1].append(stub)
                blocked_sites.add(stub.location)
                # Unaudited: no stale-field verdict for the fields this site sets.
                usages.setdefault(stub.location, []).append(FieldUsage.unknown(stub))
                continue
            if usage is not None:
                resolved_sites.add(stub.location)
                if stub.calls:
                    audited_sites.add(stub.location)
                usages.setdefault(stub.location, []).append(usage)
            for finding in found:
                if self._is_silenced(stub, silenced_at[stub.location], finding):
                    suppressed += 1
                    continue
                key = dedup_key(finding)
                if key in findings:
                    finding = merged_tests(findings[key], finding)
                findings[key] = finding
        for finding in self._standin_findings(standins or {}):
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
        used: set[str] = set()
        kept: list[Finding] = [unreadable_input(exc) for exc in unreadable]
        kept.extend(unreadable_module(self.tree, exc, users) for exc, users in broken.values())
        marked = since.mark(findings.values()) if since is not None else findings.values()
        for finding in marked:
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

    def standins_of(self, path: Path, has_stubs: bool) -> StandInTable | None:
        """The stand-ins of one test file as the audit judges them; None where it builds
        none that meets vLLM code."""
        found = self.standins_found(path, has_stubs)
        if not found:
            return None
        from factories.analysis.standin_audit import StandInTable  # --standins runs only

        return StandInTable.of(self.tree.load(self.tree.module_name_for(path), path), found)

    def standins_found(self, path: Path, has_stubs: bool) -> tuple[extraction.StandIn, ...]:
        """What the extractor finds in one test file (parsed once: the tree caches the module
        the stub extraction loaded); ``()`` for a file that cannot hold one or cannot be read
        (reported where the file's stubs are extracted)."""
        try:
            if not has_stubs and not extraction.might_hold_standins(
                path.read_text(encoding="utf-8", errors="replace")
            ):
                return ()
            module = self.tree.load(self.tree.module_name_for(path), path)
        except (OSError, SourceError):
            return ()
        return tuple(extraction.StandInExtractor(module).standins())

    def _standin_findings(self, tables: Mapping[str, StandInTable]) -> Iterable[Finding]:
        """The findings of the namespaces no stub's call judges: made ``self`` (replayed),
        and handed to a function or a static or class method (``handed_findings``)."""
        yield from self._standin_selves(tables)
        if not tables:
            return
        from factories.analysis.standin_audit import handed_findings  # --standins runs only

        for path, table in tables.items():
            for handed in table.handed:
                try:
                    found = handed_findings(self.index, self.analyzer, handed, table.stubs)
                except SourceError:
                    continue  # the module is reported where a stub of it is audited
                lines = self._standin_lines(path)
                for finding in found:
                    if not is_suppressed(
                        suppressed_kinds(lines, handed.location.line, path), finding
                    ):
                        yield finding

    def _standin_lines(self, path: str) -> Sequence[str]:
        module = self.tree.load(self.tree.module_name_for(Path(path)), Path(path))
        return module.lines

    def _standin_selves(self, tables: Mapping[str, StandInTable]) -> Iterable[Finding]:
        """Namespaces made ``self`` of a plain method (``Cls.m(ns)``), replayed as stubs
        of ``Cls``; a classmethod or staticmethod takes them as an argument instead."""
        for table in tables.values():
            for call in table.selves:
                stub = call.stub
                try:
                    target = self.checker.class_of(stub)
                    if not isinstance(target, ClassInfo):
                        continue
                    stub = attrs.evolve(stub, events=self._plain_method_calls(stub, target))
                    if not stub.calls:
                        continue
                    found, _ = self.checker.audit_class(
                        stub, target, table.stubs, stated_locals=True
                    )
                except SourceError:
                    continue  # the module is reported where a stub of it is audited
                for finding in found:
                    if not self._is_silenced(stub, self._silenced(stub, stub.location), finding):
                        yield call.restated(finding)

    def _plain_method_calls(self, stub: Stub, cls: ClassInfo) -> tuple:
        """The stub's events less the calls of names ``cls`` does not define as a plain
        method (a classmethod or staticmethod takes the namespace as an argument)."""
        kept = []
        for event in stub.events:
            member = self.index.lookup(cls, event.name) if event in stub.calls else None
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


def _calling_path(stub: Stub) -> str:
    """The test file whose calls the stub's events are (a helper's stub: its caller's)."""
    return str((stub.scope_module or stub.module).path)


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
