"""Mutations that prove a check can fail.

``source`` applies one-line edits to a temporary copy of a pinned vLLM release source;
``broken_kernels`` builds broken variants of the emulated AITER kernels (the kill matrix that
shows the accuracy checks reject them is ``factories.accuracy.kill_matrix``).
"""
