#!/usr/bin/env python3
"""Derive the FP8 MLA prefill tolerances from an error model, prove they bite, and soak them.

    python tools/calibrate_tolerance.py                 # sweep, derive, write factories/accuracy/tolerances.json + docs/tolerances.png
    python tools/calibrate_tolerance.py --quick         # a small sweep (~1 min), same outputs
    python tools/calibrate_tolerance.py --check         # verify the file's digest, print the bounds
    python tools/calibrate_tolerance.py --kill-matrix   # every kernel mutant x every check (markdown)
    python tools/calibrate_tolerance.py --soak 20       # 20 seeds of the CPU accuracy matrix under the file's bounds
    python tools/calibrate_tolerance.py --backend aiter # on gfx950: audit the real kernels against the model

Derivation (known-regressions B3, vLLM's derive_rocm_aiter_tolerances): for every case and seed of
the sweep, the float64 golden ``g`` (:func:`factories.accuracy.causal_reference`) and the
low-precision model ``y`` of each backend (:mod:`factories.accuracy.error_model`: the same fp8 tensors, the
kernel's quantization points) give

    atol_needed = max_e (1 + u_bf16) * (|y_e - g_e| + budget_e) - (rtol - u_bf16) * |g_e|

with ``rtol = u_bf16 = 2^-8`` (one bf16 rounding of the output) and ``budget_e`` the fp32
kernel budget. The committed bound is ``margin x`` the sweep's maximum (envelope over the model
variants of a backend). The backends' own outputs never set a bound: they are *audited* against
it (the emulated pipeline, the emulated pipeline with the gfx950 P rounding, and with
``--backend aiter`` the real kernels).

Exit codes: 0 ok; 1 an audit, a soak case or a predicted kill failed; 2 bad input; 3 the requested
backend cannot run here (the line says why).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import platform
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

TOOL_VERSION = "1.0.0"
DEFAULT_PNG = REPO / "docs" / "tolerances.png"
MARGIN = 1.5  # element-wise bounds and rel_fro: a floor, not a fluctuation
STAT_MARGIN = 4.0  # slope/bias: zero-mean fluctuations; the sweep's max is ~2.5 sigma of them
QUANTILES = (0.5, 0.99, 0.999, 1.0)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class BadInput(Exception):
    """A command-line value that cannot be used (one line, exit 2)."""


# --------------------------------------------------------------------------------------------
# Cases: the CPU matrix of tests/accuracy/test_fp8_prefill_accuracy.py
# --------------------------------------------------------------------------------------------

SUITE_MATRIX_FILE = REPO / "tests" / "accuracy" / "test_fp8_prefill_accuracy.py"
SIXTEEN_K = (4096, 2048, 2048, 2048, 1536, 1024, 1023, 1000, 777, 511, 257, 15, 1)
#: Fallback copy of the suite's CPU cases, used only when the suite file cannot be loaded.
_BUILTIN_MATRIX: dict[str, tuple[tuple[int, ...], int, int, int]] = {
    "seed-1x128-h16": ((128,), 0, 16, 256),
    "seed-1x512-h16": ((512,), 0, 16, 256),
    "one-token-h16": ((1,), 0, 16, 256),
    "ragged-3dec-h12-cu80": ((300, 1, 777, 256, 20), 3, 12, 80),
    "ragged-3dec-h24-cu80": ((300, 1, 777, 256, 20), 3, 24, 80),
    "ragged-3dec-h16-cu256": ((300, 1, 777, 256, 20), 3, 16, 256),
    "ragged-2dec-h32-cu80": ((1000, 255, 257, 1), 2, 32, 80),
    "ragged-1dec-h128-cu80": ((513, 64, 1), 1, 128, 80),
    "ragged-1dec-h128-cu256": ((513, 64, 1), 1, 128, 256),
    "long-beside-short-2dec-h16-cu80": ((5000,) + (17,) * 7, 2, 16, 80),
    "16k-tokens-ragged-4dec-h12-cu256": (SIXTEEN_K, 4, 12, 256),
}


def load_matrix() -> dict[str, tuple[tuple[int, ...], int, int, int]]:
    """The suite's CPU cases (id -> (prefill lens, decodes, heads, cu)), read from
    tests/accuracy/test_fp8_prefill_accuracy.py so the sweep and the soak follow the suite."""
    import importlib.util

    try:
        spec = importlib.util.spec_from_file_location("_suite_matrix", SUITE_MATRIX_FILE)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return {c.id: (tuple(c.lens), int(c.decodes), int(c.heads), int(c.cu)) for c in module.CASES if not c.gpu}
    except Exception as exc:  # noqa: BLE001 - any failure: fall back, and say so
        log(f"[calibrate] could not read the suite matrix ({type(exc).__name__}: {exc}); using the built-in copy")
        return dict(_BUILTIN_MATRIX)


MATRIX = load_matrix()

#: Fallback copy of the suite's GPU-sized cases (id -> (lens, decodes, heads, cu)).
_SIXTY_FOUR_K = (32768, 16384, 8191, 4097, 2048, 1024, 1000, 23, 1)
_BUILTIN_GPU_MATRIX: dict[str, tuple[tuple[int, ...], int, int, int]] = {
    "gpu-1x65536-h16-cu304": ((65536,), 0, 16, 304),
    "gpu-1x65536-h128-cu132": ((65536,), 0, 128, 132),
    "gpu-1x32768-h128-cu256": ((32768,), 0, 128, 256),
    "gpu-64k-tokens-ragged-8dec-h16-cu256": (_SIXTY_FOUR_K, 8, 16, 256),
    "gpu-4x16384-2dec-h128-cu80": ((16384,) * 4, 2, 128, 80),
    "gpu-1x16384-h24-cu304": ((16384,), 0, 24, 304),
}


def load_gpu_matrix() -> dict[str, tuple[tuple[int, ...], int, int, int]]:
    """The suite's GPU-sized cases, or the built-in copy where the suite file cannot be read."""
    import importlib.util

    try:
        spec = importlib.util.spec_from_file_location("_suite_matrix_gpu", SUITE_MATRIX_FILE)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return {c.id: (tuple(c.lens), int(c.decodes), int(c.heads), int(c.cu)) for c in module.CASES if c.gpu}
    except Exception:  # noqa: BLE001
        return dict(_BUILTIN_GPU_MATRIX)
