"""AITER's PS prefill surface, as this project knows it.

``layout`` holds AITER's numbers (tile rows, head dims, buffer columns, planner settings, the
four function names) once; ``signatures`` pins the four functions' parameters; ``ps_buffers``
the six planner buffers; ``emulation`` is the verified fake installed as ``aiter`` off gfx950;
``validator`` and ``batch`` judge and drive plans from either AITER; ``backend`` picks the real
or emulated one; ``spy`` records and checks what vLLM hands AITER; ``revision`` says which AITER
contract revision (before or after ROCm/aiter#3606) all of them follow.
"""
