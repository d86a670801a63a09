"""Fit the shipped calibration (calibration/fit.toml) and measure it held out (validation/ACCURACY.md).

    python tools/calibrate_shipped.py            # fit on the headline rows and print every parameter's verdict
    python tools/calibrate_shipped.py --write    # also write calibration/fit.toml
    python tools/calibrate_shipped.py --cv       # also run leave-one-source-out and write validation/ACCURACY.md
    python tools/calibrate_shipped.py --cv --report R   # and R.md / R.csv, the report `specroof validate --cv source
                                                 # --report R` writes (tools/heldout_bands.py R.csv reads it)
    python tools/calibrate_shipped.py --cv --fold-min-sources 1   # experiment: each fold fits what one source sets
                                                 # (prints the held-out summary and fold values; writes nothing)
    python tools/calibrate_shipped.py --hold spec_bookkeeping_s  # experiment: that parameter keeps its sourced
                                                 # prior in every group (repeatable; with --cv prints, writes nothing)

What is fitted (simulator.calibration.SHIPPED_PARAMS), jointly on every headline row (validation.row_scope: current
engine builds; speculative rows only with a published acceptance length) of every source that calibration/
not_fitted.toml does not list (those are validated, not fitted on), each source weighted 1/sqrt(its rows):
  per engine        host work per step and per sequence, speculative bookkeeping per step (not the host work per draft
                    pass nor SGLang's FlashInfer path: both measured, engine_profiles/sglang.toml)
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

from simulator.calibration import FITTED, PARAMS, SHIPPED_PARAMS, FitResult, usable  # noqa: E402
from simulator.cross_validation import CrossValidation, crossval, fit_headline, fit_pool  # noqa: E402
from simulator.errors import OutputError  # noqa: E402
from simulator.files import check_output, write_text  # noqa: E402
from simulator.fitted import FIT_FILE, NOT_FITTED_FILE, not_fitted  # noqa: E402
from simulator.validation import load_rows  # noqa: E402


def fit_toml(res: FitResult, n_sources: int) -> str:
    """calibration/fit.toml: every determined parameter with its 1-sigma and the fit it came from."""
    day = datetime.date.today().isoformat()
    out = [f"# The shipped calibration, written by tools/calibrate_shipped.py on {day}: fitted jointly on",
           f"# {len(res.row_ids)} headline rows of {n_sources} sources in validation/rows.csv (bounded least squares",
           "# on log(predicted / measured), each source weighted 1/sqrt(its rows); see simulator/calibration.py).",
           "# Loading a bundled profile or device by name applies these over its sourced value, which stays its",
           "# prior. Held-out accuracy: validation/ACCURACY.md. Parameters the data did not determine are not here",
           "# (they keep their sources)."]
    skipped = sorted(not_fitted())
    if skipped:
        out.append(f"# Sources validated but not fitted on (calibration/{NOT_FITTED_FILE}): {', '.join(skipped)}.")
    out.append("")
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


def not_fitted_lines() -> list[str]:
    """ACCURACY.md's note on the sources it reports but no fit used (calibration/not_fitted.toml)."""
    skipped = sorted(not_fitted())
    if not skipped:
        return []
    return [f"Validated, not fitted on (`calibration/{NOT_FITTED_FILE}`, each with its reason): "
            + ", ".join(skipped) + ". Their rows are predicted with the fit on all the other sources.", ""]


def experiment(cv: CrossValidation) -> None:
    """Print what a fold rule other than the shipped one gives: the held-out headline tables and each fold's
    values of the parameters the full fit ships (ACCURACY.md stays the shipped rule's)."""
    for kind in ("speedup", "step"):
        print(cv.report.summary_table("headline", kind))
    print(cv.params_table())
    shipped = [(p.group, p.name) for p in cv.full.params if p.status == FITTED]
    for src, f in cv.folds.items():
        vals = {(p.group, p.name): p for p in f.params}
        print(f"fold without {src}: " + ", ".join(f"{g}.{n} = {vals[g, n].value:.3g} ({vals[g, n].status})"
                                               for g, n in shipped if (g, n) in vals))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--cv", action="store_true")
    ap.add_argument("--report", metavar="PATH", help="with --cv: also write PATH.md and PATH.csv, the held-out report "
                    "of `specroof validate --cv source --report PATH`")
    ap.add_argument("--fold-min-sources", type=int, default=2,
                    help="sources a parameter needs to be fitted in a fold (shipped rule 2; 1 is an experiment)")
    ap.add_argument("--hold", action="append", default=[], choices=SHIPPED_PARAMS,
                    help="keep this parameter at its sourced prior (an experiment; not with --write)")
    a = ap.parse_args()
    if a.hold and a.write:
        ap.error("--hold is an experiment: the shipped calibration fits every parameter of SHIPPED_PARAMS")
    params = tuple(p for p in SHIPPED_PARAMS if p not in a.hold)
    if a.fold_min_sources < 1:
        ap.error(f"--fold-min-sources {a.fold_min_sources}: a fold fits a parameter at least 1 source constrains "
                 "(allowed: an integer >= 1; the shipped rule is 2)")
    if a.report and not a.cv:
        ap.error("--report writes the held-out report: use it with --cv")
    if a.report and (a.hold or a.fold_min_sources != 2):
        ap.error("--report writes the shipped rule's held-out report: not with --hold or --fold-min-sources")
    if a.report:                 # before a cross-validation of half an hour, not after it (found by review)
        try:
            for ext in (".md", ".csv"):
                check_output(f"{a.report}{ext}", "--report", (ROOT / "validation" / "rows.csv",))
        except OutputError as e:
            ap.error(str(e))
    if a.fold_min_sources != 2 and (a.write or not a.cv):
        ap.error("--fold-min-sources is an experiment on the held-out folds: use it with --cv and without --write")
    prepared, _ = usable(load_rows())
    pool = fit_pool(prepared)
    res = fit_headline(pool, params)
    n_src = len({p.row["source_id"] for p in pool})
    print(f"fit on {len(pool)} headline rows of {n_src} sources: RMS log residual {res.rms_before:.3f} -> "
          f"{res.rms_after:.3f} ({res.message})")
    for p in res.params:
        print("  " + p.line())
    if a.write:
        path = ROOT / "calibration" / FIT_FILE
        write_text(path, fit_toml(res, n_src))
        print(f"wrote {path}")
    if a.cv and (a.fold_min_sources != 2 or a.hold):
        experiment(crossval(params=params, progress=lambda m: print(m, file=sys.stderr),
                            fold_min_sources=a.fold_min_sources))
    elif a.cv:
        cv = crossval(progress=lambda m: print(m, file=sys.stderr))
        md = ["# Held-out accuracy (leave-one-source-out)", "",
              "Reproduce: `specroof validate --cv source` (or `python tools/calibrate_shipped.py --cv`).", "",
              *not_fitted_lines(), cv.report.markdown(), "## Calibrated parameters", "", cv.params_table()]
        write_text(ROOT / "validation" / "ACCURACY.md", "\n".join(md))
        print("wrote validation/ACCURACY.md")
        if a.report:
            print("wrote {} and {}".format(*cv.report.write(a.report)))


if __name__ == "__main__":
    main()
