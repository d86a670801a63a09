"""The shipped calibration: `calibration/fit.toml`, written by tools/calibrate_shipped.py, holds the values fitted
jointly on the headline validation rows (per engine: host mechanisms; per chip architecture: the per-kernel graph
cost). They are applied on top of the bundled, sourced profiles and device specs when those are loaded by name; the
sourced value each one replaces is kept as its prior (`EngineProfile.uncalibrated`, `Hardware.uncalibrated`), which is
where cross-validation starts from. A profile or spec loaded from a path is used as written.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from .data import data_dir, read_toml
from .errors import SpecError

FIT_FILE = "fit.toml"
NOT_FITTED_FILE = "not_fitted.toml"
_URL = re.compile(r"https://[^\s/]+/?\S*")
ENGINE_FIELDS = frozenset({"host_step_s", "host_per_seq_s", "spec_bookkeeping_s", "flashinfer_spec_step_s",
                           "draft_step_overhead_s", "kernel_launch_s", "hbm_fraction", "gemm_fraction",
                           "overlap_efficiency"})
DEVICE_FIELDS = frozenset({"kernel_floor_s"})


def _file(name: str) -> Path | None:
    """A bundled calibration file's path, or None where there is none (no data folder, no file)."""
    try:
        path = data_dir("calibration") / name
    except SpecError:
        return None
    return path if path.is_file() else None


def _section(kind: str, name: str, allowed: frozenset[str]) -> dict[str, float]:
    path = _file(FIT_FILE)
    if path is None:
        return {}
    table = read_toml(path).get(kind, {}).get(name, {})
    out = {}
    for key, entry in table.items():
        where = f"{path}: [{kind}.{name}] {key}"
        if key not in allowed:
            raise SpecError(f"{where}: not a calibrated field; allowed: {', '.join(sorted(allowed))}")
        v = entry.get("value") if isinstance(entry, dict) else None
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise SpecError(f"{where}: value = {v!r}; expected a finite number >= 0")
        out[key] = float(v)
    return out


def engine_values(name: str) -> dict[str, float]:
    """Calibrated EngineProfile fields of the bundled engine `name` ({} when none)."""
    return _section("engine", name, ENGINE_FIELDS)


def device_values(architecture: str) -> dict[str, float]:
    """Calibrated Hardware fields of every bundled device of `architecture` ({} when none)."""
    return _section("device", architecture, DEVICE_FIELDS) if architecture else {}


def describe() -> dict[str, Any]:
    """The whole shipped fit as read (for reports)."""
    path = _file(FIT_FILE)
    return read_toml(path) if path else {}


def not_fitted() -> dict[str, str]:
    """Sources whose rows are validated (predicted held out, reported) but never fitted on, each with its reason:
    `calibration/not_fitted.toml`, one table per source id with `reason` (text) and `evidence` (https URLs). A source
    belongs there where its author reports its runs as an unexplained slowdown, nobody has diagnosed it, and runs of
    the same architecture on the same engine at a matched load contradict it (the file's header: a judgement, made
    for its one source after the fit's change was seen). {} when the file is absent."""
    path = _file(NOT_FITTED_FILE)
    if path is None:
        return {}
    return {src: _reason(f"{path}: [{src}]", src, entry) for src, entry in read_toml(path).items()}


def _reason(where: str, src: str, entry: Any) -> str:
    """One not_fitted.toml table checked: a source id, a non-empty reason, a non-empty list of https URLs."""
    if not src.strip():
        raise SpecError(f"{where}: an empty source id; expected a source_id of validation/rows.csv")
    if not isinstance(entry, dict) or set(entry) != {"reason", "evidence"}:
        got = sorted(entry) if isinstance(entry, dict) else type(entry).__name__
        raise SpecError(f"{where}: expected a table of exactly reason and evidence, got {got}")
    reason, urls = entry["reason"], entry["evidence"]
    if not isinstance(reason, str) or not reason.strip():
        raise SpecError(f"{where} reason = {reason!r}: expected a non-empty text")
    if not isinstance(urls, list) or not urls:
        raise SpecError(f"{where} evidence = {urls!r}: expected a non-empty list of https URLs")
    for i, u in enumerate(urls):
        if not (isinstance(u, str) and _URL.fullmatch(u)):
            raise SpecError(f"{where} evidence[{i}] = {u!r}: expected an https URL (https://host/path, no spaces)")
    return reason.strip()


__all__ = ["DEVICE_FIELDS", "ENGINE_FIELDS", "FIT_FILE", "NOT_FITTED_FILE", "describe", "device_values",
           "engine_values", "not_fitted"]
