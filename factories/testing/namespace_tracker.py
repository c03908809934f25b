"""Namespace stand-ins that remember what vLLM code read from them (issue 19, item 5).

Why: ``audit-stubs --standins`` says "vLLM reads ``common.num_actual_tokens`` but the
``SimpleNamespace`` the test builds at ``tests/x.py:12`` has no ``num_actual_tokens``".  Running
the test answers it: the namespace built there either raises ``AttributeError`` inside vLLM
code (the audit should have named it) or a passing test reads the field successfully (the
audit's error is a false alarm).  ``factories.testing.stub_tracker`` rewrites every
``SimpleNamespace(...)`` / ``argparse.Namespace(...)`` call of the test modules into
``build(kind, path, line, ...)`` here, which returns an instance of a subclass that records:

* per built-at site and test id, each attribute name first read from it by code whose frame
  lies in the package under test (``vllm``; ``$JUDGE_STUBS_PACKAGE`` for this project's
  fixtures), with the ``file:line`` of that read, and
* each ``AttributeError`` raised on it from that code: name, ``file:line``, whether the read was
  an attribute load (``ns.x``, ``ns.x()``) or a builtin call (``getattr``/``hasattr``, which
  usually carry a default or a fallback), and whether that error is the one that ended the
  test (set by the plugin from the test's report).

Why a subclass and only ``__getattribute__``/``__getattr__``: ``SimpleNamespace`` is a builtin
whose instances cannot be watched otherwise, and a subclass keeps ``isinstance`` true, equality
(compares ``vars()`` with any namespace), ``vars()`` (the site lives in a slot, not in the
``__dict__``), ``repr`` (rewritten to the base's spelling) and ``type(ns).__name__`` as they
were.  Copies and pickles stay tracked stand-ins of the same site (``__reduce__`` names this
module, which imports only the standard library, so a worker process can unpickle them).  Cost:
a successful read already recorded for the current test returns after two comparisons; the
caller's frame is looked at only for a name not yet recorded, and a file's "in the package?"
answer is cached.
"""

from __future__ import annotations

import argparse
import dis
import importlib.util
import os
import reprlib
import sys
import types
from typing import Any

PACKAGE_ENV = "JUDGE_STUBS_PACKAGE"
OUTSIDE_TEST = "<outside a test>"
SIMPLE_NAMESPACE = "types.SimpleNamespace"
ARGPARSE_NAMESPACE = "argparse.Namespace"
# the attribute-load opcodes (3.11: LOAD_METHOD; 3.12+: LOAD_ATTR with the method bit,
# LOAD_SUPER_ATTR); any other instruction reading an attribute is a call of a builtin
_LOADS = frozenset(
    dis.opmap[name] for name in ("LOAD_ATTR", "LOAD_METHOD", "LOAD_SUPER_ATTR") if name in dis.opmap
)
_MESSAGES = {
    SIMPLE_NAMESPACE: "'types.SimpleNamespace' object has no attribute {!r}",
    ARGPARSE_NAMESPACE: "'Namespace' object has no attribute {!r}",
}


class NamespaceRecord:
    """What happened to the namespaces built at one site; mutable, one per (kind, site)."""

    __slots__ = ("created_in", "errors", "kind", "names", "reads", "site", "test")

    def __init__(self, kind: str, site: str) -> None:
        self.kind = kind
        self.site = site
        self.created_in: dict[str, int] = {}
        self.reads: dict[str, dict[str, str]] = {}  # name -> test -> first "file:line"
        self.errors: dict[tuple[str, str, str, str], dict[str, Any]] = {}
        self.test = OUTSIDE_TEST  # ``names``: what the current test has read from the package
        self.names: set[str] = set()

    def to_json(self, outcome_of: Any) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "site": self.site,
            "created_in": dict(self.created_in),
            "reads": {name: dict(tests) for name, tests in sorted(self.reads.items())},
            "attribute_errors": [
                {**entry, "outcome": outcome_of(entry["test"])} for entry in self.errors.values()
            ],
        }


class _State:
    """This process's record; ``test`` is kept current by the pytest plugin."""

    def __init__(self) -> None:
        self.test = OUTSIDE_TEST
        self.records: dict[tuple[str, str], NamespaceRecord] = {}
        self.package: str | None = None  # the package's folder (with a separator) or file
        self.inside: dict[str, str] = {}  # co_filename -> path from the package's parent, or ""

    def record(self, kind: str, site: str) -> NamespaceRecord:
        record = self.records.get((kind, site))
        if record is None:
            record = self.records[(kind, site)] = NamespaceRecord(kind, site)
        return record

    def where(self, frame: Any) -> str | None:
        """``vllm/x.py:12`` when ``frame`` runs code of the package under test, else None."""
        filename = frame.f_code.co_filename
        rel = self.inside.get(filename)
        if rel is None:
            rel = self.inside[filename] = self._relative(filename)
        return f"{rel}:{frame.f_lineno}" if rel else None

    def _relative(self, filename: str) -> str:
        if self.package is None:
            self.package = _package_files(os.environ.get(PACKAGE_ENV) or "vllm")
        path = os.path.abspath(filename)
        if not self.package or not path.startswith(self.package):
            return ""
        return os.path.relpath(path, os.path.dirname(self.package.rstrip(os.sep)))


