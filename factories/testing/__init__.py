"""pytest glue shared by ``contracts/`` and ``tests/``.

``suite_env`` decides where a test may run (vLLM present, real AITER usable, one GPU per xdist
worker); ``summary_section`` collects terminal-summary lines; ``recording`` observes the
attributes a method really reads; ``releases`` locates the verified vLLM release sources.
"""
