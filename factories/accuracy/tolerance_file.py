"""The versioned tolerance file ``factories/accuracy/tolerances.json``: load, verify, digest.

Why: the bounds of the FP8 prefill accuracy suite are derived by ``tools/calibrate_tolerance.py``
from an error model and a sweep, never typed in. The file records the numbers together with the
sweep, the measured maxima they came from, the margin, the date, the machine and the tool version,
and a sha256 digest over all of it. :func:`load` refuses a file whose digest does not match, so a
hand edit (a loosened atol, a "fixed" maximum) fails every test that reads the bounds until the
calibration is re-run.

Module import touches neither vLLM nor matplotlib.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

#: The file the suite reads.
TOLERANCE_FILE = Path(__file__).resolve().with_name("tolerances.json")
SCHEMA = 1
#: Backends the file holds: the emulation, and the real gfx950 kernels (``--aiter-backend aiter``).
FILE_BACKENDS = ("emulated", "gfx950")
#: Suite backend name (``factories.aiter.backend.Backend.name``) -> file backend.
SUITE_TO_FILE = {"emulated": "emulated", "aiter": "gfx950"}


class ToleranceFileError(ValueError):
    """The tolerance file is missing, malformed, or was changed without re-running the calibration."""


def canonical_json(data: Any) -> str:
    """Sorted keys, no whitespace, exact float repr, no NaN/inf: the bytes the digest covers."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=False, ensure_ascii=True)


def compute_digest(data: Mapping[str, Any]) -> str:
    """sha256 over the canonical JSON of everything in the file except ``digest`` itself."""
    body = {k: v for k, v in data.items() if k != "digest"}
    return hashlib.sha256(canonical_json(body).encode("ascii")).hexdigest()


def seal(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with its ``digest`` entry (re)computed."""
    out = {k: v for k, v in data.items() if k != "digest"}
    out["digest"] = {"algorithm": "sha256", "over": "canonical JSON of every other top-level key", "value": compute_digest(out)}
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
        for key in ("out_atol", "out_rtol", "lse_atol", "lse_rtol"):
            value = entry.get(key)
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise ToleranceFileError(f"{name}.{key} = {value!r} is not a finite number >= 0")
        stats = entry.get("stats", {})
        for key in ("rel_fro_max", "slope_dev_max", "bias_max"):
            value = stats.get(key)
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
                raise ToleranceFileError(f"{name}.stats.{key} = {value!r} is not a finite number > 0")


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


@attrs.frozen
class DerivedTolerance:
    """One backend's bounds as the file states them."""

    backend: str
    version: str
    out_atol: float
    out_rtol: float
    lse_atol: float
    lse_rtol: float
    rel_fro_max: float
    slope_dev_max: float
    bias_max: float
    derivation: str = attrs.field(repr=False)

    def stat_bounds(self):
        from factories.accuracy.error_stats import StatBounds

        return StatBounds(self.rel_fro_max, self.slope_dev_max, self.bias_max)


def derived(data: Mapping[str, Any], backend: str) -> DerivedTolerance:
    """Bounds of file backend ``backend`` (``emulated`` or ``gfx950``)."""
    entry = data["tolerances"][backend]
    stats = entry["stats"]
    version = f"{data['tool']['version']} / {data['generated']['date']} / {data['digest']['value'][:12]}"
    return DerivedTolerance(
        backend=backend,
        version=version,
        out_atol=float(entry["out_atol"]),
        out_rtol=float(entry["out_rtol"]),
        lse_atol=float(entry["lse_atol"]),
        lse_rtol=float(entry["lse_rtol"]),
        rel_fro_max=float(stats["rel_fro_max"]),
        slope_dev_max=float(stats["slope_dev_max"]),
        bias_max=float(stats["bias_max"]),
        derivation=str(entry.get("derivation", "")),
    )


__all__ = [
    "DerivedTolerance",
    "FILE_BACKENDS",
    "SUITE_TO_FILE",
    "TOLERANCE_FILE",
    "ToleranceFileError",
    "canonical_json",
    "compute_digest",
    "derived",
    "read",
    "seal",
    "verify",
]
