"""Namespace stand-ins over vLLM's releases: the fields tests added, and the audit's recall.

``history.py`` counts the attributes vLLM's tests had to add to existing ``object.__new__``
stubs between releases N and N+1.  vLLM's tests also hand real vLLM code
``types.SimpleNamespace(...)`` and ``argparse.Namespace(...)`` objects; this module counts the
same thing for those, with its own small AST walk (no code shared with the analyzer's extractor,
for the reason ``history.py`` gives: a blind spot shared by the measure and the measured
flatters recall).  Only the rewrite threshold is ``history.py``'s.

**Recall.**  As for stubs, release N's tests (the files holding a repaired site) are audited
against release N+1's source, here with stand-ins (``audit_paths(..., standins=True)``, what
``audit-stubs --standins`` runs), through the audit's public API only; ``StandinFindings``
states which finding names which added field.  The repairs no error names are then described
by how the analyzer's extraction sees their stand-in (``extraction_view``): a diagnosis of the
misses, which the recall never consults.

**Matching rule.**  A stand-in *site* is one call whose callee resolves, through the test
module's imports (``import types as t``, ``from types import SimpleNamespace as NS``, a
``NS = SimpleNamespace`` alias anywhere in the module), to ``types.SimpleNamespace`` or
``argparse.Namespace``.  Its key is ``(test file relative to the release root, qualname of the
innermost function or class holding the call, the target text, ordinal of this (scope,
target) pair)``.  The target says where the object goes: the assignment target
(``builder.mla_dims``, ``a = b`` for chained targets), ``<return>``/``<yield>``, ``f(x=)`` for
a keyword argument and ``f(#2)`` for a positional one, ``obj.attr`` for
``setattr(obj, "attr", NS(...))``, ``<outer>.kw`` for a keyword of an enclosing stand-in,
``<outer>[]`` for an element of a list, tuple, set or comprehension (``<outer>['k']`` for a
dict value under a literal key), ``<outer>()`` for a lambda's body, otherwise ``<NodeType>``.
Two releases' sites match when their keys are equal.  A matched site whose scope was
*rewritten* is left out: the scope's statements (a module- or class-level site: the statement
holding the call) are unparsed with every stand-in call's arguments dropped, so that adding a
field is not itself a rewrite and formatting does not count, and compared line by line with
``difflib.SequenceMatcher``; a ratio below ``REWRITE_RATIO`` means rewritten.  A *repair* is a
field a matched site sets at N+1 and not at N; a removed field is not counted.

**Fields a site sets**: the call's keyword names and the literal keys of ``**{...}``; then, in
the same scope after the call (a function's body, nested functions included; the module's
statements outside functions and classes; nothing in a class body), for a site bound to a name or
attribute expression ``t`` (an assignment target, or ``t.kw`` for a stand-in nested in a keyword
of a bound one): ``t.a = ...``, ``t.a: T = ...``, ``setattr(t, "a", ...)``,
``object.__setattr__``/``monkeypatch.setattr`` with a literal name, until ``t`` is bound again.

**Limits.**  A renamed or moved file, function or target, or a second stand-in of the same
target inserted above the first, makes a *new* site (no repair is counted for it).  Not
followed: aliases (``u = t``), other functions (helpers, sibling methods of a ``self.cfg`` set
in ``setup_method``, callers of a factory, fixtures), ``**base`` dicts without literal keys,
stand-ins built by other means (``MagicMock(spec=...)``, dataclasses).  History's *extensions*
(a field set only in a function that did not use the stub at N) cannot occur: every field is
set in the site's own scope, which existed at N.  A field a factory gains for a new caller is
therefore counted as a repair.  Imports are read module-wide, whatever their scope.
"""

from __future__ import annotations

import ast
import re
import shutil
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

import attrs

from factories.analysis import extraction
from factories.analysis._walk import child_nodes, walk
from factories.analysis.audit import StubAuditor
from factories.analysis.extraction import MeetingHow, StandIn, str_literal
from factories.analysis.findings import Finding, FindingKind, Severity
from factories.analysis.standin_audit import NAMESPACE_KINDS, audited
from factories.errors import HistoryInputError, SourceError
from factories.evaluation import history
from factories.evaluation.history import (
    PRIOR,
    REWRITE_RATIO,
    check_release,
    format_pct,
    pct_of,
    work_root,
)

