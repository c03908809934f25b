"""The namespace stand-in ground truth (``factories.evaluation.standin_history``) on inline tests.

Each history case is a pair of tiny test files (release N, release N+1) and the repairs the
matching rule must find: (scope, target, added fields).  The cases that must find none are as
important as those that must: a renamed function, a rewritten one, a brand-new stand-in, a
removed field, a formatting-only change, a name bound again before the set.  The recall cases
hand ``StandinFindings`` one finding on one stand-in of a small file and say whether it names
an added field there (by an error, at any level); the CLI case runs the audit end to end on
two fake releases whose ``vllm/`` starts reading a field.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import attrs
import pytest

from factories.analysis.extraction import StandInExtractor
from factories.analysis.findings import Finding, FindingKind, Location
from factories.analysis.source_tree import SourceTree
from factories.evaluation.standin_history import (
    FieldVerdict,
    Matching,
    Repair,
    StandinFindings,
    StandinSite,
    extraction_view,
    file_sites,
    match,
    still_flagged,
)

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


# 1.0 -> 1.1: ``Builder.run`` starts reading ``self.cfg.b`` and 1.1's test adds ``b`` to the
# namespace it sets on the stub (a repair the audit names by an error); ``helper`` starts
# reading ``ns.d`` and the namespace passed to it gains ``d`` (a module-level function: the
# audit does not follow it, a miss with no finding).
FAKE_SOURCE = {
    "1.0": "class Builder:\n    def run(self):\n        return self.cfg.a\n\n"
    "def helper(ns):\n    return ns.c\n",
    "1.1": "class Builder:\n    def run(self):\n        return self.cfg.a + self.cfg.b\n\n"
    "def helper(ns):\n    return ns.c + ns.d\n",
}
FAKE_TEST = """from types import SimpleNamespace
from vllm.mod import Builder, helper

def test_x():
    b = object.__new__(Builder)
    b.cfg = SimpleNamespace({cfg})
    b.run()

def test_y():
    ns = SimpleNamespace({ns})
    helper(ns)
"""


def _fake_releases(root: Path) -> None:
    for version, cfg, ns in (("1.0", "a=1", "c=1"), ("1.1", "a=1, b=2", "c=1, d=2")):
        (root / version / "vllm").mkdir(parents=True)
        (root / version / "vllm" / "__init__.py").write_text("")
        (root / version / "vllm" / "mod.py").write_text(FAKE_SOURCE[version])
        (root / version / "tests").mkdir()
        (root / version / "tests" / "test_a.py").write_text(FAKE_TEST.format(cfg=cfg, ns=ns))


def test_cli_on_two_fake_releases(tmp_path: Path, tool) -> None:
    _fake_releases(tmp_path)
    missing = tool("--src-root", str(tmp_path), "--releases", "1.0,1.2", "--quiet")
    assert missing.returncode == 2 and "1.2" in missing.stderr
    out = tmp_path / "report.json"
    done = tool(
        "--src-root", str(tmp_path), "--releases", "1.0,1.1", "--json", str(out), "--quiet",
        "--list-misses",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    report = json.loads(out.read_text())
    totals = report["totals"]
    assert {k: totals[k] for k in ("matched", "repaired_sites", "added_fields")} == {
        "matched": 2,
        "repaired_sites": 2,
        "added_fields": 2,
    }
    assert (totals["named"], totals["named_any"], totals["named_pct"]) == (2, 2, 100.0)
    assert (totals["still_flagged"], totals["own_errors"]) == (0, 0)
    assert report["populations"]["1.1"]["types.SimpleNamespace"] == {"calls": 2, "files": 1}
    verdicts = {
        v["field"]: v["named"] for r in report["pairs"][0]["repair_list"] for v in r["verdicts"]
    }
    assert verdicts == {"b": True, "d": True}  # ``d``: a namespace passed to a vLLM function
    assert "no finding on this stand-in" not in done.stdout


def test_list_repairs_without_standins_is_a_usage_error(capsys) -> None:
    from tools.bench_history import main

    with pytest.raises(SystemExit) as exit_info:
        main(["--list-repairs"])
    assert exit_info.value.code == 2
    assert "--standins" in capsys.readouterr().err


# ------------------------------------------------------------------ recall: the matching rule

# Line 4: ``cfg``; 5: ``other``; 6: ``m`` and ``m.p`` (nested on one line); 7: a plain call.
RECALL_TEST = """def test_x():
    cfg = SimpleNamespace(a=1)
    other = SimpleNamespace(a=1)
    m = SimpleNamespace(p=SimpleNamespace(q=1), r=2)
    run(cfg, other, m)
