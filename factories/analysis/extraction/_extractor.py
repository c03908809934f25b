"""The extractor: each ``object.__new__`` call of a test module, its class and its tracks."""

from __future__ import annotations

import ast
from pathlib import Path

import attrs

from factories.analysis.extraction._cases import NO_BINDINGS, CaseReader
from factories.analysis.extraction._class_choice import ClassChoice, ClassChooser
from factories.analysis.extraction._events import EventRecorder, Track
from factories.analysis.extraction._follow import Follower, Route
from factories.analysis.extraction._model import Stub, is_object_new
from factories.analysis.extraction._scope import ModuleScope
from factories.analysis.source_tree import ModuleInfo


class StubExtractor:
    """Extracts the stubs of one parsed test module.

    ``exports`` lists, after ``stubs()``, the stubs that module-level functions return, for
    callers in other test modules (``imported_uses`` of their extractors)."""

    def __init__(self, module: ModuleInfo, reader: CaseReader | None = None) -> None:
        """``reader``: the module's, shared with its other extractions (its ``scope`` is
        this module's); else one of its own."""
        self.module = module
        reader = reader or CaseReader(ModuleScope(module))
        self.scope = reader.scope
        self.chooser = ClassChooser(self.scope, reader)
        self.follower = Follower(self.scope, reader, EventRecorder(self.scope, reader))

    @property
    def exports(self) -> list[tuple[str, Stub, Track]]:
        return self.follower.exports

    def stubs(self) -> list[Stub]:
        found: list[Stub] = []
        sites = [n for stmt in self.scope.index("object.__new__(") for n in self.scope.walk(stmt)]
        for node in sites:
            if not is_object_new(node):
                continue
            assert isinstance(node, ast.Call)
            for choice in self.chooser.choices(node):
                found.extend(self._stubs_at(node, choice))
        return found

    def _stubs_at(self, node: ast.Call, choice: ClassChoice) -> list[Stub]:
        base = Stub(
            class_ref=choice.ref,
            location=self.scope.loc(node),
            module=self.module,
            local_imports=self.scope.scope_imports(node),
        )
        # A class a caller chose is that caller's: the helper is not exported to other modules.
        route = Route(choice.bindings, export=None if choice.bindings.callers else base)
        return [
            _with_track(base, track)
            for track in self.follower.follow_value(node, 0, route, choice.from_caller)
        ]

    def imported_uses(self, module: str, function: str, base: Stub, track: Track) -> list[Stub]:
        """The stub ``function`` of test module ``module`` returns, followed into this
        module's calls of it (``from .utils import make_worker``)."""
        source = Path(base.location.path).resolve()
        local = [
            name
            for name, target in self.module.imports.items()
            if target.name == function
            and (
                target.module == module or _relative_file(self.module.path, target.module) == source
            )
        ]
        out: list[Stub] = []
        route = Route(NO_BINDINGS)  # a helper returning it again is not exported a second time
        for name in local:
            for stmt in self.scope.index(name + "("):
                for call in self.scope.walk(stmt):
                    if not (isinstance(call, ast.Call) and getattr(call.func, "id", None) == name):
                        continue
                    for cont in self.follower.follow_value(call, 1, route):
                        stub = _with_track(base, track.then(cont))
                        out.append(attrs.evolve(stub, scope_module=self.module))
        return out


def _with_track(base: Stub, track: Track) -> Stub:
    """The stub as created, with what the test did to it along one path."""
    return attrs.evolve(
        base,
        class_ref=track.caller_class or base.class_ref,
        # A set still pending its caller's default (a helper never followed into a call of
        # it) states nothing.
        events=tuple(
            e if e.pending_default is None else attrs.evolve(e, pending_default=None)
            for e in track.events
        ),
        escapes=track.escapes,
        opaque=track.opaque,
        patched=tuple(sorted(set(track.patched))),
        raising=tuple(sorted(set(track.raising))),
    )


def _relative_file(importer: Path, target: str) -> Path | None:
    """The file a relative ``from .mod import x`` in ``importer`` names (a test file outside
    the audited tree has no dotted name to resolve it by)."""
    if not target.startswith("."):
        return None
    rest = target.lstrip(".")
    base = Path(importer).resolve().parent
    for _ in range(len(target) - len(rest) - 1):
        base = base.parent
    return base.joinpath(*rest.split(".")).with_suffix(".py") if rest else base / "__init__.py"
