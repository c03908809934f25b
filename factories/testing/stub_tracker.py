"""pytest plugin: watch every ``object.__new__`` stub while vLLM's own tests run.

Why: a static audit says "this stub will fail on the path the test takes"; only running the
test says whether it does.  This plugin records, per stub (class, creation site ``file:line``),
the methods really called on it and every ``AttributeError`` raised by an attribute read on it,
with the test id and the test's outcome, so ``tools/judge_stubs_by_running.py`` can judge the
audit's errors against what happened.

How, chosen to change the code under test as little as possible:

* ``object`` is an immutable builtin, so ``object.__new__`` cannot be wrapped in place.  The
  plugin instead rewrites the call in the test modules' AST, inside pytest's own assertion
  rewriting (which already parses every test module and conftest): ``object.__new__(C, ...)``
  becomes ``__judge_stub_new__(file, line, C, ...)``, which calls the real ``object.__new__``
  and remembers the object.  The stub keeps its real class (no dynamic subclass: ``type(x) is
  C`` checks, pickling and ``__class__`` stay true).  pytest's cached rewritten ``.pyc`` files
  are bypassed so that no run without the plugin can hide a stub.
* Method calls are seen by a ``sys.settrace`` hook that maps a frame's code object to a method
  of a stub's class (computed once per class from its MRO) and checks that the frame's first
  argument *is* a tracked object; only those frames get a local tracer, which sees the
  ``exception`` events that carry ``AttributeError.obj``.  The hook is installed when the
  first stub is built (a Python-level call on every function call would otherwise slow down
  every file, most of which build none); threads started before that are not traced.
  Attribute errors that end a test
  are also read from its report (including ``monkeypatch.setattr`` on a missing name).
* Namespace stand-ins (issue 19, item 5): ``SimpleNamespace(...)`` and ``argparse.Namespace(...)``
  calls, however the test module imports them (``from types import SimpleNamespace as NS``,
  ``import types as t``), become ``__judge_namespace_new__(kind, file, line, ...)`` in the same
  rewrite; ``factories.testing.namespace_tracker`` builds a tracking subclass that records the
  names vLLM code reads from it and the ``AttributeError``s it raises there.  Such an error
  that ends a test (in the chain of the test's failure) is marked ``ended_test``.
* On CPU torch vLLM's conftest cleanup calls ``torch.accelerator.empty_cache()`` and
  ``empty_host_cache()``, which raise without an accelerator; they are made no-ops when they do.

Activated with ``-p factories.testing.stub_tracker``; the JSON goes to ``$JUDGE_STUBS_OUT``.
Imports only the standard library and pytest (it runs in the venv of the vLLM under test).
"""

from __future__ import annotations

import ast
import builtins
import functools
import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any, ClassVar

import pytest

from factories.analysis._walk import walk
from factories.testing import namespace_tracker

NEW_NAME = "__judge_stub_new__"
NAMESPACE_NEW_NAME = "__judge_namespace_new__"
OUT_ENV = "JUDGE_STUBS_OUT"
ROOT_ENV = "JUDGE_STUBS_ROOT"  # files below it that build stubs or namespaces are rewritten too
OUTSIDE_TEST = namespace_tracker.OUTSIDE_TEST
EXIT_GRACE_S = 20.0


# ------------------------------------------------------------------ the AST rewrite