#: The default sweep: the matrix without its requests of >= 8192 tokens in total (the soak runs them).
DEFAULT_CASES = tuple(c for c, (lens, *_rest) in MATRIX.items() if sum(lens) < 8192)
DEFAULT_SEEDS = 3
QUICK_CASES = ("seed-1x128-h16", "seed-1x512-h16", "ragged-3dec-h12-cu80", "ragged-2dec-h32-cu80")
QUICK_SEEDS = 2


def machine() -> dict[str, Any]:
    import torch

    return {
        "node": platform.node() or "unknown",
        "platform": platform.platform(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cpu_count": os.cpu_count(),
        "device": "cpu" if not torch.cuda.is_available() else torch.cuda.get_device_name(0),
    }


def file_path(arg: str | None) -> Path:
    from factories.accuracy.tolerance_file import TOLERANCE_FILE

    return Path(arg) if arg else TOLERANCE_FILE


# --------------------------------------------------------------------------------------------
# The sweep
# --------------------------------------------------------------------------------------------


def _quantiles(x, qs=QUANTILES) -> list[float]:
    import numpy as np

    arr = x.reshape(-1).to("cpu").double().numpy()
    return [float(v) for v in np.quantile(arr, qs)] if arr.size else [0.0] * len(qs)


def _excess(out, g, rtol):
    """``|out - g| - rtol*|g|`` per element (what atol must cover), as float64."""
    return (out.double() - g).abs_().sub_(g.abs().mul(rtol))


def _stats(out, g) -> dict[str, float]:
    from factories.accuracy.error_stats import error_stats

    return error_stats(out, g).as_dict()


def _pipeline_measure(run, g, gl, rtol) -> dict[str, Any]:
    """A pipeline run against the golden: needed atol, LSE error on reduced rows, statistics."""
    import torch

    from factories.accuracy import V_HEAD_DIM, Tolerance, check_fp8_prefill

    out = run.out.view(run.total_tokens, run.num_heads, V_HEAD_DIM)
    loose = Tolerance("audit", "audit", 1e30, 0.0, 1e30, 0.0, "measure only")
    report = check_fp8_prefill(run, loose)
    excess = _excess(out, g, rtol)
    return {
        "excess_max": float(excess.max()) if bool(torch.isfinite(excess).all()) else math.inf,
        "excess_q": _quantiles(excess.clamp_min(1e-9)),
        "lse_err_max": report.lse.max_abs_err if report.lse is not None else 0.0,
        "lse_rows": report.lse_rows,
        "problems": list(report.problems),
        "stats": _stats(out, g),
    }


def sweep(cases: Sequence[str], seeds: Sequence[int], backend: str) -> dict[str, Any]:
    """Every case x seed: golden, every model variant, and the audited pipelines."""
    import torch

    import factories.aiter.emulation as emulation
    from factories.accuracy import causal_reference, run_fp8_prefill
    from factories.accuracy.error_model import MODELS, U_BF16, kernel_budget, model_attention, needed_atol
    from factories.mutation.kernels import aiter_backend_for

    rtol = U_BF16
    pipelines: dict[str, Any] = {}
    if backend == "aiter":
        import importlib

        pipelines["aiter"] = importlib.import_module("aiter")
    else:
        pipelines["emulated"] = emulation
        pipelines["gfx950-p8"] = None  # built per run (fresh wrapper state)
    runs = []
    total = len(cases) * len(seeds)
    t0 = time.monotonic()
    for i, (case_id, seed) in enumerate(((c, s) for c in cases for s in seeds), 1):
        lens, decodes, heads, cu = MATRIX[case_id]
        if backend == "aiter":
            cu = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
        entry: dict[str, Any] = {"case": case_id, "seed": seed, "models": {}, "pipelines": {}}
        golden = None
        for name, module in pipelines.items():
            mod = aiter_backend_for("gfx950-p8") if name == "gfx950-p8" else module
            run = run_fp8_prefill(lens, heads, mod, num_decodes=decodes, cu_count=cu, seed=seed)
            if golden is None:
                q8, k8, v8 = (t.to(run.fp8_dtype) for t in (run.q, run.k, run.v))
                g, gl = causal_reference(q8, k8, v8, run.prefill_lens, run.softmax_scale)
                golden = (q8, k8, v8, g, gl, run.softmax_scale, run.prefill_lens)
            entry["pipelines"][name] = _pipeline_measure(run, golden[3], golden[4], rtol)
            del run
        q8, k8, v8, g, gl, scale, plens = golden
        entry["elements"] = g.numel()
        for model in MODELS.values():
            mo = model_attention(q8, k8, v8, plens, scale, model)
            ob, lb = kernel_budget(mo)
            lse_err = (mo.lse.double() - gl).abs_().add_(lb.double())
            entry["models"][model.name] = {
                "backend": model.backend,
                "needed_out_atol": needed_atol(mo.y, g, ob, rtol),
                "needed_lse_atol": float(lse_err.max()),
                "y_err_max": float((mo.y.double() - g).abs().max()),
                "budget_max": float(ob.max()),
                "excess_q": _quantiles(_excess(mo.out, g, rtol).clamp_min(1e-9)),
                "stats": _stats(mo.out, g),
            }
            del mo, ob, lb, lse_err
        runs.append(entry)
        elapsed = time.monotonic() - t0
        worst = max(m["needed_out_atol"] for m in entry["models"].values())
        log(
            f"[sweep {i}/{total}] {case_id} seed {seed}: gfx950 atol needed {worst:.3e}, "
            f"emulated {entry['models']['emulated']['needed_out_atol']:.3e} "
            f"({elapsed:.0f}s elapsed, ~{elapsed / i * (total - i):.0f}s left)"
        )
    return {"runs": runs}


def derive(measured: dict[str, Any]) -> dict[str, Any]:
    """Bounds per file backend from the models' maxima (never from a pipeline's output)."""
    from factories.accuracy.error_model import BUDGET_C, U_BF16, models_for

    tolerances = {}
    maxima = {}
    for backend in ("emulated", "gfx950"):
        names = [m.name for m in models_for(backend)]
        vals = [run["models"][n] for run in measured["runs"] for n in names]
        mx = {
            "needed_out_atol": max(v["needed_out_atol"] for v in vals),
            "needed_lse_atol": max(v["needed_lse_atol"] for v in vals),
            "rel_fro": max(v["stats"]["rel_fro"] for v in vals),
            "rel_fro_min": min(v["stats"]["rel_fro"] for v in vals if v["stats"]["rel_fro"] > 0),
            "slope_dev": max(abs(v["stats"]["slope_dev"]) for v in vals),
            "bias": max(abs(v["stats"]["bias"]) for v in vals),
        }
        maxima[backend] = mx
        tolerances[backend] = {
            "models": names,
            "out_atol": MARGIN * mx["needed_out_atol"],
            "out_rtol": U_BF16,
            "lse_atol": MARGIN * mx["needed_lse_atol"],
            "lse_rtol": 0.0,
            "stats": {
                "rel_fro_max": MARGIN * mx["rel_fro"],
                "slope_dev_max": STAT_MARGIN * mx["slope_dev"],
                "bias_max": STAT_MARGIN * mx["bias"],
            },
            "derivation": (
                f"out_atol = {MARGIN} x max over the sweep and the models {names} of "
                "(1+2^-8)*max_e(|y_e-g_e| + budget_e) - (rtol-2^-8)|g_e|, rtol = 2^-8 (one bf16 "
                f"rounding); budget_e = {BUDGET_C:g}*2^-24*sum_j p_j|v_j| (fp32 reordering). "
                f"lse_atol = {MARGIN} x max(|lse_model - lse_golden| + {BUDGET_C:g}*2^-24*(1+|lse|)) "
                f"over all rows. stats: rel_fro {MARGIN} x, |slope-1| and |bias| {STAT_MARGIN} x "
                "the models' maxima (rounded output vs golden)."
            ),
        }
    return {"tolerances": tolerances, "maxima": maxima}


def audit(measured: dict[str, Any], tolerances: dict[str, Any]) -> dict[str, Any]:
    """Each audited pipeline against the bound of its backend: the worst ratio per check."""
    which = {"emulated": "emulated", "gfx950-p8": "gfx950", "aiter": "gfx950"}
    result = {}
    for name, backend in which.items():
        vals = [run["pipelines"][name] for run in measured["runs"] if name in run["pipelines"]]
        if not vals:
            continue
        tol = tolerances[backend]
        st = tol["stats"]
        result[name] = {
            "judged_with": backend,
            "runs": len(vals),
            "out_ratio": max(v["excess_max"] for v in vals) / tol["out_atol"],
            "lse_ratio": max(v["lse_err_max"] for v in vals) / tol["lse_atol"],
            "rel_fro_ratio": max(v["stats"]["rel_fro"] for v in vals) / st["rel_fro_max"],
            "slope_ratio": max(abs(v["stats"]["slope_dev"]) for v in vals) / st["slope_dev_max"],
            "bias_ratio": max(abs(v["stats"]["bias"]) for v in vals) / st["bias_max"],
            "problems": sorted({p for v in vals for p in v["problems"]}),
        }
        result[name]["ok"] = not result[name]["problems"] and all(
            result[name][k] <= 1.0 for k in ("out_ratio", "lse_ratio", "rel_fro_ratio", "slope_ratio", "bias_ratio")
        )
    return result


def per_case(measured: dict[str, Any]) -> dict[str, Any]:
    """Per case, the max over seeds of every quantile and statistic (what the plot draws)."""
    out: dict[str, Any] = {}
    for run in measured["runs"]:
        case = out.setdefault(run["case"], {"seeds": 0, "series": {}})
        case["seeds"] += 1
        series = {f"model:{k}": v for k, v in run["models"].items()}
        series.update({f"pipeline:{k}": v for k, v in run["pipelines"].items()})
        for name, v in series.items():
            s = case["series"].setdefault(name, {"excess_q": [0.0] * len(QUANTILES), "rel_fro": 0.0, "slope_dev": 0.0})
            s["excess_q"] = [max(a, b) for a, b in zip(s["excess_q"], v["excess_q"])]
            s["rel_fro"] = max(s["rel_fro"], v["stats"]["rel_fro"])
            s["slope_dev"] = max(s["slope_dev"], abs(v["stats"]["slope_dev"]))
    return out


# --------------------------------------------------------------------------------------------
# The plot
# --------------------------------------------------------------------------------------------


def draw(data: dict[str, Any], png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cases = list(data["per_case"])
    tol = data["tolerances"]
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(13, 10), sharex=True)
    x = list(range(len(cases)))
    styles = [
        ("pipeline:emulated", "emulated pipeline", "tab:blue", -0.24),
        ("model:emulated", "emulated model", "tab:cyan", -0.12),
        ("model:gfx950", "gfx950 model (l over fp32 P)", "tab:red", 0.0),
        ("model:gfx950-rowsum-p8", "gfx950 model (l over fp8 P)", "tab:orange", 0.08),
        ("model:gfx950-exp", "gfx950 model (exp, not exp2)", "tab:brown", 0.16),
        ("pipeline:gfx950-p8", "emulated split pipeline, fp8 P", "tab:purple", 0.24),
        ("pipeline:aiter", "real AITER (gfx950)", "black", 0.3),
    ]
    for key, label, color, dx in styles:
        pts = [(i, data["per_case"][c]["series"].get(key)) for i, c in enumerate(cases)]
        pts = [(i, s) for i, s in pts if s is not None]
        if not pts:
            continue
        xs = [i + dx for i, _ in pts]
        q = [s["excess_q"] for _, s in pts]
        ax1.vlines(xs, [v[1] for v in q], [v[3] for v in q], color=color, lw=2, alpha=0.6)
        ax1.scatter(xs, [v[3] for v in q], color=color, marker="v", s=30, label=f"{label}: max (bar from p99)")
        ax1.scatter(xs, [v[2] for v in q], color=color, marker="_", s=60)
        ax2.scatter(xs, [max(s["slope_dev"], 1e-7) for _, s in pts], color=color, marker="o", s=25, label=f"{label} |slope-1|")
        ax2.scatter(xs, [max(s["rel_fro"], 1e-7) for _, s in pts], color=color, marker="s", s=25, facecolors="none")
    ax1.axhline(0.1, color="gray", ls=":", label="seed atol 0.1 (rtol 0.05)")
    ax1.axhline(tol["gfx950"]["out_atol"], color="tab:red", ls="--", label=f"derived gfx950 atol {tol['gfx950']['out_atol']:.3g} (rtol 2^-8)")
    ax1.axhline(tol["emulated"]["out_atol"], color="tab:blue", ls="--", label=f"derived emulated atol {tol['emulated']['out_atol']:.3g} (rtol 2^-8)")
    ax1.set_yscale("log")
    ax1.set_ylim(1e-9 * 0.8, 1.0)
    ax1.set_ylabel("|out - golden| - 2^-8 |golden|  (what atol covers; floor 1e-9)")
    ax1.set_title(
        f"FP8 MLA prefill: error per case vs derived tolerances ({data['sweep']['seeds_per_case']} seeds/case, "
        f"margin {MARGIN}x; {data['generated']['date'][:10]})"
    )
    ax1.legend(fontsize=7, loc="lower right", ncol=2)
    for backend, color in (("gfx950", "tab:red"), ("emulated", "tab:blue")):
        st = tol[backend]["stats"]
        ax2.axhline(st["slope_dev_max"], color=color, ls="--", label=f"{backend} |slope-1| bound {st['slope_dev_max']:.2g}")
        ax2.axhline(st["rel_fro_max"], color=color, ls="-.", label=f"{backend} rel. Frobenius bound {st['rel_fro_max']:.2g}")
    ax2.axhline(0.01, color="gray", ls=":", label="~|slope-1| of a 2% softmax-scale error")
    ax2.set_yscale("log")
    ax2.set_ylim(0.8e-7, 0.2)
    ax2.set_ylabel("statistic (o: |slope-1|, open square: rel. Frobenius; floor 1e-7)")
    ax2.legend(fontsize=7, loc="lower right", ncol=2)
    ax2.set_xticks(x)
    ax2.set_xticklabels(cases, rotation=30, ha="right", fontsize=8)
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=110)
    plt.close(fig)


