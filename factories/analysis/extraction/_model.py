"""What the extraction produces: stubs and the events the test applies to them."""

from __future__ import annotations

import ast
import enum
from pathlib import Path

import attrs

from factories.analysis.binding import CallShape
from factories.analysis.class_refs import ClassRef
from factories.analysis.findings import Location
from factories.analysis.source_tree import ImportTarget, ModuleInfo


class EventKind(enum.Enum):
    """What a test does to a stub; an enum so that the audit's dispatch on it cannot misspell."""

    SET = "set"  # puts attribute ``name`` on the stub
    READ = "read"  # the test itself loads ``name`` (the field is not stale)
    CALL = "call"  # calls method ``name`` with ``shape``


@attrs.frozen
class StubEvent:
    """``set`` of attribute ``name``, ``call`` of method ``name`` (with ``shape``), or ``read`` of
    attribute ``name`` by the test itself (it keeps the field from being stale)."""

    kind: EventKind
    name: str
    location: Location
    shape: CallShape | None = None
    value: object = None
    has_value: bool = False
    # A call inside ``with pytest.raises(...)``: the test expects it to raise, so the path
    # may end at any ``raise`` it meets.
    expect_raise: bool = False
    # ...and the exception it expects is one only the test's patches raise, so a path that
    # passes the test ends only at them (``EventRecorder.raise_owned``; a stand-in's replay).
    raise_owned: bool = False
    # ...or a class the test module defines, so a ``raise`` of vLLM code that builds an
    # exception of a class vLLM names fails the test (``EventRecorder.raise_tested``; a
    # stand-in's replay).
    raise_tested: bool = False
    # ``monkeypatch.setattr(stub, "n", v)`` / ``patch.object(stub, "n")``: raises
    # AttributeError unless ``n`` already exists (no ``raising=False``/``create=True``).
    must_exist: bool = False
    # A coroutine call handed to ``asyncio.create_task``/``ensure_future``: the test may cancel
    # the task at any ``await``.
    detached: bool = False
    # The pytest test the call runs in (``Class::test_x[case]``, the case id where the test is
    # parametrized with values the analysis bound): a finding about the call names it.
    test: str | None = None
    # ``Cls.method(stub, ...)`` (or a module alias of ``Cls.method``): the class the test
    # names; the call runs that class's method, the stub being ``self``.
    via: str | None = None
    # ``Cls.prop.fget(ns)``: a property's getter run as a call (only a stand-in's replay
    # states one; a stub's own ``stub.prop`` is a read of the property).
    getter: bool = False
    # ``(value,)`` where the test asserts the call returns that literal (``assert f(...) ==
    # 1536``; only a stand-in's replay states it): ``CallContext.returns``.
    returns: tuple[object] | tuple[()] = ()
    # ``(field, value)`` of each field of the call's result the test asserts (``assert
    # metadata.ready``; only a stand-in's replay states them): ``CallContext.result_fields``.
    result_fields: tuple[tuple[str, object], ...] = ()
    # ``(items, field)`` of each list field of the call's result an item of which the test
    # asserts has ``field`` true (``assert meta.requests[0].can_save``; only a stand-in's
    # replay states them): ``CallContext.result_items``.
    result_items: tuple[tuple[str, str], ...] = ()
    # ``Meeting.arms`` of the call (only a stand-in's call states them): the ``if`` arms of
    # its test function it lies in, which no other arm of the same ``if`` runs before.
    arms: tuple[tuple[int, int, int], ...] = ()
    # A set's value known only where the test's values are followed (``stated_locals``: a
    # call that meets a stand-in), not ``value``, which the stub audit's pinned output reads:
    # ``(Obj(),)`` for an array the test builds (``values.built_array``), a callable that
    # knows what its call gives (``values.returning``).
    stated: tuple[object] | tuple[()] = ()
    # A set to a parameter of the helper it lies in that has a literal default the helper
    # never rebinds: ``(def line, parameter, default)``, until the helper's return is
    # followed into one call of it (``Track.settled``), which makes the default ``stated``
    # where that call leaves the parameter out.  Always None on an extracted stub.
    pending_default: tuple[int, str, object] | None = None


@attrs.frozen
class Stub:
    """One way an ``object.__new__`` stub is used: creation site, scope imports, events."""

    class_ref: ClassRef
    location: Location
    module: ModuleInfo = attrs.field(eq=False, repr=False)
    local_imports: dict[str, ImportTarget] = attrs.field(eq=False, repr=False, factory=dict)
    events: tuple[StubEvent, ...] = ()
    escapes: bool = False
    opaque: bool = False
    patched: tuple[str, ...] = ()
    # The subset of ``patched`` whose replacement raises on every call (``Mock(side_effect=
    # SomeError)``, a local ``def`` that ends in ``raise``): a call to it ends the path.
    raising: tuple[str, ...] = ()
    # The test module that made the calls, where it is not ``module`` (a helper of
    # ``tests/.../utils.py`` returned the stub to a test of another module): the names of its
    # patches and of ``Cls.method(stub)`` calls resolve there.
    scope_module: ModuleInfo | None = attrs.field(default=None, eq=False, repr=False)

    @property
    def class_expr(self) -> str:
        """The class as findings spell it (``object.__new__(<class_expr>)``)."""
        return self.class_ref.text

    @property
    def calls(self) -> tuple[StubEvent, ...]:
        return tuple(e for e in self.events if e.kind is EventKind.CALL)


def is_object_new(node: ast.AST) -> bool:
    """``object.__new__(X, ...)``: the one spelling of a stub this analyzer and its tools see."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "__new__"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "object"
        and len(node.args) >= 1
    )


def has_object_new(path: Path) -> bool:
    """Cheap text pre-filter used before parsing a whole test tree.

    An ``OSError`` propagates: a file that cannot be read must be reported, not passed off as
    one without stubs.  Any ASCII-compatible encoding shows the call, hence ``replace``.
    """
    return "object.__new__(" in path.read_text(encoding="utf-8", errors="replace")
