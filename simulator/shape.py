"""Curve shape: how a speedup changes between two loads of one configuration, predicted against measured.

The product is the speedup curve over batch (where it falls, where it crosses 1), so the report scores its shape
apart from its level. Two ratio rows (speedup, e2e_speedup, throughput_ratio) of one source that differ only in their
batch or concurrency (and the acceptance length measured at each) form a curve; each step along it, from a load lo to
the next larger load hi, compares the predicted change with the measured one:

    shape error = (predicted_hi / predicted_lo) / (measured_hi / measured_lo) - 1

A speedup at a fixed batch and k is tau x base step / speculative step, and neither step depends on the acceptance
length, so an acceptance length that is the same at both loads cancels exactly from both changes: such 'acceptance
unknown' rows, whose level mixes the acceptance guess with the cost model, score the cost model's shape alone. A
serving run at a concurrency is not one step: prefill chunks share the decode steps, and a faster speculative decode
meets more of them per output token, so there the acceptance length moves the predicted change as well, the more
the longer the prompts (DeepSeek-R1 on 8x H200 from 4 to 64 requests: +28 % to +18 % at 1k/1k, +24 % to +0.3 % at
8k/1k, for tau 1.5 to 2.8; tests/test_shape.py). The change's direction agrees when both rise, both fall, or both
move less than FLAT (5 %).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

# Columns that may differ between the points of one curve: the load, what was measured there, and bookkeeping
# (one campaign's runs at different loads can come from different fixture files and dated builds of the same
# harness, e.g. InferenceX; a launch script may size the running-request cap to the load). Everything else (source
# and its label, GPUs and layout, model, formats, method, k, tree, lengths, context, scheduler mode) must match, and
# the load must be of one kind (a batch, or a concurrency).
_FREE = frozenset({"row_id", "published_row", "locator", "source_url", "batch", "concurrency", "tau", "tau_k",
                   "measured", "notes", "engine_date", "engine_version", "spec_max_running",
                   "max_running_requests"})
CURVE_METRICS = ("speedup", "e2e_speedup", "throughput_ratio")
FLAT = 0.05


def curve_key(r: dict[str, str]) -> str:
    """The configuration a ratio row's curve is keyed by ('' when the row is no point of a curve: not a speedup,
    or no valid batch or concurrency). A column left blank and a column left out key alike."""
    if r.get("metric") not in CURVE_METRICS or curve_load(r) is None:
        return ""
    kind = "batch" if (r.get("batch") or "").strip() else "concurrency"
    cells = (f"{k}={v.strip()}" for k, v in sorted(r.items()) if k not in _FREE and (v or "").strip())
    return "|".join([f"load={kind}", *cells])


def curve_load(r: dict[str, str]) -> float | None:
    """The row's load: its batch, else its concurrency (None when neither is a positive number: the row's own
    pricing reports a malformed one)."""
    for k in ("batch", "concurrency"):
        v = (r.get(k) or "").strip()
        if v:
            try:
                x = float(v)
            except ValueError:
                return None
            return x if math.isfinite(x) and x > 0 else None
    return None


def curves(records: Sequence[dict[str, Any]]) -> tuple[list[list[dict[str, Any]]], list[list[dict[str, Any]]]]:
    """The curves among predicted report records (each with 'curve' and 'load'; a positive measured and predicted
    value), each sorted by load, and apart the ambiguous ones: two rows of one key at one load (configurations the
    row columns do not tell apart, e.g. two drafters named only in the notes), which no step is drawn from."""
    by: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in records:
        p, m = r.get("predicted"), r.get("measured")
        if r.get("curve") and p is not None and m is not None and p > 0 and m > 0:
            by.setdefault((r["scope"], r["curve"]), []).append(r)
    good, ambiguous = [], []
    for pts in sorted(by.values(), key=lambda v: min(r["row_id"] for r in v)):
        pts = sorted(pts, key=lambda r: r["load"])
        loads = [r["load"] for r in pts]
        if len(pts) > 1:
            (ambiguous if len(set(loads)) < len(loads) else good).append(pts)
    return good, ambiguous


def pairs(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Consecutive priced loads of every unambiguous curve (`curves`): one dict per step with its rows, loads,
    measured and predicted changes (hi / lo - 1), shape error and direction. A point between them that was not priced
    (skipped, infeasible) is stepped over: the step compares the two loads that were."""
    return steps(curves(records)[0])


