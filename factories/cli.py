"""``audit-stubs``: audit ``object.__new__`` stubs against a vLLM source tree.

Runs in pre-commit, in this project's CI and inside a vLLM checkout.  It imports neither torch
nor vllm: everything comes from the source text (``factories.analysis``).

Exit status: 0 clean (warnings allowed), 1 drift found, 2 bad input: a usage error, a missing
folder, a bad allowlist (one line on stderr), or an input file or vLLM module that could not be
read or parsed (an ``unreadable-file`` finding; everything else is still audited and printed),
or a bad baseline or ``# audit-stubs: ignore[...]`` comment.
2 also when the findings cannot be written (a full disk: one line on stderr).  141 (128 +
SIGPIPE, what a shell reports for a process killed by SIGPIPE) when the reader of stdout goes
away early (``audit-stubs ... | head -1``), quietly; not 1, which means drift.

Arguments under ``<vllm-src>/vllm/`` are not audited but are *triggers* (pre-commit hands over
changed vLLM files too): the test files under ``<vllm-src>/tests/`` holding a stub that depends
on a changed module are audited with the other arguments (``factories.analysis.trigger``).  Each
invocation decides from its own arguments only, so pre-commit's chunks are each correct.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import attrs

from factories.analysis.audit import Allowlist, AuditResult, StubAuditor, locate_vllm_source
from factories.analysis.baseline import Baseline, write_baseline
from factories.analysis.findings import Finding, Location, Severity
from factories.analysis.source_tree import Overlay, gc_paused
from factories.errors import AuditInputError, GuardError, OutputError

if TYPE_CHECKING:  # annotations; ``since`` (git) is imported where a base is asked for
    from factories.analysis.result_cache import ResultCache
    from factories.analysis.since import KnownReads

PROG = "audit-stubs"
EXIT_BROKEN_PIPE = 128 + 13  # 128 + SIGPIPE, as a shell reports a process SIGPIPE killed


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit 2, like every other bad input."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{PROG}: error: {message} (see --help)\n")
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description=(
            "Audit object.__new__ stubs in test files against a vLLM source tree: attributes "
            "the called methods read but the stub never sets, calls that no longer bind to "
            "the method's signature, methods and classes that no longer exist, and stub "
            "fields nothing reads any more. Without FILE, audits this project's own stub "
            "specs (factories.stubs.specs)."
        ),
    )
    parser.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="test files or folders to audit (folders: every *.py below); a .py file under "
        "<vllm-src>/vllm/ is a changed vLLM module: the test files whose stubs depend on it "
        "are audited instead",
    )
    parser.add_argument(
        "--vllm-src",
        metavar="DIR",
        help="folder that holds vllm/ (default: the installed vllm package, found "
        "without importing it)",
    )
    parser.add_argument("--format", choices=("text", "json", "github"), default="text")
    parser.add_argument(
        "--allowlist",
        metavar="FILE",
        type=Path,
        help="known findings to ignore, one 'kind:Class.method:name' fnmatch pattern a line",
    )
    baseline = parser.add_mutually_exclusive_group()
    baseline.add_argument(
        "--baseline",
        metavar="FILE",
        type=Path,
        help="known findings (written by --write-baseline): they do not fail; new ones do, "
        "and entries of audited files no longer found are reported as removable",
    )
    baseline.add_argument(
        "--write-baseline",
        metavar="FILE",
        type=Path,
        help="write the findings' keys (FILE::kind:Class.method:name, no line numbers) to "
        "FILE and exit 0; entries of test files not audited in this run are kept",
    )
    since = parser.add_mutually_exclusive_group()
    since.add_argument(
        "--since",
        metavar="REV",
        help="compare with git revision REV of the --vllm-src checkout (in pre-commit: "
        "HEAD): a read a stub lacks that the change since REV added to the code the test's "
        "call runs is an error (newly-read-attribute), even where the analysis cannot place "
        "it on the test's path",
    )
    since.add_argument(
        "--base-src",
        metavar="DIR",
        type=Path,
        help="as --since, with the base version of vllm/ taken from DIR (the folder that "
        "holds it, e.g. the previous release)",
    )
    parser.add_argument(
        "--show-possible",
        action="store_true",
        help="also print notes (possibly-missing-attribute: a read on a path the test may "
        "not take); they never fail the audit and are always in --format json",
    )
    parser.add_argument(
        "--standins",
        action="store_true",
        help="also audit the namespaces (types.SimpleNamespace, argparse.Namespace) and the "
        "spec'd mocks (Mock(spec=Cls)) the tests set on stubs, hand to vLLM code or make self "
        "of a method: a field they lack where the vLLM code reads it is an error "
        "(missing-field)",
    )
    cache = parser.add_mutually_exclusive_group()
    cache.add_argument(
        "--cache-dir",
        metavar="DIR",
        type=Path,
        help="keep each test file's results in DIR, keyed by the content of the file, of "
        "every module its audit consulted and of the analyzer (default: audit-results/ in "
        "$VLLM_GUARD_CACHE, else in the user cache); a hit prints what a cold run prints",
    )
    cache.add_argument(
        "--no-cache", action="store_true", help="neither read nor write the result cache"
    )
    parser.add_argument(
        "--jobs",
        metavar="N",
        type=_job_count,
        default=0,
        help="analyse the test files in N worker processes (default 0: one per CPU; 1: in "
        "this process only); the report is the same whatever N",
    )
    parser.add_argument(
        "--release-summary",
        action="store_true",
        help="the main job: without FILE, audit this project's specs as above, then the pinned "
        "vLLM release's own tests/ against its vllm/ (from the release cache, stand-ins "
        "included) and print a summary of what they hold; the exit status is the specs'",
    )
    parser.add_argument(
        "--quiet", action="store_true", help="no progress lines and no summary on stderr"
    )
    return parser


def _job_count(text: str) -> int:
    """``--jobs``' value: a whole number, 0 or more (argparse turns the error into exit 2)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(
            f"expected 0 (one per CPU) or a positive count, got {text!r}"
        )
    return value


