"""Held-out accuracy: leave-one-source-out cross-validation of the calibrated parameters.

For each source (one publication or measurement campaign, `source_id`) in turn, every calibrated parameter is
refitted (calibration.fit) on the headline rows of all other sources, and that source's rows are predicted with the
refit. A source's rows therefore never inform the parameters they are scored with: the error is what a user should
expect on a deployment specroof has not seen. Rows outside the headline scope (legacy engine builds, unknown
acceptance) are never fitted on, but their source's headline rows may be: they too are predicted with the fold that
left their source out (the fit on every headline row where their source has none), and reported in their own tables.
A source listed in calibration/not_fitted.toml (fitted.not_fitted: an unexplained slowdown its author reported, which
runs of the same architecture and engine contradict) is never fitted on either: its rows are predicted with the fit
on all the others.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .calibration import SHIPPED_PARAMS, FitResult, bundled, fit, prior_floors, row_group, usable
from .errors import ScenarioError
from .fitted import not_fitted
from .report import ValidationReport
from .validation import HEADLINE, PreparedRow, load_rows, predict_prepared, record, row_kind, row_scope


@dataclass(frozen=True)
class CrossValidation:
    """Result of `crossval`: the held-out report, the fit on every headline row a fit may use (`full`: the sources
    not in calibration/not_fitted.toml), each fold's fit by the source it left out, and the sources of the rows that
    no fit used (calibration/not_fitted.toml's)."""

    report: ValidationReport
    full: FitResult
    folds: dict[str, FitResult]
    not_fitted: tuple[str, ...] = ()

    def params_table(self) -> str:
        """Markdown: every fitted parameter on all the rows a fit uses ("all rows"), and its range over the folds."""
        out = ["| parameter | all rows | 1-sigma | status | range over folds |", "|---|---|---|---|---|"]
        for p in self.full.params:
            vals = [q.value for f in self.folds.values() for q in f.params if (q.group, q.name) == (p.group, p.name)]
            rng = f"{min(vals):.3g} .. {max(vals):.3g}" if vals else ""
            se = f"{p.stderr:.2g}" if p.status == "fitted" else ""
            out.append(f"| {p.group}.{p.name} | {p.value:.4g} | {se} | {p.status} | {rng} |")
        return "\n".join(out) + "\n"


def fit_pool(prepared: Sequence[PreparedRow], skip: Collection[str] | None = None) -> list[PreparedRow]:
    """The rows calibration fits on: headline rows of speedups and step times, less the sources in `skip` (default:
    calibration/not_fitted.toml's, `fitted.not_fitted`). Times to first token are reported, not fitted: they hold
    prefill queueing that no decode mechanism explains."""
    skip = not_fitted().keys() if skip is None else skip
    return [p for p in prepared if row_scope(p.row, p.dep.eng) == HEADLINE and row_kind(p.row) != "ttft"
            and _src(p) not in skip]


def fit_headline(rows: Sequence[PreparedRow], params: Sequence[str] = SHIPPED_PARAMS, min_sources: int = 2
                 ) -> FitResult:
    """Fit `params` jointly on `rows`, every engine and architecture starting from its sourced priors (never from
    values calibrated on other data); a parameter fewer than `min_sources` sources constrain keeps its prior (the
    shipped rule: 2)."""
    groups = [row_group(p) for p in rows]
    return fit(rows, groups, bundled(sorted({g.engine for g in groups})), prior_floors(rows), params,
               min_sources=min_sources, hide_overlapped=True)


def predict_with(p: PreparedRow, f: FitResult) -> float:
    """A row priced with a fit's values; an engine or architecture the fit did not see keeps its sourced prior (not
    the shipped calibration, which saw every source)."""
    g = row_group(p)
    eng = f.engines.get(g.engine) or p.dep.eng.uncalibrated()
    return predict_prepared(p, eng, f.floors.get(g.arch, p.dep.hw.uncalibrated().kernel_floor_s))


def crossval(rows: str | Path | Sequence[dict[str, str]] | None = None,
             params: Sequence[str] = SHIPPED_PARAMS, progress: Callable[[str], None] | None = None,
             fold_min_sources: int = 2) -> CrossValidation:
    """Leave-one-source-out cross-validation of `params` on `rows` (a rows CSV path, loaded rows, or None for the
    shipped rows). Each fold applies the shipped rule (a parameter fewer than 2 sources constrain keeps its prior)
    unless `fold_min_sources` says otherwise: 1 fits a parameter two sources share on the one left in each fold,
    which tests whether its value transfers from one source to the other (an experiment; the full fit keeps 2)."""
    if fold_min_sources < 1:
        raise ScenarioError(f"fold_min_sources = {fold_min_sources}: a fold fits a parameter at least 1 source "
                            "constrains (allowed: an integer >= 1; the shipped rule is 2)")
    rows = list(rows) if isinstance(rows, Sequence) and not isinstance(rows, str) else load_rows(rows)
    prepared, skipped = usable(rows)
    scope = {p.row["row_id"]: row_scope(p.row, p.dep.eng) for p in prepared}
    skip = not_fitted()
    pool = fit_pool(prepared, skip.keys())
    if not pool:
        left = sorted({_src(p) for p in prepared} & skip.keys())
        why = f" (calibration/not_fitted.toml leaves out {', '.join(left)})" if left else ""
        raise ScenarioError(f"no headline rows to cross-validate{why}")
    full = fit_headline(pool, params)
    folds: dict[str, FitResult] = {}
    for src in sorted({_src(p) for p in pool}):
        if progress:
            progress(f"fold: leaving out {src}")
        rest = [p for p in pool if _src(p) != src]
        folds[src] = fit_headline(rest, params, fold_min_sources) if rest else full
    out = _records(rows, prepared, dict(skipped), scope, folds, full)
    return CrossValidation(ValidationReport(out, "leave-one-source-out: every calibrated parameter refitted without "
                                                 "the row's source"), full, folds,
                           tuple(sorted({_src(p) for p in prepared} & skip.keys())))


def _records(rows: list[dict[str, str]], prepared: list[PreparedRow], why: dict[str, str], scope: dict[str, str],
             folds: dict[str, FitResult], full: FitResult) -> list[dict[str, Any]]:
    """Every row's report record: a row priced with the fold that left its source out, whatever its scope (an
    acceptance-unknown or legacy row is never fitted on, but its source's headline rows are, and a parameter they
    set must not price it), the rows of a source with no headline rows with the fit on all of them (none of it is
    theirs); unsimulated rows with the reason."""
    by_id = {p.row["row_id"]: p for p in prepared}
    out: list[dict[str, Any]] = []
    for r in rows:
        rec = record(r)
        p = by_id.get(r["row_id"])
        if p is None:
            rec["skipped"] = why.get(r["row_id"], "not simulated")
        else:
            rec["scope"], rec["route"] = scope[r["row_id"]], p.route
            f = folds.get(_src(p), full)
            rec["predicted"] = predict_with(p, f)
            rec["error"] = rec["predicted"] / rec["measured"] - 1.0
        out.append(rec)
    return out


def _src(p: PreparedRow) -> str:
    return p.row.get("source_id") or p.row["source"]


__all__ = ["CrossValidation", "crossval", "fit_headline", "fit_pool", "predict_with"]
