"""Replay vLLM's release history against the stub audit: its recall and its false alarms.

Between two consecutive releases N -> N+1, vLLM's own tests had to add attributes to existing
``object.__new__`` stubs after the source moved.  Those additions are the ground truth of what
the audit should have said about release N's tests against release N+1's source.

Why the ground truth is computed here and not by ``StubExtractor``: the number being measured
(findings that name a repair) must not share its blind spots with the thing that finds the
repairs.  If the analyzer's extractor decided which attributes a stub sets, a stub it cannot
follow (a fixture injected by parameter name, say) would drop out of the denominator as well
as the numerator, and recall would look better the less the analyzer sees.  So the repairs come
from a small, fixed walk of the test's AST (``file_sites``), documented below, and the audit is
consulted only through its public API (``StubAuditor.audit_paths`` and ``Finding``), so the
same benchmark measures whatever analyzer it runs with.

**Matching rule.**  A stub *site* is one ``object.__new__(X)`` call.  Its key is
``(test file relative to the release root, qualname of the innermost function or class-method
that contains the call, the text of X, ordinal of this (function, X) pair in that function)``.
Two releases' sites match when their keys are equal.  Limits: a renamed or moved test file,
test function or class, or a changed class expression (``NixlConnectorWorker`` ->
``NixlPullConnectorWorker``) makes a *new* stub (no repair is counted for it); a second stub of
the same class inserted above the first in one function shifts the ordinal.  A matched site
whose creating function was *rewritten* is excluded: its statements, unparsed (so formatting
does not count), are compared line by line with ``difflib.SequenceMatcher`` and a ratio below
``REWRITE_RATIO`` means the test changed beyond recognition.  An attribute a matched stub
gains only in functions that did not use it at N (a new test calling an old helper or fixture)
is an *extension*, not a repair: the test grew, nothing had to be fixed.

**Fields a site sets** (the same at N and N+1, so the difference is a repair): in the creating
function, after the call, ``t.a = ...``/``t.a += ...``/``t.a: T = ...`` for a name or attribute
expression ``t`` bound to the stub (and its aliases), ``setattr``/``monkeypatch.setattr``/
``object.__setattr__``/``patch.object`` with a literal name, ``t.__dict__.update`` and
``vars(t).update`` with literal keys.  The stub is followed, one level deep, into: same-module
functions it is passed to (their parameter), callers that assign the result of the creating
function (``t = make_stub()``), tests that take a same-module fixture that returns or yields it
by parameter name, and sibling methods when it is stored on ``self``.  Not followed: fixtures
from ``conftest.py``, stubs returned inside tuples, helpers in other modules.
"""

from __future__ import annotations

import ast
import difflib
import shutil
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import attrs

from factories.analysis._walk import child_nodes, walk
from factories.analysis.audit import StubAuditor
from factories.analysis.extraction import is_object_new, str_literal
from factories.analysis.findings import Finding, FindingKind, Severity
from factories.analysis.since import KnownReads
from factories.analysis.source_tree import Overlay
from factories.errors import HistoryInputError

#: Below this similarity of the creating function's statements a matched stub is "rewritten".
REWRITE_RATIO = 0.5
#: How many levels of helper, caller and fixture the ground truth follows a stub through.
_MAX_FOLLOW_LEVELS = 2
#: The folder, under a release's work root, that holds the previous release's tests.
PRIOR = "prior_release"
_SETTERS = frozenset({"setattr", "__setattr__", "object"})

Progress = Callable[[str], None]


# ------------------------------------------------------------------ ground truth: stub sites


@attrs.frozen
class StubSite:
    """One ``object.__new__`` call in one release's tests and what the tests set on it.

    ``fields`` maps each attribute the tests set to the first line that sets it; ``lines`` are
    every line where the tests touch the stub (creation, sets, calls, reads): an audit finding
    located on one of them is about this stub.  ``fingerprint`` is the creating function's
    statements, unparsed, for the rewrite test.
    """

    file: str
    scope: str
    class_expr: str
    ordinal: int
    line: int
    fields: tuple[tuple[str, int], ...]
    lines: frozenset[int] = attrs.field(repr=False)
    fingerprint: tuple[str, ...] = attrs.field(repr=False)
    set_in: tuple[tuple[str, tuple[str, ...]], ...] = attrs.field(repr=False, default=())
    scopes: frozenset[str] = attrs.field(repr=False, default=frozenset())

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.file, self.scope, self.class_expr, self.ordinal)

    @property
    def field_names(self) -> frozenset[str]:
        return frozenset(name for name, _ in self.fields)


