"""The AST analyzer: what vLLM's methods read, and what a test's ``object.__new__`` stub sets.

Text only: nothing here imports torch or vllm (the audit runs in pre-commit on any Python 3.10+
with attrs). ``source_tree`` parses a tree that holds ``vllm/``; ``classes`` resolves names to
classes and MROs; ``readset`` walks method bodies; ``values`` holds what a test states about its
inputs; ``extraction`` finds the stubs in a test module; ``signatures`` binds calls; ``audit`` turns
all of it into ``findings``; ``trigger``, ``since`` and ``baseline`` serve pre-commit;
``history`` replays vLLM's releases to measure the audit. The command line is ``factories.cli``.
"""
