"""The held-out error bands `specroof curve` prints, from a cross-validation report (simulator/heldout.py).

    specroof validate --cv source --report /tmp/cv      # held-out predictions (minutes)
    python tools/heldout_bands.py /tmp/cv.csv           # the bands, one line per regime
    python tools/heldout_bands.py /tmp/cv.csv --write   # and write calibration/heldout.toml

Every speedup row the report predicted outside the legacy-engine scope counts: its ratio measured / predicted, its
target class (MoE when its model routes tokens to experts), its load (the concurrency, else the batch) and whether it
stated an acceptance length (scope 'headline': given; 'acceptance unknown': the method's default was assumed).
`--write` refuses a report that is not held out (its PREFIX.md must say 'leave-one-source-out'): an in-sample band
would understate the error on a new deployment.
"""

from __future__ import annotations

import argparse
import math
import signal
import sys
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from load_bias import model_is_moe, row_load  # noqa: E402
from pair_errors import read_report  # noqa: E402

from simulator.files import write_text  # noqa: E402
from simulator.heldout import BANDS_FILE, Band, build_bands, to_toml  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ROW_COLUMNS = ("row_id", "source_id", "method", "metric", "model", "batch", "concurrency")
SCOPES = {"headline": True, "acceptance unknown": False}
HELD_OUT = "leave-one-source-out"


def records(rows: list[dict[str, str]], report: dict[str, dict[str, str]]) -> list[tuple[bool, float, bool, float,
                                                                                       str]]:
    """(moe, load, acceptance given, measured / predicted, source) of every predicted speedup row outside the legacy
    scope; a non-numeric error is a ValueError naming the row."""
    out = []
    for r in rows:
        rep = report.get(r["row_id"])
        if not rep or rep.get("kind") != "speedup" or rep.get("scope") not in SCOPES or not rep.get("error"):
            continue
        load = row_load(r)
        if load < 1:
            continue
        try:
            e = float(rep["error"])
        except ValueError:
            e = math.nan
        if not (math.isfinite(e) and e > -1.0):
            raise ValueError(f"row {r['row_id']}: error {rep['error']!r} is not a finite number above -1")
        ratio = 1.0 / (1.0 + e)
        out.append((model_is_moe(r["model"]), float(load), SCOPES[rep["scope"]], ratio, r["source_id"]))
    return out


def _options(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--write", action="store_true", help="write the bands file (a held-out report only)")
    ap.add_argument("--out", type=Path, default=ROOT / "calibration" / BANDS_FILE, help="the bands file to write")


def _line(b: Band) -> str:
    return (f"{b.targets:<6} {b.batch:<5} {b.acceptance:<8} {b.rows:>4} {b.sources:>7}  {b.lo:.3f}  {b.mid:.3f}  "
            f"{b.hi:.3f}  {b.tau:.3f}  {b.sigma:.3f}  {','.join(map(str, b.source_rows))}")


def main(argv: list[str] | None = None) -> int:
    """Print the bands of the report named on the command line (and write them with --write); 2 after one line on
    stderr for bad input."""
    got = read_report(argv, __doc__.splitlines()[0], ROW_COLUMNS, lambda rows, rep: build_bands(records(rows, rep)),
                      _options)
    if got is None:
        return 2
    a, bands = got
    if not bands:
        print(f"error: {a.report}: no regime holds enough held-out speedup rows", file=sys.stderr)
        return 2
    print("targets batch acceptance rows sources  lo     mid    hi     tau    sigma  rows/source  (measured / "
          "predicted; 80 % prediction interval for a row of a new source)")
    for b in bands:
        print(_line(b))
    if a.write:
        md = a.report.with_suffix(".md")
        if not md.is_file() or HELD_OUT not in md.read_text(encoding="utf-8").split("\n", 1)[0]:
            print(f"error: {md}: not a held-out report (its first line must say '{HELD_OUT}'); run specroof "
                  "validate --cv source --report PREFIX", file=sys.stderr)
            return 2
        header = (f"Held-out error bands, written by tools/heldout_bands.py on {date.today().isoformat()} from a\n"
                  "leave-one-source-out report (specroof validate --cv source). Each band: the 80 % prediction\n"
                  "interval (lo, hi) of measured / predicted for one published speedup row of a new source in one\n"
                  "regime, about the mean of its sources (mid), from a random-effects model of log(measured /\n"
                  "predicted) with tau between sources and sigma within one, by moments, Welch-Satterthwaite\n"
                  "degrees of freedom (simulator/heldout.py); source_rows: the rows of each source. How wrong\n"
                  "comparable predictions were, not a bound; validation/BLIND_TEST.md counts how many rows nobody\n"
                  "fitted fall inside.")
        print(f"wrote {write_text(a.out, to_toml(bands, header), 'bands file')}")
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
