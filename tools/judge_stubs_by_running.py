#!/usr/bin/env python3
"""Judge ``audit-stubs`` by running vLLM's own ``object.__new__``-stub tests (issue 12).

Thin CLI over ``factories.evaluation.judge``: run a release's stub-bearing test files, one forked
pytest per file, in the venv of the vLLM under test (``--python``), and optionally compare the
recorded method calls and AttributeErrors with an ``audit-stubs --format json`` output.

    tools/judge_stubs_by_running.py --tests SRC/0.33.0/tests --python VENV/bin/python \\
        --json run.json --compare-audit audit.json
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from factories.evaluation.judge import main

if __name__ == "__main__":
    raise SystemExit(main())
