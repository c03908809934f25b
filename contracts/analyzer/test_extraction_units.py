"""Case tables for two pieces of the stub extraction that need no vLLM release: how a class
expression becomes a ``ClassRef`` and how ``ClassIndex.resolve_ref`` finds it in a tree, and
how parametrize decorators become ``ParamCase`` values with pytest's ids."""

from __future__ import annotations

import ast
import textwrap

import pytest

from factories.analysis.classes import ClassIndex, ClassInfo, Unknown
from factories.analysis.extraction import (
    ExpressionClass,
    LocalClass,
    NamedClass,
    RegistryClass,
    StubExtractor,
    UnsettledClass,
    read_param_cases,
    ref_of_expression,
)
from factories.analysis.source_tree import SourceTree

_VLLM_X = """
class Worker: ...
class Nccl: ...
class Hub:
    table = {}
    @classmethod
    def register(cls, key, klass):
        cls.table[key] = klass
Hub.register("nccl", Nccl)
"""


@pytest.mark.parametrize(
    ("expr", "ref"),
    [
        ("Worker", NamedClass("Worker")),
        ("mod.Worker", NamedClass("mod.Worker")),
        ('Hub.table["nccl"]', RegistryClass("Hub", "table", "nccl", called=False)),
        ('pkg.Hub.table["nccl"]()', RegistryClass("pkg.Hub", "table", "nccl", called=True)),
        ('Hub.table["nccl"](1)', ExpressionClass("Hub.table['nccl'](1)")),
        ("Hub.table[key]", ExpressionClass("Hub.table[key]")),
        ("Worker.__mro__[1]", ExpressionClass("Worker.__mro__[1]")),
        ("make_class()", ExpressionClass("make_class()")),
    ],
)
def test_class_expression_as_ref(expr, ref):
    node = ast.parse(expr, mode="eval").body
    assert ref_of_expression(node) == ref
    assert ref.text == ast.unparse(node)  # the text findings spell, as before


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        (NamedClass("Worker"), "vllm.x.Worker"),
        (NamedClass("x.Worker"), "vllm.x.Worker"),
        (NamedClass("vllm.x.Worker"), "vllm.x.Worker"),
        (NamedClass("Missing"), None),
        (RegistryClass("Hub", "table", "nccl", called=True), "vllm.x.Nccl"),
        (RegistryClass("Hub", "table", "gloo"), Unknown),
        (ExpressionClass("Worker.__mro__[1]"), None),
        (UnsettledClass("worker_cls", why="no case settles it"), Unknown),
        (UnsettledClass("Worker", why="no case settles it"), "vllm.x.Worker"),
    ],
)
def test_resolve_ref(tmp_path, ref, expected):
    (tmp_path / "vllm").mkdir()
    (tmp_path / "vllm" / "__init__.py").write_text("")
    (tmp_path / "vllm" / "x.py").write_text(_VLLM_X)
    tree = SourceTree(tmp_path)
    test = tmp_path / "test_w.py"
    test.write_text("from vllm import x\nfrom vllm.x import Worker, Hub\n")
    found = ClassIndex(tree).resolve_ref(ref, tree.load("test_w", test))
    if expected is Unknown:
        assert isinstance(found, Unknown)
    elif expected is None:
        assert found is None
    else:
        assert isinstance(found, ClassInfo) and found.qualname == expected


def test_local_class_resolves_to_the_test_s_own_class(tmp_path):
    test = tmp_path / "test_local.py"
    test.write_text(
        textwrap.dedent(
            """
            def test_x(flag):
                class Local: ...
                cls = Local
                object.__new__(cls)
            """
        )
    )
    tree = SourceTree(tmp_path)
    module = tree.load("test_local", test)
    [stub] = StubExtractor(module).stubs()
    assert isinstance(stub.class_ref, LocalClass) and stub.class_expr == "Local"
    found = ClassIndex(tree).resolve_ref(stub.class_ref, module)
    assert isinstance(found, ClassInfo) and found.qualname == "test_local.test_x.<locals>.Local"


@pytest.mark.parametrize(
    ("decorators", "cases"),
    [
        ('@pytest.mark.parametrize("n", [0, 1])', [("0", {"n": "0"}), ("1", {"n": "1"})]),
        ('@pytest.mark.parametrize("a,b", [(1, "x")])', [("1-x", {"a": "1", "b": "'x'"})]),
        (
            '@pytest.mark.parametrize(("a", "b"), [[-1, None]])',
            [("-1-None", {"a": "-1", "b": "None"})],
        ),
        (
            '@pytest.mark.parametrize("n", [0, 1], ids=["p", "q"])',
            [("p", {"n": "0"}), ("q", {"n": "1"})],
        ),
        ('@pytest.mark.parametrize("n", [pytest.param(3, id="three")])', [("three", {"n": "3"})]),
        ('@pytest.mark.parametrize("k", [Kind.A])', [(None, {"k": "Kind.A"})]),
        ('@pytest.mark.parametrize("n", [0], ids=str)', []),
        ('@pytest.mark.parametrize("n", VALUES)', []),
        ('@pytest.mark.parametrize("unused", [0, 1])', []),
        (
            '@pytest.mark.parametrize("a", [0, 1])\n@pytest.mark.parametrize("n", [2])',
            [("2-0", {"n": "2", "a": "0"}), ("2-1", {"n": "2", "a": "1"})],
        ),
        ('@pytest.mark.parametrize("n", list(range(17)))', []),
        ('@pytest.mark.parametrize("n", [' + ", ".join(map(str, range(17))) + "])", []),
    ],
)
def test_param_cases(decorators, cases):
    source = f"{decorators}\ndef test_x(n, a=None, b=None, k=None):\n    return n, a, b, k\n"
    func = ast.parse(source).body[0]
    read = read_param_cases(func)
    assert [(c.id, {k: ast.unparse(v) for k, v in c.values.items()}) for c in read] == cases
