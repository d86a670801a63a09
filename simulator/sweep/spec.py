"""The sweep spec language: the Cartesian product of Scenario parameters, ranges, zipped groups, checked before work.

A spec (TOML file or dict; see examples/sweep_standard.toml) gives each parameter as a scalar, a list, or an
inclusive range table `{start, stop, step}` (arithmetic, decimal-safe for rates) or `{start, stop, mul}` (geometric);
`[[zip]]` groups pair parameters element by element (e.g. a method with its acceptance). The parameters are the
Scenario's (every field it marks `sweep`, with its defaults and checks) plus the acceptance inputs:

    acceptance_rate, or acceptance_length with the acceptance_k it was measured at (neither: the method's
    published default)

`"default"` stands for None (the library default) in every parameter whose Scenario field may be None.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass, field
from decimal import ROUND_FLOOR, Decimal
from pathlib import Path
from typing import Any

import numpy as np

from ..data import read_toml, suggest
from ..drafters import MAX_DEPTH
from ..errors import SpecError, SpecroofError
from ..scenario import Scenario, check_value, field_kind, scenario_fields
from .names import FIELD_ORDER, err, file_digests, files_difference, names_exist

_CELL = ("k", "acceptance_k", "context")
ACCEPTANCE = ("acceptance_rate", "acceptance_length")
_NUMBERS = ACCEPTANCE + ("acceptance_k", "batch")          # parameters that are not Scenario fields
# Parameters that change how a pass is priced (a "configuration"); k and context vary inside one.
CONFIG_PARAMS: tuple[str, ...] = tuple(f.name for f in scenario_fields("sweep") if f.name not in _CELL)
# Parameters in grid order (outermost first); acceptance_rate / acceptance_length and batch always come last.
PARAMS: tuple[str, ...] = CONFIG_PARAMS + _CELL + ACCEPTANCE + ("batch",)
_OPTIONAL_KINDS = {"draft", "precision?", "int>=1?", "int>=2?", "overlap", "bool?"}
DEFAULTS: dict[str, Any] = {f.name: ("default" if f.default is None else f.default)
                            for f in scenario_fields("sweep")} | {"batch": list(Scenario().batch)}
STRING_PARAMS = tuple(p for p in CONFIG_PARAMS if field_kind(p) in ("hardware", "model", "method", "draft", "engine",
                                                                    "precision", "precision?", "overlap"))
META_KEYS = ("description", "zip")
MAX_AXIS = 1 << 24                 # values per range (a guard against typos like stop = 1e12)
SHARD_POINTS = 1 << 21             # default points per shard when none is given (bounds memory per shard)
MAX_POINTS = 1 << 36               # points per sweep (32768 default shards; beyond, the manifest alone runs to GB)
MAX_CELL_POINTS = 1 << 24          # points of one cell (acceptance x batch), which one shard evaluates whole
FORMAT = "specroof-sweep/3"


def is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def is_num(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)


def check_number(key: str, v: Any) -> float | int:
    """A value of a parameter that is not a Scenario field: acceptance_rate in [0, 1), acceptance_length >= 1,
    acceptance_k (at most drafters.MAX_DEPTH) and batch integers >= 1."""
    if key in ACCEPTANCE:
        lo_ok = is_num(v) and (0.0 <= float(v) < 1.0 if key == "acceptance_rate" else float(v) >= 1.0)
        if not lo_ok:
            raise err(key, f"{v!r}; expected " + ("a number in [0, 1)" if key == "acceptance_rate"
                                                  else "a number >= 1 (tokens per step, bonus included)"))
        return float(v)
    if not is_int(v) or v < 1:
        raise err(key, f"{v!r}; expected an integer >= 1")
    if key == "acceptance_k" and v > MAX_DEPTH:        # as the CLI's --acceptance-k (found by review)
        raise err(key, f"{v!r}; expected at most {MAX_DEPTH} (the deepest draft priced)")
    return int(v)


def _check_value(key: str, v: Any) -> Any:
    """One value of parameter `key`, type- and range-checked by the Scenario's own check; normalized."""
    if key in _NUMBERS:
        return check_number(key, v)
    if v == "default" and field_kind(key) in _OPTIONAL_KINDS:
        return v
    if key in ("hardware", "model", "engine", "draft") and not isinstance(v, str):
        raise err(key, f"{v!r} is not a name (expected a string)")
    try:
        out = check_value(key, v)
    except SpecroofError as e:
        raise err(key, str(e)) from None
    if key == "method" and out is None:
        raise err(key, "a sweep needs a method")
    if key == "k" and is_int(out) and out > MAX_DEPTH:     # as --k (found by review: k = 65 was priced, feasible)
        raise err(key, f"{v!r}; expected at most {MAX_DEPTH} (the deepest draft priced)")
    return repr(out) if key == "overlap" and isinstance(out, float) else out


