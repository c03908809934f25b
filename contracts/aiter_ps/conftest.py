"""Hypothesis profiles for the AITER contract tests.

Why profiles rather than inline numbers: ``pytest contracts/`` runs after every refactor and
CI on 2 cores, while a developer chasing a planner bug wants thousands of cases. By default the
properties use the suite's profile (``factories.testing.hypothesis_profiles``: ``fast``, or
``ci`` = the 60 examples of ``aiter-ci`` under ``.ci/run``); ``AITER_CONTRACTS_PROFILE`` names
one of the profiles below instead. They are applied through ``settings(parent=...)``, so
loading them never changes the global Hypothesis profile other test directories run under.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

_COMMON = dict(
    deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)

settings.register_profile("aiter-ci", max_examples=60, derandomize=True, **_COMMON)
settings.register_profile("aiter-thorough", max_examples=1500, **_COMMON)
