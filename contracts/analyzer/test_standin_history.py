"""The namespace stand-in ground truth (``factories.evaluation.standin_history``) on inline tests.

Each history case is a pair of tiny test files (release N, release N+1) and the repairs the
matching rule must find: (scope, target, added fields).  The cases that must find none are as
important as those that must: a renamed function, a rewritten one, a brand-new stand-in, a
removed field, a formatting-only change, a name bound again before the set.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import attrs
import pytest

from factories.evaluation.standin_history import Matching, StandinSite, file_sites, match

HEADER = "from types import SimpleNamespace\n\n"


def _sites(tmp_path: Path, text: str, name: str = "test_a.py") -> list[StandinSite]:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return file_sites(path, f"tests/{name}")


def _matching(tmp_path: Path, old: str, new: str) -> Matching:
    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    before = {s.key: s for s in _sites(tmp_path / "old", HEADER + textwrap.dedent(old))}
    after = {s.key: s for s in _sites(tmp_path / "new", HEADER + textwrap.dedent(new))}
    return match(before, after)


HISTORY = {
    "keyword added": (
        """
        def test_x():
            cfg = SimpleNamespace(a=1)
            run(cfg)
        """,
        """
        def test_x():
            cfg = SimpleNamespace(a=1, b=2)
            run(cfg)
        """,
        {("test_x", "cfg", ("b",))},
    ),
    "later assignment and setattr added": (
        """
        class TestX:
            def test_y(self):
                self.cfg = SimpleNamespace(a=1)
                run(self.cfg)
        """,
        """
        class TestX:
            def test_y(self):
                self.cfg = SimpleNamespace(a=1)
                self.cfg.b = 2
                setattr(self.cfg, "c", 3)
                run(self.cfg)
        """,
        {("TestX.test_y", "self.cfg", ("b", "c"))},
    ),
    "literal **{...} key added": (
        """
        def test_x():
            run(cfg=SimpleNamespace(a=1))
        """,
        """
        def test_x():
            run(cfg=SimpleNamespace(a=1, **{"b": 2}))
        """,
        {("test_x", "run(cfg=)", ("b",))},
    ),
    "nested stand-in gains a field; its outer does not": (
        """
        def test_x():
            m = SimpleNamespace(prefill=SimpleNamespace(a=1), decode=None)
            run(m)
        """,
        """
        def test_x():
            m = SimpleNamespace(prefill=SimpleNamespace(a=1, b=2), decode=None)
            run(m)
        """,
        {("test_x", "m.prefill", ("b",))},
    ),
    "a one-line factory gains a field (not a rewrite)": (
        """
        def _make():
            return SimpleNamespace(a=1)
        """,
        """
        def _make():
            return SimpleNamespace(a=1, b=2)
        """,
        {("_make", "<return>", ("b",))},
    ),
    "renamed function: a new site": (
        """
        def test_old():
            cfg = SimpleNamespace(a=1)
            run(cfg)
        """,
        """
        def test_new():
            cfg = SimpleNamespace(a=1, b=2)
            run(cfg)
        """,
        set(),
    ),
    "rewritten function": (
        """
        def test_x():
            cfg = SimpleNamespace(a=1)
            run(cfg)
            check(cfg)
            assert cfg.a == 1
        """,
        """
        def test_x():
            cfg = SimpleNamespace(a=1, b=2)
            engine = start(cfg, mode="x")
            out = engine.step()
            assert out.ok
            engine.close()
        """,
        set(),
    ),
    "brand-new stand-in": (
        """
        def test_x():
            cfg = SimpleNamespace(a=1)
            run(cfg)
        """,
        """
        def test_x():
            cfg = SimpleNamespace(a=1)
            extra = SimpleNamespace(z=1)
            run(cfg)
            check(extra)
        """,
        set(),
    ),
    "field removed": (
        """
        def test_x():
            cfg = SimpleNamespace(a=1, b=2)
            cfg.c = 3
            run(cfg)
        """,
        """
        def test_x():
            cfg = SimpleNamespace(a=1)
            run(cfg)
        """,
        set(),
    ),
    "formatting only, keywords reordered": (
        """
        def test_x():
            cfg = SimpleNamespace(a=1, b=2)
            run(cfg)
        """,
        """
        def test_x():
            cfg = SimpleNamespace(
                b=2,
                a=1,
            )
            run(cfg)
        """,
        set(),
    ),
    "set after the name is bound again": (
        """
        def test_x():
            cfg = SimpleNamespace(a=1)
            run(cfg)
            cfg = other()
            run(cfg)
        """,
        """
        def test_x():
            cfg = SimpleNamespace(a=1)
            run(cfg)
            cfg = other()
            cfg.b = 2
            run(cfg)
        """,
        set(),
    ),
}


@pytest.mark.parametrize("case", sorted(HISTORY))
def test_repairs(tmp_path: Path, case: str) -> None:
    old, new, expected = HISTORY[case]
    matching = _matching(tmp_path, old, new)
    assert {(r.new.scope, r.new.target, r.fields) for r in matching.repairs} == expected
    assert matching.rewritten == (case == "rewritten function")


SITES = {
    "import aliases and an assigned alias": (
        """
        import argparse
        import types as t
        from types import SimpleNamespace as NS

        Short = NS

        def test_x():
            a = NS(x=1)
            b = t.SimpleNamespace(y=1)
            c = argparse.Namespace(model="m")
            d = Short(z=1)
        """,
        {
            ("test_x", "a", 0, ("x",)),
            ("test_x", "b", 0, ("y",)),
            ("test_x", "c", 0, ("model",)),
            ("test_x", "d", 0, ("z",)),
        },
    ),
    "a Namespace that is not the stdlib's is not a stand-in": (
        """
        from mylib import SimpleNamespace

        def test_x():
            a = SimpleNamespace(x=1)
            b = Namespace(y=1)
        """,
        set(),
    ),
    "nested, keyword-argument, positional, setattr and container targets": (
        """
        from types import SimpleNamespace

        class TestB:
            def test_y(self, monkeypatch):
                m = SimpleNamespace(prefill=SimpleNamespace(inner=SimpleNamespace(k=1)))
                Builder(config=SimpleNamespace(c=1))
                run(SimpleNamespace(p=1))
                monkeypatch.setattr(mod, "cfg", SimpleNamespace(s=1))
                items = [SimpleNamespace(i=1), SimpleNamespace(i=2)]
                return SimpleNamespace(r=1)
        """,
        {
            ("TestB.test_y", "m", 0, ("prefill",)),
            ("TestB.test_y", "m.prefill", 0, ("inner",)),
            ("TestB.test_y", "m.prefill.inner", 0, ("k",)),
            ("TestB.test_y", "Builder(config=)", 0, ("c",)),
            ("TestB.test_y", "run(#0)", 0, ("p",)),
            ("TestB.test_y", "mod.cfg", 0, ("s",)),
            ("TestB.test_y", "items[]", 0, ("i",)),
            ("TestB.test_y", "items[]", 1, ("i",)),
            ("TestB.test_y", "<return>", 0, ("r",)),
        },
    ),
    "later assignments, on a nested target too, stop at a new binding": (
        """
        from types import SimpleNamespace

        CFG = SimpleNamespace(a=1)
        CFG.b = 2

        def test_x(cfg=None):
            cfg = SimpleNamespace(a=1)
            cfg.b = 2
            cfg.inner = SimpleNamespace(k=1)
            cfg.inner.k2 = 3
            object.__setattr__(cfg, "c", 4)
            cfg = SimpleNamespace(a=2)
            cfg.d = 5
        """,
        {
            ("<module>", "CFG", 0, ("a", "b")),
            ("test_x", "cfg", 0, ("a", "b", "c", "inner")),
            ("test_x", "cfg.inner", 0, ("k", "k2")),
            ("test_x", "cfg", 1, ("a", "d")),
        },
    ),
}


@pytest.mark.parametrize("case", sorted(SITES))
def test_file_sites(tmp_path: Path, case: str) -> None:
    text, expected = SITES[case]
    found = {
        (s.scope, s.target, s.ordinal, tuple(n for n, _ in s.fields))
        for s in _sites(tmp_path, text)
    }
    assert found == expected


@attrs.frozen
class _Run:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def tool(capsys):
    """``bench_history.py --standins`` in this process (a subprocess per case cost 0.4 s of
    every plain ``pytest contracts/``); a bad input must end in ``SystemExit(2)`` or a return
    of 2."""
    from tools.bench_history import main

    def run(*args: str) -> _Run:
        try:
            status = main(["--standins", *args])
        except SystemExit as exc:
            status = exc.code
        out = capsys.readouterr()
        return _Run(status, out.out, out.err)

    return run


@pytest.mark.parametrize(
    "args",
    [
        ["--pairs", "1.1:1.0"],
        ["--pairs", "1.0-1.1"],
        ["--releases", "1.0"],
        ["--no-such-option"],
    ],
)
def test_cli_bad_input_is_one_line_and_exit_2(tmp_path: Path, args: list[str], tool) -> None:
    done = tool("--src-root", str(tmp_path), "--releases", "1.0,1.1", *args)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr


def test_cli_on_two_fake_releases(tmp_path: Path, tool) -> None:
    for version, fields in (("1.0", "a=1"), ("1.1", "a=1, b=2")):
        (tmp_path / version / "vllm").mkdir(parents=True)
        (tmp_path / version / "vllm" / "__init__.py").write_text("")
        (tmp_path / version / "tests").mkdir()
        (tmp_path / version / "tests" / "test_a.py").write_text(
            f"import types\n\ndef test_x():\n    c = types.SimpleNamespace({fields})\n"
        )
    missing = tool("--src-root", str(tmp_path), "--releases", "1.0,1.2", "--quiet")
    assert missing.returncode == 2 and "1.2" in missing.stderr
    out = tmp_path / "report.json"
    done = tool("--src-root", str(tmp_path), "--releases", "1.0,1.1", "--json", str(out), "--quiet")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    report = json.loads(out.read_text())
    assert report["totals"] == {
        "matched": 1,
        "new": 0,
        "rewritten": 0,
        "repaired_sites": 1,
        "added_fields": 1,
    }
    assert report["populations"]["1.1"]["types.SimpleNamespace"] == {"calls": 1, "files": 1}
    assert report["pairs"][0]["repair_list"][0]["fields"] == ["b"]


def test_list_repairs_without_standins_is_a_usage_error(capsys) -> None:
    from tools.bench_history import main

    with pytest.raises(SystemExit) as exit_info:
        main(["--list-repairs"])
    assert exit_info.value.code == 2
    assert "--standins" in capsys.readouterr().err
