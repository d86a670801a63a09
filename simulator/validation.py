"""Predicted against published measurements: `validation/rows.csv` (schema in validation/README.md).

Each row is a complete scenario (hardware, engine, model, method or none, batch or concurrency, context, k/tree,
measured tau if published) and one measured value. Rows that cannot be simulated are reported as skipped, with the
reason. Rows are grouped by `source_id` (one independent publication or measurement campaign) for per-source
summaries and leave-one-source-out cross-validation.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from .acceptance import Acceptance
from .data import data_dir
from .drafters import default_decay
from .engine import EngineProfile, load_engine
from .errors import ScenarioError, SpecError, SpecroofError
from .hardware import load_hardware
from .model import load_model
from .scenario import Scenario
from .speedup import predict
from .step import simulate_step

REQUIRED = ("row_id", "source", "hardware", "engine", "model", "method", "metric", "measured")
OPTIONAL = ("source_id", "source_url", "locator", "published_row", "n_gpus", "tp", "dp", "ep", "engine_version",
            "precision", "expert_precision", "attention_precision", "kv_precision", "draft", "batch", "concurrency",
            "isl", "osl", "context", "k", "tree_tokens", "tree_branching", "tau", "tau_k", "overlap_scheduler",
            "notes")
# Step-level metrics (a decode step at a batch): predicted by `predict`. A row with a concurrency instead of a batch
# is priced at batch = concurrency and context = isl + osl / 2 (the mean context over a request's decode).
STEP_METRICS = ("speedup", "base_step_s", "spec_step_s", "tpot_s", "itl_s", "tokens_per_s_per_user",
                "tokens_per_s_per_gpu")
# Serving-level metrics (prefill, TTFT, end to end): predicted by `serve`.
SERVING_METRICS = ("ttft_s", "e2e_s", "e2e_speedup", "throughput_ratio")
METRICS = STEP_METRICS + SERVING_METRICS


def default_rows_path() -> Path:
    """The shipped rows: validation/rows.csv (bundled in the wheel as simulator/_data/validation)."""
    return data_dir("validation") / "rows.csv"


def load_rows(path: str | Path | None = None) -> list[dict[str, str]]:
    """Read a rows CSV; errors name the file, row and column."""
    p = Path(path) if path else default_rows_path()
    try:
        with open(p, newline="", encoding="utf-8") as f:
            rd = csv.DictReader(f)
            cols = rd.fieldnames or []
            missing = [c for c in REQUIRED if c not in cols]
            if missing:
                raise SpecError(f"{p}: missing column(s) {missing}; required: {', '.join(REQUIRED)}")
            unknown = [c for c in cols if c not in REQUIRED + OPTIONAL]
            if unknown:
                raise SpecError(f"{p}: unknown column(s) {unknown}; allowed: {', '.join(REQUIRED + OPTIONAL)}")
            rows = list(rd)
    except FileNotFoundError:
        raise SpecError(f"{p}: file not found") from None
    for i, r in enumerate(rows, start=2):
        if r["metric"] not in METRICS:
            raise SpecError(f"{p}: line {i} ({r['row_id']}): metric = {r['metric']!r}; expected one of "
                            f"{', '.join(METRICS)}")
        try:
            v = float(r["measured"])
        except ValueError:
            raise SpecError(f"{p}: line {i} ({r['row_id']}): measured = {r['measured']!r}; expected a number") \
                from None
        if not math.isfinite(v) or v <= 0:
            raise SpecError(f"{p}: line {i} ({r['row_id']}): measured = {r['measured']!r}; expected a positive number")
    return rows


def _int(r: dict[str, str], key: str, default: int | None = None) -> int | None:
    v = (r.get(key) or "").strip()
    if not v:
        return default
    try:
        f = float(v)
    except ValueError:
        f = float("nan")
    if not f.is_integer():
        raise ScenarioError(f"row {r['row_id']}: {key} = {v!r} is not an integer")
    return int(f)


def row_acceptance(r: dict[str, str]) -> Acceptance | None:
    """The row's measured tau as an Acceptance (on its tree when it has one), or None for the method default."""
    tau = (r.get("tau") or "").strip()
    if not tau:
        return None
    k = _int(r, "k")
    kt = _int(r, "tau_k", k)
    if kt is None:
        raise ScenarioError(f"row {r['row_id']}: tau = {tau} needs the k it was measured at (k or tau_k)")
    return Acceptance.from_measurement(float(tau), kt, _int(r, "tree_tokens"), _int(r, "tree_branching"),
                                       default_decay(_text(r, "method")))


