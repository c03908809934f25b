#!/usr/bin/env python3
"""Does ``pytest contracts/ --vllm-src TMP`` judge vLLM edits the way a vLLM developer needs?

    python tools/check_contracts_on_edits.py [--python PY] [--version 0.34.0]
        [--targets contracts] [--selfcheck] [--only NAME ...] [--markdown]

For each scenario, a temporary copy of the *pinned release source* (the cache's vLLM
``--version``, never the installed vLLM) is patched, and ``pytest TARGETS --vllm-src TMP`` runs
on it in a fresh process. Behaviour-preserving edits (a refactor: extract-method, a renamed local,
a new field with a class default, comment/docstring edits) must stay green; edits that break the
FP8 prefill contract (a new ``self`` read, a dropped ``mla_reduce_v1`` positional,
``kvlen_granularity=64``, no CU term in the reservation) must fail with a message naming the
patched vLLM file:line. ``--selfcheck`` also runs the green scenarios with ``--selfcheck`` (the
self-proofs use the pinned source, so a refactor of the vLLM under test cannot turn them red).

Prints a table scenario -> expected -> observed; exit 1 if any differs, 2 on bad input.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from factories.errors import GuardError  # noqa: E402
from factories.mutation.source import Mutation, mutated_tree  # noqa: E402
from factories.testing.releases import release_source  # noqa: E402
from factories.testing.selfcheck import SELFCHECK_DEFAULT  # noqa: E402

FILE = "vllm/v1/attention/backends/mla/rocm_aiter_mla.py"
ENTRY = "    def _mla_fp8_prefill_attn(\n"
TILE_Q = "        v_head_dim = self.v_head_dim\n        tile_q = _FP8_PREFILL_TILE_Q\n"
NEW_READ = "        v_head_dim = self.v_head_dim\n        tile_q = self._fp8_tile_q\n"
IMPL = "class AiterMLAImpl(MLACommonImpl[AiterMLAMetadata]):\n"


def edit(old: str, new: str, count: int = 1, what: str = "") -> Mutation:
    return Mutation(FILE, old, new, count=count, description=what)


#: name -> (expected "green"/"red", edits of rocm_aiter_mla.py)
SCENARIOS: dict[str, tuple[str, tuple[Mutation, ...]]] = {
    "a-extract-method": (
        "green",
        (
            edit(
                "        nhead = AiterMLAHelper.get_fp8_prefill_num_heads(_real_nhead)\n",
                "        nhead = self._fp8_prefill_kernel_heads()\n",
            ),
            edit(
                ENTRY,
                "    def _fp8_prefill_kernel_heads(self) -> int:\n"
                "        return AiterMLAHelper.get_fp8_prefill_num_heads(self.num_heads)\n\n"
                + ENTRY,
            ),
        ),
    ),
    "b-renamed-local": ("green", (edit("_real_nhead", "real_nhead", count=10),)),
    "c-field-with-class-default": (
        "green",
        (edit(TILE_Q, NEW_READ), edit(IMPL, IMPL + "    _fp8_tile_q = _FP8_PREFILL_TILE_Q\n")),
    ),
    "d-comments-and-docstring": (
        "green",
        (
            edit(
                '        """Run FP8 MLA prefill via mla_prefill_ps_asm_fwd + mla_reduce_v1.\n',
                '        """FP8 MLA prefill: mla_prefill_ps_asm_fwd, then mla_reduce_v1.\n\n'
                "        (Docstring reworded; three lines longer.)\n",
            ),
            edit(
                "        # The FP8 ASM kernel expects FP8 inputs;",
                "        # A new comment line.\n        # The FP8 ASM kernel expects FP8 inputs;",
            ),
        ),
    ),
    "e-new-self-read": ("red", (edit(TILE_Q, NEW_READ),)),
    "f-reduce-positional-dropped": (
        "red",
        (
            edit(
                "            0,\n            out_3d,\n            final_lse,\n",
                "            out_3d,\n            final_lse,\n",
            ),
        ),
    ),
    "g-kvlen-granularity-64": (
        "red",
        (edit("        kvlen_granularity = 128\n", "        kvlen_granularity = 64\n"),),
    ),
    "h-reservation-without-cu": (
        "red",
        (
            edit(
                "max_num_partial_tiles = qo_tile_cnt + current_platform.num_compute_units()",
                "max_num_partial_tiles = qo_tile_cnt",
            ),
        ),
    ),
}


