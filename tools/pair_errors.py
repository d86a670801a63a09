"""Where a speculative-speedup error comes from: the plain run, the speculative run, or both.

    specroof validate --cv source --report /tmp/cv      # held-out predictions (minutes)
    python tools/pair_errors.py /tmp/cv.csv             # one line per matched pair

A derived speedup row of InferenceX is the ratio of two runs' median tokens/s/user at one concurrency (the notes name
the pair: "matched pair pairNN"). Both runs have their own tokens/s/user rows. For each pair this prints the
predicted / measured ratio of the plain run, of the speculative run, and their quotient (close to the speedup row's
own ratio, which is priced on its own and printed beside it): a quotient far from 1 with a plain ratio near 1 puts the
error in the speculative run. The report CSV may come from `specroof validate` (in-sample) or `--cv source` (held
out); say which when quoting it.
"""

from __future__ import annotations

import argparse
import csv
import re
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ROWS = ROOT / "validation" / "rows.csv"
PAIR = re.compile(r"matched pair (pair\d+)")
ROW_COLUMNS = ("row_id", "source_id", "method", "metric", "notes", "hardware", "engine", "concurrency", "isl", "osl")
REPORT_COLUMNS = ("row_id", "error")


def pairs(rows: list[dict[str, str]], report: dict[str, dict[str, str]]) -> list[dict[str, object]]:
    """Matched pairs with both runs' tokens/s/user rows predicted: plain and speculative predicted / measured."""
    runs: dict[tuple[str, str], dict[str, float]] = {}
    meta: dict[tuple[str, str], dict[str, str]] = {}
    for r in rows:
        m = PAIR.search(r["notes"])
        rep = report.get(r["row_id"])
        if not m or not rep or not rep.get("error"):
            continue
        key = (r["source_id"], m.group(1))
        if r["metric"] == "speedup":
            runs.setdefault(key, {})["speedup"] = 1.0 + float(rep["error"])
            continue
        if r["metric"] != "tokens_per_s_per_user":
            continue
        runs.setdefault(key, {})["spec" if r["method"] else "plain"] = 1.0 + float(rep["error"])
        meta.setdefault(key, {"rows": "", **{c: r[c] for c in ("hardware", "engine", "concurrency", "isl", "osl")}})
        meta[key]["rows"] += ("," if meta[key]["rows"] else "") + r["row_id"]
        if r["method"]:
            meta[key]["method"] = r["method"]
    out = []
    for key, v in runs.items():
        if {"plain", "spec"} <= v.keys():
            out.append({"source": key[0], "pair": key[1], **meta[key], "plain": v["plain"], "spec": v["spec"],
                        "quotient": v["spec"] / v["plain"], "speedup": v.get("speedup")})
    return sorted(out, key=lambda p: (p["source"], p["hardware"], p["engine"], _num(p["isl"]), _num(p["osl"]),
                                      _num(p["concurrency"])))


def _num(v: object) -> float:
    """A sort key for a numeric cell that may be empty or text (those sort first)."""
    try:
        return float(v)
    except (TypeError, ValueError):
        return -1.0


def read_csv(path: Path, need: tuple[str, ...]) -> list[dict[str, str]]:
    """A CSV's rows; a ValueError naming the file and the columns it lacks (a validate report's when `need` has an
    error column, else a rows CSV's). tools/load_increments.py reads with it too."""
    kind = "validate report" if "error" in need else "rows"
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    missing = [c for c in need if rows and c not in rows[0]]
    if missing or not rows:
        raise ValueError(f"{path}: " + (f"no column {', '.join(missing)}" if rows else "no rows")
                         + f" (a {kind} CSV has {', '.join(need)})")
    return rows


def read_report(argv: list[str] | None, description: str, row_columns: tuple[str, ...],
                compute: Callable[[list[dict[str, str]], dict[str, dict[str, str]]], Any],
                options: Callable[[argparse.ArgumentParser], object] | None = None
                ) -> tuple[argparse.Namespace, Any] | None:
    """The command line of a tool that reads a validate report beside the rows CSV (tools/load_bias.py and
    tools/heldout_bands.py too; `options` adds a tool's own flags): (args, compute(rows, report by row id)), or None
    after one line on stderr naming the file that could not be read or whose rows `compute` refused (a ValueError: a
    non-numeric error, an unknown model)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("report", type=Path, help="a validate report CSV (--report PREFIX writes PREFIX.csv)")
    ap.add_argument("--rows", type=Path, default=ROWS, help="the rows CSV the report was made from")
    if options:
        options(ap)
    a = ap.parse_args(argv)
    try:
        rows = read_csv(a.rows, row_columns)
        report = {r["row_id"]: r for r in read_csv(a.report, REPORT_COLUMNS)}
    except (OSError, ValueError, csv.Error) as e:       # a missing or bad file: one line naming it
        print(f"error: {e}", file=sys.stderr)
        return None
    try:
        return a, compute(rows, report)
    except ValueError as e:
        print(f"error: {a.report}: {e}", file=sys.stderr)
        return None


def main(argv: list[str] | None = None) -> int:
    got = read_report(argv, __doc__.splitlines()[0], ROW_COLUMNS, pairs)
    if got is None:
        return 2
    a, found = got
    if not found:
        print(f"error: {a.report}: no matched pair has both runs' tokens_per_s_per_user rows predicted",
              file=sys.stderr)
        return 2
    print("source  pair  hardware  engine  method  isl/osl  concurrency  plain  spec  spec/plain  speedup  rows")
    for p in found:
        sp = "-" if p["speedup"] is None else f"{p['speedup']:.3f}"
        print(f"{p['source']}  {p['pair']}  {p['hardware']}  {p['engine']}  {p.get('method', '')}  "
              f"{p['isl']}/{p['osl']}  {p['concurrency']}  {p['plain']:.3f}  {p['spec']:.3f}  "
              f"{p['quotient']:.3f}  {sp}  {p['rows']}")
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)   # piped into head: end quietly, as a shell tool does
    sys.exit(main())
