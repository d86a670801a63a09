"""Speculative-speedup error against load, dense and mixture-of-experts targets apart.

    specroof validate --cv source --report /tmp/cv      # held-out predictions (minutes)
    python tools/load_bias.py /tmp/cv.csv               # one line per target class and load band

For every speedup row the report predicted (metric speedup, e2e_speedup or throughput_ratio), the load is the row's
concurrency (its batch where it has none) and the target is MoE when its model routes tokens to experts
(`ModelShape.is_moe`).
Rows are grouped by class and by load band (1-4, 5-12, 13-24, 25-48, 49-96, 97 and more); each line gives the rows,
the median signed error (predicted / measured - 1: positive is a speedup priced higher than measured), the share
within 20 %, and the sources and methods. A second table does the same for the plain runs' tokens/s/user rows: where
those are priced at a load and the speedups are not, the miss is in the speculative run. A bias that grows with load
where the low band is unbiased is a curve shape that is missed (the rooflines price speculation as cheaper under
load than it is), not a scatter. The bundled hazard `moe-speculation-under-load-overpredicted`
(hazards/known_hazards.toml) quotes the MoE lines of the held-out report. The report CSV may come from `specroof
validate` (in-sample) or `--cv source` (held out); say which when quoting it.
"""

from __future__ import annotations

import functools
import signal
import statistics
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pair_errors import read_report  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ROWS = ROOT / "validation" / "rows.csv"
ROW_COLUMNS = ("row_id", "source_id", "method", "metric", "model", "batch", "concurrency")
BANDS: tuple[tuple[int, int], ...] = ((1, 4), (5, 12), (13, 24), (25, 48), (49, 96), (97, 10**9))


def row_load(r: dict[str, str]) -> int:
    """Requests in flight: the concurrency, else the batch; 0 when the row states neither as a number."""
    for c in ("concurrency", "batch"):
        try:
            return int(float(r[c]))
        except (TypeError, ValueError):
            continue
    return 0


def _band(i: int) -> str:
    """The label of band i: '13-24', or '97+' for the last."""
    lo, hi = BANDS[i]
    return f"{lo}+" if i == len(BANDS) - 1 else f"{lo}-{hi}"


def _kind(r: dict[str, str]) -> str | None:
    """'speedup' for a speedup row (per-token or end-to-end, as the validate report counts them), 'plain' for a
    plain run's tokens/s/user row, else None."""
    if r["metric"] in ("speedup", "e2e_speedup", "throughput_ratio"):
        return "speedup"
    return "plain" if r["metric"] == "tokens_per_s_per_user" and not r["method"] else None


def bias(rows: list[dict[str, str]], report: dict[str, dict[str, str]], is_moe: Callable[[str], bool],
         kind: str = "speedup") -> list[dict[str, object]]:
    """One entry per (class, band) with predicted rows of `kind` ('speedup', or 'plain': the plain runs'
    tokens/s/user, the check that the loads themselves are priced): rows, median signed error, share within 20 %,
    sources, methods. `is_moe(model)` says whether a row's model is a mixture of experts. A non-numeric error raises
    ValueError naming the row."""
    groups: dict[tuple[str, int], list[tuple[float, str, str]]] = defaultdict(list)
    for r in rows:
        rep = report.get(r["row_id"])
        load = row_load(r)
        if _kind(r) != kind or not rep or not rep.get("error") or load < 1:
            continue
        try:
            e = float(rep["error"])
        except ValueError:
            raise ValueError(f"row {r['row_id']}: error {rep['error']!r} is not a number") from None
        i = next(j for j, b in enumerate(BANDS) if b[0] <= load <= b[1])
        groups[("moe" if is_moe(r["model"]) else "dense", i)].append((e, r["source_id"], r["method"]))
    out = []
    for (cls, i), g in sorted(groups.items()):
        errs = [x[0] for x in g]
        out.append({"class": cls, "band": _band(i), "rows": len(g), "median": statistics.median(errs),
                    "within20": sum(abs(x) <= 0.2 for x in errs) / len(errs),
                    "sources": sorted({x[1] for x in g}), "methods": sorted({x[2] for x in g})})
    return out


@functools.cache
def model_is_moe(model: str) -> bool:
    """Whether the bundled model (or config path) routes tokens to experts (an unknown one: SpecroofError, a
    ValueError, naming it)."""
    from simulator.model import load_model
    return load_model(model).is_moe


def main(argv: list[str] | None = None) -> int:
    """Both tables for the report named on the command line; 2 after one line on stderr for bad input."""
    got = read_report(argv, __doc__.splitlines()[0], ROW_COLUMNS,
                      lambda rows, rep: {k: bias(rows, rep, model_is_moe, k) for k in ("speedup", "plain")})
    if got is None:
        return 2
    a, found = got
    if not found["speedup"]:
        print(f"error: {a.report}: no speedup row with a load was predicted", file=sys.stderr)
        return 2
    for k, title in (("speedup", "speedup rows"), ("plain", "plain runs' tokens/s/user rows")):
        print(f"{title}\nclass  load  rows  median_error  within_20%  sources  methods")
        for b in found[k]:
            print(f"{b['class']}  {b['band']}  {b['rows']}  {b['median']:+.1%}  {b['within20']:.0%}  "
                  f"{','.join(b['sources'])}  {','.join(b['methods']) or '-'}")
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)   # piped into head: end quietly, as a shell tool does
    sys.exit(main())
