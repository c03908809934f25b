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
import difflib
import fnmatch
import os
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import attrs

from factories.analysis.baseline import finding_file, is_suppressed, suppressed_kinds
from factories.analysis.classes import (
    ClassIndex,
    ClassInfo,
    External,
    MemberKind,
    Missing,
    ModuleRef,
    Unknown,
)
from factories.analysis.findings import Finding, FindingKind, Location, Severity
from factories.analysis.readset import CallContext, MethodReport, ReadSetAnalyzer
from factories.analysis.since import KnownReads
from factories.analysis.source_tree import Overlay, SourceTree, gc_paused
from factories.analysis.stubs import EventKind, Stub, StubEvent, StubExtractor, has_object_new
from factories.analysis.trigger import TextScan
from factories.errors import AuditInputError, SourceError


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


@attrs.frozen
class Allowlist:
    """``kind:Class.method:name`` patterns (fnmatch) that silence known findings, as stubtest's.

    ``FILE::kind:Class.method:name`` scopes a pattern to the test files ``FILE`` (a glob,
    relative to ``--vllm-src``) matches: a finding known in one file stays new in any other.
    """

    patterns: tuple[str, ...] = ()

    @classmethod
    def read(cls, path: Path) -> Allowlist:
        """The patterns of an allowlist file; ``AuditInputError`` naming ``file:line`` for a
        line that is not ``kind:Class.method:name`` or that would silence every finding."""
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise AuditInputError(f"cannot read allowlist {path}: {exc.strerror}") from None
        except UnicodeDecodeError as exc:
            raise AuditInputError(f"cannot read allowlist {path}: not UTF-8 ({exc})") from None
        patterns = []
        for number, line in enumerate(lines, start=1):
            entry = line.split("#", 1)[0].strip()
            if entry:
                problem = _allowlist_problem(entry)
                if problem:
                    raise AuditInputError(f"{path}:{number}: allowlist entry {entry!r} {problem}")
                patterns.append(entry)
        return cls(tuple(patterns))

    def matches(self, finding: Finding, file: str | None = None) -> str | None:
        """The first pattern silencing ``finding``, reported in test file ``file``."""
        for pattern in self.patterns:
            scope, sep, rest = pattern.partition("::")
            if sep:
                if file is None or not fnmatch.fnmatchcase(file, scope):
                    continue
                pattern_key = rest
            else:
                pattern_key = pattern
            if fnmatch.fnmatchcase(finding.key, pattern_key):
                return pattern
        return None


