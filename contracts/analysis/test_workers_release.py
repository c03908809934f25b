"""Worker processes on a real release: 0.34.0's files audited in several processes print what
one process prints, and a file's findings do not depend on the files audited before it.

The second is what makes the first hold.  Until each file's audit ran in analysis objects of
its own, a walk another file had memoized answered for it: audited after
``test_direct_reload.py``, ``test_reload_lifecycle.py`` got a note on ``model_config.model``
(read past a ``word_embeddings_untied_by_checkpoint`` check its namespace states ``False``) that
it does not get alone.  (The cases on tiny trees are in ``contracts/analyzer/test_workers.py``.)
"""

from __future__ import annotations

import json

import pytest

from contracts.analyzer.cases import cli

pytestmark = pytest.mark.selfcheck

LOADER = "tests/model_executor/model_loader"
BACKEND = "vllm/v1/attention/backends/mla/rocm_aiter_mla.py"


def _findings_of(out: str, test_file: str) -> list[dict]:
    return [f for f in json.loads(out) if f["stub_location"].startswith(test_file)]


def test_a_files_findings_do_not_depend_on_the_files_audited_before_it(release_src, capsys):
    root = release_src("0.34.0")
    lifecycle = str(root / LOADER / "test_reload_lifecycle.py")
    args = ["--no-cache", "--jobs", "1", "--standins", "--show-possible", "--format", "json"]
    alone = cli(root, *args, lifecycle, capsys=capsys)
    before = str(root / LOADER / "test_direct_reload.py")
    after = cli(root, *args, before, lifecycle, capsys=capsys)
    assert _findings_of(after[1], lifecycle) == _findings_of(alone[1], lifecycle)
    assert _findings_of(alone[1], lifecycle)  # the file is audited: it has findings to compare


@pytest.mark.parametrize("target", ["tests/v1/attention", BACKEND], ids=["folder", "trigger"])
def test_workers_print_what_one_process_prints(release_src, capsys, target):
    root = release_src("0.34.0")
    args = ["--no-cache", "--standins", "--show-possible", "--format", "json", str(root / target)]
    alone = cli(root, "--jobs", "1", *args, capsys=capsys)
    shared = cli(root, "--jobs", "2", *args, capsys=capsys)
    assert shared == alone
    assert json.loads(alone[1])