class _NewCallRewriter(ast.NodeTransformer):
    """``object.__new__(...)`` -> ``__judge_stub_new__(path, line, ...)``."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.count = 0

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "__new__"
            and isinstance(func.value, ast.Name)
            and func.value.id == "object"
        ):
            site = [ast.Constant(self.path), ast.Constant(node.lineno)]
            node.func = ast.copy_location(ast.Name(NEW_NAME, ast.Load()), func)
            node.args = [ast.copy_location(arg, node) for arg in site] + node.args
            self.count += 1
        return node


class _NamespaceCallRewriter(ast.NodeTransformer):
    """``SimpleNamespace(...)`` -> ``__judge_namespace_new__(kind, path, line, ...)``.

    The names are the module's own: every ``from types import SimpleNamespace [as X]`` and
    ``import types [as t]`` anywhere in it (``argparse.Namespace`` likewise), so a local class
    or variable of another name is never mistaken for one.
    """

    KINDS: ClassVar[dict[tuple[str, str], str]] = {
        ("types", "SimpleNamespace"): namespace_tracker.SIMPLE_NAMESPACE,
        ("argparse", "Namespace"): namespace_tracker.ARGPARSE_NAMESPACE,
    }

    def __init__(self, path: str, tree: ast.Module) -> None:
        self.path = path
        self.count = 0
        self.names: dict[str, str] = {}  # ``NS`` -> kind
        self.modules: dict[str, str] = {}  # ``t`` -> ``types``
        for node in walk(tree):
            if isinstance(node, ast.ImportFrom) and not node.level:
                for alias in node.names:
                    kind = self.KINDS.get((node.module or "", alias.name))
                    if kind is not None:
                        self.names[alias.asname or alias.name] = kind
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in ("types", "argparse"):
                        self.modules[alias.asname or alias.name] = alias.name

    def _kind(self, func: ast.expr) -> str | None:
        if isinstance(func, ast.Name):
            return self.names.get(func.id)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            module = self.modules.get(func.value.id)
            return self.KINDS.get((module, func.attr)) if module else None
        return None

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        kind = self._kind(node.func)
        if kind is not None:
            site = [ast.Constant(kind), ast.Constant(self.path), ast.Constant(node.lineno)]
            node.func = ast.copy_location(ast.Name(NAMESPACE_NEW_NAME, ast.Load()), node.func)
            node.args = [ast.copy_location(arg, node) for arg in site] + node.args
            self.count += 1
        return node


def _install_rewrite() -> None:
    """Hook the rewrite into pytest's assertion rewriting and bypass its pyc cache."""
    from _pytest.assertion import rewrite

    original = rewrite.rewrite_asserts

    @functools.wraps(original)
    def rewrite_asserts(mod, source, module_path=None, config=None):  # type: ignore[no-untyped-def]
        if module_path is not None and b"object.__new__" in source:
            _NewCallRewriter(str(module_path)).visit(mod)
            ast.fix_missing_locations(mod)
        if module_path is not None and b"Namespace" in source:
            _NamespaceCallRewriter(str(module_path), mod).visit(mod)
            ast.fix_missing_locations(mod)
        return original(mod, source, module_path, config)

    rewrite.rewrite_asserts = rewrite_asserts
    rewrite._read_pyc = lambda *args, **kwargs: None  # a cached pyc may lack the rewrite
    rewrite._write_pyc = lambda *args, **kwargs: False  # and ours must not be cached
    root = os.environ.get(ROOT_ENV)
    if not root:
        return
    hook = rewrite.AssertionRewritingHook
    early, should = hook._early_rewrite_bailout, hook._should_rewrite

    def early_rewrite_bailout(self, name, state):  # type: ignore[no-untyped-def]
        return early(self, name, state) and not name.startswith("tests")

    def should_rewrite(self, name, fn, state):  # type: ignore[no-untyped-def]
        return should(self, name, fn, state) or _builds_standins(fn, root)

    hook._early_rewrite_bailout = early_rewrite_bailout
    hook._should_rewrite = should_rewrite


@functools.cache
def _builds_standins(fn: str, root: str) -> bool:
    """Helper modules (not named ``test_*``) that build stubs or namespaces are rewritten too."""
    if not os.path.abspath(fn).startswith(os.path.abspath(root) + os.sep):
        return False
    try:
        text = Path(fn).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return namespace_tracker.builds_standins(text)


# ------------------------------------------------------------------ the record


