"""Derive the FP8 MLA prefill tolerances from an error model, prove they bite, and soak them.

The library behind ``tools/calibrate_tolerance.py`` (the CLI only parses arguments and picks
default paths). Every command takes its paths as arguments: nothing here locates files through
the repository, so it works from an installed wheel.

Derivation (known-regressions B3, vLLM's derive_rocm_aiter_tolerances): for every case and seed of
the sweep, the float64 golden ``g`` (:func:`factories.accuracy.reference.causal_reference`) and
the low-precision model ``y`` of each backend (:mod:`factories.accuracy.error_model`: the same fp8
tensors, the kernel's quantization points) give

    atol_needed = max_e (1 + u_bf16) * (|y_e - g_e| + budget_e) - (rtol - u_bf16) * |g_e|

with ``rtol = u_bf16 = 2^-8`` (one bf16 rounding of the output) and ``budget_e`` the fp32
kernel budget. The committed bound is ``margin x`` the sweep's maximum (envelope over the model
variants of a backend). The backends' own outputs never set a bound: they are *audited* against
it (the emulated pipeline, the emulated pipeline with the gfx950 P rounding, and with
``backend="aiter"`` the real kernels).

The cases are the suite's CPU cases (:mod:`factories.accuracy.cases`), so the sweep and the soak
follow the suite. Commands return the CLI's exit code: 0 ok; 1 an audit, a soak case or a
predicted kill failed. Progress goes to stderr, results to stdout.
"""

from __future__ import annotations

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

from factories.accuracy.cases import CPU_CASES, GPU_CASES, SOFTMAX_SCALE, AccuracyCase
from factories.accuracy.tolerance import (
    FILE_BACKENDS,
    SEED_ATOL,
    SEED_RTOL,
    Tolerance,
    file_tolerances,
    read,
    seal,
)
from factories.aiter.layout import QK_HEAD_DIM, V_HEAD_DIM

#: What the file records as its writer (provenance, not a path this module opens).
TOOL_NAME = "tools/calibrate_tolerance.py"
TOOL_VERSION = "1.0.0"
MARGIN = 1.5  # element-wise bounds and rel_fro: a floor, not a fluctuation
STAT_MARGIN = 4.0  # slope/bias: zero-mean fluctuations; the sweep's max is ~2.5 sigma of them
QUANTILES = (0.5, 0.99, 0.999, 1.0)

#: The suite's CPU cases by id: what the sweep and the soak run.
MATRIX: dict[str, AccuracyCase] = {c.id: c for c in CPU_CASES}
#: The default sweep: the matrix without its batches of >= 8192 tokens in total (the soak runs
#: them).
DEFAULT_CASES = tuple(c.id for c in CPU_CASES if c.total_tokens < 8192)
DEFAULT_SEEDS = 3
QUICK_CASES = ("seed-1x128-h16", "seed-1x512-h16", "ragged-3dec-h12-cu80", "ragged-2dec-h32-cu80")
QUICK_SEEDS = 2

#: ``--variant`` value that derives the gfx950 bounds for every arithmetic AITER's sources allow.
ENVELOPE = "envelope"

#: Audited pipeline -> the file backend whose bound judges it.
AUDITED = {"emulated": "emulated", "gfx950-p8": "gfx950", "aiter": "gfx950"}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


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


def load(path: Path | str) -> tuple[dict[str, Any], dict[str, Tolerance]]:
    """The verified file and its bounds per file backend (statistic included)."""
    data = read(path)
    return data, file_tolerances(data)


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


def _pipeline_measure(run, golden, rtol) -> dict[str, Any]:
    """A pipeline run against the golden: needed atol, LSE error on reduced rows, statistics."""
    import torch

    from factories.accuracy.run import check_fp8_prefill

    g = golden[0]
    out = run.out.view(run.total_tokens, run.num_heads, V_HEAD_DIM)
    loose = Tolerance("audit", "audit", 1e30, 0.0, 1e30, 0.0, "measure only")
    report = check_fp8_prefill(run, loose, reference=golden)
    excess = _excess(out, g, rtol)
    from factories.accuracy.reference import causal_key_counts

    return {
        "excess_max": float(excess.max()) if bool(torch.isfinite(excess).all()) else math.inf,
        "excess_q": _quantiles(excess.clamp_min(1e-9)),
        "lse_err_max": report.lse.max_abs_err if report.lse is not None else 0.0,
        "lse_row_err": report.lse_row_err,
        "lse_keys": causal_key_counts(run.prefill_lens),
        "lse_rows": report.lse_rows,
        "problems": list(report.problems),
        "stats": _stats(out, g),
    }