def _row_engine(r: dict[str, str], eng: EngineProfile) -> EngineProfile:
    """The profile with the row's scheduler mode (e.g. vLLM before async scheduling became the default): a fact of
    the measured run, like tp or precision, not a fitted knob."""
    ov = (r.get("overlap_scheduler") or "").strip().lower()
    if not ov:
        return eng
    if ov not in ("true", "false"):
        raise ScenarioError(f"row {r['row_id']}: overlap_scheduler = {ov!r}; expected true or false")
    return replace(eng, overlap=ov == "true", overlap_with_spec=ov == "true")


def _text(r: dict[str, str], key: str, default: str | None = None) -> str | None:
    return (r.get(key) or "").strip() or default


def row_batch_context(r: dict[str, str]) -> tuple[int, int]:
    """(batch, context) of a row: its batch, or its concurrency (a serving run's decode batch in steady state); its
    context, or isl + osl / 2 (the mean context over a request's decode), or 1024."""
    batch = _int(r, "batch") or _int(r, "concurrency")
    if batch is None:
        raise ScenarioError(f"row {r['row_id']}: needs a batch or a concurrency")
    ctx = _int(r, "context")
    if ctx is None:
        isl, osl = _int(r, "isl"), _int(r, "osl")
        ctx = isl + (osl or 0) // 2 if isl is not None else 1024
    return batch, ctx


def row_scenario(r: dict[str, str]) -> Scenario:
    """The row as a Scenario (one batch), with its hardware, model and engine loaded once. A row without a method
    (or with method none) is a plain decode row: the Scenario has method None."""
    method = _text(r, "method")
    method = None if method in (None, "none") else method
    n, tp, dp = _int(r, "n_gpus"), _int(r, "tp", 1), _int(r, "dp", 1)
    if n is not None and n != tp * dp:
        raise ScenarioError(f"row {r['row_id']}: n_gpus = {n} but one instance of tp x dp = {tp * dp} GPUs is "
                            "priced: disaggregated and multi-instance serving are not modelled")
    if r["metric"] in SERVING_METRICS:
        raise ScenarioError(f"row {r['row_id']}: {r['metric']} is a serving metric (prefill and end-to-end latency), "
                            "which step pricing does not predict")
    batch, ctx = row_batch_context(r)
    return Scenario(hardware=load_hardware(_text(r, "hardware", "")), model=load_model(_text(r, "model", "")),
                    method=method, draft=_text(r, "draft"), engine=_row_engine(r, load_engine(_text(r, "engine", ""))),
                    acceptance=row_acceptance(r) if method else None, k=_int(r, "k", 3) if method else 3,
                    tree_tokens=_int(r, "tree_tokens"), tree_branching=_int(r, "tree_branching"), batch=(batch,),
                    context=ctx, tp=tp, dp=dp, ep=_int(r, "ep", 1), precision=_text(r, "precision", "bf16"),
                    kv_precision=_text(r, "kv_precision"), expert_precision=_text(r, "expert_precision"))


def _plain(s: Scenario, metric: str) -> float:
    """A plain decode row: the base step at the row's batch."""
    st = simulate_step(scenario=s)
    if not st.feasible[0]:
        raise ScenarioError(f"infeasible: {st.message[0]}")
    t, b, n = float(st.step_s[0]), float(st.batch[0]), float(st.scenario["n_gpus"])
    values = {"base_step_s": t, "tpot_s": t, "itl_s": t, "tokens_per_s_per_user": 1.0 / t,
              "tokens_per_s_per_gpu": b / t / n}
    if metric not in values:
        raise ScenarioError(f"metric {metric} needs speculation (a method)")
    return values[metric]


