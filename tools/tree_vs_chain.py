"""What a draft tree costs over a chain that verifies as many tokens, measured in one harness and priced by specroof.

    python tools/tree_vs_chain.py              # SpecBundle's SGLang EAGLE-3 pairs on H200 (validation/sources)
    python tools/tree_vs_chain.py --no-price   # the measured side only (no pricing: a second)

SGLang's SpecBundle dashboard (validation/sources/speculative.csv, source specbundle-dashboard) ran every target at
num_draft_tokens 6 and 8 twice: as a chain (steps 5 and 7, topk 1) and as a tree of the same size (steps 5 and 7,
topk 3 and 4), on the same GPUs, batch, dataset and drafter. Both verify the same number of tokens a sequence, so the
difference of their step times is what the tree itself costs. A speculative step is tau / (speedup x plain
tokens/s a user) of the run's own plain baseline, so each pair gives

    measured step (ms) of the chain and the tree, the tree's premium in ms, and the step ratio tree / chain,

and, priced with the shipped profile and calibration for the pair's rows in validation/rows.csv (the same runs),
specroof's step ratio (tau / predicted speedup of each). One line per target and draft size: each column is the
median of its own values over the pairs (datasets and drafters), so the premium need not be the difference of the
two step columns printed beside it. A chain is paired only with the tree of its own drafter and dataset.

What it shows (2026-12-07): the dense targets, the 30B-class MoE targets and Qwen3-Next-80B on one to four GPUs pay
0.45-1.95 ms a step for the tree (ratio 1.03-1.14), the large MoE targets (Qwen3-235B-A22B, Kimi-K2 and Ling-flash-2.0
on eight GPUs, Qwen3-Coder-480B on a count not stated) nothing (0.94-1.01). specroof priced the tree and the chain the
same until the FlashInfer path was priced (same day): on Hopper a tree switches SGLang from FA3 to FlashInfer for an
FA3-default model type (Llama, Qwen3, Qwen3-MoE), whose per-step plans and host syncs cost 0.625 ms a step, the
median of the 12 pairs the rule switches (engine_profiles/sglang.toml [spec] flashinfer_step_s), so Llama-3.1-8B
prices 1.06, Llama-3.3-70B 1.03, the Qwen3-30B pair 1.05, Kimi-K2 (MLA: FA3 both) and Ling-flash-2.0 (FlashInfer
both) 1.00-1.01, and Qwen3-235B / Qwen3-Coder-480B 1.02-1.03, which they do not measure;
Qwen3-Next (FlashInfer both) 1.00 where it measures 1.03-1.06 (its tree-only GDN work is not priced).
Llama-4-Scout's lines are
printed but not read: 15 of its 56 runs here measure a speedup above tau, a step shorter than a plain one, and it is
not in validation/rows.csv (README, SpecBundle).
README, "Not modelled", says what could cause it, and what a fitted tree term did held out and blind.
"""

from __future__ import annotations

import argparse
import csv
import re
import signal
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pair_errors import read_csv  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ROOT / "validation" / "sources" / "speculative.csv"
ROWS = ROOT / "validation" / "rows.csv"
SOURCE = "specbundle-dashboard"
SOURCE_COLUMNS = ("source_id", "locator", "method", "metric", "measured", "tau")
ROW_COLUMNS = ("row_id", "source_id", "locator", "metric", "measured", "tau")
CONFIG = re.compile(r"steps (\d+), topk (\d+), num_draft_tokens (\d+)")


def _key(locator: str) -> tuple[str, ...] | None:
    """(target, dataset, batch, drafter, draft tokens, topk) of a SpecBundle speculative run's locator 'target /
    dataset / batch_size B / steps S, topk K, num_draft_tokens N / drafter'; None for a plain run's ('... / Without
    EAGLE3')."""
    parts, m = locator.split(" / "), CONFIG.search(locator)
    return (parts[0], parts[1], parts[2], parts[4], m.group(3), m.group(2)) if len(parts) == 5 and m else None


def _float(r: dict[str, str], key: str) -> float:
    """A positive number from a row's cell; a ValueError naming the row otherwise (a ragged row's missing cell is
    None, a zero would divide)."""
    try:
        v = float(r[key])
    except (TypeError, ValueError):
        raise ValueError(f"row {r['locator']!r}: {key} {r[key]!r} is not a number") from None
    if not v > 0:
        raise ValueError(f"row {r['locator']!r}: {key} {r[key]!r} is not positive")
    return v


