"""Find ``object.__new__`` stubs in test files and what each one sets and calls.

A stub is an ``object.__new__(Cls)`` call.  Its *events* are, in source order, the attributes
the test puts on the object (plain and augmented assignment, ``setattr``/``monkeypatch.setattr``
/``patch.object`` with a literal name, ``__dict__.update``/``vars(x).update`` with a literal dict
or keywords) and the methods it calls on it (with the call's shape).  The object is followed
through local aliases and through helper functions that build and ``return`` it (also inside a
returned tuple), into every caller in the same module, and into a same-module helper it is
passed to (``_refresh(worker)``), whose sets and calls are the stub's too.  A stub handed to
other code *escapes*: its missing reads are still checked for the calls the test makes, but
stale-field warnings are suppressed, since something else may read those fields.  The test's own
loads of a stub field (``stub.x`` in an assertion or a closure the code calls back) are ``read``
events: a field the test itself reads is not stale.

The stub's class is a ``ClassRef`` (``ClassIndex.resolve_ref`` finds it in the tree).

Private modules, one job each: ``_scope`` (parent links, scopes, imports, callers), ``_cases``
(parametrize cases and the ``Bindings`` a stub is followed under), ``_class_choice`` (the
class, as a ``class_refs.ClassRef``), ``_follow`` (aliases, helpers, fixtures, callers),
``_events`` (sets, calls, reads, patches), ``_model`` (the ``Stub`` and ``StubEvent`` values),
``_syntax`` (small questions about AST nodes), ``_extractor`` (the pieces put together).

Stand-ins in general (``object.__new__`` stubs, ``types.SimpleNamespace``,
``argparse.Namespace``, mocks with a spec) and where they meet the code under test:
``_standin_model`` (the ``StandIn``, ``StandInField``, ``Meeting`` and ``Callee`` values),
``_standin_sites`` (which calls build one, the text pre-filter, callees through imports),
``_standin_index`` (a module's creation calls, which one a name holds, which are nested),
``_standin_meetings`` (a ``Meeting`` with what the test states around it),
``_standin_variants`` (the fields a creation states on each run: one stand-in per distinct
set, under a parametrize case's or a helper call's values), ``_standins``
(``StandInExtractor``: following them, with the pieces above).  ``audit-stubs --standins``
audits the namespaces and the spec'd mocks among them (``factories.analysis.standin_audit``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from factories.analysis.class_refs import (
    ClassRef,
    ExpressionClass,
    LocalClass,
    NamedClass,
    RegistryClass,
    UnsettledClass,
    ref_of_expression,
)
from factories.analysis.extraction._model import (
    EventKind,
    Stub,
    StubEvent,
    has_object_new,
    is_object_new,
)
from factories.analysis.extraction._syntax import str_literal

if TYPE_CHECKING:
    from factories.analysis.extraction._cases import (
        Bindings,
        CaseReader,
        ParamCase,
        parametrize_values,
        read_param_cases,
    )
    from factories.analysis.extraction._extractor import StubExtractor
    from factories.analysis.extraction._scope import ModuleScope
    from factories.analysis.extraction._standin_model import (
        ITSELF,
        SOMETIMES,
        Callee,
        Meeting,
        MeetingHow,
        SelfShape,
        StandIn,
        StandInField,
        StandInKind,
        arms_exclusive,
        census,
        census_sum,
    )
    from factories.analysis.extraction._standin_sites import might_hold_standins
    from factories.analysis.extraction._standins import StandInExtractor

#: What a run uses only when it reads test files, imported on first use (PEP 562): the stub
#: extractor and its cases (the own-specs audit builds its stubs from data), and the stand-in
#: half (the stub audit, which every pre-commit run starts, needs none of it).
_LAZY = {
    "Bindings": "_cases",
    "CaseReader": "_cases",
    "ParamCase": "_cases",
    "parametrize_values": "_cases",
    "read_param_cases": "_cases",
    "StubExtractor": "_extractor",
    "ModuleScope": "_scope",
    "Callee": "_standin_model",
    "ITSELF": "_standin_model",
    "SOMETIMES": "_standin_model",
    "Meeting": "_standin_model",
    "MeetingHow": "_standin_model",
    "SelfShape": "_standin_model",
    "StandIn": "_standin_model",
    "StandInField": "_standin_model",
    "StandInKind": "_standin_model",
    "arms_exclusive": "_standin_model",
    "census": "_standin_model",
    "census_sum": "_standin_model",
    "call_binding": "_class_choice",
    "might_hold_standins": "_standin_sites",
    "StandInExtractor": "_standins",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "ITSELF",
    "SOMETIMES",
    "Bindings",
    "Callee",
    "CaseReader",
    "ClassRef",
    "EventKind",
    "ExpressionClass",
    "LocalClass",
    "Meeting",
    "MeetingHow",
    "ModuleScope",
    "NamedClass",
    "ParamCase",
    "RegistryClass",
    "SelfShape",
    "StandIn",
    "StandInExtractor",
    "StandInField",
    "StandInKind",
    "Stub",
    "StubEvent",
    "StubExtractor",
    "UnsettledClass",
    "arms_exclusive",
    "call_binding",
    "census",
    "census_sum",
    "has_object_new",
    "is_object_new",
    "might_hold_standins",
    "parametrize_values",
    "read_param_cases",
    "ref_of_expression",
    "str_literal",
]
