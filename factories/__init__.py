"""Test infrastructure for vLLM's ROCm AITER FP8 MLA prefill path.

Flow: ``factories.analysis`` (AST read-set analyzer, stub extraction, audit; imports neither
torch nor vllm) -> ``factories.stubs.specs`` (stub specs as data) -> factories (``make_impl``,
``make_builder``, ``make_prefill_batch``) -> ``contracts/`` and ``tests/`` -> ``tools/``.

One sub-package per job, each importing only those below it (``tests/repository/test_layers.py``
holds the ranks): ``errors`` and ``locations`` (where caches live; both stdlib only);
``analysis``; ``aiter`` (AITER's surface and its emulation); ``stubs`` and ``testing`` (pytest
glue); ``evaluation`` (the analyzer measured on vLLM's history and by running vLLM's tests) and
``mutation`` (things that must fail); ``accuracy``; ``cli`` (``audit-stubs``).

Every exception is in ``factories.errors`` under one base, ``GuardError``, which the CLIs and
fixtures catch; every failure is a small frozen value with an enum kind (the analyzer's
``Finding`` and ``Problem``, the plan validator's ``PlanViolation`` with its ``Check``), so tests
assert on kinds, not on wording.

This package's import is deliberately free of torch and vllm so that ``tools/audit_stubs.py``
stays a fast pre-commit hook; the torch-using modules are imported on demand.
"""
