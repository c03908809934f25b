"""The accuracy bounds, and the versioned file they live in (``tolerances.json`` beside this).

Why one module: the bounds of the FP8 prefill accuracy suite are derived by the calibration
(:mod:`factories.accuracy.calibration`, ``tools/calibrate_tolerance.py``) from an error model and
a sweep, never typed in. The file records the numbers together with the sweep, the measured
maxima they came from, the margin, the date, the machine and the tool version, and a sha256
digest over all of it. :func:`read` refuses a file whose digest does not match, so a hand edit (a
loosened atol, a "fixed" maximum) fails every test that reads the bounds until the calibration is
re-run. :class:`Tolerance` is the one value a check is judged with, whether it came from the file
or was written for a one-off (the seed test's bound, a measure-only bound).

Module import touches neither vLLM nor matplotlib; it reads and verifies the file once.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import torch

from factories.accuracy.error_stats import StatBounds
from factories.errors import ToleranceFileError

#: The file the suite reads (package data: it ships in the wheel).
TOLERANCE_FILE = Path(__file__).resolve().with_name("tolerances.json")
SCHEMA = 1
#: Backends the file holds: the emulation, and the real gfx950 kernels (``--aiter-backend aiter``).
FILE_BACKENDS = ("emulated", "gfx950")
#: Suite backend name (``factories.aiter.backend.Backend.name``) -> file backend.
SUITE_TO_FILE = {"emulated": "emulated", "aiter": "gfx950"}

#: The seed test's bound (upstream PR #51457: atol 0.1, rtol 0.05, "measured worst ~0.054 on
#: MI355"). Every bound here must be at least 10x tighter for the emulated backend.
SEED_ATOL, SEED_RTOL = 0.1, 0.05


@attrs.frozen
class Tolerance:
    """``|out - ref| <= out_atol + out_rtol * |ref|`` element-wise on every output row, and
    ``|final_lse - ref_lse| <= lse_atol + lse_per_key * (n - 1) + lse_rtol * |ref_lse|`` on the
    rows the reduce wrote, ``n`` the row's key count (the fp32 row sum ``l`` over ``n`` keys may
    err by ``(n - 1) u_fp32`` relative, Higham's bound; a variant whose ``l`` sums rounded P
    fits a larger slope, docs/TOLERANCES.md); with ``stats``, the aggregate error statistic must
    also meet those bounds.

    ``backend`` names whom the bound is for (a suite backend, a file backend, or a label such
    as ``seed``); ``version`` names the revision of the table; ``source`` says where each number
    comes from.
    """

    backend: str
    version: str
    out_atol: float
    out_rtol: float
    lse_atol: float
    lse_rtol: float
    source: str = attrs.field(repr=False)
    stats: StatBounds | None = attrs.field(default=None, repr=False)
    lse_per_key: float = 0.0
    #: What the bounds were derived for: a variant name, or ``envelope`` (see ``variants``).
    variant: str = attrs.field(default="", repr=False)
    variants: tuple[str, ...] = attrs.field(default=(), repr=False)

    def out_allowed(self, ref: torch.Tensor) -> torch.Tensor:
        return _allowed(ref, self.out_atol, self.out_rtol)

    def lse_at(self, keys: int) -> float:
        """The LSE atol of a row that sees ``keys`` keys."""
        return self.lse_atol + self.lse_per_key * max(int(keys) - 1, 0)

    def lse_allowed(self, ref: torch.Tensor, keys: torch.Tensor | None = None) -> torch.Tensor:
        """``ref [T, H]``; ``keys [T]`` the key count of each row (None: the constant part)."""
        allowed = _allowed(ref, self.lse_atol, self.lse_rtol)
        if keys is not None and self.lse_per_key:
            grow = (keys.to(allowed.device, torch.float32) - 1).clamp_min(0) * self.lse_per_key
            allowed = allowed + grow.reshape(-1, *([1] * (allowed.dim() - 1)))
        return allowed

    def elementwise(self) -> Tolerance:
        """The same bounds without the statistic: what judges the element-wise check alone
        (the kill matrix keeps the two checks in separate columns)."""
        return attrs.evolve(self, stats=None)

    def describe(self) -> str:
        return (
            f"{self.backend} [{self.version}]: |out-ref| <= {self.out_atol:.3g} + "
            f"{self.out_rtol:.3g}*|ref|; |lse-ref| <= {self.lse_atol:.3g} + "
            f"{self.lse_per_key:.3g}*(keys-1) + {self.lse_rtol:.3g}*|ref|"
        )


def _allowed(ref: torch.Tensor, atol: float, rtol: float) -> torch.Tensor:
    """``atol + rtol * |ref|``; where ``ref`` is infinite (an LSE of -inf) only ``atol``, so an
    infinite reference never makes every value acceptable (and 0 * inf never makes it NaN)."""
    return ref.abs().nan_to_num(nan=0.0, posinf=0.0).mul_(rtol).add_(atol)


# --------------------------------------------------------------------------------------------
# The file: canonical form, digest, verification
# --------------------------------------------------------------------------------------------


def canonical_json(data: Any) -> str:
    """Sorted keys, no whitespace, exact float repr, no NaN/inf: the bytes the digest covers."""
    return json.dumps(
        data, sort_keys=True, separators=(",", ":"), allow_nan=False, ensure_ascii=True
    )


def compute_digest(data: Mapping[str, Any]) -> str:
    """sha256 over the canonical JSON of everything in the file except ``digest`` itself."""
    body = {k: v for k, v in data.items() if k != "digest"}
    return hashlib.sha256(canonical_json(body).encode("ascii")).hexdigest()


def seal(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with its ``digest`` entry (re)computed."""
    out = {k: v for k, v in data.items() if k != "digest"}
    out["digest"] = {
        "algorithm": "sha256",
        "over": "canonical JSON of every other top-level key",
        "value": compute_digest(out),
    }
    return out


