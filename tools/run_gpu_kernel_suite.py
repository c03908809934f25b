#!/usr/bin/env python3
"""The kernel-level half of the FP8 prefill accuracy suite, for a GPU machine without vLLM.

Runs the emulated AITER (planner -> kernel -> reduce, ``factories.aiter.emulation``) the way
vLLM's builder and impl drive it -- plan buffers sized by ``get_ps_metadata_info_v1`` on the
device and poisoned (-1), the planner writing into *pinned* host staging, a ``non_blocking``
H2D copy followed by a recorded CUDA event, ``num_partial_tiles`` read from the host copy,
NaN-poisoned scratch and output -- on the ``cuda`` device, and compares every output row and
the ``final_lse`` of every reduced row with the float64 reference
(``factories.accuracy.causal_reference``) under the emulated bound
(``factories.accuracy.EMULATED_TOLERANCE``). Kernel and reduce are timed with CUDA events.
The batches are the accuracy suite's (``factories.accuracy.cases``) as the kernel sees them:
the prefill requests only, the heads padded to the kernel's head group.

What it does not run: vLLM's three methods (vLLM is not installed on the GPU machine); the
suite in tests/accuracy runs those on CPU, and on GPU wherever vLLM is installed.

    python3 tools/run_gpu_kernel_suite.py --device cuda --out results.json [--budget-s 420]
    python3 tools/run_gpu_kernel_suite.py --device cpu --cases smoke      # a local dry run

Needs torch, numpy and attrs only.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import attrs
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import factories.aiter.emulation as emu
from factories.accuracy import (
    EMULATED_TOLERANCE,
    PLAN_POISON,
    causal_reference,
    check_outputs,
    planned_split_rows,
    reduced_rows,
)
from factories.accuracy.cases import SOFTMAX_SCALE, AccuracyCase, cases
from factories.aiter.batch import indptr
from factories.aiter.layout import KERNEL_TILE_ROWS, QK_HEAD_DIM, V_HEAD_DIM

#: Case ids of each selection (``--cases``), from the suite's table.
SELECTIONS = {
    "smoke": ("ragged-3dec-h12-cu80", "ragged-2dec-h32-cu80"),
    "gpu": (
        "seed-1x128-h16",
        "seed-1x512-h16",
        "ragged-3dec-h12-cu80",
        "gpu-1x16384-h24-cu304",
        "gpu-1x32768-h128-cu256",
        "gpu-4x16384-2dec-h128-cu80",
        "gpu-64k-tokens-ragged-8dec-h16-cu256",
        "gpu-1x65536-h16-cu304",
        "gpu-1x65536-h128-cu132",
    ),
}
CASES: dict[str, tuple[AccuracyCase, ...]] = {name: cases(ids) for name, ids in SELECTIONS.items()}


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def plan_like_vllm(case: AccuracyCase, device: torch.device):
    """Size, allocate, poison, plan into pinned staging, copy non_blocking, record an event."""
    accelerator = device.type == "cuda"
    info = emu.get_ps_metadata_info_v1(
        batch_size=len(case.lens),
        num_head_k=case.kernel_heads,
        max_qlen=max(case.lens),
        qlen_granularity=KERNEL_TILE_ROWS,
    )
    buffers = [torch.empty(shape, dtype=dtype, device=device) for shape, dtype in info]
    for t in buffers[1:]:
        t.fill_(PLAN_POISON)  # no work: an H2D copy that never lands leaves rows unwritten
    staging = [
        torch.empty(t.shape, dtype=t.dtype, device="cpu", pin_memory=accelerator)
        for t in buffers[1:]
    ]
    qo = indptr(case.lens)
    emu.get_ps_metadata_v1(
        qo,
        qo.clone(),
        torch.tensor(case.lens, dtype=torch.int32),
        1,
        case.kernel_heads,
        buffers[0],
        *staging,
        **attrs.asdict(emu.PlannerSettings.for_fp8_prefill_kernel()),
    )
    for dst, src in zip(buffers[1:], staging, strict=True):
        dst.copy_(src, non_blocking=True)
    event = torch.cuda.Event() if accelerator else None
    if event is not None:
        event.record()
    num_partial_tiles = int(staging[2][-1])  # from the host copy, as vLLM does (no device sync)
    return (
        buffers,
        num_partial_tiles,
        event,
        all(t.is_pinned() for t in staging) if accelerator else False,
    )


def run_case(case: AccuracyCase, device: torch.device, seed: int = 0) -> dict:
    """One case at the kernel's head count: plan, kernel, reduce, then the check."""
    t0 = time.perf_counter()
    total, heads = case.total_tokens, case.kernel_heads
    with emu.emulated_cu_count(case.cu):
        buffers, tiles, event, pinned = plan_like_vllm(case, device)
        _, work_indptr, work_info, reduce_indptr, final_map, partial_map = buffers
        gen = torch.Generator(device=device).manual_seed(seed)
        q, k, v = (
            torch.randn(total, heads, d, generator=gen, device=device)
            .to(torch.bfloat16)
            .to(emu.fp8_dtype())
            for d in (QK_HEAD_DIM, QK_HEAD_DIM, V_HEAD_DIM)
        )
        qo = indptr(case.lens).to(device)
        pages = torch.arange(total, dtype=torch.int32, device=device)
        nan = float("nan")
        logits = torch.full((tiles * KERNEL_TILE_ROWS, heads, V_HEAD_DIM), nan, device=device)
        attn_lse = torch.full((tiles * KERNEL_TILE_ROWS, heads), nan, device=device)
        final_lse = torch.full((total, heads), nan, device=device)
        out = torch.full((total, heads, V_HEAD_DIM), nan, dtype=torch.bfloat16, device=device)
        one = torch.ones((), dtype=torch.float32, device=device)
        sync(device)
        t_plan = time.perf_counter()
        timer = (
            [torch.cuda.Event(enable_timing=True) for _ in range(3)]
            if device.type == "cuda"
            else None
        )
        if timer:
            timer[0].record()
        emu.mla_prefill_ps_asm_fwd(
            q,
            k,
            v,
            qo,
            qo,
            pages,
            work_indptr,
            work_info,
            max(case.lens),
            SOFTMAX_SCALE,
            True,
            logits,
            attn_lse,
            out,
            one,
            one,
            one,
        )
        if timer:
            timer[1].record()
        emu.mla_reduce_v1(
            logits,
            attn_lse,
            reduce_indptr,
            final_map,
            partial_map,
            KERNEL_TILE_ROWS,
            0,
            out,
            final_lse,
        )
        if timer:
            timer[2].record()
        sync(device)
    t_kernels = time.perf_counter()
    ref_out, ref_lse = causal_reference(q, k, v, case.lens, SOFTMAX_SCALE)
    sync(device)
    t_ref = time.perf_counter()
    rows, problems = reduced_rows(reduce_indptr, final_map, total)
    split = planned_split_rows(work_indptr, work_info, total)
    if not (split == rows).all():
        problems.append(f"plan splits {int(split.sum())} rows, reduce merges {int(rows.sum())}")
    report = check_outputs(
        out,
        ref_out,
        EMULATED_TOLERANCE,
        final_lse=final_lse,
        ref_lse=ref_lse,
        lse_rows=rows,
        extra_problems=problems,
    )
    t_end = time.perf_counter()
    return {
        "case": case.id,
        "lens": list(case.lens) if len(case.lens) <= 12 else f"{len(case.lens)} requests",
        "total_tokens": total,
        "max_q_len": max(case.lens),
        "heads": heads,
        "cu": case.cu,
        "device": str(device),
        "pinned_staging": pinned,
        "event_recorded": event is not None,
        "works": int(work_indptr[-1]),
        "partial_tiles": tiles,
        "reduced_rows": int(rows.sum()),
        "ok": report.ok,
        "problems": list(report.problems),
        "out_max_abs_err": report.out.max_abs_err,
        "out_worst_ratio": report.out.worst_ratio,
        "lse_max_abs_err": report.lse.max_abs_err if report.lse else None,
        "lse_worst_ratio": report.lse.worst_ratio if report.lse else None,
        "bound": EMULATED_TOLERANCE.describe(),
        "kernel_ms": timer[0].elapsed_time(timer[1]) if timer else None,
        "reduce_ms": timer[1].elapsed_time(timer[2]) if timer else None,
        "wall_s": {
            "plan_and_inputs": round(t_plan - t0, 3),
            "kernel_and_reduce": round(t_kernels - t_plan, 3),
            "reference_fp64": round(t_ref - t_kernels, 3),
            "check": round(t_end - t_ref, 3),
            "total": round(t_end - t0, 3),
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--cases", default="gpu", choices=sorted(CASES))
    parser.add_argument("--only", nargs="*", default=None, help="case ids to run (default: all)")
    parser.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    parser.add_argument(
        "--budget-s",
        type=float,
        default=math.inf,
        help="skip cases once this much wall time is spent",
    )
    args = parser.parse_args(argv)
    device = torch.device(args.device)
    header = {
        "torch": torch.__version__,
        "device_name": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "tolerance": EMULATED_TOLERANCE.describe(),
    }
    print(json.dumps(header), flush=True)
    results, start = [], time.perf_counter()
    for case in CASES[args.cases]:
        if args.only and case.id not in args.only:
            continue
        if time.perf_counter() - start > args.budget_s:
            results.append({"case": case.id, "skipped": f"wall budget {args.budget_s}s spent"})
            print(json.dumps(results[-1]), flush=True)
            continue
        try:
            results.append(run_case(case, device))
        except Exception as exc:  # report and go on with the next case
            results.append({"case": case.id, "ok": False, "error": f"{type(exc).__name__}: {exc}"})
        finally:
            if device.type == "cuda":
                torch.cuda.empty_cache()
        print(json.dumps(results[-1]), flush=True)
        if args.out:
            args.out.write_text(json.dumps({"header": header, "results": results}, indent=1))
    failed = [r["case"] for r in results if r.get("ok") is False]
    print(f"{len(results)} cases, {len(failed)} failed: {failed}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
