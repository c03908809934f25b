"""The repository stands alone: every document it names is tracked, every citation resolves.

Code and docs cite the project's reference documents (``docs/reference/``) by section:
``contract §2.4`` or a bare ``§2.4`` means ``aiter-ps-contract.md``; a citation preceded on its
line by ``vllm-fp8-prefill-surface`` or ``known-regressions`` means that document; inside a
reference document a bare ``§`` means the document itself. Regression cases are cited as
``known-regressions R13`` / ``B3``. Each check below is a plain function over text, so the case
tables can show it failing on a broken input.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO / "docs" / "reference"
DEFAULT_DOC = "aiter-ps-contract"
DOC_NAMES = ("aiter-ps-contract", "vllm-fp8-prefill-surface", "known-regressions")

_SECTION = r"\d+(?:\.\d+)*[a-z]?"
_CITATION = re.compile(rf"§\s?({_SECTION})(?:\s?[-–]\s?({_SECTION}))?")
_DOC_NAME = re.compile("|".join(DOC_NAMES))
_CASE = re.compile(r"known-regressions(?:\.md)?[ ,]*((?:[RB]\d+[, ]*(?:and )?)+)")
_HEADING = re.compile(r"^#{1,6}\s+([0-9]+(?:\.[0-9]+)*[a-z]?|[RB][0-9]+)[.\s]", re.M)
_MD_NAME = re.compile(r"[A-Za-z0-9_./-]+\.md\b")
#: Spelled in two halves so that this file does not match its own check.
_OUTSIDE = ("../" + "shared", "shared/" + "reference")


def tracked_files() -> list[str]:
    out = subprocess.run(
        ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    return [f for f in out.splitlines() if (REPO / f).is_file()]


def tracked_text() -> dict[str, str]:
    """Every tracked text file but this one, whose case tables hold broken citations on purpose."""
    own = Path(__file__).resolve().relative_to(REPO).as_posix()
    texts = {}
    for name in tracked_files():
        if name == own:
            continue
        try:
            texts[name] = (REPO / name).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
    return texts


def headings(markdown: str) -> set[str]:
    """Section ids of a reference document: ``2.4``, ``3``, ``1a``, ``R13``, ``B3``."""
    return {m.group(1) for m in _HEADING.finditer(markdown)}


def _section_ids(first: str, last: str | None) -> list[str]:
    if last is None:
        return [first]
    if "." in first and "." not in last:  # "§3.4-5" abbreviates "§3.4-3.5"
        last = first.rsplit(".", 1)[0] + "." + last
    return [first, last]


def unresolved_citations(path: str, text: str, sections: Mapping[str, set[str]]) -> list[str]:
    """``path:line: §X`` for each citation whose section is not a heading of its document."""
    own = Path(path).stem if path.startswith("docs/reference/") else DEFAULT_DOC
    problems = []
    for lineno, line in enumerate(text.splitlines(), 1):
        for match in _CITATION.finditer(line):
            names = _DOC_NAME.findall(line[: match.start()])
            doc = names[-1] if names else own
            for section in _section_ids(match.group(1), match.group(2)):
                if section not in sections.get(doc, set()):
                    problems.append(f"{path}:{lineno}: §{section} is not a heading of {doc}.md")
        for match in _CASE.finditer(line):
            for case in re.findall(r"[RB]\d+", match.group(1)):
                if case not in sections.get("known-regressions", set()):
                    problems.append(f"{path}:{lineno}: {case} is not a case of known-regressions")
    return problems


def untracked_documents(path: str, text: str, tracked: set[str]) -> list[str]:
    """Markdown files named in ``text`` that are not tracked (relative to the root, the file's
    folder, or docs/reference/)."""
    folder = Path(path).parent
    problems = []
    for name in sorted(set(_MD_NAME.findall(text))):
        candidates = {
            name,
            (folder / name).as_posix(),
            f"docs/reference/{Path(name).name}",
            f"docs/{Path(name).name}",
        }
        if not any(c.lstrip("./") in tracked for c in candidates):
            problems.append(f"{path}: names {name}, which is not a tracked file")
    return problems


def outside_pointers(path: str, text: str) -> list[str]:
    return [
        f"{path}:{n}: points outside the repository ({needle})"
        for n, line in enumerate(text.splitlines(), 1)
        for needle in _OUTSIDE
        if needle in line
    ]


@pytest.fixture(scope="module")
def sections() -> dict[str, set[str]]:
    return {
        doc: headings((REFERENCE / f"{doc}.md").read_text(encoding="utf-8")) for doc in DOC_NAMES
    }


@pytest.fixture(scope="module")
def texts() -> dict[str, str]:
    return tracked_text()


def test_every_citation_resolves(texts, sections):
    problems = [
        p for path, text in texts.items() for p in unresolved_citations(path, text, sections)
    ]
    assert not problems, "\n".join(problems)


def test_every_named_document_is_tracked(texts):
    tracked = set(tracked_files())
    problems = [p for path, text in texts.items() for p in untracked_documents(path, text, tracked)]
    assert not problems, "\n".join(problems)


def test_nothing_points_outside_the_repository(texts):
    problems = [p for path, text in texts.items() for p in outside_pointers(path, text)]
    assert not problems, "\n".join(problems)


def test_the_reference_documents_have_their_sections(sections):
    for doc in DOC_NAMES:
        assert sections[doc], f"docs/reference/{doc}.md has no numbered headings"


_SECTIONS = {
    "aiter-ps-contract": {"2", "2.4", "3.4", "3.5"},
    "vllm-fp8-prefill-surface": {"1a", "3"},
    "known-regressions": {"R1", "B3"},
}


@pytest.mark.parametrize(
    ("path", "line", "bad"),
    [
        ("factories/x.py", "contract §2.4", []),
        ("factories/x.py", "contract §2.5", ["§2.5"]),
        ("factories/x.py", "contract §3.4-3.5", []),
        ("factories/x.py", "contract §3.4-3.6", ["§3.6"]),
        ("factories/x.py", "(§3.4-5)", []),
        ("factories/x.py", "vllm-fp8-prefill-surface.md §1a", []),
        ("factories/x.py", "vllm-fp8-prefill-surface.md §2.4", ["§2.4"]),
        ("docs/reference/known-regressions.md", "see §2.4", ["§2.4"]),
        ("factories/x.py", "known-regressions R1, B3", []),
        ("factories/x.py", "known-regressions R1 and R99", ["R99"]),
    ],
)
def test_citation_check_cases(path, line, bad):
    found = unresolved_citations(path, line, _SECTIONS)
    assert [next(w for w in f.split() if w.startswith(("§", "R", "B"))) for f in found] == bad


@pytest.mark.parametrize(
    ("text", "bad"),
    [
        ("see docs/DESIGN.md", []),
        ("see aiter-ps-contract.md", []),
        ("see docs/PLANS.md", ["docs/PLANS.md"]),
        ("see ../notes/aiter.md", ["../notes/aiter.md"]),
    ],
)
def test_document_check_cases(text, bad):
    tracked = {"docs/DESIGN.md", "docs/reference/aiter-ps-contract.md"}
    found = untracked_documents("README.md", text, tracked)
    assert [f.split()[2].rstrip(",") for f in found] == bad


@pytest.mark.parametrize(
    ("text", "bad"),
    [("docs/reference/", 0), ("../" + "shared/x", 1), ("see shared/" + "reference/a.md", 1)],
)
def test_outside_check_cases(text, bad):
    assert len(outside_pointers("README.md", text)) == bad
