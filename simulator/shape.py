"""Curve shape: how a speedup changes between two loads of one configuration, predicted against measured.

The product is the speedup curve over batch (where it falls, where it crosses 1), so the report scores its shape
apart from its level. Two ratio rows (speedup, e2e_speedup) of one source that differ only in their batch or
concurrency (and the acceptance length measured at each) form a curve; each step along it, from a load lo to the
next larger load hi, compares the predicted change with the measured one:

    shape error = (predicted_hi / predicted_lo) / (measured_hi / measured_lo) - 1

A speedup at a fixed k is tau x base step / speculative step, and neither step depends on the acceptance length,
so an acceptance length that is the same at both loads cancels from both changes: the 'acceptance unknown' rows,
whose level mixes the acceptance guess with the cost model, score the cost model's shape alone. The change's
direction agrees when both rise, both fall, or both move less than FLAT (5 %).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

# Columns that may differ between the points of one curve: the load, what was measured there, and bookkeeping
# (one campaign's runs at different loads can come from different fixture files and dated builds of the same
# harness, e.g. InferenceX; a launch script may size the running-request cap to the load). Everything else (source
# and its label, layout, model, formats, method, k, tree, lengths, context, scheduler mode) must match.
_FREE = frozenset({"row_id", "published_row", "locator", "source_url", "batch", "concurrency", "tau", "tau_k",
                   "measured", "notes", "engine_date", "engine_version", "n_gpus", "spec_max_running"})
CURVE_METRICS = ("speedup", "e2e_speedup")
FLAT = 0.05


def curve_key(r: dict[str, str]) -> str:
    """The configuration a ratio row's curve is keyed by ('' when the row is no point of a curve: not a speedup,
    or no batch or concurrency)."""
    if r.get("metric") not in CURVE_METRICS or not curve_load(r):
        return ""
    return "|".join(f"{k}={(v or '').strip()}" for k, v in sorted(r.items()) if k not in _FREE)


def curve_load(r: dict[str, str]) -> float | None:
    """The row's load: its batch, else its concurrency (None when neither is given)."""
    for k in ("batch", "concurrency"):
        v = (r.get(k) or "").strip()
        if v:
            return float(v)
    return None


def pairs(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Consecutive loads of every curve among predicted report records (each with 'curve' and 'load'): one dict per
    step with its rows, loads, measured and predicted changes (hi / lo - 1), shape error and direction."""
    curves: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in records:
        if r.get("curve") and r.get("predicted") is not None:
            curves.setdefault((r["scope"], r["curve"]), []).append(r)
    out = []
    for (scope, _), pts in sorted(curves.items(), key=lambda kv: kv[1][0]["row_id"]):
        pts = sorted(pts, key=lambda r: r["load"])
        for lo, hi in zip(pts, pts[1:]):
            if hi["load"] == lo["load"]:
                continue
            dm, dp = hi["measured"] / lo["measured"] - 1.0, hi["predicted"] / lo["predicted"] - 1.0
            out.append({"scope": scope, "source_id": lo["source_id"], "rows": f"{lo['row_id']}-{hi['row_id']}",
                        "loads": f"{lo['load']:g}->{hi['load']:g}", "measured_change": dm, "predicted_change": dp,
                        "error": (1.0 + dp) / (1.0 + dm) - 1.0, "agrees": _direction(dm) == _direction(dp)})
    return out


def _direction(change: float) -> int:
    return 0 if abs(change) < FLAT else int(math.copysign(1, change))


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
    e = np.array([s["error"] for s in steps])
    return {"n": int(e.size), "median_abs_error": float(np.median(np.abs(e))),
            "within_20pct": float(np.mean(np.abs(e) <= 0.2)), "bias": float(np.median(e)),
            "agrees": float(np.mean([s["agrees"] for s in steps]))}


def markdown(steps: Sequence[dict[str, Any]]) -> str:
    """The shape tables (per scope, by source) and every step, as markdown."""
    out = []
    for sc, by in summary(steps).items():
        out += [f"### curve shape: {sc} speedup rows", "",
                "| source | steps | median abs shape error | within 20% | bias | direction agrees |",
                "|---|---|---|---|---|---|"]
        out += [f"| {src} | {v['n']} | {v['median_abs_error']:.1%} | {v['within_20pct']:.0%} | {v['bias']:+.1%} | "
                f"{v['agrees']:.0%} |" for src, v in by.items()]
        out.append("")
    if steps:
        out += ["| rows | source | scope | load | measured change | predicted change | shape error | direction |",
                "|---|---|---|---|---|---|---|---|"]
        out += [f"| {s['rows']} | {s['source_id']} | {s['scope']} | {s['loads']} | {s['measured_change']:+.1%} | "
                f"{s['predicted_change']:+.1%} | {s['error']:+.1%} | {'agrees' if s['agrees'] else 'differs'} |"
                for s in steps]
        out.append("")
    return "\n".join(out)


__all__ = ["CURVE_METRICS", "FLAT", "curve_key", "curve_load", "markdown", "pairs", "summary"]