def run_scenario(
    py: str, root: Path, mutations: tuple[Mutation, ...], targets: list[str], extra: list[str]
) -> tuple[int, str, float]:
    with mutated_tree(root, *mutations, data_files=True) as tree:
        cmd = [py, "-m", "pytest", *targets, "--vllm-src", str(tree), "-q", "--tb=short"]
        cmd += ["-p", "no:cacheprovider", *extra]
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, env=env)
        wall = time.perf_counter() - start
        output = proc.stdout + proc.stderr
        # a message naming the patched vLLM file:line (the temporary tree, then gone)
        located = re.findall(re.escape(str(tree)) + r"/(vllm/[\w/]+\.py):(\d+)", output)
    where = sorted(
        {f"{f}:{n}" for f, n in located}, key=lambda s: (s.split(":")[0], int(s.split(":")[1]))
    )
    failed = re.findall(r"^FAILED (\S+)", output, flags=re.M)
    tail = proc.stdout.strip().splitlines()
    summary = tail[-1].strip("= ") if tail else (proc.stderr.strip().splitlines() or [""])[-1]
    detail = (
        f"{summary}; fails: {', '.join(f.split('::', 1)[1] for f in failed[:4])}"
        if failed
        else summary
    )
    if proc.returncode != 0 and where:
        short = (w.removeprefix("vllm/v1/attention/backends/mla/") for w in where[:3])
        detail += f"; names {', '.join(short)}"
    return proc.returncode, detail, wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_py = REPO / ".venv" / "bin" / "python"
    parser.add_argument(
        "--python", default=str(default_py if default_py.exists() else sys.executable)
    )
    parser.add_argument("--version", default=SELFCHECK_DEFAULT, help="pinned release to patch")
    parser.add_argument("--targets", nargs="+", default=["contracts"], help="pytest targets")
    parser.add_argument(
        "--selfcheck", action="store_true", help="green scenarios with --selfcheck too"
    )
    parser.add_argument("--only", nargs="+", choices=sorted(SCENARIOS), help="run these only")
    args = parser.parse_args()
    try:
        root = release_source(args.version)
    except GuardError as exc:
        print(f"check_contracts_on_edits: error: {exc}", file=sys.stderr)
        return 2
    rows = []
    for name in args.only or SCENARIOS:
        expected, mutations = SCENARIOS[name]
        runs = [("plain", [])]
        if args.selfcheck and expected == "green":
            runs.append(("--selfcheck", ["--selfcheck"]))
        for mode, extra in runs:
            try:
                status, detail, wall = run_scenario(
                    args.python, root, mutations, args.targets, extra
                )
            except GuardError as exc:  # an edit that no longer applies to the pinned source
                status, detail, wall = 2, f"edit does not apply: {exc}", 0.0
            observed = "green" if status == 0 else "red" if status == 1 else f"exit {status}"
            located = "names " in detail
            ok = observed == expected and (expected == "green" or located)
            rows.append((name, mode, expected, observed, ok, wall, detail))
            print(
                f"[edits] {name} ({mode}): {observed} in {wall:.0f} s - "
                f"{'ok' if ok else 'DIFFERS'}",
                file=sys.stderr,
            )
    print(
        f"\nvLLM {args.version} (pinned source, patched in a temporary copy); "
        f"pytest {' '.join(args.targets)} --vllm-src TMP\n"
    )
    print("| scenario | run | expected | observed | as expected | wall s | detail |")
    print("|---|---|---|---|---|---|---|")
    for name, mode, expected, observed, ok, wall, detail in rows:
        print(
            f"| {name} | {mode} | {expected} | {observed} | {'yes' if ok else 'NO'} "
            f"| {wall:.0f} | {detail} |"
        )
    return 0 if all(r[4] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