def _dec(key: str, name: str, v: Any) -> Decimal:
    if not is_num(v) or not math.isfinite(float(v)):
        raise err(key, f"range {name} = {v!r} is not a number")
    return Decimal(repr(float(v))) if isinstance(v, (float, np.floating)) else Decimal(int(v))


def _geometric(key: str, start: Decimal, stop: Decimal, mul: Decimal, raw: Any) -> list[Decimal]:
    if mul <= 1:
        raise err(key, f"range mul = {raw['mul']!r}; expected a number > 1")
    if start <= 0:
        raise err(key, f"geometric range needs start > 0, got {raw['start']!r}")
    out, v = [], start
    while v <= stop:
        out.append(v)
        if len(out) > MAX_AXIS:
            raise err(key, f"range has more than {MAX_AXIS} values")
        v = v * mul
    return out


def _arithmetic(key: str, start: Decimal, stop: Decimal, raw: Any) -> list[Decimal]:
    """start, start + step, ... up to stop inclusive (step 1 when not given)."""
    step = _dec(key, "step", raw.get("step", 1))
    if step <= 0:
        raise err(key, f"range step = {raw.get('step')!r}; expected a number > 0")
    n = int(((stop - start) / step).to_integral_value(rounding=ROUND_FLOOR)) + 1
    if n > MAX_AXIS:
        raise err(key, f"range has {n} values (more than {MAX_AXIS})")
    return [start + i * step for i in range(n)]


def _check_range_keys(key: str, r: dict[str, Any], ints: bool) -> None:
    """A range table has start, stop and step or mul, nothing else; integers for an integer parameter."""
    bad = set(r) - {"start", "stop", "step", "mul"}
    if bad:
        raise err(key, f"unknown range key(s) {sorted(bad)}; expected start, stop and step or mul")
    for need in ("start", "stop"):
        if need not in r:
            raise err(key, f"range needs {need!r}")
    if "step" in r and "mul" in r:
        raise err(key, "range takes step or mul, not both")
    for name in ("start", "stop", "step"):
        if name in r and ints and not is_int(r[name]):
            raise err(key, f"range {name} = {r[name]!r}; expected an integer")


def _expand_range(key: str, r: dict[str, Any]) -> list[Any]:
    """Inclusive range {start, stop, step} or {start, stop, mul}; decimal arithmetic, so 0.5..0.99 step 0.01 gives
    exactly the 50 floats 0.5, 0.51, ..., 0.99."""
    ints = key not in ACCEPTANCE
    _check_range_keys(key, r, ints)
    start, stop = _dec(key, "start", r["start"]), _dec(key, "stop", r["stop"])
    if stop < start:
        raise err(key, f"empty range: stop {r['stop']!r} < start {r['start']!r}")
    if "mul" in r:
        out = _geometric(key, start, stop, _dec(key, "mul", r["mul"]), r)
    else:
        out = _arithmetic(key, start, stop, r)
    if ints:
        if any(v != v.to_integral_value() for v in out):
            raise err(key, "range gives non-integer values")
        return [int(v) for v in out]
    return [float(v) for v in out]


def parse_values(key: str, raw: Any, unique: bool = True, check: bool = True) -> tuple[list[Any], bool]:
    """(values, given as a list or range) for a parameter's raw spec entry; `unique`: no value twice; `check`: each
    value checked as the Scenario field `key` (off for keys that are not one, checked by their own owner)."""
    if isinstance(raw, dict):
        vals, listed = _expand_range(key, raw), True
    elif isinstance(raw, (list, tuple)):
        vals, listed = list(raw), True
        if not vals:
            raise err(key, "empty list")
    else:
        vals, listed = [raw], False
    vals = [_check_value(key, v) for v in vals] if check else vals
    if unique and len(set(map(repr, vals))) != len(vals):
        seen: set[str] = set()
        twice = next(v for v in vals if repr(v) in seen or seen.add(repr(v)))
        raise err(key, f"repeated values ({twice!r} given twice)")   # review: the value was not named
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


