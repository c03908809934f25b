"""vLLM's FP8 MLA prefill against a float64 reference, through the real entry points.

Each case runs ``AiterMLAMetadataBuilder._init_fp8_prefill_ps_buffers`` ->
``_build_fp8_prefill_ps_metadata`` -> (workspace locked) -> ``AiterMLAImpl._mla_fp8_prefill_attn``
with the AITER of ``--aiter-backend`` (``factories.accuracy.run_fp8_prefill``), then compares
every output row with bottom-right causal attention computed in float64 on the same fp8 tensors
the kernel reads, and ``final_lse`` on exactly the rows the reduce merged
(``factories.accuracy.check_fp8_prefill``). Every output buffer is NaN before the run, so a row
nobody writes fails. The bound is ``factories.accuracy.tolerance_for(backend)``.

Sizes: the CPU cases keep ``pytest tests/`` within a few minutes on 2 cores (the emulated
kernel and the float64 reference both cost ~ heads * q_len^2), so long requests run at the
smallest head count (12, padded to 16): one 8192-token request, and 16384 tokens as one ragged
batch; ``slow`` cases (q_len up to 65536, 128 heads) run only where torch sees a CUDA/ROCm
device. CU counts are chosen so the plan splits tiles (80 or 304; 256 pairs long causal tiles
perfectly and splits nothing) except where a case checks the unsplit path.
"""

from __future__ import annotations

import attrs
import pytest
import torch

from factories.accuracy import check_fp8_prefill, run_fp8_prefill, tolerance_for


@attrs.frozen
class Case:
    id: str
    lens: tuple[int, ...]  # prefill query lengths (KV = Q: no prefix)
    decodes: int  # one-token decodes ahead of the prefills
    heads: int
    cu: int  # CU count the emulated planner plans for (the real one uses the device's)
    splits: bool = False  # the case is meant to exercise split tiles and the reduce
    gpu: bool = False  # GPU-sized: slow, needs a CUDA/ROCm device


#: 16384 prefill tokens in one batch: one 4096 request beside ragged ones, a 1-token request.
SIXTEEN_K = (4096, 2048, 2048, 2048, 1536, 1024, 1023, 1000, 777, 511, 257, 15, 1)
#: 65536 prefill tokens in one batch, one 32k request among them.
SIXTY_FOUR_K = (32768, 16384, 8191, 4097, 2048, 1024, 1000, 23, 1)
assert sum(SIXTEEN_K) == 16384 and sum(SIXTY_FOUR_K) == 65536

CASES = [
    # The seed test's two cases (upstream PR #51457): one request, 16 heads, MI355's 256 CUs.
    Case("seed-1x128-h16", (128,), 0, 16, 256),
    Case("seed-1x512-h16", (512,), 0, 16, 256),
    Case("one-token-h16", (1,), 0, 16, 256),
    # Ragged batches behind decodes; lengths off the 256-row tile, a 1-token request.
    Case("ragged-3dec-h12-cu80", (300, 1, 777, 256, 20), 3, 12, 80, splits=True),
    Case("ragged-3dec-h24-cu80", (300, 1, 777, 256, 20), 3, 24, 80, splits=True),
    Case("ragged-3dec-h16-cu256", (300, 1, 777, 256, 20), 3, 16, 256, splits=True),
    Case("ragged-2dec-h32-cu80", (1000, 255, 257, 1), 2, 32, 80, splits=True),
    Case("ragged-1dec-h128-cu80", (513, 64, 1), 1, 128, 80, splits=True),
    Case("ragged-1dec-h128-cu256", (513, 64, 1), 1, 128, 256),
    # One long request beside many short ones.
    Case("long-beside-short-2dec-h16-cu80", (5000,) + (17,) * 7, 2, 16, 80, splits=True),
    Case("16k-tokens-ragged-4dec-h12-cu256", SIXTEEN_K, 4, 12, 256, splits=True),
    Case("1x8192-h12-cu304", (8192,), 0, 12, 304, splits=True),
    # GPU-sized.
    Case("gpu-1x65536-h16-cu304", (65536,), 0, 16, 304, splits=True, gpu=True),
    Case("gpu-1x65536-h128-cu132", (65536,), 0, 128, 132, splits=True, gpu=True),
    Case("gpu-1x32768-h128-cu256", (32768,), 0, 128, 256, gpu=True),
    Case("gpu-64k-tokens-ragged-8dec-h16-cu256", SIXTY_FOUR_K, 8, 16, 256, splits=True, gpu=True),
    Case("gpu-4x16384-2dec-h128-cu80", (16384,) * 4, 2, 128, 80, splits=True, gpu=True),
    Case("gpu-1x16384-h24-cu304", (16384,), 0, 24, 304, splits=True, gpu=True),
]

_GPU_MARKS = [
    pytest.mark.slow,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="GPU-sized case: no CUDA/ROCm device"),
]


PARAMS = [pytest.param(case, id=case.id, marks=_GPU_MARKS if case.gpu else ()) for case in CASES]


@pytest.mark.requires_vllm
@pytest.mark.parametrize("case", PARAMS)
def test_fp8_prefill_matches_float64_reference(case, aiter_backend, backend_cu_count, accuracy_log):
    tolerance = tolerance_for(aiter_backend.name)
    run = run_fp8_prefill(
        case.lens,
        case.heads,
        aiter_backend.module,
        num_decodes=case.decodes,
        cu_count=backend_cu_count(case.cu),
    )
    report = check_fp8_prefill(run, tolerance)
    accuracy_log.append(
        f"{case.id:<40} [{aiter_backend.name}, cu {run.cu_count}] max|out-ref| {report.out.max_abs_err:.3e} "
        f"({report.out.worst_ratio:.2f}x bound); max|lse-ref| "
        f"{report.lse.max_abs_err if report.lse else 0.0:.3e} on {report.lse_rows} reduced rows"
    )
    assert report.ok, report.summary()
    if case.splits and aiter_backend.is_emulated:
        assert run.num_partial_tiles > 0 and report.lse_rows > 0, (
            f"{case.id} is meant to split tiles but the plan has {run.num_partial_tiles} partial tiles"
        )


def test_the_matrix_covers_what_the_issue_asks():
    """The seed's two cases, heads 12/16/24/32/128, ragged batches with decodes ahead, a 1-token
    request, q_len 1 .. 16384 on CPU and up to 65536 on GPU."""
    cpu = [c for c in CASES if not c.gpu]
    assert {(c.lens, c.heads) for c in cpu} >= {((128,), 16), ((512,), 16)}
    assert {c.heads for c in cpu} == {12, 16, 24, 32, 128}
    assert any(c.decodes > 0 and len(c.lens) > 1 for c in cpu)
    assert any(1 in c.lens and len(c.lens) > 1 for c in cpu)
    assert any(n % 256 for c in cpu for n in c.lens)
    assert min(n for c in cpu for n in c.lens) == 1
    assert max(sum(c.lens) for c in cpu) == 16384
    assert max(max(c.lens) for c in CASES if c.gpu) == 65536
    assert len({c.id for c in CASES}) == len(CASES)