def _allowlist_problem(entry: str) -> str | None:
    """Why ``entry`` is not a usable ``kind:Class.method:name`` pattern, or None.

    A pattern made of wildcards and separators only (``*``, ``*:*:*``) would silence every
    finding, new drift included; a kind that matches no finding kind is a typo that would
    silence nothing.
    """
    scope, scoped, pattern = entry.partition("::")
    if not scoped:
        pattern, scope = entry, ""
    elif not scope:
        return "names no file before '::'"
    if not pattern.strip("*?:.") and not scope.strip("*?/."):
        return "matches every finding; name a file, kind, class, method or attribute"
    kind, sep, rest = pattern.partition(":")
    method, sep2, name = rest.rpartition(":")
    if not (sep and sep2 and kind and method and name):
        return "is not of the form kind:Class.method:name"
    kinds = [k.value for k in FindingKind if k is not FindingKind.UNREADABLE_FILE]
    if not fnmatch.filter(kinds, kind):
        return f"matches no finding kind ({', '.join(kinds)})"
    return None


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
        self._exports: dict[Path, tuple[str, list]] = {}

    # -- test files ---------------------------------------------------------------------

    def extract(self, path: Path) -> list[Stub]:
        module = self.tree.load(self.tree.module_name_for(path), path)
        extractor = StubExtractor(module)
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
            extractor = StubExtractor(module)
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
                target = self._class_of(stub)
                if isinstance(target, Missing):
                    asked.add(target.module.name)
                if isinstance(target, ClassInfo):
                    for klass in self.index.mro(target)[0]:
                        asked.add(klass.module.name)
                        for base in klass.node.bases:
                            expr = base.value if isinstance(base, ast.Subscript) else base
                            self.index.resolve(klass.module, ast.unparse(expr))
                    self._replaced_methods(stub, target)
            except SourceError as exc:
                asked.add(self.tree.module_name_for(exc.path))
        return frozenset(m for m in asked if m == "vllm" or m.startswith("vllm."))

    def triggered(self, changed: set[str], scan: TextScan | None = None) -> dict[Path, list[Stub]]:
        """Test files under ``<root>/tests`` holding a stub that depends on a ``changed``
        module, with their stubs; the text pre-filter only narrows which files are analysed.
        A candidate that cannot be read or parsed is kept (its audit reports it)."""
        scan = scan or TextScan(self.tree)
        out: dict[Path, list[Stub]] = {}
        with gc_paused():
            for path in scan.candidate_files(changed):
                try:
                    stubs = self.extract(path)
                except SourceError:
                    out[path] = []
                    continue
                if any(self.dependencies(stub) & changed for stub in stubs):
                    out[path] = stubs
        return out

    def audit_paths(
        self,
        paths: Sequence[Path],
        allowlist: Allowlist = Allowlist(),
        progress=None,
        known: Mapping[Path, list[Stub]] | None = None,
        since: KnownReads | None = None,
    ) -> AuditResult:
        """Audit test files and folders; ``known`` are stubs already extracted by path (the
        trigger's), so those files are not parsed twice; ``since``: the reads a base version
        already had (``factories.analysis.since``), so that new ones are errors."""
        with gc_paused():
            return self._audit_paths(paths, allowlist, progress, known or {}, since)

    def _audit_paths(
        self,
        paths: Sequence[Path],
        allowlist: Allowlist,
        progress,
        known: Mapping[Path, list[Stub]],
        since: KnownReads | None,
    ) -> AuditResult:
        files, unreadable = expand_paths(paths)
        n_read = len(files)
        explicit = {p for p in paths if p.is_file()}
        stubs: list[Stub] = []
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
        # Helpers shared between test modules live in modules that are not tests themselves
        # (``utils.py``, ``common.py``); a test module's own helpers serve its own tests.
        shared = [p for p in files if p in self._exports and not p.name.startswith("test_")]
        stubs.extend(self.imported_uses(files, shared))
        result = self.audit_stubs(stubs, n_read, with_stubs, allowlist, unreadable, since)
        audited = tuple(p for p in files if not any(e.path == p for e in unreadable))
        return attrs.evolve(result, files=audited)

    def audit_stubs(
        self,
        stubs: Sequence[Stub],
        n_files: int,
        n_with_stubs: int,
        allowlist: Allowlist = Allowlist(),
        unreadable: Sequence[SourceError] = (),
        since: KnownReads | None = None,
    ) -> AuditResult:
        """Findings for ``stubs``; ``unreadable`` are the input files that could not be read;
        ``since`` marks the undecided reads a base version did not have (before the allowlist,
        which may name the new kind).

        A vLLM module that does not parse stops only the stubs that need it: they become one
        ``unreadable-file`` finding per module, and every other stub is still audited.
        """
        findings: dict[tuple, Finding] = {}
        sites: set[Location] = set()
        resolved_sites: set[Location] = set()
        audited_sites: set[Location] = set()
        usages: dict[Location, list[_FieldUsage]] = {}
        broken: dict[Path, tuple[SourceError, list[Stub]]] = {}
        blocked_sites: set[Location] = set()
        silenced_at: dict[Location, frozenset[str] | None] = {}
        suppressed = 0
        for stub in stubs:
            sites.add(stub.location)
            silenced_at.setdefault(stub.location, self._silenced(stub, stub.location))
            try:
                target = self._class_of(stub)
                if isinstance(target, ClassInfo):
                    found, usage = self._audit_class(stub, target)
                else:
                    found, usage = self.audit_stub(stub, target), None
                    if not found:
                        found = [_unresolved(stub, target)]
            except SourceError as exc:
                broken.setdefault(exc.path, (exc, []))[1].append(stub)
                blocked_sites.add(stub.location)
                # Unaudited: no stale-field verdict for the fields this site sets.
                usages.setdefault(stub.location, []).append(_FieldUsage.unknown(stub))
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
                key = _dedup_key(finding)
                if key in findings:
                    finding = _merged_tests(findings[key], finding)
                findings[key] = finding
        for site, uses in usages.items():
            for finding in _stale_fields({site: uses}):
                if is_suppressed(silenced_at.get(site), finding):
                    suppressed += 1
                    continue
                findings.setdefault(_dedup_key(finding), finding)
        used: set[str] = set()
        kept: list[Finding] = [_unreadable_input(exc) for exc in unreadable]
        kept.extend(_unreadable_module(self.tree, exc, users) for exc, users in broken.values())
        marked = since.mark(findings.values()) if since is not None else findings.values()
        for finding in marked:
            pattern = allowlist.matches(finding, finding_file(finding, self.tree.root))
            if pattern is None:
                kept.append(finding)
            else:
                used.add(pattern)
        kept.sort(key=_report_order)
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

    def audit_stub(self, stub: Stub, target=None) -> list[Finding]:
        if target is None:
            target = self._class_of(stub)
        if isinstance(target, Missing):
            close = target.close_names()
            return [
                Finding(
                    kind=FindingKind.MISSING_CLASS,
                    class_name=stub.class_expr,
                    method="<class>",
                    name=target.name,
                    message=f"{target.module.name} no longer defines {target.name}"
                    f"{_did_you_mean(close)}",
                    vllm_location=Location(str(target.module.path), 1),
                    stub_location=stub.location,
                    stub_side=f"object.__new__({stub.class_expr})",
                    vllm_side="names: " + ", ".join(close) if close else "not defined",
                )
            ]
        if isinstance(target, External) and target.dotted.startswith("vllm."):
            return [self._missing_module(stub, target.dotted)]
        if not isinstance(target, ClassInfo):
            return []
        return self._audit_class(stub, target)[0]

    def _missing_module(self, stub: Stub, dotted: str) -> Finding:
        """``from vllm.x.y import C`` where ``vllm/x/y`` no longer exists in the tree."""
        parts = dotted.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            if self.tree.module(".".join(parts[:cut])) is not None:
                break
        parent = ".".join(parts[:cut])
        missing = parts[cut] if cut < len(parts) else dotted
        parent_dir = self.tree.root.joinpath(*parent.split("."))
        siblings = sorted(
            p.stem if p.suffix == ".py" else p.name
            for p in (parent_dir.iterdir() if parent_dir.is_dir() else [])
            if p.suffix == ".py" or (p / "__init__.py").is_file()
        )
        close = difflib.get_close_matches(missing, siblings, n=3, cutoff=0.6)
        return Finding(
            kind=FindingKind.MISSING_CLASS,
            class_name=stub.class_expr,
            method="<class>",
            name=dotted,
            message=f"{parent}.{missing} no longer exists in the vLLM source{_did_you_mean(close)}",
            vllm_location=None,
            stub_location=stub.location,
            stub_side=f"object.__new__({stub.class_expr}) from {dotted}",
            vllm_side="close: " + ", ".join(close) if close else "not found",
        )

    def _audit_class(self, stub: Stub, cls: ClassInfo) -> tuple[list[Finding], _FieldUsage]:
        out: list[Finding] = []
        state: frozenset[str] = frozenset()
        constants: dict[str, object] = {}
        maybe_written: frozenset[str] = frozenset()
        provided: set[str] = set()  # set by the test itself (for ``provisioned`` blocks)
        replaced, functions, raising = self._replaced_methods(stub, cls)
        set_at: dict[str, Location] = {}
        reads: set[str] = set()
        analysed_any = False
        last_call_index = max(
            (i for i, e in enumerate(stub.events) if e.kind is EventKind.CALL), default=-1
        )
        for i, event in enumerate(stub.events):
            if event.kind is EventKind.READ:
                reads.add(event.name)  # the test reads the field itself: not stale
                continue
            if event.kind is EventKind.SET:
                if event.must_exist and event.name not in state:
                    out.extend(self._patch_of_missing_name(cls, event))
                state = state | {event.name}
                provided.add(event.name)
                if event.has_value:
                    constants[event.name] = event.value
                else:
                    constants.pop(event.name, None)
                if i < last_call_index:
                    set_at.setdefault(event.name, event.location)
                continue
            if event.via is not None and not self._runs_own_method(stub, cls, event):
                continue  # ``Other.m(stub)``: not a method of the stub's class
            if event.name in state and event.via is None:
                reads.add(event.name)  # calls a callable the test put on the object
                continue
            member = self.index.lookup(cls, event.name)
            if member is None and self.index.mro(cls)[1]:
                continue  # may come from a base outside the tree (torch.nn.Module, ...)
            if member is None:
                close = self.index.close_member_names(cls, event.name)
                out.append(
                    _at_call(
                        cls,
                        event,
                        kind=FindingKind.MISSING_METHOD,
                        name=event.name,
                        message=f"{cls.name} has no attribute {event.name!r}{_did_you_mean(close)}",
                        vllm_location=Location(cls.path, cls.node.lineno),
                        stub_side=f"calls {event.name}()",
                        vllm_side="close: " + ", ".join(close) if close else "not defined",
                    )
                )
                continue
            if member.kind not in (
                MemberKind.METHOD,
                MemberKind.STATICMETHOD,
                MemberKind.CLASSMETHOD,
            ):
                continue
            # Class-level literals (``use_aiter_sparse_mla = False``) are what the instance
            # reads for a field neither the stub nor any earlier call may have assigned.
            known = {
                name: value
                for name, value in self.index.literal_defaults(cls).items()
                if name not in state and name not in maybe_written
            }
            known.update(constants)
            context = CallContext(
                replaced=replaced,
                patched_functions=functions,
                raising=raising,
                expect_raise=event.expect_raise,
                detached=event.detached,
            )
            report = self.analyzer.analyze(
                cls, event.name, state, known, call=event.shape, provided=provided, context=context
            )
            maybe_written |= report.written_names
            analysed_any = True
            assert event.shape is not None
            for mismatch in report.signature.check(event.shape):
                out.append(
                    _at_call(
                        cls,
                        event,
                        kind=mismatch.kind,
                        name=mismatch.name,
                        message=f"{cls.name}.{event.name}() {mismatch.message}",
                        vllm_location=report.location,
                        stub_side=f"call passes {event.shape}",
                        vllm_side=f"def {event.name}{report.signature}",
                    )
                )
            out.extend(self._missing_reads(stub, cls, event, report))
            reads |= report.read_names
            state = report.state_after
            for name in report.written_names:
                constants.pop(name, None)
        usage = _FieldUsage(
            class_name=cls.name,
            methods=tuple(e.name for e in stub.calls),
            set_at=set_at,
            reads=frozenset(reads),
            eligible=analysed_any and not stub.escapes and not stub.opaque,
        )
        return out, usage

    def _replaced_methods(
        self, stub: Stub, cls: ClassInfo
    ) -> tuple[frozenset[tuple[str, str]], frozenset[str], frozenset]:
        """What the test patched: (class qualname, method) for each patched method, the
        dotted name of each patched module function (``vllm.x.mod.helper``, ``torch.save``),
        and those of both whose replacement raises on every call.

        Only a patch of a class in ``cls``'s MRO can matter, so full dotted paths naming
        another class are not resolved (resolving ``"vllm.x.y.helper"`` would parse
        ``vllm/x/y.py`` for nothing)."""
        in_mro = {klass.name for klass in self.index.mro(cls)[0]}
        methods: set[tuple[str, str]] = set()
        functions: set[str] = set()
        raising: set = set()
        scope, imports = _calling_scope(stub)
        for dotted in stub.patched:
            owner, _, method = dotted.rpartition(".")
            raises = dotted in stub.raising
            target = self.index.resolve(scope, owner, imports)
            if not isinstance(target, ClassInfo) and owner.rpartition(".")[2] in in_mro:
                target = self._resolve_absolute(owner)
            if target is None and _CLASS_OF_CLASS.search(owner):
                # ``Cls.__mro__[1]``, ``obj.__class__.__bases__[0]``: a class of the stub's
                # hierarchy picked by position.  Where the position is not readable, every
                # definition of the method in the MRO counts as replaced: the audit must not
                # follow a body the test may have patched out.
                picked = self._class_by_position(stub, owner)
                owners = [picked] if picked is not None else self.index.mro(cls)[0]
                for klass in owners:
                    methods.add((klass.qualname, method))
                    if raises:
                        raising.add((klass.qualname, method))
                continue
            if isinstance(target, ClassInfo):
                methods.add((target.qualname, method))
                if raises:
                    raising.add((target.qualname, method))
                continue
            if isinstance(target, ModuleRef):
                function = f"{target.module.name}.{method}"
            elif isinstance(target, External):
                function = f"{target.dotted}.{method}"
            elif owner.startswith("vllm.") or ("." in owner and target is None):
                function = dotted  # a string patch target: already dotted
            else:
                continue
            functions.add(function)
            if raises:
                raising.add(function)
        return frozenset(methods), frozenset(functions), frozenset(raising)

    def _class_of(self, stub: Stub):
        """What the stub's class expression names: through the test module's imports, or,
        for a full dotted path (``importlib.import_module("vllm.x.y").Cls``), in the tree; a
        class the test defines inside a function (with that function's imports); a registry
        entry with a literal key (``Owner._registry["nccl"]()``, ``ClassIndex.registered``).
        ``Unknown`` says why the extractor or the registry could not settle it."""
        if stub.local_class is not None:
            return ClassInfo(stub.module, stub.local_class, stub.local_scope, stub.local_imports)
        target = self.index.resolve(stub.module, stub.class_expr, stub.local_imports)
        if target is None and stub.class_expr.startswith("vllm."):
            found = self._resolve_absolute(stub.class_expr)
            if found is not None:
                return found
        if target is None:
            lookup = _registry_lookup(stub.class_expr)
            if lookup is not None:
                owner, attr, key = lookup
                return self.index.registered(stub.module, owner, attr, key, stub.local_imports)
        if target is None and stub.why is not None:
            return Unknown(stub.why)
        return target

    def _runs_own_method(self, stub: Stub, cls: ClassInfo, event: StubEvent) -> bool:
        """Whether ``Via.m(stub)`` runs what ``stub.m()`` would: ``Via`` is a class of the
        stub's MRO and finds the same plain method ``m`` (or, like the stub, none)."""
        scope, imports = _calling_scope(stub)
        via = self.index.resolve(scope, event.via or "", imports)
        if not isinstance(via, ClassInfo):
            return False
        if via.qualname not in {k.qualname for k in self.index.mro(cls)[0]}:
            return False
        own, named = self.index.lookup(cls, event.name), self.index.lookup(via, event.name)
        if own is None or named is None:
            return own is named
        if own.kind is not MemberKind.METHOD:
            return False  # a staticmethod takes the stub as a plain argument
        return own.owner.qualname == named.owner.qualname and own.node is named.node

    def _class_by_position(self, stub: Stub, owner: str) -> ClassInfo | None:
        """``Cls.__mro__[i]`` / ``Cls.__bases__[i]`` with ``Cls`` a class of the tree and the
        position within the in-tree classes, else None."""
        match = _CLASS_OF_CLASS.fullmatch(owner)
        if match is None:
            return None
        head, which, position = match.group(1), match.group(2), int(match.group(3))
        scope, imports = _calling_scope(stub)
        base = self.index.resolve(scope, head, imports)
        if not isinstance(base, ClassInfo):
            return None
        if which == "__mro__":
            chain, external = self.index.mro(base)
        else:
            chain, external = self.index.bases(base)
            if external:
                return None
        return chain[position] if position < len(chain) else None

    def _patch_of_missing_name(self, cls: ClassInfo, event: StubEvent) -> list[Finding]:
        """``monkeypatch.setattr(stub, "n", v)`` raises AttributeError when the stub has no
        ``n`` (pytest's ``raising=True`` default; ``patch.object`` without ``create``): the
        class must still define it.  Unknown when a base lies outside the tree."""
        if self.index.lookup(cls, event.name) is not None or self.index.mro(cls)[1]:
            return []
        if event.name in _OBJECT_NAMES:
            return []
        close = self.index.close_member_names(cls, event.name)
        return [
            _at_call(
                cls,
                event,
                kind=FindingKind.MISSING_METHOD,
                name=event.name,
                message=f"the test patches {cls.name}.{event.name}, which no longer exists "
                f"(monkeypatch.setattr raises AttributeError){_did_you_mean(close)}",
                vllm_location=Location(cls.path, cls.node.lineno),
                stub_side=f"patches {event.name}",
                vllm_side="close: " + ", ".join(close) if close else "not defined",
            )
        ]

    def _resolve_absolute(self, dotted: str) -> ClassInfo | None:
        """A class named by its full dotted path (``"vllm.x.y.Sampler"``, as string patch
        targets spell it) whether or not the test imports that module."""
        parts = dotted.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module = self.tree.module(".".join(parts[:cut]))
            if module is not None:
                found = self.index.resolve(module, ".".join(parts[cut:]))
                return found if isinstance(found, ClassInfo) else None
        return None

    def _missing_reads(
        self, stub: Stub, cls: ClassInfo, event: StubEvent, report: MethodReport
    ) -> Iterable[Finding]:
        if stub.opaque:
            return
        method = event.name
        for access in report.required:
            where = "" if access.certain else " on a path the test may not take"
            yield Finding(
                kind=FindingKind.MISSING_ATTRIBUTE
                if access.certain
                else FindingKind.POSSIBLY_MISSING_ATTRIBUTE,
                class_name=cls.name,
                method=method,
                name=access.name,
                message=f"{cls.name}.{method}() reads self.{access.name} "
                f"(in {access.method}){where} but the stub never sets it",
                vllm_location=access.location,
                stub_location=stub.location,
                stub_side="not set",
                vllm_side=f"read in {access.method}",
                tests=(event.test,) if event.test else (),
            )