def _package_files(name: str) -> str:
    """``/site-packages/vllm/`` for ``vllm`` (found without importing it), the file of a plain
    module; "" when it is not installed."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return ""
    if spec is None:
        return ""
    if spec.submodule_search_locations:
        return os.path.abspath(next(iter(spec.submodule_search_locations))) + os.sep
    return os.path.abspath(spec.origin) if spec.origin else ""


STATE = _State()


def _record_of(ns: object) -> NamespaceRecord | None:
    try:
        return object.__getattribute__(ns, "_judge_record")
    except AttributeError:  # built by ``type(ns)(...)``: no site, not tracked
        return None


class _Tracking:
    """The two hooks, shared by both tracked kinds (each adds the ``_judge_record`` slot)."""

    __slots__ = ()

    def __getattribute__(self, name: str) -> Any:
        value = object.__getattribute__(self, name)
        if name[:2] == "__":
            return value
        record = _record_of(self)
        if record is None:
            return value
        if record.test is not STATE.test:
            record.test, record.names = STATE.test, set()
        elif name in record.names:
            return value
        where = STATE.where(sys._getframe(1))
        if where is not None:
            record.names.add(name)
            tests = record.reads.get(name)
            if tests is None:
                tests = record.reads[name] = {}
            tests.setdefault(STATE.test, where)
        return value

    def __getattr__(self, name: str) -> Any:
        record = _record_of(self)
        kind = record.kind if record is not None else SIMPLE_NAMESPACE
        error = AttributeError(_MESSAGES[kind].format(name), name=name, obj=self)
        if record is not None and name[:2] != "__":
            frame = sys._getframe(1)
            where = STATE.where(frame)
            if where is not None:
                how = "attribute" if frame.f_code.co_code[frame.f_lasti] in _LOADS else "call"
                key = (STATE.test, name, where, how)
                entry = record.errors.get(key)
                if entry is None:
                    entry = record.errors[key] = {
                        "name": name,
                        "location": where,
                        "how": how,
                        "test": STATE.test,
                        "count": 0,
                        "ended_test": False,
                    }
                entry["count"] += 1
                error._judge_namespace_error = entry  # type: ignore[attr-defined]
        raise error

    def __reduce__(self) -> tuple[Any, ...]:
        record = _record_of(self)
        site = (record.kind, record.site) if record is not None else (_kind_of(self), "")
        return (rebuild, site, dict(vars(self)))


def _kind_of(ns: object) -> str:
    return ARGPARSE_NAMESPACE if isinstance(ns, argparse.Namespace) else SIMPLE_NAMESPACE


class TrackedSimpleNamespace(_Tracking, types.SimpleNamespace):
    __slots__ = ("_judge_record",)

    @reprlib.recursive_repr("namespace(...)")
    def __repr__(self) -> str:
        items = vars(self)
        if not all(isinstance(key, str) for key in items):
            return super().__repr__()
        return "namespace(" + ", ".join(f"{k}={v!r}" for k, v in items.items()) + ")"


class TrackedArgparseNamespace(_Tracking, argparse.Namespace):
    __slots__ = ("_judge_record",)

    def __repr__(self) -> str:
        return repr(argparse.Namespace(**vars(self)))  # a self-cycle recurses, as it does there


# the names vLLM code or a test may print or compare (``type(ns).__name__``)
for _cls, _name, _module in (
    (TrackedSimpleNamespace, "SimpleNamespace", "types"),
    (TrackedArgparseNamespace, "Namespace", "argparse"),
):
    _cls.__name__ = _cls.__qualname__ = _name
    _cls.__module__ = _module
_CLASSES = {SIMPLE_NAMESPACE: TrackedSimpleNamespace, ARGPARSE_NAMESPACE: TrackedArgparseNamespace}


def build(kind: str, path: str, line: int, *args: Any, **kwargs: Any) -> Any:
    """What ``SimpleNamespace(*args, **kwargs)`` written at ``path:line`` becomes."""
    ns = _CLASSES[kind](*args, **kwargs)
    record = STATE.record(kind, f"{path}:{line}")
    object.__setattr__(ns, "_judge_record", record)
    record.created_in[STATE.test] = record.created_in.get(STATE.test, 0) + 1
    return ns


def rebuild(kind: str, site: str, fields: dict[str, Any] | None = None) -> Any:
    """A copy or an unpickled namespace: a stand-in of the same site (not counted as built)."""
    ns = _CLASSES[kind]()
    if site:
        object.__setattr__(ns, "_judge_record", STATE.record(kind, site))
    if fields:
        vars(ns).update(fields)
    return ns


def ended_test(error: BaseException) -> bool:
    """Mark the namespace error ``error`` as the one that ended the test; False if it is none."""
    entry = getattr(error, "_judge_namespace_error", None)
    if entry is None:
        return False
    entry["ended_test"] = True
    return True


def builds_standins(text: str) -> bool:
    """Whether a module's text may build an ``object.__new__`` stub or a namespace stand-in: a
    cheap test for which modules to rewrite (the rewrite itself resolves the names)."""
    return "object.__new__(" in text or "Namespace" in text


def to_json(outcome_of: Any) -> list[dict[str, Any]]:
    return [record.to_json(outcome_of) for record in STATE.records.values()]
