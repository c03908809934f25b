#!/usr/bin/env python3
"""Pre-commit entry point; the same program as the ``audit-stubs`` console script.

Works from a checkout without installing this project (it puts the repo root on sys.path), so a
vLLM checkout can run it as a hook.  See ``factories/cli.py`` for options and exit codes.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from factories.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