def _fixture_name(func: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The name tests request a ``@pytest.fixture`` by (its ``name=`` or the function's)."""
    for deco in func.decorator_list:
        call = deco if isinstance(deco, ast.Call) else None
        target = call.func if call else deco
        if "fixture" not in ast.unparse(target):
            continue
        for kw in call.keywords if call else ():
            if kw.arg == "name" and str_literal(kw.value):
                return str_literal(kw.value)
        return func.name
    return None


Func = ast.FunctionDef | ast.AsyncFunctionDef


class _Module:
    """One parsed test file: parents, qualnames, functions by name, fixtures."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.parents: dict[ast.AST, ast.AST] = {}
        self.qualname: dict[ast.AST, str] = {}
        self.by_name: dict[str, list[Func]] = defaultdict(list)
        self.fixtures: dict[str, Func] = {}
        self._sorted: dict[int, list[ast.AST]] = {}
        self._walk(tree, "")

    def _walk(self, node: ast.AST, prefix: str) -> None:
        for child in child_nodes(node):
            self.parents[child] = node
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                self.qualname[child] = name
                if not isinstance(child, ast.ClassDef):
                    self.by_name[child.name].append(child)
                    fixture = _fixture_name(child)
                    if fixture:
                        self.fixtures.setdefault(fixture, child)
                self._walk(child, name + ".")
            else:
                self._walk(child, prefix)

    def enclosing(self, node: ast.AST) -> ast.AST:
        """The innermost function containing ``node``, else the module."""
        current = self.parents.get(node)
        while current is not None and not isinstance(
            current, (ast.FunctionDef, ast.AsyncFunctionDef)
        ):
            current = self.parents.get(current)
        return current or self.tree

    def nodes(self, scope: ast.AST) -> list[ast.AST]:
        """Nodes of ``scope`` in source order (nested functions included: closures)."""
        if id(scope) not in self._sorted:
            found = [n for n in walk(scope) if hasattr(n, "lineno") and n is not scope]
            found.sort(key=lambda n: (n.lineno, n.col_offset))
            self._sorted[id(scope)] = found
        return self._sorted[id(scope)]

    def helper(self, name: str) -> Func | None:
        """A uniquely named function of this module (ambiguous names are not followed)."""
        found = self.by_name.get(name, [])
        return found[0] if len(found) == 1 else None


@attrs.define
class _Uses:
    fields: dict[str, int] = attrs.field(factory=dict)
    lines: set[int] = attrs.field(factory=set)
    scopes: set[str] = attrs.field(factory=set)  # functions where the stub is followed
    set_in: dict[str, set[str]] = attrs.field(factory=dict)  # field -> functions that set it
    scope: str = "<module>"  # the function being walked

    def set(self, name: str, line: int) -> None:
        self.fields.setdefault(name, line)
        self.set_in.setdefault(name, set()).add(self.scope)
        self.lines.add(line)


class _Follower:
    """Collects what a test does to one stub, following it as the module docstring says."""

    def __init__(self, module: _Module) -> None:
        self.m = module

    def follow(self, scope: ast.AST, names: set[str], after: int, uses: _Uses, depth: int) -> bool:
        """Sets and touches of ``names`` in ``scope`` from line ``after`` on; True when
        ``scope`` returns or yields the stub."""
        names = set(names)
        returned = False
        outer, uses.scope = uses.scope, self.m.qualname.get(scope, "<module>")
        uses.scopes.add(uses.scope)
        for node in self.m.nodes(scope):
            if node.lineno < after:
                continue
            if isinstance(node, ast.Assign):
                self._assign(node, names, uses)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                if node.value is not None and self._is_attr_of(node.target, names):
                    uses.set(node.target.attr, node.lineno)  # type: ignore[attr-defined]
            elif isinstance(node, ast.Call):
                self._call(node, names, uses, depth)
            elif isinstance(node, (ast.Return, ast.Yield, ast.YieldFrom)):
                if node.value is not None and ast.unparse(node.value) in names:
                    returned = True
            elif isinstance(node, (ast.Name, ast.Attribute)) and ast.unparse(node) in names:
                uses.lines.add(node.lineno)
        if depth < _MAX_FOLLOW_LEVELS and isinstance(
            scope, (ast.FunctionDef, ast.AsyncFunctionDef)
        ):
            self._siblings(scope, names, uses, depth)
        uses.scope = outer
        return returned

    @staticmethod
    def _is_attr_of(node: ast.AST, names: set[str]) -> bool:
        return isinstance(node, ast.Attribute) and ast.unparse(node.value) in names

    def _assign(self, node: ast.Assign, names: set[str], uses: _Uses) -> None:
        value = ast.unparse(node.value)
        for target in node.targets:
            for sub in walk(target):
                if self._is_attr_of(sub, names) and isinstance(sub.ctx, ast.Store):  # type: ignore
                    uses.set(sub.attr, node.lineno)  # type: ignore[attr-defined]
            if isinstance(target, (ast.Name, ast.Attribute)):
                if value in names:
                    names.add(ast.unparse(target))  # an alias
                    uses.lines.add(node.lineno)

    def _call(self, node: ast.Call, names: set[str], uses: _Uses, depth: int) -> None:
        func = node.func
        first = ast.unparse(node.args[0]) if node.args else None
        fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if isinstance(func, ast.Attribute) and ast.unparse(func.value) in names:
            uses.lines.add(node.lineno)  # a method call on the stub
        elif fname in _SETTERS and first in names and len(node.args) > 1:
            literal = str_literal(node.args[1])
            if literal is not None:
                uses.set(literal, node.lineno)
        elif (
            fname == "update"
            and isinstance(func, ast.Attribute)
            and self._is_dict(func.value, names)
        ):
            keys = [kw.arg for kw in node.keywords if kw.arg]
            for arg in node.args:
                if isinstance(arg, ast.Dict):
                    keys.extend(k for k in map(str_literal, arg.keys) if k)
            for key in keys:
                uses.set(key, node.lineno)
            uses.lines.add(node.lineno)
        elif isinstance(func, ast.Name) and depth < _MAX_FOLLOW_LEVELS:
            helper = self.m.helper(func.id)
            if helper is None:
                return
            param = _bound_param(helper, node, names)
            if param is not None:
                uses.lines.add(node.lineno)
                self.follow(helper, {param}, helper.lineno, uses, depth + 1)

    @staticmethod
    def _is_dict(node: ast.AST, names: set[str]) -> bool:
        if isinstance(node, ast.Attribute) and node.attr == "__dict__":
            return ast.unparse(node.value) in names
        return (
            isinstance(node, ast.Call)
            and getattr(node.func, "id", None) == "vars"
            and len(node.args) == 1
            and ast.unparse(node.args[0]) in names
        )

    def _siblings(self, scope: Func, names: set[str], uses: _Uses, depth: int) -> None:
        """A stub stored on ``self`` (``setup_method``) is used by the other methods."""
        on_self = {n for n in names if n.startswith("self.")}
        parent = self.m.parents.get(scope)
        if not on_self or not isinstance(parent, ast.ClassDef):
            return
        for sibling in parent.body:
            if sibling is scope:
                continue
            if isinstance(sibling, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.follow(sibling, on_self, sibling.lineno, uses, _MAX_FOLLOW_LEVELS)

    def users(self, scope: ast.AST, uses: _Uses, depth: int) -> None:
        """The stub leaves ``scope`` by ``return``/``yield``: follow it into the callers that
        bind the result to a name and the tests that request ``scope`` as a fixture."""
        if depth >= _MAX_FOLLOW_LEVELS or not isinstance(
            scope, (ast.FunctionDef, ast.AsyncFunctionDef)
        ):
            return
        fixture = next((k for k, v in self.m.fixtures.items() if v is scope), None)
        for funcs in self.m.by_name.values():
            for func in funcs:
                params = {a.arg for a in func.args.posonlyargs + func.args.args}
                params |= {a.arg for a in func.args.kwonlyargs}
                if fixture and fixture in params and func is not scope:
                    if self.follow(func, {fixture}, func.lineno, uses, depth + 1):
                        self.users(func, uses, depth + 1)
        for node in walk(self.m.tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == scope.name):
                continue
            parent = self.m.parents.get(node)
            if isinstance(parent, ast.Assign) and len(parent.targets) == 1:
                target = parent.targets[0]
                if isinstance(target, (ast.Name, ast.Attribute)):
                    caller = self.m.enclosing(node)
                    self.follow(caller, {ast.unparse(target)}, node.lineno, uses, depth + 1)


def _bound_param(func: Func, call: ast.Call, names: set[str]) -> str | None:
    """The parameter of ``func`` that a stub argument of ``call`` binds to, if any."""
    params = [a.arg for a in func.args.posonlyargs + func.args.args]
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            return None
        if ast.unparse(arg) in names:
            return params[i] if i < len(params) else None
    for kw in call.keywords:
        if kw.arg and ast.unparse(kw.value) in names:
            return kw.arg
    return None


def _fingerprint(scope: ast.AST, call: ast.AST, module: _Module) -> tuple[str, ...]:
    """The creating function's statements, unparsed one line each; at module level, the
    statement holding the call."""
    if isinstance(scope, ast.Module):
        stmt = call
        while module.parents.get(stmt) is not scope:
            stmt = module.parents[stmt]
        body = [stmt]
    else:
        body = list(scope.body)  # type: ignore[attr-defined]
        if body and isinstance(body[0], ast.Expr) and str_literal(body[0].value):
            body = body[1:]  # the docstring
    return tuple(line for stmt in body for line in ast.unparse(stmt).splitlines())


def file_sites(path: Path, rel: str) -> list[StubSite]:
    """The stub sites of one test file (``rel`` is how it is named in keys and reports);
    none for a file that does not parse (the audit reports those itself)."""
    try:
        data = path.read_bytes()
    except OSError:
        return []
    if b"object.__new__(" not in data:
        return []
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError):
        return []
    module = _Module(tree)
    follower = _Follower(module)
    calls = [n for n in walk(tree) if is_object_new(n)]
    calls.sort(key=lambda n: (n.lineno, n.col_offset))
    ordinals: dict[tuple, int] = defaultdict(int)
    out = []
    for call in calls:
        assert isinstance(call, ast.Call)
        scope = module.enclosing(call)
        scope_name = module.qualname.get(scope, "<module>")
        class_expr = ast.unparse(call.args[0])
        ordinal = ordinals[(scope_name, class_expr)]
        ordinals[(scope_name, class_expr)] += 1
        uses = _Uses(lines={call.lineno})
        parent = module.parents.get(call)
        returned = isinstance(parent, (ast.Return, ast.Yield))
        names = set()
        if isinstance(parent, ast.Assign):
            names = {
                ast.unparse(t) for t in parent.targets if isinstance(t, (ast.Name, ast.Attribute))
            }
        elif isinstance(parent, (ast.AnnAssign, ast.NamedExpr)):
            names = {ast.unparse(parent.target)}
        if names:
            returned = follower.follow(scope, names, call.lineno, uses, 0) or returned
        if returned:
            follower.users(scope, uses, 0)
        out.append(
            StubSite(
                file=rel,
                scope=scope_name,
                class_expr=class_expr,
                ordinal=ordinal,
                line=call.lineno,
                fields=tuple(sorted(uses.fields.items())),
                set_in=tuple((k, tuple(sorted(v))) for k, v in sorted(uses.set_in.items())),
                scopes=frozenset(uses.scopes | {scope_name}),
                lines=frozenset(uses.lines),
                fingerprint=_fingerprint(scope, call, module),
            )
        )
    return out


def release_sites(tests: Path, base: Path, sites=file_sites) -> dict[tuple, StubSite]:
    """Every site under ``tests`` that ``sites`` finds in a file (default: the stub sites),
    keyed; file names are relative to ``base``."""
    out: dict[tuple, StubSite] = {}
    for path in sorted(tests.rglob("*.py")):
        for site in sites(path, path.relative_to(base).as_posix()):
            out[site.key] = site
    return out


# ------------------------------------------------------------------ matching: repairs


@attrs.frozen
class Repair:
    """An attribute the stub sets at N+1 that it did not set at N."""

    old: StubSite
    new: StubSite
    attribute: str

    @property
    def new_line(self) -> int:
        return dict(self.new.fields)[self.attribute]


@attrs.frozen
class Matching:
    matched: int
    new: int
    rewritten: int
    repairs: tuple[Repair, ...]
    # Attributes a matched stub gained only in functions that did not use it at N (a new
    # test of an old helper or fixture): the test grew, nothing was repaired.
    extensions: int = 0

    @property
    def repaired_sites(self) -> tuple[StubSite, ...]:
        """The N+1 side of each stub that got at least one repair, once each."""
        return tuple({r.new.key: r.new for r in self.repairs}.values())


def similarity(old: StubSite, new: StubSite) -> float:
    """How alike two sites' creating functions are (their ``fingerprint``s); a stand-in
    site has one too."""
    return difflib.SequenceMatcher(None, old.fingerprint, new.fingerprint, autojunk=False).ratio()


def match(old: dict[tuple, StubSite], new: dict[tuple, StubSite]) -> Matching:
    """Repairs between two releases' sites, by the matching rule of the module docstring."""
    repairs: list[Repair] = []
    matched = rewritten = extensions = 0
    for key, after in sorted(new.items()):
        before = old.get(key)
        if before is None:
            continue
        if similarity(before, after) < REWRITE_RATIO:
            rewritten += 1
            continue
        matched += 1
        set_in = dict(after.set_in)
        for attribute in sorted(after.field_names - before.field_names):
            if before.scopes.isdisjoint(set_in.get(attribute, ())):
                extensions += 1
            else:
                repairs.append(Repair(before, after, attribute))
    return Matching(
        matched=matched,
        new=len(new.keys() - old.keys()),
        rewritten=rewritten,
        repairs=tuple(repairs),
        extensions=extensions,
    )


# ------------------------------------------------------------------ the audit, by its public API


class _FindingIndex:
    """Error-level findings (``any_level``: every finding) by (test file as keyed, line) of
    their stub side."""

    def __init__(
        self, findings: Iterable[Finding], root: Path, base: str, any_level: bool = False
    ) -> None:
        self.at: dict[tuple[str, int], list[Finding]] = defaultdict(list)
        self.errors = 0
        self.unreadable = 0
        prefix = root / base if base else root
        for finding in findings:
            if finding.kind is FindingKind.UNREADABLE_FILE:
                self.unreadable += 1
                continue
            if finding.severity is not Severity.ERROR and not any_level:
                continue
            self.errors += 1
            where = finding.stub_location
            if where is None:
                continue
            try:
                rel = Path(where.path).relative_to(prefix).as_posix()
            except ValueError:
                continue
            self.at[(rel, where.line)].append(finding)

    def about(self, site: StubSite) -> list[Finding]:
        return [f for line in sorted(site.lines) for f in self.at.get((site.file, line), [])]

    def names(self, site: StubSite, attribute: str) -> bool:
        return any(f.name == attribute for f in self.about(site))


@attrs.frozen
class ReleaseResult:
    version: str
    stubs: int
    errors: int
    unreadable: int
    seconds: float


@attrs.frozen
class PairResult:
    old: str
    new: str
    matching: Matching
    named: tuple[bool, ...]  # one per repair
    still_flagged: tuple[tuple, ...]  # keys of repaired N+1 sites with an own-release error
    seconds: float
    # The same cross audit compared with release N (``--base-src``, the hook's ``--since``):
    # which repairs its errors name, how many newly-read errors it has, and of those how many
    # name a field the same stub sets at N+1 and how many one it still lacks there (see
    # ``_new_read_verdicts``).
    named_since: tuple[bool, ...] = ()
    # Which repairs any finding names at any level (a note too): no rule that only changes
    # levels can name more, so this is the ceiling of the analysis as it sees the stubs.
    named_any: tuple[bool, ...] = ()
    new_reads: int = 0
    new_read_verdicts: tuple[int, int] = (0, 0)

    @property
    def recall(self) -> float | None:
        return pct_of(sum(self.named), len(self.named))

    @property
    def recall_since(self) -> float | None:
        return pct_of(sum(self.named_since), len(self.named_since))

    @property
    def flagged_pct(self) -> float | None:
        return pct_of(len(self.still_flagged), len(self.matching.repaired_sites))

    def misses(self) -> list[Repair]:
        return [r for r, hit in zip(self.matching.repairs, self.named) if not hit]


def pct_of(part: int, whole: int) -> float | None:
    """``part`` in per cent of ``whole``; None where there is no whole (no repair to name)."""
    return 100.0 * part / whole if whole else None


@attrs.frozen
class HistoryReport:
    releases: tuple[ReleaseResult, ...]
    pairs: tuple[PairResult, ...]
    seconds: float

    def totals(self) -> dict[str, object]:
        repairs = sum(len(p.named) for p in self.pairs)
        named = sum(sum(p.named) for p in self.pairs)
        repaired = sum(len(p.matching.repaired_sites) for p in self.pairs)
        flagged = sum(len(p.still_flagged) for p in self.pairs)
        return {
            "matched": sum(p.matching.matched for p in self.pairs),
            "new": sum(p.matching.new for p in self.pairs),
            "rewritten": sum(p.matching.rewritten for p in self.pairs),
            "extensions": sum(p.matching.extensions for p in self.pairs),
            "repaired_stubs": repaired,
            "repairs": repairs,
            "named": named,
            "recall_pct": pct_of(named, repairs),
            "named_since": sum(sum(p.named_since) for p in self.pairs),
            "recall_since_pct": pct_of(sum(sum(p.named_since) for p in self.pairs), repairs),
            "named_any": sum(sum(p.named_any) for p in self.pairs),
            "new_reads": sum(p.new_reads for p in self.pairs),
            "new_reads_set_at_n1": sum(p.new_read_verdicts[0] for p in self.pairs),
            "new_reads_still_unset": sum(p.new_read_verdicts[1] for p in self.pairs),
            "still_flagged": flagged,
            "still_flagged_pct": pct_of(flagged, repaired),
        }

    def to_json(self) -> dict[str, object]:
        return {
            "rewrite_ratio": REWRITE_RATIO,
            "seconds": round(self.seconds, 1),
            "releases": [attrs.asdict(r) for r in self.releases],
            "pairs": [
                {
                    "pair": f"{p.old}:{p.new}",
                    "matched": p.matching.matched,
                    "new": p.matching.new,
                    "rewritten": p.matching.rewritten,
                    "extensions": p.matching.extensions,
                    "repaired_stubs": len(p.matching.repaired_sites),
                    "repairs": len(p.named),
                    "named": sum(p.named),
                    "recall_pct": p.recall,
                    "named_since": sum(p.named_since),
                    "recall_since_pct": p.recall_since,
                    "named_any": sum(p.named_any),
                    "new_reads": p.new_reads,
                    "new_reads_set_at_n1": p.new_read_verdicts[0],
                    "new_reads_still_unset": p.new_read_verdicts[1],
                    "still_flagged": len(p.still_flagged),
                    "still_flagged_pct": p.flagged_pct,
                    "seconds": round(p.seconds, 1),
                    "repair_list": [
                        {
                            "file": r.old.file,
                            "scope": r.old.scope,
                            "class": r.old.class_expr,
                            "attribute": r.attribute,
                            "old_line": r.old.line,
                            "new_line": r.new_line,
                            "named": hit,
                            "named_since": since,
                        }
                        for r, hit, since in zip(p.matching.repairs, p.named, p.named_since)
                    ],
                }
                for p in self.pairs
            ],
            "totals": self.totals(),
        }


def format_pct(value: float | None) -> str:
    """A table cell for a percentage (``n/a`` where nothing was there to count)."""
    return "n/a" if value is None else f"{value:.1f} %"


def format_table(report: HistoryReport) -> str:
    """Markdown tables: recall and false alarms per pair, own-tree errors per release."""
    pct = format_pct
    out = [
        "| pair | matched stubs | new | rewritten | extensions | repaired stubs | repairs "
        "| named | recall | named, --since N | recall, --since N | named at any level "
        "| newly-read errors: field set at N+1 / still unset | repaired stubs still flagged "
        "at N+1 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for p in report.pairs:
        m = p.matching
        out.append(
            f"| {p.old} → {p.new} | {m.matched} | {m.new} | {m.rewritten} | {m.extensions} | "
            f"{len(m.repaired_sites)} | {len(p.named)} | {sum(p.named)} | {pct(p.recall)} | "
            f"{sum(p.named_since)} | {pct(p.recall_since)} | {sum(p.named_any)} | "
            f"{p.new_reads}: {p.new_read_verdicts[0]} / {p.new_read_verdicts[1]} | "
            f"{len(p.still_flagged)} ({pct(p.flagged_pct)}) |"
        )
    t = report.totals()
    out.append(
        f"| **total** | {t['matched']} | {t['new']} | {t['rewritten']} | {t['extensions']} "
        f"| {t['repaired_stubs']} "
        f"| {t['repairs']} | {t['named']} | **{pct(t['recall_pct'])}** "  # type: ignore[arg-type]
        f"| {t['named_since']} | **{pct(t['recall_since_pct'])}** "  # type: ignore[arg-type]
        f"| {t['named_any']} "
        f"| {t['new_reads']}: {t['new_reads_set_at_n1']} / {t['new_reads_still_unset']} "
        f"| {t['still_flagged']} (**{pct(t['still_flagged_pct'])}**) |"  # type: ignore[arg-type]
    )
    out += [
        "",
        "| release | stubs (audit) | error-level findings on its own tests |",
        "|---|---|---|",
    ]
    for r in report.releases:
        bad = f" ({r.unreadable} unreadable-file)" if r.unreadable else ""
        out.append(f"| {r.version} | {r.stubs} | {r.errors}{bad} |")
    return "\n".join(out)


def format_misses(report: HistoryReport) -> str:
    """One line per missed repair: where the stub is at N, its class, the attribute."""
    lines = []
    for p in report.pairs:
        for r in p.misses():
            lines.append(
                f"{p.old}->{p.new} {r.old.file}:{r.old.line} ({r.old.scope}) "
                f"{r.old.class_expr} {r.attribute} (set at N+1 line {r.new_line})"
            )
    return "\n".join(lines)


# ------------------------------------------------------------------ the replay


def parse_pair(text: str, releases: Sequence[str]) -> tuple[str, str]:
    old, sep, new = text.partition(":")
    if not sep or not old or not new:
        raise HistoryInputError(f"--pairs {text!r}: expected OLD:NEW, e.g. 0.33.0:0.34.0")
    for version in (old, new):
        if version not in releases:
            raise HistoryInputError(
                f"--pairs {text!r}: {version} is not one of the releases ({', '.join(releases)})"
            )
    if releases.index(old) >= releases.index(new):
        raise HistoryInputError(f"--pairs {text!r}: {old} does not come before {new}")
    return old, new


def check_release(src_root: Path, version: str) -> Path:
    folder = src_root / version
    if not (folder / "vllm" / "__init__.py").is_file() or not (folder / "tests").is_dir():
        raise HistoryInputError(
            f"release {version}: {folder} does not hold vllm/ and tests/ "
            f"(fetch it: python tools/fetch_vllm.py {version})"
        )
    return folder


def _copy_tests(tests: Path, dest: Path) -> None:
    """The ``*.py`` files of ``tests`` under ``dest``: real files, not links, because the
    audit names a test module by its path relative to the tree's root after resolving links."""

    def skip(folder: str, names: list[str]) -> list[str]:
        return [n for n in names if not n.endswith(".py") and not Path(folder, n).is_dir()]

    shutil.copytree(tests, dest, ignore=skip, symlinks=True)


def work_root(tmp: Path, version: str, source: Path, prior: Path | None) -> Path:
    """One audit root per source release: ``vllm/`` (a link into the cache), its own
    ``tests/`` and, for a pair, the previous release's tests under ``prior_release/tests``,
    so that one ``StubAuditor`` (one parsed vLLM tree) audits both with each test module
    named as in its own release (relative imports resolve)."""
    root = tmp / version
    root.mkdir()
    (root / "vllm").symlink_to((source / "vllm").resolve(), target_is_directory=True)
    _copy_tests(source / "tests", root / "tests")
    if prior is not None:
        _copy_tests(prior / "tests", root / PRIOR / "tests")
    return root


def _new_read_verdicts(
    findings: Sequence[Finding],
    old: dict[tuple, StubSite],
    new: dict[tuple, StubSite],
    root: Path,
) -> tuple[int, int]:
    """Of the newly-read errors on release N's stubs: (how many name an attribute the same
    stub sets at N+1, how many the matched N+1 stub still does not set).  The second are
    probable false alarms: vLLM's own N+1 test passes without the field, so its calls do
    not reach that read (unless the test changed its calls; rewritten stubs are left out)."""
    by_line: dict[tuple[str, int], list[StubSite]] = defaultdict(list)
    for site in old.values():
        for line in site.lines:
            by_line[(site.file, line)].append(site)
    set_later = still_unset = 0
    for finding in findings:
        where = finding.stub_location
        if where is None:
            continue
        try:
            rel = Path(where.path).relative_to(root / PRIOR).as_posix()
        except ValueError:
            continue
        for site in by_line.get((rel, where.line), []):
            after = new.get(site.key)
            if after is None or similarity(site, after) < REWRITE_RATIO:
                continue
            if finding.name in after.field_names:
                set_later += 1
            else:
                still_unset += 1
            break
    return set_later, still_unset


def run_history(
    src_root: Path,
    releases: Sequence[str],
    pairs: Sequence[tuple[str, str]],
    progress: Progress = lambda _: None,
) -> HistoryReport:
    """Audit each involved release's tests against its own source and each pair's old tests
    against the new source, with one ``StubAuditor`` per source release."""
    start = time.perf_counter()
    involved = [v for v in releases if any(v in p for p in pairs)]
    sources = {v: check_release(src_root, v) for v in involved}
    prior_of = {new: old for old, new in pairs}
    if len(prior_of) != len(pairs):
        raise HistoryInputError("--pairs: each release can be the newer side of one pair only")
    release_results: list[ReleaseResult] = []
    pair_results: list[PairResult] = []
    sites: dict[str, dict[tuple, StubSite]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-history-") as tmp:
        for version in involved:
            t0 = time.perf_counter()
            prior = prior_of.get(version)
            root = work_root(
                Path(tmp), version, sources[version], sources[prior] if prior else None
            )
            auditor = StubAuditor(root)
            own = auditor.audit_paths([root / "tests"])
            own_index = _FindingIndex(own.findings, root, "")
            sites[version] = release_sites(root / "tests", root)
            release_results.append(
                ReleaseResult(
                    version,
                    own.summary.stubs,
                    own_index.errors,
                    own_index.unreadable,
                    round(time.perf_counter() - t0, 1),
                )
            )
            progress(
                f"[history] {version}: own tests audited, {own_index.errors} error(s), "
                f"{len(sites[version])} stub site(s), {time.perf_counter() - t0:.1f} s"
            )
            if prior is not None:
                t1 = time.perf_counter()
                prior_tests = root / PRIOR / "tests"
                cross = auditor.audit_paths([prior_tests])
                cross_index = _FindingIndex(cross.findings, root, PRIOR)
                if prior not in sites:
                    sites[prior] = release_sites(prior_tests, root / PRIOR)
                matching = match(sites[prior], sites[version])
                named = tuple(cross_index.names(r.old, r.attribute) for r in matching.repairs)
                flagged = tuple(s.key for s in matching.repaired_sites if own_index.about(s))
                # The hook's --since, at release granularity: the same tests audited against
                # release N (the base) first, so that reads N+1 added are errors.
                base = Overlay(folders={"vllm": sources[prior] / "vllm"})
                base_audit = StubAuditor(root, base).audit_paths([prior_tests])
                marked = KnownReads.of(prior, base_audit.findings).mark(cross.findings)
                since_index = _FindingIndex(marked, root, PRIOR)
                named_since = tuple(since_index.names(r.old, r.attribute) for r in matching.repairs)
                any_index = _FindingIndex(marked, root, PRIOR, any_level=True)
                named_any = tuple(any_index.names(r.old, r.attribute) for r in matching.repairs)
                new_reads = [f for f in marked if f.kind is FindingKind.NEWLY_READ_ATTRIBUTE]
                pair_results.append(
                    PairResult(
                        prior,
                        version,
                        matching,
                        named,
                        flagged,
                        time.perf_counter() - t1,
                        named_since=named_since,
                        named_any=named_any,
                        new_reads=len(new_reads),
                        new_read_verdicts=_new_read_verdicts(
                            new_reads, sites[prior], sites[version], root
                        ),
                    )
                )
                progress(
                    f"[history] {prior} -> {version}: {len(named)} repair(s), {sum(named)} "
                    f"named, {sum(named_since)} with --since {prior}, "
                    f"{time.perf_counter() - t1:.1f} s"
                )
            shutil.rmtree(root)
            del auditor
    order = {p: i for i, p in enumerate(pairs)}
    pair_results.sort(key=lambda p: order[(p.old, p.new)])
    return HistoryReport(tuple(release_results), tuple(pair_results), time.perf_counter() - start)