#: What a stand-in call's callee must resolve to.
STANDIN_CALLEES = frozenset({"types.SimpleNamespace", "argparse.Namespace"})
_CALLEE_MODULES = frozenset(name.partition(".")[0] for name in STANDIN_CALLEES)
_SETATTR_NAMES = frozenset({"setattr", "__setattr__"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_TRANSPARENT = (ast.IfExp, ast.BoolOp, ast.Await, ast.Starred)
_CONTAINERS = (ast.List, ast.Tuple, ast.Set, ast.ListComp, ast.SetComp, ast.GeneratorExp)

Progress = Callable[[str], None]


@attrs.frozen
class StandinSite:
    """One stand-in call in one release's tests and the fields the test gives it.

    ``fields`` maps each field to the first line that sets it; ``fingerprint`` is the scope's
    statements with stand-in arguments dropped (the rewrite test).
    """

    file: str
    scope: str
    target: str
    ordinal: int
    line: int
    callee: str
    fields: tuple[tuple[str, int], ...]
    fingerprint: tuple[str, ...] = attrs.field(repr=False)

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.file, self.scope, self.target, self.ordinal)

    @property
    def field_names(self) -> frozenset[str]:
        return frozenset(name for name, _ in self.fields)


def _resolve(func: ast.AST, direct: dict[str, str], modules: dict[str, str]) -> str | None:
    """The stand-in callee ``func`` names, given the module's imports and aliases."""
    if isinstance(func, ast.Name):
        return direct.get(func.id)
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        module = modules.get(func.value.id)
        name = f"{module}.{func.attr}"
        return name if module and name in STANDIN_CALLEES else None
    return None


class _Module:
    """One parsed test file: parents, scope qualnames, its stand-in calls (one walk)."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.parents: dict[ast.AST, ast.AST] = {}
        self.qualname: dict[ast.AST, str] = {tree: "<module>"}
        self._calls: list[ast.Call] = []
        self._aliases: list[ast.Assign] = []
        self._direct: dict[str, str] = {}
        self._modules: dict[str, str] = {}
        self._walk(tree, "")
        for node in self._aliases:  # ``NS = SimpleNamespace``
            resolved = _resolve(node.value, self._direct, self._modules)
            if resolved:
                self._direct.setdefault(node.targets[0].id, resolved)  # type: ignore[attr-defined]
        self.callee: dict[ast.Call, str] = {}
        for call in self._calls:
            resolved = _resolve(call.func, self._direct, self._modules)
            if resolved:
                self.callee[call] = resolved
        self._nodes: dict[ast.AST, list[ast.AST]] = {}

    def _walk(self, node: ast.AST, prefix: str) -> None:
        for child in child_nodes(node):
            self.parents[child] = node
            if isinstance(child, ast.Call):
                self._calls.append(child)
            elif isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name in _CALLEE_MODULES:
                        self._modules[alias.asname or alias.name] = alias.name
            elif isinstance(child, ast.ImportFrom) and child.level == 0:
                for alias in child.names:
                    if f"{child.module}.{alias.name}" in STANDIN_CALLEES:
                        self._direct[alias.asname or alias.name] = f"{child.module}.{alias.name}"
            elif isinstance(child, ast.Assign) and len(child.targets) == 1:
                if isinstance(child.targets[0], ast.Name):
                    self._aliases.append(child)
            if isinstance(child, _SCOPES):
                self.qualname[child] = f"{prefix}{child.name}"
                self._walk(child, f"{prefix}{child.name}.")
            else:
                self._walk(child, prefix)

    def nodes(self, scope: ast.AST) -> list[ast.AST]:
        """The nodes of a function's body in source order (nested functions included)."""
        if scope not in self._nodes:
            if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
                body = scope.body
            elif isinstance(scope, ast.Module):
                body = [stmt for stmt in scope.body if not isinstance(stmt, _SCOPES)]
            else:
                body = []
            found = [n for stmt in body for n in walk(stmt) if hasattr(n, "lineno")]
            found.sort(key=lambda n: (n.lineno, n.col_offset))
            self._nodes[scope] = found
        return self._nodes[scope]

    def scope_of(self, node: ast.AST) -> ast.AST:
        current = self.parents.get(node)
        while current is not None and not isinstance(current, _SCOPES):
            current = self.parents.get(current)
        return current or self.tree

    def target(self, call: ast.Call) -> tuple[str, frozenset[str]]:
        """Where ``call``'s object goes (the key's text) and the names it is bound to."""
        child, parent = call, self.parents.get(call)
        while isinstance(parent, _TRANSPARENT):
            child, parent = parent, self.parents.get(parent)
        if isinstance(parent, ast.Assign) and child is parent.value:
            bound = frozenset(
                ast.unparse(t) for t in parent.targets if isinstance(t, (ast.Name, ast.Attribute))
            )
            return " = ".join(ast.unparse(t) for t in parent.targets), bound
        if isinstance(parent, (ast.AnnAssign, ast.NamedExpr)) and child is parent.value:
            text = ast.unparse(parent.target)
            bound = isinstance(parent.target, (ast.Name, ast.Attribute))
            return text, frozenset({text} if bound else ())
        if isinstance(parent, ast.Return):
            return "<return>", frozenset()
        if isinstance(parent, (ast.Yield, ast.YieldFrom)):
            return "<yield>", frozenset()
        if isinstance(parent, ast.keyword):
            return self._keyword_target(parent)
        if isinstance(parent, ast.Call) and child in parent.args:
            index = parent.args.index(child)  # type: ignore[arg-type]
            named = str_literal(parent.args[1]) if len(parent.args) == 3 else None
            if index == 2 and named and _last_name(parent.func) in _SETATTR_NAMES:
                return f"{ast.unparse(parent.args[0])}.{named}", frozenset()
            return f"{ast.unparse(parent.func)}(#{index})", frozenset()
        if isinstance(parent, (*_CONTAINERS, ast.DictComp)):
            return f"{self.target(parent)[0]}[]", frozenset()
        if isinstance(parent, ast.Dict):
            keys = [k for k, v in zip(parent.keys, parent.values) if v is child]
            key = str_literal(keys[0]) if keys else None
            return f"{self.target(parent)[0]}[{repr(key) if key else ''}]", frozenset()
        if isinstance(parent, ast.Lambda):
            return f"{self.target(parent)[0]}()", frozenset()
        return f"<{type(parent).__name__}>", frozenset()

    def _keyword_target(self, keyword: ast.keyword) -> tuple[str, frozenset[str]]:
        call = self.parents[keyword]
        assert isinstance(call, ast.Call)
        if call in self.callee and keyword.arg:
            outer, bound = self.target(call)
            return f"{outer}.{keyword.arg}", frozenset(f"{b}.{keyword.arg}" for b in bound)
        return f"{ast.unparse(call.func)}({keyword.arg or '**'}=)", frozenset()

    def drop_arguments(self) -> None:
        """Empty every stand-in call's arguments in this (private) tree, for fingerprints:
        a field added to a stand-in must not make its scope look rewritten."""
        for call in self.callee:
            call.args, call.keywords = [], []

    def fingerprint(self, scope: ast.AST, call: ast.AST) -> tuple[str, ...]:
        """The scope's statements unparsed, one line each, docstring left out; at module or
        class level, the statement holding the call."""
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = list(scope.body)
            if body and isinstance(body[0], ast.Expr) and str_literal(body[0].value):
                body = body[1:]
        else:
            stmt = call
            while self.parents.get(stmt) is not scope:
                stmt = self.parents[stmt]
            body = [stmt]
        return tuple(line for stmt in body for line in ast.unparse(stmt).splitlines())


def _last_name(func: ast.AST) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _later_sets(module: _Module, scope: ast.AST, call: ast.Call, names: set[str]) -> dict:
    """Fields set on ``names`` in ``scope`` after ``call``, until a name is bound again."""
    out: dict[str, int] = {}
    end = (call.end_lineno or call.lineno, call.end_col_offset or 0)
    for node in module.nodes(scope) if names else ():
        if (node.lineno, node.col_offset) < end:
            continue
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for sub in walk(target):
                    if isinstance(sub, ast.Attribute) and ast.unparse(sub.value) in names:
                        out.setdefault(sub.attr, node.lineno)
            rebound = {ast.unparse(t) for t in targets}
            names -= {n for n in names if any(n == r or n.startswith(r + ".") for r in rebound)}
            if not names:
                break
        elif isinstance(node, ast.Call) and _last_name(node.func) in _SETATTR_NAMES:
            args = node.args
            if len(args) == 3 and ast.unparse(args[0]) in names and str_literal(args[1]):
                out.setdefault(str_literal(args[1]), node.lineno)  # type: ignore[arg-type]
    return out


def file_sites(path: Path, rel: str) -> list[StandinSite]:
    """The stand-in sites of one test file (``rel`` names it in keys); none for a file that
    cannot be read or parsed."""
    try:
        data = path.read_bytes()
    except OSError:
        return []
    if b"Namespace" not in data:
        return []
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError):
        return []
    module = _Module(tree)
    ordinals: Counter[tuple[str, str]] = Counter()
    found = []
    for call in sorted(module.callee, key=lambda n: (n.lineno, n.col_offset)):
        scope = module.scope_of(call)
        target, bound = module.target(call)
        fields = {kw.arg: kw.value.lineno for kw in call.keywords if kw.arg}
        for kw in call.keywords:
            if kw.arg is None and isinstance(kw.value, ast.Dict):
                for key in kw.value.keys:
                    if str_literal(key):
                        fields.setdefault(str_literal(key), key.lineno)  # type: ignore
        for name, line in _later_sets(module, scope, call, set(bound)).items():
            fields.setdefault(name, line)
        ordinal = ordinals[(module.qualname[scope], target)]
        ordinals[(module.qualname[scope], target)] += 1
        found.append((call, scope, target, ordinal, tuple(sorted(fields.items()))))
    module.drop_arguments()
    prints: dict[ast.AST, tuple[str, ...]] = {}
    out = []
    for call, scope, target, ordinal, fields in found:
        if scope not in prints or isinstance(scope, (ast.Module, ast.ClassDef)):
            prints[scope] = module.fingerprint(scope, call)
        out.append(
            StandinSite(
                file=rel,
                scope=module.qualname[scope],
                target=target,
                ordinal=ordinal,
                line=call.lineno,
                callee=module.callee[call],
                fields=fields,
                fingerprint=prints[scope],
            )
        )
    return out