class _Tracker:
    """Everything observed in this process; one instance, module-global."""

    def __init__(self) -> None:
        self.stubs: dict[tuple[str, str, int], dict[str, Any]] = {}
        self.objects: dict[int, tuple[object, dict[str, Any]]] = {}
        self.codes: dict[Any, str] = {}
        self.classes_seen: set[type] = set()
        self.seen_errors: dict[int, BaseException] = {}
        self.tests: dict[str, dict[str, Any]] = {}
        self.test = OUTSIDE_TEST
        self.tracing = False
        self.last_test: str | None = None
        self.lock = threading.RLock()

    def track(self, obj: object, cls: type, path: str, line: int) -> None:
        key = (f"{cls.__module__}.{cls.__qualname__}", path, line)
        with self.lock:
            stub = self.stubs.get(key)
            if stub is None:
                stub = self.stubs[key] = {
                    "class": key[0],
                    "site": f"{path}:{line}",
                    "created_in": {},
                    "methods": {},
                    "attribute_errors": [],
                }
            stub["created_in"][self.test] = stub["created_in"].get(self.test, 0) + 1
            self.objects[id(obj)] = (obj, stub)  # a strong ref: ids are never reused
            if cls not in self.classes_seen:
                self.classes_seen.add(cls)
                for klass in cls.__mro__[:-1]:
                    for attr, value in vars(klass).items():
                        for code in _codes_of(value):
                            self.codes.setdefault(code, f"{klass.__qualname__}.{attr}")

    def stub_of(self, obj: object) -> dict[str, Any] | None:
        entry = self.objects.get(id(obj))
        return entry[1] if entry is not None and entry[0] is obj else None

    def called(self, stub: dict[str, Any], method: str) -> None:
        tests = stub["methods"].setdefault(method, {})
        tests[self.test] = tests.get(self.test, 0) + 1

    def attribute_error(self, error: AttributeError, stub: dict[str, Any], method: str) -> None:
        if id(error) in self.seen_errors:
            return
        self.seen_errors[id(error)] = error
        stub["attribute_errors"].append(
            {"name": error.name, "method": method, "test": self.test, "message": str(error)}
        )

    def to_json(self) -> dict[str, Any]:
        stubs = []
        for stub in self.stubs.values():
            out = dict(stub)
            out["methods"] = {
                name: {"tests": sorted(tests), "outcomes": self._outcomes(tests)}
                for name, tests in sorted(stub["methods"].items())
            }
            out["attribute_errors"] = [
                {**e, "outcome": self.tests.get(e["test"], {}).get("outcome", "unknown")}
                for e in stub["attribute_errors"]
            ]
            stubs.append(out)
        namespaces = namespace_tracker.to_json(self._outcome_of)
        return {"stubs": stubs, "namespaces": namespaces, "tests": self.tests}

    def _outcome_of(self, test: str) -> str:
        return self.tests.get(test, {}).get("outcome", "unknown")

    def _outcomes(self, tests: dict[str, int]) -> dict[str, int]:
        counts: dict[str, int] = {}
        for test in tests:
            outcome = self.tests.get(test, {}).get("outcome", "unknown")
            counts[outcome] = counts.get(outcome, 0) + 1
        return counts


def _codes_of(value: object) -> list[Any]:
    """Code objects a class attribute runs as a method (unwrapping decorators)."""
    if isinstance(value, (staticmethod, classmethod)):
        return []
    if isinstance(value, property):
        candidates = [value.fget, value.fset, value.fdel]
    else:
        candidates = [getattr(value, "func", None), value]  # functools.cached_property
    codes = []
    for func in candidates:
        seen = 0
        while func is not None and seen < 10:
            code = getattr(func, "__code__", None)
            if code is not None and code.co_argcount > 0:
                codes.append(code)
            func = getattr(func, "__wrapped__", None)
            seen += 1
    return codes


TRACKER = _Tracker()


def _tracked_new(path: str, line: int, cls: type, *args: Any, **kwargs: Any) -> Any:
    obj = object.__new__(cls, *args, **kwargs)
    if isinstance(cls, type):
        TRACKER.track(obj, cls, path, line)
        if not TRACKER.tracing:
            _start_tracing()
    return obj


def _global_trace(frame: Any, event: str, arg: Any) -> Any:
    if event != "call":
        return None
    method = TRACKER.codes.get(frame.f_code)
    if method is None:
        return None
    stub = TRACKER.stub_of(frame.f_locals.get(frame.f_code.co_varnames[0]))
    if stub is None:
        return None
    TRACKER.called(stub, method)
    frame.f_trace_lines = False

    def local_trace(frame: Any, event: str, arg: Any) -> Any:
        if event == "exception" and isinstance(arg[1], AttributeError):
            target = TRACKER.stub_of(getattr(arg[1], "obj", None))
            if target is not None:
                TRACKER.attribute_error(arg[1], target, method)
        return local_trace

    return local_trace


def _from_report(excinfo: Any) -> None:
    """An AttributeError that ended the test phase, if raised on a stub (or by monkeypatch)."""
    error = excinfo.value
    seen: set[int] = set()
    while isinstance(error, BaseException) and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, AttributeError) and not namespace_tracker.ended_test(error):
            _attribute_error_in_traceback(error)
        error = error.__cause__ or error.__context__


