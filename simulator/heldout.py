"""How far held-out published speedups fell from the prediction, by regime: the error band printed beside a curve.

Leave-one-source-out cross-validation (`specroof validate --cv source`) prices every published speedup row with
calibrated values that never saw its source. The ratio measured / predicted of those rows is what a user should
expect on a deployment specroof has not seen. `tools/heldout_bands.py` groups the ratios by regime and writes, per
regime, an 80 % prediction interval for one row of a source not among them to `calibration/heldout.toml`; `band_for`
finds the regime of a prediction there.

The unit a new deployment is drawn from is a source, not a row: one source's rows share its setup and its error
(validation/ACCURACY.md's bias per source), and the sources of a regime disagree by more than a source's rows scatter.
So the interval is that of a random-effects model of log(measured / predicted), y_sj = mu + u_s + e_sj with
u_s ~ N(0, tau^2) between sources and e_sj ~ N(0, sigma^2) within one (Higgins, Thompson & Spiegelhalter 2009,
J. R. Stat. Soc. A 172:137), estimated by moments from the n source means m_s of k_s rows each: their mean m and
variance s^2, sigma^2 pooled over the residuals about them, tau^2 = max(0, s^2 - sigma^2 mean(1/k_s)) (a source
mean carries sigma^2 / k_s of its rows' scatter). A row of a new source then varies about m by
    V = tau^2 + sigma^2 + s^2 / n,        interval m +- t(0.90, nu) sqrt(V),
nu the Welch-Satterthwaite degrees of freedom of V's two estimated parts (s^2 on n - 1, sigma^2 on its pooled rows
minus n). Narrower choices held fewer of the 12 blind speedup rows of validation/BLIND_TEST.md (percentiles of the
rows 3, of sources weighted alike 6); this one holds 8, a count seen when the method was chosen, so not a blind check
of the choice.

A regime is (targets: dense or moe, batch band: 1-4, 5-32 or 33+, acceptance: given or assumed), where "given"
means the row (or the user) stated the acceptance length and "assumed" that the method's published default stood
in for it. A regime needs at least MIN_ROWS rows from at least MIN_SOURCES sources (a source of one row counts: it is
one draw of a new source's error; the file lists each band's rows per source). A prediction whose own regime has too
few takes the band of its targets and batch band at either acceptance ("any"); a prediction with its acceptance
assumed takes the wider of that and the acceptance-given band (guessing the acceptance adds error, never removes
it). Nothing beyond: a band borrowed from another batch band or target class would claim a check that was never made
(the held-out dense speedups, for one, are all at batch 1-4). The band says how wrong comparable predictions were,
from a few dozen rows of three or four sources at most: not a bound.
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
_EDGES = ((1, 4), (5, 32), (33, math.inf))          # the batches of each of BATCHES
ANY = "any"
_KEYS = (("targets", TARGETS), ("batch", BATCHES), ("acceptance", (*ACCEPTANCE, ANY)))
_NUMBERS = ("rows", "sources", "lo", "mid", "hi")
_SPREADS = ("tau", "sigma")
_FIELDS = (*(k for k, _ in _KEYS), *_NUMBERS, *_SPREADS, "source_rows")
LEVEL = 0.80


@dataclass(frozen=True)
class Band:
    """The held-out ratios measured / predicted of one regime: its key, how many rows and sources it holds (and the
    rows of each source, most first), the 80 % prediction interval (lo, hi) for a row of a new source about the mean
    of the source means (mid), and the two spreads of log(measured / predicted) it is made of: between sources (tau)
    and within a source (sigma)."""

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
    source_rows: tuple[int, ...] = ()

    @property
    def regime(self) -> str:
        """The regime in words: 'moe targets, batch 5-32, acceptance given'."""
        return f"{self.targets} targets, batch {self.batch}, acceptance {self.acceptance}"

    def speedup_range(self, speedup: float, ceiling: float = math.inf) -> tuple[float, float]:
        """The 80 % range of the speedup a new source would measure, for a prediction, at most `ceiling`: the tokens
        per step where the acceptance is given, since a speculative step costs at least a plain one (a verify pass
        reads what a decode pass reads, and the draft adds to it), so no run speeds up by more (found by review: a
        band of 1.04-3.01 at 2.82 tokens per step). With an assumed acceptance the true one is unknown, and the ceiling
        is the depth's k + 1 tokens per step, which every accepted path is within (found by review: 2.30 at k = 1)."""
        return min(speedup * self.lo, ceiling), min(speedup * self.hi, ceiling)

    def to_dict(self) -> dict[str, Any]:
        return {"regime": self.regime, "targets": self.targets, "batch_band": self.batch,
                "acceptance": self.acceptance, "rows": self.rows, "sources": self.sources,
                "source_rows": list(self.source_rows),
                "measured_over_predicted_lo": self.lo, "measured_over_predicted_mid": self.mid,
                "measured_over_predicted_hi": self.hi, "tau": self.tau, "sigma": self.sigma}