def release_sites(tests: Path, base: Path) -> dict[tuple, StandinSite]:
    """Every stand-in site under ``tests``, keyed; file names are relative to ``base``."""
    return history.release_sites(tests, base, file_sites)


# ------------------------------------------------------------------ matching: repairs


@attrs.frozen
class Repair:
    """The fields a matched site sets at N+1 and did not set at N."""

    old: StandinSite
    new: StandinSite
    fields: tuple[str, ...]


@attrs.frozen
class Matching:
    matched: int
    new: int
    rewritten: int
    repairs: tuple[Repair, ...]  # one per repaired site

    @property
    def repaired_sites(self) -> int:
        return len(self.repairs)

    @property
    def added_fields(self) -> int:
        return sum(len(r.fields) for r in self.repairs)


def match(old: dict[tuple, StandinSite], new: dict[tuple, StandinSite]) -> Matching:
    """Repairs between two releases' sites, by the matching rule of the module docstring."""
    repairs: list[Repair] = []
    matched = rewritten = 0
    for key, after in sorted(new.items()):
        before = old.get(key)
        if before is None:
            continue
        if history.similarity(before, after) < REWRITE_RATIO:
            rewritten += 1
            continue
        matched += 1
        added = tuple(sorted(after.field_names - before.field_names))
        if added:
            repairs.append(Repair(before, after, added))
    return Matching(matched, len(new.keys() - old.keys()), rewritten, tuple(repairs))


