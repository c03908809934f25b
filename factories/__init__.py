"""Test infrastructure for vLLM's ROCm AITER FP8 MLA prefill path.

Flow: ``factories.analysis`` (AST read-set analyzer, stub extraction, audit; imports neither
torch nor vllm) -> ``factories.stubs.specs`` (stub specs as data) -> factories (``make_impl``,
``make_builder``, ``make_prefill_batch``) -> ``contracts/`` and ``tests/`` -> ``tools/``.

Every exception is in ``factories.errors`` under one base, ``GuardError``, which the CLIs and
fixtures catch; every failure is a small frozen value with an enum kind (``Finding``, ``Problem``,
the plan validator's ``Check``), so tests assert on kinds, not on wording.

This package's import is deliberately free of torch and vllm so that ``tools/audit_stubs.py``
stays a fast pre-commit hook; the torch-using modules are imported on demand.
"""