def _registry_lookup(class_expr: str) -> tuple[str, str, str] | None:
    """``(Owner, attr, key)`` of ``Owner.attr["key"]`` or ``Owner.attr["key"]()`` (a registry
    holding classes or zero-argument loaders of them), else None."""
    try:
        expr = ast.parse(class_expr, mode="eval").body
    except SyntaxError:
        return None
    if isinstance(expr, ast.Call) and not expr.args and not expr.keywords:
        expr = expr.func
    if not (isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Attribute)):
        return None
    key = expr.slice
    if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
        return None
    owner = ast.unparse(expr.value.value)
    if not all(part.isidentifier() for part in owner.split(".")):
        return None
    return owner, expr.value.attr, key.value


# ``X.__mro__[1]``, ``X.__class__.__bases__[0]``: a class chosen by its place in a hierarchy.
_CLASS_OF_CLASS = re.compile(r"(.+?)\.(__mro__|__bases__)\[(\d+)\]")

_OBJECT_NAMES = frozenset(dir(object)) | {"__dict__", "__weakref__", "__module__"}


def _calling_scope(stub: Stub) -> tuple:
    """The module (and its function-local imports) whose names the test's calls and patches
    on ``stub`` use: another test module's, for a stub a helper returned to it."""
    if stub.scope_module is not None:
        return stub.scope_module, {}
    return stub.module, stub.local_imports


