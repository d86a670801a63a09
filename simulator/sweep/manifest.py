"""DIR/manifest.json, the record of a sweep directory: what it holds (spec, hash, version, grid counts, shard count),
created once, and checked field by field on every resume, merge and dry run. Every refusal names the file and the
field, and says whether the folder holds another sweep, was split into another shard count, or had its manifest
changed by hand (each field is written with its own digest, `field_sha256`, so an edited value is named as an edit of
the manifest, not blamed on the shards it no longer matches). No pricing and no shards here: store.py lays those out.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import ScenarioError, SpecError
from ..version import __version__
from .durable import create_once, os_errors
from .spec import FORMAT, SweepSpec, spec_difference, spec_digest

MANIFEST = "manifest.json"
DIGESTS = "field_sha256"           # {field: digest of its value as written}; absent in older manifests

# Shards beyond the cells are empty files, allowed up to this many shards in all: a job array of a fixed size (SLURM's
# default MaxArraySize is 1001) can run a small grid; more only names a grid of more cells.
JOB_ARRAY_SHARDS = 4096

# What a manifest holds and the type of each (a manifest of other contents is corrupt, named: found by review, a
# manifest of '[1, 2]' or without n_shards raised a TypeError or KeyError deep in the merge).
_FIELDS = {"specroof_version": str, "spec_hash": str, "n_shards": int, "n_cells": int, "n_points": int,
           "points_per_cell": int, "spec": dict}
_COUNTS = ("n_cells", "n_points", "points_per_cell")


def shard_limit(n_cells: int) -> int:
    """The most shards a grid of n_cells may be split into: one cell each, or JOB_ARRAY_SHARDS."""
    return max(n_cells, JOB_ARRAY_SHARDS)


def _digest(value: Any) -> str:
    """A field's digest: the spec hash's SHA-256 of canonical JSON (spec.spec_digest), 16 hex digits (it detects an
    edit; it is no signature)."""
    return spec_digest(value)[:16]


def manifest_for(spec: SweepSpec, n: int) -> dict[str, Any]:
    """The manifest of a sweep of `spec` in n shards, each field's digest included."""
    man = {"format": FORMAT, "specroof_version": __version__, "spec_hash": spec.spec_hash, "n_shards": n,
           "n_cells": spec.n_cells, "n_points": spec.n_points, "points_per_cell": spec.points_per_cell,
           "dims": list(spec.dims), "shape": list(spec.shape), "description": spec.description,
           "spec": spec.normalized}
    return man | {DIGESTS: {k: _digest(v) for k, v in sorted(man.items())}}


def _show(v: Any) -> str:
    t = json.dumps(v)
    return t if len(t) <= 60 else t[:57] + "..."


def read_manifest(path: Path) -> dict[str, Any]:
    """DIR/manifest.json, parsed and checked field by field; SpecError naming what is wrong."""
    try:
        man = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise SpecError(f"{path}: unreadable manifest ({e})") from None
    if not isinstance(man, dict):
        raise SpecError(f"{path}: corrupt manifest: a JSON {type(man).__name__}, expected an object")
    for k, t in _FIELDS.items():
        v = man.get(k)
        if not isinstance(v, t) or isinstance(v, bool) or (t is int and v < (1 if k == "n_shards" else 0)):
            raise SpecError(f"{path}: corrupt manifest: {k} = {v!r}; expected "
                            f"{'a whole number >= 1' if k == 'n_shards' else 'a ' + t.__name__}")
    if man["n_points"] != man["n_cells"] * man["points_per_cell"]:
        raise SpecError(f"{path}: corrupt manifest: n_points = {man['n_points']}; expected n_cells x points_per_cell "
                        f"= {man['n_cells'] * man['points_per_cell']}")
    if man["n_shards"] > shard_limit(man["n_cells"]):     # found by review: 1e9 shards made merge and resume hang
        raise SpecError(f"{path}: corrupt manifest: n_shards = {man['n_shards']}; expected at most "
                        f"{shard_limit(man['n_cells'])} for n_cells = {man['n_cells']} (manifest.shard_limit)")
    digests = man.get(DIGESTS, {})
    if not isinstance(digests, dict) or not all(isinstance(v, str) for v in digests.values()):
        raise SpecError(f"{path}: corrupt manifest: {DIGESTS} = {_show(digests)}; expected an object of digests")
    return man


def altered_fields(man: dict[str, Any]) -> list[str]:
    """The fields of a manifest whose value is not the one written (its digest differs, or it was added or removed);
    [] for a manifest written before the digests (it has no DIGESTS)."""
    if DIGESTS not in man:
        return []
    recorded, now = man[DIGESTS], {k: _digest(v) for k, v in man.items() if k != DIGESTS}
    return sorted(k for k in set(recorded) | set(now) if recorded.get(k) != now.get(k))


def _difference(man: dict[str, Any], spec: SweepSpec) -> str:
    """What differs between the manifest's recorded spec and this one, for a refusal."""
    try:
        return spec_difference(man.get("spec") or {}, spec.normalized) or "the hashes differ"
    except (KeyError, TypeError, AttributeError):     # a manifest spec not in the normalized form
        return "its recorded spec is not one this build reads"


