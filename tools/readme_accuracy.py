"""Refresh the held-out tables in README.md ("How accurate is it") from validation/ACCURACY.md.

    python tools/calibrate_shipped.py --write --cv   # refit and rewrite validation/ACCURACY.md
    python tools/readme_accuracy.py                  # then copy its tables into the README

Each README table sits under a fixed caption; this replaces the table that follows the caption with the matching
table of ACCURACY.md, so the README's tables are the last cross-validation's (figures quoted in its prose are not
checked here).
"""

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from simulator.files import write_text  # noqa: E402
from simulator.validation import SCOPES  # noqa: E402

ACC, README = ROOT / "validation" / "ACCURACY.md", ROOT / "README.md"


def tables(text: str) -> dict[str, list[str]]:
    """ACCURACY.md: each '###'/'##' heading -> the first markdown table under it (its lines)."""
    out: dict[str, list[str]] = {}
    head = None
    for line in text.splitlines():
        if line.startswith("#"):
            head = line.lstrip("#").strip()
        elif line.startswith("|") and head is not None:
            out.setdefault(head, []).append(line)
        elif out.get(head):
            head = None
    return out


def overall(lines: list[str], what: str) -> list[str]:
    """The cells of a table's 'overall' row (its last row); an error naming the table if it has none."""
    cells = [c.strip() for c in lines[-1].strip("|").split("|")]
    if cells[0] != "overall":
        raise ValueError(f"ACCURACY.md: the {what} table has no 'overall' last row")
    return cells


def overall_rows(t: dict[str, list[str]], heads: list[tuple[str, list[str]]], cells: int = 4) -> list[str]:
    """For each (ACCURACY.md heading, leading cells) whose table exists: the leading cells, then the first `cells`
    figures of its 'overall' row (n, median, within-20% and bias; a shape table adds direction agrees)."""
    out = []
    for heading, lead in heads:
        if t.get(heading):
            out.append("| " + " | ".join(lead + overall(t[heading], heading)[1:1 + cells]) + " |")
    return out


def headline_summary(t: dict[str, list[str]]) -> list[str]:
    """The README's summary: the 'overall' row of each headline kind ACCURACY.md reports."""
    labels = (("speedup", "speedup (spec / plain)"), ("step", "step time, TPOT, ITL, tok/s, E2E"),
              ("ttft", "time to first token"))
    return ["| rows | n | median abs error | within 20% | bias |", "|---|---|---|---|---|"] + \
        overall_rows(t, [(f"headline: {kind} rows", [label]) for kind, label in labels])


def outside(t: dict[str, list[str]]) -> list[str]:
    """Rows outside the headline: the overall row of each (scope, kind) ACCURACY.md reports."""
    heads = [(f"{scope}: {kind} rows", [scope, kind]) for scope in ("acceptance unknown", "legacy engine")
             for kind in ("speedup", "step", "ttft")]
    return ["| scope | kind | n | median abs error | within 20% | bias |", "|---|---|---|---|---|---|"] + \
        overall_rows(t, heads)


def shipped(t: dict[str, list[str]]) -> list[str]:
    """The calibrated parameters that are shipped (status 'fitted')."""
    lines = t["Calibrated parameters"]
    return lines[:2] + [x for x in lines[2:] if "| fitted |" in x]


def shape_summary(t: dict[str, list[str]]) -> list[str]:
    """The curve-shape summary: the 'overall' row of each scope's shape table (steps, median abs shape error,
    within 20 %, bias, direction agrees)."""
    return ["| scope | steps | median abs shape error | within 20% | bias | direction agrees |",
            "|---|---|---|---|---|---|"] + \
        overall_rows(t, [(f"curve shape: {scope} speedup rows", [scope]) for scope in SCOPES], cells=5)


def sections(t: dict[str, list[str]]) -> list[tuple[str, list[str]]]:
    """Every README caption with the table ACCURACY.md gives it."""
    return [("**Headline rows, held out**", headline_summary(t)),
            ("Speedup rows by source:", t["headline: speedup rows"]),
            ("Step-time rows by source:", t["headline: step rows"]),
            ("By how a row is priced", t["leave-one-source-out: headline rows by how they were priced"]),
            ("Rows outside the headline", outside(t)),
            ("**Curve shape, held out**", shape_summary(t)),
            ("Shipped (determined) values", shipped(t))]


def replace_after(readme: str, caption: str, new: list[str]) -> str:
    """Replace the markdown table that follows the line holding `caption` (only blank lines between) with `new`."""
    i = readme.find(caption)
    if i < 0:
        raise ValueError(f"README.md: no caption {caption!r}")
    start = readme.find("\n", i) + 1
    m = re.compile(r"(?:[ \t]*\n)*((?:\|[^\n]*\n)+)").match(readme, start)
    if start == 0 or m is None:
        raise ValueError(f"README.md: no table after {caption!r}")
    return readme[:m.start(1)] + "\n".join(new) + "\n" + readme[m.end(1):]


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)   # --help: print, write nothing
    t = tables(ACC.read_text(encoding="utf-8"))
    s = README.read_text(encoding="utf-8")
    for caption, table in sections(t):
        s = replace_after(s, caption, table)
    write_text(README, s)
    print(f"refreshed the accuracy tables of {README.relative_to(ROOT)} from {ACC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
