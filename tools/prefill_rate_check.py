"""Do the disaggregated serving rows miss where specroof's prefill instance keeps up, and by how much would it have
to be slower to set their rate?

    python tools/prefill_rate_check.py            # every disaggregated serving row of validation/rows.csv (~1 min)
    python tools/prefill_rate_check.py --rows V418,V420,V421

For each disaggregated row priced through `serve` with one busy decode instance, it says whether the priced prefill
instance sets the rate there ('fed': requests queue for prefill, Phase.prefill_queue > 0) and the row's error
(predicted / measured - 1). For a throughput row (output tokens/s per decode GPU) it also prints

    x = measured request rate / priced prefill rate mu
      = (measured / predicted) x (C / E2E predicted) / mu     (C in flight, E2E with any wait for a slot)

A closed loop cannot complete requests faster than its prefill instance prefills them (serving.py), so x <= 1 if the
priced mu were right and the run were prefill-bound; a row the model leaves unfed but whose published TTFT is
seconds long would need a prefill instance running at x times the priced rate to be the queue it looks like. Its
TTFT rows at one request in flight, where no queue can form, say how much of the miss is the single request's path.
"""

from __future__ import annotations

import argparse
import csv
import signal
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from simulator.errors import SpecroofError  # noqa: E402
from simulator.serving import serve  # noqa: E402
from simulator.validation import load_rows, predict_prepared, prepare_row  # noqa: E402

METRICS = ("tokens_per_s_per_gpu", "ttft_s", "tpot_s")


def check(row: dict[str, str]) -> dict[str, object] | None:
    """One row's {row, metric, isl, concurrency (of its decode instance), fed, error, x}; None when it is not a
    disaggregated serving row with one busy decode instance, or cannot be simulated."""
    if "disaggregated:" not in row["notes"] or row["metric"] not in METRICS:
        return None
    try:
        p = prepare_row(row)
        if p.workload is None or len(p.workload.concurrency) != 1:
            return None
        predicted = predict_prepared(p)
    except SpecroofError:
        return None
    res = serve(p.scenario, p.workload, dep=p.dep)
    ph = res.spec if p.scenario.method else res.base
    error = predicted / float(row["measured"]) - 1.0
    x = None
    if row["metric"] == "tokens_per_s_per_gpu" and np.isfinite(res.prefill_rps):
        x = float(row["measured"]) / predicted * float(res.concurrency[0]) / float(ph.e2e_s[0]) / res.prefill_rps
    return {"row": row["row_id"], "metric": row["metric"], "isl": row["isl"], "concurrency": int(res.concurrency[0]),
            "fed": bool(ph.prefill_queue[0] > 0), "error": error, "x": x}


def summary(checks: list[dict[str, object]]) -> list[str]:
    """Median error per (metric, fed or not), and the median x of unfed throughput rows per prompt length."""
    err: dict[tuple[str, bool], list[float]] = defaultdict(list)
    xs: dict[str, list[float]] = defaultdict(list)
    for c in checks:
        err[(str(c["metric"]), bool(c["fed"]))].append(float(c["error"]))     # type: ignore[arg-type]
        if c["x"] is not None and not c["fed"]:
            xs[str(c["isl"])].append(float(c["x"]))                           # type: ignore[arg-type]
    out = [f"{m:22s} {'fed' if f else 'unfed':5s} rows {len(v):4d}  median error {np.median(v):+.1%}"
           for (m, f), v in sorted(err.items())]
    out += [f"unfed throughput rows, isl {isl:>5s}: rows {len(v):3d}  x median {np.median(v):.2f} "
            f"(range {min(v):.2f}-{max(v):.2f})" for isl, v in sorted(xs.items(), key=lambda t: int(t[0]))]
    lone = [1.0 / (1.0 + float(c["error"])) for c in checks                      # type: ignore[arg-type]
            if c["metric"] == "ttft_s" and c["concurrency"] == 1]
    if lone:                                  # one request in flight: no queue of any kind can form
        out.append(f"ttft at one request in flight: rows {len(lone)}  measured / priced {min(lone):.1f}-"
                   f"{max(lone):.1f}x")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", help="comma-separated row ids (default: every row)")
    a = ap.parse_args(argv)
    want = set(a.rows.split(",")) if a.rows else None
    checks = [c for r in load_rows() if want is None or r["row_id"] in want if (c := check(r)) is not None]
    w = csv.writer(sys.stdout)
    w.writerow(["row", "metric", "isl", "concurrency", "fed", "error", "x"])
    for c in checks:
        w.writerow([c["row"], c["metric"], c["isl"], c["concurrency"], c["fed"], f"{c['error']:+.3f}",
                    "" if c["x"] is None else f"{c['x']:.3f}"])
    for line in summary(checks):
        print(line)
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