# --------------------------------------------------------------------------------------------
# Commands
# --------------------------------------------------------------------------------------------


def cmd_calibrate(args) -> int:
    from factories.accuracy.tolerance_file import seal

    cases = args.cases or (QUICK_CASES if args.quick else DEFAULT_CASES)
    seeds = list(range(args.seed0, args.seed0 + (args.seeds or (QUICK_SEEDS if args.quick else DEFAULT_SEEDS))))
    log(f"[calibrate] backend {args.backend}: {len(cases)} cases x {len(seeds)} seeds")
    t0 = time.monotonic()
    measured = sweep(cases, seeds, args.backend)
    d = derive(measured)
    aud = audit(measured, d["tolerances"])
    data = {
        "schema": 1,
        "tool": {"name": "tools/calibrate_tolerance.py", "version": TOOL_VERSION},
        "generated": {
            "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "machine": machine(),
            "command": " ".join(["tools/calibrate_tolerance.py", *sys.argv[1:]]),
            "backend": args.backend,
            "seconds": round(time.monotonic() - t0, 1),
        },
        "inputs": (
            "vLLM's FP8 prefill path as tests/accuracy runs it: q/k/v = randn bf16 "
            "(factories.stubs.builders.make_qkv), cast to e4m3fn with scale 1, softmax_scale 1/sqrt(192), "
            "bottom-right causal, KV = Q. The bounds hold for this input distribution."
        ),
        "margins": {"elementwise_and_rel_fro": MARGIN, "slope_and_bias": STAT_MARGIN},
        "sweep": {
            "cases": {c: {"lens": list(MATRIX[c][0]), "decodes": MATRIX[c][1], "heads": MATRIX[c][2], "cu": MATRIX[c][3]} for c in cases},
            "seeds": seeds,
            "seeds_per_case": len(seeds),
            "models": sorted({n for run in measured["runs"] for n in run["models"]}),
            "audited_pipelines": sorted({n for run in measured["runs"] for n in run["pipelines"]}),
        },
        "measured": {"maxima": d["maxima"], "audit": aud},
        "per_case": per_case(measured),
        "tolerances": d["tolerances"],
    }
    data = seal(data)
    failed = [name for name, a in aud.items() if not a["ok"]]
    for name, a in aud.items():
        log(
            f"[audit] {name} vs {a['judged_with']}: out {a['out_ratio']:.3f}x, lse {a['lse_ratio']:.3f}x, "
            f"rel_fro {a['rel_fro_ratio']:.3f}x, slope {a['slope_ratio']:.3f}x, bias {a['bias_ratio']:.3f}x "
            f"{'OK' if a['ok'] else 'FAILED ' + '; '.join(a['problems'])}"
        )
    for backend, tol in data["tolerances"].items():
        st = tol["stats"]
        print(
            f"{backend}: out atol {tol['out_atol']:.4g} rtol {tol['out_rtol']:.4g}; lse atol {tol['lse_atol']:.4g}; "
            f"rel_fro <= {st['rel_fro_max']:.4g}, |slope-1| <= {st['slope_dev_max']:.4g}, |bias| <= {st['bias_max']:.4g}"
        )
    if args.backend == "aiter" and failed:
        log("[calibrate] the real kernel exceeds the model-derived bound: the assumptions of factories/accuracy/error_model.py do not hold; file not written")
        return 1
    if not args.dry_run:
        path = file_path(args.file)
        path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        log(f"[calibrate] wrote {path}")
        draw(data, Path(args.png) if args.png else DEFAULT_PNG)
        log(f"[calibrate] drew {args.png or DEFAULT_PNG}")
    return 1 if failed else 0


