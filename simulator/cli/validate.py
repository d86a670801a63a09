"""`specroof validate` (predicted against published measurements) and `specroof calibrate` (fit a profile)."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from ..engine import load_engine
from ..files import check_output
from . import fmt
from .args import add_format


def add(sub: Any, name: str) -> None:
    if name == "validate":
        v = sub.add_parser("validate", help="predict every row of a measurements CSV and report the errors")
        v.add_argument("file", nargs="?", default=None, help="rows CSV (default: the shipped validation/rows.csv)")
        v.add_argument("--report", default=None, metavar="PREFIX", help="write PREFIX.md and PREFIX.csv")
        v.add_argument("--engine-override", action="append", default=None, metavar="NAME=PROFILE.toml",
                       help="price rows of engine NAME with another profile (repeatable)")
        add_format(v, ("table", "json"))
        v.set_defaults(func=run_validate)
        return
    c = sub.add_parser("calibrate", help="fit an engine profile's overheads and efficiencies to measurements")
    c.add_argument("measurements", help="rows CSV (the validation schema) with measured speedups, step times or tok/s")
    c.add_argument("--engine", required=True, help="base profile name or path")
    c.add_argument("--out", required=True, help="where to write the fitted PROFILE.toml")
    c.add_argument("--params", default="host_step_s,spec_bookkeeping_s,gemm_fraction,overlap_efficiency",
                   help="comma-separated parameters to fit (host_step_s, spec_bookkeeping_s, "
                        "host_per_seq_s, draft_step_overhead_s, kernel_launch_s, hbm_fraction, "
                        "gemm_fraction, overlap_efficiency)")
    add_format(c, ("table", "json"))
    c.set_defaults(func=run_calibrate)


def run_validate(a: argparse.Namespace) -> int:
    from ..validation import validate  # lazy: keeps --help free of numba
    engines = {}
    for spec in a.engine_override or []:
        name, _, path = spec.partition("=")
        engines[name] = load_engine(path or name)
    if a.report:
        check_output(f"{a.report}.md", "--report")      # before the work, not after it
    rep = validate(a.file, engines)
    print(fmt.dumps({"rows": rep.rows, "summary": rep.summary}) if a.format == "json" else rep.markdown())
    if a.report:
        md, cs = rep.write(a.report)
        print(f"wrote {md} and {cs}", file=sys.stderr)
    skipped = [r for r in rep.rows if r["skipped"]]
    if skipped:
        print(f"{len(skipped)} row(s) skipped (reasons in the table)", file=sys.stderr)
    return 0


def run_calibrate(a: argparse.Namespace) -> int:
    from ..calibration import calibrate, write_profile  # lazy: keeps --help free of numba
    check_output(a.out, "--out")
    res = calibrate(a.measurements, a.engine, tuple(p.strip() for p in a.params.split(",") if p.strip()))
    out = write_profile(res, a.engine, a.out, a.measurements)
    if a.format == "json":
        print(fmt.dumps({"values": res.values, "stderr": res.stderr, "rms_log_residual_before": res.rms_before,
                         "rms_log_residual_after": res.rms_after, "rows": list(res.row_ids),
                         "residuals": [float(x) for x in res.residuals], "profile": str(out),
                         "success": res.success, "message": res.message}))
        return 0
    print(f"calibrated {len(res.row_ids)} rows against base profile {a.engine!r} ({res.message})")
    for p, v in res.values.items():
        print(f"  {p:32s} {v:.6g}  +- {res.stderr[p]:.3g} (1 sigma)")
    print(f"RMS log residual: {res.rms_before:.4f} -> {res.rms_after:.4f}")
    for rid, r in zip(res.row_ids, res.residuals):
        print(f"  {rid}: predicted/measured - 1 = {math.expm1(float(r)):+.2%}")
    print(f"wrote {out}; use it with --engine {out}")
    return 0
