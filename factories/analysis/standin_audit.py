"""The fields a stand-in lacks where vLLM code reads them (``audit-stubs --standins``).

A test hands vLLM code objects it built without their constructor
(``factories.analysis.extraction.StandInExtractor``): a ``SimpleNamespace`` set on a stub's
field (``builder.mla_dims = SimpleNamespace(v_head_dim=...)``), passed to a method called on a
stub (``builder._build(metadata, common)``, ``Builder._build(stub, metadata, common)``), made
``self`` of a method (``Builder._build_decode(ns, ...)``, ``Builder._build_decode(self=ns)``,
``types.MethodType(Builder._build_decode, ns)(...)``,
``Builder._build_decode.__get__(ns)(...)``, ``Builder.prop.fget(ns)``), or passed to other code
its imports name (``HandedCall``): a module function (``build(common)``,
``mod.build(common)``), a static or class method (``Builder.make(common)``), a method whose
``self`` is another object, a constructor (``Builder(spec, names, vllm_config=ns)``: the
``__init__`` it runs, on the real object).  The patches around the call hold for its walk.  The
call's analysis records the attribute chains read from those objects
(``CallContext(chains=True)``, ``MethodReport.chain_reads``); a link of a chain that the
namespace (or a namespace nested in it) does not hold is a missing field.  A chain stops at a
field whose value is not a namespace: what is read beyond it belongs to a real object.  An
``object.__new__`` stub the test put in a namespace (``SimpleNamespace(fused=stub)``) is no
real object: a property read or a method called on it runs its class's code on it
(``typed_chains``, ``CallContext.typed``), and the chain goes on through the namespaces the
test set on it (``_first_missing``).

A mock with a spec (``Mock(spec=Cls)``, ``create_autospec(Cls, instance=True)``) is judged
where its spec is a class of the tree the text settles (``mock_specs.MockSpec``): a name it
neither answers from its spec nor was given by the test (``m.x = ...``, ``configure_mock``,
a name the test itself reads on it) raises where the code reads it, as an attribute
``__init__`` sets does.  Only the first link: what a mock answers is a plain ``Mock``, unless
the test set a stand-in there.  Made ``self`` of a method (``Cls.m(mock)``, or a method bound
to it, ``m.f = Cls.f.__get__(m)``, judged where ``m.f(...)`` is called), the method is walked
as a function of it: what it calls on ``self`` is the mock's, not the class's code.

``StandInTable`` is what one test module builds, ``StubStandIns`` the part of it one stub
meets, ``missing_fields`` the check of one call's report, ``SelfCall`` the ``Stub`` values
that replay a namespace made ``self`` through ``ClassAuditor.audit_class``, and
``handed_findings`` the check of a ``HandedCall`` (its callee walked as a function,
``ReadSetAnalyzer.analyze_function``, or a constructor's ``__init__``,
``ReadSetAnalyzer.analyze`` with ``CallContext.real_self``); its namespace arguments are the
objects the test built (``stated_shape``), whose stated fields decide the callee's branches, as
a constructed object's literal class attributes do until its code stores them
(``class_constants``).

A parametrized test is several runs: a replayed call handed one namespace per run (the
variants of one creation) is walked once per run as well (``run_shapes``), and a read one run
makes on its path is an error (``on_some_run``); a helper's result the test asserts per
parametrize case (``_site_runs``, ``CaseNames``) is an assertion on that case's run, and so is
a handed call's result the test asserts through a parameter (``assert bound == expected``): its
callee is walked once more per asserted value, for the cases its stand-ins are built on
(``HandedCall.case_returns``, ``_case_runs``).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

import attrs

from factories.analysis._walk import child_nodes, link_parents, walk, walk_all
from factories.analysis.asserted import (
    TestNames,
    assert_states,
    asserted_after,
    result_asserts,
    result_item_asserts,
    stated,
)
from factories.analysis.baseline import is_suppressed, suppressed_kinds
from factories.analysis.binding import CallShape, ParamKind, Signature, Unheard, literal_value
from factories.analysis.called_mocks import called_mocks
from factories.analysis.class_refs import NamedClass
from factories.analysis.classes import (
    ClassIndex,
    ClassInfo,
    External,
    FunctionRef,
    MemberKind,
    ModuleRef,
)
from factories.analysis.extraction import (
    ITSELF,
    SOMETIMES,
    Callee,
    EventKind,
    Meeting,
    MeetingHow,
    ParamCase,
    SelfShape,
    StandIn,
    StandInField,
    StandInKind,
    Stub,
    StubEvent,
    arms_exclusive,
    call_binding,
    parametrize_values,
)
from factories.analysis.extraction._syntax import FUNCTION_DEFS, first_line
from factories.analysis.findings import Finding, FindingKind, Location
from factories.analysis.mock_specs import MockSpec, mock_spec
from factories.analysis.readset import CallContext, plain_function, plainly_built
from factories.analysis.readset._chains import (
    ELEMENT,
    element_key,
    installed_root,
    replaced_set_root,
    slot_link,
)
from factories.analysis.readset._handovers import CALLED, FILLS_ANY
from factories.analysis.report import MeetingKey, NamespaceSite, NamespaceUse
from factories.analysis.source_tree import ModuleInfo, function_imports
from factories.analysis.values import Obj, enum_member
from factories.errors import SourceError

# The kinds whose every attribute is one the test gave it.
NAMESPACE_KINDS = frozenset({StandInKind.SIMPLE_NAMESPACE, StandInKind.ARGPARSE_NAMESPACE})
# The kinds the audit judges: namespaces, and mocks whose spec it settles (``MockSpec``).
AUDITED_KINDS = NAMESPACE_KINDS | {StandInKind.SPEC_MOCK}

_OBJECT_NAMES = frozenset(dir(object)) | {"__dict__", "__weakref__", "__module__"}
# Callables that only bind their arguments into a callable run later.
_BINDERS = frozenset({"functools.partial"})


@attrs.frozen
class PassedStandIn:
    """A stand-in handed to a call on a stub, as written: ``position`` among the call's
    positional arguments, or ``keyword``."""

    standin: StandIn
    position: int | None = None
    keyword: str | None = None


@attrs.frozen
class Reach:
    """What one walked call (``HandedCall.key``) may have changed of a namespace the test
    built (at ``site``, ``column``), handed to it as (or inside) an argument: the fields its
    text stores on the namespace (``fills``), whether it may have replaced the namespace
    or given it fields by a computed name (``replaced``: a store or ``setattr`` on it by a
    name the text computes, or a store of a link on the way to it), and whether the walk saw
    every use of it (``whole``: not handed on where the walk could not follow it, no method
    called on an object at or above it, which gets it through ``self``, a plain callee, and
    the code the walk followed is the code that ran: ``readset._handovers``)."""

    key: tuple
    site: Location
    column: int
    fills: frozenset[str]
    replaced: bool
    whole: bool


@attrs.frozen
class StubStandIns:
    """The stand-ins one test module puts on its stubs' fields (by the ``(location, field)``
    of the set) and hands to their methods (by the ``(location, method)`` of the call)."""

    sets: Mapping[tuple[Location, str], StandIn] = attrs.field(factory=dict)
    passed: Mapping[tuple[Location, str], tuple[PassedStandIn, ...]] = attrs.field(factory=dict)
    # ``(link, field)`` of each namespace the test sets through a chain after building its
    # owner (``model.config.text_config = SimpleNamespace(...)``: ``("config", "text_config")``).
    late: frozenset[tuple[str, str]] = frozenset()
    # What each spec'd mock the audit judges lacks, by where the test builds it.
    specs: Mapping[Location, MockSpec] = attrs.field(factory=dict)
    # What the walk of each call the test hands namespaces to may have changed of them, by
    # ``(handed_key, namespace location, column)`` (``Reach``): a namespace such a call met
    # before another is judged there by it (``_left_as_built``).
    reach: Mapping[tuple, Reach] = attrs.field(factory=dict)
    # The stand-ins the test stores under a key of a container on a stub's field, by the
    # ``(location, field)`` of the store (``Meeting.keyed``): each a holder whose element is
    # the stored value (``keyed_holder``).
    stored: Mapping[tuple[Location, str], StandIn] = attrs.field(factory=dict)
    # ``(location, field)`` of each statement that sets an object's field to an empty dict
    # display the statement itself writes (``stub.reqs = {}``): a new container nothing else
    # holds, which then holds only what is stored through the field.
    emptied: frozenset[tuple[Location, str]] = frozenset()
    # The calls of each test module the table was built from, by its path: what the test
    # asserts a stub's method call returns (``asserted``).  An index of the module's text,
    # not part of what the table holds: tables built from the same text are equal.
    calls: Mapping[str, _CallIndex] = attrs.field(factory=dict, eq=False)
    # The stand-in each test function hands to a stub's field (by the ``(location, field)``
    # of the set, then the test's name, ``Class::test_x``), where a helper stores its
    # parameter there (``stub.sampler = sampler``) and several tests call it: each test's
    # stub holds the one that test built, not the last one the module builds (``sets``).
    sets_by_test: Mapping[tuple[Location, str], Mapping[str, StandIn]] = attrs.field(factory=dict)

    def joined(self, other: StubStandIns) -> StubStandIns:
        """These and ``other``'s, as one test file's stubs meet them: a stub a shared
        helper returns (``tests/.../utils.py``) carries the namespaces the helper's module
        sets on it and hands its calls into the test file that calls the helper.  Keys name
        their file, so the two never collide."""
        return StubStandIns(
            {**other.sets, **self.sets},
            {**other.passed, **self.passed},
            self.late | other.late,
            {**other.specs, **self.specs},
            {**other.reach, **self.reach},
            {**other.stored, **self.stored},
            self.emptied | other.emptied,
            {**other.calls, **self.calls},
            {**other.sets_by_test, **self.sets_by_test},
        )

    def asserted(self, event: StubEvent) -> tuple[object] | tuple[()]:
        """What the test asserts the stub's method call ``event`` returns (``CallContext.returns``:
        ``step = stub.plan(x); assert step is not None``), where the replay itself states
        nothing: the call of that method alone on its line, outside ``pytest.raises``."""
        if event.returns:
            return event.returns
        calls = self.calls.get(event.location.path)
        if calls is None:
            return ()
        return calls.asserted(calls.method_call_at(event.location.line, event.name))

    def result_items(self, event: StubEvent) -> tuple[tuple[str, str], ...]:
        """What the test asserts true of an item of a list field of the stub's method call
        ``event``'s result (``CallContext.result_items``: ``meta = stub.build(x); assert
        meta.requests[0].can_save``), where the replay itself states nothing: the call of
        that method alone on its line, outside ``pytest.raises``."""
        if event.result_items:
            return event.result_items
        calls = self.calls.get(event.location.path)
        if calls is None:
            return ()
        return calls.result_items(calls.method_call_at(event.location.line, event.name))

    def called(self, event: StubEvent) -> tuple[frozenset[str], frozenset[str]]:
        """The mocks the test put on the stub and asserts the method call ``event`` ran, and
        every field it stores on the stub (``_CallIndex.called_mocks``): the call of that
        method alone on its line."""
        calls = self.calls.get(event.location.path)
        if calls is None or event.via is not None:
            return frozenset(), frozenset()
        return calls.called_mocks(calls.method_call_at(event.location.line, event.name))

    def set_by(self, event: StubEvent, test: str | None = None) -> StandIn | None:
        """The stand-in the set ``event`` puts on the stub's field: where ``test`` (the test
        the stub's calls run in, ``StubEvent.test``) built one of its own there, that one."""
        return self.own_set(event, test) or self.sets.get((event.location, event.name))

    def own_set(self, event: StubEvent, test: str | None) -> StandIn | None:
        """The stand-in ``test`` built and a helper's set ``event`` puts on the stub's field
        (``sets_by_test``), or None."""
        if test is None:
            return None
        return self.sets_by_test.get((event.location, event.name), {}).get(test.split("[", 1)[0])

    def empties(self, event: StubEvent) -> bool:
        """Whether ``event`` (a set) sets the field to a new empty dict (``emptied``)."""
        return (event.location, event.name) in self.emptied

    def stored_by(self, event: StubEvent) -> StandIn | None:
        """The holder of what the test stores under a key of the container ``event`` (the
        test's load of the stub's field) reaches, where that is a store of stand-ins."""
        return self.stored.get((event.location, event.name))

    def passed_to(self, event: StubEvent) -> tuple[PassedStandIn, ...]:
        return self.passed.get((event.location, event.name), ())


@attrs.frozen
class SelfCall:
    """A namespace made ``self`` of one method, as the stub ``ClassAuditor`` replays."""

    stub: Stub
    kind: StandInKind
    # Other code met the namespace before the first replayed call, and may have filled it in.
    filled: bool = False
    # A replayed call's test patches a target it does not name (``Meeting.unnamed_patch``).
    unnamed_patch: bool = False

    def restated(self, finding: Finding) -> Finding:
        """A finding of the replay, worded for what the test built.  The replay does not see
        what other code wrote on the namespace before it (``filled``), so a missing read
        there is a note (a field of ``self`` or a link of a namespace on one).  Under
        ``pytest.raises`` the replay's walk places the reads: one past something that may
        raise what the test expects (a patch, a callable the test gave, a function of the
        tree that raises, in a loop or branch too) is a note (``Walker.past_raise``)."""
        kind = finding.kind
        if (self.filled or self.unnamed_patch) and kind in (
            FindingKind.MISSING_ATTRIBUTE,
            FindingKind.MISSING_FIELD,
        ):
            kind = FindingKind.POSSIBLY_MISSING_ATTRIBUTE
        return attrs.evolve(
            finding,
            kind=kind,
            message=finding.message.replace(
                "the stub never sets it", f"the {self.kind.value} made self never sets it"
            ),
        )


@attrs.frozen
class HandedCall:
    """One call of code the test names through its imports that it hands namespaces as
    arguments, not a stub's method: a module function (``f(ns)``, ``mod.f(ns)``), a static or
    class method (``Cls.build(ns)``), or a method whose ``self`` is some other object
    (``Cls.method(obj, ns)``).  ``passed`` as written in the call (``self`` counted);
    ``given_self``: ``self`` is a stand-in the audit replays or a stub, so a plain method's
    call is judged there, with what that ``self`` holds."""

    location: Location
    dotted: str
    passed: tuple[PassedStandIn, ...]
    shape: CallShape
    module: ModuleInfo = attrs.field(eq=False, repr=False)
    test: str | None = None
    expect_raise: bool = False
    given_self: bool = False
    # The exception ``pytest.raises`` expects is one only the test's patches raise
    # (``Meeting.raise_owned``).
    raise_owned: bool = False
    # ``Meeting.raise_tested``: it is a class the test module defines.
    raise_tested: bool = False
    patched: tuple[tuple[str, bool], ...] = ()
    # ``Meeting.unheard``: replaced functions that never read some arguments they are handed.
    unheard: tuple[tuple[str, Unheard], ...] = ()
    # ``(value,)`` where the test asserts the call returns that literal (``_asserted``).
    returns: tuple[object] | tuple[()] = ()
    # ``(field, value)`` of each field of the call's result the test asserts
    # (``_CallIndex.result_fields``): ``CallContext.result_fields``.
    result_fields: tuple[tuple[str, object], ...] = ()
    # ``(case ids, (value,))`` where ``returns`` is not known for every run but each of those
    # parametrize cases of the test asserts the call returns that value
    # (``_CallIndex.case_asserted``): a walk per value (``_case_runs``).
    case_returns: tuple[tuple[tuple[str, ...], tuple[object]], ...] = attrs.field(
        default=(), eq=False
    )
    # ``Callee.instance``: a method called on an object the test built with its class's
    # constructor, with the attributes the test set on it (``Callee.instance_fields``).
    instance: bool = False
    instance_fields: tuple[str, ...] = ()
    # What the test states of those attributes' values (``Callee.instance_values``).
    instance_values: tuple[tuple[str, object], ...] = attrs.field(default=(), eq=False)
    # ``Callee.built_values``: what the test states of the constructor call's arguments.
    built_values: tuple[tuple[int | str, object], ...] = attrs.field(default=(), eq=False)
    # ``Callee.fresh``: the call is the first use of the object the test built.
    fresh: bool = attrs.field(default=False, eq=False)
    # ``Callee.overrides``: the class built is the test's subclass of ``dotted``.
    overrides: tuple[str, ...] = ()
    # Holders of namespaces that are that real object, ``self`` of the method
    # (``x = Cls(args); x.cfg = ns; x.m()``: a holder whose ``cfg`` is ``ns``).
    self_holders: tuple[StandIn, ...] = ()
    # ``Meeting.arms`` of the call.
    arms: tuple[tuple[int, int, int], ...] = ()
    # ``Meeting.unnamed_patch``: what the test replaced is not known, nor the path.
    unnamed_patch: bool = False
    # ``(dotted function, namespaces, items)`` of each function the test replaced with one
    # returning a container of namespaces before the call (``_with_returned``).
    returned: tuple[tuple[str, tuple[StandIn, ...], int], ...] = ()
    # ``(dotted module global, namespaces)`` of each global the test set to a namespace where
    # it holds at the call (``Meeting.installed``, ``_with_returned``).
    installed: tuple[tuple[str, tuple[StandIn, ...]], ...] = ()
    # ``(dotted method, field, namespaces)``: the test replaced the method with a function
    # that sets that field of its object to a namespace (``Meeting.field``), holding at the
    # call (``_with_returned``).
    replaced_sets: tuple[tuple[str, str, tuple[StandIn, ...]], ...] = ()
    # A helper (no test around it) makes the call with a namespace it builds in place, which
    # other calls of its builder met before (``_fresh``): what the helper's callers and their
    # fixtures patched first is not known, so its reads are notes.
    unsettled: bool = False
    # The callee as written (``build(...)``, ``mod.build``): with the location, ``dotted``
    # and ``test``, the meetings it stands for (``handed_key``).
    text: str = ""

    @property
    def key(self) -> tuple:
        """The meetings this call stands for (``handed_key``)."""
        return (self.location.path, self.location.line, self.text, self.dotted, self.test)

    @property
    def event(self) -> StubEvent:
        """The call as a stub's call event (where and in which test a finding places it)."""
        name = self.dotted.rpartition(".")[2]
        return StubEvent(
            EventKind.CALL, name, self.location, shape=self.shape, test=self.test, arms=self.arms
        )


@attrs.frozen
class StandInTable:
    """What a test module's stand-ins give the audit: ``stubs`` for its ``object.__new__``
    stubs' calls, ``selves`` for the namespaces it makes ``self`` of a method, ``handed``
    for the calls of other code it hands them to."""

    stubs: StubStandIns
    selves: tuple[SelfCall, ...] = ()
    handed: tuple[HandedCall, ...] = ()
    # The namespaces as the test uses them, for their stale fields (``namespace_sites``).
    sites: tuple[NamespaceSite, ...] = ()

    @classmethod
    def of(
        cls,
        module: ModuleInfo,
        standins: Iterable[StandIn],
        index: ClassIndex | None = None,
        walk: Callable[[ast.AST], Iterable[ast.AST]] | None = None,
    ) -> StandInTable:
        """``index``: the tree's classes, which settle what a spec'd mock lacks; without it
        only the namespaces are judged.  ``walk``: the nodes of a statement of ``module`` in
        ``ast.walk`` order, where the module's extraction has them at hand
        (``ModuleScope.walk``)."""
        standins = tuple(_settled_stores(index, standin) for standin in standins)
        specs = _specs(index, module, standins)
        sets: dict[tuple[Location, str], StandIn] = {}
        stored: dict[tuple[Location, str], StandIn] = {}
        passed: dict[tuple[Location, str], list[PassedStandIn]] = {}
        handed: dict[tuple, HandedCall] = {}
        bare: dict[tuple, HandedCall] = {}  # calls a patch's namespace may reach (only)
        selves: list[SelfCall] = []
        late: set[tuple[str, str]] = set()
        by_test: dict[tuple[Location, str], dict[str, StandIn]] = {}
        calls = _CallIndex(module, walk)
        for root in standins:
            for standin in root.walk():
                if standin.kind not in NAMESPACE_KINDS and standin.location not in specs:
                    continue
                for meeting in standin.meetings:
                    if meeting.stored is not None and not _holding(meeting):
                        continue  # the object may not hold the stand-in there
                    callee = meeting.callee
                    if (
                        callee is not None
                        and callee.bound_out
                        and not _hands_out(index, callee.dotted)
                    ):
                        continue
                    _file(meeting, standin, sets, passed, stored)
                    if _on_stub_field(meeting) and not (meeting.keyed or meeting.item):
                        test = _test_function(module, standin.location)
                        if test is not None:
                            at = (meeting.location, meeting.field or "")
                            by_test.setdefault(at, {})[test] = standin
                    for candidate in _candidates(meeting):
                        _hand(calls, candidate, standin, handed)
                    _hand_returned(calls, meeting, bare)
                    if meeting.how is MeetingHow.ATTRIBUTE and "." in (meeting.owner or ""):
                        late.add((meeting.owner.rsplit(".", 1)[1], meeting.field or ""))
                if standin.kind in NAMESPACE_KINDS:
                    selves.extend(_self_calls(calls, standin))
        for root in standins:
            for standin in root.walk():
                for field in standin.fields:
                    if field.items and all(_judgeable(c, specs) for c in field.children):
                        held = _element_holder(field.children, field.location)
                        sets.setdefault((field.location, field.name), held)
                    elif len(field.children) == 1 and _judgeable(field.children[0], specs):
                        sets.setdefault((field.location, field.name), field.children[0])
                    elif (
                        standin.kind in NAMESPACE_KINDS
                        and len(field.children) == 1
                        and field.children[0].kind is StandInKind.OBJECT_NEW
                    ):
                        # ``SimpleNamespace(index_group=stub)`` made ``self``: the namespaces
                        # the test set on the stub are read through ``self.index_group``
                        # (``typed_chains``, ``_first_missing``)
                        sets.setdefault((field.location, field.name), field.children[0])
        passed_by = {k: tuple(v) for k, v in passed.items()}
        only = {call.key for key, call in bare.items() if key not in handed}
        handed = {**bare, **handed}
        calls_made = tuple(
            call
            for call in _with_returned(tuple(handed.values()), standins)
            if call.key not in only or call.returned or call.installed or call.replaced_sets
        )
        return cls(
            StubStandIns(
                sets,
                passed_by,
                frozenset(late),
                specs,
                stored=stored,
                emptied=_emptied(module) if stored else frozenset(),
                calls={str(module.path): calls},
                sets_by_test=by_test,
            ),
            tuple(selves),
            calls_made,
            tuple(namespace_sites(standins, module.lines)),
        )