"""
E, N, S = (
    FindingKind.MISSING_FIELD,
    FindingKind.POSSIBLY_MISSING_ATTRIBUTE,
    FindingKind.MISSING_ATTRIBUTE,
)
STALE = FindingKind.STALE_FIELD
# The stub sides a finding may state: the namespace's fields, or a replayed ``self``'s.
A, Q, PR, UNSET = (
    "types.SimpleNamespace(a)",
    "types.SimpleNamespace(q)",
    "types.SimpleNamespace(p, r)",
    "not set",
)

# id: (finding kind, name, line of its stub side, stub side, its file (test_X.py), repaired
# site's target, added field, (named by an error, named at any level))
RECALL = {
    "an error names the field on the stand-in": (E, "cfg.b", 4, A, "a", "cfg", "b", (True, True)),
    "a chain's last link is the field": (E, "self.cfg.b", 4, A, "a", "cfg", "b", (True, True)),
    "another field": (E, "cfg.c", 4, A, "a", "cfg", "b", (False, False)),
    "the field only as an inner link": (E, "cfg.b.c", 4, A, "a", "cfg", "b", (False, False)),
    "another stand-in of the same file": (E, "other.b", 5, A, "a", "cfg", "b", (False, False)),
    "the same line in another file": (E, "cfg.b", 4, A, "b", "cfg", "b", (False, False)),
    "a note names it": (N, "cfg.b", 4, A, "a", "cfg", "b", (False, True)),
    "a namespace made self": (S, "b", 4, UNSET, "a", "cfg", "b", (True, True)),
    "a stub's finding off the stand-in lines": (S, "b", 7, UNSET, "a", "cfg", "b", (False, False)),
    "a stale field is not a missing one": (STALE, "b", 4, "", "a", "cfg", "b", (False, False)),
    "one line, inner's finding, on the inner": (E, "m.p.b", 6, Q, "a", "m.p", "b", (True, True)),
    "one line, inner's finding, not the outer": (E, "m.p.b", 6, Q, "a", "m", "b", (False, False)),
    "one line, outer's finding, on the outer": (E, "m.b", 6, PR, "a", "m", "b", (True, True)),
    "one line, outer's finding, not the inner": (E, "m.b", 6, PR, "a", "m.p", "b", (False, False)),
    "one line, made self: a site lacking it": (S, "r", 6, UNSET, "a", "m.p", "r", (True, True)),
    "one line, made self: not one that has it": (S, "r", 6, UNSET, "a", "m", "r", (False, False)),
}  # fmt: skip


def _finding(kind: FindingKind, name: str, path: Path, line: int, side: str) -> Finding:
    return Finding(kind, "Builder", "run", name, "", None, Location(str(path), line), side)


@pytest.mark.parametrize("case", sorted(RECALL))
def test_findings_name_repairs(tmp_path: Path, case: str) -> None:
    kind, name, line, side, file, target, field, expected = RECALL[case]
    (tmp_path / "tests").mkdir()
    sites = _sites(tmp_path / "tests", HEADER + RECALL_TEST)
    site = next(s for s in sites if s.target == target)
    finding = _finding(kind, name, tmp_path / "tests" / f"test_{file}.py", line, side)
    found = StandinFindings.of([finding], tmp_path, sites)
    assert (found.names(site, field), found.names(site, field, any_level=True)) == expected


def _repair(tmp_path: Path, field: str) -> tuple[Repair, StandinFindings]:
    """``cfg`` of ``RECALL_TEST`` repaired by ``field``, with an index of no findings."""
    (tmp_path / "tests").mkdir(exist_ok=True)
    sites = _sites(tmp_path / "tests", HEADER + RECALL_TEST)
    cfg = next(s for s in sites if s.target == "cfg")
    return Repair(cfg, cfg, (field,)), StandinFindings.of([], tmp_path, sites)


# id: (named, named at any level, fields other findings name, the reason printed)
WHY = {
    "named": (True, True, (), ""),
    "a note only": (False, True, (), "only a note names it (a read not placed on the test's path)"),
    "other fields": (False, False, ("x", "y"), "flagged for other fields only (x, y)"),
    "nothing": (False, False, (), "no finding on this stand-in"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(WHY))
def test_why_a_field_is_missed(tmp_path: Path, case: str) -> None:
    named, named_any, others, why = WHY[case]
    repair, _ = _repair(tmp_path, "b")
    assert FieldVerdict(repair, "b", named, named_any, others).why == why


# id: (field the repair adds, the own audit's finding: kind and name, flagged)
FLAGGED = {
    "an error on the added field": ("b", E, "cfg.b", True),
    "an error on another field": ("b", E, "cfg.c", False),
    "a note on the added field": ("b", N, "cfg.b", False),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(FLAGGED))
def test_still_flagged_at_n1(tmp_path: Path, case: str) -> None:
    field, kind, name, expected = FLAGGED[case]
    repair, _ = _repair(tmp_path, field)
    sites = _sites(tmp_path / "tests", HEADER + RECALL_TEST)
    own = StandinFindings.of(
        [_finding(kind, name, tmp_path / "tests" / "test_a.py", 4, A)], tmp_path, sites
    )
    matching = Matching(1, 0, 0, (repair,))
    assert still_flagged(matching, own) == ((repair.new.key,) if expected else ())


# ------------------------------------------------------------------ misses: the extraction's view

VIEW_HEAD = (
    "import types\nfrom types import SimpleNamespace\nfrom vllm.mod import Builder, helper\n"
)
FOLLOWED = "followed into vLLM code, the read not found"

B, NS = "b = object.__new__(Builder)\n", "ns = SimpleNamespace(a=1)\n"
ARG = "met only as an argument of"
NESTED = "b.cfg = SimpleNamespace(\n  p=SimpleNamespace(a=1))\n"

# id: (the test's body, target of the site asked about, the view)
VIEWS = {
    "passed to a stub's method": (B + NS + "b.run(ns)", "ns", FOLLOWED),
    "set on a stub's field": (B + "b.cfg = SimpleNamespace(a=1)\nb.run()", "b.cfg", FOLLOWED),
    "made self": (NS + "Builder.run(ns)", "ns", FOLLOWED),
    "nested in one set on a stub": (B + NESTED + "b.run()", "b.cfg.p", FOLLOWED),
    "passed to a vLLM function": (NS + "helper(ns)", "ns", FOLLOWED),
    "passed to code outside vLLM": (NS + "imported_elsewhere(ns)", "ns", f"{ARG} other code"),
    "self by MethodType": (NS + "types.MethodType(Builder.run, ns)()", "ns", FOLLOWED),
    "used by the test alone": (NS + "assert ns.a", "ns", "meets no code in its module"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(VIEWS))
def test_extraction_view_of_a_missed_stand_in(tmp_path: Path, case: str) -> None:
    body, target, expected = VIEWS[case]
    (tmp_path / "vllm").mkdir()
    (tmp_path / "vllm" / "__init__.py").write_text("")
    (tmp_path / "vllm" / "mod.py").write_text(
        "class Builder:\n    def run(self, x=None):\n        return 0\n\n"
        "def helper(ns):\n    return ns.a\n"
    )
    test = VIEW_HEAD + "\ndef test_x():\n"
    test += textwrap.indent(body, "    ") + "\n"
    (tmp_path / "tests").mkdir()
    path = tmp_path / "tests" / "test_a.py"
    path.write_text(test)
    site = next(s for s in file_sites(path, "tests/test_a.py") if s.target == target)
    tree = SourceTree(tmp_path)
    standins = StandInExtractor(tree.load(tree.module_name_for(path), path)).standins()
    assert extraction_view(standins, site) == expected


def test_extraction_view_of_a_returned_stand_in_the_extraction_does_not_follow() -> None:
    site = StandinSite("tests/t.py", "_make", "<return>", 0, 3, "types.SimpleNamespace", (), ())
    assert extraction_view([], site) == "the extraction does not find it"
