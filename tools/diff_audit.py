#!/usr/bin/env python3
"""Is the audit's output the same as another revision's?  Byte for byte, on real releases.

A change meant to keep the audit's output (a refactor of the analyzer) is checked here: the
audit of this working tree and of git revision ``--against REV`` of this repository (its
``factories/`` and ``tools/``, exported to a temporary folder) run on the same inputs, and
their stdout, stderr and exit status are compared.  The inputs, from the release cache
(``tools/fetch_vllm.py``):

* each release's own ``tests/`` against its source, as JSON and as text with notes;
* the older release's tests against the newer source (``--cross OLD:NEW``), plain and with
  ``--base-src OLD``;
* this project's stub specs (no FILE) and the ``rocm_aiter_mla.py`` trigger, on the newest.

Prints one line per input (``same`` or ``DIFFERS``, with both exit codes); exit 0 when every
input is the same, 1 when one differs, 2 on bad input (one line).  Never imports torch or vllm.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from factories.errors import ReleaseNotFetchedError  # noqa: E402
from factories.testing.releases import release_source  # noqa: E402
from tools.bench_audit import TRIGGER_MODULE, export  # noqa: E402


def inputs(releases: list[str], cross: tuple[str, str]) -> dict[str, list[str]]:
    """Name -> the audit's arguments, for every input the comparison runs."""
    out: dict[str, list[str]] = {}
    for version in releases:
        root = release_source(version)
        out[f"{version} own tests, json"] = [
            "--vllm-src",
            str(root),
            "--format",
            "json",
            str(root / "tests"),
        ]
        out[f"{version} own tests, text"] = [
            "--vllm-src",
            str(root),
            "--show-possible",
            str(root / "tests"),
        ]
    old, new = (release_source(v) for v in cross)
    tests = str(old / "tests")
    out[f"{cross[0]} tests on {cross[1]}"] = ["--vllm-src", str(new), "--format", "json", tests]
    out[f"{cross[0]} tests on {cross[1]}, --base-src"] = [
        "--vllm-src",
        str(new),
        "--base-src",
        str(old),
        "--format",
        "json",
        tests,
    ]
    out[f"{cross[1]} own specs"] = ["--vllm-src", str(new), "--format", "json"]
    out[f"{cross[1]} trigger"] = [
        "--vllm-src",
        str(new),
        "--format",
        "json",
        str(new / TRIGGER_MODULE),
    ]
    return out


def audit(code: Path, args: list[str]) -> tuple[int, str, str]:
    proc = subprocess.run(
        [sys.executable, str(code / "tools" / "audit_stubs.py"), *args],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    return proc.returncode, proc.stdout, proc.stderr


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="diff_audit", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--against", metavar="REV", required=True, help="git revision to compare with"
    )
    parser.add_argument(
        "--releases",
        default="0.29.0,0.30.0,0.31.0,0.34.0",
        help="releases whose own tests are audited (default: %(default)s)",
    )
    parser.add_argument(
        "--cross", default="0.33.0:0.34.0", metavar="OLD:NEW", help="default: %(default)s"
    )
    args = parser.parse_args(argv)
    cross = tuple(args.cross.split(":"))
    if len(cross) != 2 or not all(cross):
        parser.error(f"--cross {args.cross}: give OLD:NEW")
    try:
        cases = inputs([v for v in args.releases.split(",") if v], cross)  # type: ignore[arg-type]
    except ReleaseNotFetchedError as exc:
        parser.error(str(exc))
    differ = 0
    with tempfile.TemporaryDirectory(prefix="diff-audit-") as tmp:
        other = export(args.against, Path(tmp))
        for name, audit_args in cases.items():
            here, there = audit(REPO, audit_args), audit(other, audit_args)
            same = here == there
            differ += not same
            print(
                f"{'same' if same else 'DIFFERS'}: {name} (exit {here[0]} here, {there[0]} at "
                f"{args.against})",
                flush=True,
            )
    print(f"{len(cases) - differ} of {len(cases)} inputs give the same output as {args.against}")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
