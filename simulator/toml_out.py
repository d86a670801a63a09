"""Writing TOML: the one writer of the files specroof produces (calibrated engine profiles), with every string escaped
as a TOML basic string; read back by the loaders (tomllib), which check them."""

from __future__ import annotations

from typing import Any


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):     # an inline table's value that is a table itself ([kernels] fused_from, fused_on)
        return "{ " + ", ".join(f"{k} = {_toml_value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, (int, float)):
        return repr(float(v)) if isinstance(v, float) else str(v)
    return '"' + "".join(_TOML_ESCAPES.get(c, c if c >= " " and c != "\x7f" else f"\\u{ord(c):04x}")
                         for c in str(v)) + '"'


# TOML basic strings: backslash, quote and the control characters escaped (found by review: a base profile's
# multi-line note was written with its newline and the calibrated profile did not load).
_TOML_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r", "\b": "\\b",
                 "\f": "\\f"}


def dump_toml(doc: dict[str, Any]) -> str:
    """A profile document as TOML (top-level keys, then one table per section of inline tables)."""
    lines = []
    for k, v in doc.items():
        if not isinstance(v, dict):
            lines.append(f"{k} = {_toml_value(v)}")
    for k, v in doc.items():
        if isinstance(v, dict):
            lines.append(f"\n[{k}]")
            for kk, vv in v.items():
                if isinstance(vv, dict):
                    inner = ", ".join(f"{a} = {_toml_value(b)}" for a, b in vv.items())
                    lines.append(f"{kk} = {{ {inner} }}")
                else:
                    lines.append(f"{kk} = {_toml_value(vv)}")
    return "\n".join(lines) + "\n"


__all__ = ["dump_toml"]