def _did_you_mean(close: Sequence[str]) -> str:
    """The message's suggestion tail: the names difflib found close, or nothing."""
    return f"; did you mean {', '.join(close)}?" if close else ""


def _at_call(cls: ClassInfo, event: StubEvent, **fields: object) -> Finding:
    """A finding about the stub's call ``event`` on ``cls``: the class, the method and the
    stub side's location are the call's; ``fields`` say what is wrong with it."""
    return Finding(
        class_name=cls.name,
        method=event.name,
        stub_location=event.location,
        tests=(event.test,) if event.test else (),
        **fields,  # type: ignore[arg-type]
    )


def _merged_tests(kept: Finding, again: Finding) -> Finding:
    """One finding met again on another test's path: it names both tests.  A call outside
    any test function names none, and then neither does the finding (not attributed)."""
    tests = tuple(dict.fromkeys(kept.tests + again.tests)) if kept.tests and again.tests else ()
    return kept if tests == kept.tests else attrs.evolve(kept, tests=tests)


@attrs.frozen
class _FieldUsage:
    """What one use of a stub sets (before its last call) and what the analysed calls read."""

    class_name: str
    methods: tuple[str, ...]
    set_at: dict[str, Location] = attrs.field(eq=False)
    reads: frozenset[str]
    eligible: bool

    @classmethod
    def unknown(cls, stub: Stub) -> _FieldUsage:
        """A use that could not be analysed: it may read anything the site sets."""
        return cls(stub.class_expr, (), {}, frozenset(), eligible=False)


