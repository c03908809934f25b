"""Worker processes on a real release: 0.34.0's files audited in several processes print what
one process prints, and a file's findings do not depend on the files audited before it.

The second is what makes the first hold, and within one file a call's findings do not depend
on the calls walked before it either.  Until each file's audit ran in analysis objects of
its own, a walk another file had memoized answered for it: audited after
``test_direct_reload.py``, ``test_reload_lifecycle.py`` got a note on ``model_config.model``
(read past a ``word_embeddings_untied_by_checkpoint`` check its namespace states ``False``) that
it does not get alone.  (The cases on tiny trees are in ``contracts/analyzer/test_workers.py``.)

Within a file the walks share one memo, keyed by everything a walk's result depends on, the
calls above it included: the depth bound and the recursion check read them.  Keyed without
them, ``test_direct_reload.py``'s ``finish_reload`` call got a note from a walk of
``finish_direct_reload`` that the file's direct call of it had made one call shallower, where
the depth bound had not cut it short yet.
"""

from __future__ import annotations

import json
from pathlib import Path

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


def test_a_calls_findings_do_not_depend_on_the_calls_walked_before_it(
    release_src, capsys, tmp_path
):
    root = release_src("0.34.0")
    original = root / LOADER / "test_direct_reload.py"
    text = original.read_text(encoding="utf-8")
    direct = "finish_direct_reload(model, _MODEL_CONFIG, _DEVICE)"
    assert text.count(direct) == 2  # the release's direct calls, walked before finish_reload's
    alone = tmp_path / "test_direct_reload.py"
    alone.write_text(text.replace(direct, "None"), encoding="utf-8")  # same lines, same tests
    args = ["--no-cache", "--jobs", "1", "--standins", "--show-possible", "--format", "json"]

    def of_finish_reload(path: Path) -> list[dict]:
        found = json.loads(cli(root, *args, str(path), capsys=capsys)[1])
        return [
            {**f, "stub_location": Path(f["stub_location"]).name}
            for f in found
            if f["method"] == "finish_reload"
        ]

    assert of_finish_reload(original) == of_finish_reload(alone)