def predict_row(r: dict[str, str], engine: EngineProfile | None = None, scenario: Scenario | None = None) -> float:
    """Simulate one row; raises a SpecroofError when it cannot be simulated. `scenario`: the row's, prepared once by
    `row_scenario`; `engine` replaces the row's profile (the row's scheduler mode still applies)."""
    s = scenario if scenario is not None else row_scenario(r)
    if engine is not None:
        s = s.replace(engine=_row_engine(r, engine))
    m = r["metric"]
    if s.method is None:
        return _plain(s, m)
    res = predict(s)
    if not res.feasible[0]:
        raise ScenarioError(f"infeasible: {res.message[0]}")
    spec_tpot = res.spec_step_s / res.tokens_per_step
    return float({"speedup": res.speedup, "base_step_s": res.base_step_s, "spec_step_s": res.spec_step_s,
                  "tpot_s": spec_tpot, "itl_s": res.spec_step_s, "tokens_per_s_per_user": res.tokens_per_s_per_user,
                  "tokens_per_s_per_gpu": res.tokens_per_s_per_gpu}[m][0])


@dataclass(frozen=True)
class ValidationReport:
    """Per-row predictions and error summaries.

    rows : list of dicts (row_id, source, metric, measured, predicted, error = predicted/measured - 1, skipped reason)
    summary : {source or "overall": {"n", "median_abs_error", "p90_abs_error", "max_abs_error"}}
    """

    rows: list[dict[str, Any]]
    summary: dict[str, dict[str, float]]

    def markdown(self) -> str:
        out = ["| source | rows | median abs error | p90 abs error | max abs error |", "|---|---|---|---|---|"]
        for k, v in self.summary.items():
            out.append(f"| {k} | {v['n']} | {v['median_abs_error']:.1%} | {v['p90_abs_error']:.1%} | "
                       f"{v['max_abs_error']:.1%} |")
        out += ["", "| row | published | source | metric | measured | predicted | error |",
                "|---|---|---|---|---|---|---|"]
        for r in self.rows:
            head = f"| {r['row_id']} | {r['published_row']} | {r['source']} | {r['metric']} |"
            if r["skipped"]:
                out.append(f"{head} {r['measured']} | skipped: {r['skipped']} | |")
            else:
                out.append(f"{head} {r['measured']:.3g} | {r['predicted']:.3g} | {r['error']:+.1%} |")
        return "\n".join(out) + "\n"

    def write(self, prefix: str | Path) -> tuple[Path, Path]:
        """Write PREFIX.md and PREFIX.csv."""
        md, cs = Path(f"{prefix}.md"), Path(f"{prefix}.csv")
        md.write_text(self.markdown(), encoding="utf-8")
        with open(cs, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=["row_id", "published_row", "source", "metric", "measured", "predicted",
                                              "error", "skipped"])
            w.writeheader()
            for r in self.rows:
                w.writerow({k: r.get(k, "") for k in w.fieldnames})
        return md, cs


def _summary(errs: list[float]) -> dict[str, float]:
    a = np.abs(np.asarray(errs))
    return {"n": int(a.size), "median_abs_error": float(np.median(a)), "p90_abs_error": float(np.percentile(a, 90)),
            "max_abs_error": float(a.max())}


def validate(path: str | Path | None = None, engines: dict[str, EngineProfile] | None = None) -> ValidationReport:
    """Simulate every row it can; `engines` replaces named profiles (e.g. a freshly calibrated one)."""
    rows = load_rows(path)
    out: list[dict[str, Any]] = []
    for r in rows:
        rec: dict[str, Any] = {"row_id": r["row_id"], "published_row": r.get("published_row", ""),
                               "source": r["source"], "metric": r["metric"], "measured": float(r["measured"]),
                               "predicted": None, "error": None, "skipped": ""}
        try:
            eng = (engines or {}).get(r["engine"])
            rec["predicted"] = predict_row(r, eng)
            rec["error"] = rec["predicted"] / rec["measured"] - 1.0
        except SpecroofError as e:
            rec["skipped"] = str(e)
        out.append(rec)
    by: dict[str, list[float]] = {}
    for rec in out:
        if rec["error"] is not None:
            by.setdefault(rec["source"], []).append(rec["error"])
    summary = {k: _summary(v) for k, v in by.items()}
    allerr = [e for v in by.values() for e in v]
    if allerr:
        summary["overall"] = _summary(allerr)
    return ValidationReport(out, summary)
