"""How many Hypothesis examples the property contracts draw: a fast default, the CI counts.

``pytest contracts/`` runs after every refactor, so by default (``fast``) each property draws a
few derandomized examples; ``.ci/run`` selects ``ci`` (``--contracts-profile ci`` or
``$VLLM_GUARD_CONTRACTS_PROFILE=ci``), the counts these contracts have always run with. A test
states its CI count; ``contract_settings`` scales it. The profiles are applied per test through
``settings(parent=...)``, so the global Hypothesis profile other suites use is never changed.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

PROFILE_ENV = "VLLM_GUARD_CONTRACTS_PROFILE"
#: profile -> (fraction of the CI count, floor); ``fast`` is always derandomized (the same few
#: examples every run), ``ci`` keeps each test's own choice.
PROFILES = {"fast": (0.15, 5), "ci": (1.0, 1)}
_COMMON = dict(
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)


def contracts_profile() -> str:
    """``$VLLM_GUARD_CONTRACTS_PROFILE`` (``fast`` when unset); an unknown name raises."""
    name = os.environ.get(PROFILE_ENV) or "fast"
    if name not in PROFILES:
        raise ValueError(f"${PROFILE_ENV}={name!r}: expected one of {sorted(PROFILES)}")
    return name


def contract_settings(ci_examples: int, ci_derandomize: bool = True) -> settings:
    """Settings for a property whose CI run draws ``ci_examples`` examples
    (derandomized there when ``ci_derandomize``)."""
    name = contracts_profile()
    fraction, floor = PROFILES[name]
    examples = max(min(floor, ci_examples), round(ci_examples * fraction))
    derandomize = True if name == "fast" else ci_derandomize
    return settings(max_examples=examples, derandomize=derandomize, **_COMMON)
