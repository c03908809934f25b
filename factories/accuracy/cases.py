"""The accuracy case table: the one list of batches the FP8 prefill accuracy is measured on.

Why one table: the suite (``tests/accuracy/test_fp8_prefill_accuracy.py``), the calibration that
derives the bounds from a sweep over the suite's batches (:mod:`factories.accuracy.calibration`)
and the kernel-level GPU runner (``tools/run_gpu_kernel_suite.py``) must measure the same
batches; three copies had already drifted apart.

Sizes: the CPU cases keep ``pytest tests/`` within a few minutes on 2 cores (the emulated
kernel and the float64 reference both cost ~ heads * q_len^2), so long requests run at the
smallest head count (12, padded to 16): one 8192-token request, and 16384 tokens as one ragged
batch; ``gpu`` cases (q_len up to 65536, 128 heads) run only where torch sees a CUDA/ROCm
device. CU counts are chosen so the plan splits tiles (80 or 304; 256 pairs long causal tiles
perfectly and splits nothing) except where a case checks the unsplit path.
"""

from __future__ import annotations

import attrs

from factories.aiter.layout import QK_HEAD_DIM

#: Heads per kernel head group: vLLM pads the head count to a multiple of this before the kernel.
KERNEL_HEAD_MULTIPLE = 16

#: The softmax scale of vLLM's MLA prefill for the kernel's head dims (``1 / sqrt(qk_head_dim)``);
#: the kernel-level runs, which have no vLLM impl to ask, use it.
SOFTMAX_SCALE = QK_HEAD_DIM**-0.5


@attrs.frozen
class AccuracyCase:
    """One batch: prefill requests of ``lens`` tokens (KV = Q: no prefix) behind ``decodes``
    one-token decodes, ``heads`` real heads, planned for ``cu`` CUs by the emulated planner (the
    real planner uses the device's count). ``splits``: the case is meant to exercise split tiles
    and the reduce. ``gpu``: GPU-sized, slow, needs a CUDA/ROCm device."""

    id: str
    lens: tuple[int, ...] = attrs.field(converter=tuple)
    decodes: int
    heads: int
    cu: int
    splits: bool = False
    gpu: bool = False

    @property
    def total_tokens(self) -> int:
        return sum(self.lens)

    @property
    def kernel_heads(self) -> int:
        """The head count the kernel sees (vLLM pads the real heads up to the kernel's group)."""
        return -(-self.heads // KERNEL_HEAD_MULTIPLE) * KERNEL_HEAD_MULTIPLE


#: 16384 prefill tokens in one batch: one 4096 request beside ragged ones, a 1-token request.
SIXTEEN_K = (4096, 2048, 2048, 2048, 1536, 1024, 1023, 1000, 777, 511, 257, 15, 1)
#: 65536 prefill tokens in one batch, one 32k request among them.
SIXTY_FOUR_K = (32768, 16384, 8191, 4097, 2048, 1024, 1000, 23, 1)

_RAGGED = (300, 1, 777, 256, 20)

CASES: tuple[AccuracyCase, ...] = (
    # The seed test's two cases (upstream PR #51457): one request, 16 heads, MI355's 256 CUs.
    AccuracyCase("seed-1x128-h16", (128,), 0, 16, 256),
    AccuracyCase("seed-1x512-h16", (512,), 0, 16, 256),
    AccuracyCase("one-token-h16", (1,), 0, 16, 256),
    # Ragged batches behind decodes; lengths off the 256-row tile, a 1-token request.
    AccuracyCase("ragged-3dec-h12-cu80", _RAGGED, 3, 12, 80, splits=True),
    AccuracyCase("ragged-3dec-h24-cu80", _RAGGED, 3, 24, 80, splits=True),
    AccuracyCase("ragged-3dec-h16-cu256", _RAGGED, 3, 16, 256, splits=True),
    AccuracyCase("ragged-2dec-h32-cu80", (1000, 255, 257, 1), 2, 32, 80, splits=True),
    AccuracyCase("ragged-1dec-h128-cu80", (513, 64, 1), 1, 128, 80, splits=True),
    AccuracyCase("ragged-1dec-h128-cu256", (513, 64, 1), 1, 128, 256),
    # One long request beside many short ones.
    AccuracyCase("long-beside-short-2dec-h16-cu80", (5000,) + (17,) * 7, 2, 16, 80, splits=True),
    AccuracyCase("16k-tokens-ragged-4dec-h12-cu256", SIXTEEN_K, 4, 12, 256, splits=True),
    AccuracyCase("1x8192-h12-cu304", (8192,), 0, 12, 304, splits=True),
    # GPU-sized.
    AccuracyCase("gpu-1x65536-h16-cu304", (65536,), 0, 16, 304, splits=True, gpu=True),
    AccuracyCase("gpu-1x65536-h128-cu132", (65536,), 0, 128, 132, splits=True, gpu=True),
    AccuracyCase("gpu-1x32768-h128-cu256", (32768,), 0, 128, 256, gpu=True),
    AccuracyCase(
        "gpu-64k-tokens-ragged-8dec-h16-cu256", SIXTY_FOUR_K, 8, 16, 256, splits=True, gpu=True
    ),
    AccuracyCase("gpu-4x16384-2dec-h128-cu80", (16384,) * 4, 2, 128, 80, splits=True, gpu=True),
    AccuracyCase("gpu-1x16384-h24-cu304", (16384,), 0, 24, 304, splits=True, gpu=True),
)

CPU_CASES: tuple[AccuracyCase, ...] = tuple(c for c in CASES if not c.gpu)
GPU_CASES: tuple[AccuracyCase, ...] = tuple(c for c in CASES if c.gpu)
_BY_ID = {c.id: c for c in CASES}


def case(case_id: str) -> AccuracyCase:
    """The case of that id (KeyError naming the known ids)."""
    try:
        return _BY_ID[case_id]
    except KeyError:
        raise KeyError(f"unknown accuracy case {case_id!r}; known: {', '.join(_BY_ID)}") from None


def cases(case_ids: tuple[str, ...] | list[str]) -> tuple[AccuracyCase, ...]:
    return tuple(case(i) for i in case_ids)