def _settled_stores(index: ClassIndex | None, standin: StandIn) -> StandIn:
    """The stand-in with its meetings through an object built with it as a constructor's
    keyword argument (``Meeting.stored``) kept only where the class stores it plainly
    (``_init_stores``), and a call of a method on an attribute of that object
    (``Callee.bound_out``) only where the class hands that method out bound
    (``_hands_out``); the constructor's call itself is then marked ``stored`` too (it runs
    no code that writes on the stand-in: ``runs_code``)."""
    if not any(m.stored is not None for m in standin.meetings):
        return standin
    handed_out = {
        m.callee.dotted: _hands_out(index, m.callee.dotted)
        for m in standin.meetings
        if m.callee is not None and m.callee.bound_out and m.callee.dotted is not None
    }
    verdicts = {
        stored: _init_stores(index, *stored)
        for stored in {m.stored for m in standin.meetings if m.stored is not None}
    }
    meetings = []
    for meeting in standin.meetings:
        callee = meeting.callee
        if callee is not None and callee.bound_out and not handed_out.get(callee.dotted):
            continue  # ``y.m(...)``: no sign that ``m`` is the object's (``_hands_out``)
        if meeting.stored is not None:
            if verdicts[meeting.stored]:
                meetings.append(meeting)
            continue
        callee = meeting.callee
        made = (callee.dotted, meeting.keyword) if callee is not None else None
        if meeting.how is MeetingHow.ARGUMENT and not meeting.via and verdicts.get(made):
            meeting = attrs.evolve(meeting, stored=made)
        meetings.append(meeting)
    return attrs.evolve(standin, meetings=tuple(meetings))


def _holding(meeting: Meeting) -> bool:
    """A meeting through a stored constructor argument (``Meeting.stored``), verified by
    ``_settled_stores``, unless the test set the field itself on the object before the call
    (``Callee.instance_fields``), or it is the constructor's call (judged as any call)."""
    stored, callee = meeting.stored, meeting.callee
    if stored is None or callee is None:
        return True
    if not meeting.via and (callee.dotted, meeting.keyword) == stored:
        return True
    return not (meeting.via[:1] == (stored[1],) and stored[1] in callee.instance_fields)


def _init_stores(index: ClassIndex | None, dotted: str, param: str) -> bool:
    """Whether calling the tree's class ``dotted`` stores its parameter ``param`` as
    ``self.<param>`` and leaves it as the test built it (``Meeting.stored``): a plain
    ``self.param = param`` of ``__init__``'s own body (run on every path, before any
    ``return``), the only use of the parameter there, and the field set nowhere else in
    ``__init__``; no method of the class sets an attribute on ``self.param``.  A copy,
    something derived, another name, a store on some path only, or code that may write on
    the stand-in is not followed: the object may not hold the stand-in as the test built it."""
    if index is None:
        return False
    cls = _in_tree(index, dotted)
    if not isinstance(cls, ClassInfo):
        return False
    return _plain_store(index, cls, param) and _unwritten(index, cls, param)


def _plain_store(index: ClassIndex, cls: ClassInfo, param: str) -> bool:
    """``__init__`` (as ``cls`` finds it) stores its parameter ``param`` as ``self.<param>``
    by a plain ``self.param = param`` of its own body, run on every path before any
    ``return``, the only use of the parameter there and the only store of the field there."""
    member = index.lookup(cls, "__init__")
    init = member.node if member is not None else None
    if not isinstance(init, ast.FunctionDef) or member.kind is not MemberKind.METHOD:
        return False
    args = init.args
    if not args.args or param not in [a.arg for a in (*args.args[1:], *args.kwonlyargs)]:
        return False
    me = args.args[0].arg
    stored = False
    for stmt in init.body:
        if any(isinstance(n, ast.Return) for n in walk(stmt)):
            return stored
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and _is_self_field(stmt.targets[0], me, param)
            and isinstance(stmt.value, ast.Name)
            and stmt.value.id == param
            and not stored
        ):
            stored = True
            continue
        for node in walk(stmt):
            if isinstance(node, ast.Name) and node.id == param:
                return False
            if _is_self_field(node, me, param) and not isinstance(node.ctx, ast.Load):
                return False
    return stored


def _unwritten(index: ClassIndex, cls: ClassInfo, field: str) -> bool:
    """No method of ``cls`` sets (or deletes) an attribute of ``self.<field>``."""
    return field not in index.stores(cls).inner


def _is_self_field(node: ast.AST, me: str, field: str) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == field
        and isinstance(node.value, ast.Name)
        and node.value.id == me
    )


def _hands_out(index: ClassIndex | None, dotted: str | None) -> bool:
    """Whether ``m`` of ``dotted`` (``vllm.x.Cls.m``) is a plain method of the tree's class
    ``Cls`` that code of a class of its MRO hands out bound to the object under its own
    name: ``weight_loader=self.weight_loader``, ``{"weight_loader": self.weight_loader}``,
    ``param.weight_loader = self.weight_loader``, ``setattr(param, "weight_loader",
    self.weight_loader)`` (a layer giving its parameters their loader).  Then ``y.m(...)``
    on an attribute ``y`` of the object (``Callee.bound_out``) runs ``Cls.m`` on it; without
    that sign ``y.m`` is ``y``'s own, and the call is not judged."""
    if index is None or dotted is None:
        return False
    head, _, name = dotted.rpartition(".")
    cls = _callee_class(index, head)
    member = index.lookup(cls, name) if cls is not None else None
    if member is None or member.kind is not MemberKind.METHOD:
        return False
    if not isinstance(member.node, ast.FunctionDef):
        return False
    for klass in index.mro(cls)[0]:
        for method in klass.node.body:
            if not isinstance(method, FUNCTION_DEFS) or not method.args.args:
                continue
            me = method.args.args[0].arg
            if any(_passes_bound(node, me, name) for node in walk(method)):
                return True
    return False


def _passes_bound(node: ast.AST, me: str, name: str) -> bool:
    """``node`` hands on ``<me>.<name>`` (a bound method) as a value named ``name``."""
    if isinstance(node, ast.keyword):
        return node.arg == name and _is_self_field(node.value, me, name)
    if isinstance(node, ast.Dict):
        return any(
            isinstance(k, ast.Constant) and k.value == name and _is_self_field(v, me, name)
            for k, v in zip(node.keys, node.values)
        )
    if isinstance(node, ast.Assign):
        return _is_self_field(node.value, me, name) and any(
            isinstance(t, ast.Attribute)
            and t.attr == name
            and not (isinstance(t.value, ast.Name) and t.value.id == me)
            for t in node.targets
        )
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        args = node.args
        return (
            node.func.id == "setattr"
            and len(args) == 3
            and isinstance(args[1], ast.Constant)
            and args[1].value == name
            and _is_self_field(args[2], me, name)
        )
    return False


def _stored_values(index: ClassIndex, cls: ClassInfo, handed: HandedCall) -> dict[str, object]:
    """The fields of the object the test built with ``Cls(...)`` that hold a constructor
    argument as the test states it (``HandedCall.built_values``): a parameter of the
    ``__init__`` the call runs (``ClassIndex.constructor``) stored by a plain ``self.p = p``
    (``_plain_store``), and stored nowhere else by the classes of its MRO (``_stored_once``);
    not a field the test sets on the object itself.  A literal, or an object of a class of
    the tree (``_tree_object``).  Code outside the class that sets the field on the object
    is not seen, as for a stored stand-in (``_init_stores``)."""
    if not handed.built_values:
        return {}
    member = index.constructor(cls)
    if member is None or member != index.lookup(cls, "__init__") or not member.node.args.args:
        return {}
    args = member.node.args
    every = [a.arg for a in (*args.posonlyargs, *args.args)]
    positional = every[1:]
    named = {a.arg for a in (*args.args, *args.kwonlyargs)} - {every[0]} if every else set()
    out: dict[str, object] = {}
    for key, value in handed.built_values:
        if isinstance(key, int):
            param = positional[key] if key < len(positional) else None
        else:
            param = key if key in named else None
        if param is None or param in handed.instance_fields:
            continue
        if not (_plain_store(index, cls, param) and _stored_once(index, cls, param)):
            continue
        known = _tree_object(index, value)
        if known:
            out[param] = known[0]
    return out


def _fresh_literals(index: ClassIndex, cls: ClassInfo, handed: HandedCall) -> dict[str, object]:
    """The fields of a fresh object (``HandedCall.fresh``: the call is the first use of the
    object the test built with ``Cls(...)``) that its constructor leaves holding a plain
    literal: stored by a statement of the ``__init__`` the call runs
    (``ClassIndex.constructor``), or of a base's that it reaches by a statement
    ``super().__init__(...)``, with no later store of the field there
    (``_constructor_literals``).  Not a field the test sets on the object, nor a name a
    class of the MRO defines as a member (a property's setter may store anything).  Nothing
    where the MRO leaves the tree or a class of it defines ``__setattr__``."""
    if not handed.fresh:
        return {}
    if index.mro(cls)[1]:
        return {}
    members = index.members(cls)
    if any(
        name in members for name in ("__setattr__", "__getattr__", "__getattribute__", "__new__")
    ):
        return {}
    member = index.constructor(cls)
    found: dict[str, object] = {}
    if member is None or not _constructor_literals(index, cls, member, found, 0):
        return {}
    return {
        name: value
        for name, value in found.items()
        if name not in handed.instance_fields
        and (name not in members or members[name].kind is MemberKind.ANNOTATION_ONLY)
    }


def _constructor_literals(
    index: ClassIndex, cls: ClassInfo, member, found: dict[str, object], depth: int
) -> bool:
    """Add to ``found`` what ``member`` (an ``__init__`` building an object of ``cls``)
    leaves in fields as plain literals, statement by statement (``self.f = None``,
    ``self.f: T | None = None``; any other store of a field forgets it; ``super().__init__(...)``
    follows the next ``__init__`` of the MRO).  False where the text may change fields it
    does not name: ``self`` handed to code or a method of it called (``self.setup()``),
    which are not followed, its ``__dict__``, an early ``return`` that may skip stores, or
    a base ``__init__`` the tree does not show."""
    node = member.node
    args = node.args.posonlyargs + node.args.args
    if not args or depth > 8:
        return False
    me = args[0].arg
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if any(isinstance(sub, ast.Return) for sub in _own_nodes(node)):
        return False  # an early ``return`` may skip the stores after it
    for stmt in body:
        if _super_init(stmt):
            base = index.lookup(cls, "__init__", after=member.owner)
            if base is None:
                continue  # ``object.__init__``
            if base.kind is not MemberKind.METHOD or not isinstance(base.node, ast.FunctionDef):
                return False
            if not _constructor_literals(index, cls, base, found, depth + 1):
                return False
            continue
        parents: dict[ast.AST, ast.AST] = {}
        for sub in link_parents(stmt, parents):
            if not (isinstance(sub, ast.Name) and sub.id == me):
                continue
            parent = parents.get(sub)
            if not isinstance(parent, ast.Attribute) or parent.attr == "__dict__":
                return False  # ``f(self)``, ``self.__dict__``: code that may set any field
            user = parents.get(parent)
            if isinstance(user, ast.Call) and user.func is parent:
                return False  # ``self.setup()``
            if not isinstance(parent.ctx, ast.Load):
                found.pop(parent.attr, None)
        target = (
            stmt.targets[0]
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            else stmt.target
            if isinstance(stmt, ast.AnnAssign)
            else None
        )
        literal = literal_value(stmt.value) if target is not None and stmt.value else ()
        if (
            literal
            and isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id == me
        ):
            found[target.attr] = literal[0]
    return True


def _super_init(stmt: ast.stmt) -> bool:
    """Whether ``stmt`` is ``super().__init__(...)``."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    return (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "__init__"
        and isinstance(call.func.value, ast.Call)
        and isinstance(call.func.value.func, ast.Name)
        and call.func.value.func.id == "super"
        and not call.func.value.args
    )


def _stored_once(index: ClassIndex, cls: ClassInfo, field: str) -> bool:
    """No class of ``cls``'s MRO stores (or deletes) an attribute ``field`` but once (the
    plain store of ``__init__``), nor sets attributes by ``setattr`` of a name it does not
    write out, or through ``__dict__``: the field keeps what ``__init__`` put there."""
    stores = 0
    for klass in index.mro(cls)[0]:
        written = index.stores(klass)
        if written.dict_read or (field != "__dict__" and written.fields.get("__dict__")):
            return False
        if written.setattr_unnamed or field in written.setattr_names:
            return False
        stores += written.fields.get(field, 0)
    return stores == 1


def _tree_object(index: ClassIndex, value: object) -> tuple[object] | tuple[()]:
    """A constructor argument as the walk may know it: a literal as it is; an object built
    by calling a class of the tree (``Obj.cls``) as an object of that class, true where its
    truth is Python's default (``_default_truth``), with no fields (what its constructor
    keeps of its arguments is its own); anything else unknown."""
    if not isinstance(value, Obj):
        return (value,)
    cls = _callee_class(index, value.cls) if value.cls is not None else None
    if cls is None:
        return ()
    truth = True if _default_truth(index, cls) else None
    return (Obj(truthy=truth, kind=cls.name, cls=cls.qualname),)


def _default_truth(index: ClassIndex, cls: ClassInfo) -> bool:
    """Whether every instance of ``cls`` is true: every class of its MRO is in the tree
    (``ClassIndex.mro`` names no other base), none defines ``__bool__`` or ``__len__``, and
    none is decorated but as a dataclass (which defines neither)."""
    chain, external = index.mro(cls)
    if external:
        return False
    for klass in chain:
        if any(
            not ast.unparse(d).split("(")[0].endswith("dataclass")
            for d in klass.node.decorator_list
        ):
            return False
        for stmt in klass.node.body:
            names: list[str] = []
            if isinstance(stmt, (*FUNCTION_DEFS, ast.ClassDef)):
                names = [stmt.name]
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                names = [n.id for t in targets for n in walk(t) if isinstance(n, ast.Name)]
            if {"__bool__", "__len__"} & set(names):
                return False
    return True


def _with_returned(
    handed: tuple[HandedCall, ...], standins: Iterable[StandIn]
) -> tuple[HandedCall, ...]:
    """Each call with the namespaces its test's patches return before it
    (``MeetingHow.RETURNED``: ``monkeypatch.setattr(mod, "f", lambda *_: layers)`` in the
    same test, on an earlier line, or in a helper every test that makes the call runs first:
    ``_patched_first``): the code it runs meets them where it calls ``f``, as items of what
    ``f`` returns or (``ITSELF``) as what it returns."""
    returned = [
        (standin, meeting)
        for root in standins
        for standin in root.walk()
        if standin.kind in NAMESPACE_KINDS
        for meeting in standin.meetings
        if meeting.how is MeetingHow.RETURNED
        and meeting.callee is not None
        and meeting.replaced is None
    ]
    if not returned:
        return handed
    out = []
    for call in handed:
        items: dict[tuple[str, bool], tuple[tuple[StandIn, ...], int]] = {}
        installed: dict[str, tuple[StandIn, ...]] = {}
        sets: dict[tuple[str, str], tuple[StandIn, ...]] = {}
        for standin, meeting in returned:
            if meeting.location.path != call.location.path:
                continue
            in_test = not (
                meeting.location.line >= call.location.line
                or call.test is None
                or _other_tests(meeting.test, call.test)
                or meeting.test is None
            )
            tree, lines = call.module.tree, (meeting.location.line, call.location.line)
            if meeting.test is None and call.test is None and _in_force(tree, *lines):
                in_test = True  # one helper patches and then makes the call
            if meeting.count in (ITSELF, SOMETIMES):
                if in_test and not _in_force(tree, *lines):
                    continue
                if not in_test and not (meeting.test is None and _patched_first(tree, *lines)):
                    continue
            elif not in_test:
                continue
            dotted = meeting.callee.dotted  # type: ignore[union-attr]
            given, given_count = standin, meeting.count
            if given_count in (ITSELF, SOMETIMES):
                # What returns may be an object the test set the namespace on
                # (``stub.experts = ns``; ``lambda *_: stub``): it holds it at ``via``.
                given = held_as(standin, meeting.via)
                if given_count == SOMETIMES:  # returned on some calls only: a note
                    given, given_count = _possibly(given), ITSELF
            if meeting.field is not None:  # a replaced method sets it on its object
                at = (dotted, meeting.field)
                if given not in sets.get(at, ()):
                    sets[at] = (*sets.get(at, ()), given)
                continue
            if meeting.installed:  # a module's global set to it: read by its name
                if given not in installed.get(dotted, ()):
                    installed[dotted] = (*installed.get(dotted, ()), given)
                continue
            key = (dotted, given_count == ITSELF)
            known, count = items.get(key, ((), given_count))  # type: ignore[arg-type]
            if given not in known:
                items[key] = ((*known, given), min(count, given_count))  # type: ignore[index]
        if items:
            given = tuple((dotted, found, count) for (dotted, _), (found, count) in items.items())
            call = attrs.evolve(call, returned=given)
        if installed:
            call = attrs.evolve(call, installed=tuple(installed.items()))
        if sets:
            merged = tuple((dotted, field, found) for (dotted, field), found in sets.items())
            call = attrs.evolve(call, replaced_sets=merged)
        out.append(call)
    return tuple(out)


def _hand_returned(calls: _CallIndex, meeting: Meeting, bare: dict[tuple, HandedCall]) -> None:
    """A call the function that patched in a namespace (a replaced function returning it, a
    module global set to it, a field a replaced method sets) makes after the patch
    (``Meeting.replaced``): one to judge even where the test hands it nothing, since the
    code it runs may meet the namespace (``method.load()``).  Filed in ``bare``, by the key
    ``_hand`` files calls under: where that files no call there, the call is judged only
    where ``_with_returned`` pairs it with the namespace (the patch holds there)."""
    callee = meeting.callee
    if meeting.replaced is None or callee is None or callee.dotted is None:
        return
    key = (meeting.location, callee.text, callee.dotted, meeting.test)
    if key in bare:
        return
    call = calls.call_at(meeting.location.line, callee.text)
    if call is None:
        return
    shape = calls.with_stated(meeting.shape or CallShape.of(call), call)
    bare[key] = _handed_call(meeting, callee, shape, call, calls)


def _handed_call(
    meeting: Meeting, callee: Callee, shape: CallShape, call: ast.Call, calls: _CallIndex
) -> HandedCall:
    """The call a meeting makes, with nothing handed yet (``HandedCall.passed``): what the
    test states around it (patches, ``pytest.raises``, asserts on its result) and what it
    knows of the object the callee runs on."""
    return HandedCall(
        meeting.location,
        callee.dotted,
        (),
        shape,
        calls.module,
        meeting.test,
        meeting.expect_raise,
        raise_owned=meeting.raise_owned,
        raise_tested=meeting.raise_tested,
        patched=meeting.patched,
        unheard=meeting.unheard,
        returns=calls.asserted(call),
        result_fields=calls.result_fields(call),
        case_returns=calls.case_asserted(call, meeting.cases),
        instance=callee.instance,
        instance_fields=callee.instance_fields,
        instance_values=callee.instance_values,
        built_values=callee.built_values,
        fresh=callee.fresh,
        overrides=callee.overrides,
        arms=meeting.arms,
        unnamed_patch=meeting.unnamed_patch,
        unsettled=callee.unsettled,
        text=callee.text,
    )


def _possibly(standin: StandIn) -> StandIn:
    """``standin`` and every namespace in it as objects the code may not meet
    (``StandIn.possible``): what they lack is a note."""
    fields = tuple(
        attrs.evolve(f, children=tuple(_possibly(c) for c in f.children)) for f in standin.fields
    )
    return attrs.evolve(standin, possible=True, fields=fields)


def _patched_first(tree: ast.Module, patch_line: int, call_line: int) -> bool:
    """Whether a ``monkeypatch.setattr`` on ``patch_line``, a statement of the body of a
    helper (a module function no test is, undecorated), holds wherever the call on
    ``call_line`` runs: the call lies in a test that runs the helper in an earlier
    statement of its body, or in a second helper that only such tests call (each call of it
    by name in a test's body, after a statement running the first).  A monkeypatch holds
    until the test ends, so the helper's patch is in force for the rest of the test."""
    helper = _top_function(tree, patch_line)
    maker = _top_function(tree, call_line)
    if helper is None or maker is None or helper is maker or helper.decorator_list:
        return False
    if helper.name.startswith("test") or not any(
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Call)
        and getattr(stmt.value.func, "attr", None) == "setattr"
        and stmt.lineno <= patch_line <= (stmt.end_lineno or stmt.lineno)
        for stmt in helper.body
    ):
        return False
    if maker.name.startswith("test"):
        return _runs_before(maker, helper.name, call_line)
    calls = _lines_calling(tree, maker.name)
    for line in calls:
        test = _top_function(tree, line)
        if test is None or not test.name.startswith("test"):
            return False
        if not _runs_before(test, helper.name, line):
            return False
    return bool(calls)


