"""Names in a sweep spec, checked before any work: hardware, engine, model and draft names must load and no two may
name one thing; the files they name are fingerprinted (a resumed sweep must price what the finished shards priced);
a [[zip]] group's name may not be a result column's."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..engine import is_profile_path, load_engine
from ..errors import SpecError, SpecroofError
from ..hardware import load_hardware
from ..model import load_model
from ..scenario import field_kind, scenario_fields

# The result columns of a sweep, in order (RESULT_DOCS describes each); no dimension may take one of these names.
FIELD_ORDER = ("speedup", "k", "verify_tokens", "tokens_per_step", "alpha", "base_step_s", "spec_step_s",
               "draft_s", "verify_s", "overhead_s", "memory_bytes", "feasible", "message")
# What each result means, in its unit: the xarray Dataset's attrs and the Parquet columns' description.
RESULT_DOCS = {
    "speedup": "tokens_per_step * base_step_s / spec_step_s (speedup_curve)",
    "k": "draft depth chosen (k = auto) or given",
    "verify_tokens": "tokens verified per sequence (k + 1 for a chain, the tree size for a tree)",
    "tokens_per_step": "expected tokens per sequence per speculative step, bonus included",
    "alpha": "i.i.d. per-token acceptance rate of the acceptance model (from a length: solved for it)",
    "base_step_s": "plain decode step, s", "spec_step_s": "speculative step, s", "draft_s": "draft passes, s",
    "verify_s": "verify pass, s", "overhead_s": "launch, host and bookkeeping overhead in the speculative step, s",
    "memory_bytes": "per-GPU memory with speculation, bytes", "feasible": "fits (and within the context limit)",
    "message": "why a point is infeasible ('' when feasible)"}
# The sweep parameters that are not Scenario fields (spec.py checks them).
_INPUT_DOCS = {
    "acceptance_rate": "i.i.d. per-token acceptance rate given (Leviathan et al. 2023 eq. 1)",
    "acceptance_length": "mean tokens per step given (bonus included), measured at acceptance_k",
    "acceptance_k": "the draft depth acceptance_length was measured at",
    "batch": "sequences decoded together in one step"}
# What a Parquet column holds where a value is missing (found by user review: the columns had no description in the
# file, and a null parameter or an int64 spec_overlap was left to the reader to guess).
_NULLS = {"number": "null: not priced (the point is infeasible, or its configuration rejected: see message)",
          "memory_bytes": "kept where the point does not fit: what it needs (null where its configuration is "
                          "rejected)",
          "int": "null: the library default (\"default\" in the spec)",
          "name": "'default': the library default", "bool": "1 on, 0 off, null: the library default"}


def column_doc(name: str, k_chosen: bool = False) -> str:
    """The description of a sweep Parquet column: a result's RESULT_DOCS, a Scenario parameter's help text (the CLI
    flag's), or an acceptance / batch input's; with what a missing value means. k is a result where k = "auto"
    chooses it (k_chosen), else a parameter."""
    if name in ("feasible", "message"):
        return RESULT_DOCS[name]
    if name in RESULT_DOCS and (name != "k" or k_chosen):
        return f"{RESULT_DOCS[name]}; {_NULLS['memory_bytes' if name == 'memory_bytes' else 'number']}"
    if name in _INPUT_DOCS:
        return _INPUT_DOCS[name]
    helps = {f.name: f.metadata["help"] for f in scenario_fields("sweep")}
    kind = field_kind(name)
    null = "bool" if kind == "bool?" else "int" if kind.startswith("int") else "name" if kind != "k" else None
    return helps[name] + (f"; {_NULLS[null]}" if null and (kind.endswith("?") or kind == "overlap") else "")


def err(key: str, msg: str) -> SpecError:
    """The one error of a sweep spec: names the key, then what is wrong."""
    return SpecError(f"sweep spec: {key}: {msg}")


def names_exist(key: str, vals: Iterable[str]) -> None:
    """Unknown hardware / model / engine / draft names fail before any work, naming the key; so do two names of one
    thing (an alias beside its name: found by review, hardware = ["h100-sxm", "h100"] priced every cell twice)."""
    load = {"hardware": load_hardware, "engine": load_engine, "model": load_model, "draft": load_model}[key]
    seen: list[tuple[str, Any]] = []
    for v in vals:
        if key == "draft" and v == "default":
            continue
        try:
            got = load(v)
        except SpecroofError as e:
            raise err(key, str(e)) from None
        same = next((w for w, g in seen if g == got), None)
        if same is not None:
            raise err(key, f"{same!r} and {v!r} name the same {key} ({got.name}): repeated values")
        seen.append((v, got))


def file_digests(vals: Iterable[Any]) -> dict[str, str]:
    """SHA-256 of each value that names a file (a hardware, engine or model given by path; a model folder by its
    config.json): a resumed sweep whose files changed must not reuse the shards priced from the old ones (found by
    review: a profile rewritten by `specroof calibrate --out` was resumed into a sweep that mixed both). Bundled names
    are fixed by the specroof version the manifest records."""
    out: dict[str, str] = {}
    for v in vals:
        if not isinstance(v, str) or not _read_as_path(v):
            continue
        p = Path(v)
        p = p / "config.json" if p.is_dir() else p
        try:
            out[v] = hashlib.sha256(p.read_bytes()).hexdigest()
        except OSError as e:           # gone since names_exist loaded it
            raise err("files", f"{v}: cannot read it ({e.strerror or e})") from None
    return dict(sorted(out.items()))


def _read_as_path(v: str) -> bool:
    """Whether the loaders read `v` as a file, not a bundled name (review: a bundled name that matched a folder in
    the working directory was fingerprinted from it): engine.is_profile_path (a .toml name or one with a separator,
    the hardware loader's rule too) or a .json name (a model config), and it exists (a model repository id has a
    separator too)."""
    return (is_profile_path(v) or v.endswith(".json")) and Path(v).exists()


def files_difference(there: dict[str, str], here: dict[str, str]) -> list[str]:
    """What changed in the files two normalized specs name (spec_difference's part for them)."""
    return [f"file {k} {'changed since' if k in there and k in here else 'not named by'} the sweep there"
            for k in sorted(set(there) | set(here)) if there.get(k) != here.get(k)]


__all__ = ["FIELD_ORDER", "RESULT_DOCS", "column_doc", "err", "file_digests", "files_difference", "names_exist"]