def measured_steps(rows: list[dict[str, str]]) -> dict[tuple[str, ...], float]:
    """Per `_key` (target, dataset, batch, drafter, draft tokens, topk): the measured speculative step in seconds, tau
    / (speedup x the plain run's tokens/s a user); runs without a plain baseline are left out."""
    rows = [r for r in rows if r["source_id"] == SOURCE]
    bad = next((r for r in rows if any(r[c] is None for c in SOURCE_COLUMNS)), None)
    if bad is not None:
        raise ValueError(f"row {bad['locator']!r}: fewer cells than the header")
    plain = {tuple(r["locator"].split(" / ")[:3]): _float(r, "measured") for r in rows
             if r["method"] in ("", "none") and r["metric"] == "tokens_per_s_per_user"}
    out: dict[tuple[str, ...], float] = {}
    for r in rows:
        key = _key(r["locator"])
        if r["metric"] == "speedup" and key and key[:3] in plain:
            out[key] = _float(r, "tau") / (_float(r, "measured") * plain[key[:3]])
    return out


def priced_steps(rows: list[dict[str, str]]) -> dict[tuple[str, ...], float]:
    """The same keys for the pairs' rows of validation/rows.csv: tau / predicted speedup (a step in units of the
    plain step), priced as shipped."""
    from simulator.validation import predict_row  # lazy: --no-price runs without the package's import time
    out: dict[tuple[str, ...], float] = {}
    for r in rows:
        key = _key(r["locator"])
        if r["source_id"] == SOURCE and r["metric"] == "speedup" and key and key[4] in ("6", "8"):
            out[key] = _float(r, "tau") / predict_row(r)
    return out


def pairs(steps: dict[tuple[str, ...], float], priced: dict[tuple[str, ...], float] | None
          ) -> list[dict[str, object]]:
    """Per (target, batch, draft tokens): the medians over datasets and drafters of the chain's and the tree's
    measured steps (ms), of the tree's premium (ms) and of the measured step ratio (each the median of its own
    column over the pairs) and, with `priced`, of specroof's."""
    acc: dict[tuple[str, str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for key, tree in steps.items():
        *run, ndt, topk = key
        chain = steps.get(tuple(run) + (ndt, "1"))
        if topk == "1" or chain is None:
            continue
        a = acc[(run[0], run[2], ndt)]
        a["chain"].append(chain * 1e3)
        a["tree"].append(tree * 1e3)
        a["premium"].append((tree - chain) * 1e3)
        a["ratio"].append(tree / chain)
        if priced is not None and key in priced and tuple(run) + (ndt, "1") in priced:
            a["priced"].append(priced[key] / priced[tuple(run) + (ndt, "1")])
    out = []
    for (target, batch, ndt), a in sorted(acc.items()):
        med = {k: statistics.median(v) for k, v in a.items() if v}
        out.append({"target": target, "batch": batch.removeprefix("batch_size "), "tokens": ndt,
                    "pairs": len(a["ratio"]), "chain_ms": med["chain"], "tree_ms": med["tree"],
                    "premium_ms": med["premium"], "ratio": med["ratio"], "priced": med.get("priced")})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sources", type=Path, default=SOURCES, help="the measured runs (default: "
                    "validation/sources/speculative.csv)")
    ap.add_argument("--rows", type=Path, default=ROWS, help="the rows CSV priced beside them (default: "
                    "validation/rows.csv)")
    ap.add_argument("--no-price", action="store_true", help="print the measured side only")
    a = ap.parse_args(argv)
    path = a.sources
    try:
        steps = measured_steps(read_csv(a.sources, SOURCE_COLUMNS))
        found = pairs(steps, None)
        if found and not a.no_price:
            path = a.rows
            sys.path.insert(0, str(ROOT))
            found = pairs(steps, priced_steps(read_csv(a.rows, ROW_COLUMNS)))
    except (OSError, ValueError, csv.Error) as e:    # read_csv's errors name the file; a bad number names its row
        print(f"error: {e}" if str(path) in str(e) else f"error: {path}: {e}", file=sys.stderr)
        return 2
    if not found:
        print(f"error: {a.sources}: no {SOURCE} chain and tree of the same draft tokens with a plain baseline",
              file=sys.stderr)
        return 2
    print("target | batch | draft tokens | pairs | chain step ms | tree step ms | tree premium ms | measured ratio "
          "| specroof ratio")
    for p in found:
        pr = "-" if p["priced"] is None else f"{p['priced']:.3f}"
        print(f"{p['target']} | {p['batch']} | {p['tokens']} | {p['pairs']} | {p['chain_ms']:.2f} | "
              f"{p['tree_ms']:.2f} | {p['premium_ms']:+.2f} | {p['ratio']:.3f} | {pr}")
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)   # piped into head: end quietly, as a shell tool does
    sys.exit(main())