@functools.lru_cache(maxsize=16)
def _lines_calling(tree: ast.Module, name: str) -> tuple[int, ...]:
    """The line of each call of ``name`` by name in ``tree``, walked once per module and
    name (``_patched_first`` asks it for each pair of a patch and a call it judges)."""
    return tuple(
        node.lineno
        for node in walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name
    )


def _in_force(tree: ast.Module, patch_line: int, call_line: int) -> bool:
    """Whether the patch on ``patch_line`` holds at ``call_line`` of the same function:
    a ``monkeypatch.setattr`` statement of the function's body (or of a ``with`` block around
    both) on an earlier line holds to the end of the test; a patch that a ``with`` statement
    enters holds in that statement's body only.  A patch in a branch or a loop may not run."""
    func = None
    for stmt in _statements_at(tree, patch_line):
        if isinstance(stmt, FUNCTION_DEFS):
            func = stmt  # the innermost function holding the patch
    if func is None or not func.lineno <= call_line <= (func.end_lineno or 0):
        return False
    body: list[ast.stmt] = func.body
    while True:
        stmt = next((s for s in body if s.lineno <= patch_line <= (s.end_lineno or s.lineno)), None)
        if isinstance(stmt, ast.Expr):
            return (
                isinstance(stmt.value, ast.Call)
                and getattr(stmt.value.func, "attr", None) == "setattr"
                and call_line > (stmt.end_lineno or stmt.lineno)
            )
        if not isinstance(stmt, (ast.With, ast.AsyncWith)):
            return False
        if any(
            item.context_expr.lineno <= patch_line <= (item.context_expr.end_lineno or 0)
            for item in stmt.items
        ):
            return stmt.body[0].lineno <= call_line <= (stmt.end_lineno or 0)
        if not stmt.body[0].lineno <= call_line <= (stmt.end_lineno or 0):
            return False
        body = stmt.body


def _statements_at(tree: ast.Module, line: int) -> Iterator[ast.stmt]:
    """The statements whose text holds ``line``, outermost first (each inside the one
    before): what a question about "the statement (or function) at this line" needs, without
    walking the rest of the module, which such questions asked per meeting used to do."""
    body: list[ast.stmt] = tree.body
    while body:
        stmt = next((s for s in body if s.lineno <= line <= (s.end_lineno or s.lineno)), None)
        if stmt is None:
            return
        yield stmt
        body = [
            inner
            for name in ("body", "orelse", "finalbody", "handlers", "cases")
            for part in _statement_parts(getattr(stmt, name, None) or [])
            for inner in part
        ]


def _statement_parts(items: list) -> Iterator[list[ast.stmt]]:
    """The statement lists of a statement's block field: the block itself, or the bodies of
    its ``except`` handlers and ``match`` cases."""
    for item in items:
        if isinstance(item, ast.stmt):
            yield [item]
        else:
            yield item.body


def _test_function(module: ModuleInfo, location: Location) -> str | None:
    """The test function of ``module`` whose text holds ``location``, as a stub event names
    the test (``test_x``, ``Class::test_x``); None outside one (a fixture, a helper, another
    module: built for whichever test calls it)."""
    if location.path != str(module.path):
        return None
    line = location.line
    for stmt in module.tree.body:
        if not stmt.lineno <= line <= (stmt.end_lineno or 0):
            continue
        if isinstance(stmt, FUNCTION_DEFS) and stmt.name.startswith("test"):
            return stmt.name
        if isinstance(stmt, ast.ClassDef):
            for item in stmt.body:
                if (
                    isinstance(item, FUNCTION_DEFS)
                    and item.name.startswith("test")
                    and item.lineno <= line <= (item.end_lineno or 0)
                ):
                    return f"{stmt.name}::{item.name}"
    return None


def _top_function(tree: ast.Module, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The module-level function whose text holds ``line``."""
    for stmt in tree.body:
        if isinstance(stmt, FUNCTION_DEFS) and stmt.lineno <= line <= (stmt.end_lineno or 0):
            return stmt
    return None


def _runs_before(test: ast.FunctionDef | ast.AsyncFunctionDef, helper: str, line: int) -> bool:
    """Whether ``test`` calls ``helper`` (as a statement of its own body) in a statement
    before the one holding ``line``."""
    for stmt in test.body:
        if stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno):
            return False
        if (
            isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Name)
            and stmt.value.func.id == helper
        ):
            return True
    return False


def _specs(
    index: ClassIndex | None, module: ModuleInfo, standins: Iterable[StandIn]
) -> dict[Location, MockSpec]:
    """What each spec'd mock of a test module lacks (``mock_specs.mock_spec``), for those
    whose spec the tree settles."""
    out: dict[Location, MockSpec] = {}
    if index is None:
        return out
    for root in standins:
        for standin in root.walk():
            if standin.kind is StandInKind.SPEC_MOCK and standin.location not in out:
                spec = mock_spec(index, module, standin)
                if spec is not None:
                    out[standin.location] = spec
    return out


def _judgeable(standin: StandIn, specs: Mapping[Location, MockSpec]) -> bool:
    """A namespace, or a spec'd mock whose spec the audit settles."""
    return standin.kind in NAMESPACE_KINDS or standin.location in specs


def _on_stub_field(meeting: Meeting) -> bool:
    """``stub.field = ns``: the stub's calls read the namespace through ``self.field``."""
    return (
        meeting.how is MeetingHow.ATTRIBUTE
        and meeting.owner_kind is StandInKind.OBJECT_NEW
        and meeting.field is not None
    )


def _to_stub_method(meeting: Meeting) -> bool:
    """``stub.method(ns)``, ``Cls.method(stub, ns)`` (or a namespace first): the call binds
    the namespace to one of the method's parameters, on the call of what ``self`` is."""
    return (
        meeting.how is MeetingHow.ARGUMENT
        and meeting.callee is not None
        and meeting.callee.method is not None
    )


def _replayed_self(meeting: Meeting) -> bool:
    """``Cls.method(ns, ...)`` and the other spellings of ``self`` (``f(self=ns)``,
    ``types.MethodType``, ``__get__``, ``fget``): the namespace is replayed as a stub of
    ``Cls`` (where the call's arguments are stated: ``_self_call``)."""
    if meeting.how is not MeetingHow.SELF or meeting.via:
        return False
    return meeting.self_shape is not SelfShape.UNBOUND_CALL or not meeting.position


def _handed(meeting: Meeting) -> bool:
    """``f(ns)``, ``mod.f(ns)``, ``Cls.static(ns)``, ``Cls.method(obj, ns)``: an argument of
    code the test's imports name, judged where that names a function or method of the tree
    (``HandedCall``)."""
    return (
        meeting.how is MeetingHow.ARGUMENT
        and meeting.callee is not None
        and meeting.callee.dotted is not None
        and meeting.callee.method is None
    )


def _holds_self(meeting: Meeting) -> bool:
    """``x.cfg = ns; x.m()``, ``x`` built by calling its class: ``ns`` is read through
    ``self.cfg`` of ``m``, walked on the real object (``HandedCall.self_holders``)."""
    return (
        meeting.how is MeetingHow.SELF
        and meeting.callee is not None
        and meeting.callee.instance
        and bool(meeting.via)
    )


def audited(meeting: Meeting) -> bool:
    """Whether the audit follows a namespace into vLLM code at ``meeting``: set on a stub's
    field, passed to a stub's method or to code the test imports, or made ``self``.  A
    namespace nested in one of those is followed through its owner's field."""
    return (
        _on_stub_field(meeting)
        or _to_stub_method(meeting)
        or _replayed_self(meeting)
        or _handed(meeting)
        or _holds_self(meeting)
    )


def _file(
    meeting: Meeting,
    standin: StandIn,
    sets: dict[tuple[Location, str], StandIn],
    passed: dict[tuple[Location, str], list[PassedStandIn]],
    stored: dict[tuple[Location, str], StandIn] | None = None,
) -> None:
    if _on_stub_field(meeting) and meeting.keyed:
        if stored is not None:
            key = (meeting.location, meeting.field)
            stored[key] = keyed_holder(stored.get(key), standin, meeting)  # type: ignore
    elif _on_stub_field(meeting) and meeting.item and meeting.slot is not None:
        # ``stub.pair = (ns, blocks)``: the field holds a tuple, whose items code reaches by
        # position (``slot_link``): a holder of each stand-in at its position
        key = (meeting.location, meeting.field)
        held = sets.get(key)  # type: ignore[arg-type]
        slot = StandInField(slot_link(meeting.slot), meeting.location, children=(standin,))
        fields = held.fields if held is not None else ()
        sets[key] = StandIn(StandInKind.HOLDER, meeting.location, fields=(*fields, slot))  # type: ignore
    elif _on_stub_field(meeting) and meeting.item:
        # ``stub.caches = [c0, c1]``: the field holds a list of them, which the audit sees
        # as a holder whose element (``ELEMENT``) is each of them
        key = (meeting.location, meeting.field)
        held = sets.get(key)  # type: ignore[arg-type]
        items = held.fields[0].children if held is not None else ()
        sets[key] = _element_holder((*items, standin), meeting.location)  # type: ignore
    elif _on_stub_field(meeting):
        sets[(meeting.location, meeting.field)] = standin  # type: ignore[index]
    elif _to_stub_method(meeting):
        position = meeting.position
        if position is not None and meeting.callee.self_arg:  # type: ignore[union-attr]
            position -= 1  # ``Cls.method(stub, ns)``: the stub's call binds past ``self``
        _add(
            passed.setdefault((meeting.location, meeting.callee.method), []),  # type: ignore
            PassedStandIn(held_as(standin, meeting.via), position, meeting.keyword),
        )


def _candidates(meeting: Meeting) -> Iterator[Meeting]:
    """The meeting, and where its callee lies in one of several modules the test may load
    (``Callee.alternatives``: a module picked by platform), the same meeting with each
    other candidate's callee: the test runs one of them, so each is judged (as notes:
    ``Callee.unsettled``)."""
    yield meeting
    callee = meeting.callee
    for dotted in callee.alternatives if callee is not None else ():
        yield attrs.evolve(meeting, callee=attrs.evolve(callee, dotted=dotted, alternatives=()))


def _hand(
    calls: _CallIndex, meeting: Meeting, standin: StandIn, handed: dict[tuple, HandedCall]
) -> None:
    """File an argument (or ``Cls.m(ns)``, which may be a static method's argument) of a
    call whose callee the test's imports name, grouped by call."""
    callee = meeting.callee
    if callee is None or callee.dotted is None:
        return
    held_self = _holds_self(meeting)
    bound_mock = _bound_mock(meeting, standin)
    if meeting.how is MeetingHow.ARGUMENT:
        if callee.method is not None and not callee.self_arg:
            return  # ``stub.method(ns)``: the stub's call judges it
    elif (
        not held_self
        and not bound_mock
        and (meeting.self_shape is not SelfShape.UNBOUND_CALL or meeting.position != 0)
    ):
        return
    key = (meeting.location, callee.text, callee.dotted, meeting.test)
    if bound_mock:
        binding = calls.binding_at(meeting.location.line, callee.text)
        call = calls.called(binding) if binding is not None else None
    else:
        call = calls.call_at(meeting.location.line, callee.text)
    if call is None:
        return
    fresh = not meeting.via and _built_in_place(call, meeting, standin)
    if fresh:
        built = _fresh(standin, meeting)
        fresh, standin = built.meetings != standin.meetings, built
    given = PassedStandIn(
        held_as(standin, meeting.via), 0 if bound_mock else meeting.position, meeting.keyword
    )
    known = handed.get(key)
    if known is None:
        shape = calls.with_stated(
            CallShape.of(call) if bound_mock else meeting.shape or CallShape.of(call), call
        )
        known = _handed_call(
            meeting, callee, _with_self(shape) if bound_mock else shape, call, calls
        )
    elif known.case_returns and calls.case_asserted(call, meeting.cases) != known.case_returns:
        # Stand-ins built on other cases meet the call too: which of them a case's run
        # hands it is not known here, so no case's assertion decides the walk.
        known = attrs.evolve(known, case_returns=())
    if fresh and meeting.test is None:
        known = attrs.evolve(known, unsettled=True)
    if held_self:
        holders = known.self_holders
        merged = _merged(holders[0], given.standin) if holders else given.standin
        handed[key] = attrs.evolve(known, self_holders=(merged,))
        return
    # A holder made ``self`` is not replayed: the method is walked as a function of it; so is
    # a mock, whose methods are its own (``self.m()`` runs no code of the class).
    given_self = (
        meeting.how is MeetingHow.SELF
        and not meeting.via
        and standin.kind is not StandInKind.SPEC_MOCK
    ) or callee.self_arg
    passed = list(known.passed)
    _add(passed, given)
    handed[key] = attrs.evolve(
        known, passed=tuple(passed), given_self=known.given_self or given_self
    )


def _bound_mock(meeting: Meeting, standin: StandIn) -> bool:
    """A spec'd mock made ``self`` of a method bound to it (``m.f = Cls.f.__get__(m)``,
    ``types.MethodType(Cls.f, m)``): the call of the bound method runs ``Cls.f`` with the
    mock first, as ``Cls.f(m, ...)`` would, and is judged as that call (where it is found:
    ``_CallIndex.called``)."""
    return (
        standin.kind is StandInKind.SPEC_MOCK
        and meeting.how is MeetingHow.SELF
        and not meeting.via
        and meeting.self_shape in (SelfShape.METHOD_TYPE, SelfShape.DESCRIPTOR_GET)
    )


def _with_self(shape: CallShape) -> CallShape:
    """The shape of ``bound(...)`` as the unbound call ``Cls.f(obj, ...)``."""
    if shape.star_args:
        return attrs.evolve(shape, n_positional=shape.n_positional + 1)
    return attrs.evolve(
        shape,
        n_positional=shape.n_positional + 1,
        positional_literals=((), *shape.positional_literals),
    )


def _built_in_place(call: ast.Call, meeting: Meeting, standin: StandIn) -> bool:
    """Whether the call's argument the meeting is is itself a call that builds the namespace
    (``f(_make_runner())``, ``x(_layer())``): the object is new there, so no code met it
    before, whatever other calls of that helper handed their own objects to.  Where no test
    is around the call (a helper's), the patches in force are not all known
    (``HandedCall.unsettled``)."""
    if not standin.per_test:
        return False  # one object every call of its builder hands out
    if meeting.keyword is not None:
        arg = next((k.value for k in call.keywords if k.arg == meeting.keyword), None)
    elif meeting.position is not None and meeting.position < len(call.args):
        arg = call.args[meeting.position]
    else:
        return False
    return isinstance(arg, ast.Call)


def _fresh(standin: StandIn, meeting: Meeting) -> StandIn:
    """``standin`` as the object a call builds in place at ``meeting``: the meetings above it
    were other objects' (``_judged``)."""
    here = meeting.location
    kept = tuple(
        m
        for m in standin.meetings
        if not (m.location.path == here.path and m.location.line < here.line)
    )
    return attrs.evolve(standin, meetings=kept)


def _emptied(module: ModuleInfo) -> frozenset[tuple[Location, str]]:
    """``StubStandIns.emptied`` of a test module: each plain assignment of an empty dict
    display to attributes (``stub.reqs = {}``)."""
    out: set[tuple[Location, str]] = set()
    for node in walk(module.tree):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Dict)
            and not node.value.keys
        ):
            at = Location(str(module.path), node.lineno)
            out.update((at, t.attr) for t in node.targets if isinstance(t, ast.Attribute))
    return frozenset(out)


def keyed_holder(held: StandIn | None, standin: StandIn, meeting: Meeting) -> StandIn:
    """The container on a stub's field as the audit sees it once the test stored
    ``standin`` under a key of it (``stub.reqs["r"] = ns``, ``Meeting.keyed``): a holder
    whose element (``ELEMENT``) is what was stored, here or under another key stored
    before (``held``, a holder this gave).  Stored as an item of a tuple display
    (``(ns, blocks)``, ``Meeting.slot``), the element is a holder of that display's items by
    position (``slot_link``): code reaches ``ns`` as that item of an element, never as an
    item it does not name by position (which may be ``blocks``)."""
    location = meeting.location
    value = standin
    if meeting.slot is not None:
        tuple_held = held.fields[0].children if held is not None else ()
        same = [h for h in tuple_held if h.kind is StandInKind.HOLDER and h.location == location]
        slots = same[0].fields if same else ()
        field = StandInField(slot_link(meeting.slot), location, children=(standin,))
        value = StandIn(StandInKind.HOLDER, location, fields=(*slots, field))
    items = () if held is None else held.fields[0].children
    items = tuple(i for i in items if not (i.kind is StandInKind.HOLDER and i.location == location))
    return StandIn(
        StandInKind.HOLDER,
        location,
        fields=(StandInField(ELEMENT, location, children=(*items, value)),),
    )


def merged_holder(held: StandIn | None, item: StandIn) -> StandIn:
    """The container ``held`` (a ``keyed_holder``, or None: the empty display the test set)
    once the test stored ``item``'s element in it too: an element is either."""
    if held is None:
        return item
    before = held.fields[0].children
    added = tuple(c for c in item.fields[0].children if c not in before)
    return attrs.evolve(item, fields=(attrs.evolve(item.fields[0], children=(*before, *added)),))


def _element_holder(items: tuple[StandIn, ...], location: Location) -> StandIn:
    """A container the test sets as a stub's field (``stub.caches = [c0, c1]``), as the
    audit sees it: a holder whose element (``ELEMENT``) is one of ``items``, not an object
    holding their fields."""
    field = StandInField(ELEMENT, location, children=items)
    return StandIn(StandInKind.HOLDER, location, fields=(field,))


def held_as(standin: StandIn, via: tuple[str, ...]) -> StandIn:
    """The object a meeting ``via`` fields hands over: ``standin`` itself, or a holder of it
    at the end of those fields (``runner.cfg = ns; f(runner)``: a holder whose ``cfg`` is
    ``ns``)."""
    for name in reversed(via):
        field = StandInField(name, standin.location, children=(standin,))
        standin = StandIn(StandInKind.HOLDER, standin.location, fields=(field,))
    return standin


def _add(passed: list[PassedStandIn], given: PassedStandIn) -> None:
    """Add an argument of one call: a holder of the same argument as one already there is
    that same object, holding one more stand-in (not an alternative the test may pass).  Not
    where the two hold, at one field, two variants of one creation (a helper's namespace
    built with other values on each run, ``Variant``): one run builds only one of them, so
    the holder is another run's, an alternative the test may pass, holding what the other
    holds besides."""
    holders = [
        i
        for i, known in enumerate(passed)
        if (known.position, known.keyword) == (given.position, given.keyword)
        and known.standin.kind is StandInKind.HOLDER
        and given.standin.kind is StandInKind.HOLDER
    ]
    merged = False
    for i in holders:
        known = passed[i]
        if not _variants_held(known.standin, given.standin):
            passed[i] = attrs.evolve(known, standin=_merged(known.standin, given.standin))
            merged = True
    if merged:
        return
    if holders:
        given = attrs.evolve(given, standin=_merged(given.standin, passed[holders[0]].standin))
    if given not in passed:
        passed.append(given)


