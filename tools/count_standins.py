#!/usr/bin/env python3
"""Count the stand-ins a tests folder builds and where they meet the code under test.

A probe of ``factories.analysis.extraction.StandInExtractor`` on a whole test tree (vLLM's
``tests/``): stand-ins by kind, meetings by how (each spelling of ``self``; arguments by what
the callee is; attributes by owner), nested and opaque stand-ins, files, and the run time.
Reads text only (no torch, no vLLM import).  Exit 2 with one line on bad input.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from factories.analysis.extraction import (
    MeetingHow,
    StandInExtractor,
    StandInKind,
    might_hold_standins,
)
from factories.analysis.source_tree import ModuleInfo
from factories.errors import GuardError


def count(tests: Path) -> tuple[Counter, Counter, dict[str, set], Counter]:
    """Over every ``*.py`` under ``tests``: stand-ins by kind and flag, meetings by how, the
    distinct places of each how (stand-ins other than ``object.__new__`` stubs; a helper's
    call reached from many tests is one place), files."""
    standins: Counter = Counter()
    meetings: Counter = Counter()
    places: dict[str, set] = {}
    files: Counter = Counter()
    for path in sorted(tests.rglob("*.py")):
        files["seen"] += 1
        data = path.read_bytes()
        if not might_hold_standins(data.decode("utf-8", errors="replace")):
            continue
        files["parsed"] += 1
        try:
            module = ModuleInfo.from_source(path.stem, path, data, path.name == "__init__.py")
        except GuardError:
            files["unparsable"] += 1
            continue
        found = StandInExtractor(module).standins()
        if found:
            files["with stand-ins"] += 1
        for root in found:
            reaches = _reaches_code(root)
            for standin in root.walk():
                if reaches:
                    standins[f"{standin.kind.name} reaching code"] += 1
                standins[standin.kind.name] += 1
                standins["nested" if standin is not root else "top-level"] += 1
                standins["opaque"] += standin.opaque
                if any(m.how is not MeetingHow.ATTRIBUTE for m in standin.meetings):
                    standins["handed to code (self/argument)"] += 1
                for meeting in standin.meetings:
                    key = _meeting_key(meeting)
                    meetings[key] += 1
                    if standin.kind is not StandInKind.OBJECT_NEW:
                        places.setdefault(key, set()).add(meeting.location)
    return standins, meetings, places, files


def _reaches_code(root) -> bool:
    """Whether a stand-in, or one it is nested in or nests, is handed to code (as ``self`` or
    an argument) or set on an ``object.__new__`` stub."""
    return any(
        m.how is not MeetingHow.ATTRIBUTE or m.owner_kind is StandInKind.OBJECT_NEW
        for standin in root.walk()
        for m in standin.meetings
    )


def _meeting_key(meeting) -> str:
    if meeting.how is MeetingHow.SELF:
        return f"self: {meeting.self_shape.value}"
    if meeting.how is MeetingHow.ATTRIBUTE:
        owner = meeting.owner_kind.name if meeting.owner_kind is not None else "other object"
        return f"attribute of: {owner}"
    callee = meeting.callee
    if callee.stub_class is not None:
        return "argument: method of an object.__new__ stub"
    if callee.dotted is not None and callee.dotted.startswith("vllm."):
        return "argument: vllm.* through imports"
    if callee.dotted is not None:
        return "argument: other import"
    return "argument: other (local, fixture, builtin)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tests", type=Path, help="a tests folder (vLLM's tests/)")
    args = parser.parse_args(argv)
    if not args.tests.is_dir():
        print(f"count_standins: not a folder: {args.tests}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    try:
        standins, meetings, places, files = count(args.tests)
    except OSError as exc:
        print(f"count_standins: cannot read: {exc}", file=sys.stderr)
        return 2
    elapsed = time.perf_counter() - start
    print(f"stand-ins under {args.tests}")
    for kind in StandInKind:
        print(f"  {kind.name:<34}{standins[kind.name]:>7}")
    for key in ("top-level", "nested", "opaque", "handed to code (self/argument)"):
        print(f"  {key:<34}{standins[key]:>7}")
    print("stand-ins in a tree that reaches code (self, argument, a stub's field)")
    for key in [f"{kind.name} reaching code" for kind in StandInKind]:
        print(f"  {key:<34}{standins[key]:>7}")
    print(f"meetings{'all':>47}  places (not stubs)")
    for key, n in sorted(meetings.items()):
        print(f"  {key:<46}{n:>7}{len(places.get(key, ())):>9}")
    print("files")
    for key in ("seen", "parsed", "unparsable", "with stand-ins"):
        print(f"  {key:<34}{files[key]:>7}")
    print(f"time {elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