def steps(good: Sequence[Sequence[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The steps of curves already grouped by `curves` (its first list): what `pairs` returns."""
    out = []
    for pts in good:
        for lo, hi in zip(pts, pts[1:]):
            dm, dp = hi["measured"] / lo["measured"] - 1.0, hi["predicted"] / lo["predicted"] - 1.0
            out.append({"scope": lo["scope"], "source_id": lo["source_id"], "rows": f"{lo['row_id']}-{hi['row_id']}",
                        "loads": f"{lo['load']:g}->{hi['load']:g}", "measured_change": dm, "predicted_change": dp,
                        "error": (1.0 + dp) / (1.0 + dm) - 1.0, "agrees": _direction(dm) == _direction(dp)})
    return out


def _direction(change: float) -> int:
    """-1, 0 or 1; the change rounded to 1e-9 first, so that a ratio of rescaled values (the same change up to the
    last bits) falls on the same side of FLAT (found at exactly 5 %: 0.04999999999999982 and 0.050000000000000044)."""
    c = round(change, 9)
    return 0 if abs(c) < FLAT else int(math.copysign(1, c))


def summary(steps: Sequence[dict[str, Any]]) -> dict[str, dict[str, dict[str, float]]]:
    """{scope: {source_id or 'overall': n, median |shape error|, within 20 %, bias, direction agrees}}."""
    by: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for s in steps:
        d = by.setdefault(s["scope"], {})
        d.setdefault(s["source_id"], []).append(s)
        d.setdefault("overall", []).append(s)
    return {sc: {src: _stats(v) for src, v in sorted(d.items(), key=lambda kv: kv[0] == "overall")}
            for sc, d in by.items()}


def _stats(steps: list[dict[str, Any]]) -> dict[str, float]:
    """report.stats of the shape errors, and the share whose direction agrees."""
    from .report import stats  # cycle: report imports this module for its markdown

    return {**stats([s["error"] for s in steps]), "agrees": float(np.mean([s["agrees"] for s in steps]))}


def markdown(steps: Sequence[dict[str, Any]], ambiguous: Sequence[Sequence[dict[str, Any]]] = ()) -> str:
    """The shape tables (per scope, by source), the curves left out as ambiguous, and every step, as markdown."""
    out = []
    for sc, by in summary(steps).items():
        out += [f"### curve shape: {sc} speedup rows", "",
                "| source | steps | median abs shape error | within 20% | bias | direction agrees |",
                "|---|---|---|---|---|---|"]
        out += [f"| {src} | {v['n']} | {v['median_abs_error']:.1%} | {v['within_20pct']:.0%} | {v['bias']:+.1%} | "
                f"{v['agrees']:.0%} |" for src, v in by.items()]
        out.append("")
    if ambiguous:
        names = "; ".join(", ".join(r["row_id"] for r in c) for c in ambiguous)
        out += [f"Curves left out (two rows of one configuration at one load, told apart only in their notes): "
                f"{names}.", ""]
    if steps:
        out += ["| rows | source | scope | load | measured change | predicted change | shape error | direction |",
                "|---|---|---|---|---|---|---|---|"]
        out += [f"| {s['rows']} | {s['source_id']} | {s['scope']} | {s['loads']} | {s['measured_change']:+.1%} | "
                f"{s['predicted_change']:+.1%} | {s['error']:+.1%} | {'agrees' if s['agrees'] else 'differs'} |"
                for s in steps]
        out.append("")
    return "\n".join(out)


__all__ = ["CURVE_METRICS", "FLAT", "curve_key", "curve_load", "curves", "markdown", "pairs", "steps", "summary"]