# ------------------------------------------------------------------ the audit: recall

#: The kinds a finding about a stand-in has: a link a namespace lacks (``missing-field``), a
#: field a namespace made ``self`` lacks (replayed as a stub), and either one on a path the
#: test may not take (a note).
_STANDIN_KINDS = frozenset(
    {
        FindingKind.MISSING_FIELD,
        FindingKind.MISSING_ATTRIBUTE,
        FindingKind.POSSIBLY_MISSING_ATTRIBUTE,
    }
)
_STUB_SIDE = re.compile(r"^(?:types\.SimpleNamespace|argparse\.Namespace)\((.*)\)$")


def finding_field(finding: Finding) -> str:
    """The field a stand-in finding says is missing: the last link of its chain
    (``metadata.prefill.query_start_loc``: the namespace at ``stub_location`` is ``prefill``'s),
    or the attribute a namespace made ``self`` lacks."""
    return finding.name.rpartition(".")[2]


def stated_fields(finding: Finding) -> frozenset[str] | None:
    """The fields the audit saw on the namespace that lacks the link (a ``missing-field``'s
    stub side, ``types.SimpleNamespace(a, b)``); None where the finding does not list them
    (a namespace made ``self`` says ``not set``)."""
    found = _STUB_SIDE.match(finding.stub_side)
    if found is None:
        return None
    return frozenset(name for name in found.group(1).split(", ") if name)