def _variants_held(a: StandIn, b: StandIn) -> bool:
    """Whether two holders hold, at one field path, two variants of one creation: two
    stand-ins built at one place that differ (what one run builds there is one of them)."""
    theirs = {f.name: f for f in b.fields}
    for field in a.fields:
        other = theirs.get(field.name)
        if other is None or len(field.children) != 1 or len(other.children) != 1:
            continue
        mine, yours = field.children[0], other.children[0]
        if mine.kind is StandInKind.HOLDER and yours.kind is StandInKind.HOLDER:
            if _variants_held(mine, yours):
                return True
        elif _variants(mine, yours):
            return True
    return False


def _variants(a: StandIn, b: StandIn) -> bool:
    """Whether two stand-ins are variants of one creation (built at one place, not equal)."""
    return a != b and (a.location, a.column, a.kind) == (b.location, b.column, b.kind)


def _merged(a: StandIn, b: StandIn) -> StandIn:
    """Two holders of one object as one: the fields of both, a field both hold merged."""
    fields = {f.name: f for f in a.fields}
    for field in b.fields:
        known = fields.get(field.name)
        if (
            known is not None
            and len(known.children) == 1
            and len(field.children) == 1
            and known.children[0].kind is StandInKind.HOLDER
            and field.children[0].kind is StandInKind.HOLDER
        ):
            child = _merged(known.children[0], field.children[0])
            fields[field.name] = attrs.evolve(known, children=(child,))
        elif known is None:
            fields[field.name] = field
        elif any(_variants(c, d) for c in known.children for d in field.children):
            continue  # ``a``'s own variant of the creation (``_add``)
        elif field.children[0] not in known.children:
            fields[field.name] = attrs.evolve(known, children=(*known.children, *field.children))
    return attrs.evolve(a, fields=tuple(fields.values()))


Judged = tuple[list[Finding], list["NamespaceUse"], list["Reach"]]


def handed_findings(index, analyzer, handed: HandedCall, table: StubStandIns) -> list[Finding]:
    """The links the namespaces of one ``HandedCall`` lack where its callee reads them
    (``handed_audit``'s findings)."""
    return handed_audit(index, analyzer, handed, table)[0]


def handed_audit(index, analyzer, handed: HandedCall, table: StubStandIns) -> Judged:
    """The links the namespaces of one ``HandedCall`` lack where its callee reads them: the
    callee walked as a function handed them (``ReadSetAnalyzer.analyze_function``), its
    parameters bound through its signature.  A callee that is not a function or a static,
    class or plain method of the tree is not judged; nor a plain method whose ``self`` the
    audit replays (judged there), nor a call whose stand-ins a ``*args`` takes.  Besides the
    findings, what the walk read of each namespace and whether it handed one on
    (``NamespaceUse``), and what it may have changed of each (``Reach``); none where the call
    is not judged.  Where the test patches a
    target it does not name (``HandedCall.unnamed_patch``), or a helper hands a namespace it
    builds in place whose callers' patches are not known (``HandedCall.unsettled``), the
    walk may follow code that does not run: its findings are notes, and it judges no field
    stale."""
    found, uses, reach = _handed_audit(index, analyzer, handed, table)
    if not (handed.unnamed_patch or handed.unsettled):
        return found, uses, reach
    return (
        [uncertain(f) for f in found],
        [attrs.evolve(u, eligible=False) for u in uses],
        [attrs.evolve(r, whole=False) for r in reach],
    )


def uncertain(finding: Finding) -> Finding:
    """A missing read as a note: a read on a path the test may not take."""
    if finding.kind not in (FindingKind.MISSING_FIELD, FindingKind.MISSING_ATTRIBUTE):
        return finding
    return attrs.evolve(
        finding,
        kind=FindingKind.POSSIBLY_MISSING_ATTRIBUTE,
        message=finding.message.replace(
            " but the ", " on a path the test may not take but the ", 1
        ),
    )


def _handed_audit(index, analyzer, handed: HandedCall, table: StubStandIns) -> Judged:
    if handed.instance:
        head, _, name = handed.dotted.rpartition(".")
        made = _returned_class(index, head) if name == "__call__" else None
        if made is not None:
            return _constructed(index, analyzer, handed, made, table)
        return _on_instance(index, analyzer, handed, table)
    built = _callee_class(index, handed.dotted)
    if built is not None:
        return _constructed(index, analyzer, handed, built, table)
    target = _callee_function(index, handed.dotted)
    if target is None:
        return [], [], []
    function, kind, owner = target
    if kind is MemberKind.METHOD and handed.given_self:
        return [], [], []
    bound = kind is MemberKind.CLASSMETHOD
    klass = _callee_class(index, handed.dotted.rpartition(".")[0]) if bound else None
    return _as_function(
        index, analyzer, handed, table, function, owner, stated_shape(handed, table), bound, klass
    )


def _as_function(
    index,
    analyzer,
    handed: HandedCall,
    table: StubStandIns,
    function: FunctionRef,
    owner: str,
    call: CallShape,
    bound: bool,
    klass: ClassInfo | None = None,
) -> Judged:
    """A callee walked as a function handed the call's namespaces (a module function, a
    static or class method: ``bound`` skips a class method's ``cls``, run on ``klass``), its
    parameters bound through its signature; none where no namespace reaches a parameter."""
    roots = {**bind_passed(function.node, handed.passed, bound=bound)}
    roots.update(returned_roots(index, handed))
    if not roots:
        return [], namespace_uses(None, roots, handed), []
    context = attrs.evolve(
        _handed_context(index, handed, roots),
        returns=handed.returns,
        result_fields=handed.result_fields,
        whole=whole_chains(roots, {}, table, handed.event),
        tuples=tuple_chains(roots, {}),
        typed=typed_chains(index, handed.module, roots, handed.event),
    )
    report = analyzer.analyze_function(
        function,
        context,
        call=call,
        bound=bound,
        provided_chains=held_chains(roots, {}, handed.test),
        klass=klass,
    )
    found = list(missing_fields(report, roots, {}, table, owner, handed.event))
    for cases, value in () if handed.returns else handed.case_returns:
        if not any(f.kind is FindingKind.POSSIBLY_MISSING_ATTRIBUTE for f in found):
            break  # only a note may become an error
        run = analyzer.analyze_function(
            function,
            attrs.evolve(context, returns=value),
            call=call,
            bound=bound,
            provided_chains=held_chains(roots, {}, handed.test),
            klass=klass,
        )
        found = _case_runs(found, missing_fields(run, roots, {}, table, owner, handed.event), cases)
    return (
        found,
        namespace_uses(report, roots, handed, plain=plain_function(function.node)),
        namespace_reach(report, roots, handed, plain=plain_function(function.node)),
    )


def returned_roots(index, handed: HandedCall) -> dict[str, tuple[StandIn, ...]]:
    """The chain roots of the namespaces a replaced function returns, in a container or
    itself (``HandedCall.returned``): ``f()`` for an item of what ``f`` returns, or for what
    it returns, with the namespaces it may be (``missing_fields``'s alternatives)."""
    out: dict[str, tuple[StandIn, ...]] = {}
    for dotted, found, _ in handed.returned:
        if _returned_key(index, handed.module, dotted) is not None:
            root = f"{dotted.rpartition('.')[2]}()"
            out[root] = (*out.get(root, ()), *(s for s in found if s not in out.get(root, ())))
    for dotted, found in handed.installed:
        if _global_key(index, dotted) is not None:
            out[installed_root(dotted.rpartition(".")[2])] = found
    for dotted, field, found in handed.replaced_sets:
        if _method_key(index, handed.module, dotted) is not None:
            out[replaced_set_root(dotted.rpartition(".")[2], field)] = found
    return out


def _method_key(index, module: ModuleInfo, dotted: str) -> tuple[str, str] | None:
    """``(class qualname, method)`` of a replaced method as ``CallContext.replaced`` holds
    it, where the test module's names settle the class."""
    methods, _, _ = _patches(index, module, [(dotted, False)])
    return next(iter(methods), None)


def _global_key(index, dotted: str) -> tuple[str, str] | None:
    """``(module, name)`` of ``mod.name`` where ``mod`` (dotted as the test's imports spell
    it out) is a module of the tree (``CallContext.installed``)."""
    owner, _, name = dotted.rpartition(".")
    try:
        found = index.tree.module(owner) if owner else None
    except SourceError:
        return None
    return (found.name, name) if found is not None else None


def _returned_key(index, module: ModuleInfo, dotted: str) -> str | None:
    """The key of a replaced function as ``CallContext.patched_functions`` holds it."""
    _, functions, _ = _patches(index, module, [(dotted, False)])
    return next(iter(functions), None)


def _handed_context(index, handed: HandedCall, roots: Mapping[str, object]) -> CallContext:
    """What one ``HandedCall`` states around its callee's walk: the test's patches (resolved
    through its module's names), ``pytest.raises``, and the parameters handed stand-ins, whose
    chains are recorded; a replaced function returning namespaces in a container
    (``CallContext.returned``)."""
    methods, functions, raising = _patches(index, handed.module, handed.patched)
    returned = frozenset(
        (key, f"{dotted.rpartition('.')[2]}()", count)
        for dotted, _, count in handed.returned
        if (key := _returned_key(index, handed.module, dotted)) is not None
    )
    installed = frozenset(
        glob for dotted, _ in handed.installed if (glob := _global_key(index, dotted)) is not None
    )
    replaced_sets = frozenset(
        (*method, field, replaced_set_root(method[1], field))
        for dotted, field, _ in handed.replaced_sets
        if (method := _method_key(index, handed.module, dotted)) is not None
    )
    unheard = frozenset(
        (key, heard)
        for dotted, heard in handed.unheard
        if (key := _returned_key(index, handed.module, dotted)) is not None
    )
    return CallContext(
        replaced=methods,
        patched_functions=functions,
        raising=raising,
        expect_raise=handed.expect_raise,
        patches_raise=handed.expect_raise and handed.raise_owned,
        test_exception=handed.expect_raise and handed.raise_tested,
        standins=frozenset(roots),
        chains=True,
        stated_locals=True,
        returned=returned,
        installed=installed,
        replaced_sets=replaced_sets,
        unheard=unheard,
    )


def stated_shape(handed: HandedCall, table: StubStandIns | None = None) -> CallShape:
    """The call's shape with each namespace it hands over as the object the test built
    (``stated_obj``), where the call's text does not already state the argument (a name
    bound to a test helper's result, ``warmup(_make_runner(...))``): its fields decide the
    branches of the callee as a namespace written in the call does.  Only an argument the
    test hands one namespace; of one it hands one of several (a parametrized test, the
    variants of a helper's namespace), what they all state (``_common``)."""
    shape = handed.shape
    if shape.star_args:
        return shape
    by_place = _by_place(handed.passed)
    return _with_places(
        shape,
        {
            place: _common([stated_obj(standin, handed.event, table) for standin in standins])
            for place, standins in by_place.items()
        },
    )


def _by_place(
    passed: Iterable[PassedStandIn],
) -> dict[tuple[int | None, str | None], list[StandIn]]:
    """The namespaces handed over, by the place (position, keyword) each takes."""
    out: dict[tuple[int | None, str | None], list[StandIn]] = {}
    for given in passed:
        out.setdefault((given.position, given.keyword), []).append(given.standin)
    return out


def _with_places(
    shape: CallShape, values: Mapping[tuple[int | None, str | None], Obj | None]
) -> CallShape:
    """``shape`` with each place's stated object (``None``: nothing stated there) joined to
    what the call's text states of that argument (``_with_stated``)."""
    positional = list(shape.positional_literals)
    keywords = dict(shape.keyword_literals)
    for (position, keyword), value in values.items():
        if value is None:
            continue
        if position is not None and position < len(positional):
            positional[position] = _with_stated(positional[position], value)
        elif keyword is not None and keyword in shape.keywords:
            known = (keywords[keyword],) if keyword in keywords else ()
            keywords[keyword] = _with_stated(known, value)[0]
    return attrs.evolve(
        shape, positional_literals=tuple(positional), keyword_literals=tuple(keywords.items())
    )


_CERTAIN = (FindingKind.MISSING_ATTRIBUTE, FindingKind.MISSING_FIELD)


def on_some_run(found: list[Finding], run: Iterable[Finding]) -> list[Finding]:
    """``found`` (what a call's walk under the values every run of the test shares finds),
    each note that one run's walk (``run_shapes``) finds as an error made that error: the
    same name the same object lacks, read on that run's path, fails that run.  The error
    keeps the run's place: a walk names one read per name, its first certain one, else its
    first (``first_by_name``), so the shared walk's note may sit at an earlier read the run
    skips (``if params.get("a"): ... self.x`` before ``elif self.x:``)."""
    errors = {(f.name, f.stub_location): f for f in run if f.kind in _CERTAIN}
    return [
        errors.get((f.name, f.stub_location), f)
        if f.kind is FindingKind.POSSIBLY_MISSING_ATTRIBUTE
        else f
        for f in found
    ]


def _case_runs(
    found: list[Finding], run: Iterable[Finding], cases: tuple[str, ...]
) -> list[Finding]:
    """``found``, each note that the walk under what some parametrize cases assert the call
    returns (``HandedCall.case_returns``) finds as an error made that error, in those cases
    (``Finding.tests``): the read is on the path of each of their runs, and fails it
    (``on_some_run``, for runs told apart by their asserted result instead of their
    namespaces)."""
    errors = {(f.name, f.stub_location): f for f in run if f.kind in _CERTAIN}
    out = []
    for f in found:
        error = errors.get((f.name, f.stub_location))
        if f.kind is not FindingKind.POSSIBLY_MISSING_ATTRIBUTE or error is None:
            out.append(f)
            continue
        base = {t.partition("[")[0] for t in error.tests}
        tests = tuple(f"{b}[{case}]" for b in sorted(base) for case in cases)
        out.append(attrs.evolve(error, tests=tests or error.tests))
    return out


#: How many runs of one call ``run_shapes`` walks, at most.
MAX_RUNS = 8


def run_shapes(
    shape: CallShape | None, passed: Sequence[PassedStandIn], event: StubEvent
) -> list[CallShape]:
    """The call's shape once per run of a test that hands an argument a namespace it builds
    from values it states per run (the variants of one creation: a parametrized value,
    ``fp8_use_mixed_batch=use_mixed_batch``), each namespace stated as that run builds it
    (``stated_obj``): a read the walk under what the call's text states leaves undecided may
    be on one run's path.  One place (a position or keyword) may take several namespaces (one
    run each); none where more than one does (their runs need not pair up), where one takes
    more than ``MAX_RUNS``, or where no run states more than the shape already does."""
    if shape is None or shape.star_args:
        return []
    by_place = _by_place(passed)
    varied = [place for place, found in by_place.items() if len(found) > 1]
    if len(varied) > 1 or any(len(found) > MAX_RUNS for found in by_place.values()):
        return []
    runs = by_place[varied[0]] if varied else [None]
    out = []
    for run in runs:
        stated = _with_places(
            shape,
            {
                place: stated_obj(run if len(found) > 1 else found[0], event)
                for place, found in by_place.items()
            },
        )
        if (
            stated.positional_literals == shape.positional_literals
            and stated.keyword_literals == shape.keyword_literals
        ):
            continue
        out.append(stated)
    return out


def _common(values: list[Obj | None]) -> Obj | None:
    """What several objects the test may pass all state: the fields each states with one
    value (a namespace field, what those namespaces all state), which every run holds; None
    where one of them is not known."""
    if not values or any(not isinstance(v, Obj) for v in values):
        return None
    objs: list[Obj] = values  # type: ignore[assignment]
    first = objs[0]
    if len(objs) == 1:
        return first
    fields: list[tuple[str, object]] = []
    for name, value in first.fields:
        found = [obj.field(name) for obj in objs[1:]]
        if not all(found):
            continue
        others = [f[0] for f in found]  # type: ignore[index]
        if isinstance(value, Obj):
            common = _common([value, *others])
            if common is not None:
                fields.append((name, common))
        elif all(type(o) is type(value) and o == value for o in others):
            fields.append((name, value))
    same = all((o.truthy, o.kind) == (first.truthy, first.kind) for o in objs)
    return Obj(
        tuple(fields),
        truthy=first.truthy if same else None,
        kind=first.kind if same else None,
    )


def field_at(standin: StandIn, name: str, event: StubEvent) -> tuple[StandInField | None, bool]:
    """The field ``name`` of ``standin`` that ``event``'s call finds, and whether one set
    settles it: ``(None, True)`` where no set the call may find gives it; the last of those
    its own test sets in its body before the call, on the object a helper built and
    returned to it (``config = make(); config.spec = SimpleNamespace()``: the helper's own
    ``spec`` came first); else the one set the call may find (none of another test's own),
    or the only one above the call in its file (set again only further down, after it).
    Not settled where several other sets may give it (one of several callers', a set again
    by a helper)."""
    fields = [f for f in standin.fields if f.name == name and f.visible_to(event.test)]
    if len(fields) <= 1:
        return (fields[0] if fields else None), True
    earlier = [f for f in fields if not _later(f, event)]
    own = [f for f in earlier if f.test is not None]
    if own:
        return max(own, key=lambda f: f.location.line), True
    if len(earlier) == 1:
        return earlier[0], True
    return None, False


def _later(field: StandInField, event: StubEvent) -> bool:
    """Whether the test may set ``field`` only after the call: further down its file."""
    return field.location.path == event.location.path and field.location.line > event.location.line


def _with_stated(known: tuple[object] | tuple[()], stated: Obj) -> tuple[object]:
    """What the call's text states of an argument (``known``), with the fields the stand-in
    it is states besides: a mock the test built in the call (``MagicMock()``) holds the
    namespaces set on it later too."""
    if not known:
        return (stated,)
    if not isinstance(known[0], Obj):
        return known  # type: ignore[return-value]
    return (_merged_obj(known[0], stated),)


def _merged_obj(known: Obj, stated: Obj) -> Obj:
    """``known`` with the fields of ``stated`` it lacks, at every depth: a namespace written
    in the call holds what the stand-in it is states of its nested namespaces too
    (``tokens=n - 1``, never ``None``, which the call's text leaves unknown)."""
    have = dict(known.fields)
    fields = []
    for name, value in known.fields:
        other = stated.field(name)
        if isinstance(value, Obj) and other and isinstance(other[0], Obj):
            value = _merged_obj(value, other[0])
        fields.append((name, value))
    extra = tuple((name, v) for name, v in stated.fields if name not in have)
    return attrs.evolve(known, fields=(*fields, *extra))


def stated_obj(
    standin: StandIn,
    event: StubEvent,
    table: StubStandIns | None = None,
    above: tuple[Meeting, ...] = (),
) -> Obj | None:
    """A namespace as the object the test built (``values.Obj``), with the fields whose value
    it states and never changes: set once (a field set again, or deleted, may hold either
    value at the call), to a literal or to a namespace stated the same way.  None where the
    namespace's fields are not all it holds at the call (``_judged``: other code met it
    first and may have changed them).  A holder (an object built some other way that the
    test hands on with namespaces set on it) is known only by those namespaces."""
    if standin.kind is StandInKind.SPEC_MOCK:
        return None  # a mock answers more than its fields: none decides a branch
    if standin.kind is StandInKind.HOLDER:
        inner = (*above, *_meetings_before(standin, event))
        held = [
            (f.name, stated_obj(f.children[0], event, table, inner))
            for f in standin.fields
            if len(f.children) == 1 and f.name not in standin.dropped and not _later(f, event)
        ]
        return Obj(tuple((name, obj) for name, obj in held if obj is not None))
    if not _judged(standin, event, table, above):
        return None
    above = (*above, *_meetings_before(standin, event))
    known: list[tuple[str, object]] = []
    for name in dict.fromkeys(f.name for f in standin.fields):
        field, settled = field_at(standin, name, event)
        if not settled or field is None or name in standin.dropped or _later(field, event):
            continue
        if field.has_value:
            known.append((field.name, field.value))
        elif (
            len(field.children) == 1
            and not field.items  # a container of it: not the namespace's own value
            and field.children[0].kind in NAMESPACE_KINDS
            and not field.children[0].possible
        ):
            child = stated_obj(field.children[0], event, table, above)
            if child is not None:
                known.append((field.name, child))
    kind = "SimpleNamespace" if standin.kind is StandInKind.SIMPLE_NAMESPACE else None
    return Obj(tuple(known), truthy=True, kind=kind)


def _kept_empty(standin: StandIn, name: str, value: object) -> object:
    """A field's stated value, less its emptiness (``Obj.empty``) where the test itself
    touches the container (``ns.ids.add(r)``, ``f(ns.ids)``: ``StandIn.test_reads``,
    ``loose``), which may have put something in it before the call; ``name`` empty: in
    any case."""
    if not (isinstance(value, Obj) and value.empty):
        return value
    touched = standin.test_reads | standin.loose
    if not name or any(chain[:1] == (name,) for chain in touched):
        return attrs.evolve(value, empty=False)
    return value