def spec_digest(normalized: Any) -> str:
    """The hash of a normalized spec (SweepSpec.spec_hash; a manifest's spec is checked against its spec_hash by it,
    and each manifest field's digest is its first 16 digits): SHA-256 of its canonical JSON."""
    return hashlib.sha256(json.dumps(normalized, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


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
        return math.prod(self.cell_shape)      # Python ints: np.prod in int64 wrapped (found by review: 0 cells)

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
        return spec_digest(self.normalized)

    def default_shards(self) -> int:
        return max(1, min(self.n_cells, -(-self.n_points // SHARD_POINTS)))

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


def _check_top_keys(doc: Any, source: str) -> str:
    if not isinstance(doc, dict):
        raise SpecError(f"sweep spec{source}: expected a table of parameters, got {type(doc).__name__}")
    for k in doc:
        if k not in PARAMS and k not in META_KEYS:
            cli = [f.name for f in scenario_fields("cli")]
            flag, cmds = ("--dp-balance or --no-dp-balance", "serve or frontier") if k == "dp_balance" else \
                ("--" + k.replace("_", "-"), "curve, serve or step")
            hint = (f" (a scenario input a sweep does not vary: its points price the default; give {flag} to {cmds})"
                    if k in cli else suggest(k, list(dict.fromkeys(PARAMS + tuple(cli)))))
            raise SpecError(f"sweep spec: unknown key {k!r}{hint}; expected some of {', '.join(PARAMS + META_KEYS)}")
    desc = doc.get("description", "")
    if not isinstance(desc, str):
        raise err("description", f"{desc!r} is not a string")
    return desc


def _zip_members(name: str, z: dict[str, Any], doc: dict[str, Any], seen: dict[str, str]) -> list[str]:
    """The parameters a zip group pairs: at least two, known, not batch, and given nowhere else (recorded in
    `seen`)."""
    members = [k for k in z if k != "name"]
    for k in members:
        if k not in PARAMS:
            raise err(f"zip.{k}", f"unknown parameter{suggest(k, list(PARAMS))}")
        if k == "batch":
            raise err("zip.batch", "batch cannot be zipped (it is the innermost dimension)")
        if k in doc or k in seen:
            raise err(f"zip.{k}", "given twice (top level or another zip group)")
        seen[k] = name
    if len(members) < 2:
        raise err(f"zip {name!r}", "a zip group pairs at least two parameters")
    return members


def _zip_values(name: str, z: dict[str, Any], members: list[str]) -> dict[str, list[Any]]:
    """Each member's checked values: lists of one length, no combination twice."""
    vals = {}
    for k in members:
        v, listed = parse_values(k, z[k], unique=False)
        if not listed:
            raise err(f"zip.{k}", f"{z[k]!r} is a scalar; a zip group needs lists of equal length")
        vals[k] = v
    lens = {k: len(v) for k, v in vals.items()}
    if len(set(lens.values())) != 1:
        raise err(f"zip {name!r}", f"lists of different lengths {lens}")
    rows = list(zip(*(map(repr, vals[k]) for k in members)))
    if len(set(rows)) != len(rows):
        raise err(f"zip {name!r}", "repeated combinations")
    return vals


def _zip_axis(zi: int, z: dict[str, Any], doc: dict[str, Any], seen: dict[str, str]) -> tuple[int, Axis]:
    """One [[zip]] group as an Axis, with the grid position of its first parameter."""
    name = z.get("name", f"zip{zi}")
    if not isinstance(name, str) or not name or name in PARAMS or name in FIELD_ORDER:
        raise err("zip.name", f"{name!r}; expected a new dimension name (not a parameter or a result column)")
    members = _zip_members(name, z, doc, seen)
    vals = _zip_values(name, z, members)
    order = sorted(members, key=PARAMS.index)
    return PARAMS.index(order[0]), Axis(name, tuple(order), {k: tuple(vals[k]) for k in order})


def _zip_axes(doc: dict[str, Any]) -> list[tuple[int, Axis]]:
    zips = doc.get("zip", [])
    if isinstance(zips, dict):
        zips = [zips]
    if not isinstance(zips, list) or not all(isinstance(z, dict) for z in zips):
        raise err("zip", "expected [[zip]] tables of equal-length lists")
    seen: dict[str, str] = {}
    zaxes = [_zip_axis(zi, z, doc, seen) for zi, z in enumerate(zips)]
    names = [a.name for _, a in zaxes]
    if len(set(names)) != len(names):
        raise err("zip.name", f"repeated names {names}")
    return zaxes


def _values_of(key: str, scalars: dict[str, Any], single: dict[str, list[Any]], zaxes: list[tuple[int, Axis]]
               ) -> list[Any]:
    """Every value a parameter takes in the grid (scalar, list or zip group)."""
    if key in single:
        return list(single[key])
    z = next((list(a.values[key]) for _, a in zaxes if key in a.params), None)
    return z if z is not None else ([scalars[key]] if key in scalars else [])


def _check_acceptance(every: dict[str, Any], scalars: dict[str, Any], single: dict[str, list[Any]],
                      zaxes: list[tuple[int, Axis]]) -> None:
    if sum(p in every for p in ACCEPTANCE) > 1:
        raise err("acceptance_length", "give acceptance_rate or acceptance_length, not both")
    if ("acceptance_length" in every) != ("acceptance_k" in every):
        raise err("acceptance_length" if "acceptance_length" in every else "acceptance_k",
                  "needs acceptance_k, the k it was measured at" if "acceptance_length" in every
                  else "applies only with acceptance_length")
    if "acceptance_length" not in every:
        return
    zipped = next((a for _, a in zaxes if "acceptance_length" in a.params), None)
    if zipped is not None and "acceptance_k" in zipped.params:
        pairs = list(zip(zipped.values["acceptance_length"], zipped.values["acceptance_k"]))
    else:
        taus = _values_of("acceptance_length", scalars, single, zaxes)
        pairs = [(max(taus), min(_values_of("acceptance_k", scalars, single, zaxes)))]
    for tau, k0 in pairs:
        if tau >= k0 + 1:
            raise err("acceptance_length", f"tau = {tau:g} reaches acceptance_k + 1 = {k0 + 1} (a chain of "
                      f"{k0} drafts averages fewer than {k0 + 1} tokens per step: {k0 + 1} needs every draft accepted)")


def _normalized(scalars: dict[str, Any], axes: tuple[Axis, ...], acc_axis: Axis | None, batch: list[int],
                batch_listed: bool, files: dict[str, str]) -> dict[str, Any]:
    return {"format": FORMAT, "scalars": dict(sorted(scalars.items())), "files": files,
            "axes": [{"name": a.name, "values": {k: list(a.values[k]) for k in a.params}} for a in axes]
            + ([{"name": acc_axis.name, "values": {acc_axis.name: list(acc_axis.values[acc_axis.name])}}]
               if acc_axis else []), "batch": list(batch), "batch_listed": batch_listed}


_ABSENT = object()   # a key one of two specs lacks (spec_difference)


def spec_difference(there: dict[str, Any], here: dict[str, Any], most: int = 3) -> str:
    """What differs between two normalized specs (a manifest's and this one), for the one-line refusal to resume:
    e.g. 'spec_overlap: absent there, "default" here' (a parameter a newer build added); each value shown in at most
    80 characters. '' when they are equal."""
    out: list[str] = []

    def show(v: Any) -> str:
        t = "absent" if v is _ABSENT else json.dumps(v)
        return t if len(t) <= 80 else t[:77] + "..."

    a, b = there.get("scalars", {}), here.get("scalars", {})
    for k in sorted(set(a) | set(b)):
        if a.get(k, _ABSENT) != b.get(k, _ABSENT):
            out.append(f"{k}: {show(a.get(k, _ABSENT))} there, {show(b.get(k, _ABSENT))} here")

    def values(x: dict[str, Any]) -> Any:   # one parameter's axis shows its list; a zip group its table
        v = x["values"]
        return v[x["name"]] if list(v) == [x["name"]] else v

    ax = {x["name"]: values(x) for x in there.get("axes", [])}
    bx = {x["name"]: values(x) for x in here.get("axes", [])}
    for k in sorted(set(ax) | set(bx)):
        if ax.get(k, _ABSENT) != bx.get(k, _ABSENT):
            out.append(f"axis {k}: {show(ax.get(k, _ABSENT))} there, {show(bx.get(k, _ABSENT))} here")
    for k in ("format", "batch", "batch_listed"):
        if there.get(k, _ABSENT) != here.get(k, _ABSENT):
            out.append(f"{k}: {show(there.get(k, _ABSENT))} there, {show(here.get(k, _ABSENT))} here")
    out += files_difference(there.get("files", {}), here.get("files", {}))
    if not out and list(ax) != list(bx):
        out.append(f"axis order: {list(ax)} there, {list(bx)} here")
    more = f" (+{len(out) - most} more)" if len(out) > most else ""
    return "; ".join(out[:most]) + more


def _top_values(doc: dict[str, Any]) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """The top-level parameters, checked: (scalars, lists and ranges)."""
    scalars: dict[str, Any] = {}
    single: dict[str, list[Any]] = {}
    for k in PARAMS:
        if k in doc:
            vals, listed = parse_values(k, doc[k])
            (single.__setitem__(k, vals) if listed else scalars.__setitem__(k, vals[0]))
    return scalars, single


def _batch(doc: dict[str, Any], scalars: dict[str, Any], single: dict[str, list[Any]]) -> tuple[list[int], bool]:
    """(batch sizes, batch is a dimension), taking batch out of `scalars` / `single`. A batch given as a scalar is
    no dimension; the default batch list is one."""
    if "batch" in single:
        return single.pop("batch"), True
    batch = [scalars.pop("batch")] if "batch" in scalars else list(DEFAULTS["batch"])
    return batch, "batch" not in doc


def _grid_axes(single: dict[str, list[Any]], zaxes: list[tuple[int, Axis]]) -> tuple[tuple[Axis, ...], Axis | None]:
    """(cell axes in grid order: one per listed parameter and zip group, acceptance axis or None)."""
    items = sorted([(PARAMS.index(k), Axis(k, (k,), {k: tuple(v)})) for k, v in single.items()
                    if k not in ACCEPTANCE] + zaxes, key=lambda t: t[0])
    acc_axis = next((Axis(k, (k,), {k: tuple(single[k])}) for k in ACCEPTANCE if k in single), None)
    return tuple(a for _, a in items), acc_axis


def parse_spec(doc: dict[str, Any], source: str = "") -> SweepSpec:
    """Validate a sweep spec (the parsed TOML) into a SweepSpec; errors name the offending key. No work is done."""
    desc = _check_top_keys(doc, source)
    scalars, single = _top_values(doc)
    zaxes = _zip_axes(doc)
    every = {**scalars, **single, **{k: None for _, a in zaxes for k in a.params}}
    _check_acceptance(every, scalars, single, zaxes)
    if "auto" in _values_of("k", {}, single, zaxes):
        raise err("k", "\"auto\" is a scalar setting (k = \"auto\"); a list of k takes integers")
    named = [v for key in ("hardware", "model", "engine", "draft") for v in _values_of(key, scalars, single, zaxes)]
    for key in ("hardware", "model", "engine", "draft"):
        names_exist(key, _values_of(key, scalars, single, zaxes))
    batch, batch_listed = _batch(doc, scalars, single)
    for k, v in DEFAULTS.items():
        if k != "batch" and k not in every:
            scalars[k] = v
    axes, acc_axis = _grid_axes(single, zaxes)
    spec = SweepSpec(scalars=scalars, cell_axes=axes, acc_axis=acc_axis, batch=tuple(batch),
                     batch_listed=batch_listed, description=desc,
                     normalized=_normalized(scalars, axes, acc_axis, batch, batch_listed, file_digests(named)))
    if spec.n_points > MAX_POINTS:
        raise SpecError(f"sweep spec: the grid has {spec.n_points:.3g} points ({spec.n_cells:.3g} cells of "
                        f"{spec.points_per_cell} points); at most {MAX_POINTS:.3g}")
    if spec.points_per_cell > MAX_CELL_POINTS:
        raise SpecError(f"sweep spec: one cell has {spec.points_per_cell:.3g} points (acceptance values x batches), "
                        f"which one shard evaluates whole; at most {MAX_CELL_POINTS:.3g}")
    return spec


def load_spec(source: SweepSpec | dict[str, Any] | str | os.PathLike[str]) -> SweepSpec:
    """A SweepSpec from a TOML path, a dict (the parsed TOML) or a SweepSpec."""
    if isinstance(source, SweepSpec):
        return source
    if isinstance(source, dict):
        return parse_spec(source)
    path = Path(source)
    return parse_spec(read_toml(path), f" {path}")