def _load(args):
    from factories.accuracy.tolerance_file import derived, read

    data = read(file_path(args.file))
    return data, {b: derived(data, b) for b in ("emulated", "gfx950")}


def _as_tolerance(d):
    from factories.accuracy import Tolerance

    return Tolerance(d.backend, d.version, d.out_atol, d.out_rtol, d.lse_atol, d.lse_rtol, d.derivation)


def cmd_check(args) -> int:
    data, ds = _load(args)
    print(f"{file_path(args.file)}: digest OK ({data['digest']['value'][:16]}...), tool {data['tool']['version']}, {data['generated']['date']}")
    for d in ds.values():
        print(
            f"  {d.backend}: out atol {d.out_atol:.4g} rtol {d.out_rtol:.4g}; lse atol {d.lse_atol:.4g}; "
            f"rel_fro <= {d.rel_fro_max:.4g}; |slope-1| <= {d.slope_dev_max:.4g}; |bias| <= {d.bias_max:.4g}"
        )
    return 0


def predicted_detectable(outcome, data, tol_g) -> tuple[bool, str]:
    """Does the error model say the gfx950 bounds can see this mutant? From the noise-free signal
    (the mutant on the fp32 emulation) against the gfx950 bound *plus* the modelled fp8-P noise."""
    if outcome.raised:
        return True, "the run raises (a rejected or faulting call)"
    reasons = outcome.verdicts["tolerance"].reasons
    if any("never written" in r or "plan splits" in r or "final_lse was written" in r for r in reasons):
        return True, "structural: unwritten rows / plan mismatch, independent of noise"
    mx = data["measured"]["maxima"]["gfx950"]
    st = data["tolerances"]["gfx950"]["stats"]
    why = []
    if outcome.out_err_max - mx["needed_out_atol"] > tol_g.out_atol + tol_g.out_rtol * 5.0:
        why.append("output signal exceeds atol + rtol*5 + the fp8-P noise")
    if outcome.lse_err_max - mx["needed_lse_atol"] > tol_g.lse_atol:
        why.append("LSE signal exceeds lse_atol + noise")
    s = outcome.stats
    if abs(s.get("slope_dev", 0.0)) - mx["slope_dev"] > st["slope_dev_max"]:
        why.append("|slope-1| signal exceeds its bound + noise")
    if math.hypot(s.get("rel_fro", 0.0), mx["rel_fro_min"]) > st["rel_fro_max"]:
        why.append("rel. Frobenius (signal (+) noise floor) exceeds its bound")
    if why:
        return True, "; ".join(why)
    return False, (
        f"signal below the fp8-P noise: max|err| {outcome.out_err_max:.3g} vs atol {tol_g.out_atol:.3g}+noise "
        f"{mx['needed_out_atol']:.3g}; |slope-1| {abs(s.get('slope_dev', 0.0)):.2g} vs {st['slope_dev_max']:.2g}; "
        f"rel_fro {s.get('rel_fro', 0.0):.2g} vs {st['rel_fro_max']:.2g}"
    )


