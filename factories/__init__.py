"""Test infrastructure for vLLM's ROCm AITER FP8 MLA prefill path.

Flow: ``factories.analysis`` (AST read-set analyzer, stub extraction, audit; imports neither
torch nor vllm) -> ``factories.stubs.specs`` (stub specs as data) -> factories (``make_impl``,
``make_builder``, ``make_prefill_batch``) -> ``contracts/`` and ``tests/`` -> ``tools/``.

This package's import is deliberately free of torch and vllm so that ``tools/audit_stubs.py``
stays a fast pre-commit hook; the torch-using modules are imported on demand.
"""