def _constructed(
    index, analyzer, handed: HandedCall, cls: ClassInfo, table: StubStandIns
) -> Judged:
    """``Cls(ns, ...)``: the namespaces the constructor's ``__init__`` (found through the MRO,
    ``ClassIndex.constructor``) reads, its parameters past ``self`` bound through its
    signature.  ``self`` is the real object being built (``CallContext.real_self``): what it
    reads of itself is not the stand-in's, but a field it stores a namespace in is
    (``self.cfg = config``, then ``self.cfg.x`` here or in a method it calls).  A class whose
    ``__init__`` the tree does not show is not judged."""
    member = index.constructor(cls)
    if member is None:
        return [], [], []
    roots = {**bind_passed(member.node, handed.passed, bound=True)}
    roots.update(returned_roots(index, handed))
    if not roots:
        return [], namespace_uses(None, roots, handed), []
    context = _handed_context(index, handed, roots)
    overridden = frozenset((cls.qualname, name) for name in handed.overrides)
    context = attrs.evolve(
        context,
        real_self=True,
        replaced=context.replaced | overridden,
        whole=whole_chains(roots, {}, table, attrs.evolve(handed.event, name="__init__")),
        tuples=tuple_chains(roots, {}),
    )
    report = analyzer.analyze(
        cls,
        "__init__",
        constants=class_constants(index, cls, context.replaced),
        call=stated_shape(handed, table),
        context=context,
        provided_chains=held_chains(roots, {}, handed.test),
    )
    event = attrs.evolve(handed.event, name="__init__")
    plain = plain_function(member.node) and plainly_built(index, cls)
    return (
        list(missing_fields(report, roots, {}, table, cls.name, event)),
        namespace_uses(report, roots, handed, plain=plain),
        namespace_reach(report, roots, handed, plain=plain),
    )


def class_constants(
    index, cls: ClassInfo, replaced: frozenset[tuple[str, str]]
) -> dict[str, object]:
    """What ``self.<name>`` gives on an object ``cls(...)`` is building before its
    ``__init__`` stores ``name``: the class attribute its MRO finds first
    (``ClassIndex.members``), where the classes up to the one defining it bind the name once,
    to a plain literal or an enum member (``reorder_batch_threshold: int = 1``,
    ``query_len_support = QueryLenSupport.UNIFORM``).  The walk forgets the value at the
    first store to the field (``self.x = ...``, a ``setattr`` of its name, a store in a
    method it follows), so it decides only the branches read before any store could
    replace it.  Not where the MRO leaves the tree (a base outside it may define the name
    first), nor a name the test patched on a class of the MRO.  (``literal_defaults``, which
    decides a stub's branches, keeps plain literals only: the stub audit's output is pinned
    to the releases.)"""
    chain, external = index.mro(cls)
    if external:
        return {}
    order = [klass.qualname for klass in chain]
    bindings = [_class_bindings(klass.node) for klass in chain]
    found: dict[str, object] = {}
    for name, member in index.members(cls).items():
        node = member.node
        if member.kind is not MemberKind.ATTRIBUTE or not isinstance(
            node, (ast.Assign, ast.AnnAssign)
        ):
            continue
        upto = order.index(member.owner.qualname) + 1
        if sum(len(bound.get(name, ())) for bound in bindings[:upto]) != 1:
            continue
        if any((qualname, name) in replaced for qualname in order):
            continue
        literal = literal_value(node.value)
        if literal:
            found[name] = literal[0]
        elif isinstance(node.value, ast.Attribute) and (enum := enum_member(node.value)):
            found[name] = enum
    return found


def _class_bindings(node: ast.ClassDef) -> dict[str, list[ast.expr | None]]:
    """Each name a class body binds outside its defs, with the value of each binding (None
    where the binding is not a plain ``name = value``: an unpacking, a loop, an import)."""
    bound: dict[str, list[ast.expr | None]] = {}
    todo: list[ast.AST] = list(node.body)
    while todo:
        stmt = todo.pop()
        if isinstance(stmt, (*FUNCTION_DEFS, ast.ClassDef)):
            bound.setdefault(stmt.name, []).append(None)
            continue
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
        ):
            bound.setdefault(stmt.targets[0].id, []).append(stmt.value)
            continue
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            if stmt.value is not None:
                bound.setdefault(stmt.target.id, []).append(stmt.value)
            continue
        for sub in child_nodes(stmt):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
                bound.setdefault(sub.id, []).append(None)
            elif isinstance(sub, (ast.stmt, ast.expr, ast.excepthandler, ast.alias)):
                todo.append(sub)
        if isinstance(stmt, ast.alias):
            name = (stmt.asname or stmt.name).partition(".")[0]
            bound.setdefault(name, []).append(None)
    return bound