def _owners(finding: Finding, sites: Sequence[StandinSite]) -> tuple[StandinSite, ...]:
    """Of several sites that start on a finding's line (a namespace nested in another on one
    line), the one it is about: the site whose fields the finding lists (else those sharing
    most of them); where it lists none, each site that lacks the field it names."""
    stated = stated_fields(finding)
    if stated is None:
        field = finding_field(finding)
        return tuple(s for s in sites if field not in s.field_names)
    exact = tuple(s for s in sites if s.field_names == stated)
    if exact:
        return exact
    best = max(len(stated & s.field_names) for s in sites)
    return tuple(s for s in sites if len(stated & s.field_names) == best)


@attrs.frozen
class StandinFindings:
    """One audit's findings about stand-ins, by the (test file as keyed, line) of the
    namespace call they are about, and the ground truth's sites by the same key.

    **Matching rule.**  A finding names a repair (field F added to site S) when (1) its stub
    side is S's building site: the file relative to the audited release's root and the line
    of S's ``SimpleNamespace(...)`` call (where the analyzer locates a stand-in; the line fixes
    the function, so no function is compared), (2) the field it says is missing
    (``finding_field``: the last link of a chain) is F, and (3) where several sites start on
    that line, S is the one it is about (``_owners``).  A finding is about a stand-in when it
    is a ``missing-field``, or a (possibly-)missing attribute located where a stand-in call
    starts (a namespace made ``self`` is replayed as a stub located at its call); a stub
    created by ``object.__new__`` on the same line as a namespace call would be taken for one.
    The test names a finding carries are not compared: a stand-in met in several tests is one
    site.
    """

    at: Mapping[tuple[str, int], tuple[Finding, ...]]
    sites_at: Mapping[tuple[str, int], tuple[StandinSite, ...]]

    @classmethod
    def of(
        cls, findings: Iterable[Finding], prefix: Path, sites: Iterable[StandinSite]
    ) -> StandinFindings:
        """Index ``findings``, whose stub paths lie under ``prefix`` (the root the sites'
        file names are relative to)."""
        sites_at: dict[tuple[str, int], list[StandinSite]] = defaultdict(list)
        for site in sites:
            sites_at[(site.file, site.line)].append(site)
        at: dict[tuple[str, int], list[Finding]] = defaultdict(list)
        for finding in findings:
            where = finding.stub_location
            if finding.kind not in _STANDIN_KINDS or where is None:
                continue
            try:
                rel = Path(where.path).relative_to(prefix).as_posix()
            except ValueError:
                continue
            key = (rel, where.line)
            if finding.kind is FindingKind.MISSING_FIELD or key in sites_at:
                at[key].append(finding)
        return cls({k: tuple(v) for k, v in at.items()}, {k: tuple(v) for k, v in sites_at.items()})

    @property
    def errors(self) -> int:
        """How many stand-in findings are errors (those fail ``audit-stubs --standins``)."""
        return sum(f.severity is Severity.ERROR for found in self.at.values() for f in found)

    def about(self, site: StandinSite) -> tuple[Finding, ...]:
        key = (site.file, site.line)
        found = self.at.get(key, ())
        rivals = self.sites_at.get(key, ())
        if len(rivals) < 2:
            return found
        return tuple(f for f in found if site in _owners(f, rivals))

    def names(self, site: StandinSite, field: str, any_level: bool = False) -> bool:
        """Whether an error (``any_level``: any finding, a note too) names ``field`` on
        ``site``."""
        return any(
            finding_field(f) == field and (any_level or f.severity is Severity.ERROR)
            for f in self.about(site)
        )


@attrs.frozen
class FieldVerdict:
    """What the cross audit (release N's tests, N+1's source) said of one added field."""

    repair: Repair
    field: str
    named: bool  # an error names it
    named_any: bool  # some finding names it, a note too
    others: tuple[str, ...] = ()  # the fields the findings on this stand-in name instead
    seen: str = ""  # how the analyzer's extraction sees the stand-in (``extraction_view``)

    @property
    def why(self) -> str:
        """Why the errors do not name it, as far as the findings and the extraction tell
        ('' where they do)."""
        if self.named:
            return ""
        if self.named_any:
            return "only a note names it (a read not placed on the test's path)"
        found = f"flagged for other fields only ({', '.join(self.others)})" if self.others else ""
        found = found or "no finding on this stand-in"
        return f"{found}; {self.seen}" if self.seen else found


