"""Where the bundled data folders are, and the one reader for `{value, source, note}` figures in TOML files.

A checkout keeps `hardware_specs/`, `models/` and `engine_profiles/` at the repository root; a wheel carries them
as `simulator/_data/<folder>` (see pyproject's force-include). `SPECROOF_DATA_DIR` overrides both.
"""

from __future__ import annotations

import difflib
import math
import os
import re
import tomllib
from pathlib import Path
from typing import Any

from .errors import SpecError, SpecroofError

_URL = re.compile(r"^https?://\S+$")
# A month as "YYYY-MM": a profile's valid_from and a row's engine_date, compared as text.
MONTH_RE = re.compile(r"20\d\d-(0[1-9]|1[0-2])")


def data_dir(folder: str) -> Path:
    """Return the directory that holds the bundled data `folder` (hardware_specs, models, engine_profiles)."""
    env = os.environ.get("SPECROOF_DATA_DIR")
    candidates = [Path(env) / folder] if env else []
    here = Path(__file__).resolve().parent
    candidates += [here / "_data" / folder, here.parent / folder]
    for c in candidates:
        if c.is_dir():
            return c
    raise SpecError(f"bundled data folder {folder!r} not found; looked in: {', '.join(map(str, candidates))}")


def read_text(path: str | Path, what: str = "file", error: type[SpecroofError] = SpecError) -> str:
    """A UTF-8 text file's contents; a missing file, a directory, an unreadable, binary or non-UTF-8 file is one
    error naming the path (the type `error`, a SpecroofError)."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise error(f"{p}: file not found") from None
    except IsADirectoryError:
        raise error(f"{p}: is a directory; expected a {what}") from None
    except OSError as e:
        raise error(f"{p}: cannot read: {e.strerror or e}") from None
    if b"\x00" in data:
        raise error(f"{p}: binary data (a NUL byte); expected a {what} in UTF-8 text") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise error(f"{p}: not UTF-8 text (byte {e.start}); expected a {what}") from None


def read_toml(path: Path) -> dict[str, Any]:
    """Parse a TOML file; errors name the file and the parser's line/column."""
    text = read_text(path, "TOML file").removeprefix("\ufeff")      # a UTF-8 byte-order mark, as CSVs allow
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"{path}: malformed TOML: {e}") from None


def figure(
    doc: dict[str, Any],
    section: str,
    key: str,
    path: Path,
    *,
    required: bool = True,
    kind: type = float,
    lo: float | None = None,
    hi: float | None = None,
    extra_keys: frozenset[str] = frozenset(),
    allow_estimate: bool = False,
) -> Any:
    """Read `[section] key = {value, source, note}` and check type, range and provenance.

    Returns the raw value (in the file's unit) or None when absent and not required.
    """
    where = f"{path}: [{section}] {key}" if section else f"{path}: {key}"
    table = doc.get(section, {}) if section else doc
    if not isinstance(table, dict):
        raise SpecError(f"{path}: [{section}] must be a table, got {type(table).__name__}")
    if key not in table:
        if required:
            raise SpecError(f"{where} is missing")
        return None
    fig = table[key]
    check_fields(fig, where, extra_keys, allow_estimate)
    if fig.get("source") == "calibrated":
        _check_value(fig["prior"], f"{where}: prior", kind, lo, hi)
    return _check_value(fig["value"], where, kind, lo, hi)


def prior(doc: dict[str, Any], section: str, key: str) -> Any:
    """The prior of a calibrated figure (the sourced value the fit started from, checked by `figure`); None for a
    figure that is not calibrated or absent."""
    fig = (doc.get(section, {}) if section else doc).get(key)
    return fig["prior"] if isinstance(fig, dict) and fig.get("source") == "calibrated" else None


