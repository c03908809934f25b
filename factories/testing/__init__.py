"""pytest glue shared by ``contracts/`` and ``tests/``.

``suite_env`` decides where a test may run (vLLM present, real AITER usable, one GPU per xdist
worker); ``summary_section`` collects terminal-summary lines; ``recording`` observes the
attributes a method really reads; ``releases`` locates the verified vLLM release sources.

The contract suite's plugin is ``contracts_plugin`` (``--selfcheck``, ``--vllm-src``,
``--contracts-profile``, ``--aiter-contract``); ``selfcheck`` says which pinned release the
self-proofs mutate; ``hypothesis_profiles`` sets how many examples the property contracts draw.
For ``factories.evaluation.judge``: ``stub_runner`` runs vLLM test files one forked pytest each,
under ``stub_tracker``, the plugin that records the methods called on every ``object.__new__``
stub and the AttributeErrors it raised; the plugin rewrites the tests' ``SimpleNamespace`` calls
to ``namespace_tracker``'s subclass, which records what vLLM code reads from each namespace
stand-in and the AttributeErrors raised there.
"""
