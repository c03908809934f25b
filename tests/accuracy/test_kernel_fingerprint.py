"""On gfx950 the suite fingerprints the real kernel, prints it, and fails when the bounds were
derived for another arithmetic.

Why: a pass or fail of the accuracy suite on MI355 only means something if the gfx950 bounds
were derived for the arithmetic the kernel really computes (issue 11). The real run is gated to
ROCm gfx950 (``gfx950`` marker) and runs there unchanged; here the verdict is exercised with
fingerprints faked as data (every branch: a member of the bounds' variant, another variant, no
match) and with a real emulated fingerprint against the shipped file.
"""

from __future__ import annotations

import math

import attrs
import pytest

from factories.accuracy import REAL_GFX950_TOLERANCE
from factories.accuracy.fingerprint import (
    OBSERVABLES,
    Evidence,
    summary_lines,
    tolerance_mismatch,
)
from factories.accuracy.tolerance import Tolerance


def _bounds(variant: str, members: tuple[str, ...]) -> Tolerance:
    return attrs.evolve(REAL_GFX950_TOLERANCE, variant=variant, variants=members)


def _faked(observed_as: str | None, names=("p8-unscaled", "p8-row-max")) -> Evidence:
    """An Evidence whose observation equals the expectation of ``observed_as`` (None: of none),
    with candidates separated by 100 noises on every observable."""
    expected = {n: {k: 100.0 * i for k in OBSERVABLES} for i, n in enumerate(names)}
    obs = expected[observed_as] if observed_as else {k: -1e3 for k in OBSERVABLES}
    return Evidence(
        seed=0,
        backend="aiter (faked)",
        observed=dict(obs),
        expected=expected,
        noise=dict.fromkeys(OBSERVABLES, 1.0),
        noise_seeds=(1, 2, 3),
        split_store_rows=32,
    )


@pytest.mark.parametrize(
    "found, variant, members, says",
    [
        ("p8-row-max", "envelope", ("p8-unscaled", "p8-row-max"), None),
        ("p8-row-max", "p8-row-max", ("p8-row-max",), None),
        ("p8-row-max", "p8-unscaled", ("p8-unscaled",), "computes p8-row-max, but"),
        ("p8-unscaled-rowsum-p8", "envelope", ("p8-unscaled",), "derived for envelope"),
        (None, "envelope", ("p8-unscaled",), "matches no candidate"),
    ],
)
def test_bounds_fit_only_the_variant_they_were_derived_for(found, variant, members, says):
    msg = tolerance_mismatch(found, _bounds(variant, members))
    if says is None:
        assert msg is None
    else:
        assert msg is not None and says in msg
        assert "tools/calibrate_tolerance.py" in msg or "no candidate" in says


def test_summary_shows_the_evidence_and_the_verdict():
    fits = summary_lines(_faked("p8-row-max"), _bounds("envelope", ("p8-row-max",)))
    assert "identified: p8-row-max" in fits and fits[-1] == "fits the kernel"
    bad = summary_lines(_faked("p8-row-max"), _bounds("p8-unscaled", ("p8-unscaled",)))
    assert bad[-1].startswith("MISMATCH: the kernel computes p8-row-max")
    none = summary_lines(_faked(None), _bounds("envelope", ("p8-row-max",)))
    assert "identified: none" in none and none[-1].startswith("MISMATCH:")
    assert any(line.startswith("| tiny.A |") for line in none)


def test_the_shipped_bounds_name_their_variant():
    t = REAL_GFX950_TOLERANCE
    assert t.variant, "tolerances.json must name the gfx950 variant (or envelope)"
    assert t.variants and all(isinstance(n, str) for n in t.variants)
    if t.variant != "envelope":
        assert t.variants == (t.variant,)
    assert t.lse_per_key > 0 and math.isfinite(t.lse_per_key)


def _gate(backend, log: list, run, tolerance: Tolerance = REAL_GFX950_TOLERANCE) -> None:
    """The gfx950 test's body: fingerprint with ``run``, log the summary, fail on a mismatch."""
    if backend.is_emulated:
        pytest.skip("the emulation is not the kernel to fingerprint (use --aiter-backend aiter)")
    ev = run("aiter")
    log.extend(summary_lines(ev, tolerance))
    msg = tolerance_mismatch(ev.identified(), tolerance)
    if msg is not None:
        pytest.fail(msg, pytrace=False)


@pytest.mark.gfx950
def test_real_kernel_matches_the_bounds_variant(aiter_backend, fingerprint_log):
    """gfx950 only: fingerprint the real kernel, print the evidence in the terminal summary,
    fail if the gfx950 bounds were derived for another arithmetic."""
    from factories.accuracy.fingerprint import fingerprint

    _gate(aiter_backend, fingerprint_log, fingerprint)


@attrs.frozen
class _RealBackend:
    is_emulated: bool = False


def test_the_gate_fails_with_the_reason_on_a_faked_mismatch():
    log: list[str] = []
    bounds = _bounds("p8-unscaled", ("p8-unscaled",))
    with pytest.raises(pytest.fail.Exception, match="computes p8-row-max, but"):
        _gate(_RealBackend(), log, lambda _b: _faked("p8-row-max"), bounds)
    assert "identified: p8-row-max" in log and log[-1].startswith("MISMATCH")
    log.clear()
    _gate(_RealBackend(), log, lambda _b: _faked("p8-unscaled"), bounds)  # passes
    assert log[-1] == "fits the kernel"
    with pytest.raises(pytest.skip.Exception):
        _gate(_RealBackend(is_emulated=True), log, lambda _b: _faked(None), bounds)