def check_fields(fig: Any, where: str, extra_keys: frozenset[str], allow_estimate: bool) -> None:
    """A figure is an inline table with a value, no unknown fields and a source (a URL, or an estimate when
    allowed); `where` names it in the error."""
    if not isinstance(fig, dict):
        raise SpecError(f"{where} = {fig!r}: expected an inline table {{ value = ..., source = \"https://...\" }}")
    allowed = {"value", "source", "note"} | set(extra_keys)
    if fig.get("source") == "calibrated":     # a fitted value keeps the sourced value it started from
        allowed.add("prior")
        if "prior" not in fig:
            raise SpecError(f"{where}: a calibrated figure needs its 'prior' (the sourced value the fit started from)")
    unknown = set(fig) - allowed
    if unknown:
        raise SpecError(f"{where}: unknown field(s) {sorted(unknown)}; expected {sorted(allowed)}")
    if "value" not in fig:
        raise SpecError(f"{where}: missing 'value'")
    src = fig.get("source")
    if not isinstance(src, str) or not (_URL.match(src) or (allow_estimate and src in ("estimate", "calibrated"))):
        expect = "an http(s) URL, \"estimate\" or \"calibrated\"" if allow_estimate else "an http(s) URL"
        raise SpecError(f"{where}: source = {src!r}, expected {expect}")


def _check_value(v: Any, where: str, kind: type, lo: float | None, hi: float | None) -> Any:
    """A figure's value checked for its kind (bool, int or float) and the range [lo, hi]; returned as that kind."""
    if kind is bool:
        if not isinstance(v, bool):
            raise SpecError(f"{where}: value = {v!r}, expected true or false")
        return v
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise SpecError(f"{where}: value = {v!r}, expected a number")
    if kind is int and not (math.isfinite(v) and v == int(v)):
        raise SpecError(f"{where}: value = {v!r}, expected an integer")
    if v != v or (lo is not None and v < lo) or (hi is not None and v > hi):
        raise SpecError(f"{where}: value = {v!r} outside the plausible range [{lo}, {hi}]")
    return kind(v)


def check_keys(doc: dict[str, Any], allowed: dict[str, set[str] | None], path: Path) -> None:
    """Reject unknown top-level keys and unknown keys inside known sections (None = any key allowed)."""
    for k, v in doc.items():
        if k not in allowed:
            raise SpecError(f"{path}: unknown key {k!r}; expected one of {sorted(allowed)}")
        sub = allowed[k]
        if sub is not None and isinstance(v, dict):
            bad = set(v) - sub
            if bad:
                raise SpecError(f"{path}: [{k}] unknown key(s) {sorted(bad)}; expected some of {sorted(sub)}")


def read_spec(path: Path, allowed: dict[str, set[str] | None]) -> tuple[dict[str, Any], str]:
    """Read a schema-1 spec TOML (hardware, engine profile): check its keys, schema version and name."""
    doc = read_toml(path)
    check_keys(doc, allowed, path)
    if doc.get("schema") != 1:
        raise SpecError(f"{path}: schema = {doc.get('schema')!r}, expected 1")
    name = doc.get("name")
    if not isinstance(name, str) or not name:
        raise SpecError(f"{path}: name = {name!r}, expected a non-empty string")
    return doc, name


def suggest(name: str, choices: list[str]) -> str:
    """A ' did you mean ...?' suffix listing close names, or '' when nothing is close."""
    close = difflib.get_close_matches(name, choices, n=4, cutoff=0.5)
    return f"; did you mean {', '.join(close)}?" if close else ""


def name_list(doc: dict[str, Any], path: str | Path, sec: str, key: str, allowed: tuple[str, ...],
              at_least_one: bool = True) -> tuple[str, ...]:
    """[sec] key of a spec file as a list of names from `allowed`, { value = ["ngram", ...], source = ... } (absent:
    empty): an engine profile's methods, vendors, fusions or attention-path lists; one error naming the file."""
    entry = doc.get(sec, {}).get(key)
    if entry is None:
        return ()
    where = f"{path}: [{sec}] {key}"
    if not isinstance(entry, dict) or not isinstance(entry.get("source"), str) or "value" not in entry:
        raise SpecError(f"{where}: expected {{ value = [\"name\", ...], source = \"https://...\" }}")
    v = entry["value"]
    if not isinstance(v, list) or any(m not in allowed for m in v) or (at_least_one and not v):
        raise SpecError(f"{where}: value = {v!r}; expected a list of names from {', '.join(allowed)}"
                        + (" (at least one)" if at_least_one else ""))
    return tuple(v)
