"""How far held-out published speedups fell from the prediction, by regime: the error band printed beside a curve.

Leave-one-source-out cross-validation (`specroof validate --cv source`) prices every published speedup row with
calibrated values that never saw its source. The ratio measured / predicted of those rows is what a user should
expect on a deployment specroof has not seen. `tools/heldout_bands.py` groups the ratios by regime and writes, per
regime, an 80 % prediction interval for one row of a source not among them to `calibration/heldout.toml`; `band_for`
finds the regime of a prediction there.

The unit a new deployment is drawn from is a source, not a row: one source's rows share its setup and its error
(validation/ACCURACY.md's bias per source), and the sources of a regime disagree by more than a source's rows scatter.
So the interval is that of a random-effects model on log(measured / predicted) (Higgins, Thompson & Spiegelhalter 2009,
J. R. Stat. Soc. A 172:137): source means m_s with grand mean m and between-source standard deviation
tau, residuals within the sources with pooled standard deviation sigma, and for a row of a new source
    m +- t(0.90, n - 1) * sqrt(tau^2 (1 + 1/n) + sigma^2),    n sources,
the textbook prediction interval of a new source mean (the t quantile for n - 1 degrees of freedom: Higgins et al.
use n - 2, wider still) with the scatter of a row about its source's mean added. With 3-4 sources per regime the
interval is wide; narrower ones (percentiles of the rows, or of sources weighted alike) held 2 and 6 of the 12 blind
speedup rows of validation/BLIND_TEST.md, this one 8 (chosen after those counts were seen: not a blind check of the
choice).

A regime is (targets: dense or moe, batch band: 1-4, 5-32 or 33+, acceptance: given or assumed), where "given"
means the row (or the user) stated the acceptance length and "assumed" that the method's published default stood
in for it. A regime needs at least MIN_ROWS rows from at least MIN_SOURCES sources; a prediction whose own regime
has fewer takes the rows of its targets and batch band at either acceptance ("any"), and none beyond that: a band
borrowed from another batch band or target class would claim a check that was never made (the held-out dense
speedups, for one, are all at batch 1-4). The band says how wrong comparable predictions were, from a few dozen rows
of three or four sources at most: not a bound.
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
_NUMBERS = ("rows", "sources", "lo", "mid", "hi")
_SPREADS = ("tau", "sigma")
LEVEL = 0.80


@dataclass(frozen=True)
class Band:
    """The held-out ratios measured / predicted of one regime: its key, how many rows and sources it holds, the 80 %
    prediction interval (lo, hi) for a row of a new source about the grand mean (mid), and the two spreads of
    log(measured / predicted) it is made of: between sources (tau) and within a source (sigma)."""

    targets: str
    batch: str
    acceptance: str
    rows: int
    sources: int
    lo: float
    mid: float
    hi: float
    tau: float
    sigma: float

    @property
    def regime(self) -> str:
        """The regime in words: 'moe targets, batch 5-32, acceptance given'."""
        return f"{self.targets} targets, batch {self.batch}, acceptance {self.acceptance}"

    def speedup_range(self, speedup: float) -> tuple[float, float]:
        """The 80 % range of the speedup a new source would measure, for a prediction."""
        return speedup * self.lo, speedup * self.hi

    def to_dict(self) -> dict[str, Any]:
        return {"regime": self.regime, "rows": self.rows, "sources": self.sources,
                "measured_over_predicted_lo": self.lo, "measured_over_predicted_mid": self.mid,
                "measured_over_predicted_hi": self.hi, "tau": self.tau, "sigma": self.sigma}


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


def interval(logs: np.ndarray, sources: Sequence[str]) -> tuple[float, float, float, float, float]:
    """(lo, mid, hi, tau, sigma): the LEVEL prediction interval, as ratios, of one row of a new source from the
    log ratios of rows of >= 2 sources (the module docstring's random-effects formula). sigma is 0 where every source
    holds one row (no scatter within a source to pool)."""
    from scipy.stats import t as student  # lazy: only the bands tool builds intervals

    names = sorted(set(sources))
    src = np.array([names.index(x) for x in sources])
    means = np.array([logs[src == i].mean() for i in range(len(names))])
    n, dof = len(names), len(logs) - len(names)
    tau = float(means.std(ddof=1))
    sigma = float(np.sqrt(np.sum((logs - means[src]) ** 2) / dof)) if dof > 0 else 0.0
    m = float(means.mean())
    half = float(student.ppf(0.5 + LEVEL / 2, n - 1)) * math.sqrt(tau ** 2 * (1 + 1 / n) + sigma ** 2)
    return math.exp(m - half), math.exp(m), math.exp(m + half), tau, sigma


def build_bands(records: Iterable[tuple[bool, float, bool, float, str]]) -> list[Band]:
    """Every regime with at least MIN_ROWS rows from MIN_SOURCES sources, from records (moe, batch, given, ratio
    measured / predicted, source id); the ratios must be finite and > 0 (ValueError naming the record otherwise)."""
    groups: dict[tuple[str, str, str], list[tuple[float, str]]] = {}
    for i, (moe, batch, given, ratio, src) in enumerate(records):
        if not (isinstance(ratio, float) and math.isfinite(ratio) and ratio > 0):
            raise ValueError(f"record {i} ({src}): ratio {ratio!r}; expected a finite number > 0")
        for key in _keys(moe, batch, given):
            groups.setdefault(key, []).append((math.log(ratio), src))
    out = []
    for key in sorted(groups):
        logs, srcs = np.array([x for x, _ in groups[key]]), [s for _, s in groups[key]]
        if logs.size >= MIN_ROWS and len(set(srcs)) >= MIN_SOURCES:
            out.append(Band(*key, int(logs.size), len(set(srcs)), *interval(logs, srcs)))
    return out


def to_toml(bands: Sequence[Band], header: str) -> str:
    """The bands file: `header` as comment lines, then one [[band]] table per regime."""
    lines = [f"# {x}".rstrip() for x in header.splitlines()]
    for b in bands:
        lines += ["", "[[band]]", f'targets = "{b.targets}"', f'batch = "{b.batch}"', f'acceptance = "{b.acceptance}"',
                  f"rows = {b.rows}", f"sources = {b.sources}", f"lo = {b.lo:.4f}", f"mid = {b.mid:.4f}",
                  f"hi = {b.hi:.4f}", f"tau = {b.tau:.4f}", f"sigma = {b.sigma:.4f}"]
    return "\n".join(lines) + "\n"


def _number(entry: dict[str, Any], f: str, where: str) -> None:
    """Refuse field f unless it is a positive integer (rows, sources), a finite number > 0 (the interval) or >= 0
    (the spreads)."""
    v, whole, zero = entry.get(f), f in ("rows", "sources"), f in _SPREADS
    kind = int if whole else (int, float)
    if isinstance(v, bool) or not isinstance(v, kind) or not math.isfinite(v) or v < 0 or (v == 0 and not zero):
        raise SpecError(f"{where}: {f} = {v!r}; expected {'an integer' if whole else 'a finite number'} "
                        f"{'>= 0' if zero else '> 0'}")


def _parse(entry: Any, where: str) -> Band:
    if not isinstance(entry, dict):
        raise SpecError(f"{where}: expected a table")
    extra = set(entry) - set(_FIELDS) - set(_NUMBERS) - set(_SPREADS)
    if extra:
        raise SpecError(f"{where}: unknown field {sorted(extra)[0]!r}; allowed: "
                        f"{', '.join([*_FIELDS, *_NUMBERS, *_SPREADS])}")
    for f, allowed in _FIELDS.items():
        if entry.get(f) not in allowed:
            raise SpecError(f"{where}: {f} = {entry.get(f)!r}; allowed: {', '.join(allowed)}")
    for f in (*_NUMBERS, *_SPREADS):
        _number(entry, f, where)
    if not entry["lo"] <= entry["mid"] <= entry["hi"]:
        raise SpecError(f"{where}: lo = {entry['lo']}, mid = {entry['mid']}, hi = {entry['hi']}; expected "
                        "lo <= mid <= hi")
    return Band(entry["targets"], entry["batch"], entry["acceptance"], int(entry["rows"]), int(entry["sources"]),
                *(float(entry[f]) for f in ("lo", "mid", "hi", *_SPREADS)))


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


__all__ = ["ACCEPTANCE", "ANY", "BANDS_FILE", "BATCHES", "Band", "LEVEL", "MIN_ROWS", "MIN_SOURCES", "TARGETS",
           "band_for", "batch_band", "build_bands", "interval", "load_bands", "to_toml"]
