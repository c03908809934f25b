"""What the stand-in extraction produces: stand-ins, their fields, and where they meet vLLM.

A *stand-in* is an object a test builds without the real constructor and hands to real code:
an ``object.__new__`` stub, a ``types.SimpleNamespace``, an ``argparse.Namespace``, or a mock
with a spec (a plain ``MagicMock`` never raises on a missing attribute, so it cannot stand in
wrongly).  A *meeting* is one place where the test hands it to code it did not write: as
``self``, as an argument of a call, or as an attribute of another object.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

import attrs

from factories.analysis.binding import CallShape, Unheard
from factories.analysis.class_refs import ClassRef
from factories.analysis.findings import Location

if TYPE_CHECKING:
    from factories.analysis.file_audit import Census


class StandInKind(enum.Enum):
    """How the test built the object."""

    OBJECT_NEW = "object.__new__"
    SIMPLE_NAMESPACE = "types.SimpleNamespace"
    ARGPARSE_NAMESPACE = "argparse.Namespace"
    SPEC_MOCK = "spec'd mock"
    # Not built by a test as such: an object the test sets stand-ins on (a plain ``MagicMock``,
    # an object built some other way) that goes on to vLLM code; the audit makes one for each
    # ``Meeting.via`` and judges only the stand-ins it holds, never its own links.
    HOLDER = "object holding stand-ins"


class MeetingHow(enum.Enum):
    """How a stand-in reaches code the test did not write."""

    SELF = "self"  # the stand-in is ``self`` of a method
    ARGUMENT = "argument"  # an argument of a call
    ATTRIBUTE = "attribute"  # put on a stub or on another stand-in
    # an item of the container the test's replacement of a function returns
    # (``monkeypatch.setattr(mod, "get_layers", lambda *_: layers)``)
    RETURNED = "returned"


#: ``Meeting.count`` of a ``RETURNED`` meeting whose replacement returns the stand-in itself
#: (``lambda *_: ns``), not a container holding it.
ITSELF = -1
#: ``Meeting.count`` of a ``RETURNED`` meeting whose replacement returns the stand-in itself
#: on some calls only (``lambda *a: seen.append(a) or ns``): what it lacks is a note.
SOMETIMES = -2


class SelfShape(enum.Enum):
    """The spelling that makes a stand-in ``self``, as written: ``Cls.m(ns)`` where ``m`` is
    a classmethod or staticmethod passes ``ns`` as an argument instead, which only the
    ``def`` (the analyzer's side) tells."""

    UNBOUND_CALL = "Cls.method(ns)"
    METHOD_TYPE = "types.MethodType(Cls.method, ns)"
    DESCRIPTOR_GET = "Cls.method.__get__(ns)"
    PROPERTY_FGET = "Cls.prop.fget(ns)"
    SELF_KEYWORD = "f(self=ns)"


@attrs.frozen
class Callee:
    """The code a call runs, as far as the test module says: ``text`` as written, ``dotted``
    through the test module's imports (``vllm.x.Cls.method``) where its head is imported, and
    for a method called on an ``object.__new__`` stub (``builder._build(metadata)``) the stub's
    class and the method, so that a consumer binds it against that class.  ``self_arg``: the
    call names the method on its class and hands ``self`` first, as an ``object.__new__`` stub
    or a namespace (``Builder.build(stub, ns)``): ``method`` is that method (``stub_class`` the
    stub's class, where it is one), and the argument's ``position`` counts ``self``.
    ``instance``: the method is called on an object the test built by calling its class
    (``Cls(args).m(ns)``, ``x = Cls(args); x.m(ns)``, ``Cls.__new__(Cls)``): ``dotted`` names
    the method on that class (``vllm.x.Cls.m``), and ``self`` is that real object;
    ``instance_fields`` the attributes the test sets on it before the call (which shadow the
    class's methods of those names).  ``overrides``: the call builds a subclass the test
    module defines (``_Test(ns)``, ``class _Test(Base)`` with no constructor of its own):
    ``dotted`` names the base, whose constructor runs, and these are the methods the
    subclass defines in its place."""

    text: str
    dotted: str | None = None
    stub_class: ClassRef | None = None
    method: str | None = None
    self_arg: bool = False
    instance: bool = False
    instance_fields: tuple[str, ...] = ()
    overrides: tuple[str, ...] = ()
    # Of ``instance_fields``, the values the test states (``_values_on``): set once, on the
    # straight line of the function that makes the call.
    instance_values: tuple[tuple[str, object], ...] = attrs.field(default=(), eq=False)
    # ``y.m(...)``, ``y`` an attribute of the object (``y = getattr(x, name)``, ``x.attr.m()``):
    # ``m`` runs on the object only where its class hands out its bound method (``self.m`` as a
    # value named ``m``), which the audit checks (``standin_audit._hands_out``).
    bound_out: bool = False
    # What the test states of the arguments of the constructor call that built the object
    # (``MeetingMaker.built_values``): ``(position or keyword, value)``; the audit keeps those
    # the class stores plainly (``standin_audit._stored_values``).
    built_values: tuple[tuple[int | str, object], ...] = attrs.field(default=(), eq=False)
    # The call is the first thing the test does with the object it built by calling its
    # class (``MeetingMaker.fresh``): the object holds what its constructor left
    # (``standin_audit._fresh_literals``).
    fresh: bool = attrs.field(default=False, eq=False)
    # ``dotted``'s module is one of several the test may load (``MeetingMaker.chosen_module``:
    # ``import_module(f"vllm.x.{name}")`` with ``name`` one of two literals): the code walked
    # is one candidate's, which may not be what runs, so what it finds missing is a note.
    unsettled: bool = attrs.field(default=False, eq=False)
    # With ``unsettled``: ``dotted`` as each other candidate module names it, judged as a
    # call of its own (``standin_audit._candidates``).
    alternatives: tuple[str, ...] = attrs.field(default=(), eq=False)


@attrs.frozen
class Meeting:
    """One place where a stand-in meets code the test did not write.

    ``SELF`` and ``ARGUMENT``: ``callee``, and the argument the stand-in is, as written in the
    call (``position`` among the positional arguments, or ``keyword``); binding them to the
    callee's parameters is the analyzer's job, which sees the ``def``.  ``ATTRIBUTE``: the
    ``owner`` expression, its kind (and class, for a stub) where the test module settles
    them, and the ``field``.  ``test`` and ``cases``: the pytest test it runs in and the
    parametrize case ids it is followed under, or those that build the variant it is a
    meeting of (``_in_variant``; empty: every case, none, or not known).  ``shape``: the
    call's shape with what the test states about each argument (a literal, a constructed
    object's fields), as a stub's call carries it, so a replay decides the same branches.
    ``patched``: for a call, the patches around it (``EventRecorder.class_patches``).
    ``via``: the meeting is one of an object that holds the stand-in as a field, which no
    extraction follows as a stand-in of its own."""

    how: MeetingHow
    location: Location
    callee: Callee | None = None
    self_shape: SelfShape | None = None
    position: int | None = None
    keyword: str | None = None
    owner: str | None = None
    owner_kind: StandInKind | None = None
    owner_class: ClassRef | None = None
    field: str | None = None
    test: str | None = None
    cases: tuple[str, ...] = ()
    expect_raise: bool = False
    shape: CallShape | None = attrs.field(default=None, eq=False)
    # A place in a fixture of the module (``test`` None): the tests that request it, the
    # only ones it runs in (``MeetingMaker._requested_by``); None: not known, or any test.
    requested_by: tuple[str, ...] | None = None
    # The exception ``pytest.raises`` expects there is one only the test's patches raise
    # (``EventRecorder.raise_owned``).
    raise_owned: bool = False
    # ...or one the test module defines (``EventRecorder.raise_tested``): no ``raise`` of
    # vLLM code building one of its own classes is it.
    raise_tested: bool = False
    # ``(dotted target, raises)`` of each patch the function holding a call (and its test)
    # makes: what ran in the callee's place.
    patched: tuple[tuple[str, bool], ...] = ()
    # ``(dotted target, unheard)`` of each of those whose replacement never reads some
    # arguments a call hands it (``MeetingMaker._unheard``): a callable handed there never runs.
    unheard: tuple[tuple[str, Unheard], ...] = ()
    # ``SELF``/``ARGUMENT`` of an object the stand-in was put on, not of the stand-in itself:
    # the fields from that object to the stand-in (``runner.cfg = ns; f(runner)``: ``("cfg",)``).
    via: tuple[str, ...] = ()
    # ``(line, column, arm)`` of each ``if`` of its test function the place lies in (0: the
    # body, 1: the ``else``), outside any loop of that function: a test function runs once
    # per case, so two places in different arms of one such ``if`` never both run, and
    # neither runs before the other (``arms_exclusive``).
    arms: tuple[tuple[int, int, int], ...] = ()
    # For a call: the function making it (or its test) patches something by a name it
    # computes (``patch.object(mod, cls_name)``), which may be what the callee runs.
    unnamed_patch: bool = False
    # ``RETURNED``: how many items the container surely holds (0: not known; ``ITSELF``: the
    # replacement returns the stand-in itself, ``SOMETIMES`` on some calls); ``callee`` names
    # the function replaced, ``location`` is the patch's.
    count: int = 0
    # ``RETURNED`` of the stand-in itself, at a call the function that made the patch makes
    # after it (``location``, ``callee``: that call's): the dotted function replaced.  The
    # call is one to judge (``standin_audit._hand_returned``), even if the test hands it
    # nothing, since its code may call the function.
    replaced: str | None = None
    # ``RETURNED`` of a module's global the test set to the stand-in (``monkeypatch.setattr(
    # mod, "current_platform", ns)``; ``callee`` or ``replaced`` names ``mod.current_platform``),
    # not of a function returning it.
    installed: bool = False
    # (``RETURNED`` of the stand-in itself with ``field``: the test's replacement of the
    # method ``callee`` or ``replaced`` names sets ``field`` of the object it runs on to the
    # stand-in: ``def fake_init(runner): runner.transform = ns``.)
    # ``(dotted class, parameter)``: the meeting is one of an object the test built by calling
    # that class with the stand-in as that keyword argument (``x = Cls(coord=ns); x.m()``),
    # through the field of the parameter's name (``via``): it holds only where the class's
    # ``__init__`` stores the parameter there plainly, which the analyzer checks.
    stored: tuple[str, str] | None = None
    # ``ATTRIBUTE``: the stand-in is an item of the container display set as ``field``
    # (``stub.caches = [cache]``), which code reaches only through an element of it.
    item: bool = False
    # ``ATTRIBUTE`` with ``item``: the stand-in is the value the test stores under a key of
    # the container ``field`` holds (``stub.reqs["r"] = ns``), not an item of a display set
    # as it (``keyed``); ``slot``: it is item ``slot`` of the tuple display stored there
    # (``stub.reqs["r"] = (ns, blocks)``), which code reaches as that item of an element.
    keyed: bool = False
    slot: int | None = None


def arms_exclusive(
    first: tuple[tuple[int, int, int], ...], second: tuple[tuple[int, int, int], ...]
) -> bool:
    """Whether two places (their ``Meeting.arms``) lie in different arms of one ``if``."""
    taken = {(line, col): arm for line, col, arm in first}
    return any(taken.get((line, col), arm) != arm for line, col, arm in second)


@attrs.frozen
class StandInField:
    """A field the test gives the stand-in; ``value`` where the test states a plain literal,
    ``children`` for stand-ins built as (or inside) its value; ``test`` for a set one caller
    of the helper building it makes (``visible_to``)."""

    name: str
    location: Location
    value: object = None
    has_value: bool = False
    children: tuple[StandIn, ...] = ()
    # The test that sets it, where that is a statement of its own body on the object a helper
    # built and returned to it (``config = _make_config(); config.spec = SimpleNamespace()``):
    # a set that only that test's calls see, each call of the helper building another one.
    test: str | None = None
    # The field holds a container display the test writes (``layers=[ns]``, ``caches =
    # [cache]``, ``{"k": ns}``) and ``children`` are its items, not its value: code reaches
    # them only through an element (``self.layers[0].x``, the link ``_chains.ELEMENT``).
    items: bool = False

    def visible_to(self, test: str | None) -> bool:
        """Whether a call in ``test`` (``test_x[case]`` or ``test_x``; None: not known) may
        find this field: a set of one caller's own (``test``) is not on the object another
        test's call of the helper builds."""
        return self.test is None or test is None or test.partition("[")[0] == self.test


@attrs.frozen
class StandIn:
    """One object built without its constructor, followed from where it was built.

    ``class_ref``: ``object.__new__``'s class, or a mock's ``spec``/``spec_set`` (what the
    spec class defines at class level is for a consumer to resolve through ``ClassIndex``).
    ``opaque``: the test also sets fields this extraction cannot name (a computed
    ``setattr``, ``**`` of an unknown mapping).  ``dropped``: fields the test deletes again
    (``del ns.f``, ``delattr(ns, "f")``), perhaps on some of its cases only: ``fields`` less
    these is what the stand-in holds on every run.  ``possible``: built as one alternative of
    a conditional expression the test's values do not decide (``None if c else ns``), so the
    object holding it may hold the other: what it lacks is a note, never an error.

    Of a spec'd mock only: ``spec_names``, its spec given as a list of names
    (``Mock(spec=["a", "b"])``: the mock answers exactly those); ``autospec``, built by
    ``create_autospec(Cls, instance=True)`` (whose spec holds a dataclass's fields from Python
    3.14 on); ``read``, the names the test itself loads from it (``m.x.return_value = 1``,
    ``m.x.assert_called_once()``) outside ``pytest.raises``: a test that passes shows the mock
    answers those.

    ``per_test``: no other test meets the object one test builds.


    ``test_reads``: the chains below it the test itself reads (``ns.x`` in an ``assert``,
    ``getattr(ns, "x")``, ``ns.cfg.n += 1``), as field paths; ``loose``: those whose object
    the test hands on where no meeting follows it (``()``: the stand-in itself, returned
    from a helper other modules may import, put in a list, printed, ``vars(ns)``; ``("cfg",)``:
    ``f(ns.cfg)``).  What a stale field of a namespace needs: every use the test makes."""

    kind: StandInKind
    location: Location
    fields: tuple[StandInField, ...] = ()
    class_ref: ClassRef | None = None
    opaque: bool = False
    meetings: tuple[Meeting, ...] = ()
    dropped: frozenset[str] = frozenset()
    possible: bool = False
    spec_names: tuple[str, ...] | None = None
    autospec: bool = False
    read: frozenset[str] = frozenset()
    # Built anew on each run of a test (in a test, a plain helper or a function-scoped
    # fixture): another test's hand-overs never meet the object a test's call is handed.
    per_test: bool = False
    # Only stale fields ask for these three: not part of a stand-in's identity, so that
    # the meetings' grouping (``standin_audit``) is the same with or without them.
    test_reads: frozenset[tuple[str, ...]] = attrs.field(default=frozenset(), eq=False)
    loose: frozenset[tuple[str, ...]] = attrs.field(default=frozenset(), eq=False)
    # The creation call's column: with ``location``, which namespace of a line it is
    # (``SimpleNamespace(model=SimpleNamespace(...))`` builds two there).
    column: int = attrs.field(default=0, eq=False)

    @property
    def field_names(self) -> frozenset[str]:
        return frozenset(f.name for f in self.fields)

    @property
    def children(self) -> tuple[StandIn, ...]:
        return tuple(child for f in self.fields for child in f.children)

    def walk(self) -> Iterator[StandIn]:
        """This stand-in and every stand-in nested in it, depth first."""
        yield self
        for child in self.children:
            yield from child.walk()


def census(roots: Iterable[StandIn]) -> Census:
    """Stand-ins by kind over the roots a test module builds (nested ones count too), and
    how many of them belong to a tree that meets vLLM code: one of it is made ``self``,
    passed as an argument, or set on an ``object.__new__`` stub.  A creation the audit
    follows once per set of values (a parametrized namespace, one stand-in per case) is one
    stand-in here: counted by where the test builds it, meeting code where any of its
    variants does."""
    meets_at: dict[tuple, bool] = {}
    for root in roots:
        meets = any(
            m.how is not MeetingHow.ATTRIBUTE or m.owner_kind is StandInKind.OBJECT_NEW
            for standin in root.walk()
            for m in standin.meetings
        )
        for standin in root.walk():
            site = (standin.kind, standin.location, standin.column)
            meets_at[site] = meets_at.get(site, False) or meets
    found: dict[StandInKind, list[int]] = {}
    for (kind, _, _), meets in meets_at.items():
        counts = found.setdefault(kind, [0, 0])
        counts[0] += 1
        counts[1] += meets
    return tuple((k.value, found[k][0], found[k][1]) for k in StandInKind if k in found)


def census_sum(parts: Iterable[Census]) -> Census:
    """The census of several files: theirs added up, kind by kind."""
    found: dict[str, list[int]] = {}
    for part in parts:
        for kind, n, meeting in part:
            counts = found.setdefault(kind, [0, 0])
            counts[0] += n
            counts[1] += meeting
    kinds = [k.value for k in StandInKind if k.value in found]
    return tuple((kind, found[kind][0], found[kind][1]) for kind in kinds)
