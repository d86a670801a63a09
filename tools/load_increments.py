"""How much latency load adds to a request, with and without speculation, in a published concurrency sweep.

    python tools/load_increments.py                     # every sweep in validation/rows.csv with E2E rows

A sweep here is one source's E2E latency rows (metric e2e_s) of a plain run and a speculative run at several
concurrencies, from one table (same source, locator, hardware, model, GPUs). For each concurrency C it prints the
measured E2E of both runs, their ratio (the published speedup), and what load added to each over the sweep's lowest
concurrency C0: d_plain = E2E_plain(C) - E2E_plain(C0), d_spec likewise, and d_spec / d_plain.

Why it matters: if load only lengthened the decode step, and the step were bound by reading the weights (a verify
pass reads at most every expert, as a plain step at high batch already does), speculation would shorten the added
time about as it shortens the rest: d_spec / d_plain near 1 / speedup(C0). A ratio near 1 says the added time is time
speculation does not shorten (other requests' prefill, per-token work), and then the speedup falls with load because
that time dilutes it: 'diluted' is E2E_plain(C) / (E2E_spec(C0) + d_plain), the speedup if load added the same time to
both runs. No acceptance length is needed: both follow from the published latencies alone.

x_plain and x_spec are each run's request throughput if C requests were in flight, C / E2E (Little's law). They
check how a table was run: under a client that sends at a fixed arrival rate, the requests in flight are that rate
x E2E, and a concurrency cap above them cannot change the latency. The AMD blog's client command shows
--request-rate 1, yet its ShareGPT table's latency nearly doubles (6.3 s to 11.9 s) between caps of 16 and 64 that
1 request/s (6 to 12 requests in flight) would leave unreached; so its tables are read as closed loops (no rate
limit), as `specroof serve` prices a concurrency, and C / E2E is then each run's throughput, rising smoothly with C
as a closed loop's does (random table: 0.06 to 1.46 requests/s plain, 0.12 to 1.82 with MTP).
"""

from __future__ import annotations

import argparse
import csv
import signal
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pair_errors import read_csv  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ROWS = ROOT / "validation" / "rows.csv"
COLUMNS = ("row_id", "source_id", "locator", "hardware", "model", "n_gpus", "method", "concurrency", "batch",
           "metric", "measured")


def sweeps(rows: list[dict[str, str]]) -> dict[tuple[str, ...], list[dict[str, float]]]:
    """Per table, the concurrencies with both a plain and a speculative E2E row, sorted by concurrency; a ValueError
    naming the E2E row whose latency or load is not a number."""
    runs: dict[tuple[str, ...], dict[float, dict[str, float]]] = defaultdict(dict)
    for r in rows:
        load = r["concurrency"] or r["batch"]
        if r["metric"] != "e2e_s" or not load:
            continue
        try:
            c, e2e = float(load), float(r["measured"])
        except ValueError:
            raise ValueError(f"row {r['row_id']}: measured {r['measured']!r} / concurrency {load!r} is not a "
                             "number") from None
        key = (r["source_id"], r["locator"], r["hardware"], r["model"], r["n_gpus"])
        runs[key].setdefault(c, {})["spec" if r["method"] else "plain"] = e2e
    out = {}
    for key, by_c in runs.items():
        pts = [{"c": c, **v} for c, v in sorted(by_c.items()) if {"plain", "spec"} <= v.keys()]
        if len(pts) >= 2:
            out[key] = _increments(pts)
    return out


def _increments(pts: list[dict[str, float]]) -> list[dict[str, float | None]]:
    """Add speedup, the added latencies over the first point, their ratio, the diluted speedup and each run's
    closed-loop request throughput (C / E2E, requests/s) to each point."""
    p0, s0 = pts[0]["plain"], pts[0]["spec"]
    for p in pts:
        dp, ds = p["plain"] - p0, p["spec"] - s0
        p.update(speedup=p["plain"] / p["spec"], d_plain=dp, d_spec=ds,
                 ratio=ds / dp if dp > 0 else None, diluted=p["plain"] / (s0 + dp),
                 x_plain=p["c"] / p["plain"], x_spec=p["c"] / p["spec"])
    return pts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=Path, default=ROWS, help="a rows CSV (default: validation/rows.csv)")
    a = ap.parse_args(argv)
    try:
        rows = read_csv(a.rows, COLUMNS)
        found = sweeps(rows)
    except (OSError, ValueError, csv.Error) as e:    # read_csv's errors name the file; a bad number names its row
        print(f"error: {e}" if str(a.rows) in str(e) else f"error: {a.rows}: {e}", file=sys.stderr)
        return 2
    if not found:
        print(f"error: {a.rows}: no table has plain and speculative e2e_s rows at two or more concurrencies",
              file=sys.stderr)
        return 2
    for (src, loc, hw, model, n), pts in found.items():
        print(f"{src}  {loc}  {model} on {n}x {hw}")
        print("concurrency  e2e_plain_s  e2e_spec_s  speedup  d_plain_s  d_spec_s  d_spec/d_plain  diluted  "
              "x_plain_rps  x_spec_rps")
        for p in pts:
            ratio = "-" if p["ratio"] is None else f"{p['ratio']:.2f}"
            print(f"{p['c']:g}  {p['plain']:.2f}  {p['spec']:.2f}  {p['speedup']:.2f}  {p['d_plain']:+.2f}  "
                  f"{p['d_spec']:+.2f}  {ratio}  {p['diluted']:.2f}  {p['x_plain']:.3f}  {p['x_spec']:.3f}")
        print()
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)   # piped into head: end quietly, as a shell tool does
    sys.exit(main())