def speedup_ceiling(tokens_per_step: float | None, k: Any) -> float:
    """The most a speculative run can speed up (Band.speedup_range's ceiling): the tokens per step of a given
    acceptance, else the k + 1 tokens any accepted path of depth k is within (inf where k is not a depth)."""
    if tokens_per_step is not None:
        return float(tokens_per_step)
    return k + 1.0 if isinstance(k, int) and not isinstance(k, bool) else math.inf


def batch_band(batch: float) -> str:
    """The batch band of a batch (or concurrency) >= 1 (ValueError otherwise)."""
    if not (math.isfinite(batch) and batch >= 1):
        raise ValueError(f"batch = {batch!r}; expected a finite number >= 1")
    return next(name for (_, top), name in zip(_EDGES, BATCHES) if batch <= top)


def _keys(moe: bool, batch: float, given: bool) -> list[tuple[str, str, str]]:
    """The regimes a row of (moe, batch, given) belongs to: its own and its targets and batch band at any acceptance."""
    t, b = TARGETS[moe], batch_band(batch)
    return [(t, b, ACCEPTANCE[not given]), (t, b, ANY)]


def band_for(bands: Sequence[Band], moe: bool, batch: float, given: bool) -> Band | None:
    """The band of a prediction's regime; else its targets and batch band at any acceptance, and for an assumed
    acceptance the wider of that and the acceptance-given band; None when the file holds none of them (no held-out
    published speedup is like it)."""
    by = {(x.targets, x.batch, x.acceptance): x for x in bands}
    own, pooled = _keys(moe, batch, given)
    if own in by:
        return by[own]
    cands = [by[k] for k in (pooled, (own[0], own[1], ACCEPTANCE[0])) if k in by and (k == pooled or not given)]
    return max(cands, key=lambda x: x.hi / x.lo, default=None)


def range_text(bands: Sequence[Band], moe: bool, given: bool, batches: Iterable[float]) -> list[str]:
    """One line per batch band the speculative `batches` fall in: what a new source measured against predictions like
    them (band_for), or that none is like them; [] without bands (no file to speak from). `curve` passes its
    speculating points, `advise` its evaluated batches."""
    if not bands:
        return []
    out = []
    for band in BATCHES:
        inside = sorted({int(b) for b in batches if batch_band(b) == band})
        if not inside:
            continue
        span = f"batch {inside[0]}" + (f"-{inside[-1]}" if len(inside) > 1 else "")
        x = band_for(bands, moe, inside[0], given)
        out.append(f"held out, {span}: no published speedup like it (unchecked there)" if x is None else
                   f"held out, {span} ({x.regime}; {x.rows} published speedups from {x.sources} sources, "
                   f"{'/'.join(map(str, x.source_rows))} rows, each priced without its source): a new source measures "
                   f"{x.lo:.2f}-{x.hi:.2f}x the prediction (80 % prediction interval, centre {x.mid:.2f}x; "
                   "simulator/heldout.py): how wrong comparable predictions were, not a bound (validation/"
                   "BLIND_TEST.md counts how many rows nobody fitted fell inside)")
    return out


def interval(logs: np.ndarray, sources: Sequence[str]) -> tuple[float, float, float, float, float]:
    """(lo, mid, hi, tau, sigma): the LEVEL prediction interval, as ratios, of one row of a new source from the
    log ratios of rows of >= 2 sources (the module docstring's random-effects model, by moments). sigma is 0 where
    every source holds one row (no scatter within a source to pool): tau then carries all of it."""
    from scipy.stats import t as student  # lazy: only the bands tool builds intervals

    names = sorted(set(sources))
    if len(names) < 2:
        raise ValueError(f"{len(names)} source(s); an interval for a new source needs at least 2")
    idx = {x: i for i, x in enumerate(names)}
    src = np.array([idx[x] for x in sources])
    k = np.bincount(src).astype(float)
    means = np.bincount(src, weights=logs) / k
    n, dof = len(names), len(logs) - len(names)
    s2 = float(means.var(ddof=1))
    sig2 = float(np.sum((logs - means[src]) ** 2) / dof) if dof > 0 else 0.0
    tau2 = max(0.0, s2 - sig2 * float(np.mean(1.0 / k)))
    a, b = (s2 * (1 + 1 / n), sig2 * (1 - float(np.mean(1.0 / k)))) if tau2 > 0 else (s2 / n, sig2)
    nu = (a + b) ** 2 / (a * a / (n - 1) + (b * b / dof if dof > 0 else 0.0)) if a + b > 0 else n - 1.0
    half = float(student.ppf(0.5 + LEVEL / 2, nu)) * math.sqrt(a + b)
    m = float(means.mean())
    return math.exp(m - half), math.exp(m), math.exp(m + half), math.sqrt(tau2), math.sqrt(sig2)


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
            per = tuple(sorted((srcs.count(x) for x in set(srcs)), reverse=True))
            out.append(Band(*key, int(logs.size), len(per), *interval(logs, srcs), source_rows=per))
    return out


