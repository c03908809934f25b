"""Stub factories: build vLLM's FP8 prefill objects the way vLLM's own test does, but checked.

``specs`` holds what each ``object.__new__`` stub sets (data, with reasons); ``drift`` audits a
spec against the imported class before anything is built; ``builders`` makes the stubs and their
metadata stand-ins (``standins``); ``pipeline`` drives vLLM's three FP8 prefill methods;
``device_shims`` and ``workspace`` scope the only global state those methods touch; ``fp8_path``
is the analyzer's view of the spec'd call sequence, shared by the contracts.
"""
