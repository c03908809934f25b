"""Hypothesis profiles for the AITER contract tests.

Why profiles rather than inline numbers: CI runs ``contracts/aiter_ps`` on 2 cores and must
stay under about a minute, while a developer chasing a planner bug wants thousands of cases. The
tests pick the profile named by ``AITER_CONTRACTS_PROFILE`` (default ``aiter-ci``) through
``settings(parent=settings.get_profile(...))``, so loading them never changes the global
Hypothesis profile other test directories run under.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

_COMMON = dict(
    deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)

settings.register_profile("aiter-ci", max_examples=60, derandomize=True, **_COMMON)
settings.register_profile("aiter-thorough", max_examples=1500, **_COMMON)
