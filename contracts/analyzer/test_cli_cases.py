"""``audit-stubs`` usage errors and output escaping that need no vLLM tree, run in-process.

A usage error is exit 2 with one line on stderr, nothing on stdout and no traceback.  The
same program run as a subprocess, on the pinned release, is in
``contracts/analysis/test_audit_cli.py`` (``--selfcheck``).
"""

from __future__ import annotations

import pytest

from contracts.analyzer.cases import cli
from factories.analysis.findings import Finding, FindingKind, Location
from factories.cli import format_github

#: (id, --vllm-src, further arguments, what the one line says); ``{tmp}``: an empty folder.
USAGE_ERRORS = [
    ("missing-vllm-src-dir", "/nonexistent/vllm-src", (), "no such directory"),
    ("folder-without-vllm", "{tmp}", (), "no vllm/ package inside"),
    ("bad-option", "{tmp}", ("--format", "xml"), "invalid choice"),
]


@pytest.mark.parametrize(
    ("root", "args", "needle"), [pytest.param(*c[1:], id=c[0]) for c in USAGE_ERRORS]
)
def test_usage_error_is_exit_2_with_one_line(tmp_path, capsys, root, args, needle):
    status, out, err = cli(root.format(tmp=tmp_path), *args, capsys=capsys)
    assert status == 2, err
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert needle in lines[0]


def test_github_format_escapes_workflow_command_syntax():
    finding = Finding(
        kind=FindingKind.MISSING_ATTRIBUTE,
        class_name="C",
        method="m",
        name="x",
        message="100% of\r\nit",
        vllm_location=None,
        stub_location=Location("/tmp/a,b:c%d.py", 7),
    )
    assert format_github(finding) == (
        "::error file=/tmp/a%2Cb%3Ac%25d.py,line=7::100%25 of%0D%0Ait [missing-attribute]"
    )


@pytest.mark.parametrize("cross", ["0.33.0", "0.33.0:", ":0.34.0"])
def test_diff_audit_with_a_malformed_cross_pair_is_exit_2(cross, capsys):
    from tools.diff_audit import main

    with pytest.raises(SystemExit) as exit_info:
        main(["--against", "HEAD", "--cross", cross])
    assert exit_info.value.code == 2
    assert "OLD:NEW" in capsys.readouterr().err
