"""`specroof validate` (predicted against published measurements, in-sample or cross-validated) and
`specroof calibrate` (fit a profile's host overheads to your own measurements)."""

from __future__ import annotations

import argparse
import math
import sys
from typing import TYPE_CHECKING, Any

from ..engine import is_profile_path, list_engines, load_engine
from ..errors import ScenarioError
from ..files import check_output
from . import fmt
from .args import add_format, note_same_shape

if TYPE_CHECKING:
    from ..report import ValidationReport


def add(sub: Any, name: str) -> None:
    if name == "validate":
        v = sub.add_parser("validate", help="predict every row of a measurements CSV and report the errors")
        v.add_argument("file", nargs="?", default=None, help="rows CSV (default: the shipped validation/rows.csv)")
        v.add_argument("--cv", choices=["source"], default=None,
                       help="cross-validate: refit every calibrated parameter without each source in turn and "
                            "predict that source (leave-one-source-out; minutes on the shipped rows)")
        v.add_argument("--report", default=None, metavar="PREFIX", help="write PREFIX.md and PREFIX.csv")
        v.add_argument("--engine-override", action="append", default=None, metavar="NAME=PROFILE.toml",
                       help="price rows of engine NAME with another profile (repeatable; not with --cv)")
        add_format(v, ("table", "json"))
        v.set_defaults(func=run_validate)
        return
    c = sub.add_parser("calibrate", help="fit an engine profile's host overheads to measurements")
    c.add_argument("measurements", help="rows CSV (the validation schema) with measured speedups, step times or tok/s")
    c.add_argument("--engine", required=True, help="base profile name or path")
    c.add_argument("--out", required=True, help="where to write the fitted PROFILE.toml")
    c.add_argument("--params", default="host_step_s,host_per_seq_s,spec_bookkeeping_s,draft_step_overhead_s",
                   help="comma-separated parameters to fit (host_step_s, host_per_seq_s, spec_bookkeeping_s, "
                        "draft_step_overhead_s, kernel_launch_s, hbm_fraction, gemm_fraction, overlap_efficiency; "
                        "kernel_floor_s, a device's per-kernel cost, fitted per architecture)")
    c.add_argument("--force", action="store_true",
                   help="write the profile even when a parameter is not determined by the data (at a bound, or "
                        "1-sigma above its value); such parameters keep the base profile's value either way")
    add_format(c, ("table", "json"))
    c.set_defaults(func=run_calibrate)


def _overrides(specs: list[str]) -> dict:
    """--engine-override NAME=PROFILE.toml, each checked: a bundled engine name (rows name engines case-insensitively)
    and a profile path. Found by review: a misspelled or empty name was ignored and every row priced as before."""
    out = {}
    for spec in specs:
        name, eq, path = spec.partition("=")
        key = name.strip().lower()
        if not eq or not path.strip():
            raise ScenarioError(f"--engine-override {spec!r}: expected NAME=PROFILE.toml")
        if key not in list_engines():
            raise ScenarioError(f"--engine-override {spec!r}: engine {name.strip()!r} is not a bundled engine; "
                                f"expected one of {', '.join(list_engines())}")
        out[key] = load_engine(path.strip())
    return out


def _some_priced(rows: list[dict[str, Any]], file: str | None) -> None:
    """A rows file of which not one row can be priced is an input to fix, not a report (found by review: every row
    skipped for a misspelled hardware name, an empty summary and exit 0)."""
    if rows and all(r["skipped"] for r in rows):
        raise ScenarioError(f"{file or 'rows CSV'}: not one of {len(rows)} row(s) could be priced; the first "
                            f"({rows[0]['row_id']}): {rows[0]['skipped']}")


def _cross_validated(a: argparse.Namespace) -> tuple[ValidationReport, str]:
    """`validate --cv source`: the held-out report and the fitted-parameter table; names on stderr the sources that
    no fit used (calibration/not_fitted.toml)."""
    if a.engine_override:
        raise ScenarioError("--engine-override cannot be combined with --cv (the fit replaces the profiles)")
    from ..cross_validation import crossval  # lazy: keeps --help free of numba
    cv = crossval(a.file, progress=lambda m: print(m, file=sys.stderr))
    if cv.not_fitted:
        print(f"not fitted on (calibration/not_fitted.toml names why): {', '.join(cv.not_fitted)}; their rows are "
              "predicted with the fit on all the other sources", file=sys.stderr)
    return cv.report, cv.params_table()


def run_validate(a: argparse.Namespace) -> int:
    if a.report:
        from ..rows import default_rows_path  # lazy: keeps --help free of numba
        src = (a.file or default_rows_path(),)
        check_output(f"{a.report}.md", "--report", src)      # before the work, not after it
        check_output(f"{a.report}.csv", "--report", src)
    from ..rows import load_rows  # lazy: keeps --help free of numba
    note_same_shape(r.get(c) for r in load_rows(a.file) for c in ("model", "draft"))   # a repository: which shape
    if a.cv:
        rep, extra = _cross_validated(a)
    else:
        from ..validation import validate  # lazy: keeps --help free of numba
        engines = _overrides(a.engine_override or [])
        rep, extra = validate(a.file, engines), ""
    _some_priced(rep.rows, a.file)
    if a.format == "json":
        print(fmt.dumps(rep.to_dict()))
    else:
        print(rep.markdown() + ("\nCalibrated parameters (every headline row a fit uses, and their range over the "
                                "folds):\n\n" + extra if extra else ""))
    if a.report:
        md, cs = rep.write(a.report)
        print(f"wrote {md} and {cs}", file=sys.stderr)
    skipped = [r for r in rep.rows if r["skipped"]]
    if skipped:
        where = "each row's skipped field" if a.format == "json" else "the table"
        print(f"{len(skipped)} row(s) skipped (reasons in {where})", file=sys.stderr)
    return 0


