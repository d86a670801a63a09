"""Fit the shipped calibration (calibration/fit.toml) and measure it held out (validation/ACCURACY.md).

    python tools/calibrate_shipped.py            # fit on the headline rows and print every parameter's verdict
    python tools/calibrate_shipped.py --write    # also write calibration/fit.toml
    python tools/calibrate_shipped.py --cv       # also run leave-one-source-out and write validation/ACCURACY.md

What is fitted (simulator.calibration.SHIPPED_PARAMS), jointly on every headline row (validation.row_scope: current
engine builds; speculative rows only with a published acceptance length), each source weighted 1/sqrt(its rows):
  per engine        host work per step and per sequence, speculative bookkeeping per step, host work per draft pass
  per architecture  the per-kernel cost of a graph-replayed kernel (hopper, blackwell, cdna3, ...)
Every fit starts from the sourced priors in engine_profiles/ and hardware_specs/. A parameter the data do not determine
(at a bound, 1-sigma above its value, or no row depends on it) keeps its sourced value and is listed as a finding.
"""

import argparse
import datetime
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from simulator.calibration import PARAMS, FitResult, usable  # noqa: E402
from simulator.cross_validation import crossval, fit_headline, fit_pool  # noqa: E402
from simulator.files import write_text  # noqa: E402
from simulator.fitted import FIT_FILE  # noqa: E402
from simulator.validation import load_rows  # noqa: E402


def fit_toml(res: FitResult, n_sources: int) -> str:
    """calibration/fit.toml: every determined parameter with its 1-sigma and the fit it came from."""
    day = datetime.date.today().isoformat()
    out = [f"# The shipped calibration, written by tools/calibrate_shipped.py on {day}: fitted jointly on",
           f"# {len(res.row_ids)} headline rows of {n_sources} sources in validation/rows.csv (bounded least squares",
           "# on log(predicted / measured), each source weighted 1/sqrt(its rows); see simulator/calibration.py).",
           "# Loading a bundled profile or device by name applies these over its sourced value, which stays its",
           "# prior. Held-out accuracy: validation/ACCURACY.md. Parameters the data did not determine are not here",
           "# (they keep their sources).", ""]
    for kind in ("engine", "device"):
        groups = sorted({p.group for p in res.params if p.status == "fitted" and PARAMS[p.name].scope == kind})
        for g in groups:
            out.append(f"[{kind}.{g}]")
            for p in res.params:
                if p.group == g and p.status == "fitted":
                    note = (f"{PARAMS[p.name].mechanism}; bounds {p.lo:g}..{p.hi:g}; RMS log residual of the fit "
                            f"{res.rms_before:.3f} -> {res.rms_after:.3f}").replace('"', "'")
                    out.append(f'{p.name} = {{ value = {p.value!r}, stderr = {p.stderr!r}, note = "{note}" }}')
            out.append("")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--cv", action="store_true")
    a = ap.parse_args()
    prepared, _ = usable(load_rows())
    pool = fit_pool(prepared)
    res = fit_headline(pool)
    n_src = len({p.row["source_id"] for p in pool})
    print(f"fit on {len(pool)} headline rows of {n_src} sources: RMS log residual {res.rms_before:.3f} -> "
          f"{res.rms_after:.3f} ({res.message})")
    for p in res.params:
        print("  " + p.line())
    if a.write:
        path = ROOT / "calibration" / FIT_FILE
        write_text(path, fit_toml(res, n_src))
        print(f"wrote {path}")
    if a.cv:
        cv = crossval(progress=lambda m: print(m, file=sys.stderr))
        md = ["# Held-out accuracy (leave-one-source-out)", "",
              "Reproduce: `specroof validate --cv source` (or `python tools/calibrate_shipped.py --cv`).", "",
              cv.report.markdown(), "## Calibrated parameters", "", cv.params_table()]
        write_text(ROOT / "validation" / "ACCURACY.md", "\n".join(md))
        print("wrote validation/ACCURACY.md")


if __name__ == "__main__":
    main()
