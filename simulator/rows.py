"""A rows CSV (`validation/rows.csv`, schema in validation/README.md) read and checked: its columns, one field per
column, a known metric with a positive measured value, whole numbers, shares and dates where given. Errors name the
file, line, row and column."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Any

from .data import MONTH_RE, data_dir, read_text
from .errors import ScenarioError, SpecError

REQUIRED = ("row_id", "source", "hardware", "engine", "model", "method", "metric", "measured")
OPTIONAL = ("source_id", "source_url", "locator", "published_row", "n_gpus", "tp", "dp", "ep", "engine_version",
            "precision", "expert_precision", "attention_precision", "kv_precision", "draft", "batch", "concurrency",
            "isl", "osl", "length_ratio", "context", "k", "tree_tokens", "tree_branching", "tau", "tau_k",
            "overlap_scheduler", "spec_max_running", "max_running_requests", "memory_fraction", "dp_balance",
            "num_prompts", "prefill_tp", "prefill_dp", "prefill_ep", "chunk", "engine_date", "sampling", "notes")
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


def _header_hint(cols: list[str]) -> str:
    """What a header that lacks every column probably is (found by review: an empty file and a semicolon-separated
    one were both told only which columns were missing)."""
    if not cols:
        return "empty (no header line); "
    if len(cols) == 1 and any(d in cols[0] for d in ";\t|"):
        head = cols[0] if len(cols[0]) <= 40 else cols[0][:40] + "..."
        return f"one column {head!r}: the file is not comma-separated; "
    return ""


def load_rows(path: str | Path | None = None) -> list[dict[str, str]]:
    """Read a rows CSV; errors name the file, row and column."""
    p = Path(path) if path else default_rows_path()
    try:
        rd = csv.DictReader(io.StringIO(read_text(p, "rows CSV").removeprefix("\ufeff"), newline=""))   # BOM
        cols = rd.fieldnames or []
        missing = [c for c in REQUIRED if c not in cols]
        if missing:
            raise SpecError(f"{p}: {_header_hint(cols)}missing column(s) {missing}; required: {', '.join(REQUIRED)}")
        twice = sorted({c for c in cols if cols.count(c) > 1})
        if twice:       # csv.DictReader keeps the last copy of a repeated name (found by review: batch read as 64)
            raise SpecError(f"{p}: column(s) {twice} appear more than once in the header; give each once")
        unknown = [c for c in cols if c not in REQUIRED + OPTIONAL]
        if unknown:
            raise SpecError(f"{p}: unknown column(s) {unknown}; allowed: {', '.join(REQUIRED + OPTIONAL)}")
        rows = list(rd)
    except csv.Error as e:
        raise SpecError(f"{p}: malformed CSV: {e}") from None
    if not rows:
        raise SpecError(f"{p}: no data rows (a header alone)")
    seen: dict[str, int] = {}
    for i, r in enumerate(rows, start=2):
        _check_row_shape(p, i, r, len(cols), seen)
        _check_measurement(p, i, r)
        _check_row_numbers(p, i, r)
    return rows


def _check_measurement(p: Path, i: int, r: dict[str, str]) -> None:
    """A known metric and a positive, finite measured value."""
    if r["metric"] not in METRICS:
        raise SpecError(f"{p}: line {i} ({r['row_id']}): metric = {r['metric']!r}; expected one of "
                        f"{', '.join(METRICS)}")
    try:
        v = float(r["measured"])
    except ValueError:
        raise SpecError(f"{p}: line {i} ({r['row_id']}): measured = {r['measured']!r}; expected a number") from None
    if not math.isfinite(v) or v <= 0:
        raise SpecError(f"{p}: line {i} ({r['row_id']}): measured = {r['measured']!r}; expected a positive number")


INT_COLUMNS = ("n_gpus", "tp", "dp", "ep", "batch", "concurrency", "isl", "osl", "context", "k", "tree_tokens",
               "tree_branching", "tau_k", "spec_max_running", "max_running_requests", "num_prompts", "prefill_tp",
               "prefill_dp", "prefill_ep", "chunk")
"""Whole-number columns: each >= 1 where given, but context and k (>= 0)."""


def _check_row_shape(p: Path, i: int, r: dict[str, Any], n_cols: int, seen: dict[str, int]) -> None:
    """One field per column, and a row_id given once (csv.DictReader puts extra fields under None, and None in the
    columns a short row lacks)."""
    if None in r or any(v is None for v in r.values()):
        n = n_cols + len(r.get(None) or []) - sum(v is None for v in r.values())
        raise SpecError(f"{p}: line {i}: {n} fields; the header has {n_cols}")
    rid = (r["row_id"] or "").strip()
    if not rid:
        raise SpecError(f"{p}: line {i}: row_id is empty")
    if rid in seen:
        raise SpecError(f"{p}: line {i}: row_id {rid!r} repeats line {seen[rid]}")
    seen[rid] = i


def _check_row_numbers(p: Path, i: int, r: dict[str, str]) -> None:
    """The whole-number columns and tau, where given: malformed values are input errors, not rows to skip."""
    for c in INT_COLUMNS:
        v = (r.get(c) or "").strip()
        if not v:
            continue
        try:
            f = float(v)
        except ValueError:
            f = float("nan")
        lo = 0 if c in ("context", "k") else 1
        if not (math.isfinite(f) and f.is_integer() and f >= lo):
            raise SpecError(f"{p}: line {i} ({r['row_id']}): {c} = {v!r}; expected a whole number >= {lo}")
    _check_date(p, i, r)
    _check_share(p, i, r)
    _check_drafting(p, i, r)
    _check_prefill(p, i, r)


def _check_prefill(p: Path, i: int, r: dict[str, str]) -> None:
    """prefill_tp, prefill_dp and prefill_ep: one prefill instance's layout, all three or none (review, 2026-12-06:
    validation.serving_workload priced a row with only some of them on the decode layout, silently)."""
    from .traffic import PREFILL_LAYOUT_KEYS, prefill_layout_of  # lazy: numpy stays out of reading a rows file
    try:
        prefill_layout_of(tuple((r.get(c) or "").strip() or None for c in PREFILL_LAYOUT_KEYS))
    except ScenarioError as e:
        raise SpecError(f"{p}: line {i} ({r['row_id']}): {e}") from None


def _check_drafting(p: Path, i: int, r: dict[str, str]) -> None:
    """k >= 1 where a method is given, and tau, where given, >= 1 (tokens per step, the bonus token included)."""
    if (r.get("method") or "").strip() and float((r.get("k") or "").strip() or 1) == 0:
        raise SpecError(f"{p}: line {i} ({r['row_id']}): k = 0 with method = {r['method'].strip()!r}: a speculative "
                        "row drafts at least one token (k >= 1); a run without speculation leaves method empty "
                        "(found by review: it was priced as plain decoding)")
    tau = (r.get("tau") or "").strip()
    if tau:
        try:
            t = float(tau)
        except ValueError:
            t = float("nan")
        if not (math.isfinite(t) and t >= 1.0):
            raise SpecError(f"{p}: line {i} ({r['row_id']}): tau = {tau!r}; expected a number >= 1 (tokens per "
                            "step, the bonus token included)")


def _check_share(p: Path, i: int, r: dict[str, str]) -> None:
    """memory_fraction, where given: the share of each GPU's memory the measured server was started with (SGLang
    --mem-fraction-static, vLLM --gpu-memory-utilization; on a TensorRT-LLM row its free_gpu_memory_fraction, a share
    of what the weights and the start-up reserve leave), in (0, 1]; empty: the engine's own (its profile's value or
    start-up rule)."""
    v = (r.get("memory_fraction") or "").strip()
    if not v:
        return
    try:
        f = float(v)
    except ValueError:
        f = float("nan")
    if not (math.isfinite(f) and 0.0 < f <= 1.0):
        raise SpecError(f"{p}: line {i} ({r['row_id']}): memory_fraction = {v!r}; expected a share of the GPU's "
                        "memory in (0, 1], or empty (the engine's own)")


def _check_date(p: Path, i: int, r: dict[str, str]) -> None:
    """engine_date, where given, as YYYY-MM: row_scope compares it as text with a profile's valid_from (found by
    review: '2025-1' and 'Jan 2025' read as newer than 2025-06)."""
    date = (r.get("engine_date") or "").strip()
    if date and not MONTH_RE.fullmatch(date):
        raise SpecError(f"{p}: line {i} ({r['row_id']}): engine_date = {date!r}; expected YYYY-MM (e.g. 2025-06)")


__all__ = ["INT_COLUMNS", "METRICS", "OPTIONAL", "REQUIRED", "SERVING_METRICS", "STEP_METRICS", "default_rows_path",
           "load_rows"]