def _display(path: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return path


def format_text(finding: Finding) -> str:
    where = finding.stub_location or finding.vllm_location
    head = f"{_display(where.path)}:{where.line}" if where else "<unknown>"
    lines = [f"{head}: {finding.severity.value}: {finding.message} [{finding.kind.value}]"]
    if finding.vllm_location is not None:
        lines.append(
            f"    vllm: {_display(finding.vllm_location.path)}:{finding.vllm_location.line}"
            f" ({finding.vllm_side})"
        )
    lines.append(f"    stub: {finding.stub_side}")
    return "\n".join(lines)


# GitHub's workflow commands: ``%``, CR and LF are escaped in the message, and ``:`` and ``,``
# too in property values (they separate properties), as @actions/core's escapeData and
# escapeProperty do.
_GITHUB_DATA = str.maketrans({"%": "%25", "\r": "%0D", "\n": "%0A"})
_GITHUB_PROPERTY = str.maketrans({"%": "%25", "\r": "%0D", "\n": "%0A", ":": "%3A", ",": "%2C"})


_GITHUB_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "notice"}


def format_github(finding: Finding) -> str:
    level = _GITHUB_LEVEL[finding.severity]
    where = finding.stub_location or finding.vllm_location
    location = ""
    if where:
        file = _display(where.path).translate(_GITHUB_PROPERTY)
        location = f" file={file},line={where.line}"
    extra = f" (vLLM: {finding.vllm_location})" if finding.vllm_location else ""
    data = f"{finding.message}{extra} [{finding.kind.value}]".translate(_GITHUB_DATA)
    return f"::{level}{location}::{data}"


def emit(
    result: AuditResult, fmt: str, quiet: bool, root: Path, show_possible: bool = False
) -> None:
    """Print the findings.  Notes are a level a reader asks for (``--show-possible``): the
    text and GitHub reports leave them out by default, JSON always carries them."""
    try:
        if fmt == "json":
            print(json.dumps([f.to_json() for f in result.findings], indent=2))
        else:
            render = format_github if fmt == "github" else format_text
            for finding in result.findings:
                if finding.severity is Severity.NOTE and not show_possible:
                    continue
                print(render(finding))
        sys.stdout.flush()  # a write error surfaces here, not at interpreter exit
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputError(f"cannot write the findings: {exc.strerror or exc}") from None
    if not quiet:
        for pattern in result.unused_allowlist:
            print(f"{PROG}: note: unused allowlist entry {pattern!r}", file=sys.stderr)
        print(f"{PROG}: {result.summary} (vLLM source: {root})", file=sys.stderr)


def _note(args: argparse.Namespace, line: str) -> None:
    if not args.quiet:
        print(f"{PROG}: {line}", file=sys.stderr)


def _split_arguments(auditor: StubAuditor, files: Sequence[str]) -> tuple[list[Path], set[str]]:
    """(test files and folders to audit, changed vLLM modules)."""
    from factories.analysis.trigger import changed_module  # only where FILEs are given

    tests: list[Path] = []
    changed: set[str] = set()
    for name in files:
        module = changed_module(auditor.tree, Path(name))
        if module is None:
            tests.append(Path(name))
        else:
            changed.add(module)
    return tests, changed


