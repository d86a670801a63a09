"""Flat rows of a result's points for pandas, one row per point (the results' `to_dataframe`, the serving sweep's
CSV): each point of `to_dict()` with its nested fields spread into columns. Works on the JSON-ready dicts only, so
every table carries the same nulls (an infeasible mode, a point that does not fit) as the JSON does."""

from __future__ import annotations

from typing import Any

POINT_FIELDS = ("concurrency", "feasible", "message", "base_feasible", "base_message")
RATIOS = ("e2e_speedup", "tpot_speedup", "throughput_ratio")


def serve_row(pt: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    """One point of `ServeResult.to_dict()` as a flat row: its feasibility, each mode's `fields` as spec_* and
    base_* (None where that mode does not fit), the rate where the workload gives one, and the three ratios."""
    row = {f: pt[f] for f in POINT_FIELDS}
    if "rate" in pt:
        row["rate"] = pt["rate"]
    for name in ("spec", "base"):
        for f in fields:
            v = pt[name][f] if pt[name] is not None else None
            row[f"{name}_{f}"] = v if v is None or isinstance(v, str) else float(v)
    row.update({f: pt[f] for f in RATIOS})
    return row


def step_row(pt: dict[str, Any]) -> dict[str, Any]:
    """One point of `StepResult.to_dict()` as a flat row: the time per op family as <family>_s (None where the
    point is infeasible)."""
    row = {k: v for k, v in pt.items() if k != "breakdown_s"}
    for f, v in (pt["breakdown_s"] or {}).items():
        row[f"{f}_s"] = v
    return row


def frame(rows: list[dict[str, Any]]):
    """pandas DataFrame of the rows (pandas is an optional extra: imported here only)."""
    import pandas as pd
    return pd.DataFrame(rows)