def cmd_kill_matrix(args) -> int:
    from factories.accuracy import Tolerance
    from factories.mutation.kernels import KILL_CASES, run_kill_matrix

    data, ds = _load(args)
    tols = {b: _as_tolerance(d) for b, d in ds.items()}
    stats = {b: d.stat_bounds() for b, d in ds.items()}
    seed = Tolerance("seed", "upstream PR #51457", 0.1, 0.05, math.inf, 0.0, "the seed test: output only")
    cases = KILL_CASES[: 1 if args.quick else len(KILL_CASES)]
    outcomes = run_kill_matrix(cases, ["emulated", "gfx950-p8"], tols, stats, seed, progress=log)
    by = {(o.base, o.case, o.mutant): o for o in outcomes}
    mutants = list(dict.fromkeys(o.mutant for o in outcomes))
    cols = ("seed", "tolerance", "statistic", "shipped")
    lines = [
        "| mutant | " + " | ".join(f"emulated: {c}" for c in cols) + " | " + " | ".join(f"gfx950-p8: {c}" for c in cols)
        + " | gfx950: model predicts detectable |",
        "|---" * (2 * len(cols) + 2) + "|",
    ]
    bad = []
    for m in mutants:
        cells = []
        for base in ("emulated", "gfx950-p8"):
            for c in cols:
                k = sum(by[(base, case.id, m)].verdicts[c].killed for case in cases)
                cells.append(f"{k}/{len(cases)}")
        preds = [predicted_detectable(by[("emulated", case.id, m)], data, tols["gfx950"]) for case in cases]
        pred = [p for p, _ in preds]
        cells.append(f"{sum(pred)}/{len(cases)}" + ("" if all(pred) else f" ({preds[pred.index(False)][1]})"))
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
        for i, case in enumerate(cases):
            emu, g = by[("emulated", case.id, m)], by[("gfx950-p8", case.id, m)]
            if m == "control":
                if emu.verdicts["shipped"].killed or g.verdicts["shipped"].killed:
                    bad.append(f"control fails on {case.id}")
                continue
            if not emu.verdicts["shipped"].killed:
                bad.append(f"{m} survives the shipped checks on the emulated backend ({case.id})")
            if pred[i] and not g.verdicts["shipped"].killed:
                bad.append(f"{m} is predicted detectable on gfx950 but survives ({case.id})")
    print(f"Kill matrix: cases {', '.join(c.id for c in cases)}; cells = cases killed / cases run.\n")
    print("\n".join(lines))
    print("\nDetails (first reason per check, first case):")
    for m in mutants:
        for base in ("emulated", "gfx950-p8"):
            o = by[(base, cases[0].id, m)]
            first = {c: (o.verdicts[c].reasons[0][:110] if o.verdicts[c].reasons else "survived") for c in cols[:3]}
            print(f"- {m} on {base}: max|err| {o.out_err_max:.3g}, lse {o.lse_err_max:.3g}, stats "
                  f"{ {k: float(f'{v:.3g}') for k, v in o.stats.items()} }; " + "; ".join(f"{c}: {r}" for c, r in first.items()))
    for b in bad:
        log(f"[kill] FAILED: {b}")
    return 1 if bad else 0


