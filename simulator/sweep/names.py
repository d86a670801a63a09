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

# The result columns of a sweep, in order (dataset.ATTRS describes each); no dimension may take one of these names.
FIELD_ORDER = ("speedup", "k", "verify_tokens", "tokens_per_step", "alpha", "base_step_s", "spec_step_s",
               "draft_s", "verify_s", "overhead_s", "memory_bytes", "feasible", "message")


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


__all__ = ["FIELD_ORDER", "err", "file_digests", "files_difference", "names_exist"]
