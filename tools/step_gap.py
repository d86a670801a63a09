"""The time a measured speedup implies per speculative step beyond the priced one, in ms, per deployment.

    python tools/step_gap.py                                   # every speculative speedup row with its acceptance
    python tools/step_gap.py --engine sglang --source specbundle-dashboard
    python tools/step_gap.py --rows my_rows.csv                # rows in validation/rows.csv's columns

A speedup row priced as one speculative step at a fixed batch (the step route of `specroof validate`) whose
acceptance length is given measures its step: speedup = tokens per step x base step / speculative step (Leviathan et
al. 2023, eq. 1 read per step), so the measured speculative step is tokens per step x base / measured speedup, with
the base step priced. The gap is that step less the priced one: what the measurement says the price leaves out (+)
or adds (-), on the assumption that the priced base step is right (check it where the source publishes its plain
rate). One line per source, target, TP, batch, depth k and tree width, each column the median over its rows
(datasets, drafters). A gap the same at every k and width of one deployment is a cost per step (host bookkeeping); one
that grows with k is per draft pass; one that grows with the width is the tree's.

What it shows (2026-12-08, shipped rows and calibration): SpecBundle's 370 SGLang EAGLE-3 rows on H200 imply gaps
(measured less priced step) of -1.35 to -1.0 ms for Llama-3.1-8B on one GPU at every k and width, -1.1 to +0.5 ms for
Llama-3.3-70B on four, -1.9 to +0.3 ms for Qwen3-235B-A22B on eight, -2.8 to -1.8 ms for Ling-flash-2.0 on eight,
-0.4 to +0.3 ms for Qwen3-30B-A3B on four and +1.7 to +2.5 ms for Qwen3-Next-80B on four: that source alone would
set SGLang's per-step bookkeeping nearer its sourced 0.5 ms (PR #11398) than the joint fit's 1.51 ms (README, "What
is calibrated"). On 2026-12-07, with the Qwen3-30B-A3B user reports fitted on (calibration/not_fitted.toml says why
they no longer are) and the bookkeeping at 2.12 ms, Llama-3.1-8B's gaps were -2.0 to -1.7 ms.
"""

from __future__ import annotations

import argparse
import signal
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from simulator.acceptance import tree_width  # noqa: E402
from simulator.errors import SpecroofError  # noqa: E402
from simulator.rows import load_rows  # noqa: E402
from simulator.speedup import predict  # noqa: E402
from simulator.validation import prepare_row  # noqa: E402

KEY = ("source_id", "model", "tp", "batch", "k", "width")
COLUMNS = ("rows", "base_ms", "priced_ms", "measured_ms", "gap_ms")


def row_gap(r: dict[str, str]) -> dict[str, Any] | None:
    """The row's priced base and speculative steps, its measured step and the gap (ms); None for a row this does not
    read (not a speedup, no acceptance length, not priced as one step at a fixed batch, or infeasible)."""
    if r["metric"] != "speedup" or not r.get("tau") or r.get("method") in ("", "none", None):
        return None
    p = prepare_row(r)
    if p.route != "step":
        return None
    res = predict(p.scenario, p.dep)
    if not res.feasible[0]:
        return None
    base, spec, tps = float(res.base_step_s[0]), float(res.spec_step_s[0]), float(res.tokens_per_step[0])
    measured = tps * base / float(r["measured"])
    s = p.scenario
    return {"source_id": r["source_id"], "model": r["model"], "tp": s.tp, "batch": s.batch[0], "k": s.k,
            "width": tree_width(s.k, s.tree or s.k + 1, s.branching, s.auto), "base_ms": base * 1e3,
            "priced_ms": spec * 1e3,
            "measured_ms": measured * 1e3, "gap_ms": (measured - spec) * 1e3}


def table(gaps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One line per KEY: the median of each column over its rows."""
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    for g in gaps:
        groups[tuple(g[c] for c in KEY)].append(g)
    return [{**dict(zip(KEY, key)), "rows": len(gs),
             **{c: statistics.median(g[c] for g in gs) for c in COLUMNS[1:]}}
            for key, gs in sorted(groups.items(), key=lambda kv: tuple(str(x) for x in kv[0]))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", help="measurements CSV (default: validation/rows.csv)")
    ap.add_argument("--engine", help="only rows of this engine (its profile name, e.g. sglang)")
    ap.add_argument("--source", help="only rows of this source_id")
    a = ap.parse_args(argv)
    try:
        rows = [r for r in load_rows(a.rows) if (a.engine is None or r["engine"] == a.engine)
                and (a.source is None or r["source_id"] == a.source)]
        gaps = [g for g in (row_gap(r) for r in rows) if g is not None]
    except (SpecroofError, OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if not gaps:
        print(f"error: no speculative speedup row with its acceptance, priced as one step, among {len(rows)} "
              "rows read (check --engine / --source)", file=sys.stderr)
        return 2
    print(" | ".join((*KEY, *COLUMNS)))
    for t in table(gaps):
        print(" | ".join([*(str(t[c]) for c in KEY), str(t["rows"]), *(f"{t[c]:+.2f}" if c == "gap_ms" else
                                                                       f"{t[c]:.2f}" for c in COLUMNS[1:])]))
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
