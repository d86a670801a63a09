"""The kinds of a `scenario.Scenario` field: one check per kind (`CHECKS`), which normalizes a Python value or raises
`ScenarioError` naming the field, the value and what is allowed. The command line parses each kind's strings itself
(simulator/cli/args.py)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .acceptance import Acceptance
from .drafters import method_key
from .engine import EngineProfile
from .errors import ScenarioError
from .hardware import Hardware
from .hazards import resolve_options
from .model import ModelShape
from .sampling import check_sampling
from .units import DTYPE_BYTES
from .workload import OVERLAP_MODES


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)


def _int_at_least(lo: int, optional: bool = False) -> Callable[[str, Any], Any]:
    def check(name: str, v: Any) -> Any:
        if v is None and optional:
            return None
        if not _is_int(v) or int(v) < lo:
            raise ScenarioError(f"{name} = {v!r}; expected an integer >= {lo}" + (" or None" if optional else ""))
        return int(v)
    return check


def _name(types: tuple[type, ...], optional: bool = False) -> Callable[[str, Any], Any]:
    def check(name: str, v: Any) -> Any:
        if v is None and optional:
            return None
        if isinstance(v, types) or (isinstance(v, str) and v.strip()):
            return v.strip() if isinstance(v, str) else v
        raise ScenarioError(f"{name} = {v!r}; expected a bundled name or a file path")
    return check


def _precision(optional: bool) -> Callable[[str, Any], Any]:
    def check(name: str, v: Any) -> Any:
        if v is None and optional:
            return None
        key = v.strip().lower() if isinstance(v, str) else v
        if key not in DTYPE_BYTES:
            raise ScenarioError(f"{name} = {v!r}; expected one of {', '.join(DTYPE_BYTES)}")
        return key
    return check


def _method(name: str, v: Any) -> str | None:
    if v is None:
        return None     # no speculation: the target alone (simulate_step, serving with speculation off)
    return method_key(v, name)


def _k(name: str, v: Any) -> int | str:
    if isinstance(v, str) and v.strip().lower() == "auto":
        return "auto"
    if not _is_int(v) or int(v) < 0:
        raise ScenarioError(f"{name} = {v!r}; expected an integer >= 0 or 'auto'")
    return int(v)


def _batch(name: str, v: Any) -> tuple[int, ...]:
    vals = np.asarray(v, dtype=object) if not isinstance(v, (str, bytes)) else np.asarray([v], dtype=object)
    if vals.ndim > 1:
        raise ScenarioError(f"{name} = {v!r}; expected one batch size or a flat list of them")
    vals = np.atleast_1d(vals)
    if vals.size == 0:
        raise ScenarioError(f"{name}: the list is empty; expected at least one batch size")
    out = []
    for b in vals:
        ok = _is_int(b) or (isinstance(b, (float, np.floating)) and float(b).is_integer())
        if not ok or int(b) <= 0:
            raise ScenarioError(f"{name} = {b!r}; expected a positive integer")
        out.append(int(b))
    return tuple(out)


def _overlap(name: str, v: Any) -> str | float | None:
    if v is None or v in OVERLAP_MODES:
        return v
    if not _is_num(v) or not 0.0 <= float(v) <= 1.0:
        raise ScenarioError(f"{name} = {v!r}; expected 'measured', 'max', 'sum' or a number in [0, 1]")
    return float(v)


def _share(lo_open: bool, what: str) -> Callable[[str, Any], float | None]:
    def check(name: str, v: Any) -> float | None:
        if v is None:
            return None
        if not _is_num(v) or not (0.0 < float(v) if lo_open else 0.0 <= float(v)) or not float(v) <= 1.0:
            raise ScenarioError(f"{name} = {v!r}; expected {what}")
        return float(v) + 0.0          # -0.0 read as 0
    return check


def _acceptance(name: str, v: Any) -> Acceptance | None:
    if v is None or isinstance(v, Acceptance):
        return v
    raise ScenarioError(f"{name} = {v!r}; expected an Acceptance (Acceptance.from_rate(0.7), .from_length(tau, k), "
                        ".from_rates([...])) or None for the method's published default")


def _bool_optional(name: str, v: Any) -> bool | None:
    if v is None or isinstance(v, bool):
        return v
    raise ScenarioError(f"{name} = {v!r}; expected true, false or None (the engine profile's; \"default\" in a "
                        "sweep spec, which TOML gives no null)")


def _options(name: str, v: Any) -> tuple[tuple[str, Any], ...]:
    if isinstance(v, tuple) and all(isinstance(x, tuple) and len(x) == 2 for x in v):
        v = dict(v)
    if not isinstance(v, Mapping):
        raise ScenarioError(f"{name} = {v!r}; expected a mapping of deployment options")
    resolve_options(v)
    return tuple(sorted(v.items()))


CHECKS: dict[str, Callable[[str, Any], Any]] = {
    "hardware": _name((Hardware,)), "model": _name((ModelShape,)), "draft": _name((ModelShape,), optional=True),
    "engine": _name((EngineProfile,)), "method": _method, "precision": _precision(False),
    "precision?": _precision(True), "int>=1": _int_at_least(1), "int>=0": _int_at_least(0),
    "int>=1?": _int_at_least(1, optional=True), "int>=2?": _int_at_least(2, optional=True), "k": _k,
    "batch": _batch, "overlap": _overlap, "acceptance": _acceptance, "options": _options, "bool?": _bool_optional,
    "fraction?": _share(True, "a share of the GPU's memory in (0, 1] (under TensorRT-LLM its free_gpu_memory_fraction, "
                        "a share of what the weights and its start-up reserve leave)"),
    "locality?": _share(False, "a number in [0, 1] (1: a sequence's tokens route independently)"),
    "sampling": check_sampling}

__all__ = ["CHECKS"]