def _unresolved(stub: Stub, target: object) -> Finding:
    """A stub not audited because its class is not a class of the tree, with the reason."""
    if isinstance(target, External):
        reason = f"outside the vLLM source: {target.dotted}"
    elif isinstance(target, Unknown):
        reason = target.reason
    elif target is None:
        reason = "a dynamic expression, or a class defined inside a function"
    else:
        reason = "not a class"
    return Finding(
        kind=FindingKind.UNRESOLVED_STUB,
        class_name=stub.class_expr,
        method="<class>",
        name=stub.class_expr,
        message=f"object.__new__({stub.class_expr}) not audited: {reason}",
        vllm_location=None,
        stub_location=stub.location,
        stub_side=f"object.__new__({stub.class_expr})",
        vllm_side=reason,
    )


def _unreadable_input(exc: SourceError) -> Finding:
    """A test file (or folder) given to the audit that could not be read or parsed."""
    return Finding(
        kind=FindingKind.UNREADABLE_FILE,
        class_name="<file>",
        method="<read>",
        name=str(exc.path),
        message=f"{exc.reason} (not audited)",
        vllm_location=None,
        stub_location=Location(str(exc.path), exc.line),
        stub_side="not audited",
        vllm_side="",
    )


def _unreadable_module(tree: SourceTree, exc: SourceError, users: list[Stub]) -> Finding:
    """A vLLM module that does not parse, reported once with the first stub that needed it."""
    module = tree.module_name_for(exc.path)
    first = min(users, key=lambda stub: (stub.location.path, stub.location.line))
    more = f" and {len(users) - 1} more" if len(users) > 1 else ""
    return Finding(
        kind=FindingKind.UNREADABLE_FILE,
        class_name="<module>",
        method="<read>",
        name=module,
        message=f"vLLM module {module} cannot be read ({exc.reason}); the stubs that need it "
        f"are not audited",
        vllm_location=Location(str(exc.path), exc.line),
        stub_location=first.location,
        stub_side=f"object.__new__({first.class_expr}){more} not audited",
        vllm_side=exc.reason,
    )


