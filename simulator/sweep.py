"""Parameter sweeps: the Cartesian product of hardware x model x method x ... x acceptance x context x batch, priced
once per (configuration, k, context) cell and combined for every acceptance value and batch in one numba kernel.

A sweep spec (TOML file or dict; see examples/sweep_standard.toml) gives each parameter as a scalar, a list, or an
inclusive range table `{start, stop, step}` (arithmetic, decimal-safe for rates) or `{start, stop, mul}` (geometric);
`[[zip]]` groups pair parameters element by element (e.g. a method with its acceptance). Parameters, with the
defaults of `speedup_curve`:

    hardware, model, method, draft, precision, draft_precision, kv_precision, tp, ep, engine, overlap,
    draft_kv_window, k_max, k (an integer, or "auto" for the best depth per point), acceptance_rate or
    acceptance_length (with the acceptance_k it was measured at; none: the method's published default),
    context, batch

`"default"` stands for None (the library default) in draft, draft_precision, kv_precision and draft_kv_window.

Evaluation (no Python work per point). Grid dimensions, outermost first: the swept configuration parameters and zip
groups, k and context (together: the *cells*), then acceptance, then batch. Step times do not depend on acceptance,
so every cell is priced once over the whole batch axis through the library's own functions (`price_pass`,
`speedup._spec_parts`, `memory_use`, `make_drafter`, `forward_pass`; base steps over all contexts of a configuration
in one `price_pass` call); `simulator._sweep_kernels` then forms tokens x base / spec for every acceptance value, and
with k = "auto" picks the best depth per point exactly as `speedup_curve` does. A configuration that `speedup_curve`
rejects (tp not dividing the heads, a precision the chip lacks, MTP on a model without MTP modules, ...) is kept,
infeasible, with the error as its message.

Results: `run_sweep(spec)` returns an xarray Dataset whose dimensions are the swept parameters (fields that do not
depend on a dimension do not carry it: with a fixed k the step times have no acceptance dimension; `to_dataframe()`
broadcasts). `sweep_to_dir(spec, DIR)` writes DIR/manifest.json (spec, hash, version, shard count), one Parquet file
per shard DIR/shards/shard-I-of-N.parquet (one row per point) and, when all shards are there, DIR/sweep.parquet.
Shards are contiguous blocks of cells (I counts from 0), so `--shard I/N` job arrays cover the grid exactly once;
every file is written to a temporary name and renamed, and a rerun skips shards whose file exists and validates.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from decimal import ROUND_FLOOR, Decimal
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

from .acceptance import Acceptance, expected_tokens_iid
from .errors import ModelConfigError, ScenarioError, SpecError
from .methods import METHODS
from .units import DTYPE_BYTES

USER_ERRORS = (ScenarioError, SpecError, ModelConfigError)

# Parameters in grid order (outermost first); acceptance_rate / acceptance_length and batch always come last.
PARAMS: tuple[str, ...] = ("hardware", "model", "method", "draft", "precision", "draft_precision", "kv_precision",
                           "tp", "ep", "engine", "overlap", "draft_kv_window", "k_max", "k", "acceptance_k",
                           "context", "acceptance_rate", "acceptance_length", "batch")
# Parameters that change how a pass is priced (a "configuration"); k and context vary inside one.
CONFIG_PARAMS: tuple[str, ...] = ("hardware", "model", "method", "draft", "precision", "draft_precision",
                                  "kv_precision", "tp", "ep", "engine", "overlap", "draft_kv_window", "k_max")
ACCEPTANCE = ("acceptance_rate", "acceptance_length")
DEFAULTS: dict[str, Any] = {
    "hardware": "h100-sxm", "model": "llama-3.1-8b", "method": "eagle3", "draft": "default", "precision": "bf16",
    "draft_precision": "default", "kv_precision": "default", "tp": 1, "ep": 1, "engine": "sglang", "overlap": "default",
    "draft_kv_window": "default", "k_max": 8, "k": 3, "context": 1024, "batch": [1, 2, 4, 8, 16, 32, 64, 128, 256]}
META_KEYS = ("description", "zip")
MAX_AXIS = 1 << 24                 # values per range (a guard against typos like stop = 1e12)
SHARD_POINTS = 1 << 21             # default points per shard when none is given (bounds memory per shard)
ROW_GROUP_ROWS = 1 << 19           # rows per Parquet row group (bounds the flattened columns in memory)
FORMAT = "specroof-sweep/1"
STRING_PARAMS = ("hardware", "model", "method", "draft", "precision", "draft_precision", "kv_precision", "engine",
                 "overlap")


def _err(key: str, msg: str) -> SpecError:
    return SpecError(f"sweep spec: {key}: {msg}")


# ---- spec parsing -----------------------------------------------------------------------------------------------

def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)


def _check_value(key: str, v: Any) -> Any:
    """One value of parameter `key`, type- and range-checked; returns the normalized value."""
    if key in ("hardware", "model", "engine"):
        if not isinstance(v, str) or not v:
            raise _err(key, f"{v!r} is not a name (expected a string)")
        return v
    if key == "method":
        if v not in METHODS:
            raise _err(key, f"{v!r} is not a method; expected one of {', '.join(METHODS)}")
        return v
    if key == "draft":
        if not isinstance(v, str) or not v:
            raise _err(key, f"{v!r} is not a model id or path (or \"default\")")
        return v
    if key in ("precision", "draft_precision", "kv_precision"):
        ok = isinstance(v, str) and (v in DTYPE_BYTES or (v == "default" and key != "precision"))
        if not ok:
            extra = ' or "default"' if key != "precision" else ""
            raise _err(key, f"{v!r} is not a format; expected one of {', '.join(DTYPE_BYTES)}{extra}")
        return v
    if key == "overlap":
        if v in ("default", "max", "sum"):
            return v
        from .roofline import overlap_eta
        try:
            return repr(overlap_eta(v))
        except ScenarioError:
            raise _err(key, f"{v!r}; expected \"default\" (the engine's), \"max\", \"sum\" or a number in [0, 1]") \
                from None
    if key == "k":
        if v == "auto":
            return v
        if not _is_int(v) or v < 0:
            raise _err(key, f"{v!r}; expected an integer >= 0 or \"auto\"")
        return int(v)
    if key == "draft_kv_window":
        if v == "default":
            return v
        if not _is_int(v) or v < 1:
            raise _err(key, f"{v!r}; expected an integer >= 1 or \"default\"")
        return int(v)
    if key in ("tp", "ep", "k_max", "acceptance_k", "batch"):
        if not _is_int(v) or v < 1:
            raise _err(key, f"{v!r}; expected an integer >= 1")
        return int(v)
    if key == "context":
        if not _is_int(v) or v < 0:
            raise _err(key, f"{v!r}; expected an integer >= 0")
        return int(v)
    if key == "acceptance_rate":
        if not _is_num(v) or not 0.0 <= float(v) < 1.0:
            raise _err(key, f"{v!r}; expected a number in [0, 1)")
        return float(v)
    if key == "acceptance_length":
        if not _is_num(v) or not float(v) >= 1.0:
            raise _err(key, f"{v!r}; expected a number >= 1 (tokens per step, bonus included)")
        return float(v)
    raise _err(key, "unknown parameter")  # pragma: no cover


def _dec(key: str, name: str, v: Any) -> Decimal:
    if not _is_num(v) or not math.isfinite(float(v)):
        raise _err(key, f"range {name} = {v!r} is not a number")
    return Decimal(repr(float(v))) if isinstance(v, (float, np.floating)) else Decimal(int(v))


def _expand_range(key: str, r: dict[str, Any]) -> list[Any]:
    """Inclusive range {start, stop, step} or {start, stop, mul}; decimal arithmetic, so 0.5..0.99 step 0.01 gives
    exactly the 50 floats 0.5, 0.51, ..., 0.99."""
    bad = set(r) - {"start", "stop", "step", "mul"}
    if bad:
        raise _err(key, f"unknown range key(s) {sorted(bad)}; expected start, stop and step or mul")
    for need in ("start", "stop"):
        if need not in r:
            raise _err(key, f"range needs {need!r}")
    if "step" in r and "mul" in r:
        raise _err(key, "range takes step or mul, not both")
    ints = key not in ACCEPTANCE
    for name in ("start", "stop", "step"):
        if name in r and ints and not _is_int(r[name]):
            raise _err(key, f"range {name} = {r[name]!r}; expected an integer")
    start, stop = _dec(key, "start", r["start"]), _dec(key, "stop", r["stop"])
    if stop < start:
        raise _err(key, f"empty range: stop {r['stop']!r} < start {r['start']!r}")
    out: list[Decimal] = []
    if "mul" in r:
        mul = _dec(key, "mul", r["mul"])
        if mul <= 1:
            raise _err(key, f"range mul = {r['mul']!r}; expected a number > 1")
        if start <= 0:
            raise _err(key, f"geometric range needs start > 0, got {r['start']!r}")
        v = start
        while v <= stop:
            out.append(v)
            if len(out) > MAX_AXIS:
                raise _err(key, f"range has more than {MAX_AXIS} values")
            v = v * mul
    else:
        step = _dec(key, "step", r.get("step", 1))
        if step <= 0:
            raise _err(key, f"range step = {r.get('step')!r}; expected a number > 0")
        n = int(((stop - start) / step).to_integral_value(rounding=ROUND_FLOOR)) + 1
        if n > MAX_AXIS:
            raise _err(key, f"range has {n} values (more than {MAX_AXIS})")
        out = [start + i * step for i in range(n)]
    if ints:
        if any(v != v.to_integral_value() for v in out):
            raise _err(key, "range gives non-integer values")
        return [int(v) for v in out]
    return [float(v) for v in out]


def _values(key: str, raw: Any, unique: bool = True) -> tuple[list[Any], bool]:
    """(values, given as a list or range) for a parameter's raw spec entry; `unique`: no value twice (a dimension's
    labels)."""
    if isinstance(raw, dict):
        vals, listed = _expand_range(key, raw), True
    elif isinstance(raw, (list, tuple)):
        vals, listed = list(raw), True
        if not vals:
            raise _err(key, "empty list")
    else:
        vals, listed = [raw], False
    vals = [_check_value(key, v) for v in vals]
    if unique and len(set(map(repr, vals))) != len(vals):
        raise _err(key, "repeated values")
    return vals, listed


@dataclass(frozen=True)
class Axis:
    """One grid dimension: a parameter, or a zip group of parameters that vary together."""

    name: str
    params: tuple[str, ...]
    values: dict[str, tuple]

    @property
    def n(self) -> int:
        return len(next(iter(self.values.values())))


@dataclass(frozen=True)
class SweepSpec:
    """A validated sweep: scalars (every parameter not swept), axes in grid order and the grid's shape.

    cell_axes : the axes before acceptance and batch; acc_axis : the acceptance axis (None when the rate or length is a
    scalar, zipped, or the method's default); batch : the batch sizes; auto : k = "auto".
    """

    scalars: dict[str, Any]
    cell_axes: tuple[Axis, ...]
    acc_axis: Axis | None
    batch: tuple[int, ...]
    batch_listed: bool
    description: str = ""
    normalized: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    # -- shape -----------------------------------------------------------------------------------------------
    @property
    def auto(self) -> bool:
        return self.scalars.get("k") == "auto"

    @property
    def acceptance_param(self) -> str | None:
        for p in ACCEPTANCE:
            if p in self.scalars or any(p in a.params for a in self.axes):
                return p
        return None

    @property
    def axes(self) -> tuple[Axis, ...]:
        return self.cell_axes + ((self.acc_axis,) if self.acc_axis else ())

    @property
    def cell_shape(self) -> tuple[int, ...]:
        return tuple(a.n for a in self.cell_axes)

    @property
    def n_cells(self) -> int:
        return int(np.prod(self.cell_shape, dtype=np.int64))

    @property
    def n_acc(self) -> int:
        return self.acc_axis.n if self.acc_axis else 1

    @property
    def points_per_cell(self) -> int:
        return self.n_acc * len(self.batch)

    @property
    def n_points(self) -> int:
        return self.n_cells * self.points_per_cell

    @property
    def dims(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.axes) + (("batch",) if self.batch_listed else ())

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(a.n for a in self.axes) + ((len(self.batch),) if self.batch_listed else ())

    @property
    def spec_hash(self) -> str:
        return hashlib.sha256(json.dumps(self.normalized, sort_keys=True, separators=(",", ":"))
                              .encode()).hexdigest()

    def default_shards(self) -> int:
        return max(1, min(self.n_cells, -(-self.n_points // SHARD_POINTS)))

    # -- cells -----------------------------------------------------------------------------------------------
    def cell_values(self, c0: int, c1: int) -> list[dict[str, Any]]:
        """Parameter values of cells c0..c1-1 (flat C-order index over the cell axes), scalars included."""
        cells = np.arange(c0, c1, dtype=np.int64)
        shape = self.cell_shape
        idx = np.unravel_index(cells, shape) if shape else ()
        out = []
        cols = [(a, ix.tolist()) for a, ix in zip(self.cell_axes, idx)]
        for i in range(c1 - c0):
            d = dict(self.scalars)
            for a, ix in cols:
                for p in a.params:
                    d[p] = a.values[p][ix[i]]
            out.append(d)
        return out


def _names_exist(key: str, vals: Iterable[str]) -> None:
    """Unknown hardware / model / engine / draft names fail before any work, naming the key."""
    for v in vals:
        if key == "draft" and v == "default":
            continue
        try:
            _load(key, v)
        except USER_ERRORS as e:
            raise _err(key, str(e)) from None


def parse_spec(doc: dict[str, Any], source: str = "") -> SweepSpec:
    """Validate a sweep spec (the parsed TOML) into a SweepSpec; errors name the offending key. No work is done."""
    if not isinstance(doc, dict):
        raise SpecError(f"sweep spec{source}: expected a table of parameters, got {type(doc).__name__}")
    for k in doc:
        if k not in PARAMS and k not in META_KEYS:
            from .data import suggest
            raise SpecError(f"sweep spec: unknown key {k!r}{suggest(k, list(PARAMS))}; expected some of "
                            f"{', '.join(PARAMS + META_KEYS)}")
    desc = doc.get("description", "")
    if not isinstance(desc, str):
        raise _err("description", f"{desc!r} is not a string")
    scalars: dict[str, Any] = {}
    single: dict[str, list[Any]] = {}
    for k in PARAMS:
        if k in doc:
            vals, listed = _values(k, doc[k])
            if listed:
                single[k] = vals
            else:
                scalars[k] = vals[0]
    zips = doc.get("zip", [])
    if isinstance(zips, dict):
        zips = [zips]
    if not isinstance(zips, list) or not all(isinstance(z, dict) for z in zips):
        raise _err("zip", "expected [[zip]] tables of equal-length lists")
    zaxes: list[tuple[int, Axis]] = []
    seen: dict[str, str] = {}
    for zi, z in enumerate(zips):
        name = z.get("name", f"zip{zi}")
        if not isinstance(name, str) or not name or name in PARAMS:
            raise _err("zip.name", f"{name!r}; expected a new dimension name (not a parameter)")
        members = [k for k in z if k != "name"]
        for k in members:
            if k not in PARAMS:
                from .data import suggest
                raise _err(f"zip.{k}", f"unknown parameter{suggest(k, list(PARAMS))}")
            if k == "batch":
                raise _err("zip.batch", "batch cannot be zipped (it is the innermost dimension)")
            if k in doc or k in seen:
                raise _err(f"zip.{k}", "given twice (top level or another zip group)")
            seen[k] = name
        if len(members) < 2:
            raise _err(f"zip {name!r}", "a zip group pairs at least two parameters")
        vals = {}
        for k in members:
            v, listed = _values(k, z[k], unique=False)
            if not listed:
                raise _err(f"zip.{k}", f"{z[k]!r} is a scalar; a zip group needs lists of equal length")
            vals[k] = v
        lens = {k: len(v) for k, v in vals.items()}
        if len(set(lens.values())) != 1:
            raise _err(f"zip {name!r}", f"lists of different lengths {lens}")
        rows = list(zip(*(map(repr, vals[k]) for k in members)))
        if len(set(rows)) != len(rows):
            raise _err(f"zip {name!r}", "repeated combinations")
        order = sorted(members, key=PARAMS.index)
        zaxes.append((PARAMS.index(order[0]), Axis(name, tuple(order), {k: tuple(vals[k]) for k in order})))
    names = [a.name for _, a in zaxes]
    if len(set(names)) != len(names):
        raise _err("zip.name", f"repeated names {names}")
    every = {**scalars, **single, **{k: None for _, a in zaxes for k in a.params}}

    # Acceptance.
    given = [p for p in ACCEPTANCE if p in every]
    if len(given) > 1:
        raise _err("acceptance_length", "give acceptance_rate or acceptance_length, not both")
    if "acceptance_length" in every and "acceptance_k" not in every:
        raise _err("acceptance_length", "needs acceptance_k, the k it was measured at")
    if "acceptance_k" in every and "acceptance_length" not in every:
        raise _err("acceptance_k", "applies only with acceptance_length")
    if "acceptance_length" in every:
        zipped = next((a for _, a in zaxes if "acceptance_length" in a.params), None)
        if zipped is not None and "acceptance_k" in zipped.params:
            pairs = list(zip(zipped.values["acceptance_length"], zipped.values["acceptance_k"]))
        else:
            taus = zipped.values["acceptance_length"] if zipped else single.get(
                "acceptance_length", [scalars.get("acceptance_length")])
            kz = next((a.values["acceptance_k"] for _, a in zaxes if "acceptance_k" in a.params), None)
            k0s = kz or single.get("acceptance_k") or [scalars["acceptance_k"]]
            pairs = [(max(taus), min(k0s))]
        for tau, k0 in pairs:
            if tau > k0 + 1:
                raise _err("acceptance_length", f"tau = {tau:g} exceeds acceptance_k + 1 = {k0 + 1} (a chain of "
                           f"{k0} drafts yields at most {k0 + 1} tokens per step)")
    # k.
    if "k" in single and "auto" in single["k"] or any("k" in a.params and "auto" in a.values["k"] for _, a in zaxes):
        raise _err("k", "\"auto\" is a scalar setting (k = \"auto\"); a list of k takes integers")
    for key in ("hardware", "model", "engine", "draft"):
        vals = single.get(key) or next((list(a.values[key]) for _, a in zaxes if key in a.params), None) \
            or ([scalars[key]] if key in scalars else [])
        _names_exist(key, vals)
    if "batch" in single:
        batch, batch_listed = single.pop("batch"), True
    else:
        batch = [scalars.pop("batch")] if "batch" in scalars else list(DEFAULTS["batch"])
        batch_listed = "batch" not in doc
    for k, v in DEFAULTS.items():
        if k != "batch" and k not in every:
            scalars[k] = v
    # Axes in grid order: single parameters and zip groups by their first member, acceptance last.
    items: list[tuple[int, Axis]] = [(PARAMS.index(k), Axis(k, (k,), {k: tuple(v)})) for k, v in single.items()
                                     if k not in ACCEPTANCE] + zaxes
    items.sort(key=lambda t: t[0])
    acc_axis = next((Axis(k, (k,), {k: tuple(single[k])}) for k in ACCEPTANCE if k in single), None)
    axes = tuple(a for _, a in items)
    norm = {"format": FORMAT, "scalars": dict(sorted(scalars.items())),
            "axes": [{"name": a.name, "values": {k: list(a.values[k]) for k in a.params}} for a in axes]
            + ([{"name": acc_axis.name, "values": {acc_axis.name: list(acc_axis.values[acc_axis.name])}}]
               if acc_axis else []), "batch": list(batch), "batch_listed": batch_listed}
    spec = SweepSpec(scalars=scalars, cell_axes=axes, acc_axis=acc_axis, batch=tuple(batch),
                     batch_listed=batch_listed, description=desc, normalized=norm)
    if spec.n_points > 1 << 62:
        raise SpecError(f"sweep spec: the grid has {spec.n_points:.3g} points; too many")
    return spec


def load_spec(source: "SweepSpec | dict[str, Any] | str | os.PathLike[str]") -> SweepSpec:
    """A SweepSpec from a TOML path, a dict (the parsed TOML) or a SweepSpec."""
    if isinstance(source, SweepSpec):
        return source
    if isinstance(source, dict):
        return parse_spec(source)
    from .data import read_toml
    path = Path(source)
    return parse_spec(read_toml(path), f" {path}")


# ---- evaluation -------------------------------------------------------------------------------------------------

@dataclass
class ShardResult:
    """Arrays of cells c0..c1-1. `fields[name] = (level, array)`: level "point" (n_cell, NA, NB), "cell_batch"
    (n_cell, NB) or "cell_acc" (n_cell, NA). message codes index `messages` ('' = feasible)."""

    spec: SweepSpec
    c0: int
    c1: int
    fields: dict[str, tuple[str, np.ndarray]]
    messages: list[str]


class _Messages:
    def __init__(self) -> None:
        self.table: list[str] = [""]
        self.index: dict[str, int] = {"": 0}

    def code(self, msg: str) -> int:
        i = self.index.get(msg)
        if i is None:
            i = self.index[msg] = len(self.table)
            self.table.append(msg)
        return i


@dataclass
class _Resolved:
    """Everything `speedup_curve` resolves for one configuration before it prices."""

    dep: Any            # speedup.Deployment
    kmax_eff: int

    def __getattr__(self, name: str) -> Any:   # hw, eng, target, p, par, drafter, tops, overlap
        return getattr(self.dep, name)


def _load(kind: str, name: str, loaded: dict[tuple[str, str], Any] | None = None) -> Any:
    """The bundled (or path-given) hardware, engine or model; `loaded` (owned by the caller, e.g. one shard's
    _Cache) keeps each file read once per run."""
    key = (kind, name)
    if loaded is not None and key in loaded:
        return loaded[key]
    from .engine import load_engine
    from .hardware import load_hardware
    from .model import load_model
    obj = {"hardware": load_hardware, "engine": load_engine, "model": load_model, "draft": load_model}[kind](name)
    if loaded is not None:
        loaded[key] = obj
    return obj


class _Cache:
    def __init__(self) -> None:
        self.loaded: dict[tuple[str, str], Any] = {}
        self.acc: dict[tuple, Acceptance] = {}
        self.tokens: dict[tuple, np.ndarray] = {}


def _kernel_threads() -> int:
    from ._sweep_kernels import pool_threads
    return pool_threads()


def _none(v: Any) -> Any:
    return None if v == "default" else v


def _overlap(v: str) -> str | float | None:
    """Spec overlap value -> speedup_curve's: "default" is the engine's calibrated value (None)."""
    return None if v == "default" else (v if v in ("max", "sum") else float(v))


def _resolve(d: dict[str, Any], cache: _Cache, default_acceptance: bool) -> _Resolved:
    """speedup_curve's checks and resolution (speedup.resolve_deployment); raises what it raises."""
    from .speedup import resolve_deployment
    dep = resolve_deployment(
        _load("hardware", d["hardware"], cache.loaded), _load("model", d["model"], cache.loaded), d["method"],
        _none(d["draft"]), d["tp"], d["ep"], d["precision"], _none(d["draft_precision"]), _none(d["kv_precision"]),
        None, _load("engine", d["engine"], cache.loaded), _none(d["draft_kv_window"]), _overlap(d["overlap"]))
    if default_acceptance:
        from .speedup import default_acceptance as published
        published(d["method"])        # raises for a method without a published acceptance
    return _Resolved(dep, min(d["k_max"], dep.drafter.n_heads_max))


def _acceptances(spec: SweepSpec, d: dict[str, Any], cache: _Cache) -> list[Acceptance]:
    """The Acceptance of each acceptance index for a cell (its own zipped/scalar value or the method default)."""
    from .speedup import default_acceptance
    if spec.acc_axis is not None:
        p = spec.acc_axis.name
        vals = spec.acc_axis.values[p]
    elif "acceptance_rate" in d:
        p, vals = "acceptance_rate", (d["acceptance_rate"],)
    elif "acceptance_length" in d:
        p, vals = "acceptance_length", (d["acceptance_length"],)
    else:
        key = ("default", d["method"])
        if key not in cache.acc:
            cache.acc[key] = default_acceptance(d["method"])   # raises for methods without a published one
        return [cache.acc[key]]
    out = []
    for v in vals:
        key = (p, v, d.get("acceptance_k"))
        if key not in cache.acc:
            cache.acc[key] = Acceptance.from_rate(v) if p == "acceptance_rate" else \
                Acceptance.from_length(v, d["acceptance_k"])
        out.append(cache.acc[key])
    return out


def _tokens(accs: list[Acceptance], ks: tuple[int, ...], cache: _Cache, method: str = "") -> np.ndarray:
    """(NA, C) expected tokens per step (speedup.expected_tokens_for); i.i.d. chains in one vectorized call."""
    from .speedup import expected_tokens_for, verify_shape
    key = (tuple(accs), ks, method)
    t = cache.tokens.get(key)
    if t is None:
        shapes = [verify_shape(method, k) for k in ks]
        if any(T != k + 1 for k, (T, _) in zip(ks, shapes)):
            t = np.array([[expected_tokens_for(a, k, T, w) for k, (T, w) in zip(ks, shapes)] for a in accs],
                         dtype=np.float64)
        elif all(a.kind == "iid" for a in accs):
            t = expected_tokens_iid(np.array([a.alpha for a in accs])[:, None], np.array(ks, dtype=float)[None, :])
            t = np.ascontiguousarray(t, dtype=np.float64)
        else:
            t = np.array([[a.expected_tokens(k) for k in ks] for a in accs], dtype=np.float64)
        cache.tokens[key] = t
    return t


class _Shard:
    """Builds the arrays of cells c0..c1-1: resolves and prices each configuration once, then combines."""

    def __init__(self, spec: SweepSpec, c0: int, c1: int) -> None:
        self.spec, self.c0, self.c1 = spec, c0, c1
        self.n = n = c1 - c0
        self.NA = NA = spec.n_acc
        self.B = np.asarray(spec.batch, dtype=np.float64)
        self.cells = spec.cell_values(c0, c1)
        self.msgs = _Messages()
        self.cache = _Cache()
        self.invalid = np.zeros(n, dtype=np.bool_)
        self.inv_code = np.zeros(n, dtype=np.int32)
        self.mem_code = np.zeros(n, dtype=np.int32)
        self.row_tmax = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
        self.alpha = np.full((n, NA), np.nan)
        self.priced: dict[int, tuple] = {}            # cell -> (group tables, context index, k indices)
        self.cand_k: dict[int, tuple[int, ...]] = {}  # cell -> candidate depths
        self.accs: dict[int, list[Acceptance]] = {}

    def bad(self, i: int, e: Exception) -> None:
        """Cell i is a configuration speedup_curve rejects: kept, infeasible, with the error as its message."""
        self.invalid[i] = True
        self.inv_code[i] = self.msgs.code(str(e))

    def price(self, pool: ThreadPoolExecutor | None) -> None:
        groups: dict[tuple, list[int]] = {}
        for i, d in enumerate(self.cells):
            groups.setdefault(tuple(d[p] for p in CONFIG_PARAMS), []).append(i)
        for members in groups.values():
            self._price_group(members, pool)

    def _price_group(self, members: list[int], pool: ThreadPoolExecutor | None) -> None:
        from .speedup import _Ctx, _spec_parts, base_step, speculative_memory, verify_shape
        from .step import price_pass
        cells, B, NB = self.cells, self.B, self.B.size
        try:
            R = _resolve(cells[members[0]], self.cache, self.spec.acceptance_param is None)
        except USER_ERRORS as e:
            for i in members:
                self.bad(i, e)
            return
        live = []
        for i in members:
            d = cells[i]
            try:
                self.accs[i] = _acceptances(self.spec, d, self.cache)
            except USER_ERRORS as e:
                self.bad(i, e)
                continue
            self.alpha[i] = [a.alpha for a in self.accs[i]]
            if self.spec.auto:
                self.cand_k[i] = tuple(range(1, R.kmax_eff + 1))
            elif d["k"] > R.drafter.n_heads_max:
                self.bad(i, ScenarioError(f"k = {d['k']} exceeds the {R.drafter.n_heads_max} Medusa heads of "
                                          f"{R.drafter.shape.name}"))
                continue
            else:
                self.cand_k[i] = (d["k"],)
            live.append(i)
        if not live:
            return
        Ls = np.array(sorted({cells[i]["context"] for i in live}), dtype=np.float64)
        Ks = sorted({k for i in live for k in self.cand_k[i]})
        hw, eng, drafter = R.hw, R.eng, R.drafter
        try:
            # Base step, speedup_curve's: plain decode (q = 1) with host overhead; all contexts in one call.
            bst = price_pass(R.tops, hw, eng, B[None, :], 1.0, Ls[:, None], "target", R.overlap)
            base_gpu = bst.total_s
            base = base_step(eng, base_gpu)
            # Speculative step per k over all contexts at once: speedup_curve's own _spec_parts with a column of
            # contexts. The roofline kernels release the GIL, so the depths run on a few threads.
            parts = np.empty((4, Ls.size, len(Ks), NB))
            ctx = _Ctx(hw=hw, eng=eng, target=R.target, drafter=drafter, par=R.par, tops=R.tops, B=B,
                       L=Ls[:, None], overlap=R.overlap)

            def one(jk: int) -> None:
                res = _spec_parts(ctx, Ks[jk], *verify_shape(drafter.method, Ks[jk]))
                for f in range(4):
                    parts[f, :, jk] = res[f]
            if pool is None or len(Ks) < 2:
                for jk in range(len(Ks)):
                    one(jk)
            else:
                list(pool.map(one, range(len(Ks))))
            # Memory with speculation, speedup_curve's: target weights, KV with the k + 1 lookahead, activations,
            # draft weights and draft KV; all contexts and depths in one call.
            T = np.array([verify_shape(drafter.method, k)[0] for k in Ks], dtype=np.float64)
            mem, total_mem, _ = speculative_memory(R.dep, B[None, None, :], T[None, :, None], Ls[:, None, None])
            fits = total_mem <= mem.capacity_bytes
        except USER_ERRORS as e:
            for i in live:
                self.bad(i, e)
            return
        m_code = self.msgs.code(f"does not fit with speculation: needs more than the {mem.capacity_bytes / 1e9:.1f}"
                                f" GB per GPU that {hw.name} x {eng.gpu_memory_fraction:g} gives (memory_bytes: "
                                "what it needs)")
        li = {float(L): j for j, L in enumerate(Ls)}
        ki = {k: j for j, k in enumerate(Ks)}
        tables = (base, parts, total_mem, fits, R)
        for i in live:
            self.priced[i] = (tables, li[float(cells[i]["context"])], [ki[k] for k in self.cand_k[i]])
            self.mem_code[i] = m_code
            if R.target.max_position:
                self.row_tmax[i] = R.target.max_position - cells[i]["context"]

    def combine(self, kernel: str) -> ShardResult:
        from ._sweep_kernels import KERNELS
        k_fixed, k_choose, k_gather, k_gather_acc = KERNELS[kernel]
        n, NA, NB = self.n, self.NA, self.B.size
        invalid = self.invalid
        C = max([len(v) for v in self.cand_k.values()] + [1])
        base = np.full((n, NB), np.nan)
        parts = np.full((4, n, C, NB), np.nan)
        mem = np.full((n, C, NB), np.nan)
        ok = np.zeros((n, C, NB), dtype=np.bool_)
        T = np.zeros((n, C), dtype=np.int64)
        n_cand = np.ones(n, dtype=np.int64)
        pos_code = np.zeros((n, C), dtype=np.int32)
        tokens = np.full((n, NA, C), np.nan)
        for i, (tables, jl, jks) in self.priced.items():
            gbase, gparts, gmem, gfits, R = tables
            ks = self.cand_k[i]
            nc = len(ks)
            base[i] = gbase[jl]
            parts[:, i, :nc] = gparts[:, jl, jks]
            mem[i, :nc] = gmem[jl, jks]
            ok[i, :nc] = gfits[jl, jks]
            from .speedup import verify_shape
            Tk = [verify_shape(R.drafter.method, k)[0] for k in ks]
            T[i, :nc] = Tk
            n_cand[i] = nc
            tokens[i, :, :nc] = _tokens(self.accs[i], ks, self.cache, R.drafter.method)
            L = self.cells[i]["context"]
            for c, t in enumerate(Tk):
                if R.target.max_position and L + t > R.target.max_position:
                    pos_code[i, c] = self.msgs.code(f"context {L} + {t} tokens exceeds {R.target.name}'s "
                                                    f"max_position_embeddings {R.target.max_position}")
        fields: dict[str, tuple[str, np.ndarray]] = {}
        speedup = np.empty((n, NA, NB))
        fields["speedup"] = ("point", speedup)
        if not self.spec.auto:
            # One candidate: everything but the speedup is independent of acceptance (tokens of batch).
            k_fixed(base, tokens, parts[3], speedup)
            pos_bad = (T[:, 0] > self.row_tmax) & ~invalid
            code = np.where(ok[:, 0], 0, self.mem_code[:, None])
            code = np.where(pos_bad[:, None], pos_code[:, :1], code)
            code = np.where(invalid[:, None], self.inv_code[:, None], code).astype(np.int32)
            fields["tokens_per_step"] = ("cell_acc", np.ascontiguousarray(tokens[:, :, 0]))
            fields["alpha"] = ("cell_acc", self.alpha)
            fields["base_step_s"] = ("cell_batch", base)
            for j, name in enumerate(("draft_s", "verify_s", "overhead_s", "spec_step_s")):
                fields[name] = ("cell_batch", np.ascontiguousarray(parts[j, :, 0]))
            fields["memory_bytes"] = ("cell_batch", np.ascontiguousarray(mem[:, 0]))
            fields["feasible"] = ("cell_batch", ok[:, 0] & ~pos_bad[:, None] & ~invalid[:, None])
            fields["message"] = ("cell_batch", code)
        else:
            choice = np.empty((n, NA, NB), dtype=np.int16)
            feasible = np.empty((n, NA, NB), dtype=np.bool_)
            code = np.empty((n, NA, NB), dtype=np.int32)
            k_choose(base, tokens, parts[3], ok, T, n_cand, self.row_tmax, invalid, self.mem_code, pos_code,
                     self.inv_code, speedup, choice, feasible, code)
            tok = np.empty((n, NA, NB))
            k_gather_acc(choice, tokens, tok)
            fields["tokens_per_step"] = ("point", tok)
            fields["alpha"] = ("cell_acc", self.alpha)
            fields["base_step_s"] = ("cell_batch", base)
            for j, name in enumerate(("draft_s", "verify_s", "overhead_s", "spec_step_s")):
                out = np.empty((n, NA, NB))
                k_gather(choice, parts[j], out)
                fields[name] = ("point", out)
            out = np.empty((n, NA, NB))
            k_gather(choice, mem, out)
            fields["memory_bytes"] = ("point", out)
            fields["feasible"] = ("point", feasible)
            fields["message"] = ("point", code)
            choice += 1                               # candidates are k = 1 .. k_max: index c is k = c + 1
            choice[invalid] = 0
            fields["k"] = ("point", choice)
        return ShardResult(self.spec, self.c0, self.c1, fields, self.msgs.table)


def evaluate(spec: SweepSpec, c0: int = 0, c1: int | None = None, kernel: str = "numba",
             threads: int | None = None) -> ShardResult:
    """Evaluate cells c0..c1-1 of the grid (all of it by default). kernel: "numba" or "reference" (the plain numpy
    combine); threads: Python threads pricing cells concurrently (default: numba's thread count where its
    threading layer is thread safe, else 1)."""
    c1 = spec.n_cells if c1 is None else c1
    if not 0 <= c0 <= c1 <= spec.n_cells:
        raise ScenarioError(f"cells {c0}..{c1} outside the grid's 0..{spec.n_cells}")
    sh = _Shard(spec, c0, c1)
    nthreads = threads if threads is not None else _kernel_threads()
    pool = ThreadPoolExecutor(nthreads) if nthreads > 1 and sh.n > 1 else None
    try:
        sh.price(pool)
    finally:
        if pool is not None:
            pool.shutdown()
    return sh.combine(kernel)


# ---- in memory: an xarray Dataset -------------------------------------------------------------------------------

_FIELD_ORDER = ("speedup", "k", "tokens_per_step", "alpha", "base_step_s", "spec_step_s", "draft_s", "verify_s",
                "overhead_s", "memory_bytes", "feasible", "message")
_ATTRS = {
    "speedup": "tokens_per_step * base_step_s / spec_step_s (speedup_curve)",
    "k": "draft depth chosen (k = auto) or given",
    "tokens_per_step": "expected tokens per sequence per speculative step, bonus included",
    "alpha": "i.i.d. per-token acceptance rate of the acceptance model (from a length: solved for it)",
    "base_step_s": "plain decode step, s", "spec_step_s": "speculative step, s", "draft_s": "draft passes, s",
    "verify_s": "verify pass, s", "overhead_s": "launch, host and bookkeeping overhead in the speculative step, s",
    "memory_bytes": "per-GPU memory with speculation, bytes", "feasible": "fits (and within the context limit)",
    "message": "why a point is infeasible ('' when feasible)"}


def to_dataset(res: ShardResult):
    """A labelled xarray Dataset of a whole-grid ShardResult (dimensions: the swept parameters)."""
    import pandas as pd
    import xarray as xr
    spec = res.spec
    if (res.c0, res.c1) != (0, spec.n_cells):
        raise ScenarioError("to_dataset needs the whole grid (evaluate(spec) with the default cell range)")
    cdims = [a.name for a in spec.cell_axes]
    cshape = list(spec.cell_shape)
    adims = [spec.acc_axis.name] if spec.acc_axis else []
    ashape = [spec.n_acc] if spec.acc_axis else []
    # A single batch value given as a scalar is a scalar coordinate, not a dimension of length 1.
    bdims, bshape = (["batch"], [len(spec.batch)]) if spec.batch_listed else ([], [])
    dims_of = {"point": cdims + adims + bdims, "cell_batch": cdims + bdims, "cell_acc": cdims + adims}
    shape_of = {"point": cshape + ashape + bshape, "cell_batch": cshape + bshape, "cell_acc": cshape + ashape}
    msg_table = np.array(res.messages, dtype=object)
    # Every Variable is built ready-made (fastpath) from plain numpy arrays, and every dimension coordinate from a
    # pandas Index: xarray's own conversion probes each array for dask and so imports dask (about 0.05 s of a
    # 1 s start) when it is installed.
    data = {}
    for name in _FIELD_ORDER:
        if name not in res.fields:
            continue
        level, arr = res.fields[name]
        arr = arr.reshape(shape_of[level])
        if name == "message":
            arr = msg_table[arr.ravel()].reshape(arr.shape)    # an array even at 0-d (msg_table[0-d] is a str)
        data[name] = xr.Variable(dims_of[level], arr, attrs={"description": _ATTRS[name]}, fastpath=True)

    def var(dims: tuple[str, ...], values: np.ndarray) -> Any:
        if len(dims) == 1 and values.ndim == 1:
            values = pd.Index(values, dtype=values.dtype, name=dims[0])
        return xr.Variable(dims, values, fastpath=True)
    coords: dict[str, Any] = {}
    for a in spec.axes:
        if len(a.params) == 1:
            coords[a.name] = var((a.name,), _coord_array(a.values[a.name]))
        else:
            coords[a.name] = var((a.name,), np.arange(a.n))
            for p in a.params:
                coords[p] = xr.Variable((a.name,), _coord_array(a.values[p]), fastpath=True)
    batch = np.asarray(spec.batch, dtype=np.int64)
    coords["batch"] = var(("batch",), batch) if spec.batch_listed else var((), np.asarray(batch[0]))
    for p, v in spec.scalars.items():
        if not (p == "k" and spec.auto):       # with k = "auto" the chosen k is a data variable
            coords[p] = var((), np.asarray(v, dtype=object if isinstance(v, str) else None))
    ds = xr.Dataset(data, coords=coords)
    from . import __version__
    ds.attrs.update({"spec_hash": spec.spec_hash, "specroof_version": __version__,
                     "description": spec.description or "specroof sweep"})
    return ds


def _coord_array(vals: tuple) -> np.ndarray:
    if all(isinstance(v, str) for v in vals):
        return np.array(vals, dtype=object)
    if all(_is_int(v) for v in vals):
        return np.array(vals, dtype=np.int64)
    if all(_is_num(v) for v in vals):
        return np.array(vals, dtype=np.float64)
    return np.array(vals, dtype=object)


def run_sweep(spec: "SweepSpec | dict[str, Any] | str | os.PathLike[str]", kernel: str = "numba"):
    """Evaluate a whole sweep in memory and return it as an xarray Dataset."""
    s = load_spec(spec)
    return to_dataset(evaluate(s, kernel=kernel))


# ---- on disk: Parquet shards, manifest, merge -------------------------------------------------------------------

def shard_range(n_cells: int, i: int, n: int) -> tuple[int, int]:
    """Cells [c0, c1) of shard i of n: contiguous, disjoint, covering 0..n_cells-1 (some empty when n > n_cells)."""
    if not (_is_int(n) and n >= 1 and _is_int(i) and 0 <= i < n):
        raise ScenarioError(f"shard {i}/{n}: expected 0 <= I < N")
    return n_cells * i // n, n_cells * (i + 1) // n


def _column_types(spec: SweepSpec) -> list[tuple[str, Any]]:
    import pyarrow as pa
    dic = pa.dictionary(pa.int32(), pa.string())
    cols: list[tuple[str, Any]] = []
    for p in PARAMS:
        if p in ACCEPTANCE or p == "batch":
            continue
        if p in spec.scalars or any(p in a.params for a in spec.cell_axes):
            if p == "k" and spec.auto:
                continue
            if p in STRING_PARAMS:
                cols.append((p, dic))
            else:
                cols.append((p, pa.int64()))
    acc = spec.acceptance_param
    if acc:
        cols.append((acc, pa.float64()))
    cols.append(("batch", pa.int64()))
    if spec.auto:
        cols.append(("k", pa.int64()))
    for name in _FIELD_ORDER:
        if name == "k":
            continue
        cols.append((name, pa.bool_() if name == "feasible" else dic if name == "message" else pa.float64()))
    return cols


def schema(spec: SweepSpec, metadata: dict[str, str] | None = None):
    """Arrow schema of the shard and merged files (one row per point)."""
    import pyarrow as pa
    md = {"specroof.spec_hash": spec.spec_hash}
    md.update(metadata or {})
    return pa.schema([pa.field(n, t) for n, t in _column_types(spec)], metadata=md)


def _param_column(spec: SweepSpec, p: str, cells: list[dict[str, Any]], reps: int):
    import pyarrow as pa
    vals = [d[p] for d in cells]
    if p in STRING_PARAMS:
        dictionary = sorted({str(v) for v in vals})
        pos = {v: j for j, v in enumerate(dictionary)}
        idx = np.repeat(np.array([pos[str(v)] for v in vals], dtype=np.int32), reps)
        return pa.DictionaryArray.from_arrays(pa.array(idx), pa.array(dictionary, type=pa.string()))
    mask = np.repeat(np.array([v == "default" for v in vals], dtype=bool), reps)
    arr = np.repeat(np.array([0 if v == "default" else v for v in vals], dtype=np.int64), reps)
    return pa.array(arr, mask=mask if mask.any() else None)


def _tables(res: ShardResult, md: dict[str, str]):
    """Arrow tables of a shard, one per row group of whole cells, one row per point (C-order: cell, acc, batch)."""
    import pyarrow as pa
    spec = res.spec
    NA, NB = spec.n_acc, len(spec.batch)
    per_cell = NA * NB
    n = res.c1 - res.c0
    step = max(1, ROW_GROUP_ROWS // per_cell)
    sch = schema(spec, md)
    types = dict(_column_types(spec))
    cells_all = spec.cell_values(res.c0, res.c1)
    msg_dict = pa.array(res.messages, type=pa.string())
    acc = spec.acceptance_param
    for s0 in range(0, n, step) if n else []:
        s1 = min(n, s0 + step)
        m = s1 - s0
        cells = cells_all[s0:s1]
        cols = {}
        for name, t in types.items():
            if name in res.fields or name == "k" and spec.auto:
                level, arr = res.fields[name]
                if level == "point":
                    flat = arr[s0:s1].reshape(-1)
                elif level == "cell_batch":
                    flat = np.broadcast_to(arr[s0:s1, None, :], (m, NA, NB)).reshape(-1)
                else:
                    flat = np.broadcast_to(arr[s0:s1, :, None], (m, NA, NB)).reshape(-1)
                if name == "message":
                    cols[name] = pa.DictionaryArray.from_arrays(pa.array(flat.astype(np.int32)), msg_dict)
                else:
                    cols[name] = pa.array(flat.astype(np.int64) if name == "k" else flat)
            elif name == "batch":
                cols[name] = pa.array(np.tile(np.asarray(spec.batch, dtype=np.int64), m * NA))
            elif name == acc:
                if spec.acc_axis is not None:
                    v = np.asarray(spec.acc_axis.values[acc], dtype=np.float64)
                    cols[name] = pa.array(np.tile(np.repeat(v, NB), m))
                else:
                    cols[name] = pa.array(np.repeat(np.array([d[acc] for d in cells], dtype=np.float64), per_cell))
            else:
                cols[name] = _param_column(spec, name, cells, per_cell)
        yield pa.Table.from_arrays([cols[f.name] for f in sch], schema=sch)


def write_shard(spec: SweepSpec, i: int, n: int, sink: Any, kernel: str = "numba") -> int:
    """Evaluate shard i of n and write it as Parquet to `sink` (a path or a writable binary file); returns rows."""
    import pyarrow.parquet as pq
    c0, c1 = shard_range(spec.n_cells, i, n)
    res = evaluate(spec, c0, c1, kernel)
    md = {"specroof.shard": f"{i}/{n}"}
    rows = 0
    with pq.ParquetWriter(sink, schema(spec, md), compression="zstd") as w:
        for t in _tables(res, md):
            w.write_table(t, row_group_size=t.num_rows)
            rows += t.num_rows
    return rows


def shard_bytes(spec: SweepSpec, i: int, n: int) -> tuple[int, bytes]:
    """Shard i of n as the bytes of its Parquet file (what a Dask worker returns)."""
    buf = io.BytesIO()
    write_shard(spec, i, n, buf)
    return i, buf.getvalue()


def _tmp(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp")


def _atomic_bytes(path: Path, data: bytes) -> None:
    tmp = _tmp(path)
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _atomic_with(path: Path, write: Callable[[Path], Any]) -> Any:
    tmp = _tmp(path)
    try:
        r = write(tmp)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return r


def shard_path(out: Path, i: int, n: int) -> Path:
    return Path(out) / "shards" / f"shard-{i}-of-{n}.parquet"


def _manifest(spec: SweepSpec, n: int) -> dict[str, Any]:
    from . import __version__
    return {"format": FORMAT, "specroof_version": __version__, "spec_hash": spec.spec_hash, "n_shards": n,
            "n_cells": spec.n_cells, "n_points": spec.n_points, "points_per_cell": spec.points_per_cell,
            "dims": list(spec.dims), "shape": list(spec.shape), "description": spec.description,
            "spec": spec.normalized}


def _check_manifest(out: Path, spec: SweepSpec | None, n: int | None) -> dict[str, Any]:
    """Write DIR/manifest.json (atomically) or check the one there against this spec and shard count."""
    from . import __version__
    path = Path(out) / "manifest.json"
    if path.exists():
        try:
            man = json.loads(path.read_text())
        except (OSError, ValueError) as e:
            raise SpecError(f"{path}: unreadable manifest ({e})") from None
        if spec is None:
            return man
        if man.get("spec_hash") != spec.spec_hash:
            raise ScenarioError(f"{out} holds a sweep of another spec (hash {str(man.get('spec_hash'))[:12]}, this "
                                f"one {spec.spec_hash[:12]}); use a new --out directory")
        if man.get("specroof_version") != __version__:
            raise ScenarioError(f"{out} was written by specroof {man.get('specroof_version')}; this is {__version__}"
                                "; use a new --out directory")
        if n is not None and man.get("n_shards") != n:
            raise ScenarioError(f"{out} was split into {man.get('n_shards')} shards; pass --shard I/"
                                f"{man.get('n_shards')} (or a new --out directory)")
        return man
    if spec is None:
        raise ScenarioError(f"{out}: no manifest.json; not a sweep directory (run `specroof sweep SPEC --out DIR`)")
    man = _manifest(spec, n or spec.default_shards())
    Path(out).mkdir(parents=True, exist_ok=True)
    (Path(out) / "shards").mkdir(exist_ok=True)
    _atomic_bytes(path, (json.dumps(man, indent=1, sort_keys=True) + "\n").encode())
    return man


def _shard_valid(path: Path, spec_hash: str, rows: int) -> bool:
    import pyarrow.parquet as pq
    try:
        md = pq.read_metadata(path)
    except Exception:   # noqa: BLE001 - missing, truncated or not Parquet: recompute
        return False
    meta = md.metadata or {}
    return md.num_rows == rows and meta.get(b"specroof.spec_hash") == spec_hash.encode()


def _shard_rows(man: dict[str, Any], i: int) -> int:
    c0, c1 = shard_range(man["n_cells"], i, man["n_shards"])
    return (c1 - c0) * man["points_per_cell"]


def _progress(total: int, enabled: bool | None, desc: str):
    from tqdm import tqdm
    on = sys.stderr.isatty() if enabled is None else enabled
    return tqdm(total=total, file=sys.stderr, disable=not on, unit="shard", desc=desc, leave=False)


def sweep_to_dir(spec: "SweepSpec | dict[str, Any] | str | os.PathLike[str]", out: "str | os.PathLike[str]",
                 shard: tuple[int, int] | None = None, n_shards: int | None = None, workers: int | None = None,
                 scheduler: str | None = None, client: Any = None, progress: bool | None = None,
                 merge_when_done: bool = True) -> dict[str, Any]:
    """Run a sweep into DIR: the shards not yet there (all, or only `shard` = (I, N)), then merge if complete.

    workers: run the shards on a local Dask cluster of that many processes; scheduler: on the Dask cluster at that
    address; client: on an existing dask.distributed Client. Returns a summary dict.
    """
    s = load_spec(spec)
    out = Path(out)
    n = shard[1] if shard else n_shards
    if n is not None and (not _is_int(n) or n < 1):
        raise ScenarioError(f"shards = {n!r}; expected an integer >= 1")
    if shard:
        shard_range(s.n_cells, shard[0], shard[1])
    man = _check_manifest(out, s, n)
    n = man["n_shards"]
    wanted = [shard[0]] if shard else list(range(n))
    todo = [i for i in wanted if not _shard_valid(shard_path(out, i, n), s.spec_hash, _shard_rows(man, i))]
    t0 = time.perf_counter()
    if todo:
        if client is not None or workers is not None or scheduler is not None:
            _run_dask(s, out, todo, n, workers, scheduler, client, progress)
        else:
            with _progress(len(todo), progress, "sweep") as bar:
                for i in todo:
                    _atomic_with(shard_path(out, i, n), lambda tmp, i=i: write_shard(s, i, n, str(tmp)))
                    bar.update(1)
    summary = {"out": str(out), "n_points": s.n_points, "n_cells": s.n_cells, "n_shards": n,
               "shards_run": len(todo), "shards_skipped": len(wanted) - len(todo),
               "seconds": time.perf_counter() - t0, "spec_hash": s.spec_hash, "merged": None}
    if merge_when_done and not shard:
        summary["merged"] = str(merge(out))
    return summary


def _run_dask(spec: SweepSpec, out: Path, todo: list[int], n: int, workers: int | None, scheduler: str | None,
              client: Any, progress: bool | None) -> None:
    from dask.distributed import Client, LocalCluster, as_completed
    own = []
    if client is None:
        if scheduler is not None:
            client = Client(scheduler)
        else:
            if not _is_int(workers) or workers < 1:
                raise ScenarioError(f"workers = {workers!r}; expected an integer >= 1")
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                                   dashboard_address=None)
            own.append(cluster)
            client = Client(cluster)
        own.insert(0, client)
    try:
        futs = client.map(shard_bytes, [spec] * len(todo), todo, [n] * len(todo), pure=False)
        with _progress(len(todo), progress, "sweep") as bar:
            for fut in as_completed(futs):
                i, data = fut.result()
                _atomic_bytes(shard_path(out, i, n), data)
                fut.release()
                bar.update(1)
    finally:
        for o in own:
            o.close()


def merge(out: "str | os.PathLike[str]") -> Path:
    """Check that every shard of DIR is there and valid, and join them (in shard order) into DIR/sweep.parquet."""
    import pyarrow.parquet as pq
    out = Path(out)
    man = _check_manifest(out, None, None)
    n, h = man["n_shards"], man["spec_hash"]
    missing = [i for i in range(n) if not _shard_valid(shard_path(out, i, n), h, _shard_rows(man, i))]
    if missing:
        shown = ", ".join(map(str, missing[:20])) + (", ..." if len(missing) > 20 else "")
        raise ScenarioError(f"{out}: incomplete sweep: {len(missing)} of {n} shards missing or invalid ({shown}); "
                            f"run `specroof sweep SPEC --out {out}` (or --shard I/{n} for each) first")
    dest = out / "sweep.parquet"
    if _shard_valid(dest, h, man["n_points"]):
        return dest
    md = {"specroof.spec_hash": h, "specroof.version": man["specroof_version"],
          "specroof.manifest": json.dumps(man, sort_keys=True, separators=(",", ":"))}

    def write(tmp: Path) -> None:
        first = pq.ParquetFile(shard_path(out, 0, n))
        sch = first.schema_arrow.with_metadata(md)
        with pq.ParquetWriter(str(tmp), sch, compression="zstd") as w:
            for i in range(n):
                pf = pq.ParquetFile(shard_path(out, i, n))
                for g in range(pf.num_row_groups):
                    t = pf.read_row_group(g)
                    w.write_table(t.replace_schema_metadata(md), row_group_size=max(1, t.num_rows))
    _atomic_with(dest, write)
    for stale in list(out.glob(".*.tmp")) + list((out / "shards").glob(".*.tmp")):
        stale.unlink(missing_ok=True)
    return dest


def read_sweep(out: "str | os.PathLike[str]"):
    """The merged results of DIR as a pyarrow Table (merging first if needed)."""
    import pyarrow.parquet as pq
    return pq.read_table(merge(out))


__all__ = ["Axis", "SweepSpec", "ShardResult", "evaluate", "load_spec", "merge", "parse_spec", "read_sweep",
           "run_sweep", "schema", "shard_bytes", "shard_range", "sweep_to_dir", "to_dataset", "write_shard"]
