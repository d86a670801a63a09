"""Fit an engine profile's free parameters to a user's measurements (scipy.optimize.least_squares).

Residuals are log(predicted / measured) per row (scale-free, so step times, tokens/s and speedups mix), minimised
inside physical bounds. Uncertainty: the Gauss-Newton covariance s^2 (J^T J)^-1 at the optimum, with s^2 the residual
variance (Bates & Watts 1988, §2.3); it is reported, not hidden, when parameters are poorly identified.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from .data import data_dir, read_toml
from .engine import EngineProfile, load_engine, read_profile
from .errors import ScenarioError, SpecroofError
from .scenario import Scenario
from .validation import load_rows, predict_row, row_scenario

# Free parameters: EngineProfile field -> (TOML section, key, lower, upper bound, starting value if the profile has
# none). Bounds are physical: host work of 0-20 ms per step, 0-100 us per eager launch, fractions of peak in (0, 1].
PARAMS: dict[str, tuple[str, str, float, float, float]] = {
    "host_step_s": ("host", "step_overhead_s", 0.0, 0.02, 5e-4),
    "spec_bookkeeping_s": ("spec", "bookkeeping_s", 0.0, 0.02, 5e-4),
    "host_per_seq_s": ("host", "per_seq_s", 0.0, 1e-4, 1e-6),
    "draft_step_overhead_s": ("spec", "draft_step_overhead_s", 0.0, 0.01, 2e-4),
    "kernel_launch_s": ("launch", "kernel_launch_s", 0.0, 1e-4, 1e-5),
    "hbm_fraction": ("efficiency", "hbm_fraction", 0.3, 1.0, 0.85),
    # GEMM fraction: only compute-bound GEMMs feel it (M above the ridge, ~150-300 rows on current GPUs), and those
    # reach at least half of the dense tensor peak with cuBLAS/CUTLASS (best shapes 0.72-0.80, stas00 MAMF table,
    # https://github.com/stas00/ml-engineering/blob/master/compute/accelerator/README.md): lower bound 0.5.
    "gemm_fraction": ("efficiency", "gemm_fraction", 0.5, 1.0, 0.75),
    "overlap_efficiency": ("efficiency", "overlap_efficiency", 0.0, 1.0, 0.5),
}
DEFAULT_PARAMS = ("host_step_s", "spec_bookkeeping_s", "gemm_fraction", "overlap_efficiency")


@dataclass(frozen=True)
class CalibrationResult:
    """Fitted profile and diagnostics.

    engine : EngineProfile with the fitted values; values, stderr : dict param -> value and 1-sigma uncertainty
    (SI units); residuals : log(pred/measured) per row at the optimum; row_ids : rows used; rms_before / rms_after :
    RMS of the log residuals with the base profile and the fitted one; success, message : from least_squares.
    """

    engine: EngineProfile
    values: dict[str, float]
    stderr: dict[str, float]
    residuals: np.ndarray
    row_ids: tuple[str, ...]
    rms_before: float
    rms_after: float
    success: bool
    message: str


def _start(eng: EngineProfile, name: str) -> float:
    v = getattr(eng, name)
    lo, hi, dflt = PARAMS[name][2], PARAMS[name][3], PARAMS[name][4]
    v = dflt if v is None else float(v)
    return float(np.clip(v, lo + 1e-12 * (hi - lo), hi - 1e-12 * (hi - lo)))


def _usable_rows(rows: str | Path | Sequence[dict[str, str]], eng: EngineProfile
                 ) -> tuple[list[dict[str, str]], list[Scenario]]:
    """The rows (a rows CSV path or loaded rows) that `eng` can price, each with its Scenario;
    rows that fail with a SpecroofError are left out."""
    rs = load_rows(rows) if isinstance(rows, (str, Path)) else list(rows)
    usable, prepared = [], []
    for r in rs:
        try:
            kw = row_scenario(r)
            predict_row(r, eng, kw)
            usable.append(r)
            prepared.append(kw)
        except SpecroofError:
            continue
    return usable, prepared


def _stderr(sol: Any, n_rows: int, n_params: int) -> np.ndarray:
    """1-sigma uncertainty of each fitted parameter: the Gauss-Newton covariance s^2 (J^T J)^-1 at the optimum."""
    J = sol.jac
    dof = max(1, n_rows - n_params)
    s2 = float(sol.fun @ sol.fun) / dof
    try:
        cov = np.linalg.pinv(J.T @ J) * s2
        return np.sqrt(np.clip(np.diag(cov), 0.0, None))
    except np.linalg.LinAlgError:  # pragma: no cover - pinv does not raise for finite J
        return np.full(n_params, np.inf)


def calibrate(rows: str | Path | Sequence[dict[str, str]], base: EngineProfile | str,
              params: Sequence[str] = DEFAULT_PARAMS) -> CalibrationResult:
    """Fit `params` of the `base` profile to `rows` (a rows CSV path or loaded rows; see validate.load_rows).

    Every row is predicted with the engine being fitted, whatever its `engine` column says."""
    eng0 = base if isinstance(base, EngineProfile) else load_engine(base)
    bad = [p for p in params if p not in PARAMS]
    if bad or not params:
        raise ScenarioError(f"unknown calibration parameter(s) {bad}; choose from {', '.join(PARAMS)}")
    usable, prepared = _usable_rows(rows, eng0)
    if len(usable) < len(params):
        raise ScenarioError(f"{len(usable)} usable rows cannot determine {len(params)} parameters; add measurements "
                            "(with and without speculation, at several batch sizes) or fit fewer --params")
    meas = np.array([float(r["measured"]) for r in usable])

    def engine_at(x: np.ndarray) -> EngineProfile:
        return replace(eng0, **{p: float(v) for p, v in zip(params, x)})

    def resid(x: np.ndarray) -> np.ndarray:
        e = engine_at(x)
        return np.log(np.array([predict_row(r, e, kw) for r, kw in zip(usable, prepared)]) / meas)

    from scipy.optimize import least_squares  # lazy: keeps `import simulator` fast
    x0 = np.array([_start(eng0, p) for p in params])
    lo = np.array([PARAMS[p][2] for p in params])
    hi = np.array([PARAMS[p][3] for p in params])
    r0 = resid(x0)
    sol = least_squares(resid, x0, bounds=(lo, hi), x_scale=np.maximum(hi - lo, 1e-12) * 0.1,
                        diff_step=1e-3, method="trf")
    se = _stderr(sol, len(usable), len(params))
    vals = {p: float(v) for p, v in zip(params, sol.x)}
    return CalibrationResult(
        engine=engine_at(sol.x), values=vals, stderr={p: float(v) for p, v in zip(params, se)},
        residuals=sol.fun.copy(), row_ids=tuple(r["row_id"] for r in usable),
        rms_before=float(np.sqrt(np.mean(r0 ** 2))), rms_after=float(np.sqrt(np.mean(sol.fun ** 2))),
        success=bool(sol.success), message=str(sol.message))


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(float(v)) if isinstance(v, float) else str(v)
    s = str(v).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{s}"'


def _dump(doc: dict[str, Any]) -> str:
    lines = []
    for k, v in doc.items():
        if not isinstance(v, dict):
            lines.append(f"{k} = {_toml_value(v)}")
    for k, v in doc.items():
        if isinstance(v, dict):
            lines.append(f"\n[{k}]")
            for kk, vv in v.items():
                if isinstance(vv, dict):
                    inner = ", ".join(f"{a} = {_toml_value(b)}" for a, b in vv.items())
                    lines.append(f"{kk} = {{ {inner} }}")
                else:
                    lines.append(f"{kk} = {_toml_value(vv)}")
    return "\n".join(lines) + "\n"


def write_profile(result: CalibrationResult, base: str | Path, out: str | Path, rows_label: str,
                  name: str | None = None) -> Path:
    """Write the base profile's TOML with the fitted values (source = "calibrated", note with the fit)."""
    bp = Path(base) if str(base).endswith(".toml") else data_dir("engine_profiles") / f"{base}.toml"
    doc = read_toml(bp)
    outp = Path(out)
    doc["name"] = name or outp.stem
    for p, v in result.values.items():
        sec, key = PARAMS[p][0], PARAMS[p][1]
        doc.setdefault(sec, {})[key] = {
            "value": v, "source": "calibrated",
            "note": f"fitted by specroof calibrate on {rows_label} ({len(result.row_ids)} rows, base profile "
                    f"{bp.stem}); 1-sigma {result.stderr[p]:.3g}; RMS log residual {result.rms_before:.3f} -> "
                    f"{result.rms_after:.3f}"}
    outp.write_text(_dump(doc), encoding="utf-8")
    read_profile(outp)   # the written profile must load
    return outp