def cmd_soak(args) -> int:
    """``--soak N``: N consecutive seeds of the CPU accuracy matrix under the file's bounds, as
    the suite checks them (check_fp8_prefill + the error statistic); ``--soak-base gfx950-p8``
    runs the modelled gfx950 arithmetic under the gfx950 bounds instead. Prints a JSON summary."""
    import factories.accuracy as accuracy
    import factories.aiter.emulation as emulation
    from factories.accuracy import V_HEAD_DIM, check_fp8_prefill, run_fp8_prefill
    from factories.accuracy.error_stats import error_stats
    import torch

    # check_fp8_prefill computes the float64 golden itself; the statistic needs the same one.
    # A one-slot memo lets the golden be computed once per run (same lens, scale and shapes).
    real_reference = accuracy.causal_reference
    memo: dict[str, Any] = {}

    def causal_reference(q, k, v, lens, scale, **kw):
        key = (tuple(lens), float(scale), tuple(q.shape), tuple(v.shape), tuple(sorted(kw.items())))
        if memo.get("key") != key:
            memo["key"], memo["value"] = key, real_reference(q, k, v, lens, scale, **kw)
        return memo["value"]

    accuracy.causal_reference = causal_reference

    from factories.mutation.kernels import BASE_BACKEND, aiter_backend_for

    data, ds = _load(args)
    file_backend = BASE_BACKEND[args.soak_base]
    tol = _as_tolerance(ds[file_backend])
    bounds = ds[file_backend].stat_bounds()
    cases = args.cases or tuple(MATRIX)
    passed = failed = 0
    worst = {"out": 0.0, "out_excess": 0.0, "lse": 0.0, "stat": 0.0}
    worst_at = {}
    t0 = time.monotonic()
    seeds = range(args.seed0, args.seed0 + args.soak)
    for s_i, seed in enumerate(seeds, 1):
        for case_id in cases:
            lens, decodes, heads, cu = MATRIX[case_id]
            backend = emulation if args.soak_base == "emulated" else aiter_backend_for(args.soak_base)
            run = run_fp8_prefill(lens, heads, backend, num_decodes=decodes, cu_count=cu, seed=seed)
            q8, k8, v8 = (t.to(run.fp8_dtype) for t in (run.q, run.k, run.v))
            g, _ = causal_reference(q8, k8, v8, run.prefill_lens, run.softmax_scale)
            report = check_fp8_prefill(run, tol)
            memo.clear()  # the next run has other data under the same key
            stats = error_stats(run.out.view(run.total_tokens, heads, V_HEAD_DIM), g)
            problems = list(report.problems) + bounds.violations(stats)
            out = run.out.view(run.total_tokens, heads, V_HEAD_DIM)
            excess = _excess(out, g, tol.out_rtol).max()  # the part of the error atol must cover
            ratios = {
                "out": report.out.worst_ratio,
                "out_excess": float(excess) / tol.out_atol if bool(torch.isfinite(excess)) else math.inf,
                "lse": report.lse.worst_ratio if report.lse is not None else 0.0,
                "stat": bounds.worst_ratio(stats),
            }
            for k, v in ratios.items():
                if v > worst[k]:
                    worst[k], worst_at[k] = v, f"{case_id} seed {seed}"
            if problems:
                failed += 1
                log(f"[soak] FAIL {case_id} seed {seed}: {'; '.join(problems)}")
            else:
                passed += 1
            del run, g
        log(f"[soak {s_i}/{args.soak}] seed {seed}: {passed} passed, {failed} failed so far ({time.monotonic() - t0:.0f}s)")
    summary = {
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(),
        "tolerance_digest": data["digest"]["value"],
        "kernels": args.soak_base,
        "bounds": file_backend,
        "seeds": [args.seed0, args.seed0 + args.soak - 1],
        "cases": list(cases),
        "passed": passed,
        "failed": failed,
        "worst_ratio": worst,
        "worst_at": worst_at,
        "seconds": round(time.monotonic() - t0, 1),
    }
    accuracy.causal_reference = real_reference
    print(json.dumps(summary, indent=1))
    if args.soak_out:
        Path(args.soak_out).write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    return 1 if failed else 0


