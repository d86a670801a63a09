"""Formatting for the terminal: tables, CSV, JSON, times and memory. Formatting lives here and nowhere else; every
number reaching it is SI (seconds, bytes)."""

from __future__ import annotations

import csv
import io
import json
import math
import sys
from collections.abc import Sequence
from typing import Any

from ..experts import SEQ_ROUTING_RHO


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    w = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.rjust(w[i]) for i, c in enumerate(r)) for r in cells]
    lines.insert(1, "  ".join("-" * x for x in w))
    return "\n".join(lines)


def csv_text(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """CSV of the table's cells; a cell the table shows as '-' (no value: infeasible, not applicable) is empty, so a
    numeric column reads back as numbers with missing values (found by review: pandas read them as strings)."""
    buf = io.StringIO()
    wr = csv.writer(buf, lineterminator="\n")
    wr.writerow(headers)
    wr.writerows([["" if isinstance(c, str) and c == "-" else c for c in r] for r in rows])
    return buf.getvalue().rstrip("\n")


def rows_out(fmt: str, headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    return csv_text(headers, rows) if fmt == "csv" else table(headers, rows)


def layout(sc: dict[str, Any]) -> str:
    """The parallel layout a scenario dict prices: 'tp=1, dp=32, ep=32' (tp always; dp, pp and ep when used)."""
    return ", ".join([f"tp={sc['tp']}"] + [f"{k}={sc[k]}" for k in ("dp", "pp", "ep") if sc.get(k, 1) not in (None, 1)])


def named(sc: dict[str, Any], kind: str) -> str:
    """The device (kind 'hardware') or engine profile (kind 'engine') a scenario dict names; one read from a file
    says so (it is used as written, with any values `specroof calibrate` wrote into it: the same name loaded as
    bundled gets the shipped calibration, calibration/fit.toml, and prints other numbers; found by review: a file
    written by calibrate was called uncalibrated)."""
    f = sc.get(f"{kind}_file")
    return sc[kind] if not f else \
        f"{sc[kind]} [file {f}, used as written: the shipped calibration applies to bundled names only]"


def file_note(sc: dict[str, Any]) -> None:
    """The same on stderr for CSV output, which has no header line to say it in (nothing for bundled names)."""
    for kind in ("hardware", "engine"):
        if sc.get(f"{kind}_file"):
            print(f"note: {kind} {named(sc, kind)}", file=sys.stderr)


def rejected_note(w: dict[str, Any]) -> None:
    """CSV output's stderr line for the requests of a length distribution left out as too long for the model (the
    workload dict's 'rejected'; with arrival rates, that the rates shown are the served share)."""
    if not w.get("rejected"):
        return
    rate = ""
    if w.get("rate"):
        share = w["samples"] / (w["samples"] + w["rejected"])
        rate = f"; each rate shown is the served share ({share:.3g}) of the rate given"
    print(f"note: {w['rejected']} request(s) of the length distribution need more positions than the model has: "
          f"left out, as an engine rejects them (the rows price the rest){rate}", file=sys.stderr)


def formats(sc: dict[str, Any]) -> str:
    """The weight formats a scenario dict prices: 'weights bf16, experts fp4' (experts and attention when apart)."""
    out = f"weights {sc['precision']}"
    for key, what in (("expert_precision", "experts"), ("attention_precision", "attention")):
        if sc.get(key) not in (None, sc["precision"]):
            out += f", {what} {sc[key]}"
    rho = sc.get("routing_locality")
    out += f", routing locality {rho:g}" if rho is not None and rho != SEQ_ROUTING_RHO else ""
    out += f", {sc['sampling']} sampling" if sc.get("sampling", "greedy") != "greedy" else ""
    return out + (f"; {sc['checkpoint']}" if sc.get("checkpoint") else "")


def _finite(v: Any) -> Any:
    """v with every non-finite number null (found by review: calibrate's 1-sigma of a parameter at a bound printed
    Infinity, which strict JSON parsers refuse); what the number meant is in the fields beside it (a status, a
    message)."""
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite(x) for x in v]
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def dumps(d: Any) -> str:
    """Strict JSON (no NaN or Infinity tokens: those numbers are written null)."""
    return json.dumps(_finite(d), indent=2, allow_nan=False)


def ms(x: float | None) -> str:
    """Seconds as milliseconds, '-' for none."""
    return "-" if x is None else f"{x * 1e3:.3f}"


def gb(x: float | None) -> str:
    """Bytes as GB (1e9 B): the one memory unit of the CLI."""
    return "-" if x is None else f"{x / 1e9:.1f}"


def num(x: float | None, spec: str = ".3f") -> str:
    return "-" if x is None else format(x, spec)


def rate(x: float | None) -> str:
    """A rate (tokens/s): one decimal from 100 up, else three significant digits, so that a small one does not print
    as 0.0 (found by review: 1.5 tokens/s per GPU of a 64-GPU prefill-bound run read 0.0)."""
    return "-" if x is None else format(x, ".1f" if abs(x) >= 100.0 else ".3g")


def print_hazards(hazards: list[Any], file: Any = None) -> None:
    """'warnings:' and one block per hazard with its links (nothing when the list is empty)."""
    f = file or sys.stdout
    if not hazards:
        return
    print("warnings:", file=f)
    for h in hazards:
        print(f"  [{h.severity}] {h.title} ({h.id})", file=f)
        print(f"    {h.detail}", file=f)
        for u in h.links:
            print(f"    {u}", file=f)


def hazard_lines(hazards: list[Any]) -> None:
    """One stderr line per hazard (for csv / json output, where stdout is data)."""
    for h in hazards:
        print(f"warning: [{h.severity}] {h.title} ({h.id}): {' '.join(h.links)}", file=sys.stderr)