def to_toml(bands: Sequence[Band], header: str) -> str:
    """The bands file: `header` as comment lines, then one [[band]] table per regime."""
    lines = [f"# {x}".rstrip() for x in header.splitlines()]
    for b in bands:
        lines += ["", "[[band]]", f'targets = "{b.targets}"', f'batch = "{b.batch}"', f'acceptance = "{b.acceptance}"',
                  f"rows = {b.rows}", f"sources = {b.sources}", f"lo = {b.lo:.4f}", f"mid = {b.mid:.4f}",
                  f"hi = {b.hi:.4f}", f"tau = {b.tau:.4f}", f"sigma = {b.sigma:.4f}",
                  f"source_rows = [{', '.join(map(str, b.source_rows))}]"]
    return "\n".join(lines) + "\n"


def _number(entry: dict[str, Any], f: str, where: str) -> None:
    """Refuse field f unless it is an integer >= 2 (sources: an interval needs two), >= 1 (rows), a finite number > 0
    (the interval) or >= 0 (the spreads)."""
    lo = {"sources": 2, "rows": 1}.get(f)
    zero = f in _SPREADS
    if f not in entry:
        raise SpecError(f"{where}: {f} missing; expected {'an integer' if lo else 'a finite number'}")
    v = entry[f]
    bad = isinstance(v, bool) or not isinstance(v, int if lo else (int, float)) or not math.isfinite(v)
    if bad or v < (lo or 0) or (v == 0 and not zero):
        raise SpecError(f"{where}: {f} = {v!r}; expected " + (f"an integer >= {lo}" if lo else
                                                               f"a finite number {'>= 0' if zero else '> 0'}"))


def _source_rows(entry: dict[str, Any], where: str) -> tuple[int, ...]:
    """The optional rows per source: positive integers, one per source, summing to rows."""
    v = entry.get("source_rows", None)
    if v is None:
        return ()
    ok = isinstance(v, list) and all(isinstance(x, int) and not isinstance(x, bool) and x >= 1 for x in v)
    if not ok or len(v) != entry["sources"] or sum(v) != entry["rows"]:
        raise SpecError(f"{where}: source_rows = {v!r}; expected {entry['sources']} integers >= 1 summing to rows = "
                        f"{entry['rows']}")
    return tuple(v)


def _parse(entry: Any, where: str) -> Band:
    if not isinstance(entry, dict):
        raise SpecError(f"{where}: expected a table, found {entry!r}")
    extra = set(entry) - set(_FIELDS)
    if extra:
        raise SpecError(f"{where}: unknown field {sorted(extra)[0]!r}; allowed: {', '.join(_FIELDS)}")
    for f, allowed in _KEYS:
        if entry.get(f) not in allowed:
            got = f"{f} = {entry[f]!r}" if f in entry else f"{f} missing"
            raise SpecError(f"{where}: {got}; allowed: {', '.join(allowed)}")
    for f in (*_NUMBERS, *_SPREADS):
        _number(entry, f, where)
    if not entry["lo"] <= entry["mid"] <= entry["hi"]:
        raise SpecError(f"{where}: lo = {entry['lo']}, mid = {entry['mid']}, hi = {entry['hi']}; expected "
                        "lo <= mid <= hi")
    return Band(entry["targets"], entry["batch"], entry["acceptance"], int(entry["rows"]), int(entry["sources"]),
                *(float(entry[f]) for f in ("lo", "mid", "hi", *_SPREADS)), source_rows=_source_rows(entry, where))


def load_bands(path: str | Path | None = None) -> tuple[Band, ...]:
    """The bands of `path` (default: the shipped calibration/heldout.toml; () when it is absent). A malformed file or
    entry is a SpecError naming the file, the entry, the field, its value and what was allowed; so is a file that
    holds no band (the tool never writes one: it is damaged)."""
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
    entries = doc.get("band")
    if not isinstance(entries, list) or not entries:
        raise SpecError(f"{path}: band = {entries!r}; expected one or more [[band]] tables")
    out = [_parse(e, f"{path}: band {i + 1}") for i, e in enumerate(entries)]
    first: dict[tuple[str, str, str], int] = {}
    for i, b in enumerate(out):
        key = (b.targets, b.batch, b.acceptance)
        if key in first:
            raise SpecError(f"{path}: bands {first[key] + 1} and {i + 1} are both regime {'/'.join(key)}; expected "
                            "one band per regime")
        first[key] = i
    return tuple(out)


__all__ = ["ACCEPTANCE", "ANY", "BANDS_FILE", "BATCHES", "Band", "LEVEL", "MIN_ROWS", "MIN_SOURCES", "TARGETS",
           "band_for", "batch_band", "build_bands", "interval", "load_bands", "range_text", "speedup_ceiling",
           "to_toml"]