def cmd_gpu_models(args) -> int:
    """``--gpu-model-check``: the models alone (no vLLM, no pipeline) at the suite's GPU-sized
    cases on a CUDA/ROCm device, judged with the file's bounds: do the bounds derived on the CPU
    matrix hold at 16k-65k keys per row? Inputs are drawn on the device (seeded), not through
    make_qkv, so the values differ from the suite's; the distribution is the same."""
    import torch

    from factories.accuracy import causal_reference
    from factories.accuracy.error_model import MODELS, U_BF16, kernel_budget, model_attention, needed_atol
    from factories.accuracy.error_stats import error_stats

    data, ds = _load(args)
    torch.backends.cuda.matmul.allow_tf32 = False
    cases = load_gpu_matrix()
    result: dict[str, Any] = {"digest": data["digest"]["value"], "machine": machine(), "cases": {}}
    bad = []
    for case_id, (lens, _decodes, heads, _cu) in cases.items():
        t0 = time.monotonic()
        gen = torch.Generator(device="cuda").manual_seed(args.seed0)
        total = sum(lens)
        q, k, v = (
            torch.randn(total, heads, d, generator=gen, device="cuda").to(torch.bfloat16).to(torch.float8_e4m3fn)
            for d in (192, 192, 128)
        )
        g, gl = causal_reference(q, k, v, lens, 192**-0.5)
        entry = {}
        for model in MODELS.values():
            d = ds[model.backend]
            mo = model_attention(q, k, v, lens, 192**-0.5, model, block_elements=1 << 26)
            ob, lb = kernel_budget(mo)
            st = error_stats(mo.out, g)
            lse_all = float(((mo.lse.double() - gl).abs() + lb.double()).max())
            entry[model.name] = {
                "out_ratio": needed_atol(mo.y, g, ob, U_BF16) / d.out_atol,
                "lse_all_rows_ratio": lse_all / d.lse_atol,
                "stat_ratio": d.stat_bounds().worst_ratio(st),
                "stats": st.as_dict(),
            }
            del mo, ob, lb
            torch.cuda.empty_cache()
        result["cases"][case_id] = {"seconds": round(time.monotonic() - t0, 1), "models": entry}
        worst = {m: max(v["out_ratio"], v["stat_ratio"]) for m, v in entry.items()}
        log(f"[gpu] {case_id}: " + ", ".join(f"{m} out/stat {w:.2f}x lse {entry[m]['lse_all_rows_ratio']:.2f}x" for m, w in worst.items()))
        bad += [f"{case_id} {m}" for m, w in worst.items() if w > 1.0]
        del q, k, v, g, gl
        torch.cuda.empty_cache()
    print(json.dumps(result, indent=1))
    if args.soak_out:
        Path(args.soak_out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 1 if bad else 0


def parse_args(argv: Sequence[str] | None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help=f"small sweep: {len(QUICK_CASES)} cases x {QUICK_SEEDS} seeds")
    p.add_argument("--cases", nargs="+", metavar="ID", help=f"case ids (default: all but the 16k case); known: {', '.join(MATRIX)}")
    p.add_argument("--seeds", type=int, help=f"seeds per case (default {DEFAULT_SEEDS}, --quick {QUICK_SEEDS})")
    p.add_argument("--seed0", type=int, default=0, help="first seed (default 0)")
    p.add_argument("--backend", default="emulated", help="emulated (default) or aiter (real kernels, gfx950 only)")
    p.add_argument("--file", help="tolerance file (default factories/accuracy/tolerances.json)")
    p.add_argument("--png", help="plot path (default docs/tolerances.png)")
    p.add_argument("--dry-run", action="store_true", help="sweep and print, write nothing")
    p.add_argument("--check", action="store_true", help="verify the file's digest and print its bounds")
    p.add_argument("--replot", action="store_true", help="redraw the PNG from the file (no sweep)")
    p.add_argument("--kill-matrix", action="store_true", help="run every kernel mutant against every check")
    p.add_argument("--soak", type=int, metavar="N", help="N consecutive seeds of the CPU accuracy matrix under the file's bounds")
    p.add_argument("--gpu-model-check", action="store_true", help="the models at the suite's GPU-sized cases (needs CUDA/ROCm)")
    p.add_argument("--soak-out", help="write the soak / GPU check summary JSON here")
    p.add_argument(
        "--soak-base", default="emulated", choices=("emulated", "gfx950-p8"),
        help="kernels the soak runs: the emulation (judged with the emulated bounds, default) or the "
        "emulation with the modelled gfx950 fp8-P arithmetic (judged with the gfx950 bounds)",
    )
    args = p.parse_args(argv)
    if args.backend not in ("emulated", "aiter"):
        raise BadInput(f"--backend must be emulated or aiter, got {args.backend!r}")
    if args.cases:
        unknown = [c for c in args.cases if c not in MATRIX]
        if unknown:
            raise BadInput(f"unknown case id(s) {', '.join(unknown)}; known: {', '.join(MATRIX)}")
    for name in ("seeds", "soak"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise BadInput(f"--{name.replace('_', '-')} must be >= 1, got {value}")
    if args.seed0 < 0:
        raise BadInput(f"--seed0 must be >= 0, got {args.seed0}")
    if sum(bool(x) for x in (args.check, args.kill_matrix, args.soak, args.replot, args.gpu_model_check)) > 1:
        raise BadInput("--check, --replot, --kill-matrix, --soak and --gpu-model-check are separate commands; give one")
    if args.png and not args.png.endswith(".png"):
        raise BadInput(f"--png must name a .png file, got {args.png!r}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = parse_args(argv)
    except BadInput as exc:
        print(f"calibrate_tolerance: {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # argparse: usage error (2) or --help (0)
        return int(exc.code or 0)
    if args.backend == "aiter":
        from factories.aiter.backend import real_aiter_unusable_reason

        reason = real_aiter_unusable_reason()
        if reason is not None:
            print(f"calibrate_tolerance: --backend aiter cannot run here: {reason}", file=sys.stderr)
            return 3
    if args.gpu_model_check:
        import torch

        if not torch.cuda.is_available():
            print("calibrate_tolerance: --gpu-model-check cannot run here: no CUDA/ROCm device (torch.cuda.is_available() is False)", file=sys.stderr)
            return 3
    from factories.accuracy.tolerance_file import ToleranceFileError

    try:
        if args.gpu_model_check:
            return cmd_gpu_models(args)
        if args.check:
            return cmd_check(args)
        if args.replot:
            data, _ = _load(args)
            draw(data, Path(args.png) if args.png else DEFAULT_PNG)
            log(f"[calibrate] drew {args.png or DEFAULT_PNG}")
            return 0
        if args.kill_matrix:
            return cmd_kill_matrix(args)
        if args.soak:
            return cmd_soak(args)
        return cmd_calibrate(args)
    except ToleranceFileError as exc:
        print(f"calibrate_tolerance: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