def verdicts(
    matching: Matching, cross: StandinFindings, seen: Mapping[tuple, str] | None = None
) -> tuple[FieldVerdict, ...]:
    """One verdict per added field of ``matching``, from the cross audit's findings on the
    N side of each repaired site; ``seen``: the extraction's view of a site, by its key."""
    out = []
    for repair in matching.repairs:
        others = sorted({finding_field(f) for f in cross.about(repair.old)})
        for field in repair.fields:
            out.append(
                FieldVerdict(
                    repair,
                    field,
                    named=cross.names(repair.old, field),
                    named_any=cross.names(repair.old, field, any_level=True),
                    others=tuple(o for o in others if o not in repair.fields),
                    seen=(seen or {}).get(repair.old.key, ""),
                )
            )
    return tuple(out)


def _meeting_text(meeting: extraction.Meeting) -> str:
    if meeting.how is MeetingHow.SELF:
        return f"self by {meeting.self_shape.value if meeting.self_shape else '?'}"
    if meeting.how is MeetingHow.ARGUMENT:
        dotted = meeting.callee.dotted if meeting.callee else None
        vllm = dotted is not None and dotted.startswith("vllm.")
        return "an argument of vLLM code" if vllm else "an argument of other code"
    if meeting.how is MeetingHow.RETURNED:
        if meeting.installed:
            return "a module global a patch sets"
        if meeting.field is not None and meeting.count < 0:
            return "a field a replaced method sets"
        if meeting.count in (extraction.ITSELF, extraction.SOMETIMES):
            return "what a replaced function returns"
        return "an item a replaced function returns"
    return "a field of an object the audit does not follow"


def extraction_view(standins: Sequence[StandIn], site: StandinSite) -> str:
    """How the analyzer's extraction (``StandInExtractor`` on the test module) sees the
    namespace of ``site``, to sort the misses by what the audit would have to follow: not
    found; followed into vLLM code (``standin_audit.audited``, here or on a namespace it is
    nested in) yet no read found; meeting no code in its module; or met only in ways the
    audit does not follow yet (an argument of a function, ``self`` by ``MethodType``,
    ``__get__`` or ``fget``, a field of another object).  A diagnosis of the misses only:
    the recall itself never asks the extraction."""
    path: list[StandIn] = []

    def find(standin: StandIn, above: list[StandIn]) -> bool:
        if standin.kind in NAMESPACE_KINDS and standin.location.line == site.line:
            if not path or standin.field_names == site.field_names:
                path[:] = [*above, standin]
        for child in standin.children:
            find(child, [*above, standin])
        return bool(path)

    for root in standins:
        find(root, [])
    if not path:
        return "the extraction does not find it"
    meetings = [m for standin in path for m in standin.meetings]
    if any(audited(m) for m in meetings):
        return "followed into vLLM code, the read not found"
    if not meetings:
        returned = "<return>" in site.target or "<yield>" in site.target
        return "meets no code in its module" + (" (returned: a factory)" if returned else "")
    ways = ", ".join(sorted({_meeting_text(m) for m in meetings}))
    return f"met only as {ways}"


def _extraction_views(
    auditor: StubAuditor, root: Path, sites: Iterable[StandinSite]
) -> dict[tuple, str]:
    """``extraction_view`` of each site, its module read from ``auditor``'s tree (parsed
    once by the audit); a module that cannot be read gives no view."""
    found: dict[str, Sequence[StandIn]] = {}
    out = {}
    for site in sites:
        if site.file not in found:
            path = root / site.file
            try:
                module = auditor.tree.load(auditor.tree.module_name_for(path), path)
                found[site.file] = extraction.StandInExtractor(module).standins()
            except (OSError, SourceError):
                found[site.file] = ()
                continue
        out[site.key] = extraction_view(found[site.file], site)
    return out


def still_flagged(matching: Matching, own: StandinFindings) -> tuple[tuple, ...]:
    """Keys of the repaired sites whose own release (N+1's tests on N+1's source) still has
    an error naming a field the repair added: the audit would fail the repaired test."""
    return tuple(r.new.key for r in matching.repairs if any(own.names(r.new, f) for f in r.fields))


@attrs.frozen
class Recall:
    """The audit's side of one pair: a verdict per added field, the repaired sites still
    flagged at N+1, and N+1's stand-in errors on its own tests."""

    verdicts: tuple[FieldVerdict, ...]
    still_flagged: tuple[tuple, ...]
    own_errors: int
    seconds: float

    @property
    def named(self) -> int:
        return sum(v.named for v in self.verdicts)

    @property
    def named_any(self) -> int:
        return sum(v.named_any for v in self.verdicts)

    def misses(self) -> list[FieldVerdict]:
        return [v for v in self.verdicts if not v.named]