def _attribute_error_in_traceback(error: AttributeError) -> None:
    stub = TRACKER.stub_of(getattr(error, "obj", None))
    tb = error.__traceback__
    last = None
    while tb is not None:
        last = tb.tb_frame
        tb = tb.tb_next
    if stub is not None:
        method = last.f_code.co_qualname if last is not None else "?"
        TRACKER.attribute_error(error, stub, TRACKER.codes.get(last and last.f_code, method))
        return
    if last is not None and last.f_code.co_qualname == "MonkeyPatch.setattr":
        stub = TRACKER.stub_of(last.f_locals.get("target"))
        name = last.f_locals.get("name")
        if stub is not None and isinstance(name, str):
            error.name = error.name or name
            TRACKER.attribute_error(error, stub, "monkeypatch.setattr")


# ------------------------------------------------------------------ output


def _write() -> None:
    out = os.environ.get(OUT_ENV)
    if not out:
        return
    with TRACKER.lock:
        data = TRACKER.to_json()
    tmp = f"{out}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1, default=str)
    os.replace(tmp, out)


def _on_term(signum: int, frame: Any) -> None:  # the runner's per-file timeout
    TRACKER.tests.setdefault(TRACKER.test, {})["outcome"] = "timeout"
    _write()
    os._exit(124)


def _quiet_empty_cache() -> None:
    """``torch.accelerator.empty_*`` raise on CPU torch; vLLM's cleanup calls them."""
    accelerator = getattr(sys.modules.get("torch"), "accelerator", None)
    for name in ("empty_cache", "empty_host_cache"):
        original = getattr(accelerator, name, None)
        if original is None or getattr(original, "_judge_quiet", False):
            continue
        setattr(accelerator, name, _quiet(original))


def _quiet(original: Any) -> Any:
    @functools.wraps(original)
    def quiet(*args: Any, **kwargs: Any) -> None:
        try:
            original(*args, **kwargs)
        except RuntimeError:  # no accelerator on CPU torch: nothing to empty
            pass

    quiet._judge_quiet = True  # type: ignore[attr-defined]
    return quiet


# ------------------------------------------------------------------ pytest hooks

_install_rewrite()
builtins.__judge_stub_new__ = _tracked_new  # type: ignore[attr-defined]
builtins.__judge_namespace_new__ = namespace_tracker.build  # type: ignore[attr-defined]


def _start_tracing() -> None:
    """From now on every new frame of every thread passes ``_global_trace``; the frames on
    the stack (the test calling ``object.__new__``) are not methods of a stub."""
    TRACKER.tracing = True
    sys.settrace(_global_trace)
    threading.settrace(_global_trace)


def pytest_configure(config: pytest.Config) -> None:
    _quiet_empty_cache()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_term)


def pytest_collection_finish(session: pytest.Session) -> None:
    _quiet_empty_cache()  # the conftests imported torch by now
    TRACKER.last_test = session.items[-1].nodeid if session.items else None
    if TRACKER.tracing and sys.gettrace() is not _global_trace:  # another tool took it
        sys.settrace(_global_trace)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    TRACKER.test = namespace_tracker.STATE.test = nodeid
    TRACKER.tests[nodeid] = {"outcome": "passed", "phases": {}}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Any:
    outcome = yield
    report = outcome.get_result()
    if call.excinfo is not None:
        _from_report(call.excinfo)
    test = TRACKER.tests.setdefault(item.nodeid, {"outcome": "passed", "phases": {}})
    test["phases"][report.when] = report.outcome
    if report.failed:
        test["outcome"] = "failed" if report.when == "call" else "error"
    elif report.skipped and test["outcome"] == "passed":
        test["outcome"] = "xfailed" if hasattr(report, "wasxfail") else "skipped"


@pytest.hookimpl(trylast=True)
def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    TRACKER.test = namespace_tracker.STATE.test = OUTSIDE_TEST
    if nodeid == TRACKER.last_test and os.environ.get(OUT_ENV):
        timer = threading.Timer(EXIT_GRACE_S, _exit_after_tests)
        timer.daemon = True
        timer.start()


def _exit_after_tests() -> None:
    """The last test and every fixture (session ones too) are done, and pytest has not exited
    ``EXIT_GRACE_S`` later: write the record and leave.  Why: some vLLM test files hang after
    their tests (a process group or worker thread that never finishes) until the runner's
    per-file timeout; the record is complete already, the wait would only cost time."""
    print(
        f"[judge] pytest still running {EXIT_GRACE_S:.0f} s after its last test: exiting",
        file=sys.stderr,
        flush=True,
    )
    _write()
    failed = any(t.get("outcome") in ("failed", "error") for t in TRACKER.tests.values())
    os._exit(1 if failed else 0)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _write()
