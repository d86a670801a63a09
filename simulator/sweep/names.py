"""Hardware, engine, model and draft names of a sweep spec, checked before any work: each must load, and no two may
name one thing."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..engine import load_engine
from ..errors import SpecError, SpecroofError
from ..hardware import load_hardware
from ..model import load_model


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


__all__ = ["err", "names_exist"]
