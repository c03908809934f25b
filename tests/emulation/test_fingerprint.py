"""The kernel fingerprint names the arithmetic it is shown, and refuses one it does not know.

Why: the first gfx950 run must say *which* arithmetic the real kernel computes, so the gfx950
bounds can be derived for it (issue 11). Each candidate arithmetic is run as the "backend" (the
emulation under that variant) and must come out as itself, with every pair of candidates
separated by at least 10x the measured seed noise; an arithmetic outside the candidates (P rounded
to e5m2) and a candidate set with two indistinguishable members must give ``identified: none``.
The CLI runs once as a subprocess (exit code, last line) and on bad input (one line, exit 2).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from factories.accuracy import fingerprint as fp
from factories.aiter.emulation import ARITHMETIC_VARIANTS, KernelArithmetic

TOOL = Path(__file__).resolve().parents[2] / "tools" / "fingerprint_kernel.py"

#: Not a candidate: P rounded to e5m2 (2 mantissa bits, subnormals down to 2^-16).
E5M2_P = KernelArithmetic(p_dtype=torch.float8_e5m2)


def test_the_candidates_cover_the_issue_s_axes():
    names = list(fp.FINGERPRINT_VARIANTS)
    assert len(names) >= 6
    arith = [fp.FINGERPRINT_VARIANTS[n] for n in names]
    assert {a.p_dtype for a in arith} == {None, torch.float8_e4m3fn}
    assert {a.p_scaling for a in arith} == {"none", "lazy-rescale", "row-max"}
    assert {a.row_sum for a in arith} == {"fp32", "rounded"}
    assert {a.reduce_store for a in arith} == {"rne", "truncate"}
    assert set(names) | set(fp.NOT_FINGERPRINTED) == set(ARITHMETIC_VARIANTS)


@pytest.mark.parametrize("name", list(fp.FINGERPRINT_VARIANTS))
def test_every_variant_is_identified_as_itself(name):
    ev = fp.fingerprint("emulated", variant=name, seed=0)
    lines = fp.report(ev)
    assert lines[-1] == f"identified: {name}"
    assert ev.distance(name) == 0.0  # same plan, same inputs, same arithmetic
    assert not ev.undecided_pairs()
    for a in ev.expected:
        for b in ev.expected:
            if a < b:
                probe, ratio = ev.best_separation(a, b)
                assert ratio >= fp.DECISIVE_RATIO, (a, b, probe, ratio)
    # Each decisive probe's margin, as the table prints it, is >= 10x its seed noise (> 0).
    for probe, (gap, _pair) in ev.probe_margins().items():
        assert ev.noise[probe] > 0
        assert gap >= fp.DECISIVE_RATIO * ev.noise[probe], probe
    assert ev.split_store_rows > 0, "the store probe needs merged rows"


def test_an_unknown_arithmetic_is_not_identified():
    ev = fp.fingerprint("emulated", variant=E5M2_P, seed=0)
    lines = fp.report(ev)
    assert lines[-1] == "identified: none"
    assert ev.matches() == []
    assert "nearest:" in lines[-2]
    assert min(d for _, d in ev.nearest()) > 1.0


def test_candidates_it_cannot_tell_apart_give_none():
    """exp vs the folded exp2 differs at fp32 level only: with both as candidates the tool must
    say the pair is undecided rather than pick one."""
    cands = {n: ARITHMETIC_VARIANTS[n] for n in ("p8-unscaled", "p8-unscaled-exp", "fp32-p")}
    ev = fp.fingerprint("emulated", variant="p8-unscaled", seed=0, candidates=cands)
    assert [(a, b) for a, b, _, _ in ev.undecided_pairs()] == [("p8-unscaled", "p8-unscaled-exp")]
    assert ev.identified() is None
    assert fp.report(ev)[-1] == "identified: none"


def test_another_observation_seed_identifies_too():
    """Seed 1 observes with seed 1's jitter and measures noise against seeds 2-4."""
    ev = fp.fingerprint("emulated", variant="p8-row-max-rowsum-p8", seed=1)
    assert ev.identified() == "p8-row-max-rowsum-p8"
    assert ev.noise_seeds == (2, 3, 4)


def _tool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(TOOL), *args], capture_output=True, text=True, timeout=900
    )


def test_cli_identifies_a_variant_and_exits_0():
    r = _tool("--backend", "emulated", "--variant", "p8-lazy-rescale")
    assert r.returncode == 0, r.stderr
    out = r.stdout.strip().splitlines()
    assert out[-1] == "identified: p8-lazy-rescale"
    assert any(line.startswith("| late-max.A |") for line in out)


def test_cli_lists_the_variants():
    r = _tool("--list-variants")
    assert r.returncode == 0
    assert r.stdout.split() == list(fp.FINGERPRINT_VARIANTS)


@pytest.mark.parametrize(
    "args, says",
    [
        (("--backend", "cuda"), "--backend must be aiter or emulated"),
        (("--backend", "emulated", "--variant", "p5"), "unknown --variant"),
        (("--backend", "emulated", "--variant", "p8-unscaled-exp"), "not told apart"),
        (("--backend", "aiter", "--variant", "p8-unscaled"), "use --backend emulated"),
        (("--backend", "emulated", "--seed", "-1"), "--seed must be >= 0"),
        (("--frobnicate",), "unrecognized arguments"),
    ],
)
def test_cli_bad_input_is_one_line_exit_2(args, says):
    r = _tool(*args)
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], r.stderr


def test_cli_real_backend_off_gfx950_exits_3_with_the_reason():
    from factories.aiter.backend import real_aiter_unusable_reason

    reason = real_aiter_unusable_reason()
    if reason is None:
        pytest.skip("real AITER is usable here: the gfx950 run is the real one")
    r = _tool("--backend", "aiter")
    assert r.returncode == 3
    assert r.stderr.strip() == f"fingerprint_kernel: --backend aiter cannot run here: {reason}"
