"""Refactors must not move numbers: every regression scenario equals its golden value to 1e-12 (relative)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from tests.regression import scenarios as S

GOLDEN = json.loads(S.GOLDEN.read_text())
RTOL = 1e-12


def _same(a: Any, b: Any, path: str) -> None:
    """Every number of the golden value `b` in `a`. Fields added since (a dict key golden lacks) are allowed;
    message texts are not compared (the redesign gave "does not fit" one text)."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(b) <= set(a), f"{path}: keys {sorted(b)} not in {sorted(a)}"
        for k in b:
            if k != "message":
                _same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), f"{path}: length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and isinstance(b, (int, float)) and not isinstance(b, bool):
        assert math.isclose(a, b, rel_tol=RTOL, abs_tol=1e-300), f"{path}: {a!r} != {b!r}"
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


def _case(kind: str, name: str) -> Any:
    table = {"curve": (S.CURVES, S.curve), "step": (S.STEPS, S.step), "sweep": (S.SWEEPS, S.sweep),
             "advise": (S.ADVICE, S.advice)}
    cases, fn = table[kind]
    return fn(dict(cases)[name])


# The shipped validation prices every row (seconds): the full lane only.
KEYS = [pytest.param(k, marks=pytest.mark.slow) if k.startswith("validate/") else k for k in sorted(GOLDEN)]


@pytest.mark.parametrize("key", KEYS)
def test_regression(key: str, request: pytest.FixtureRequest) -> None:
    kind, name = key.split("/", 1)
    got = S.validation(request.getfixturevalue("shipped_report")) if kind == "validate" else _case(kind, name)
    _same(S._plain(got), GOLDEN[key], key)
