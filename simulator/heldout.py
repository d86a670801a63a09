"""How far held-out published speedups fell from the prediction, by regime: the error band printed beside a curve.

Leave-one-source-out cross-validation (`specroof validate --cv source`) prices every published speedup row with
calibrated values that never saw its source. The ratio measured / predicted of those rows is what a user should
expect on a deployment specroof has not seen. `tools/heldout_bands.py` groups the ratios by regime and writes their
10th, 50th and 90th percentiles to `calibration/heldout.toml`; `band_for` finds the regime of a prediction there.

A regime is (targets: dense or moe, batch band: 1-4, 5-32 or 33+, acceptance: given or assumed), where "given"
means the row (or the user) stated the acceptance length and "assumed" that the method's published default stood
in for it. The unit a new deployment is drawn from is a source, not a row (one source's rows share its setup and its
error: validation/ACCURACY.md's bias per source), so every source weighs the same in a band's percentiles, its rows
sharing its weight (`weighted_percentiles`), and a regime needs at least MIN_ROWS rows from at least MIN_SOURCES
sources; a prediction whose own regime
has fewer takes the rows of its targets and batch band at either acceptance ("any"), and none beyond that: a band
borrowed from another batch band or target class would claim a check that was never made (the held-out dense
speedups, for one, are all at batch 1-4). The band is empirical (percentiles of a few dozen rows at most), not a
confidence interval: it says how wrong comparable predictions were, not a bound.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .data import data_dir, read_toml
from .errors import SpecError

BANDS_FILE = "heldout.toml"
MIN_ROWS, MIN_SOURCES = 8, 3
TARGETS, BATCHES, ACCEPTANCE = ("dense", "moe"), ("1-4", "5-32", "33+"), ("given", "assumed")
ANY = "any"
_FIELDS = {"targets": TARGETS, "batch": BATCHES, "acceptance": (*ACCEPTANCE, ANY)}
_NUMBERS = ("rows", "sources", "p10", "p50", "p90")


@dataclass(frozen=True)
class Band:
    """The held-out ratios measured / predicted of one regime: its key, how many rows and sources it holds, and
    their 10th, 50th and 90th percentiles."""

    targets: str
    batch: str
    acceptance: str
    rows: int
    sources: int
    p10: float
    p50: float
    p90: float

    @property
    def regime(self) -> str:
        """The regime in words: 'moe targets, batch 5-32, acceptance given'."""
        return f"{self.targets} targets, batch {self.batch}, acceptance {self.acceptance}"

    def speedup_range(self, speedup: float) -> tuple[float, float]:
        """The speedups 10 % and 90 % of this regime's held-out rows would have measured, for a prediction."""
        return speedup * self.p10, speedup * self.p90

    def to_dict(self) -> dict[str, Any]:
        return {"regime": self.regime, "rows": self.rows, "sources": self.sources,
                "measured_over_predicted_p10": self.p10, "measured_over_predicted_p50": self.p50,
                "measured_over_predicted_p90": self.p90}


def batch_band(batch: float) -> str:
    """The batch band of a batch (or concurrency) >= 1."""
    return BATCHES[0] if batch <= 4 else (BATCHES[1] if batch <= 32 else BATCHES[2])


def _keys(moe: bool, batch: float, given: bool) -> list[tuple[str, str, str]]:
    """The regimes to try for one prediction, most specific first (the module docstring's fallback order)."""
    t, b = TARGETS[moe], batch_band(batch)
    return [(t, b, ACCEPTANCE[not given]), (t, b, ANY)]


def band_for(bands: Sequence[Band], moe: bool, batch: float, given: bool) -> Band | None:
    """The band of a prediction's regime, else of its targets and batch band at any acceptance; None when the file
    holds neither (no held-out published speedup is like it)."""
    by = {(x.targets, x.batch, x.acceptance): x for x in bands}
    return next((by[k] for k in _keys(moe, batch, given) if k in by), None)


def weighted_percentiles(x: np.ndarray, w: np.ndarray, q: Sequence[float]) -> np.ndarray:
    """Percentiles q (0-100) of values x with weights w > 0: the weighted empirical CDF through each sorted value's
    mid-weight (Hazen plotting positions, which give numpy's linear percentiles' median for equal weights), held flat
    beyond the first and last values."""
    order = np.argsort(x, kind="stable")
    xs, ws = np.asarray(x, float)[order], np.asarray(w, float)[order]
    mid = (np.cumsum(ws) - 0.5 * ws) / ws.sum()
    return np.interp(np.asarray(q, float) / 100.0, mid, xs)


