"""`specroof step`: price one forward pass (decode, verify or prefill) per batch size."""

from __future__ import annotations

import argparse
from typing import Any

from ..workload import FAMILIES
from . import fmt
from .args import add_format, add_scenario_args, int_arg, scenario_from

# Speculative fields do not apply to one forward pass.
_SKIP = ("method", "draft", "draft_precision", "k", "k_max", "tree_tokens", "tree_branching", "draft_kv_window",
         "dp_balance",   # serving only: it was accepted and ignored (found by review)
         "spec_overlap")                # one pass has no speculative step to overlap (found by review, 2026-12-05)


def add(sub: Any, name: str) -> None:
    p = sub.add_parser("step", help="price one forward pass per batch size")
    add_scenario_args(p, skip=_SKIP)
    p.add_argument("--query-tokens", type=int_arg("query-tokens", 1), default=1,
                   help="new tokens per sequence: 1 decode, k+1 verify, the prompt length for a prefill (with "
                        "--logits last)")
    p.add_argument("--logits", choices=("all", "last"), default="all",
                   help="tokens whose logits the pass computes: all (decode, verify) or last (a prefill, which "
                        "samples only after its last prompt token)")
    add_format(p)
    p.set_defaults(func=run)


def run(a: argparse.Namespace) -> int:
    from ..step import simulate_step  # lazy: keeps --help free of numba
    r = simulate_step(scenario=scenario_from(a, method=None), query_tokens=a.query_tokens, logits=a.logits)
    d = r.to_dict()
    if a.format == "json":
        print(fmt.dumps(d))
        return 0
    hdr = ["batch", "step_ms", "bound"] + [f"{f}_ms" for f in FAMILIES] + ["mem_GB", "feasible"]
    rows = []
    for p in d["points"]:
        bd = p["breakdown_s"] or {}
        rows.append([p["batch"], fmt.ms(p["step_s"]), p["bound"] or "-"] + [fmt.ms(bd.get(f)) for f in FAMILIES]
                    + [fmt.gb(p["memory_bytes"]), "yes" if p["feasible"] else "no"])
    if a.format == "csv":
        print(fmt.csv_text(hdr + ["reason"], [r + [p["message"] if not p["feasible"] else ""]
                                              for p, r in zip(d["points"], rows)]))
        fmt.file_note(d["scenario"])
        return 0
    s = d["scenario"]
    hw, eng = fmt.named(s, "hardware"), fmt.named(s, "engine")
    print(f"{s['model']} on {s['n_gpus']}x {hw} ({fmt.layout(s)}), {fmt.formats(s)}, "
          f"KV {s['kv_precision']}, q={s['query_tokens']} new tokens/seq ({s['logits']} logits), "
          f"context {s['context']}, engine {eng}")
    print(fmt.table(hdr, rows))
    for p in d["points"]:
        if not p["feasible"]:
            print(f"batch {p['batch']}: infeasible: {p['message']}")
    print("GB = 1e9 bytes per GPU")
    return 0
