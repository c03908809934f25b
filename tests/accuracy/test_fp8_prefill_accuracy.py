"""vLLM's FP8 MLA prefill against a float64 reference, through the real entry points.

Each case runs ``AiterMLAMetadataBuilder._init_fp8_prefill_ps_buffers`` ->
``_build_fp8_prefill_ps_metadata`` -> (workspace locked) -> ``AiterMLAImpl._mla_fp8_prefill_attn``
with the AITER of ``--aiter-backend`` (``factories.accuracy.run_fp8_prefill``), then compares
every output row with bottom-right causal attention computed in float64 on the same fp8 tensors
the kernel reads, and ``final_lse`` on exactly the rows the reduce merged
(``factories.accuracy.check_fp8_prefill``). Every output buffer is NaN before the run, so a row
nobody writes fails. The bound is ``factories.accuracy.tolerance_for(backend)``.

The cases are ``factories.accuracy.cases.CASES``, the table the calibration and the GPU kernel
runner also read; ``gpu`` cases are ``slow`` and run only where torch sees a CUDA/ROCm device.
"""

from __future__ import annotations

import pytest
import torch

from factories.accuracy import check_fp8_prefill, run_fp8_prefill, tolerance_for
from factories.accuracy.cases import CASES, SIXTEEN_K, SIXTY_FOUR_K

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
        f"{case.id:<40} [{aiter_backend.name}, cu {run.cu_count}] "
        f"max|out-ref| {report.out.max_abs_err:.3e} "
        f"({report.out.worst_ratio:.2f}x bound); max|lse-ref| "
        f"{report.lse.max_abs_err if report.lse else 0.0:.3e} on {report.lse_rows} reduced rows"
    )
    assert report.ok, report.summary()
    if case.splits and aiter_backend.is_emulated:
        assert run.num_partial_tiles > 0 and report.lse_rows > 0, (
            f"{case.id} is meant to split tiles "
            f"but the plan has {run.num_partial_tiles} partial tiles"
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
    assert sum(SIXTEEN_K) == 16384 and sum(SIXTY_FOUR_K) == 65536
    assert len({c.id for c in CASES}) == len(CASES)