#: Options that choose what to audit or how to judge it, which ``--release-summary`` decides.
_NOT_WITH_SUMMARY = (
    ("files", "FILE"),
    ("baseline", "--baseline"),
    ("write_baseline", "--write-baseline"),
    ("since", "--since"),
    ("base_src", "--base-src"),
    ("standins", "--standins"),
)


def pinned_release_tests() -> tuple[str, Path]:
    """(version, folder holding its ``vllm/`` and ``tests/``) of the pinned release, or
    ``ReleaseNotFetchedError`` naming the command that fetches it."""
    from factories.errors import ReleaseNotFetchedError
    from factories.testing.releases import release_source
    from factories.testing.selfcheck import SELFCHECK_DEFAULT as version

    root = release_source(version)
    if not (root / "tests").is_dir():
        raise ReleaseNotFetchedError(
            f"vLLM {version} in {root} has no tests/; run: python tools/fetch_vllm.py {version}"
        )
    return version, root


def run_release_summary(args: argparse.Namespace) -> int:
    """The specs' audit as the no-FILE run does it, then the pinned release's own tests and
    their summary on stdout.  Those are vLLM's tests, not this project's: what they hold is
    shown, and the exit status stays the specs'."""
    import time

    from factories.analysis.release_summary import format_summary, summarize_tree

    for name, option in _NOT_WITH_SUMMARY:
        if getattr(args, name):
            raise AuditInputError(f"--release-summary decides what it audits; drop {option}")
    if args.format != "text":
        raise AuditInputError("--release-summary prints text; drop --format")
    version, release = pinned_release_tests()  # before any work: a missing cache is bad input
    start = time.perf_counter()
    status = run(args)
    specs_seconds = time.perf_counter() - start
    _note(
        args,
        f"auditing vLLM {version}'s own tests (stand-ins too; under a minute, "
        "seconds from the result cache)",
    )
    progress = None if args.quiet else (lambda line: print(f"{PROG}: {line}", file=sys.stderr))
    summary = summarize_tree(
        release,
        release / "tests",
        progress,
        cache=_result_cache(args, release, Overlay()),
        jobs=args.jobs,
    )
    verdict = {0: "clean", 1: "drift found"}.get(status, "bad input")
    full = f"audit-stubs --vllm-src {release} --standins --show-possible {release / 'tests'}"
    lines = [
        "",
        "== summary ==",
        f"this project's stub specs (factories/stubs/specs.py): {verdict}, exit {status} "
        f"({specs_seconds:.1f} s{'; findings above' if status else ''})",
        *format_summary(summary, f"vLLM {version}'s own tests", full),
        f"  vLLM's own tests are not this project's: their findings are informational and "
        f"leave the exit status ({status}) to the specs.",
    ]
    try:
        print("\n".join(lines))
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputError(f"cannot write the summary: {exc.strerror or exc}") from None
    return status


def run(args: argparse.Namespace) -> int:
    if args.write_baseline and (args.since is not None or args.base_src is not None):
        raise AuditInputError(
            "--write-baseline records the tree as it stands; drop --since/--base-src "
            "(what a change adds is not a known finding)"
        )
    root = locate_vllm_source(args.vllm_src)
    allowlist = Allowlist.read(args.allowlist) if args.allowlist else Allowlist()
    baseline = Baseline.read(args.baseline) if args.baseline else None
    auditor = StubAuditor(root, cache=_result_cache(args, root, Overlay()), jobs=args.jobs)
    progress = None if args.quiet else (lambda line: print(line, file=sys.stderr))
    if args.files:
        paths, changed = _split_arguments(auditor, args.files)
        triggered = auditor.triggered(changed, standins=args.standins) if changed else {}
        if changed:
            what = "stubs or stand-ins" if args.standins else "stubs"
            _note(
                args,
                f"{len(changed)} changed vLLM module(s): {len(triggered)} test file(s) hold "
                f"{what} that depend on them"
                + ("" if triggered else "; no stub depends on them, nothing to audit for them"),
            )
        seen = {p.resolve() for p in paths}
        paths += [p for p in triggered if p.resolve() not in seen]
        if not paths:
            if args.write_baseline:
                _note(args, f"nothing audited; {args.write_baseline} left as it is")
            return 0
        since = _known_reads(args, root, paths, progress)
        result = auditor.audit_paths(
            paths, allowlist, progress, known=triggered, since=since, standins=args.standins
        )
    else:
        from factories.stubs.specs import ALL_SPECS, stubs_from_specs

        result = auditor.audit_stubs(
            stubs_from_specs(ALL_SPECS),
            n_files=0,
            n_with_stubs=0,
            allowlist=allowlist,
        )
    # Only a baseline needs the audited files as its keys spell them (a resolve() each).
    audited = (
        [finding_file_path(p, root) for p in result.files]
        if args.write_baseline or (baseline is not None)
        else []
    )
    if args.write_baseline:
        kept: list[str] = []
        if args.write_baseline.is_file():
            kept = Baseline.read(args.write_baseline).entries_outside(audited)
        n = write_baseline(args.write_baseline, result.findings, root, kept)
        _note(args, f"{result.summary} (vLLM source: {root})")
        _note(args, f"wrote {n} baseline entries to {args.write_baseline}")
        return 2 if result.incomplete else 0
    if baseline is not None:
        new, known, removable = baseline.split(result.findings, root, audited)
        result = attrs.evolve(result, findings=tuple(new))
        for key in removable:
            _note(args, f"note: baseline entry no longer found, remove it: {key}")
        if known:
            _note(args, f"{known} known finding(s) in the baseline {args.baseline} not shown")
    emit(result, args.format, args.quiet, root, args.show_possible)
    if result.incomplete:
        return 2
    return 1 if result.errors else 0


