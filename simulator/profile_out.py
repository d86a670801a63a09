"""Writing a fitted engine profile (`write_profile`): the base profile's TOML with the fit's values, so that the
written file, loaded by path, prices exactly as the fit's profile did (checked before anything is replaced)."""

from __future__ import annotations

import math
from dataclasses import fields
from pathlib import Path
from typing import Any

from .calibration import FITTED, PARAMS, FitResult
from .data import data_dir, read_toml
from .engine import EngineProfile, is_profile_path, list_engines, load_engine, read_profile
from .errors import ScenarioError, SpecroofError
from .files import write_atomic
from .toml_out import dump_toml

# What a profile records about itself rather than prices with: left out of the round-trip check.
_PROVENANCE = {"name", "display_name", "sources", "priors", "path"}
SHIPPED = "the shipped calibration (calibration/fit.toml)"
KEPT = ("not determined by these rows: the value the fit's profile priced with (its base profile's, or an undetermined "
        "estimate where the fit was not pruned)")


def _base_file(base: str | Path | EngineProfile) -> tuple[Path, EngineProfile | None]:
    """The TOML a base is a copy of, and the shipped (calibrated) profile when it is a bundled name."""
    if isinstance(base, EngineProfile):
        if base.path:
            return Path(base.path), None
        if base.name not in list_engines():
            raise ScenarioError(f"base profile {base.name!r} has no file to copy (not loaded from a path, not a "
                                f"bundled name: {', '.join(list_engines())}); pass the name or path it was loaded from")
        base = base.name
    if is_profile_path(str(base)):
        return Path(base), None
    return data_dir("engine_profiles") / f"{str(base).strip().lower()}.toml", load_engine(str(base))


def _close(name: str, a: Any, b: Any) -> bool:
    """Equal as priced: a fittable number within 1e-8 of its range (a kept value starts clipped 1e-9 of its range
    inside its bounds), anything else exactly."""
    if name in PARAMS and isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-8 * (PARAMS[name].hi - PARAMS[name].lo))
    return a == b


def write_profile(result: FitResult, engine: str, base: str | Path | EngineProfile, out: str | Path,
                  rows_label: str, name: str | None = None) -> Path:
    """Write the base profile's TOML (a bundled name, a profile path, or the EngineProfile the fit started from)
    with every value `engine`'s fitted profile (result.engines[engine]) prices with: the fitted values (source =
    "calibrated", their prior and a note with the fit's uncertainty and rows), and, where a parameter the data did not
    determine kept a value other than the file's, that value (the shipped calibration of a bundled base, or whatever
    the fit started from). The written file, loaded by path, must price as result.engines[engine] (else nothing is
    written): found by review, a fit started from `load_engine(name).uncalibrated()` was written with the shipped
    calibration in the fields it had kept at their sourced values, +0.67 ms on every vLLM step."""
    if engine not in result.engines:
        raise ScenarioError(f"engine {engine!r} is not in the fit; it fitted {', '.join(result.engines)}")
    fit_eng = result.engines[engine]
    bp, shipped = _base_file(base)
    doc, outp = read_toml(bp), Path(out)
    doc["name"] = name or outp.stem
    as_file = read_profile(bp)
    priors = dict(shipped.priors if shipped is not None else fit_eng.priors)
    for p in result.params:
        if p.group != engine or PARAMS[p.name].scope != "engine":
            continue
        if p.status == FITTED:
            _set(doc, p.name, p.value, priors.get(p.name),
                 f"fitted by specroof calibrate on {rows_label} ({len(result.row_ids)} rows); 1-sigma {p.stderr:.3g}; "
                 f"bounds {p.lo:g}..{p.hi:g} ({PARAMS[p.name].mechanism}); RMS log residual {result.rms_before:.3f} "
                 f"-> {result.rms_after:.3f}")
    for fld in PARAMS:
        v = getattr(fit_eng, fld, None) if PARAMS[fld].scope == "engine" else None
        if v is None or fld in result.values(engine) or _close(fld, v, getattr(as_file, fld)):
            continue
        note = SHIPPED if shipped is not None and _close(fld, v, getattr(shipped, fld)) else KEPT
        _set(doc, fld, v, priors.get(fld), note)
    text = dump_toml(doc)

    def write(tmp: Path) -> None:       # the profile must load, and price as the fit's, before it replaces `out`
        tmp.write_text(text, encoding="utf-8")
        try:
            got = read_profile(tmp)
        except SpecroofError as e:
            raise ScenarioError(f"{outp}: the calibrated profile would not load, nothing written: "
                                f"{str(e).replace(str(tmp), str(outp))}") from None
        off = [f.name for f in fields(EngineProfile) if f.name not in _PROVENANCE
               and not _close(f.name, getattr(got, f.name), getattr(fit_eng, f.name))]
        if off:
            raise ScenarioError(f"{outp}: the calibrated profile would not price as the fit did ({', '.join(off)} "
                                f"differ from the fit's {engine} profile; its base {bp} does not hold them), nothing "
                                "written: pass the base the fit started from")
    write_atomic(outp, write)
    return outp


def _set(doc: dict[str, Any], fld: str, value: float, was: float | None, note: str) -> None:
    """A calibrated entry for EngineProfile field `fld`; its prior is `was`, else the entry's own prior or value."""
    par = PARAMS[fld]
    old = doc.get(par.section, {}).get(par.key)
    if was is None:
        was = old.get("prior", old.get("value")) if isinstance(old, dict) else par.start
    doc.setdefault(par.section, {})[par.key] = {"value": value, "source": "calibrated", "prior": was, "note": note}


__all__ = ["write_profile"]
