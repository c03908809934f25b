"""``tools/fetch_vllm.py`` runs on a bare interpreter: ``tools/setup_env.sh`` calls it before
anything is installed (the wheel it fetches is what gets installed), so every ``factories``
module it imports must be stdlib only.  ``python -S -I`` hides site-packages (no attrs, no
torch), as on a fresh machine.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_fetch_vllm_answers_without_site_packages(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-S", "-I", str(REPO / "tools" / "fetch_vllm.py"), "--print-cache-dir"],
        capture_output=True,
        text=True,
        check=False,
        env={"VLLM_GUARD_CACHE": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(tmp_path)