def _known_reads(
    args: argparse.Namespace, root: Path, paths: Sequence[Path], progress
) -> KnownReads | None:
    """With ``--since``/``--base-src``: the reads the stubs of ``paths`` lacked in the base
    version (one more audit of the same test files, through an overlay).  ``since`` is
    imported here: the common runs (the specs, a list of files) need neither it nor git."""
    from factories.analysis.since import KnownReads, base_from_git, base_from_tree

    if args.since is not None:
        base = base_from_git(root, args.since)
    elif args.base_src is not None:
        base = base_from_tree(args.base_src)
    else:
        return None
    if not base.overlay.files and not base.overlay.folders:
        _note(args, f"no vLLM file differs from {base.label}: no read is new")
        return None
    what = (
        f"{len(base.overlay.files)} vLLM file(s) differ"
        if base.overlay.files
        else "its vllm/ folder"
    )
    _note(args, f"base {base.label} ({what}): auditing the same stubs against it")
    cache = _result_cache(args, root, base.overlay)
    base_auditor = StubAuditor(root, base.overlay, cache, jobs=args.jobs)
    # The same judgement of the base: with --standins, its namespaces' reads too, or each
    # undecided read of a namespace would look new.
    base_result = base_auditor.audit_paths(paths, Allowlist(), progress, standins=args.standins)
    return KnownReads.of(base.label, base_result.findings)


def _result_cache(args: argparse.Namespace, root: Path, overlay: Overlay) -> ResultCache | None:
    """The result cache of this run (None with ``--no-cache``).  Its salt holds what changes
    results besides the files' contents: the vLLM root and the overlay's folders (findings
    spell their paths; each entry's key holds ``--standins``); the allowlist, the baseline,
    ``--since``'s marks and the output format apply to the cached values on every run."""
    if args.no_cache:
        return None
    from factories.analysis.result_cache import ResultCache, default_results_dir

    options = [
        f"root={root}",
        f"folders={sorted((k, str(v)) for k, v in overlay.folders.items())}",
        # A base version's results apart from the tree's: each would otherwise replace the
        # other's entry for a file consulting a changed module on every --since run.
        f"base={bool(overlay.files or overlay.folders)}",
    ]

    def warn(line: str) -> None:  # even with --quiet: a broken cache is worth one line
        print(f"{PROG}: {line}", file=sys.stderr)

    return ResultCache.at(args.cache_dir or default_results_dir(), options, warn)


def finding_file_path(path: Path, root: Path) -> str:
    """A test file as a baseline key names it: relative to ``root`` when it lies under it."""
    return Location(str(path), 1).relative_to(root).path


def _discard_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush of what is still
    buffered cannot fail again (the recipe of the ``signal`` module's SIGPIPE note)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def main(argv: Sequence[str] | None = None) -> int:
    """The CLI.  The cyclic GC stays paused until the run is over (``gc_paused``): the audit
    pauses it while it parses and walks, and the first collection after it resumes would
    traverse every node of every tree still alive, only for them to be freed as the run
    returns (by reference counting: trees hold no cycles)."""
    args = build_parser().parse_args(argv)
    try:
        with gc_paused():
            return run_release_summary(args) if args.release_summary else run(args)
    except OutputError as exc:
        _discard_stdout()
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except GuardError as exc:  # bad input anywhere below (tree, file, parse): one line
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        _discard_stdout()  # the reader is gone (``| head``): nothing left to say
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