def run_calibrate(a: argparse.Namespace) -> int:
    from ..calibration import MAX_RMS_LOG, calibrate  # lazy: keeps --help free of numba
    from ..profile_out import write_profile  # lazy: keeps --help free of numba
    check_output(a.out, "--out", (a.measurements,))
    if not is_profile_path(a.out):       # found by review: prof.json was written, then read as a bundled name
        raise ScenarioError(f"--out {a.out}: expected a .toml path (a profile is TOML, and --engine reads a name as "
                            "a file only when it ends .toml or names a folder: engine.is_profile_path)")
    eng = load_engine(a.engine)
    _other_engines(a.measurements, a.engine)
    from ..rows import load_rows  # lazy: keeps --help free of numba
    note_same_shape(r.get(c) for r in load_rows(a.measurements) for c in ("model", "draft"))
    res = calibrate(a.measurements, a.engine, tuple(p.strip() for p in a.params.split(",") if p.strip()))
    if not a.force:
        _check_fit(res, MAX_RMS_LOG)
    out = write_profile(res, eng.name, a.engine, a.out, a.measurements)
    dev = _device_params(res)
    if a.format == "json":
        print(fmt.dumps({"params": [p.__dict__ for p in res.params], "rms_log_residual_before": res.rms_before,
                         "rms_log_residual_after": res.rms_after, "rows": list(res.row_ids),
                         "residuals": [float(x) for x in res.residuals], "profile": str(out),
                         "success": res.success, "message": res.message, "solver_message": res.solver_message,
                         "not_written": [f"{g}.{n}" for g, n, _ in dev]}))
        return 0
    print(f"calibrated {len(res.row_ids)} rows against base profile {a.engine!r} ({res.message})")
    for p in res.params:
        print(f"  {p.line()}")
    print(f"RMS log residual: {res.rms_before:.4f} -> {res.rms_after:.4f}")
    for rid, r in zip(res.row_ids, res.residuals):
        print(f"  {rid}: predicted/measured - 1 = {math.expm1(float(r)):+.2%}")
    print(f"wrote {out}; use it with --engine {out}")
    for g, n, v in dev:      # review: a fitted device figure was reported, then silently left out of the profile
        print(f"not written: {g}.{n} = {v:.4g} is a device figure, not an engine profile's; to price with it, set "
              f"[kernels] graph_kernel_us = {v * 1e6:.3g} in a copy of your {g} device's spec (hardware_specs/) and "
              "pass that file with --hardware")
    return 0


def _other_engines(path: str, base: str) -> None:
    """Say on stderr which rows name another engine than a bundled --engine: calibrate prices every row with it (found
    by review: a file of vLLM and SGLang rows was fitted into one vLLM profile without a word)."""
    from ..rows import load_rows  # lazy: keeps --help free of numba
    if is_profile_path(base):
        return
    name = load_engine(base).name
    other = [(r["row_id"], r["engine"].strip()) for r in load_rows(path)
             if r["engine"].strip() and r["engine"].strip().lower() != name]
    if other:
        ex = ", ".join(f"{rid}: {e}" for rid, e in other[:3]) + (", ..." if len(other) > 3 else "")
        print(f"note: {len(other)} row(s) of {path} name another engine than --engine {name} ({ex}); calibrate prices "
              f"every row with {name}, whatever its engine column says", file=sys.stderr)


def _check_fit(res: Any, max_rms: float) -> None:
    """Refuse to write a fit that did not converge, left parameters undetermined or does not explain the rows."""
    if not res.success:
        raise ScenarioError(f"calibration {res.message}; the values it reached are not a best fit: fit fewer --params, "
                            "add measurements (with and without speculation, at several batch sizes), or pass --force "
                            "to write them anyway")
    if res.ok:
        return
    bad = "; ".join(p.line() for p in res.params if p.status != "fitted")
    unexplained = f"RMS log residual {res.rms_after:.2f} after the fit (above {max_rms}: predictions still off by " \
                  f"~{math.expm1(res.rms_after):.0%}; worst row {_worst(res)}); check the rows' scenarios and units"
    if bad:       # review: a row in ms, not s, was refused as undetermined parameters, with advice to add rows
        raise ScenarioError(f"calibration left parameters undetermined ({bad}); "
                            + (f"nor does it explain the rows: {unexplained}; " if res.rms_after > max_rms else "")
                            + "fit fewer --params, add measurements, or pass --force to write the determined ones "
                            "anyway")
    raise ScenarioError(f"calibration does not explain the rows: {unexplained}, or pass --force")


def _worst(res: Any) -> str:
    """The row the fit is furthest from, as 'ID: predicted/measured - 1 = +x%'."""
    i = max(range(len(res.row_ids)), key=lambda j: abs(float(res.residuals[j])))
    return f"{res.row_ids[i]}: predicted/measured - 1 = {math.expm1(float(res.residuals[i])):+.1%}"


def _device_params(res: Any) -> list[tuple[str, str, float]]:
    """(architecture, name, value) of the fitted parameters a device holds (the per-kernel floor): write_profile
    writes engine parameters only."""
    from ..calibration import FITTED, PARAMS  # lazy: keeps --help free of numba
    return [(p.group, p.name, p.value) for p in res.params if p.status == FITTED and PARAMS[p.name].scope == "device"]