# ------------------------------------------------------------------ the replay


@attrs.frozen
class Population:
    """One release's stand-in calls: (callee, calls, test files holding them) per callee."""

    version: str
    counts: tuple[tuple[str, int, int], ...]

    @classmethod
    def of(cls, version: str, sites: dict[tuple, StandinSite]) -> Population:
        files: dict[str, list[str]] = defaultdict(list)
        for site in sites.values():
            files[site.callee].append(site.file)
        counts = ((c, len(files[c]), len(set(files[c]))) for c in sorted(STANDIN_CALLEES))
        return cls(version, tuple(counts))


@attrs.frozen
class PairResult:
    old: str
    new: str
    matching: Matching
    recall: Recall


def _repair_json(r: Repair, verdicts: Sequence[FieldVerdict]) -> dict[str, object]:
    site = r.new
    return {
        **{k: getattr(site, k) for k in ("file", "scope", "target", "ordinal", "callee")},
        **{"fields": list(r.fields), "old_line": r.old.line, "new_line": site.line},
        "verdicts": [
            {"field": v.field, "named": v.named, "named_any": v.named_any, "why": v.why}
            for v in verdicts
            if v.repair is r
        ],
    }


_MATCHING_KEYS = ("matched", "new", "rewritten", "repaired_sites", "added_fields")


def _pair_counts(m: Matching, recall: Recall) -> dict[str, object]:
    return {
        **{k: getattr(m, k) for k in _MATCHING_KEYS},
        "named": recall.named,
        "named_pct": pct_of(recall.named, m.added_fields),
        "named_any": recall.named_any,
        "named_any_pct": pct_of(recall.named_any, m.added_fields),
        "still_flagged": len(recall.still_flagged),
        "still_flagged_pct": pct_of(len(recall.still_flagged), m.repaired_sites),
        "own_errors": recall.own_errors,
    }


@attrs.frozen
class StandinReport:
    populations: tuple[Population, ...]
    pairs: tuple[PairResult, ...]
    seconds: float

    def totals(self) -> dict[str, object]:
        sums = {k: sum(getattr(p.matching, k) for p in self.pairs) for k in _MATCHING_KEYS}
        named = sum(p.recall.named for p in self.pairs)
        named_any = sum(p.recall.named_any for p in self.pairs)
        flagged = sum(len(p.recall.still_flagged) for p in self.pairs)
        return {
            **sums,
            "named": named,
            "named_pct": pct_of(named, sums["added_fields"]),
            "named_any": named_any,
            "named_any_pct": pct_of(named_any, sums["added_fields"]),
            "still_flagged": flagged,
            "still_flagged_pct": pct_of(flagged, sums["repaired_sites"]),
            "own_errors": sum(p.recall.own_errors for p in self.pairs),
        }

    def to_json(self) -> dict[str, object]:
        pairs = []
        for p in self.pairs:
            repairs = [_repair_json(r, p.recall.verdicts) for r in p.matching.repairs]
            pairs.append(
                {"pair": f"{p.old}:{p.new}"}
                | _pair_counts(p.matching, p.recall)
                | {"seconds": round(p.recall.seconds, 1), "repair_list": repairs}
            )
        return {
            "rewrite_ratio": REWRITE_RATIO,
            "seconds": round(self.seconds, 1),
            "populations": {
                p.version: {c: {"calls": n, "files": f} for c, n, f in p.counts}
                for p in self.populations
            },
            "pairs": pairs,
            "totals": self.totals(),
        }


