"""Serving sweeps: the Cartesian product of Scenario parameters and serving workloads (a `[serve]` table in a sweep
spec), each configuration priced by `serving.serve` over its concurrencies, as one tidy table.

    hardware = ["h100-sxm", "b300"]          # any Scenario parameter, as in a batch sweep (scalar, list or range)
    model = "llama-3.1-8b"
    method = "eagle3"
    [serve]
    isl = [1024, 8192]                       # workload parameters: isl, osl, length_ratio, concurrency, chunk,
    osl = 1024                               # prefix_hit, pd (length_ratio R: lengths uniform on [R x isl, isl])
    concurrency = { start = 1, stop = 256, mul = 2 }   # or rate = [1.0, 5.0, 20.0]: arrival rates, requests/s
                                             # (with max_concurrency = [16, 64]: the client's cap on them)
    # num_prompts / prompts_per_slot: a finite benchmark run (serve --num-prompts N | Mx); with pd = true,
    # prefill_gpus and prefill_tp / prefill_dp / prefill_ep (all three) size and lay out the prefill instance

Acceptance, batch and context are not serving parameters (the workload sets the load and the context); the method's
published acceptance is used, or `acceptance_rate` / `acceptance_length` with `acceptance_k` as scalars.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..acceptance import Acceptance
from ..drafters import default_decay, verified_tree
from ..errors import ScenarioError, SpecError, SpecroofError
from ..scenario import Scenario, scenario_fields
from ..serving import Phase, Workload, serve
from ..tables import serve_row
from ..traffic import PREFILL_LAYOUT_KEYS, length_ratio, prefill_layout_of
from .spec import check_number, err, names_exist, parse_values

AccFn = Callable[[dict[str, Any]], Acceptance]     # a configuration's acceptance (the spec's, read on its tree)

WORKLOAD_KEYS = ("isl", "osl", "length_ratio", "concurrency", "rate", "max_concurrency", "chunk", "prefix_hit", "pd",
                 "num_prompts", "prompts_per_slot", "prefill_gpus", "prefill_tp", "prefill_dp", "prefill_ep")
_POINTS = ("concurrency", "rate")             # the points of one configuration, not a product dimension
_NOT_SERVING = ("batch", "context", "k_max")
# every field of a serving Phase, as `specroof serve --format json` gives it (found by review: the sweep's columns
# were a hand-written subset without prefill_share, decode_bound or the first / last token's TPOT)
PHASE_FIELDS = tuple(Phase.__dataclass_fields__)
MAX_CONFIGS = 4096
MAX_POINTS = 1024                             # concurrencies or rates per configuration (each a steady state)


def _no_repeats(out: dict[str, list[Any]]) -> None:
    """No value twice in a [serve] list, numbers compared as numbers (found by review: rate = [1.0, 1] and
    concurrency = [4, 4.0] each gave two identical rows)."""
    for k, vals in out.items():
        nums = [float(v) for v in vals if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if len(set(nums)) != len(nums):
            raise err(f"serve.{k}", f"{vals!r}: a value given twice (4 and 4.0 are one value)")


def _workload_values(table: Any) -> dict[str, list[Any]]:
    if not isinstance(table, dict):
        raise err("serve", f"expected a table of workload parameters ({', '.join(WORKLOAD_KEYS)})")
    bad = [k for k in table if k not in WORKLOAD_KEYS]
    if bad:
        raise err("serve", f"unknown key(s) {bad}; expected {', '.join(WORKLOAD_KEYS)}")
    if all(k in table for k in _POINTS):
        raise err("serve", "give concurrency or rate, not both")
    try:
        prefill_layout_of(tuple(table.get(k) for k in PREFILL_LAYOUT_KEYS))
    except ScenarioError as e:
        raise err("serve", str(e)) from None
    for k, what in (("length_ratio", "ratios in [0, 1]"), ("rate", "arrival rates (requests/s)")):
        if isinstance(table.get(k), dict):
            raise err(f"serve.{k}", f"expected a number or a list of {what}, not a range")
    out = {}
    for k in WORKLOAD_KEYS:
        if k in table:            # a value, a list (not empty, no value twice) or an integer range; each value is
            out[k] = parse_values(f"serve.{k}", table[k], check=False)[0]          # checked by Workload below
    _check_ratios(out.get("length_ratio", []))
    _no_repeats(out)
    n = len(out.get("rate", out.get("concurrency", ())))
    if n > MAX_POINTS:
        raise err(f"serve.{'rate' if 'rate' in out else 'concurrency'}", f"{n} points; at most {MAX_POINTS} per "
                  "configuration")
    return out


def _check_ratios(ratios: list[Any]) -> None:
    """Every length_ratio a number in [0, 1], before any configuration is priced."""
    for r in ratios:
        try:
            length_ratio(r)
        except ScenarioError as e:
            raise err("serve.length_ratio", str(e)) from None


def _scenario_values(doc: dict[str, Any]) -> tuple[dict[str, list[Any]], Acceptance | None]:
    names = {f.name for f in scenario_fields("sweep")} - set(_NOT_SERVING)
    acc_keys = ("acceptance_rate", "acceptance_length", "acceptance_k")
    bad = [k for k in doc if k not in names and k not in acc_keys and k not in ("serve", "description")]
    if bad:
        raise err(bad[0], f"not a serving-sweep parameter; allowed: {', '.join(sorted(names))}, "
                          f"{', '.join(acc_keys)} and [serve]")
    vals = {k: parse_values(k, doc[k])[0] for k in sorted(names) if k in doc}
    for key in ("hardware", "model", "engine", "draft"):
        if key in vals:
            names_exist(key, vals[key])       # unknown names fail before any work
    return vals, _acceptance(doc)


def _acceptance(doc: dict[str, Any]) -> AccFn | None:
    """The spec's acceptance as a function of a configuration: a rate as given, or a length read at its k on that
    configuration's tree, with its method's per-position decay (as the CLI reads --acceptance-length). A rate and a
    length together, or acceptance_k without a length, are refused as a batch sweep refuses them (found by review)."""
    if "acceptance_rate" in doc and "acceptance_length" in doc:
        raise err("acceptance_length", "give acceptance_rate or acceptance_length, not both")
    if "acceptance_k" in doc and "acceptance_length" not in doc:
        raise err("acceptance_k", "applies only with acceptance_length")
    if "acceptance_rate" in doc:
        acc = Acceptance.from_rate(_scalar(doc, "acceptance_rate"))
        return lambda kw: acc
    if "acceptance_length" in doc:
        if "acceptance_k" not in doc:
            raise err("acceptance_length", "needs acceptance_k (the k it was measured at)")
        tau, k = _scalar(doc, "acceptance_length"), int(_scalar(doc, "acceptance_k"))
        try:
            Acceptance.from_length(tau, k)               # a bad length is refused here, before any pricing
        except SpecroofError as e:                       # naming the key, as a batch sweep does (review)
            raise err("acceptance_length", str(e)) from None
        return lambda kw: Acceptance.from_measurement(        # on the tree the cell verifies (Medusa's default)
            tau, k, *verified_tree(kw.get("method", "eagle3"), kw.get("tree_tokens"), kw.get("tree_branching")),
            default_decay(kw.get("method", "eagle3")))
    return None


def _scalar(doc: dict[str, Any], key: str) -> float:
    """One acceptance input, checked as a batch sweep checks it (found by review: a list, a string or k = 2.7 crashed
    or was truncated); a serving sweep takes one value."""
    v = doc[key]
    if isinstance(v, (list, dict)):
        raise err(key, f"{v!r}; a serving sweep takes one value (sweep acceptance with a batch sweep, or run one "
                       "serving sweep per value)")
    return float(check_number(key, v))


def serve_sweep(doc: dict[str, Any]):
    """Price every (Scenario parameters x each [serve] parameter but the load) combination over its concurrencies or
    rates. Returns a pandas DataFrame, one row per point: the parameters, the
    workload, the spec_* and base_* phase fields (None where that mode does not fit), e2e_speedup, tpot_speedup,
    throughput_ratio (None unless both fit), feasible and message (with speculation), base_feasible and base_message
    (without)."""
    import pandas as pd  # lazy: pandas is part of the sweep extra

    p = plan(doc)
    rows: list[dict[str, Any]] = []
    for combo in p.combos:
        kw = {k: (None if v == "default" else v) for k, v in zip(p.names, combo)}
        for wc in p.wcombos:
            rows += _rows(kw, dict(zip(p.wl_names, wc)), p.key, p.points, p.acc)
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class ServePlan:
    """A checked serving sweep: its parameter combinations, workload combinations and load points, unpriced."""

    names: list[str]
    combos: list[tuple]
    wl_names: list[str]
    wcombos: list[tuple]
    key: str
    points: list[Any]
    acc: AccFn | None

    @property
    def n_rows(self) -> int:
        return len(self.combos) * len(self.wcombos) * len(self.points)


def plan(doc: dict[str, Any]) -> ServePlan:
    """Every check of a serving sweep (names, values, workloads, sizes, one configuration that resolves), before any
    pricing: what `serve_sweep` runs and `specroof sweep --dry-run` reports."""
    if "serve" not in doc:
        raise SpecError("sweep spec: a serving sweep needs a [serve] table")
    wl = _workload_values(doc["serve"])
    params, acc = _scenario_values(doc)
    names = list(params)
    wl_names = [k for k in WORKLOAD_KEYS if k not in _POINTS and k in wl]
    key = "rate" if "rate" in wl else "concurrency"
    combos = list(itertools.product(*(params[k] for k in names)))
    wcombos = list(itertools.product(*(wl[k] for k in wl_names)))
    if len(combos) * len(wcombos) > MAX_CONFIGS:
        raise SpecError(f"sweep spec: {len(combos) * len(wcombos)} serving configurations exceed {MAX_CONFIGS}; "
                        "split the sweep")
    points = wl.get(key, [1, 4, 16, 64])
    _check_workloads(wl_names, wcombos, key, points)
    _check_some_scenario(names, combos, acc)
    return ServePlan(names, combos, wl_names, wcombos, key, points, acc)


def _load(key: str, pts: list[Any]) -> dict[str, tuple]:
    """The points of a [serve] table as a Workload's load: arrival rates, or concurrencies (whole numbers: 4.0 is
    4; 1.5 is refused, naming the value given)."""
    if key == "rate":
        return {"rate": tuple(pts)}
    for c in pts:
        if isinstance(c, bool) or not isinstance(c, (int, float)) or not math.isfinite(c) or c != int(c):
            raise err("serve.concurrency", f"{c!r}; expected whole numbers of requests in flight")
    return {"concurrency": tuple(int(c) for c in pts)}


def _scenario(kw: dict[str, Any], acc: AccFn | None) -> Scenario:
    """One configuration's Scenario (the spec's acceptance applies only when it speculates)."""
    return Scenario(**kw, acceptance=acc(kw) if acc else None) if kw.get("method", "eagle3") is not None \
        else Scenario(**kw)


def _check_workloads(wl_names: list[str], wcombos: list[tuple], key: str, pts: list[Any]) -> None:
    """Every workload of the [serve] table a valid Workload (isl >= 1, concurrency >= 1, ...), before any work."""
    load = _load(key, pts)
    for wc in wcombos:
        try:
            Workload(**load, **workload_kw(dict(zip(wl_names, wc))))
        except ScenarioError as e:
            raise err("serve", str(e)) from None


def workload_kw(wkw: dict[str, Any]) -> dict[str, Any]:
    """A [serve] combination as Workload keywords: prefill_tp / prefill_dp / prefill_ep as one prefill_layout."""
    out = {k: v for k, v in wkw.items() if k not in PREFILL_LAYOUT_KEYS}
    layout = prefill_layout_of(tuple(wkw.get(k) for k in PREFILL_LAYOUT_KEYS))
    return out if layout is None else {**out, "prefill_layout": layout}


def _check_some_scenario(names: list[str], combos: list[tuple], acc: AccFn | None) -> None:
    """Refuse a spec whose every configuration is rejected (a drafter as the model, ...), before any pricing; one
    configuration that resolves ends the check."""
    first: SpecroofError | None = None
    for combo in combos:
        kw = {k: (None if v == "default" else v) for k, v in zip(names, combo)}
        try:
            _scenario(kw, acc).resolve()
            return
        except SpecroofError as e:
            first = first or e
    if first is not None:
        raise err("parameters", f"every configuration is rejected ({len(combos)} tried); the first: {first}")


def _rows(kw: dict[str, Any], wkw: dict[str, Any], key: str, pts: list[Any], acc: AccFn | None
          ) -> list[dict[str, Any]]:
    """One row per point (a concurrency, or an arrival rate) of one configuration."""
    head = {**{k: ("default" if v is None else v) for k, v in kw.items()}, **wkw}
    try:
        res = serve(_scenario(kw, acc), Workload(**_load(key, pts), **workload_kw(wkw)))
    except SpecroofError as e:
        return [{**head, key: p, "feasible": False, "message": str(e), "base_feasible": False,
                 "base_message": str(e)} for p in pts]
    return [_point_row(pt, head) for pt in res.to_dict()["points"]]


def _point_row(pt: dict[str, Any], head: dict[str, Any]) -> dict[str, Any]:
    """One point of `ServeResult.to_dict` (where each mode's numbers and the ratios are null) as a flat row."""
    return {**head, **serve_row(pt, PHASE_FIELDS)}


__all__ = ["WORKLOAD_KEYS", "serve_sweep", "workload_kw"]
