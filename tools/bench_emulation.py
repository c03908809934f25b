#!/usr/bin/env python3
"""Benchmark: emulated AITER PS prefill (planner + kernel + reduce) vs one SDPA call.

Why: the emulation is used inside test suites, so it has to stay within a small factor of the
plain attention it replaces (goal: <= 3x one ``scaled_dot_product_attention(is_causal=True)`` call
on the same dequantized inputs). Prints one markdown table row for docs/BENCHMARKS.md.

Two baselines are timed, because on CPU the "same inputs" call (q/k head dim 192, v head dim 128)
is not eligible for PyTorch's CPU flash kernel (it needs equal last dims) and falls back to the
math path, which materialises the full T x T score matrix per head:
  - ``sdpa``: the same inputs, exactly the call the goal names;
  - ``sdpa_vpad``: V zero-padded to 192 so the fused kernel runs (a stricter baseline; the
    output's first 128 columns are the same attention).

Timings are medians over interleaved rounds; the row records the 1-minute load average, since
on a shared machine that, more than anything, moves the numbers.

Usage: tools/bench_emulation.py [--device cpu|cuda] [--tokens 8192] [--heads 16] [--repeat N]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import factories.aiter.emulation as aiter
from factories.aiter.emulation import emulated_cu_count


def _machine(device: str) -> str:
    if device == "cuda":
        return torch.cuda.get_device_name()
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        model = next(
            line.split(":", 1)[1].strip()
            for line in out.splitlines()
            if line.startswith("Model name")
        )
    except (OSError, subprocess.CalledProcessError, StopIteration):
        model = platform.processor() or platform.machine()
    return (
        f"{model}, {os.cpu_count()} cores, "
        f"torch {torch.__version__} ({torch.get_num_threads()} threads)"
    )


def _sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def _time_interleaved(
    fns: dict[str, Callable[[], object]], device: str, repeat: int, warmup: int
) -> dict[str, float]:
    """Median seconds per function, measured in interleaved rounds (a, b, c, a, b, c, ...).

    Interleaving matters on a shared machine: a burst of load then slows every contender alike
    instead of whichever happened to be running, so the ratios stay meaningful.
    """
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    _sync(device)
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            _sync(device)
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(ts) for name, ts in times.items()}


def _quant(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    scale = (x.abs().amax() / torch.finfo(torch.float8_e4m3fn).max).reshape(1).float()
    return (x / scale).to(torch.float8_e4m3fn), scale


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--tokens", type=int, default=8192)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--cu", type=int, default=256, help="emulated CU count (MI355X: 256)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--header", action="store_true", help="print the table header too")
    args = ap.parse_args(argv)
    dev, T, H = args.device, args.tokens, args.heads
    torch.manual_seed(0)

    q, q_scale = _quant(torch.randn(T, H, 192, device=dev))
    k, k_scale = _quant(torch.randn(T, H, 192, device=dev))
    v, v_scale = _quant(torch.randn(T, H, 128, device=dev))
    indptr = torch.tensor([0, T], dtype=torch.int32)
    ctx = torch.tensor([T], dtype=torch.int32)
    pages = torch.arange(T, dtype=torch.int32, device=dev)
    sm_scale = 192**-0.5

    def emulated() -> torch.Tensor:
        with emulated_cu_count(args.cu):
            info = aiter.get_ps_metadata_info_v1(1, H, T)
            bufs = [torch.empty(s, dtype=d, device=dev) for s, d in info]
            aiter.get_ps_metadata_v1(indptr, indptr, ctx, 1, H, *bufs, 1, 256, 128, 1, True)
            rows = bufs[5].numel() * 256
            split_o = torch.empty(rows, H, 128, device=dev)
            split_l = torch.empty(rows, H, device=dev)
            out = torch.empty(T, H, 128, dtype=torch.bfloat16, device=dev)
            final_lse = torch.empty(T, H, device=dev)
            ind = indptr.to(dev)
            aiter.mla_prefill_ps_asm_fwd(
                q,
                k,
                v,
                ind,
                ind,
                pages,
                bufs[1],
                bufs[2],
                T,
                sm_scale,
                True,
                split_o,
                split_l,
                out,
                q_scale,
                k_scale,
                v_scale,
            )
            aiter.mla_reduce_v1(split_o, split_l, bufs[3], bufs[4], bufs[5], 256, 0, out, final_lse)
            return out

    qd = (q.float() * q_scale).transpose(0, 1).unsqueeze(0)
    kd = (k.float() * k_scale).transpose(0, 1).unsqueeze(0)
    vd = (v.float() * v_scale).transpose(0, 1).unsqueeze(0)
    vpad = torch.nn.functional.pad(vd, (0, 64))
    sdpa = torch.nn.functional.scaled_dot_product_attention

    load_before = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    t = _time_interleaved(
        {
            "emulated": emulated,
            "sdpa": lambda: sdpa(qd, kd, vd, is_causal=True, scale=sm_scale),
            "sdpa_vpad": lambda: sdpa(qd, kd, vpad, is_causal=True, scale=sm_scale),
        },
        dev,
        args.repeat,
        args.warmup,
    )
    t_emu, t_sdpa, t_pad = t["emulated"], t["sdpa"], t["sdpa_vpad"]
    load_after = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")

    ref = sdpa(qd, kd, vd, is_causal=True, scale=sm_scale)[0].transpose(0, 1)
    max_err = (emulated().float() - ref).abs().max().item()

    if args.header:
        print(
            "| machine | date | device | T | H | CU | emulated s | sdpa s | ratio | sdpa_vpad s "
            "| ratio vs vpad | max abs diff vs sdpa | 1-min load before/after |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    print(
        f"| {_machine(dev)} | {datetime.date.today().isoformat()} | {dev} | {T} | {H} | {args.cu} "
        f"| {t_emu:.3f} | {t_sdpa:.3f} | {t_emu / t_sdpa:.2f}x "
        f"| {t_pad:.3f} | {t_emu / t_pad:.2f}x "
        f"| {max_err:.2e} | {load_before:.1f} / {load_after:.1f} |"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