def format_table(report: StandinReport) -> str:
    """Markdown: repairs and the audit's recall per pair, then each release's population."""
    out = [
        "| pair | matched sites | new sites | rewritten | repaired sites "
        "| repairs (added fields) | named by errors | recall | named at any level "
        "| recall, any level | repaired sites still flagged at N+1 "
        "| stand-in errors on N+1's own tests |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    rows = [(f"{p.old} → {p.new}", _pair_counts(p.matching, p.recall)) for p in report.pairs]
    for name, m in [*rows, ("**total**", report.totals())]:
        out.append(
            f"| {name} | {m['matched']} | {m['new']} | {m['rewritten']} "
            f"| {m['repaired_sites']} | {m['added_fields']} | {m['named']} "
            f"| {format_pct(m['named_pct'])} | {m['named_any']} "  # type: ignore[arg-type]
            f"| {format_pct(m['named_any_pct'])} "  # type: ignore[arg-type]
            f"| {m['still_flagged']} ({format_pct(m['still_flagged_pct'])}) "  # type: ignore
            f"| {m['own_errors']} |"
        )
    callees = sorted(STANDIN_CALLEES, reverse=True)
    out += ["", "| release | " + " | ".join(f"{c} calls (files)" for c in callees) + " |"]
    out.append("|---|" + "---|" * len(callees))
    for pop in report.populations:
        cells = {c: f"{n} ({f})" for c, n, f in pop.counts}
        out.append(f"| {pop.version} | " + " | ".join(cells[c] for c in callees) + " |")
    return "\n".join(out)


def format_repairs(report: StandinReport) -> str:
    """One line per repaired site: pair, file:line at N+1, scope, target, added fields."""
    return "\n".join(
        f"{p.old}->{p.new} {r.new.file}:{r.new.line} ({r.new.scope}) {r.new.target} "
        f"+{','.join(r.fields)}"
        for p in report.pairs
        for r in p.matching.repairs
    )


def format_misses(report: StandinReport) -> str:
    """One line per added field no error names: pair, the stand-in at N (file:line), its
    scope and target, the field, and why as far as the findings tell."""
    return "\n".join(
        f"{p.old}->{p.new} {v.repair.old.file}:{v.repair.old.line} ({v.repair.old.scope}) "
        f"{v.repair.old.target} {v.field}: {v.why}"
        for p in report.pairs
        for v in p.recall.misses()
    )


def _audit_pair(
    tmp: Path,
    sources: Mapping[str, Path],
    old: str,
    new: str,
    sites: Mapping[str, dict[tuple, StandinSite]],
    matching: Matching,
) -> Recall:
    """One ``StubAuditor`` on release ``new``'s source (``history.work_root``: N's tests
    under ``prior_release/``): N+1's whole ``tests/`` audited for its own stand-in errors,
    then N's files that hold a repaired site, both with stand-ins."""
    start = time.perf_counter()
    root = work_root(tmp, new, sources[new], sources[old])
    try:
        auditor = StubAuditor(root)
        own_audit = auditor.audit_paths([root / "tests"], standins=True)
        own = StandinFindings.of(own_audit.findings, root, sites[new].values())
        files = sorted({root / PRIOR / r.old.file for r in matching.repairs})
        found = auditor.audit_paths(files, standins=True).findings if files else ()
        cross = StandinFindings.of(found, root / PRIOR, sites[old].values())
        missed = [
            r.old for r in matching.repairs if not all(cross.names(r.old, f) for f in r.fields)
        ]
        seen = _extraction_views(auditor, root / PRIOR, missed)
    finally:
        shutil.rmtree(root)
    return Recall(
        verdicts(matching, cross, seen),
        still_flagged(matching, own),
        own.errors,
        time.perf_counter() - start,
    )


def run_standin_history(
    src_root: Path,
    releases: Sequence[str],
    pairs: Sequence[tuple[str, str]],
    progress: Progress = lambda _: None,
) -> StandinReport:
    """The sites of every release a pair involves, each pair's matching, and the audit's
    recall on it (the matching rule of ``StandinFindings``)."""
    start = time.perf_counter()
    involved = [v for v in releases if any(v in p for p in pairs)]
    if not involved:
        raise HistoryInputError("--pairs: no pair of the releases given")
    sources = {v: check_release(src_root, v) for v in involved}
    sites: dict[str, dict[tuple, StandinSite]] = {}
    for version in involved:
        t0 = time.perf_counter()
        sites[version] = release_sites(sources[version] / "tests", sources[version])
        progress(
            f"[standin-history] {version}: {len(sites[version])} stand-in site(s), "
            f"{time.perf_counter() - t0:.1f} s"
        )
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-standin-history-") as tmp:
        for old, new in pairs:
            m = match(sites[old], sites[new])
            recall = _audit_pair(Path(tmp), sources, old, new, sites, m)
            results.append(PairResult(old, new, m, recall))
            progress(
                f"[standin-history] {old} -> {new}: {m.repaired_sites} repaired site(s), "
                f"{m.added_fields} added field(s), {recall.named} named by errors, "
                f"{recall.named_any} at any level, {recall.seconds:.1f} s"
            )
    populations = tuple(Population.of(v, sites[v]) for v in involved)
    return StandinReport(populations, tuple(results), time.perf_counter() - start)