def gfx950_models(variant: str):
    """The gfx950 models a ``--variant`` names: one variant, or ``envelope`` (every arithmetic
    AITER's sources allow, :data:`~factories.aiter.emulation.arithmetic.AITER_SOURCE_ENVELOPE`)."""
    from factories.accuracy.error_model import GFX950_ENVELOPE, variant_model

    if variant == ENVELOPE:
        return GFX950_ENVELOPE
    return (variant_model(variant),)


def sweep(
    case_ids: Sequence[str], seeds: Sequence[int], backend: str, variant: str = "envelope"
) -> dict[str, Any]:
    """Every case x seed: golden, the emulated model and the gfx950 models of ``variant``, and
    the audited pipelines."""
    import torch

    import factories.aiter.emulation as emulation
    from factories.accuracy.error_model import (
        EMULATED,
        U_BF16,
        kernel_budget,
        model_attention,
        needed_atol,
    )
    from factories.accuracy.reference import causal_key_counts, causal_reference
    from factories.accuracy.run import run_fp8_prefill
    from factories.mutation.broken_kernels import aiter_backend_for

    rtol = U_BF16  # the pipelines' excess statistics (the plot); the models use their own
    pipelines: dict[str, Any] = {}
    if backend == "aiter":
        import importlib

        pipelines["aiter"] = importlib.import_module("aiter")
    else:
        pipelines["emulated"] = emulation
        pipelines["gfx950-p8"] = None  # built per run (fresh wrapper state)
    runs = []
    total = len(case_ids) * len(seeds)
    t0 = time.monotonic()
    for i, (case_id, seed) in enumerate(((c, s) for c in case_ids for s in seeds), 1):
        case = MATRIX[case_id]
        cu = case.cu
        if backend == "aiter":
            props = torch.cuda.get_device_properties(torch.cuda.current_device())
            cu = props.multi_processor_count
        entry: dict[str, Any] = {"case": case_id, "seed": seed, "models": {}, "pipelines": {}}
        golden = None
        for name, module in pipelines.items():
            mod = aiter_backend_for("gfx950-p8") if name == "gfx950-p8" else module
            run = run_fp8_prefill(
                case.lens, case.heads, mod, num_decodes=case.decodes, cu_count=cu, seed=seed
            )
            if golden is None:
                q8, k8, v8 = (t.to(run.fp8_dtype) for t in (run.q, run.k, run.v))
                g, gl = causal_reference(q8, k8, v8, run.prefill_lens, run.softmax_scale)
                golden = (q8, k8, v8, g, gl, run.softmax_scale, run.prefill_lens)
            entry["pipelines"][name] = _pipeline_measure(run, (golden[3], golden[4]), rtol)
            del run
        q8, k8, v8, g, gl, scale, plens = golden
        entry["elements"] = g.numel()
        keys = causal_key_counts(plens)
        for model in (EMULATED, *gfx950_models(variant)):
            mo = model_attention(q8, k8, v8, plens, scale, model)
            ob, lb = kernel_budget(mo)
            lse_err = (mo.lse.double() - gl).abs_().add_(lb.double())
            entry["models"][model.name] = {
                "backend": model.backend,
                "store_u": model.store_u,
                "needed_out_atol": needed_atol(mo.y, g, ob, model.store_u, model.store_u),
                "lse_keys": keys,
                "lse_row_err": lse_err.amax(dim=-1).cpu().numpy(),
                "needed_lse_atol": float(lse_err.max()),
                "y_err_max": float((mo.y.double() - g).abs().max()),
                "budget_max": float(ob.max()),
                "excess_q": _quantiles(_excess(mo.out, g, rtol).clamp_min(1e-9)),
                "stats": _stats(mo.out, g),
                # The same model with a round-to-nearest store: what the store's own bias adds.
                "stats_rne": _stats(mo.y.to(torch.bfloat16), g),
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


def fit_lse(keys, errs, margin: float = MARGIN) -> tuple[float, float, float]:
    """``(lse_atol, lse_per_key, slope)`` with ``|lse - g| <= lse_atol + lse_per_key * (n - 1)``
    for a row of ``n`` keys, from per-row model errors (budget included) ``errs`` at ``keys``.

    ``a`` is the worst error of rows within one 128-key step (no long sum yet); the slope ``b`` (in
    units of ``u_fp32`` per key) is the worst ``(err - a) / ((n - 1) u_fp32)`` of longer rows, at
    least 1: an fp32 row sum of ``n`` terms may err by ``(n - 1) u_fp32`` relative (Higham's bound),
    which is what carries the bound from the sweep's <= 5k-key rows to 65k keys when ``l`` sums
    fp32 P; a model whose ``l`` sums rounded P drifts faster, and its measured slope says how
    much. Both parts get ``margin``."""
    import numpy as np

    from factories.accuracy.error_model import KV_STEP, U_FP32

    keys = np.concatenate([np.asarray(k, dtype=np.float64) for k in keys])
    errs = np.concatenate([np.asarray(e, dtype=np.float64) for e in errs])
    ok = np.isfinite(errs)
    keys, errs = keys[ok], errs[ok]
    short = keys <= KV_STEP
    a = float(errs[short].max()) if short.any() else 0.0
    long = ~short
    b = 1.0
    if long.any():
        b = max(b, float(((errs[long] - a) / ((keys[long] - 1) * U_FP32)).max()))
    return margin * a, margin * b * U_FP32, b


def derive(measured: dict[str, Any]) -> dict[str, Any]:
    """Bounds per file backend from the models' maxima (never from a pipeline's output): the
    backend's models are the ones the sweep ran for it (``emulated``; the gfx950 ``--variant`` or
    the envelope AITER's sources allow)."""
    from factories.accuracy.error_model import BUDGET_C

    tolerances = {}
    maxima = {}
    first = measured["runs"][0]["models"]
    for backend in FILE_BACKENDS:
        names = [n for n, v in first.items() if v["backend"] == backend]
        vals = [run["models"][n] for run in measured["runs"] for n in names]
        mx = {
            "needed_out_atol": max(v["needed_out_atol"] for v in vals),
            "needed_lse_atol": max(v["needed_lse_atol"] for v in vals),
            "rel_fro": max(v["stats"]["rel_fro"] for v in vals),
            "rel_fro_min": min(v["stats"]["rel_fro"] for v in vals if v["stats"]["rel_fro"] > 0),
            "slope_dev": max(abs(v["stats"]["slope_dev"]) for v in vals),
            "bias": max(abs(v["stats"]["bias"]) for v in vals),
        }
        # |slope-1| and |bias| are zero-mean fluctuations (margin STAT_MARGIN) plus, for a
        # truncating store, a systematic pull toward zero that the model knows exactly (margin
        # 1): a 4x margin on that offset would hide a 2% softmax-scale error.
        for key in ("slope_dev", "bias"):
            rne = [v.get("stats_rne", v["stats"])[key] for v in vals]
            mx[f"{key}_fluct"] = max(abs(x) for x in rne)
            mx[f"{key}_store_offset"] = max(
                abs(v["stats"][key] - r) for v, r in zip(vals, rne, strict=True)
            )
        lse_atol, lse_per_key, slope = fit_lse(
            [v["lse_keys"] for v in vals], [v["lse_row_err"] for v in vals]
        )
        mx["lse_slope_u_per_key"] = slope
        maxima[backend] = mx
        rtol = max(v["store_u"] for v in vals)
        variant = measured.get("variant", {}).get(backend, names[0] if len(names) == 1 else "")
        tolerances[backend] = {
            "variant": variant,
            "models": names,
            "out_atol": MARGIN * mx["needed_out_atol"],
            "out_rtol": rtol,
            "lse_atol": lse_atol,
            "lse_per_key": lse_per_key,
            "lse_rtol": 0.0,
            "stats": {
                "rel_fro_max": MARGIN * mx["rel_fro"],
                "slope_dev_max": (
                    STAT_MARGIN * mx["slope_dev_fluct"] + mx["slope_dev_store_offset"]
                ),
                "bias_max": STAT_MARGIN * mx["bias_fluct"] + mx["bias_store_offset"],
            },
            "derivation": (
                f"out_atol = {MARGIN} x max over the sweep and the models {names} of "
                "(1+u_s)*max_e(|y_e-g_e| + budget_e) - (rtol-u_s)|g_e|, rtol = u_s = the store's "
                "largest relative error (2^-8 bf16 RNE, 2^-7 truncating; the largest of the "
                f"models); budget_e = {BUDGET_C:g}*2^-24*sum_j p_j|v_j| (fp32 reordering). "
                f"LSE of a row of n keys: lse_atol + lse_per_key*(n-1), lse_atol = {MARGIN} x "
                f"max(|lse_model - lse_golden| + {BUDGET_C:g}*2^-24*(1+|lse|)) over rows of <= 128 "
                f"keys, lse_per_key = {MARGIN} x b x 2^-24 with b = max(1, worst (err - a) / "
                f"((n-1) 2^-24) of longer rows) = {slope:.3g} (1: Higham's (n-1)u bound of an "
                f"fp32 row sum). stats: rel_fro {MARGIN} x the models' maximum; |slope-1| and "
                f"|bias| {STAT_MARGIN} x the maximum with a round-to-nearest store plus 1 x the "
                "largest shift a truncating store adds (rounded output vs golden)."
            ),
        }
    return {"tolerances": tolerances, "maxima": maxima}


def _lse_ratio(vals, tol) -> float:
    """Worst per-row LSE error / the row's key-count bound over the pipeline runs ``vals``."""
    import numpy as np

    worst = 0.0
    for v in vals:
        err = v.get("lse_row_err")
        if err is None:
            continue
        keys = np.asarray(v["lse_keys"], dtype=np.float64)
        bound = tol["lse_atol"] + tol.get("lse_per_key", 0.0) * np.maximum(keys - 1, 0)
        ok = ~np.isnan(err)
        if ok.any():
            worst = max(worst, float((err[ok] / bound[ok]).max()))
    return worst


def audit(measured: dict[str, Any], tolerances: dict[str, Any]) -> dict[str, Any]:
    """Each audited pipeline against the bound of its backend: the worst ratio per check."""
    result = {}
    for name, backend in AUDITED.items():
        vals = [run["pipelines"][name] for run in measured["runs"] if name in run["pipelines"]]
        if not vals:
            continue
        tol = tolerances[backend]
        st = tol["stats"]
        result[name] = {
            "judged_with": backend,
            "runs": len(vals),
            "out_ratio": max(v["excess_max"] for v in vals) / tol["out_atol"],
            "lse_ratio": _lse_ratio(vals, tol),
            "rel_fro_ratio": max(v["stats"]["rel_fro"] for v in vals) / st["rel_fro_max"],
            "slope_ratio": max(abs(v["stats"]["slope_dev"]) for v in vals) / st["slope_dev_max"],
            "bias_ratio": max(abs(v["stats"]["bias"]) for v in vals) / st["bias_max"],
            "problems": sorted({p for v in vals for p in v["problems"]}),
        }
        ratios = ("out_ratio", "lse_ratio", "rel_fro_ratio", "slope_ratio", "bias_ratio")
        result[name]["ok"] = not result[name]["problems"] and all(
            result[name][k] <= 1.0 for k in ratios
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
            s = case["series"].setdefault(
                name, {"excess_q": [0.0] * len(QUANTILES), "rel_fro": 0.0, "slope_dev": 0.0}
            )
            s["excess_q"] = [max(a, b) for a, b in zip(s["excess_q"], v["excess_q"])]
            s["rel_fro"] = max(s["rel_fro"], v["stats"]["rel_fro"])
            s["slope_dev"] = max(s["slope_dev"], abs(v["stats"]["slope_dev"]))
    return out


# --------------------------------------------------------------------------------------------
# The plot
# --------------------------------------------------------------------------------------------

#: Series of the plot: key in ``per_case``, label, colour, x offset.
_STYLES = (
    ("pipeline:emulated", "emulated pipeline", "tab:blue", -0.24),
    ("model:emulated", "emulated model", "tab:cyan", -0.12),
    ("model:p8-unscaled", "gfx950 model: P e4m3fn unscaled", "tab:red", -0.06),
    ("model:p8-unscaled-reduce-truncate", "... truncating store", "salmon", -0.02),
    ("model:p8-lazy-rescale", "gfx950 model: P lazily rescaled", "tab:orange", 0.02),
    ("model:p8-lazy-rescale-reduce-truncate", "... truncating store", "gold", 0.06),
    ("model:p8-row-max", "gfx950 model: P row-scaled to 448", "tab:brown", 0.1),
    ("model:p8-row-max-reduce-truncate", "... truncating store", "tan", 0.14),
    ("pipeline:gfx950-p8", "emulated split pipeline, fp8 P", "tab:purple", 0.24),
    ("pipeline:aiter", "real AITER (gfx950)", "black", 0.3),
)


def draw(data: dict[str, Any], png: Path) -> None:
    """The per-case errors against the derived bounds, as a PNG at ``png``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cases = list(data["per_case"])
    tol = data["tolerances"]
    known = {key for key, *_ in _STYLES}
    extra = sorted({k for c in data["per_case"].values() for k in c["series"] if k not in known})
    styles = _STYLES + tuple(
        (k, k.removeprefix("model:"), "tab:gray", 0.18 + 0.02 * i) for i, k in enumerate(extra)
    )
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(13, 10), sharex=True)
    x = list(range(len(cases)))
    for key, label, color, dx in styles:
        pts = [(i, data["per_case"][c]["series"].get(key)) for i, c in enumerate(cases)]
        pts = [(i, s) for i, s in pts if s is not None]
        if not pts:
            continue
        xs = [i + dx for i, _ in pts]
        q = [s["excess_q"] for _, s in pts]
        ax1.vlines(xs, [v[1] for v in q], [v[3] for v in q], color=color, lw=2, alpha=0.6)
        ax1.scatter(
            xs,
            [v[3] for v in q],
            color=color,
            marker="v",
            s=30,
            label=f"{label}: max (bar from p99)",
        )
        ax1.scatter(xs, [v[2] for v in q], color=color, marker="_", s=60)
        ax2.scatter(
            xs,
            [max(s["slope_dev"], 1e-7) for _, s in pts],
            color=color,
            marker="o",
            s=25,
            label=f"{label} |slope-1|",
        )
        ax2.scatter(
            xs,
            [max(s["rel_fro"], 1e-7) for _, s in pts],
            color=color,
            marker="s",
            s=25,
            facecolors="none",
        )
    ax1.axhline(0.1, color="gray", ls=":", label="seed atol 0.1 (rtol 0.05)")
    for backend, color in (("gfx950", "tab:red"), ("emulated", "tab:blue")):
        atol = tol[backend]["out_atol"]
        ax1.axhline(
            atol,
            color=color,
            ls="--",
            label=f"derived {backend} atol {atol:.3g} "
            f"(rtol 2^{math.log2(tol[backend]['out_rtol']):.0f})",
        )
    ax1.set_yscale("log")
    ax1.set_ylim(1e-9 * 0.8, 1.0)
    ax1.set_ylabel("|out - golden| - 2^-8 |golden|  (what atol covers; floor 1e-9)")
    ax1.set_title(
        "FP8 MLA prefill: error per case vs derived tolerances "
        f"({data['sweep']['seeds_per_case']} seeds/case, "
        f"margin {MARGIN}x; {data['generated']['date'][:10]})"
    )
    ax1.legend(fontsize=7, loc="lower right", ncol=2)
    for backend, color in (("gfx950", "tab:red"), ("emulated", "tab:blue")):
        st = tol[backend]["stats"]
        ax2.axhline(
            st["slope_dev_max"],
            color=color,
            ls="--",
            label=f"{backend} |slope-1| bound {st['slope_dev_max']:.2g}",
        )
        ax2.axhline(
            st["rel_fro_max"],
            color=color,
            ls="-.",
            label=f"{backend} rel. Frobenius bound {st['rel_fro_max']:.2g}",
        )
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


def replot(file: Path, png: Path) -> int:
    """Redraw ``png`` from the file (no sweep)."""
    data, _ = load(file)
    draw(data, png)
    log(f"[calibrate] drew {png}")
    return 0


# --------------------------------------------------------------------------------------------
# Commands
# --------------------------------------------------------------------------------------------


def calibrate(
    case_ids: Sequence[str],
    seeds: Sequence[int],
    backend: str,
    *,
    file: Path,
    png: Path,
    dry_run: bool,
    command: str,
    variant: str = ENVELOPE,
) -> int:
    """Sweep, derive, audit; unless ``dry_run``, write the sealed ``file`` and draw ``png``.
    With the real kernels (``backend="aiter"``) a failed audit writes nothing: the model's
    assumptions do not hold. ``command`` is recorded in the file as how it was made. The gfx950
    bounds are derived for ``variant`` (a name of ``ARITHMETIC_VARIANTS``, or ``envelope``: every
    arithmetic AITER's sources allow); the file records which."""
    seeds = list(seeds)
    log(
        f"[calibrate] backend {backend}, gfx950 variant {variant}: {len(case_ids)} cases x "
        f"{len(seeds)} seeds"
    )
    t0 = time.monotonic()
    measured = sweep(case_ids, seeds, backend, variant)
    measured["variant"] = {"emulated": "fp32-p", "gfx950": variant}
    d = derive(measured)
    aud = audit(measured, d["tolerances"])
    data = {
        "schema": 1,
        "tool": {"name": TOOL_NAME, "version": TOOL_VERSION},
        "generated": {
            "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "machine": machine(),
            "command": command,
            "backend": backend,
            "seconds": round(time.monotonic() - t0, 1),
        },
        "inputs": (
            "vLLM's FP8 prefill path as tests/accuracy runs it: q/k/v = randn bf16 "
            "(factories.stubs.builders.make_qkv), cast to e4m3fn with scale 1, softmax_scale "
            "1/sqrt(192), bottom-right causal, KV = Q. The bounds hold for this input distribution."
        ),
        "margins": {"elementwise_and_rel_fro": MARGIN, "slope_and_bias": STAT_MARGIN},
        "sweep": {
            "cases": {
                c: {
                    "lens": list(MATRIX[c].lens),
                    "decodes": MATRIX[c].decodes,
                    "heads": MATRIX[c].heads,
                    "cu": MATRIX[c].cu,
                }
                for c in case_ids
            },
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
            f"[audit] {name} vs {a['judged_with']}: out {a['out_ratio']:.3f}x, "
            f"lse {a['lse_ratio']:.3f}x, rel_fro {a['rel_fro_ratio']:.3f}x, "
            f"slope {a['slope_ratio']:.3f}x, bias {a['bias_ratio']:.3f}x "
            f"{'OK' if a['ok'] else 'FAILED ' + '; '.join(a['problems'])}"
        )
    for file_backend, tol in data["tolerances"].items():
        st = tol["stats"]
        print(
            f"{file_backend} [{tol['variant']}]: out atol {tol['out_atol']:.4g} rtol "
            f"{tol['out_rtol']:.4g}; lse atol {tol['lse_atol']:.4g} + "
            f"{tol['lse_per_key']:.3g}*(keys-1); rel_fro <= {st['rel_fro_max']:.4g}, "
            f"|slope-1| <= {st['slope_dev_max']:.4g}, |bias| <= {st['bias_max']:.4g}"
        )
    if backend == "aiter" and failed:
        log(
            "[calibrate] the real kernel exceeds the model-derived bound: the assumptions of "
            "factories/accuracy/error_model.py do not hold; file not written"
        )
        return 1
    if not dry_run:
        file.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        log(f"[calibrate] wrote {file}")
        draw(data, png)
        log(f"[calibrate] drew {png}")
    return 1 if failed else 0


def check(file: Path) -> int:
    """Verify the file's digest and print its bounds (a bad file raises ToleranceFileError)."""
    data, tols = load(file)
    print(
        f"{file}: digest OK ({data['digest']['value'][:16]}...), tool {data['tool']['version']}, "
        f"{data['generated']['date']}"
    )
    for t in tols.values():
        st = t.stats
        print(
            f"  {t.backend} [{t.variant or '?'}: {', '.join(t.variants)}]: out atol "
            f"{t.out_atol:.4g} rtol {t.out_rtol:.4g}; lse atol {t.lse_atol:.4g} + "
            f"{t.lse_per_key:.3g}*(keys-1); rel_fro <= {st.rel_fro_max:.4g}; "
            f"|slope-1| <= {st.slope_dev_max:.4g}; |bias| <= {st.bias_max:.4g}"
        )
    return 0


def predicted_detectable(outcome, data, tol_g: Tolerance) -> tuple[bool, str]:
    """Does the error model say the gfx950 bounds can see this mutant? From the noise-free signal
    (the mutant on the fp32 emulation) against the gfx950 bound *plus* the modelled fp8-P noise."""
    if outcome.raised:
        return True, "the run raises (a rejected or faulting call)"
    reasons = outcome.verdicts["tolerance"].reasons
    structural = ("never written", "plan splits", "final_lse was written")
    if any(s in r for r in reasons for s in structural):
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
        f"signal below the fp8-P noise: max|err| {outcome.out_err_max:.3g} vs atol "
        f"{tol_g.out_atol:.3g}+noise {mx['needed_out_atol']:.3g}; |slope-1| "
        f"{abs(s.get('slope_dev', 0.0)):.2g} vs {st['slope_dev_max']:.2g}; "
        f"rel_fro {s.get('rel_fro', 0.0):.2g} vs {st['rel_fro_max']:.2g}"
    )


def kill_matrix(file: Path, *, quick: bool) -> int:
    """Every kernel mutant x every check, as a markdown table (``quick``: the first case only).
    The ``tolerance`` column is the element-wise check alone; ``statistic`` is its own column."""
    from factories.accuracy.kill_matrix import KILL_CASES, run_kill_matrix

    data, file_tols = load(file)
    tols = {b: t.elementwise() for b, t in file_tols.items()}
    stats = {b: t.stats for b, t in file_tols.items()}
    seed = Tolerance(
        "seed",
        "upstream PR #51457",
        SEED_ATOL,
        SEED_RTOL,
        math.inf,
        0.0,
        "the seed test: output only",
    )
    cases = KILL_CASES[: 1 if quick else len(KILL_CASES)]
    outcomes = run_kill_matrix(cases, ["emulated", "gfx950-p8"], tols, stats, seed, progress=log)
    by = {(o.base, o.case, o.mutant): o for o in outcomes}
    mutants = list(dict.fromkeys(o.mutant for o in outcomes))
    cols = ("seed", "tolerance", "statistic", "shipped")
    lines = [
        "| mutant | "
        + " | ".join(f"emulated: {c}" for c in cols)
        + " | "
        + " | ".join(f"gfx950-p8: {c}" for c in cols)
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
        preds = [
            predicted_detectable(by[("emulated", case.id, m)], data, tols["gfx950"])
            for case in cases
        ]
        pred = [p for p, _ in preds]
        cells.append(
            f"{sum(pred)}/{len(cases)}" + ("" if all(pred) else f" ({preds[pred.index(False)][1]})")
        )
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
    print(
        f"Kill matrix: cases {', '.join(c.id for c in cases)}; cells = cases killed / cases run.\n"
    )
    print("\n".join(lines))
    print("\nDetails (first reason per check, first case):")
    for m in mutants:
        for base in ("emulated", "gfx950-p8"):
            o = by[(base, cases[0].id, m)]
            first = {
                c: (o.verdicts[c].reasons[0][:110] if o.verdicts[c].reasons else "survived")
                for c in cols[:3]
            }
            print(
                f"- {m} on {base}: max|err| {o.out_err_max:.3g}, lse {o.lse_err_max:.3g}, stats "
                f"{ {k: float(f'{v:.3g}') for k, v in o.stats.items()} }; "
                + "; ".join(f"{c}: {r}" for c, r in first.items())
            )
    for b in bad:
        log(f"[kill] FAILED: {b}")
    return 1 if bad else 0


def soak(
    file: Path,
    *,
    runs: int,
    seed0: int,
    base: str,
    case_ids: Sequence[str] | None = None,
    out: Path | None = None,
) -> int:
    """``runs`` consecutive seeds from ``seed0`` of the CPU accuracy matrix under the file's
    bounds, as the suite checks them (element-wise + the error statistic); ``base="gfx950-p8"``
    runs the modelled gfx950 arithmetic under the gfx950 bounds instead. Prints a JSON summary
    (and writes it to ``out``)."""
    import torch

    import factories.aiter.emulation as emulation
    from factories.accuracy.error_stats import error_stats
    from factories.accuracy.reference import causal_reference
    from factories.accuracy.run import check_fp8_prefill, run_fp8_prefill
    from factories.mutation.broken_kernels import BASE_BACKEND, aiter_backend_for

    data, file_tols = load(file)
    file_backend = BASE_BACKEND[base]
    tol = file_tols[file_backend].elementwise()
    bounds = file_tols[file_backend].stats
    cases = tuple(case_ids) if case_ids else tuple(MATRIX)
    passed = failed = 0
    worst = {"out": 0.0, "out_excess": 0.0, "lse": 0.0, "stat": 0.0}
    worst_at = {}
    t0 = time.monotonic()
    seeds = range(seed0, seed0 + runs)
    for s_i, seed in enumerate(seeds, 1):
        for case_id in cases:
            case = MATRIX[case_id]
            backend = emulation if base == "emulated" else aiter_backend_for(base)
            run = run_fp8_prefill(
                case.lens,
                case.heads,
                backend,
                num_decodes=case.decodes,
                cu_count=case.cu,
                seed=seed,
            )
            q8, k8, v8 = (t.to(run.fp8_dtype) for t in (run.q, run.k, run.v))
            golden = causal_reference(q8, k8, v8, run.prefill_lens, run.softmax_scale)
            g = golden[0]
            report = check_fp8_prefill(run, tol, reference=golden)
            out_3d = run.out.view(run.total_tokens, case.heads, V_HEAD_DIM)
            stats = error_stats(out_3d, g)
            problems = list(report.problems) + bounds.violations(stats)
            excess = _excess(out_3d, g, tol.out_rtol).max()  # the part of the error atol covers
            ratios = {
                "out": report.out.worst_ratio,
                "out_excess": (
                    float(excess) / tol.out_atol if bool(torch.isfinite(excess)) else math.inf
                ),
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
            del run, g, golden
        log(
            f"[soak {s_i}/{runs}] seed {seed}: {passed} passed, {failed} failed so far "
            f"({time.monotonic() - t0:.0f}s)"
        )
    summary = {
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(),
        "tolerance_digest": data["digest"]["value"],
        "kernels": base,
        "bounds": file_backend,
        "seeds": [seed0, seed0 + runs - 1],
        "cases": list(cases),
        "passed": passed,
        "failed": failed,
        "worst_ratio": worst,
        "worst_at": worst_at,
        "seconds": round(time.monotonic() - t0, 1),
    }
    print(json.dumps(summary, indent=1))
    if out:
        Path(out).write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    return 1 if failed else 0


def gpu_model_check(
    file: Path,
    *,
    seed0: int,
    out: Path | None = None,
    device: str = "cuda",
    cases: Sequence[AccuracyCase] = GPU_CASES,
) -> int:
    """The models alone (no vLLM, no pipeline) at the suite's GPU-sized cases on a CUDA/ROCm
    device, judged with the file's bounds: do the bounds derived on the CPU matrix hold at
    16k-65k keys per row? Inputs are drawn on the device (seeded), not through make_qkv, so the
    values differ from the suite's; the distribution is the same. ``device``/``cases``: the
    same check elsewhere (e.g. a 16k-key row with a few heads on the CPU)."""
    import torch

    from factories.accuracy.error_model import (
        EMULATED,
        MODELS,
        kernel_budget,
        model_attention,
        needed_atol,
        variant_model,
    )
    from factories.accuracy.error_stats import error_stats
    from factories.accuracy.reference import causal_key_counts, causal_reference

    data, file_tols = load(file)
    models = [EMULATED] + [
        MODELS[n] if n in MODELS else variant_model(n) for n in file_tols["gfx950"].variants
    ]
    torch.backends.cuda.matmul.allow_tf32 = False
    result: dict[str, Any] = {"digest": data["digest"]["value"], "machine": machine(), "cases": {}}
    bad = []
    for case in cases:
        t0 = time.monotonic()
        gen = torch.Generator(device=device).manual_seed(seed0)
        q, k, v = (
            torch.randn(case.total_tokens, case.heads, d, generator=gen, device=device)
            .to(torch.bfloat16)
            .to(torch.float8_e4m3fn)
            for d in (QK_HEAD_DIM, QK_HEAD_DIM, V_HEAD_DIM)
        )
        g, gl = causal_reference(q, k, v, case.lens, SOFTMAX_SCALE)
        entry = {}
        keys = torch.from_numpy(causal_key_counts(case.lens)).to(device)
        for model in models:
            t = file_tols[model.backend]
            mo = model_attention(q, k, v, case.lens, SOFTMAX_SCALE, model, block_elements=1 << 26)
            ob, lb = kernel_budget(mo)
            st = error_stats(mo.out, g)
            lse_rows = ((mo.lse.double() - gl).abs() + lb.double()).amax(dim=-1)
            lse_all = float((lse_rows / (t.lse_atol + t.lse_per_key * (keys - 1))).max())
            entry[model.name] = {
                "out_ratio": needed_atol(mo.y, g, ob, t.out_rtol, model.store_u) / t.out_atol,
                "lse_all_rows_ratio": lse_all,
                "stat_ratio": t.stats.worst_ratio(st),
                "stats": st.as_dict(),
            }
            del mo, ob, lb
            if device != "cpu":
                torch.cuda.empty_cache()
        result["cases"][case.id] = {"seconds": round(time.monotonic() - t0, 1), "models": entry}
        worst = {
            m: max(v["out_ratio"], v["stat_ratio"], v["lse_all_rows_ratio"])
            for m, v in entry.items()
        }
        log(
            f"[gpu] {case.id}: "
            + ", ".join(
                f"{m} out/stat {w:.2f}x lse {entry[m]['lse_all_rows_ratio']:.2f}x"
                for m, w in worst.items()
            )
        )
        bad += [f"{case.id} {m}" for m, w in worst.items() if w > 1.0]
        del q, k, v, g, gl
        if device != "cpu":
            torch.cuda.empty_cache()
    print(json.dumps(result, indent=1))
    if out:
        Path(out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 1 if bad else 0