def _field_change(k: str, man: dict[str, Any], spec: SweepSpec | None) -> str:
    """How one altered field reads now: its value (the recorded spec: how it differs from this run's spec)."""
    if k not in man.get(DIGESTS, {}):
        return f"{k} (no digest of it was written)"
    if k not in man:
        return f"{k} (removed)"
    if k != "spec":
        return f"{k} = {_show(man[k])}"
    diff = _difference(man, spec) if spec is not None and man["spec"] != spec.normalized else ""
    return f"spec (against this one: {diff})" if diff else "spec"


def _altered(path: Path, man: dict[str, Any], fields: list[str], spec: SweepSpec | None) -> SpecError:
    """The refusal of a manifest changed since the sweep wrote it, naming the file and the field(s) (found by user
    review: an edited spec_hash was blamed on every shard as 'corrupt: another spec', an edited n_shards silently
    recomputed the whole sweep beside the old shards)."""
    changes = ", ".join(_field_change(k, man, spec) for k in fields)
    verb = "is not the value" if len(fields) == 1 else "are not the values"
    return SpecError(f"{path}: the manifest was edited after the sweep wrote it: {changes} {verb} written (its "
                     f"{DIGESTS} says so; the shards are not at fault); restore the file, or use a new --out directory")


def _check_counts(path: Path, man: dict[str, Any], spec: SweepSpec) -> None:
    """A manifest of this spec's hash records this spec's grid: else it is corrupt, named by field (found by review:
    n_cells edited to 6 was blamed on every shard, recomputed on every run)."""
    if man["spec_hash"] != spec.spec_hash:
        return
    for k in _COUNTS:
        if man[k] != getattr(spec, k):
            raise SpecError(f"{path}: corrupt manifest: {k} = {man[k]!r}; this spec (the same hash) has "
                            f"{getattr(spec, k)}")


def _check_against(path: Path, man: dict[str, Any], spec: SweepSpec) -> None:
    """A manifest as written is this spec's sweep, by this build: else a refusal naming what differs."""
    out = path.parent
    if man["spec_hash"] != spec.spec_hash:
        raise ScenarioError(f"{out} holds a sweep of another spec (hash {man['spec_hash'][:12]}, this one "
                            f"{spec.spec_hash[:12]}: {_difference(man, spec)}); use a new --out directory")
    if man["specroof_version"] != __version__:
        raise ScenarioError(f"{out} was written by specroof {man['specroof_version']}; this is {__version__}"
                            "; use a new --out directory")


def existing_manifest(out: Path, spec: SweepSpec | None) -> dict[str, Any] | None:
    """DIR's manifest, checked field by field (and against `spec` when given), or None where there is none; nothing
    is written (a dry run's view of DIR)."""
    path = Path(out) / MANIFEST
    if not path.exists():
        return None
    man = read_manifest(path)
    if spec is not None:
        _check_counts(path, man, spec)
    fields = altered_fields(man)
    if fields:
        raise _altered(path, man, fields, spec)
    if man["spec_hash"] != spec_digest(man["spec"]):    # a manifest without digests, its hash edited
        raise SpecError(f"{path}: the manifest was edited after the sweep wrote it: spec_hash = "
                        f"{_show(man['spec_hash'])} is not the hash of the spec recorded beside it "
                        f"({spec_digest(man['spec'])[:12]}...; the shards are not at fault); restore the file, or "
                        "use a new --out directory")
    if spec is not None:
        _check_against(path, man, spec)
    return man


def check_manifest(out: Path, spec: SweepSpec | None, n: int | None = None) -> dict[str, Any]:
    """DIR's manifest, checked (existing_manifest); where there is none, one for `spec` in n shards (the default
    count when None) is written first, once: a run that loses the race to create it checks the winner's. Without a
    spec (a merge), a folder without one is refused."""
    man = existing_manifest(out, spec)
    if man is not None:
        return man
    if spec is None:
        raise ScenarioError(f"{out}: no {MANIFEST}; not a sweep directory (run `specroof sweep SPEC --out DIR`)")
    man = manifest_for(spec, n or spec.default_shards())
    with os_errors(Path(out), "--out"):
        (Path(out) / "shards").mkdir(parents=True, exist_ok=True)
        created = create_once(Path(out) / MANIFEST, (json.dumps(man, indent=1, sort_keys=True) + "\n").encode())
    return man if created else check_manifest(out, spec, n)    # another run created it first: this one must match


def check_shard_count(out: Path, man: dict[str, Any], shard: tuple[int, int] | None, n_shards: int | None) -> None:
    """The shard count asked for (--shard I/N or --shards N) is the folder's, else a refusal naming both counts and
    the two ways on (found by user review: '--shards 12' on a folder of 6 said only 'pass --shard I/6')."""
    have = man["n_shards"]
    asked = shard[1] if shard else n_shards
    if asked is None or asked == have:
        return
    if shard:
        on = (f"run its shards as --shard I/{have} (0 <= I < {have}), or use a new --out directory for a job array "
              f"of {asked} shards")
    else:
        on = f"rerun with --shards {have} (or no --shards) to resume it, or use a new --out directory for {asked} " \
            "shards"
    given = f"--shard {shard[0]}/{shard[1]}" if shard else f"--shards {n_shards}"
    raise ScenarioError(f"{out} was split into {have} shards ({MANIFEST}: n_shards = {have}), not the {asked} of "
                        f"{given}: {on}")


__all__ = ["DIGESTS", "JOB_ARRAY_SHARDS", "MANIFEST", "altered_fields", "check_manifest", "check_shard_count",
           "existing_manifest", "manifest_for", "read_manifest", "shard_limit"]