def _report_order(finding: Finding) -> tuple:
    """Where the report points (the stub, else the vLLM code), by path then line *number*,
    so that line 6 comes before line 10013."""
    where = finding.stub_location or finding.vllm_location
    return (
        (where.path, where.line) if where else ("", 0),
        finding.kind.value,
        finding.name,
    )


def _stale_fields(usages: dict[Location, list[_FieldUsage]]) -> Iterable[Finding]:
    """Fields set at a creation site that no use of that site reads.

    A helper that builds one stub for several tests sets the union of what those tests need,
    so a field is stale only when *every* use of the stub leaves it unread.
    """
    for uses in usages.values():
        if not uses or not all(u.eligible for u in uses):
            continue
        read_anywhere = frozenset().union(*(u.reads for u in uses))
        methods = sorted({m for u in uses for m in u.methods})
        set_at: dict[str, Location] = {}
        for use in uses:
            for name, location in use.set_at.items():
                set_at.setdefault(name, location)
        for name, location in sorted(set_at.items()):
            if name in read_anywhere:
                continue
            yield Finding(
                kind=FindingKind.STALE_FIELD,
                class_name=uses[0].class_name,
                method=",".join(methods),
                name=name,
                message=f"stub sets {name!r} but no analysed method of "
                f"{uses[0].class_name} ({', '.join(methods)}) reads it any more",
                vllm_location=None,
                stub_location=location,
                stub_side=f"sets {name}",
                vllm_side="never read",
            )


def _dedup_key(finding: Finding) -> tuple:
    return (
        finding.kind,
        finding.class_name,
        finding.method,
        finding.name,
        finding.vllm_location,
        finding.stub_location,
    )


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