def verify(data: Mapping[str, Any]) -> None:
    """Raise :class:`ToleranceFileError` unless ``data`` is a well-formed, untouched file."""
    if data.get("schema") != SCHEMA:
        raise ToleranceFileError(f"tolerance file schema {data.get('schema')!r}, expected {SCHEMA}")
    digest = data.get("digest")
    if not isinstance(digest, Mapping) or digest.get("algorithm") != "sha256":
        raise ToleranceFileError("tolerance file has no sha256 digest")
    want = compute_digest(data)
    if digest.get("value") != want:
        raise ToleranceFileError(
            f"tolerance file digest mismatch (stored {str(digest.get('value'))[:12]}..., content "
            f"{want[:12]}...): the file was changed without re-running tools/calibrate_tolerance.py"
        )
    tolerances = data.get("tolerances")
    if not isinstance(tolerances, Mapping) or set(tolerances) != set(FILE_BACKENDS):
        raise ToleranceFileError(f"tolerance file must hold backends {FILE_BACKENDS}")
    for name, entry in tolerances.items():
        for key in ("out_atol", "out_rtol", "lse_atol", "lse_rtol", "lse_per_key"):
            value = entry.get(key, 0.0 if key == "lse_per_key" else None)
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise ToleranceFileError(f"{name}.{key} = {value!r} is not a finite number >= 0")
        stats = entry.get("stats", {})
        for key in ("rel_fro_max", "slope_dev_max", "bias_max"):
            value = stats.get(key)
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
                raise ToleranceFileError(
                    f"{name}.stats.{key} = {value!r} is not a finite number > 0"
                )


def read(path: Path | str = TOLERANCE_FILE) -> dict[str, Any]:
    """The verified file content."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ToleranceFileError(f"{p} does not exist: run tools/calibrate_tolerance.py") from None
    except json.JSONDecodeError as exc:
        raise ToleranceFileError(f"{p} is not JSON: {exc}") from None
    verify(data)
    return data


def file_tolerance(data: Mapping[str, Any], backend: str) -> Tolerance:
    """The bounds of file backend ``backend`` (``emulated`` or ``gfx950``) of verified ``data``,
    statistic included; ``source`` carries the file's derivation text."""
    entry = data["tolerances"][backend]
    version = (
        f"{data['tool']['version']} / {data['generated']['date']} / {data['digest']['value'][:12]}"
    )
    return Tolerance(
        backend=backend,
        version=version,
        out_atol=float(entry["out_atol"]),
        out_rtol=float(entry["out_rtol"]),
        lse_atol=float(entry["lse_atol"]),
        lse_rtol=float(entry["lse_rtol"]),
        source=(
            f"factories/accuracy/tolerances.json [{backend}], docs/TOLERANCES.md: "
            f"{entry.get('derivation', '')}"
        ),
        stats=StatBounds.from_mapping(entry["stats"]),
        lse_per_key=float(entry.get("lse_per_key", 0.0)),
        variant=str(entry.get("variant", "")),
        variants=tuple(entry.get("models", ())),
    )


def file_tolerances(data: Mapping[str, Any]) -> dict[str, Tolerance]:
    """File backend -> its bounds, for every backend the file holds."""
    return {backend: file_tolerance(data, backend) for backend in FILE_BACKENDS}


def _suite_tolerances() -> dict[str, Tolerance]:
    """The shipped file's bounds under the suite's backend names (its ``gfx950`` entry is the
    real AITER backend, ``aiter``)."""
    data = read()
    return {
        suite: attrs.evolve(file_tolerance(data, file_backend), backend=suite)
        for suite, file_backend in SUITE_TO_FILE.items()
    }


#: Backend name (``factories.aiter.backend.Backend.name``) -> its tolerance.
TOLERANCES: dict[str, Tolerance] = _suite_tolerances()
EMULATED_TOLERANCE = TOLERANCES["emulated"]
REAL_GFX950_TOLERANCE = TOLERANCES["aiter"]


def tolerance_for(backend: str) -> Tolerance:
    try:
        return TOLERANCES[backend]
    except KeyError:
        raise KeyError(
            f"no tolerance for backend {backend!r}; known: {sorted(TOLERANCES)}"
        ) from None
