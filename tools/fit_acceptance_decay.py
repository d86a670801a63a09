"""Fit the per-position acceptance decay d per method on published tables of tau at several k (same model, drafter
and dataset), and write acceptance/decay.toml. Run by hand; its output is committed:

    python tools/fit_acceptance_decay.py [validation/sources/acceptance.csv]

Model (simulator/acceptance.py): the conditional acceptance at draft position j is a_j = a_1 d^(j-1), and
tau(k) = 1 + sum_{i<=k} prod_{j<=i} a_j. Each table gets its own a_1 (workloads differ); d is shared by every table of a
method (a property of how the drafter conditions on its own guesses). A table needs at least three depths. The
uncertainty is the spread of the per-table fits (their standard deviation; the single value when one table).
"""

from __future__ import annotations

import csv
import re
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
from scipy.optimize import least_squares

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "acceptance" / "decay.toml"
# Methods whose tables describe the drafter specroof prices under that name (DeepSeek-V3/R1's single MTP module
# reused beyond depth 1: the TensorRT-LLM table; Qwen3.5's multi-module MTP is another drafter and is left out).
KEEP = {"eagle": None, "eagle3": None, "dflash": None, "ngram": None, "mtp": ("trtllm-blog1-dsr1-mtp-acc",)}


def tau(a1: float, d: float, k: int) -> float:
    a = np.minimum(a1 * d ** np.arange(k), 1 - 1e-9)
    return float(1.0 + np.cumprod(a).sum())


def _chain(r: dict[str, str]) -> bool:
    """Chains only: a tree's tau at k (SGLang topk > 1) is another quantity."""
    topk = re.search(r"topk\s*=\s*(\d+)", r["notes"])
    return not (topk and int(topk.group(1)) != 1) and "tree, not chain" not in r["notes"]


def tables(path: Path) -> dict[str, list[tuple[str, dict[int, float]]]]:
    g: dict[tuple, list[tuple[int, float]]] = defaultdict(list)
    for r in csv.DictReader(open(path, encoding="utf-8")):
        if r["tau"] and not r["position"] and r["method"] in KEEP and _chain(r):
            g[(r["method"], r["source_id"], r["model"], r["drafter"], r["dataset"], r["temperature"])].append(
                (int(r["k"]), float(r["tau"])))
    out: dict[str, list] = defaultdict(list)
    for key, kv in g.items():
        by_k = {k: float(np.mean([t for kk, t in kv if kk == k])) for k in {k for k, _ in kv}}
        ids = KEEP[key[0]]
        if len(by_k) >= 3 and (ids is None or key[1] in ids):
            out[key[0]].append((key[1], by_k))
    return out


def fit(method_tables: list[tuple[str, dict[int, float]]]) -> tuple[float, float, float, list[float]]:
    """(d, sd of per-table d, worst relative tau residual, per-table d) with one a_1 per table and one shared d."""
    n = len(method_tables)

    def resid(x: np.ndarray) -> np.ndarray:
        d = x[-1]
        return np.concatenate([[tau(x[i], d, k) / t - 1 for k, t in tb.items()]
                               for i, (_, tb) in enumerate(method_tables)])
    sol = least_squares(resid, np.r_[np.full(n, 0.7), 0.95], bounds=(np.r_[np.full(n, 0.01), 0.3],
                                                                     np.r_[np.full(n, 0.999), 1.2]))
    per = []
    for _, tb in method_tables:
        one = least_squares(lambda x, tb=tb: [tau(x[0], x[1], k) / t - 1 for k, t in tb.items()], [0.7, 0.95],
                            bounds=([0.01, 0.3], [0.999, 1.2]))
        per.append(float(one.x[1]))
    return float(sol.x[-1]), float(np.std(per)) if n > 1 else float("nan"), float(np.abs(sol.fun).max()), per


def main() -> None:
    src = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "validation" / "sources" / "acceptance.csv"
    shown = src.relative_to(ROOT) if src.is_relative_to(ROOT) else src
    lines = ["# Per-position acceptance decay d per method: a_j = a_1 d^(j-1) (simulator/acceptance.py).",
             f"# Written by tools/fit_acceptance_decay.py from {shown}"
             " (published tau at several k; sources in validation/sources/SOURCES.md). Methods absent here: d = 1 "
             "(i.i.d.), for want of per-k tables.", "schema = 1", ""]
    for method, tbs in sorted(tables(src).items()):
        d, sd, worst, per = fit(tbs)
        ids = sorted({s for s, _ in tbs})
        lines.append(f"[{method}]")
        lines.append(f"decay = {d:.4f}")
        lines.append(f"decay_sd = {sd:.4f}" if sd == sd else "decay_sd = nan")
        lines.append(f"tables = {len(tbs)}")
        lines.append(f"worst_tau_residual = {worst:.4f}")
        lines.append(f"per_table_decay = [{', '.join(f'{x:.3f}' for x in per)}]")
        lines.append(f"sources = [{', '.join(repr(i).replace(chr(39), chr(34)) for i in ids)}]")
        lines.append("")
        print(f"{method}: d = {d:.3f} (sd {sd:.3f}, {len(tbs)} tables, worst tau residual {worst:.1%})")
    OUT.write_text("\n".join(lines))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
