"""The trigger's pre-filter on tiny trees: which test files a changed vLLM module audits.

Each case adds modules to one base tree (``vllm/base_impl.py``'s ``Base``, three test files)
and names the module that changed; the files it triggers must be exactly the dependent ones,
and the command line run on that module must fail on the read its stub lacks.  The same on
vLLM 0.34.0 is in ``contracts/analysis/test_trigger_and_baseline.py`` (``--selfcheck``).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs
import pytest

from contracts.analyzer.cases import cli, write_tree
from factories.analysis.audit import StubAuditor

TREE = {
    "vllm/__init__.py": "",
    "vllm/base_impl.py": "class Base:\n    def run(self):\n        return self.x\n",
    "tests/test_sub.py": (
        "from vllm.sub_impl import Sub\n\ndef test():\n    s = object.__new__(Sub)\n    s.run()\n"
    ),
    "tests/test_alias.py": (
        "from vllm.pkg import Alias\n\ndef test():\n    s = object.__new__(Alias)\n    s.run()\n"
    ),
    "tests/test_other.py": "class Base:\n    pass\n\ndef test():\n    object.__new__(Base)\n",
}


@attrs.frozen
class TriggerCase:
    """``files``: modules added to ``TREE``; ``changed``: the changed module; ``triggered``:
    the test files (relative to the root) it must audit, sorted."""

    id: str
    files: Mapping[str, str]
    changed: str
    triggered: tuple[str, ...]


TRIGGER = [
    # A subclass in another module: the stub of the subclass depends on the base's module.
    TriggerCase(
        "base-in-other-module",
        {"vllm/sub_impl.py": "from vllm.base_impl import Base\nclass Sub(Base):\n    pass\n"},
        "vllm.base_impl",
        ("tests/test_sub.py",),
    ),
    # A re-export through a package under another name.
    TriggerCase(
        "re-export",
        {
            "vllm/pkg/__init__.py": "from .impl import Base as Alias\n",
            "vllm/pkg/impl.py": "class Base:\n    def run(self):\n        return self.x\n",
        },
        "vllm.pkg.impl",
        ("tests/test_alias.py",),
    ),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in TRIGGER])
def test_pre_filter_follows_subclasses_and_re_exports(tmp_path, capsys, case):
    write_tree(tmp_path, {**TREE, **case.files})
    auditor = StubAuditor(tmp_path)
    found = sorted(str(p.relative_to(tmp_path)) for p in auditor.triggered({case.changed}))
    assert found == list(case.triggered)
    changed = str(tmp_path / case.changed.replace(".", "/")) + ".py"
    status, out, err = cli(tmp_path, changed, capsys=capsys)
    assert status == 1 and "reads self.x" in out, out + err