def build_bands(records: Iterable[tuple[bool, float, bool, float, str]]) -> list[Band]:
    """Every regime with at least MIN_ROWS rows from MIN_SOURCES sources, from records (moe, batch, given, ratio
    measured / predicted, source id), each source weighing the same; the ratios must be finite and > 0 (ValueError
    naming the record otherwise)."""
    groups: dict[tuple[str, str, str], list[tuple[float, str]]] = {}
    for i, (moe, batch, given, ratio, src) in enumerate(records):
        if not (isinstance(ratio, float) and math.isfinite(ratio) and ratio > 0):
            raise ValueError(f"record {i} ({src}): ratio {ratio!r}; expected a finite number > 0")
        for key in _keys(moe, batch, given):
            groups.setdefault(key, []).append((ratio, src))
    out = []
    for key in sorted(groups):
        r = np.array([x for x, _ in groups[key]])
        per = {s: sum(1 for _, t in groups[key] if t == s) for _, s in groups[key]}
        if r.size >= MIN_ROWS and len(per) >= MIN_SOURCES:
            w = np.array([1.0 / per[s] for _, s in groups[key]])
            p10, p50, p90 = (float(v) for v in weighted_percentiles(r, w, [10, 50, 90]))
            out.append(Band(*key, int(r.size), len(per), p10, p50, p90))
    return out


def to_toml(bands: Sequence[Band], header: str) -> str:
    """The bands file: `header` as comment lines, then one [[band]] table per regime."""
    lines = [f"# {x}".rstrip() for x in header.splitlines()]
    for b in bands:
        lines += ["", "[[band]]", f'targets = "{b.targets}"', f'batch = "{b.batch}"', f'acceptance = "{b.acceptance}"',
                  f"rows = {b.rows}", f"sources = {b.sources}", f"p10 = {b.p10:.4f}", f"p50 = {b.p50:.4f}",
                  f"p90 = {b.p90:.4f}"]
    return "\n".join(lines) + "\n"


def _parse(entry: Any, where: str) -> Band:
    if not isinstance(entry, dict):
        raise SpecError(f"{where}: expected a table")
    extra = set(entry) - set(_FIELDS) - set(_NUMBERS)
    if extra:
        raise SpecError(f"{where}: unknown field {sorted(extra)[0]!r}; allowed: "
                        f"{', '.join([*_FIELDS, *_NUMBERS])}")
    for f, allowed in _FIELDS.items():
        if entry.get(f) not in allowed:
            raise SpecError(f"{where}: {f} = {entry.get(f)!r}; allowed: {', '.join(allowed)}")
    for f in _NUMBERS:
        v = entry.get(f)
        is_int = f in ("rows", "sources")
        if isinstance(v, bool) or not isinstance(v, int if is_int else (int, float)) or not math.isfinite(v) \
                or v <= 0:
            raise SpecError(f"{where}: {f} = {v!r}; expected {'an integer' if is_int else 'a finite number'} > 0")
    if not entry["p10"] <= entry["p50"] <= entry["p90"]:
        raise SpecError(f"{where}: p10 = {entry['p10']}, p50 = {entry['p50']}, p90 = {entry['p90']}; expected "
                        "p10 <= p50 <= p90")
    return Band(entry["targets"], entry["batch"], entry["acceptance"], int(entry["rows"]), int(entry["sources"]),
                float(entry["p10"]), float(entry["p50"]), float(entry["p90"]))


def load_bands(path: str | Path | None = None) -> tuple[Band, ...]:
    """The bands of `path` (default: the shipped calibration/heldout.toml; () when it is absent). A malformed file or
    entry is a SpecError naming the file, the entry, the field, its value and what was allowed."""
    if path is None:
        try:
            path = data_dir("calibration") / BANDS_FILE
        except SpecError:
            return ()
        if not path.is_file():
            return ()
    path = Path(path)
    doc = read_toml(path)
    if set(doc) - {"band"}:
        raise SpecError(f"{path}: unknown table {sorted(set(doc) - {'band'})[0]!r}; allowed: [[band]]")
    entries = doc.get("band", [])
    if not isinstance(entries, list):
        raise SpecError(f"{path}: band must be an array of tables ([[band]])")
    out = [_parse(e, f"{path}: band {i + 1}") for i, e in enumerate(entries)]
    keys = [(b.targets, b.batch, b.acceptance) for b in out]
    dup = next((k for k in keys if keys.count(k) > 1), None)
    if dup:
        raise SpecError(f"{path}: regime {'/'.join(dup)} appears twice; expected one band per regime")
    return tuple(out)


__all__ = ["ACCEPTANCE", "ANY", "BANDS_FILE", "BATCHES", "Band", "MIN_ROWS", "MIN_SOURCES", "TARGETS", "band_for",
           "batch_band", "build_bands", "load_bands", "to_toml", "weighted_percentiles"]
