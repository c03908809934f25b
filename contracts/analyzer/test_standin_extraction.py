"""Case table for the stand-in extraction: a test file's text, the stand-ins it builds.

Each case is a test module's text and the expected stand-ins, rendered one line per stand-in
(kind, line, class or spec, ``{fields}``, nested children indented under ``.field``) and one
``@`` line per meeting (how, the callee or owner, the argument's position or keyword, the line,
the test and its parametrize cases).  The object ``__new__`` stub extraction is not changed by
any of this (its own cases are in the other tables).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import attrs
import pytest

from factories.analysis.extraction import (
    Meeting,
    MeetingHow,
    StandIn,
    StandInExtractor,
    might_hold_standins,
)
from factories.analysis.source_tree import ModuleInfo


@attrs.frozen
class Case:
    id: str
    test: str
    expected: str


def render(standins: list[StandIn]) -> str:
    lines: list[str] = []

    def one(standin: StandIn, indent: str, prefix: str) -> None:
        head = f"{indent}{prefix}{standin.kind.name} L{standin.location.line}"
        if standin.class_ref is not None:
            head += f" class={standin.class_ref.text}"
        if standin.opaque:
            head += " opaque"
        if standin.dropped:
            head += " dropped=" + ",".join(sorted(standin.dropped))
        if standin.spec_names is not None:
            head += f" spec={list(standin.spec_names)}"
        if standin.autospec:
            head += " autospec"
        if standin.read:
            head += " read=" + ",".join(sorted(standin.read))
        fields = " ".join(
            f"{f.name}={f.value!r}" if f.has_value else f.name for f in standin.fields
        )
        lines.append(f"{head} {{{fields}}}")
        for field in standin.fields:
            for child in field.children:
                one(child, indent + "  ", f".{field.name} ")
        for meeting in standin.meetings:
            lines.append(f"{indent}  @ {_meeting(meeting)}")

    for standin in standins:
        one(standin, "", "")
    return "\n".join(lines)


def _meeting(m: Meeting) -> str:
    if m.how is MeetingHow.ATTRIBUTE:
        kind = m.owner_kind.name if m.owner_kind is not None else "?"
        text = f"attr {m.owner}.{m.field} ({kind})"
    else:
        callee = m.callee
        assert callee is not None
        text = f"{m.how.value} {callee.text}"
        if m.self_shape is not None:
            text = f"self {m.self_shape.name} {callee.text}"
        if callee.dotted is not None:
            text += f" ={callee.dotted}"
        if callee.stub_class is not None:
            text += f" stub={callee.stub_class.text}.{callee.method}"
        elif callee.method is not None:
            text += f" method={callee.method}"
        if callee.self_arg:
            text += " self-first"
        text += f" [{m.position}]" if m.position is not None else f" [{m.keyword}=]"
    text += f" L{m.location.line}"
    if m.test is not None:
        text += f" in {m.test}"
    if m.cases:
        text += "[" + ",".join(m.cases) + "]"
    if m.expect_raise:
        text += " raises"
    if m.patched:
        text += " patched=" + ",".join(t + ("!" if r else "") for t, r in m.patched)
    return text


CASES = [
    Case(
        "seed: fields of an object.__new__ stub and namespaces passed to its method",
        """
        from types import SimpleNamespace
        from vllm.x import Builder

        def _build(qo):
            builder = object.__new__(Builder)
            builder.mla_dims = SimpleNamespace(v_head_dim=128)
            prefill = SimpleNamespace(query_start_loc=qo, max_query_len=4)
            metadata = SimpleNamespace(prefill=prefill, num_decodes=0)
            common = SimpleNamespace(query_start_loc_cpu=qo)
            builder._build_ps(metadata, common)
            return metadata
        """,
        """
        OBJECT_NEW L6 class=Builder {mla_dims}
          .mla_dims SIMPLE_NAMESPACE L7 {v_head_dim=128}
            @ attr builder.mla_dims (OBJECT_NEW) L7
        SIMPLE_NAMESPACE L9 {prefill num_decodes=0}
          .prefill SIMPLE_NAMESPACE L8 {query_start_loc max_query_len=4}
            @ attr metadata.prefill (SIMPLE_NAMESPACE) L9
          @ argument builder._build_ps stub=Builder._build_ps [0] L11
        SIMPLE_NAMESPACE L10 {query_start_loc_cpu}
          @ argument builder._build_ps stub=Builder._build_ps [1] L11
        """,
    ),
    Case(
        "seed: a helper returns a nested namespace used as self",
        """
        from types import SimpleNamespace
        from vllm.x import Builder

        def _builder(n=2):
            stub = SimpleNamespace(
                num_heads=n,
                config=SimpleNamespace(mode=SimpleNamespace(full=True)),
            )
            return stub

        def test_decode():
            stub = _builder()
            Builder.decode(stub, 0, common=None)
        """,
        """
        SIMPLE_NAMESPACE L6 {num_heads=2 config}
          .config SIMPLE_NAMESPACE L8 {mode}
            .mode SIMPLE_NAMESPACE L8 {full=True}
              @ attr SimpleNamespace(...).mode (SIMPLE_NAMESPACE) L8 in test_decode
            @ attr stub.config (SIMPLE_NAMESPACE) L6 in test_decode
          @ self UNBOUND_CALL Builder.decode =vllm.x.Builder.decode [0] L14 in test_decode
        """,
    ),
    Case(
        "a helper's namespace is one per set of values its calls give it",
        """
        from types import SimpleNamespace
        from vllm.x import Builder

        def _builder(n=2, **extra):
            fields = dict(num_heads=n)
            fields.update(extra)
            return SimpleNamespace(**fields)

        def test_one():
            Builder.decode(_builder(), 0)

        def test_two():
            Builder.decode(_builder(4, mode=1), 0)

        def test_three():
            Builder.decode(_builder(n=2), 0)
        """,
        """
        SIMPLE_NAMESPACE L8 {num_heads=2}
          @ self UNBOUND_CALL Builder.decode =vllm.x.Builder.decode [0] L11 in test_one
          @ self UNBOUND_CALL Builder.decode =vllm.x.Builder.decode [0] L17 in test_three
        SIMPLE_NAMESPACE L8 {num_heads=4 mode=1}
          @ self UNBOUND_CALL Builder.decode =vllm.x.Builder.decode [0] L14 in test_two
        """,
    ),
    Case(
        "every spelling of self",
        """
        import types
        from types import SimpleNamespace
        from vllm.x import Builder

        _plan = Builder.plan

        def test_self():
            ns = SimpleNamespace(a=1)
            types.MethodType(Builder.build, ns)()
            Builder.build.__get__(ns)()
            Builder.size.fget(ns)
            _plan(self=ns)
            _plan(ns)
        """,
        """
        SIMPLE_NAMESPACE L9 {a=1}
          @ self METHOD_TYPE Builder.build =vllm.x.Builder.build [1] L10 in test_self
          @ self DESCRIPTOR_GET Builder.build =vllm.x.Builder.build [0] L11 in test_self
          @ self PROPERTY_FGET Builder.size =vllm.x.Builder.size [0] L12 in test_self
          @ self SELF_KEYWORD _plan =vllm.x.Builder.plan [self=] L13 in test_self
          @ self UNBOUND_CALL _plan =vllm.x.Builder.plan [0] L14 in test_self
        """,
    ),
    Case(
        "an argument next to self: a stub's, a namespace's; the patches around the call",
        """
        from types import SimpleNamespace
        from vllm.x import Bd

        def test_n(monkeypatch):
            from vllm import h
            monkeypatch.setattr(h, "p", None)
            stub = object.__new__(Bd)
            ns = SimpleNamespace(a=1)
            common = SimpleNamespace(b=2)
            Bd.m(stub, common)
            Bd.m(ns, common)
        """,
        """
        OBJECT_NEW L8 class=Bd {}
          @ self UNBOUND_CALL Bd.m =vllm.x.Bd.m [0] L11 in test_n patched=vllm.h.p
        SIMPLE_NAMESPACE L9 {a=1}
          @ self UNBOUND_CALL Bd.m =vllm.x.Bd.m [0] L12 in test_n patched=vllm.h.p
        SIMPLE_NAMESPACE L10 {b=2}
          @ argument Bd.m =vllm.x.Bd.m stub=Bd.m self-first [1] L11 in test_n patched=vllm.h.p
          @ argument Bd.m =vllm.x.Bd.m method=m self-first [1] L12 in test_n patched=vllm.h.p
        """,
    ),
    Case(
        "an argument by position and by keyword, inside pytest.raises",
        """
        import pytest
        import vllm.x as vx
        from types import SimpleNamespace

        def test_args():
            cfg = SimpleNamespace(block_size=16)
            alias = cfg
            vx.run(1, alias)
            with pytest.raises(ValueError):
                vx.Runner(config=cfg)
        """,
        """
        SIMPLE_NAMESPACE L7 {block_size=16}
          @ argument vx.run =vllm.x.run [1] L9 in test_args
          @ argument vx.Runner =vllm.x.Runner [config=] L11 in test_args raises
        """,
    ),
    Case(
        "returned by a fixture and by a helper's tuple; a helper it is passed to",
        """
        import pytest
        from types import SimpleNamespace
        from vllm.x import run

        @pytest.fixture
        def cfg():
            yield SimpleNamespace(a=1)

        def _pair():
            ns = SimpleNamespace(b=2)
            return 0, ns

        def _fill(target):
            target.c = 3

        def test_uses(cfg):
            run(cfg)
            _, other = _pair()
            _fill(other)
            run(x=other)
        """,
        """
        SIMPLE_NAMESPACE L8 {a=1}
          @ argument run =vllm.x.run [0] L18 in test_uses
        SIMPLE_NAMESPACE L11 {b=2 c=3}
          @ argument run =vllm.x.run [x=] L21 in test_uses
        """,
    ),
    Case(
        "a parametrize case holding a stand-in",
        """
        import pytest
        from types import SimpleNamespace
        from vllm.x import run

        @pytest.mark.parametrize(
            "cfg", [SimpleNamespace(a=1), SimpleNamespace(a=2)], ids=["one", "two"]
        )
        def test_cases(cfg):
            run(cfg)
        """,
        """
        SIMPLE_NAMESPACE L7 {a=1}
          @ argument run =vllm.x.run [0] L10 in test_cases[one]
        SIMPLE_NAMESPACE L7 {a=2}
          @ argument run =vllm.x.run [0] L10 in test_cases[two]
        """,
    ),
    Case(
        "a plain MagicMock is no stand-in",
        """
        from unittest.mock import MagicMock
        from vllm.x import run

        def test_plain():
            m = MagicMock()
            m.rank = 0
            run(m)
        """,
        "",
    ),
    Case(
        "mocks with a spec, argparse and create_autospec",
        """
        import argparse
        from unittest import mock
        from unittest.mock import Mock, create_autospec
        from vllm.x import Worker, run

        def test_mocks():
            m = Mock(spec=Worker, rank=0, return_value=None)
            m.device = "cpu"
            Worker.start(m)
            a = create_autospec(Worker, instance=True)
            run(a)
            create_autospec(Worker)
            s = mock.MagicMock(spec_set=Worker)
            run(s)
            args = argparse.Namespace(model="m", tp=2)
            run(args)
        """,
        """
        SPEC_MOCK L8 class=vllm.x.Worker {rank=0 device='cpu'}
          @ self UNBOUND_CALL Worker.start =vllm.x.Worker.start [0] L10 in test_mocks
        SPEC_MOCK L11 class=vllm.x.Worker autospec {}
          @ argument run =vllm.x.run [0] L12 in test_mocks
        SPEC_MOCK L14 class=vllm.x.Worker {}
          @ argument run =vllm.x.run [0] L15 in test_mocks
        ARGPARSE_NAMESPACE L16 {model='m' tp=2}
          @ argument run =vllm.x.run [0] L17 in test_mocks
        """,
    ),
    Case(
        "a mock's own setters, patch.object, the names the test reads, a list spec",
        """
        from unittest.mock import Mock, patch
        from vllm.x import Worker, run

        def test_mocks(other):
            m = Mock(spec=Worker)
            m.configure_mock(r=1, **{"d.i": 0})
            m.attach_mock(other, "c")
            with patch.object(m, "p", 8):
                run(m)
            m.s.assert_called_once()
            names = Mock(spec=["a", "b"])
            run(names)
            grown = Mock(spec=Worker)
            grown.mock_add_spec(["x"])
            run(grown)
        """,
        """
        SPEC_MOCK L6 class=vllm.x.Worker read=attach_mock,configure_mock,d,s {r=1 c p=8}
          @ argument patch.object =unittest.mock.patch.object [0] L9 in test_mocks patched=m.p
          @ argument run =vllm.x.run [0] L10 in test_mocks patched=m.p
        SPEC_MOCK L12 spec=['a', 'b'] {}
          @ argument run =vllm.x.run [0] L13 in test_mocks patched=m.p
        SPEC_MOCK L14 class=vllm.x.Worker opaque read=mock_add_spec {}
          @ argument run =vllm.x.run [0] L16 in test_mocks patched=m.p
        """,
    ),
    Case(
        "fields from **literal, vars().update, setattr; computed names make it opaque",
        """
        from types import SimpleNamespace

        def test_fields(opts, keys):
            ns = SimpleNamespace(**{"a": 1}, b=2)
            vars(ns).update({"c": 3}, d=4)
            ns.__dict__.update(e=5)
            setattr(ns, "f", 6)
            ns.g += 1
            hidden = SimpleNamespace(**opts)
            for k in keys:
                setattr(ns, k, 0)
        """,
        """
        SIMPLE_NAMESPACE L5 opaque {b=2 a=1 d=4 c=3 e=5 f=6 g}
        SIMPLE_NAMESPACE L10 opaque {}
        """,
    ),
    Case(
        "fields the test deletes again, by del or delattr, on some runs or all",
        """
        from types import SimpleNamespace

        def test_dropped(flag):
            ns = SimpleNamespace(a=1, b=2, c=3)
            if flag:
                del ns.a
            delattr(ns, "b")
        """,
        """
        SIMPLE_NAMESPACE L5 dropped=a,b {a=1 b=2 c=3}
        """,
    ),
    Case(
        "a namespace set on another one, and handed to a stub's field by setattr",
        """
        from types import SimpleNamespace
        from vllm.x import Builder

        def test_nest(monkeypatch):
            outer = SimpleNamespace()
            outer.inner = SimpleNamespace(k=1)
            stub = object.__new__(Builder)
            cfg = SimpleNamespace(z=0)
            monkeypatch.setattr(stub, "cfg", cfg, raising=False)
        """,
        """
        SIMPLE_NAMESPACE L6 {inner}
          .inner SIMPLE_NAMESPACE L7 {k=1}
            @ attr outer.inner (SIMPLE_NAMESPACE) L7 in test_nest
        OBJECT_NEW L8 class=Builder {cfg}
          .cfg SIMPLE_NAMESPACE L9 {z=0}
            @ attr stub.cfg (OBJECT_NEW) L10 in test_nest
        """,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_standins(case: Case):
    text = textwrap.dedent(case.test).lstrip("\n")
    text = "\n" + text  # line 1 is blank: the case's lines count from its first line
    assert might_hold_standins(text) or not case.expected
    module = ModuleInfo.from_source("test_mod", Path("test_mod.py"), text, False)
    got = render(StandInExtractor(module).standins())
    assert got == textwrap.dedent(case.expected).strip()


def test_prefilter_skips_files_without_stand_ins():
    assert not might_hold_standins("from unittest.mock import MagicMock\nm = MagicMock()\n")
    assert might_hold_standins("m = Mock(spec=Worker)\n")
    assert might_hold_standins("ns = types.SimpleNamespace()\n")
