"""Self-auditing factories: before a factory builds a stub, audit its spec against the class.

The class audited is the one the caller *imported* (so a mutated copy of vLLM, an editable
checkout or a wheel all work), located through ``inspect.getsourcefile``; the analysis is the
same one ``tools/audit_stubs.py`` runs.  Results are cached per (spec, source file content),
so a test session pays for it once per class.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import warnings
from pathlib import Path

from factories.analysis.audit import StubAuditor
from factories.analysis.findings import Finding, FindingKind
from factories.errors import StaleStubFieldWarning, StubDriftError
from factories.stubs.specs import StubSpec, stub_from_spec


def source_root_of(cls: type) -> tuple[Path, Path]:
    """(folder holding ``vllm/``, file defining ``cls``) for an imported vLLM class."""
    path = Path(inspect.getsourcefile(cls) or "")
    for parent in path.parents:
        if (parent / "vllm" / "__init__.py").is_file():
            return parent, path
    raise LookupError(f"{cls!r} is not defined under a folder holding vllm/ ({path})")


@functools.lru_cache(maxsize=64)
def _audit_cached(spec: StubSpec, root: str, digest: str) -> tuple[Finding, ...]:
    del digest  # part of the cache key only: a changed file is re-analysed
    result = StubAuditor(Path(root)).audit_stubs([stub_from_spec(spec)], 0, 0)
    return result.findings


def audit_spec_against(spec: StubSpec, cls: type) -> tuple[Finding, ...]:
    """Findings of ``spec`` against the source of the imported class ``cls``."""
    root, path = source_root_of(cls)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return _audit_cached(spec, str(root), digest)


def _drift_message(spec: StubSpec, findings: tuple[Finding, ...]) -> str:
    """What a ``StubDriftError`` says: the stub, where its spec is, and one line per finding."""
    lines = [
        f"{spec.class_name} stub for {spec.scenario!r} drifted from vLLM "
        f"(spec at {spec.defined_at}); update factories/stubs/specs.py:"
    ]
    for f in findings:
        lines.append(f"  - [{f.kind.value}] {f.message} (vLLM: {f.vllm_location})")
    return "\n".join(lines)


def ensure_no_drift(spec: StubSpec, cls: type) -> None:
    """Raise ``StubDriftError`` on any error finding; warn on stale fields."""
    findings = audit_spec_against(spec, cls)
    errors = tuple(f for f in findings if f.kind is not FindingKind.STALE_FIELD)
    if errors:
        raise StubDriftError(_drift_message(spec, errors), errors)
    for f in findings:
        warnings.warn(
            f"{f.message} (spec at {spec.defined_at})", StaleStubFieldWarning, stacklevel=3
        )
