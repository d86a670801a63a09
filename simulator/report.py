"""A validation report: predicted against measured per row, summarised by scope, kind and source (the tables of
README.md "How accurate is it"). Built by `validation.validate` (in-sample) and `crossval.crossval` (held out)."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import shape
from .files import write_text

COLUMNS = ("row_id", "published_row", "source_id", "engine", "metric", "kind", "scope", "route", "measured",
           "predicted", "error", "skipped")
ROUTES = {"step": "a speculative step at a fixed batch", "plain": "a plain decode step at a fixed batch",
          "serving": "a serving run at a concurrency (prompts share or pause the steps; serving.serve)",
          "static": "one static batch run to completion (prefill + decode; static.static_batch)",
          "run": "a benchmark of N prompts at a batch (waves; speedup.run_speedup)"}


def stats(errs: list[float]) -> dict[str, float]:
    """n, median / p90 / max of |error|, the share within 20 %, and the median signed error (the bias)."""
    e = np.asarray(errs, dtype=np.float64)
    a = np.abs(e)
    return {"n": int(a.size), "median_abs_error": float(np.median(a)), "p90_abs_error": float(np.percentile(a, 90)),
            "max_abs_error": float(a.max()), "within_20pct": float(np.mean(a <= 0.2)), "bias": float(np.median(e))}


@dataclass(frozen=True)
class ValidationReport:
    """Per-row predictions and their summaries.

    rows : list of dicts (COLUMNS; error = predicted / measured - 1; skipped: the reason a row was not simulated);
    how : how the predictions were made ('in-sample (profiles as shipped)' or 'leave-one-source-out ...').
    summary : {scope: {kind: {source_id or 'overall': stats}}} over the simulated rows.
    """

    rows: list[dict[str, Any]]
    how: str

    @property
    def summary(self) -> dict[str, dict[str, dict[str, dict[str, float]]]]:
        out: dict[str, dict[str, dict[str, list[float]]]] = {}
        for r in self.rows:
            if r["error"] is not None:
                by = out.setdefault(r["scope"], {}).setdefault(r["kind"], {})
                by.setdefault(r["source_id"], []).append(r["error"])
                by.setdefault("overall", []).append(r["error"])
        return {sc: {k: {src: stats(v) for src, v in sorted(by.items(), key=lambda kv: kv[0] == "overall")}
                     for k, by in kinds.items()} for sc, kinds in out.items()}

    def by_route(self, scope: str = "headline") -> dict[str, dict[str, dict[str, float]]]:
        """{route: {kind: stats}} over the rows of one scope: how each way of pricing a row fares."""
        out: dict[str, dict[str, list[float]]] = {}
        for r in self.rows:
            if r["error"] is not None and r["scope"] == scope:
                out.setdefault(r.get("route", ""), {}).setdefault(r["kind"], []).append(r["error"])
        return {rt: {k: stats(v) for k, v in kinds.items()} for rt, kinds in sorted(out.items())}

    def headline(self, kind: str) -> dict[str, float] | None:
        """Overall stats of the headline rows of one kind ('speedup' or 'time'), or None when there are none."""
        return self.summary.get("headline", {}).get(kind, {}).get("overall")

    def shape(self) -> list[dict[str, Any]]:
        """The steps along every measured speedup curve, predicted change against measured (shape.pairs)."""
        return shape.pairs(self.rows)

    def summary_table(self, scope: str, kind: str) -> str:
        """One markdown table of `summary`: the rows of one scope and kind by source, then overall ('' if none)."""
        by = self.summary.get(scope, {}).get(kind)
        if not by:
            return ""
        out = [f"### {scope}: {kind} rows", "", "| source | rows | median abs error | within 20% | bias | "
               "p90 abs error |", "|---|---|---|---|---|---|"]
        for src, v in by.items():
            out.append(f"| {src} | {v['n']} | {v['median_abs_error']:.1%} | {v['within_20pct']:.0%} | "
                       f"{v['bias']:+.1%} | {v['p90_abs_error']:.1%} |")
        return "\n".join(out) + "\n"

    def markdown(self) -> str:
        out = [f"Predictions: {self.how}.", ""]
        for sc, kinds in self.summary.items():
            for kind in kinds:
                out.append(self.summary_table(sc, kind))
        out += [f"### {self.how.split(':')[0]}: headline rows by how they were priced", "",
                "| priced as | kind | rows | median abs error | within 20% | bias |", "|---|---|---|---|---|---|"]
        for rt, kinds in self.by_route().items():
            for kind, v in kinds.items():
                out.append(f"| {ROUTES.get(rt, rt)} | {kind} | {v['n']} | {v['median_abs_error']:.1%} | "
                           f"{v['within_20pct']:.0%} | {v['bias']:+.1%} |")
        good, ambiguous = shape.curves(self.rows)
        out += ["", shape.markdown(shape.steps(good), ambiguous)]
        out += ["| row | source | metric | scope | measured | predicted | error |", "|---|---|---|---|---|---|---|"]
        for r in self.rows:
            head = f"| {r['row_id']} | {r['source_id']} | {r['metric']} | {r['scope']} |"
            if r["skipped"]:
                out.append(f"{head} {r['measured']:.4g} | skipped: {r['skipped']} | |")
            else:
                out.append(f"{head} {r['measured']:.4g} | {r['predicted']:.4g} | {r['error']:+.1%} |")
        return "\n".join(out) + "\n"

    def write(self, prefix: str | Path) -> tuple[Path, Path]:
        """Write PREFIX.md and PREFIX.csv (atomically)."""
        md, cs = Path(f"{prefix}.md"), Path(f"{prefix}.csv")
        write_text(md, self.markdown())
        lines = [",".join(COLUMNS)]
        for r in self.rows:
            lines.append(",".join(_csv_cell(r.get(c)) for c in COLUMNS))
        write_text(cs, "\n".join(lines) + "\n")
        return md, cs

    def to_dict(self) -> dict[str, Any]:
        return {"how": self.how, "summary": self.summary, "shape": self.shape(), "rows": self.rows}


def _csv_cell(v: Any) -> str:
    if v is None:
        return ""
    s = f"{v:.6g}" if isinstance(v, float) else str(v)
    return '"' + s.replace('"', '""') + '"' if any(c in s for c in ',"\n') else s


def read_report_csv(path: str | Path) -> list[dict[str, str]]:
    """The rows of a report CSV written by `ValidationReport.write`."""
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))