def _on_instance(index, analyzer, handed: HandedCall, table: StubStandIns) -> Judged:
    """``Cls(args).m(ns)`` (or ``x.m(ns)``, ``x = Cls(args)``): ``m`` as the class the test
    built finds it through its MRO, on the real object (``CallContext.real_self``: what it
    reads of itself is not the stand-in's), whose ``__dict__`` holds the attributes the test
    set on it (shadowing methods of those names), and the namespaces the test set on it
    (``HandedCall.self_holders``) read through ``self``.  No block counts as one the test
    prepared (``provided_chains``): the object's own state, which the walk does not know,
    decides its branches, so a block reading the namespace's fields is no sign the call takes
    it (a loader's ``if`` on its checkpoint's format).  A static or class method is walked as
    a function; a class the tree does not show, or a name that is not a method there, is not
    judged."""
    head, _, name = handed.dotted.rpartition(".")
    cls = _callee_class(index, head)
    member = index.lookup(cls, name) if cls is not None else None
    if member is None or not isinstance(member.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return [], [], []
    if member.kind in (MemberKind.STATICMETHOD, MemberKind.CLASSMETHOD):
        function = FunctionRef(member.owner.module, member.node)
        bound = member.kind is MemberKind.CLASSMETHOD
        return _as_function(index, analyzer, handed, table, function, cls.name, handed.shape, bound)
    if member.kind is not MemberKind.METHOD:
        return [], [], []
    roots = {**bind_passed(member.node, handed.passed, bound=True)}
    roots.update(returned_roots(index, handed))
    nested = {
        field.name: field.children[0]
        for holder in handed.self_holders
        for field in holder.fields
        if len(field.children) == 1 and not field.items
    }
    if not roots and not nested:
        return [], namespace_uses(None, roots, handed), []
    context = attrs.evolve(
        _handed_context(index, handed, roots),
        real_self=True,
        returns=handed.returns,
        result_fields=handed.result_fields,
        whole=whole_chains(roots, nested, table, handed.event),
        tuples=tuple_chains(roots, nested),
    )
    # The namespaces the test set on the object, as it built them (``stated_obj``): their
    # stated fields decide the method's branches (``self.manager.needs_capture()`` of a
    # ``lambda: True``).
    stated = {name: stated_obj(child, handed.event, table) for name, child in nested.items()}
    report = analyzer.analyze(
        cls,
        name,
        initial=handed.instance_fields,
        constants={
            **_fresh_literals(index, cls, handed),
            **_stored_values(index, cls, handed),
            **dict(handed.instance_values),
            **{name: obj for name, obj in stated.items() if obj is not None},
        },
        call=handed.shape,
        context=context,
        provided_chains=(),
    )
    return (
        list(missing_fields(report, roots, nested, table, cls.name, handed.event)),
        namespace_uses(report, roots, handed, plain=plain_function(member.node)),
        namespace_reach(report, roots, handed, plain=plain_function(member.node)),
    )


def _patches(
    index, module: ModuleInfo, patched: Iterable[tuple[str, bool]]
) -> tuple[frozenset, frozenset, frozenset]:
    """``CallContext``'s ``replaced``, ``patched_functions`` and ``raising`` of the patches
    around a call, resolved through the test module's names as a stub's are."""
    methods: set[tuple[str, str]] = set()
    functions: set[str] = set()
    raising: set = set()
    for dotted, raises in patched:
        owner, _, name = dotted.rpartition(".")
        target = index.resolve(module, owner) if owner else None
        if target is None and owner:
            target = index.resolve_absolute(owner) or _in_tree(index, owner)
        key: tuple[str, str] | str
        if isinstance(target, ClassInfo):
            key = (target.qualname, name)
            methods.add(key)
        elif isinstance(target, ModuleRef):
            key = f"{target.module.name}.{name}"
            functions.add(key)
        elif isinstance(target, External):
            key = f"{target.dotted}.{name}"
            functions.add(key)
        elif "." in owner and target is None:
            key = dotted  # a string patch target: already dotted
            functions.add(key)
        else:
            continue
        if raises:
            raising.add(key)
    return frozenset(methods), frozenset(functions), frozenset(raising)


def _in_tree(index, dotted: str) -> ModuleRef | ClassInfo | FunctionRef | None:
    """What an absolute dotted name (``vllm.x.pkg.mod.Cls``) names in the tree, through the
    re-exports of the modules on the way (``vllm.models.beam.model`` where the package
    ``beam`` imports ``model`` from a platform's sub-package)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module = index.tree.module(".".join(parts[:cut]))
        if module is None:
            continue
        if cut == len(parts):
            return ModuleRef(module)
        found = index.resolve(module, ".".join(parts[cut:]))
        return found if isinstance(found, (ModuleRef, ClassInfo, FunctionRef)) else None
    return None


def _returned_class(index, dotted: str) -> ClassInfo | None:
    """The class a function of the tree returns (``Backend.get_builder_cls``, whose every
    ``return`` names one class, through its module's imports or its own): calling what it
    returns (``builder_cls = Backend.get_builder_cls(); builder_cls(spec, vllm_config)``)
    builds that class, rather than calling an object's ``__call__``.  None where ``dotted``
    names a class (its call does build an object), a plain method, or a function one of
    whose returns is anything else."""
    if _callee_class(index, dotted) is not None:
        return None
    target = _callee_function(index, dotted)
    if target is None or target[1] is MemberKind.METHOD:
        return None
    function = target[0]
    module = function.module
    own = function_imports(function.node, module.name, module.is_package)
    found: set[tuple[str, str]] = set()
    out: ClassInfo | None = None
    for node in _own_nodes(function.node):
        if not isinstance(node, ast.Return):
            continue
        value = node.value
        text = ast.unparse(value) if isinstance(value, (ast.Name, ast.Attribute)) else ""
        resolved = index.resolve(module, text, own) if text else None
        if not isinstance(resolved, ClassInfo):
            return None
        found.add((resolved.module.name, resolved.qualname))
        out = resolved
    return out if len(found) == 1 else None


def _own_nodes(function: ast.AST) -> Iterable[ast.AST]:
    """The nodes of ``function``'s body outside the functions, lambdas and classes nested
    in it (their ``return`` is theirs)."""
    pending = list(child_nodes(function))
    while pending:
        node = pending.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            pending.extend(child_nodes(node))


def _callee_class(index, dotted: str) -> ClassInfo | None:
    """The class of the tree a dotted callee names (a constructor call), or None."""
    found = _in_tree(index, dotted)
    return found if isinstance(found, ClassInfo) else None


def _callee_function(index, dotted: str) -> tuple[FunctionRef, MemberKind | None, str] | None:
    """What a dotted callee names in the tree: a module function (kind None), or a static,
    class or plain method of a class (walked as the function its ``def`` is), with the name a
    finding gives its owner."""
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module = index.tree.module(".".join(parts[:cut]))
        if module is None:
            continue
        rest = parts[cut:]
        found = index.resolve(module, ".".join(rest))
        if isinstance(found, FunctionRef):
            return found, None, found.module.name
        cls = index.resolve(module, ".".join(rest[:-1])) if len(rest) > 1 else None
        if not isinstance(cls, ClassInfo):
            return None
        member = index.lookup(cls, rest[-1])
        if member is None or member.kind not in (
            MemberKind.METHOD,
            MemberKind.STATICMETHOD,
            MemberKind.CLASSMETHOD,
        ):
            return None
        if not isinstance(member.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        return FunctionRef(member.owner.module, member.node), member.kind, cls.name
    return None


def bind_passed(
    node: ast.AST, passed: Iterable[PassedStandIn], bound: bool
) -> dict[str, tuple[StandIn, ...]]:
    """Parameter name -> the stand-ins the call hands it (``self`` skipped where ``bound``):
    several where the test passes one of several (a parametrized argument)."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return {}
    params = Signature.of(node, bound=bound).params
    positional = [
        p.name
        for p in params
        if p.kind in (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL_OR_KEYWORD)
    ]
    by_keyword = {
        p.name
        for p in params
        if p.kind in (ParamKind.POSITIONAL_OR_KEYWORD, ParamKind.KEYWORD_ONLY)
    }
    args = node.args
    out: dict[str, tuple[StandIn, ...]] = {}
    for given in passed:
        if given.position is not None and given.position < len(positional):
            name = positional[given.position]
        elif given.keyword is not None and given.keyword in by_keyword:
            name = given.keyword
        elif given.position is not None and args.vararg is not None:
            # ``def __init__(self, *args, **kwargs)``: an element, which the walk follows
            # where the function passes ``*args`` on
            name = element_key(args.vararg.arg, given.position - len(positional))[1:]
        elif given.keyword is not None and args.kwarg is not None:
            name = element_key(args.kwarg.arg, given.keyword)[1:]
        else:
            continue
        out[name] = (*out.get(name, ()), given.standin)
    return out


def missing_fields(
    report,
    roots: Mapping[str, tuple[StandIn, ...]],
    nested: Mapping[str, StandIn],
    table: StubStandIns,
    class_name: str,
    event: StubEvent,
) -> list[Finding]:
    """The chains of one call's report (``MethodReport.chain_reads``) that reach a name a
    namespace lacks: ``roots`` are the call's parameters handed one (a link is missing only
    where every alternative the test may pass lacks it, and then named on each of them),
    ``nested`` the stub's fields set to one.  Guarded reads never, nor a link the code
    allows to be missing (``ChainRead.optional``); undecided ones as notes.  One finding
    per link a namespace lacks (``cfg.model`` read as ``cfg.model.a`` and ``cfg.model.b``),
    a certain read's first."""
    found: dict[tuple[int, tuple[str, ...]], Finding] = {}
    for chain in report.chain_reads:
        if chain.guarded:
            continue
        if chain.root in roots:
            starts = [(standin, (chain.root,), chain.path) for standin in roots[chain.root]]
        elif chain.root == "self":
            if not chain.path or chain.path[0] not in nested:
                continue
            starts = [(nested[chain.path[0]], ("self", chain.path[0]), chain.path[1:])]
        else:
            continue
        missing = [_first_missing(*start, table, event) for start in starts]
        if all(
            m is not None and all(len(w) - 2 >= chain.optional for _, w in m[0]) for m in missing
        ):
            # Every object the test may pass lacks it: each is named where it is built.  Where
            # some item of a container holds it, the code may read that one: a note.
            every = all(m[1] for m in missing)  # type: ignore[index]
            read = chain if every else attrs.evolve(chain, certain=False)
            for standin, walked in (hit for m in missing for hit in m[0]):  # type: ignore[index]
                key = (id(standin), walked)
                if key not in found or (
                    read.certain and found[key].kind is not FindingKind.MISSING_FIELD
                ):
                    found[key] = _missing(read, standin, walked, class_name, event, table)
    return list(found.values())


def held_chains(
    roots: Mapping[str, tuple[StandIn, ...]],
    nested: Mapping[str, StandIn],
    test: str | None = None,
) -> frozenset[str]:
    """The chains the call's namespaces hold (``metadata.prefill``, ``self.mla_dims.v``):
    what the test provided for each link, which alone prepares a block for the chain reads
    in it (``ReadSetAnalyzer.analyze``'s ``provided_chains``).  Setting a stub's field to a
    namespace provides that namespace's fields, not every link read below the field; a field
    the test deletes again (``StandIn.dropped``) it may not hold on the run judged, nor one
    another test sets on its own object (``StandInField.visible_to``: the call's ``test``)."""
    starts = _chain_starts(roots, nested)
    out: set[str] = set()
    while starts:
        standin, walked = starts.pop()
        if standin.kind not in AUDITED_KINDS and standin.kind is not StandInKind.HOLDER:
            continue
        for field in standin.fields:
            if field.name in standin.dropped or not field.visible_to(test):
                continue
            path = (*walked, field.name)
            out.add(".".join(path))
            if field.items:  # its items are what an element of it holds
                path = (*path, ELEMENT)
                out.add(".".join(path))
            starts.extend((child, path) for child in field.children)
    return frozenset(out)


def _chain_starts(
    roots: Mapping[str, tuple[StandIn, ...]], nested: Mapping[str, StandIn], single: bool = False
) -> list[tuple[StandIn, tuple[str, ...]]]:
    """Where a walk of the call's stand-ins by chain begins: each namespace a parameter
    holds, at the parameter's name (``single``: only a parameter handed one namespace, not
    one of several), then each namespace the test set on a field of ``self``, at
    ``self.<field>``."""
    starts = [
        (standin, (root,))
        for root, given in roots.items()
        if not single or len(given) == 1
        for standin in given
    ]
    starts += [(standin, ("self", field)) for field, standin in nested.items()]
    return starts


def tuple_chains(
    roots: Mapping[str, tuple[StandIn, ...]], nested: Mapping[str, StandIn]
) -> frozenset[str]:
    """``CallContext.tuples``: the chains at which the call's namespaces, or the containers
    the test set on the stub's fields, hold a tuple the test wrote out (a holder of items by
    position, ``slot_link``): ``self.pair``, ``self.reqs.[]``, and a namespace's field set to
    a tuple display (``x.pair`` of ``SimpleNamespace(pair=(ns, [0]))``)."""
    starts = _chain_starts(roots, nested)
    out: set[str] = set()
    while starts:
        standin, walked = starts.pop()
        if standin.kind not in AUDITED_KINDS and standin.kind is not StandInKind.HOLDER:
            continue
        if standin.kind is StandInKind.HOLDER and any(
            f.name[:1] == "[" and f.name != ELEMENT for f in standin.fields
        ):
            out.add(".".join(walked))
        starts.extend((c, _held_at(walked, f)) for f in standin.fields for c in f.children)
    return frozenset(out)


def whole_chains(
    roots: Mapping[str, tuple[StandIn, ...]],
    nested: Mapping[str, StandIn],
    table: StubStandIns,
    event: StubEvent,
) -> tuple[tuple[str, frozenset[str]], ...]:
    """``CallContext.whole``: ``(chain, names)`` of each namespace the call's namespaces
    reach through fields holding one namespace (one the test passes, not one of several),
    whose fields are all it holds at the call (``_judged``, built on every run): a link
    outside ``names`` is one ``missing_fields`` reports (the names every object has, and
    fields the test sets later through a chain, count as held)."""
    none: tuple[Meeting, ...] = ()
    starts = [(standin, walked, none) for standin, walked in _chain_starts(roots, nested, True)]
    out: dict[str, frozenset[str]] = {}
    while starts:
        standin, walked, above = starts.pop()
        # The code that met an object holding the namespace met it too (``_judged``).
        inner = (*above, *_meetings_before(standin, event))
        if standin.kind is StandInKind.HOLDER:
            starts.extend(
                (f.children[0], _held_at(walked, f), inner)
                for f in standin.fields
                if len(f.children) == 1
            )
            continue
        if standin.possible or not _judged(standin, event, table, above):
            continue
        late = {field for link, field in table.late if link == walked[-1]}
        held = {f.name for f in standin.fields if f.name not in standin.dropped}
        out[".".join(walked)] = frozenset(held | late | _OBJECT_NAMES)
        starts.extend(
            (f.children[0], _held_at(walked, f), inner)
            for f in standin.fields
            if len(f.children) == 1 and f.name not in standin.dropped
        )
    return tuple(sorted(out.items()))


def typed_chains(
    index,
    module: ModuleInfo,
    roots: Mapping[str, tuple[StandIn, ...]],
    event: StubEvent,
    nested: Mapping[str, StandIn] | None = None,
) -> frozenset[tuple[str, str, frozenset[str]]]:
    """``CallContext.typed``: ``(chain, class qualname, fields set on it)`` of each
    ``object.__new__`` stub the
    call's namespaces hold at a chain (``SimpleNamespace(fused_experts=stub)``), through
    fields that hold one stand-in set once (``field_at``), from a parameter handed one
    namespace: what the code runs when it reads a property of that chain or calls a method
    on it is the stub's class's.  Not a stub whose class the test's names do not settle to
    a class of the tree."""
    starts = _chain_starts(roots, nested or {}, True)
    out: set[tuple[str, str, frozenset[str]]] = set()
    while starts:
        standin, walked = starts.pop()
        if standin.kind is StandInKind.OBJECT_NEW:
            if standin.class_ref is None or standin.opaque:
                continue
            try:
                cls = index.resolve_ref(standin.class_ref, module)
            except SourceError:
                continue
            if isinstance(cls, ClassInfo):
                names = frozenset(f.name for f in standin.fields)
                out.add((".".join(walked), cls.qualname, names))
            continue
        if standin.kind not in AUDITED_KINDS and standin.kind is not StandInKind.HOLDER:
            continue
        for field in standin.fields:
            if field.name in standin.dropped or field.items or len(field.children) != 1:
                continue
            if field_at(standin, field.name, event) != (field, True):
                continue
            starts.append((field.children[0], (*walked, field.name)))
    return frozenset(out)


def _held_at(walked: tuple[str, ...], field: StandInField) -> tuple[str, ...]:
    """The chain that reaches the one stand-in ``field`` holds: the field itself, or an
    element of it where the field is a container the test wrote out (``layers=[ns]``)."""
    return (*walked, field.name, ELEMENT) if field.items else (*walked, field.name)


#: What ``_first_missing`` finds: each namespace with the chain up to the first link it
#: lacks, and whether it surely lacks it there (False: some element of a container the test
#: wrote out holds the chain, and the code may read that one; or other code met the
#: namespace before the call and may have filled the link in, ``_left_as_built``).
Lacks = tuple[tuple[tuple[StandIn, tuple[str, ...]], ...], bool]


def _first_missing(
    standin: StandIn,
    walked: tuple[str, ...],
    rest: tuple[str, ...],
    table: StubStandIns,
    event: StubEvent,
) -> Lacks | None:
    """The namespace and the chain up to the first link it lacks, or None: every link held,
    or the walk reached an object that is not a namespace the test built whole.  Through
    an element of a container the test wrote out (``layers=[a, b]``, read as
    ``layers[i].x`` or in a loop over it), which item is read is not known: each is
    followed, as alternatives are (``_each_item``).  A namespace other code met before the
    call is judged only by what the walks of those calls show they left of it
    (``_left_as_built``): a link it lacks as built is one the read surely misses where they
    left it whole, one it may miss where they may have reached it unseen (a note).  A read
    not certain on the call's path (``ChainRead.certain``) is a note either way: those
    calls stored neither the link nor one on the way to it, so the namespace lacks it
    unless code they handed it to (``with set_current_config(ns):``, which parks it in a
    module global) filled it unseen, and "may be missing" is what a note says.  What the
    test stated of such a namespace decides none of the callee's branches
    (``whole_chains``, ``stated_obj``)."""
    sure = True
    above: tuple[Meeting, ...] = ()  # the calls that met an object holding ``standin``
    for at, name in enumerate(rest):
        if name in _OBJECT_NAMES or (name[:1] == "[" and standin.kind is not StandInKind.HOLDER):
            return None
        field, settled = field_at(standin, name, event)
        if not settled and standin.kind is not StandInKind.HOLDER:
            return None  # set more than once: which value the call meets is not known
        if standin.kind is StandInKind.HOLDER:
            # What the holder holds besides its stand-ins is not known: only they are judged.
            if field is None or not field.children:
                return None
            if name == ELEMENT:  # ``stub.caches = [c0, c1]`` (``_element_holder``)
                return _each_item(field.children, (*walked, name), rest[at + 1 :], table, event)
            if len(field.children) != 1:
                return None
        elif standin.kind is StandInKind.OBJECT_NEW:
            # A stub the test put in a namespace (``typed_chains``): only what the test set on
            # it is known, and only where no code met it before the call.
            if field is None or standin.opaque or any(_meetings_before(standin, event)):
                return None
        else:
            if not _judged(standin, event, table, above):
                left = _left_as_built(standin, event, name, table, above)
                if left is None:
                    return None
                sure = sure and left
            if field is None and standin.kind is StandInKind.SPEC_MOCK:
                # A mock answers what its spec holds, and what the test showed it answers.
                spec = table.specs.get(standin.location)
                if spec is None or name in standin.read or spec.missing(name) is None:
                    return None
            if field is None:
                if (walked[-1], name) in table.late:
                    return None  # ``x.config.text_config = ...``: set after it was built
                return ((standin, (*walked, name)),), sure
        if field.items:
            lacks = _through_element(field, (*walked, name), rest[at + 1 :], table, event)
            return None if lacks is None else (lacks[0], lacks[1] and sure)
        if len(field.children) != 1:
            return None  # a real object (or several stand-ins): what it holds is not known
        above = (*above, *_meetings_before(standin, event))
        standin, walked = field.children[0], (*walked, name)
    return None


def _through_element(
    field: StandInField,
    walked: tuple[str, ...],
    rest: tuple[str, ...],
    table: StubStandIns,
    event: StubEvent,
) -> Lacks | None:
    """``_first_missing`` past a container field (``field.items``): only an element of it
    (``ELEMENT``) reaches the stand-ins it holds; a name read on the container itself
    (``layers.append``) is the container's."""
    if not rest or rest[0] != ELEMENT:
        return None
    return _each_item(field.children, (*walked, ELEMENT), rest[1:], table, event)


def _each_item(
    items: tuple[StandIn, ...],
    walked: tuple[str, ...],
    rest: tuple[str, ...],
    table: StubStandIns,
    event: StubEvent,
) -> Lacks | None:
    """The items of a container as the alternatives an element read meets: what each
    lacks, and whether every one lacks a link (else some item holds the chain, and the
    code may read that one)."""
    found = [_first_missing(item, walked, rest, table, event) for item in items]
    hits = tuple(hit for lacks in found if lacks is not None for hit in lacks[0])
    if not hits:
        return None
    return hits, all(lacks is not None and lacks[1] for lacks in found)


def runs_code(meeting: Meeting) -> bool:
    """Whether the meeting runs code with the stand-in (which may write on it): a call it is
    an argument or ``self`` of (a property's ``fget`` too); not a bound method made of it
    (``types.MethodType``, ``__get__``, ``functools.partial``), which runs only when called,
    nor a place it is put."""
    if meeting.how is MeetingHow.ARGUMENT and meeting.stored is not None and not meeting.via:
        callee = meeting.callee
        if callee is not None and (callee.dotted, meeting.keyword) == meeting.stored:
            return False  # a constructor that only stores it (``_settled_stores``)
    if meeting.how is MeetingHow.ARGUMENT:
        # ``functools.partial(f, ns)`` binds ``ns``, as ``types.MethodType`` does
        return meeting.callee is None or meeting.callee.dotted not in _BINDERS
    if meeting.how is MeetingHow.SELF and meeting.callee is not None and meeting.callee.instance:
        return True  # ``holder.m()`` on the real object that holds it
    return meeting.how is MeetingHow.SELF and meeting.self_shape in (
        SelfShape.UNBOUND_CALL,
        SelfShape.SELF_KEYWORD,
        SelfShape.PROPERTY_FGET,
    )


def _judged(
    standin: StandIn,
    event: StubEvent,
    table: StubStandIns | None = None,
    above: tuple[Meeting, ...] = (),
) -> bool:
    """Whether the fields the test gave ``standin`` are all it holds at ``event``'s call:
    a namespace not handed to other code before it (which may fill it in, as a builder
    fills the metadata it is given).  Another test's hand-over never meets an object each
    test builds anew (``StandIn.per_test``).  A hand-over in the other arm of an ``if`` of the test
    function than the call's (``if fail: with pytest.raises(...): f(ns)`` / ``else: f(ns)``),
    or in an arm that then leaves the test's function (``if error: ...; return``), never runs
    before it (``arms_exclusive``).  Nor does a call the test handed it to before whose walk
    saw every use of it and stored nothing on it (``Reach``, known to ``table`` once the
    file's calls are walked: ``_as_built``).  A call that met an object holding the namespace
    through fields (``above``: ``f(cfg)`` for ``cfg.spec``) met the namespace too, and may
    have stored on it (``cfg.spec.depth = ...``): its ``Reach`` of the namespace says."""
    if standin.kind not in AUDITED_KINDS or standin.opaque:
        return False
    before = [*_meetings_before(standin, event), *above]
    return not before or (table is not None and _as_built(standin, before, table))


def _as_built(standin: StandIn, meetings: Iterable[Meeting], table: StubStandIns) -> bool:
    """Whether each of ``meetings`` is a walked call that left ``standin`` as the test built
    it: every use of it seen (``Reach.whole``), nothing stored on it."""
    if standin.kind not in NAMESPACE_KINDS:
        return False
    for meeting in meetings:
        callee = meeting.callee
        if callee is None or callee.dotted is None:
            return False
        reach = table.reach.get((handed_key(meeting), standin.location, standin.column))
        if reach is None or not reach.whole or reach.fills or reach.replaced:
            return False
    return True


def _meetings_before(standin: StandIn, event: StubEvent) -> Iterator[Meeting]:
    """The meetings that run code with ``standin`` before ``event``'s call, on the same run:
    one that runs code with it (``runs_code``) earlier in the same file, outside the other
    arm of an ``if`` of the call's, and in the same test where each test builds its own."""
    for meeting in standin.meetings:
        if (
            runs_code(meeting)
            and meeting.location.path == event.location.path
            and meeting.location.line < event.location.line
            and not arms_exclusive(meeting.arms, event.arms)
            and not (standin.per_test and _other_tests(meeting.test, event.test))
            and not (standin.per_test and _unrequested(meeting, event.test))
        ):
            yield meeting


def _unrequested(meeting: Meeting, test: str | None) -> bool:
    """Whether ``meeting`` lies in a fixture the test ``test`` never requests
    (``Meeting.requested_by``): it does not run in that test."""
    if meeting.requested_by is None or test is None:
        return False
    return test.partition("[")[0] not in meeting.requested_by


def _left_as_built(
    standin: StandIn,
    event: StubEvent,
    name: str,
    table: StubStandIns,
    above: tuple[Meeting, ...] = (),
) -> bool | None:
    """Whether a namespace other code met before ``event``'s call (``_meetings_before``)
    still lacks ``name`` there: True where each of those calls was walked and left it as the
    test built it (``Reach.whole``, storing nothing on it); False where none stored
    ``name`` or a link on the way to it, but one may have reached it where its walk could not
    see (a read of ``name`` may miss it: a note); None where one may have stored it, replaced
    the namespace, or was not walked (what it holds there is not known).  ``above``: the
    calls that met an object holding it (``_judged``)."""
    if standin.kind not in NAMESPACE_KINDS or standin.opaque:
        return None
    whole = True
    for meeting in (*_meetings_before(standin, event), *above):
        callee = meeting.callee
        if callee is None or callee.dotted is None:
            return None
        reach = table.reach.get((handed_key(meeting), standin.location, standin.column))
        if reach is None or reach.replaced or name in reach.fills:
            return None
        whole = whole and reach.whole
    return whole


def _other_tests(first: str | None, second: str | None) -> bool:
    """Whether two places lie in two different tests (their parametrize cases aside)."""
    if first is None or second is None:
        return False
    return first.partition("[")[0] != second.partition("[")[0]


def _missing(
    chain, standin: StandIn, walked: tuple[str, ...], class_name, event, table: StubStandIns
) -> Finding:
    if standin.kind is StandInKind.SPEC_MOCK:
        return _missing_on_mock(chain, standin, walked, class_name, event, table)
    certain = chain.certain and not standin.possible
    text = ".".join(walked).replace(".[", "[")  # ``layers[].ffn``, ``reqs[][0].n``
    where = "" if certain else " on a path the test may not take"
    return Finding(
        kind=FindingKind.MISSING_FIELD if certain else FindingKind.POSSIBLY_MISSING_ATTRIBUTE,
        class_name=class_name,
        method=event.name,
        name=text,
        message=f"{class_name}.{event.name}() reads {text}{where} but the "
        f"{standin.kind.value} the test builds at {standin.location} has no {walked[-1]!r}",
        vllm_location=chain.location,
        stub_location=standin.location,
        stub_side=f"{standin.kind.value}(" + ", ".join(sorted(standin.field_names)) + ")",
        vllm_side=f"reads {text}",
        tests=(event.test,) if event.test else (),
    )


def _missing_on_mock(
    chain, standin: StandIn, walked: tuple[str, ...], class_name, event, table: StubStandIns
) -> Finding:
    """A link a spec'd mock lacks: its spec class sets it on ``self`` (``__init__``, a
    dataclass field without a class-level default) or its list of names leaves it out, and
    the test never gives it.  Raising before Python 3.14 only (``MockSpec.newer``) is a note,
    as a read on a path the test may not take is."""
    spec = table.specs[standin.location]
    name = walked[-1]
    always = spec.missing(name) is True
    certain = chain.certain and not standin.possible and always
    text = ".".join(walked).replace(".[", "[")  # ``layers[].ffn``, ``reqs[][0].n``
    where = "" if chain.certain and not standin.possible else " on a path the test may not take"
    set_at = spec.set_at(name)
    if spec.exact is not None:
        why = f"its spec lists {', '.join(sorted(spec.exact)) or 'no name'}"
    elif set_at is not None and set_at[1] == "field":
        why = f"a field of the dataclass {spec.spec} with no class-level default ({set_at[0]})"
    elif set_at is not None and set_at[1] == "annotation":
        why = f"{spec.spec} only annotates it ({set_at[0]}), with no class-level value"
    elif set_at is not None:
        why = f"{spec.spec} sets it in {set_at[1]} ({set_at[0]}), not at class level"
    else:
        why = f"{spec.spec} does not define it at class level"
    if not always:
        why += "; create_autospec adds a dataclass's fields from Python 3.14 on"
    built = "create_autospec" if standin.autospec else "Mock"
    return Finding(
        kind=FindingKind.MISSING_FIELD if certain else FindingKind.POSSIBLY_MISSING_ATTRIBUTE,
        class_name=class_name,
        method=event.name,
        name=text,
        message=f"{class_name}.{event.name}() reads {text}{where} but the "
        f"{standin.kind.value} the test builds at {standin.location} (spec {spec.spec}) "
        f"raises AttributeError for {name!r}: {why}, and the test never sets it",
        vllm_location=chain.location,
        stub_location=standin.location,
        stub_side=f"{built}(spec={spec.spec})"
        + (" setting " + ", ".join(sorted(standin.field_names)) if standin.fields else ""),
        vllm_side=f"reads {text}",
        tests=(event.test,) if event.test else (),
    )


def _self_calls(calls_at: _CallIndex, standin: StandIn) -> list[SelfCall]:
    """``Cls.method(ns, ...)``: the namespace as an ``object.__new__`` stub of ``Cls`` whose
    fields are set and whose calls are the methods of ``Cls`` it is made ``self`` of, in the
    test's order (what an earlier one writes on it, a later one finds).  Other spellings of
    ``self`` do not state the call's arguments here; they are not replayed, and a replay whose
    first call follows code the namespace met otherwise is ``filled``."""
    meetings = sorted(
        (m for m in standin.meetings if runs_code(m) or m.how is MeetingHow.SELF),
        key=lambda m: (m.location.path, m.location.line),
    )
    calls: dict[str, list[StubEvent]] = {}
    first: dict[str, int] = {}
    replayed: set[int] = set()
    for i, meeting in enumerate(meetings):
        replay = _self_call(calls_at, meeting)
        if replay is not None:
            calls.setdefault(replay[0], []).append(replay[1])
            first.setdefault(replay[0], i)
            replayed.add(i)
    out: list[SelfCall] = []
    for head, events in calls.items():
        filled = any(
            (i not in replayed and runs_code(meetings[i]))
            or (i in replayed and _head(meetings[i]) != head)
            for i in range(first[head])
        )
        patches = {
            target: raises
            for i in replayed
            if _head(meetings[i]) == head
            for target, raises in meetings[i].patched
        }
        stub = Stub(
            NamedClass(head),
            standin.location,
            calls_at.module,
            events=(*_sets(standin), *events),
            escapes=True,
            opaque=standin.opaque,
            patched=tuple(sorted(patches)),
            raising=tuple(sorted(t for t, raises in patches.items() if raises)),
        )
        unnamed = any(meetings[i].unnamed_patch for i in replayed if _head(meetings[i]) == head)
        out.append(SelfCall(stub, standin.kind, filled, unnamed))
        if len(events) == 1:
            # One call, in a helper that returns its result: once more for each call of the
            # helper whose result the test asserts, a fresh namespace each time.
            for event in calls_at.through_helper(meetings[first[head]], events[0]):
                site = attrs.evolve(stub, events=(*_sets(standin), event))
                out.append(SelfCall(site, standin.kind, filled, unnamed))
    return out


def _head(meeting: Meeting) -> str:
    callee = meeting.callee
    return (callee.dotted or callee.text).rpartition(".")[0] if callee is not None else ""


def _sets(standin: StandIn) -> list[StubEvent]:
    bound = _bound_methods(standin)
    events = []
    once = [f.name for f in standin.fields]
    for field in standin.fields:
        value, has_value = _value_of(field)
        if once.count(field.name) > 1 or field.name in standin.dropped:
            value = _kept_empty(standin, "", value)  # which set the call sees is not known
        value = _kept_empty(standin, field.name, value)
        if field.location in bound:
            value, has_value = Obj(truthy=True, bound=bound[field.location]), True
        events.append(
            StubEvent(EventKind.SET, field.name, field.location, value=value, has_value=has_value)
        )
    return events


def _bound_methods(standin: StandIn) -> dict[Location, str]:
    """The fields of ``standin`` set to one of its class's methods bound to it
    (``ns.f = types.MethodType(Cls.m, ns)``, ``ns.f = Cls.m.__get__(ns)``), by where the
    field is set: the dotted method each holds, which ``self.f(...)`` runs with ``ns`` as
    ``self``."""
    return {
        meeting.location: meeting.callee.dotted
        for meeting in standin.meetings
        if meeting.how is MeetingHow.SELF
        and not meeting.via
        and meeting.self_shape in (SelfShape.METHOD_TYPE, SelfShape.DESCRIPTOR_GET)
        and meeting.callee is not None
        and meeting.callee.dotted is not None
        and any(field.location == meeting.location for field in standin.fields)
    }


def _self_call(calls: _CallIndex, meeting: Meeting) -> tuple[str, StubEvent] | None:
    """The class (as the test names it) and the call event of a meeting that runs a method
    with the namespace as ``self``, with the arguments the method gets: ``Cls.m(ns, ...)``,
    ``Cls.m(self=ns, ...)`` (or an alias of ``Cls.m``), ``types.MethodType(Cls.m, ns)(...)``
    and ``Cls.m.__get__(ns)(...)`` (called in place, or through the name it is bound to),
    ``Cls.prop.fget(ns)``.  A bound method the test never calls runs nothing."""
    callee = meeting.callee
    if callee is None or not _replayed_self(meeting):
        return None
    head, _, method = (callee.dotted or callee.text).rpartition(".")
    if not head:
        return None
    found = _self_call_shape(calls, meeting)
    if found is None:
        return None
    event = StubEvent(
        EventKind.CALL,
        method,
        meeting.location,
        shape=found,
        expect_raise=meeting.expect_raise,
        raise_owned=meeting.raise_owned,
        raise_tested=meeting.raise_tested,
        test=meeting.test,
        getter=meeting.self_shape is SelfShape.PROPERTY_FGET,
        returns=calls.asserted(calls.call_at(meeting.location.line, callee.text)),
        result_fields=calls.result_fields(calls.call_at(meeting.location.line, callee.text)),
        result_items=calls.result_items(calls.call_at(meeting.location.line, callee.text)),
        arms=meeting.arms,
    )
    return head, event


def _self_call_shape(calls: _CallIndex, meeting: Meeting) -> CallShape | None:
    """What the method made of the namespace is called with, ``self`` left out."""
    callee, shape, line = meeting.callee, meeting.self_shape, meeting.location.line
    assert callee is not None
    # The meeting's own call, with what the test states about its arguments (``shape``).
    if shape is SelfShape.UNBOUND_CALL or shape is SelfShape.PROPERTY_FGET:
        if meeting.position:
            return None
        text = callee.text if shape is SelfShape.UNBOUND_CALL else callee.text + ".fget"
        call = calls.call_at(line, text)
        if call is None:
            return None
        return _without_first(calls.with_stated(meeting.shape or CallShape.of(call), call))
    if shape is SelfShape.SELF_KEYWORD:
        call = calls.call_at(line, callee.text)
        if call is None:
            return None
        whole = calls.with_stated(meeting.shape or CallShape.of(call), call)
        return attrs.evolve(
            whole,
            keywords=tuple(k for k in whole.keywords if k != "self"),
            keyword_literals=tuple(kv for kv in whole.keyword_literals if kv[0] != "self"),
        )
    binding = calls.binding_at(line, callee.text)
    if binding is None:
        return None
    bound = calls.called(binding)
    return CallShape.of(bound) if bound is not None else None


def _without_first(whole: CallShape) -> CallShape | None:
    if whole.n_positional < 1:
        return None
    return attrs.evolve(
        whole,
        n_positional=whole.n_positional - 1,
        positional_literals=whole.positional_literals[1:],
    )


def _value_of(field: StandInField) -> tuple[object, bool]:
    """``(value, has_value)`` of a field as a stub's set states it: a literal, or a nested
    namespace as the known object (``values.Obj``) whose literal fields decide branches
    (``if self.model_config.is_diffusion:``)."""
    if field.has_value:
        return field.value, True
    if len(field.children) == 1 and field.children[0].kind in NAMESPACE_KINDS and not field.items:
        return _obj_of(field.children[0]), True
    return None, False


def _obj_of(standin: StandIn) -> Obj:
    """A stand-in as the object it is: a namespace is always true; a holder (a real object
    the test set namespaces on) is known by those alone.  A field the test sets more than
    once holds one value or another at a call (``stated_obj``): it states none."""
    if standin.kind is StandInKind.HOLDER:
        held = [(f.name, _obj_of(f.children[0])) for f in standin.fields if len(f.children) == 1]
        return Obj(tuple(held))
    counts: dict[str, int] = {}
    for field in standin.fields:
        counts[field.name] = counts.get(field.name, 0) + 1
    known = [(f.name, *_value_of(f)) for f in standin.fields if counts[f.name] == 1]
    return Obj(tuple((name, value) for name, value, has in known if has), truthy=True)


@attrs.frozen
class _FieldCallShapes:
    """One function of a test module and, in its walk's order, the nodes a search for a
    bound method's later call looks at: ``name = f(...)``, ``name = other``, ``name.f(...)``."""

    function: ast.FunctionDef | ast.AsyncFunctionDef
    built: list[ast.Assign]
    aliased: list[ast.Assign]
    field_calls: list[ast.Call]


class _CallIndex:
    """The calls of one test module around the lines a stand-in table asks about: the call
    at a meeting's line, what the test asserts it returns, a method bound there.  Each
    question used to walk the whole module; here only the top-level statements that span
    the line are walked, once each (a node lies inside the statement that holds its lines,
    and a breadth-first walk of those statements meets their nodes in the order a walk of
    the module does, so every answer is still the first match in ``ast.walk`` order)."""

    def __init__(
        self, module: ModuleInfo, walk: Callable[[ast.AST], Iterable[ast.AST]] | None = None
    ) -> None:
        self.module = module
        self._walk = walk
        self._spans = [(first_line(s), s.end_lineno or s.lineno, s) for s in module.tree.body]
        self._calls: dict[tuple[ast.stmt, ...], list[ast.Call]] = {}
        # Of the statements walked: the call each callee expression is called by, and what
        # each ``assert`` states an expression is (``_assert_states``).
        self._applied: dict[ast.AST, ast.Call] = {}
        self._states: dict[ast.AST, tuple[object]] = {}
        # What the asserts on the local a call's result is bound to state its fields are
        # (``asserted.result_asserts``): the call's ``CallContext.result_fields``.
        self._fields: dict[ast.AST, dict[str, tuple[object]]] = {}
        # What they state true of an item of a list field of it (``asserted.
        # result_item_asserts``): the call's ``CallContext.result_items``.
        self._items: dict[ast.AST, set[tuple[str, str]]] = {}
        self._texts: dict[ast.AST, str] = {}
        self._at: dict[tuple[int, str], ast.Call | None] = {}
        self._shapes: list[_FieldCallShapes] | None = None
        self._mocked: dict[ast.Call, tuple[frozenset[str], frozenset[str]]] = {}
        self.names = TestNames(module.tree)

    def _text(self, node: ast.AST) -> str:
        """``ast.unparse(node)``, once per node."""
        found = self._texts.get(node)
        if found is None:
            found = self._texts[node] = ast.unparse(node)
        return found

    def _spanning(self, line: int) -> Iterable[ast.Call]:
        """The calls whose lines include ``line``, in ``ast.walk(module)`` order."""
        roots = self._roots(line)
        if roots not in self._calls:
            self.names.link(roots)
            calls = self._calls[roots] = []
            nodes = self._walk(roots[0]) if self._walk and len(roots) == 1 else walk_all(roots)
            for node in nodes:
                if isinstance(node, ast.Call):
                    calls.append(node)
                    self._applied.setdefault(node.func, node)
                elif isinstance(node, ast.Assert):
                    for asserted, value in assert_states(node, self.names):
                        self._states.setdefault(asserted, value)
                if isinstance(node, _HOLDERS):  # an expression holds no statement list
                    for block in _blocks(node):
                        effects: dict = {}  # shared by the two scans of the block
                        for call, field, value in result_asserts(block, self.names, effects):
                            if field is None:
                                self._states.setdefault(call, value)
                            else:
                                self._fields.setdefault(call, {}).setdefault(field, value)
                        for call, items, field in result_item_asserts(block, self.names, effects):
                            self._items.setdefault(call, set()).add((items, field))
        return (
            node
            for node in self._calls[roots]
            if node.lineno <= line <= (node.end_lineno or node.lineno)
        )

    def _roots(self, line: int) -> tuple[ast.stmt, ...]:
        """The top-level statements whose lines include ``line``."""
        return tuple(s for first, last, s in self._spans if first <= line <= last)

    def call_at(self, line: int, text: str) -> ast.Call | None:
        """The call of ``text`` (its callee as written) on ``line``."""
        key = (line, text)
        if key not in self._at:
            self._at[key] = next(
                (node for node in self._spanning(line) if self._text(node.func) == text), None
            )
        return self._at[key]

    def called_mocks(self, call: ast.Call | None) -> tuple[frozenset[str], frozenset[str]]:
        """``called_mocks.called_mocks`` of the stub's method call ``call`` in the test
        function it is a statement of: the mocks on the stub the test asserts the call ran,
        and the fields it stores on the stub."""
        if call is None:
            return frozenset(), frozenset()
        found = self._mocked.get(call)
        if found is None:
            self.names.link(self._roots(call.lineno))
            test = self.names.scope_of(call)
            found = (frozenset(), frozenset())
            if isinstance(test, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found = called_mocks(test, call)
            self._mocked[call] = found
        return found

    def method_call_at(self, line: int, name: str) -> ast.Call | None:
        """The one call of a method ``name`` (``x.name(...)``) that starts on ``line``; None
        where the line starts none or several (which of them a stub's call is, is not
        known)."""
        found = [
            node
            for node in self._spanning(line)
            if node.lineno == line
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == name
        ]
        return found[0] if len(found) == 1 else None

    def with_stated(self, shape: CallShape, call: ast.Call) -> CallShape:
        """``shape`` with the arguments of ``call`` it does not know that the test's text
        settles (``asserted.stated``: arithmetic over names bound once, ``split(ns, r, 3 *
        block_size)``), as the replay of the call binds them."""
        if shape.star_args:
            return shape
        self.names.link(self._roots(call.lineno))
        positional = list(shape.positional_literals)
        for i, arg in enumerate(call.args[: len(positional)]):
            if not positional[i]:
                positional[i] = stated(arg, self.names)
        for i, arg in enumerate(call.args[: len(positional)]):
            constants = self.instance_constants(arg, call)
            if constants is not None:
                positional[i] = _with_stated(positional[i], constants)
        keywords = dict(shape.keyword_literals)
        for kw in call.keywords:
            if kw.arg is not None and kw.arg not in keywords:
                value = stated(kw.value, self.names)
                if value:
                    keywords[kw.arg] = value[0]
        for kw in call.keywords:
            constants = self.instance_constants(kw.value, call)
            if kw.arg in shape.keywords and constants is not None:
                known = (keywords[kw.arg],) if kw.arg in keywords else ()
                keywords[kw.arg] = _with_stated(known, constants)[0]
        return attrs.evolve(
            shape, positional_literals=tuple(positional), keyword_literals=tuple(keywords.items())
        )

    def instance_constants(self, arg: ast.expr, call: ast.Call) -> Obj | None:
        """The argument ``arg`` of ``call`` as an instance of a class the test module defines
        (``class Loader: quant_config = None``, then ``loader = Loader()``,
        ``Cls.method(loader, ...)``): an object whose literal class attributes the walk may
        read (``self.quant_config`` is ``None``, deciding ``if self.quant_config ...``), as
        ``class_constants`` gives a constructed vLLM object's.  Only where nothing but the
        class body can give the instance another value there: a class with no base, keyword
        or decorator, defining none of the methods that build or answer attributes
        (``_SPECIAL``), loaded only to be called with no arguments; the instance a local bound
        once, at the top of its function, to that construction, and loaded nowhere before
        the call (what first runs with it is this call, on the object as built); and a
        class attribute bound once in its body to a literal, which no attribute store of the
        module names (``self.x = ...`` in a method of the class, ``loader.x = ...``).  A
        call in a loop meets that object on its first pass: a read the walk then finds
        surely made fails there."""
        if not isinstance(arg, ast.Name):
            return None
        built = self.names.resolve(arg)
        if not (
            isinstance(built, ast.Call)
            and isinstance(built.func, ast.Name)
            and not built.args
            and not built.keywords
        ):
            return None
        found = self._local_class(built.func)
        if found is None:
            return None
        klass, related = found
        scope = self.names.scope_of(arg)
        start = (call.lineno, call.col_offset)
        for node in walk(scope):
            if (
                isinstance(node, ast.Name)
                and node.id == arg.id
                and node is not arg
                and (node.lineno, node.col_offset) < start
                and isinstance(node.ctx, ast.Load)
            ):
                return None  # handed on, or read, before the call
        stored = {node.attr for node in walk(klass) if isinstance(node, ast.Attribute)} | {
            node.attr
            for node in walk(self.module.tree)
            if isinstance(node, ast.Attribute)
            and isinstance(node.ctx, (ast.Store, ast.Del))
            and any(
                (isinstance(n, ast.Name) and n.id in related)
                or (isinstance(n, ast.Attribute) and n.attr == "__class__")
                for n in walk(node.value)
            )
        }
        fields: list[tuple[str, object]] = []
        for name, values in _class_bindings(klass).items():
            if len(values) != 1 or values[0] is None or name in stored:
                continue
            literal = literal_value(values[0])
            if literal:
                fields.append((name, literal[0]))
        return Obj(tuple(sorted(fields)), kind=klass.name) if fields else None

    def _local_class(self, name: ast.Name) -> tuple[ast.ClassDef, frozenset[str]] | None:
        """The class the test module defines that ``name`` (a construction's callee) names,
        with the names its objects may be reached by (the class's, and each local bound to
        a construction of it), where it is plain (no base, keyword or decorator, none of
        ``_SPECIAL``) and the module loads its name only to call it with no arguments, each
        call bound to a local (neither the class nor an object of it is handed anywhere
        that could set a class attribute: ``monkeypatch.setattr(Loader, ...)``)."""
        scope = self.names.scope_of(name)
        while True:
            binds = self.names.bindings(scope).get(name.id)
            if binds is not None or scope is self.module.tree:
                break
            scope = self.names.scope_of(scope)
        if not binds or len(binds) != 1 or not isinstance(binds[0], ast.ClassDef):
            return None
        klass = binds[0]
        if (
            klass.bases
            or klass.keywords
            or klass.decorator_list
            or _SPECIAL & set(_class_bindings(klass))
        ):
            return None
        callees: set[ast.AST] = set()
        related = {klass.name}
        for node in walk(self.module.tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                made = node.value
                if (
                    isinstance(made.func, ast.Name)
                    and made.func.id == klass.name
                    and not made.args
                    and not made.keywords
                    and all(isinstance(t, ast.Name) for t in node.targets)
                ):
                    callees.add(made.func)
                    related.update(t.id for t in node.targets)  # type: ignore[attr-defined]
        for node in walk(self.module.tree):
            if (
                isinstance(node, ast.Name)
                and node.id == klass.name
                and isinstance(node.ctx, ast.Load)
                and node not in callees
            ):
                return None
        return klass, frozenset(related)

    def through_helper(self, meeting: Meeting, event: StubEvent) -> list[StubEvent]:
        """``event``, the replayed call of ``meeting``, as each call of the helper it is
        returned from states it (``def _split(request, n): ns = SimpleNamespace(...); return
        Cls.split(ns, request, n)``, then ``assert _split(r, 1618) == 1216``): the helper's
        result is the call's, so the test's assertion on it is one on the call
        (``StubEvent.returns``), and a parameter the helper hands on unchanged is what that
        call of the helper passes (``asserted.stated``).  Only the helper's calls whose
        result the test asserts, outside ``pytest.raises`` (where the test may pass without
        the call returning); a module-level helper bound once."""
        callee = meeting.callee
        if callee is None or meeting.self_shape not in (
            SelfShape.UNBOUND_CALL,
            SelfShape.SELF_KEYWORD,
        ):
            return []
        call = self.call_at(meeting.location.line, callee.text)
        if call is None or not isinstance(self.names.parent(call), ast.Return):
            return []
        helper = self.names.scope_of(call)
        tree = self.module.tree
        if (
            not isinstance(helper, ast.FunctionDef)
            or self.names.scope_of(helper) is not tree
            or self.names.bindings(tree).get(helper.name) != [helper]
        ):
            return []
        offset = 1 if meeting.self_shape is SelfShape.UNBOUND_CALL else 0
        handed = [
            (j - offset, None, arg.id)
            for j, arg in enumerate(call.args)
            if j >= offset and isinstance(arg, ast.Name)
        ] + [
            (None, kw.arg, kw.value.id)
            for kw in call.keywords
            if kw.arg not in (None, "self") and isinstance(kw.value, ast.Name)
        ]
        local = self.names.bindings(helper)
        handed = [
            (j, k, name)
            for j, k, name in handed
            if len(local.get(name, ())) == 1 and isinstance(local[name][0], ast.arg)
        ]
        out = []
        for site in self._helper_calls(helper.name):
            self._spanning(site.lineno)
            for names, value in self._site_runs(site, helper, [n for _, _, n in handed]):
                shape = event.shape
                assert shape is not None
                positional = list(shape.positional_literals)
                keywords = dict(shape.keyword_literals)
                for j, keyword, name in handed:
                    known = _argument(helper, site, name, names)
                    if not known:
                        continue
                    if j is not None and j < len(positional):
                        positional[j] = known
                    elif keyword is not None:
                        keywords[keyword] = known[0]
                shape = attrs.evolve(
                    shape,
                    positional_literals=tuple(positional),
                    keyword_literals=tuple(keywords.items()),
                )
                out.append(
                    attrs.evolve(event, shape=shape, returns=value, test=self._test_of(site))
                )
        return out

    def _site_runs(
        self, site: ast.Call, helper: ast.FunctionDef, handed: Sequence[str]
    ) -> Iterable[tuple[TestNames, tuple[object]]]:
        """What the test asserts one call of a helper returns, with the names its arguments
        are read under: the module's, where they state the asserted value and the handed
        arguments; else, in a test parametrized with values written out (``assert _split(r,
        n) == expected`` under ``parametrize(("n", "expected"), [(3602, 1600), ...])``), once
        per case, the test's parameters bound to that case's values (``CaseNames``): each
        case is a run of the call, its assertion one on that run."""
        value = self.asserted(site)
        if value and all(_argument(helper, site, n, self.names) for n in handed):
            yield self.names, value
            return
        test = self.names.scope_of(site)
        statement = self.names.parent(site)
        while statement is not None and not isinstance(statement, ast.stmt):
            statement = self.names.parent(statement)
        cases = _written_cases(test)
        if not cases or not isinstance(statement, ast.Assert) or self._under_raises(site):
            if value:
                yield self.names, value
            return
        for case in cases:
            names = CaseNames(self.names, test, case.values)  # type: ignore[arg-type]
            for asserted, stated_value in assert_states(statement, names):
                if asserted is site:
                    yield names, stated_value  # type: ignore[misc]
                    break

    def _helper_calls(self, name: str) -> list[ast.Call]:
        """The calls of the module's function ``name`` by that name, in the module's order."""
        return [
            node
            for node in walk_all(self.module.tree.body)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == name
        ]

    def _under_raises(self, node: ast.AST) -> bool:
        """Whether ``node`` runs inside ``with pytest.raises(...)``."""
        current = self.names.parent(node)
        while current is not None:
            if isinstance(current, (ast.With, ast.AsyncWith)) and any(
                isinstance(item.context_expr, ast.Call)
                and getattr(item.context_expr.func, "attr", "") in ("raises", "assertRaises")
                for item in current.items
            ):
                return True
            current = self.names.parent(current)
        return False

    def _test_of(self, node: ast.AST) -> str | None:
        """The test function ``node`` runs in (``Cls::test_x``), or None."""
        scope = self.names.scope_of(node)
        if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        owner = self.names.scope_of(scope)
        return f"{owner.name}::{scope.name}" if isinstance(owner, ast.ClassDef) else scope.name

    def asserted(self, call: ast.Call | None) -> tuple[object] | tuple[()]:
        """``(value,)`` where the test asserts ``call`` returns a plain value: ``assert
        call == 1536`` (either side; also arithmetic over names bound once, ``2 *
        block_size``), ``assert call is None``; a ``Truth`` where it asserts only that
        (``assert call``, ``assert not call``).  The ``assert`` whose test is the call, or
        holds it as an operand, says so (it lies in the statement the call was found in), and
        one on the local the call is bound to that runs whenever the call does
        (``asserted.result_asserts``).  Not inside ``pytest.raises``: there the test passes
        when the call raises, and the ``assert`` never runs."""
        if call is None or self._under_raises(call):
            return ()
        return self._states.get(call, ())

    def case_asserted(
        self, call: ast.Call | None, cases: tuple[str, ...]
    ) -> tuple[tuple[tuple[str, ...], tuple[object]], ...]:
        """``(case ids, (value,))``: the parametrize cases among ``cases`` (those the call's
        stand-ins are built on, ``Meeting.cases``) grouped by what each asserts the call
        returns, its test's parameters bound to the case's values (``CaseNames``): an
        ``assert`` holding the call, or one on the local its result is bound to that runs
        whenever the call does (``asserted.result_asserts``).  Only a call written in the
        parametrized test itself, outside ``pytest.raises``; only where the module's names
        alone state nothing (``asserted``); none for a case that states nothing."""
        if call is None or not cases or self.asserted(call) or self._under_raises(call):
            return ()
        test = self.names.scope_of(call)
        written = [c for c in _written_cases(test) if c.id in cases]
        statement = self.names.parent(call)
        while statement is not None and not isinstance(statement, ast.stmt):
            statement = self.names.parent(statement)
        holder = self.names.parent(statement) if statement is not None else None
        block = next(
            (
                value
                for value in (getattr(holder, f, None) for f in ("body", "orelse", "finalbody"))
                if isinstance(value, list) and any(s is statement for s in value)
            ),
            None,
        )
        if not written or block is None:
            return ()
        grouped: dict[tuple[type, object], tuple[tuple[str, ...], tuple[object]]] = {}
        for case in written:
            names = CaseNames(self.names, test, case.values)  # type: ignore[arg-type]
            value: tuple[object] | tuple[()] = ()
            if isinstance(statement, ast.Assert):
                value = next((v for a, v in assert_states(statement, names) if a is call), ())
            if not value:
                value = next(
                    (v for c, f, v in result_asserts(block, names) if c is call and f is None), ()
                )
            if not value:
                continue
            key = (type(value[0]), value[0])
            ids, _ = grouped.get(key, ((), value))
            grouped[key] = ((*ids, case.id), value)  # type: ignore[assignment]
        return tuple(grouped.values())

    def result_fields(self, call: ast.Call | None) -> tuple[tuple[str, object], ...]:
        """``(field, value)`` for each field of ``call``'s result an ``assert`` on the local
        the result is bound to states (``x = call(...)``, then ``assert x.ready``, ``assert
        x.n == 2``; ``asserted.result_asserts``): ``CallContext.result_fields``.  Not inside
        ``pytest.raises``, where the asserts need not run."""
        if call is None or self._under_raises(call):
            return ()
        return tuple(sorted((f, v[0]) for f, v in self._fields.get(call, {}).items()))

    def result_items(self, call: ast.Call | None) -> tuple[tuple[str, str], ...]:
        """``(items, field)`` for each list field of ``call``'s result of which an ``assert``
        on the local the result is bound to states an item's field true (``x = call(...)``,
        then ``assert x.requests[0].can_save``; ``asserted.result_item_asserts``):
        ``CallContext.result_items``.  Not inside ``pytest.raises``."""
        if call is None or self._under_raises(call):
            return ()
        return tuple(sorted(self._items.get(call, ())))

    def binding_at(self, line: int, text: str) -> ast.Call | None:
        """``types.MethodType(<text>, ns)`` or ``<text>.__get__(ns[, Cls])`` at ``line``."""
        for node in self._spanning(line):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name == "MethodType" and node.args and self._text(node.args[0]) == text:
                return node
            if name == "__get__" and self._text(func.value) == text:  # type: ignore[attr-defined]
                return node
        return None

    def called(self, binding: ast.Call) -> ast.Call | None:
        """The call of the bound method ``binding`` makes: in place (``bind(...)(x)``), or
        the first call of the local name it is assigned to, in the same function; where that
        function calls none and hands the object holding the method back (``ns.f =
        Cls.f.__get__(ns); return ns``), the first call of that field in a function of the
        module that gets the object (``_returned_field_calls``)."""
        if binding in self._applied:
            return self._applied[binding]
        scope = self._enclosing_function(binding)
        for stmt in walk(scope) if scope is not None else ():
            if isinstance(stmt, ast.Assign) and stmt.value is binding:
                # A local (``f = types.MethodType(...)``; ``f(x)``) or a field of an object
                # (``ns.f = types.MethodType(Cls.f, ns)``; ``ns.f(x)``), called by that name.
                names = {
                    ast.unparse(t) for t in stmt.targets if isinstance(t, (ast.Name, ast.Attribute))
                }
                later = [
                    node
                    for node in walk(scope)
                    if isinstance(node, ast.Call)
                    and isinstance(node.func, (ast.Name, ast.Attribute))
                    and self._text(node.func) in names
                    and (node.lineno, node.col_offset)
                    > (stmt.end_lineno or stmt.lineno, stmt.end_col_offset or 0)
                ]
                if later or scope is None:
                    return min(later, key=lambda n: (n.lineno, n.col_offset), default=None)
                return self._returned_field_call(scope, stmt.targets)
        return None

    def _returned_field_call(
        self, builder: ast.FunctionDef | ast.AsyncFunctionDef, targets: list[ast.expr]
    ) -> ast.Call | None:
        """``obj.f(...)`` where ``obj`` is what ``builder`` returns (or yields), a module-level
        function bound once, and ``f`` the field it set a bound method on: the first such call,
        in the module's order, of a local bound to ``builder(...)``'s result, or of a parameter
        named as ``builder`` where it is a fixture, or of a local bound to either by name
        (``runner = fixture_param``)."""
        fields = {
            (t.value.id, t.attr)
            for t in targets
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
        }
        handed = {
            node.value.id
            for node in walk(builder)
            if isinstance(node, (ast.Return, ast.Yield)) and isinstance(node.value, ast.Name)
        }
        wanted = {attr for holder, attr in fields if holder in handed}
        tree = self.module.tree
        self.names.link(self._roots(builder.lineno))
        if (
            not wanted
            or self.names.scope_of(builder) is not tree
            or self.names.bindings(tree).get(builder.name) != [builder]
        ):
            return None
        fixture = any(
            self._text(d.func if isinstance(d, ast.Call) else d).rpartition(".")[2] == "fixture"
            for d in builder.decorator_list
        )
        found: list[ast.Call] = []
        for shapes in self._field_call_shapes():
            function, built, aliased = shapes.function, shapes.built, shapes.aliased
            if function is builder:
                continue
            holders = {
                (node.targets[0].id, node.end_lineno or node.lineno)  # type: ignore[attr-defined]
                for node in built
                if node.value.func.id == builder.name  # type: ignore[attr-defined]
            }
            if fixture and builder.name in {a.arg for a in function.args.args}:
                holders.add((builder.name, 0))
            holders |= {
                (node.targets[0].id, node.end_lineno or node.lineno)  # type: ignore[attr-defined]
                for node in aliased
                if any(
                    node.value.id == name and node.lineno > after  # type: ignore[attr-defined]
                    for name, after in holders
                )
            }
            found.extend(
                node
                for node in shapes.field_calls
                if node.func.attr in wanted  # type: ignore[attr-defined]
                and any(
                    node.func.value.id == name and node.lineno > after  # type: ignore[attr-defined]
                    for name, after in holders
                )
            )
        return min(found, key=lambda n: (n.lineno, n.col_offset), default=None)

    def _field_call_shapes(self) -> list[_FieldCallShapes]:
        """Each function of the module (in ``ast.walk`` order) with, in its walk's order, its
        ``name = f(...)`` and ``name = other`` assignments and its ``name.f(...)`` calls: what
        ``_returned_field_call`` looks for, gathered in one walk of the module instead of three
        walks of every function per bound method asked about."""
        if self._shapes is None:
            self._shapes = []
            for function in walk_all(self.module.tree.body):
                if not isinstance(function, FUNCTION_DEFS):
                    continue
                built: list[ast.Assign] = []
                aliased: list[ast.Assign] = []
                field_calls: list[ast.Call] = []
                for node in walk(function):
                    if (
                        isinstance(node, ast.Assign)
                        and len(node.targets) == 1
                        and isinstance(node.targets[0], ast.Name)
                    ):
                        if isinstance(node.value, ast.Call) and isinstance(
                            node.value.func, ast.Name
                        ):
                            built.append(node)
                        elif isinstance(node.value, ast.Name):
                            aliased.append(node)
                    elif (
                        isinstance(node, ast.Call)
                        and isinstance(node.func, ast.Attribute)
                        and isinstance(node.func.value, ast.Name)
                    ):
                        field_calls.append(node)
                self._shapes.append(_FieldCallShapes(function, built, aliased, field_calls))
        return self._shapes

    def _enclosing_function(self, node: ast.AST) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The innermost ``def`` around ``node`` (a node ``binding_at`` found)."""
        parents: dict[ast.AST, ast.AST] = {}
        for root in self._roots(node.lineno):
            link_parents(root, parents)
        current = parents.get(node)
        while current is not None and not isinstance(
            current, (ast.FunctionDef, ast.AsyncFunctionDef)
        ):
            current = parents.get(current)
        return current


#: The nodes that may hold a statement list (``_blocks``).
_HOLDERS = (ast.stmt, ast.excepthandler, ast.match_case)
# Methods whose class may build, or answer, an attribute another way than its class body:
# an instance of a class defining one states no class attribute (``instance_constants``).
_SPECIAL = frozenset(
    {
        "__init__",
        "__new__",
        "__getattr__",
        "__getattribute__",
        "__setattr__",
        "__init_subclass__",
        "__set_name__",
        "__slots__",
        "__dict__",
    }
)


def _blocks(node: ast.AST) -> Iterable[list[ast.stmt]]:
    """The statement lists ``node`` holds (a body, an ``else``, a ``finally``)."""
    for name in ("body", "orelse", "finalbody"):
        block = getattr(node, name, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            yield block


class CaseNames(TestNames):
    """A test module's names as one parametrize case of ``function`` binds them: a parameter
    of the test it does not rebind stands for the case's value; any other name for what the
    module's text binds it to (``TestNames``, whose parents and bindings it shares)."""

    def __init__(
        self, names: TestNames, function: ast.FunctionDef, values: Mapping[str, ast.expr]
    ) -> None:
        self.__dict__.update(names.__dict__)
        self._function = function
        self._values = values

    def resolve(self, name: ast.Name) -> ast.expr | None:
        bound = self.bindings(self._function).get(name.id, ())
        if (
            name.id in self._values
            and self.scope_of(name) is self._function
            and len(bound) == 1
            and isinstance(bound[0], ast.arg)
        ):
            return self._values[name.id]
        return super().resolve(name)


def _written_cases(function: ast.AST) -> list[ParamCase]:
    """The cases of a test function parametrized by one ``pytest.mark.parametrize`` whose
    values are written out (``parametrize_values``); none for several (their cases combine)
    or for none."""
    if not isinstance(function, ast.FunctionDef):
        return []
    decorators = [
        d
        for d in function.decorator_list
        if isinstance(d, ast.Call) and getattr(d.func, "attr", None) == "parametrize"
    ]
    return parametrize_values(decorators[0]) if len(decorators) == 1 else []


def _argument(
    helper: ast.FunctionDef, site: ast.Call, name: str, names: TestNames
) -> tuple[object] | tuple[()]:
    """The plain value one call of ``helper`` gives its parameter ``name``: the argument in
    its place, else the parameter's default (``call_binding``)."""
    bound = call_binding(helper, site)
    return stated(bound[name], names) if bound is not None and name in bound else ()


def handed_key(meeting: Meeting) -> MeetingKey:
    """The ``HandedCall.key`` of the call a ``_handed`` meeting is filed in."""
    callee = meeting.callee
    assert callee is not None and callee.dotted is not None
    return (meeting.location.path, meeting.location.line, callee.text, callee.dotted, meeting.test)


def namespace_sites(
    standins: Iterable[StandIn], lines: Sequence[str] = ()
) -> Iterable[NamespaceSite]:
    """Each namespace the test builds (nested ones too) as ``stale_namespace_fields`` judges
    it.  Only the meetings the audit walks as a ``HandedCall`` are followed for stale fields
    (a function, a static or class method, a constructor, a method of an object the test
    built, handed the namespace as an argument); any other meeting (a stub's field or call,
    ``self``, a holder), a use the test makes that no meeting follows (``StandIn.loose``),
    fields set by names the text does not show (``opaque``), or a namespace the test may not
    build (``possible``) leaves its fields unjudged.  A nested namespace is met where its
    owner is, and is judged only where its owner is.  ``lines``: the test module's, whose
    ``# audit-stubs: ignore`` comments silence a field's warning on the line that builds the
    namespace or on the one that sets the field."""
    for root in standins:
        for site in _sites(root, (), frozenset(), frozenset(), owner_judged=True, nested=False):
            yield attrs.evolve(site, silenced=_silenced_fields(site, lines))


def _silenced_fields(site: NamespaceSite, lines: Sequence[str]) -> frozenset[str]:
    stale = Finding(FindingKind.STALE_FIELD, "", "", "", "", None, None)
    path = site.site.path
    if is_suppressed(suppressed_kinds(lines, site.site.line, path), stale):
        return frozenset(name for name, _ in site.set_at)
    return frozenset(
        name
        for name, where in site.set_at
        if where.path == path and is_suppressed(suppressed_kinds(lines, where.line, path), stale)
    )


def _sites(
    standin: StandIn,
    expects: tuple[MeetingKey, ...],
    loose: frozenset[tuple[str, ...]],
    reads: frozenset[tuple[str, ...]],
    owner_judged: bool,
    nested: bool,
) -> Iterable[NamespaceSite]:
    """``standin`` and the namespaces below it; ``expects``, ``loose`` and ``reads`` are
    what its owners' meetings and the test's uses of them say of it (paths from it)."""
    if standin.kind not in NAMESPACE_KINDS:
        return
    own = set(expects)
    eligible = owner_judged and not standin.opaque and not standin.possible
    for meeting in standin.meetings:
        if nested and meeting.how is MeetingHow.ATTRIBUTE and meeting.owner_kind in NAMESPACE_KINDS:
            continue  # its owner's meetings stand for it
        if _handed(meeting) and not meeting.via:
            own.add(handed_key(meeting))
        else:
            eligible = False
    loose = loose | standin.loose
    reads = reads | standin.test_reads
    if () in loose:
        eligible = False
    set_at: dict[str, Location] = {}
    for field in standin.fields:
        if field.name not in standin.dropped:
            set_at.setdefault(field.name, field.location)
    yield NamespaceSite(
        standin.location,
        standin.kind.value,
        tuple(set_at.items()),
        frozenset(path[0] for path in reads if path),
        frozenset(own),
        eligible,
        column=standin.column,
    )
    for field in standin.fields:
        below_loose = frozenset(p[1:] for p in loose if p[:1] == (field.name,))
        below_reads = frozenset(p[1:] for p in reads if p[:1] == (field.name,))
        for child in field.children:
            yield from _sites(
                child, tuple(own), below_loose, below_reads, owner_judged=eligible, nested=True
            )


def _namespaces_in(standin: StandIn, at: tuple[str, ...] = ()):
    """Each namespace of ``standin``'s tree with the fields that lead to it."""
    if standin.kind not in NAMESPACE_KINDS:
        return
    yield standin, at
    for field in standin.fields:
        for child in field.children:
            yield from _namespaces_in(child, (*at, field.name))


def _reached(standin: StandIn, at: tuple[str, ...] = ()):
    """Each namespace a handed object leads to through fields holding one stand-in (through
    a holder's fields too), with the fields that lead to it."""
    if standin.kind in NAMESPACE_KINDS:
        yield standin, at
    elif standin.kind is not StandInKind.HOLDER:
        return
    for field in standin.fields:
        if len(field.children) == 1 and not field.items:
            yield from _reached(field.children[0], (*at, field.name))


def _inert_bindings(standin: StandIn, handed: HandedCall) -> frozenset[tuple[tuple[str, ...], str]]:
    """``(via, name)`` of each method the test bound, before ``handed``'s call and on every
    path to it, on an object holding ``standin`` (``via``: the fields from that object to
    it) to a lambda whose body only names values (``holder.m = types.MethodType(lambda
    self, *_: n, holder)``): calling it runs no code that could change the namespace."""
    out: set[tuple[tuple[str, ...], str]] = set()
    for meeting in standin.meetings:
        if (
            meeting.how is MeetingHow.SELF
            and meeting.self_shape is SelfShape.METHOD_TYPE
            and meeting.via
            and meeting.location.path == handed.location.path
            and meeting.location.line < handed.location.line
            and set(meeting.arms) <= set(handed.arms)
            and not _other_tests(meeting.test, handed.test)
        ):
            name = _inert_lambda_set(handed.module.tree, meeting.location.line)
            if name is not None:
                out.add((meeting.via, name))
    return frozenset(out)


#: What an inert lambda's body may hold: evaluating it reads names and nothing else.
_INERT = (ast.Constant, ast.Name, ast.Tuple, ast.List, ast.Load)


def _inert_lambda_set(tree: ast.Module, line: int) -> str | None:
    """The field ``x.name = types.MethodType(lambda ...: body, x)`` sets, where that
    statement spans ``line`` and the lambda's body only names values (``_INERT``); None
    otherwise."""
    for node in _statements_at(tree, line):
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Attribute)
            and isinstance(node.value, ast.Call)
            and node.value.args
            and isinstance(node.value.args[0], ast.Lambda)
        ):
            continue
        func = node.value.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        body = node.value.args[0].body
        if name == "MethodType" and all(isinstance(n, _INERT) for n in walk(body)):
            return node.targets[0].attr
    return None


def namespace_reach(
    report, roots: Mapping[str, tuple[StandIn, ...]], handed: HandedCall, plain: bool = True
) -> list[Reach]:
    """What the walk of one ``HandedCall`` (``report``; None: not walked) may have changed of
    each namespace its parameters lead to (``Reach``): the links its text stores at or above
    the namespace's chain (``MethodReport.filled``), and whether it handed on (``escapes``)
    or called a method of an object at or above it, other than one the test bound there
    to an inert lambda (``_inert_bindings``).  None where the walk did not run (a namespace
    a call met unwalked may hold anything)."""
    if report is None or not report.walked:
        return []
    out: list[Reach] = []
    for name, given in roots.items():
        escaped = [path for root, path in report.escapes if root == name]
        filled = [path for root, path in report.filled if root == name]
        for standin in given:
            for node, at in _reached(standin):
                bound = _inert_bindings(node, handed)
                fills: set[str] = set()
                replaced = False
                called = False
                for path in filled:
                    owner, link = path[:-1], path[-1]
                    if at[: len(owner)] != owner:
                        continue  # an object beside or below the namespace
                    if link.startswith(CALLED):
                        inert = (at[len(owner) :], link[len(CALLED) :]) in bound
                        called = called or not inert
                    elif link == FILLS_ANY or (owner != at and at[len(owner)] == link):
                        replaced = True
                    elif owner == at:
                        fills.add(link)
                whole = plain and not called and not any(at[: len(e)] == e for e in escaped)
                out.append(
                    Reach(handed.key, node.location, node.column, frozenset(fills), replaced, whole)
                )
    return out


def joined_reach(found: Iterable[Reach]) -> dict[tuple, Reach]:
    """``StubStandIns.reach`` of the ``Reach`` records of a file's walks: one per call and
    namespace, what each of its arguments leading to the namespace may have done to it."""
    out: dict[tuple, Reach] = {}
    for reach in found:
        key = (reach.key, reach.site, reach.column)
        known = out.get(key)
        out[key] = (
            reach
            if known is None
            else attrs.evolve(
                known,
                fills=known.fills | reach.fills,
                replaced=known.replaced or reach.replaced,
                whole=known.whole and reach.whole,
            )
        )
    return out


def namespace_uses(
    report, roots: Mapping[str, tuple[StandIn, ...]], handed: HandedCall, plain: bool = True
) -> list[NamespaceUse]:
    """What the walk of one ``HandedCall`` (``report``; None: not walked) read of each
    namespace it was handed, nested ones included, on any branch (``ChainRead``s and
    ``touched``), and whether it handed one on where it could not follow (``escapes``: a
    chain at or above the namespace).  A namespace no parameter takes is not followed, nor
    any where the callee is not ``plain`` (a decorator or a ``__new__`` may look at it:
    ``readset._handovers.plain_function``, ``plainly_built``)."""
    out: list[NamespaceUse] = []
    walked = report is not None and report.walked and plain
    reads: set[tuple[str, tuple[str, ...]]] = set()
    escapes: frozenset[tuple[str, tuple[str, ...]]] = frozenset()
    if report is not None:
        reads = {(c.root, c.path) for c in report.chain_reads} | set(report.touched)
        escapes = report.escapes
    bound: set[int] = set()
    for name, given in roots.items():
        read = [path for root, path in reads if root == name]
        escaped = [path for root, path in escapes if root == name]
        for standin in given:
            bound.add(id(standin))
            for node, at in _namespaces_in(standin):
                fine = walked and not any(at[: len(e)] == e for e in escaped)
                fields = frozenset(
                    p[len(at)] for p in read if len(p) > len(at) and p[: len(at)] == at
                )
                out.append(
                    NamespaceUse(
                        node.location, handed.key, fields, fine, handed.dotted, node.column
                    )
                )
    for given in handed.passed:
        if id(given.standin) not in bound:
            for node, _ in _namespaces_in(given.standin):
                out.append(
                    NamespaceUse(
                        node.location, handed.key, frozenset(), False, handed.dotted, node.column
                    )
                )
    return out


def asserted_stores(
    stub: Stub, event: StubEvent, nested: Mapping[str, StandIn]
) -> frozenset[tuple[str, str]]:
    """``(field, name)`` for each field ``name`` that the ``assert``s right after a stub's
    call (``asserted.asserted_after``) load on a namespace the test set on the stub's
    ``field`` (or nested in it), where that namespace lacks ``name`` and the test module gives
    no object a field of that name (no store, keyword, string or computed ``setattr``): the
    test passes only where the call stored it (``CallContext.asserted_stores``)."""
    if event.expect_raise or not nested or event.location.path != stub.location.path:
        return frozenset()
    out: set[tuple[str, str]] = set()
    for chain in asserted_after(stub.module.tree, event.location.line, event.name):
        if len(chain) < 2 or chain[0] not in nested:
            continue
        holder: StandIn | None = nested[chain[0]]
        for link in chain[1:-1]:
            holder = _sole_child(holder, link) if holder is not None else None
        name = chain[-1]
        if (
            holder is None
            or holder.kind not in NAMESPACE_KINDS
            or holder.opaque
            or holder.possible
            or name in holder.field_names
            or name in _OBJECT_NAMES
            or name in _given_names(stub.module.tree)
        ):
            continue
        out.add((chain[0], name))
    return frozenset(out)


def _sole_child(standin: StandIn, link: str) -> StandIn | None:
    """The one stand-in ``standin``'s field ``link`` holds as its value, else None."""
    found = [f for f in standin.fields if f.name == link]
    if len(found) != 1 or found[0].items or len(found[0].children) != 1:
        return None
    return found[0].children[0]


@functools.lru_cache(maxsize=8)
def _given_names(tree: ast.Module) -> frozenset[str] | _Everything:
    """Every field name a test module may give an object it already holds: attributes it
    stores or deletes, string constants (``setattr(x, "f", v)``, ``vars(x)["f"] = v``), the
    keywords of a call that refills an object (``ns.__init__(f=v)``,
    ``m.configure_mock(f=v)``); everything where it calls ``setattr`` with a name it
    computes or reaches an object's ``__dict__``.  A keyword of any other call builds a new
    object (``SimpleNamespace(f=v)``, ``Response(f=v)``), which gives no field to one the
    test built before.  Once per module."""
    names: set[str] = set()
    for node in walk(tree):
        if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
            names.add(node.attr)
        elif isinstance(node, ast.Attribute) and node.attr == "__dict__":
            return _EVERYTHING
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.add(node.value)
        elif isinstance(node, ast.Call):
            called = getattr(node.func, "attr", getattr(node.func, "id", ""))
            if called in _SETTERS and not (
                len(node.args) > 1 and isinstance(node.args[1], ast.Constant)
            ):
                return _EVERYTHING
            if called == "vars":
                return _EVERYTHING
            if called in _REFILLS:
                if any(k.arg is None for k in node.keywords):
                    return _EVERYTHING
                names.update(k.arg for k in node.keywords if k.arg is not None)
    return frozenset(names)


class _Everything:
    """A set that holds every name (``_given_names`` of a module that computes one)."""

    def __contains__(self, name: object) -> bool:
        return True


_EVERYTHING = _Everything()
_SETTERS = frozenset({"setattr", "__setattr__"})
# Methods that give an object fields by keyword (``ns.__init__(f=v)``, a mock's
# ``configure_mock``, ``mock.patch.multiple``-like ``update``).
_REFILLS = frozenset({"__init__", "configure_mock", "update", "multiple"})
