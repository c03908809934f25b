"""Mutations that prove a check can fail.

``source`` applies one-line edits to a temporary copy of a pinned vLLM release source;
``kernels`` builds broken variants of the emulated AITER kernels and the kill matrix that shows
the accuracy checks reject them.
"""
