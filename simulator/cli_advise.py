"""`specroof advise`: best k per batch, where to switch speculation off, and each engine's configuration."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable

from .cli_curve import add_deployment_args, add_scenario_args, build_acceptance, deployment_options, print_hazards


def _engines(s: str) -> list[str]:
    from .advise import EMIT_ENGINES
    if s == "all":
        return list(EMIT_ENGINES)
    out = [t.strip() for t in s.split(",") if t.strip()]
    bad = [t for t in out if t not in EMIT_ENGINES]
    if bad or not out:
        raise argparse.ArgumentTypeError(f"--emit {s!r}: expected 'all' or a comma-separated subset of "
                                         f"{','.join(EMIT_ENGINES)}")
    return out


def _pos(name: str):
    from .cli import int_arg
    return int_arg(name, 1)


def cmd_advise(a: argparse.Namespace) -> int:
    from .advise import advise
    from .cli import _csv, _table
    lo = min(a.batch)
    hi = a.max_batch if a.max_batch is not None else max(a.batch)
    adv = advise(a.hardware, a.model, a.method, engine=a.engine, acceptance=build_acceptance(a), draft=a.draft,
                 batch_range=(lo, hi), context=a.context, tp=a.tp, ep=a.ep, precision=a.precision,
                 draft_precision=a.draft_precision, kv_precision=a.kv_precision, k_max=a.k_max,
                 tree_tokens=a.tree_tokens, tree_branching=a.tree_branching, draft_kv_window=a.draft_kv_window,
                 overlap=a.overlap, options=deployment_options(a), hazard_files=a.hazards, emit=a.emit,
                 max_points=a.max_points)
    if a.plot:
        from .plots import advice as advice_plot, save
        save(advice_plot(adv), a.plot, close=True)
    d = adv.to_dict()
    if a.format == "json":
        print(json.dumps(d, indent=2))
        return 0
    if a.format == "csv":
        hdr = ["batch", "best_k", "tree_tokens", "speedup", "scheduled_k", "fixed_k_speedup", "feasible"]
        rows = [[p["batch"], "" if p["best_k"] is None else p["best_k"],
                 "" if p["tree_tokens"] is None else p["tree_tokens"],
                 "" if p["speedup"] is None else f"{p['speedup']:.4f}", p["scheduled_k"],
                 "" if p["fixed_k_speedup"] is None else f"{p['fixed_k_speedup']:.4f}",
                 "yes" if p["feasible"] else "no"] for p in d["points"]]
        print(_csv(hdr, rows))
        for h in adv.hazards:
            print(f"warning: [{h.severity}] {h.title} ({h.id}): {' '.join(h.links)}", file=sys.stderr)
        return 0
    s = d["scenario"]
    print("specroof advise: a PREDICTION from datasheet rooflines and an engine profile, not a measurement")
    print(f"{s['model']} on {s['n_gpus']}x {s['hardware']} (tp={s['tp']}, ep={s['ep']}), {s['method']} "
          f"[{s['drafter']}], engine {s['engine']}, acceptance {s['acceptance']} (alpha {s['acceptance_alpha']:.3f}), "
          f"context {s['context']}, batches {lo}..{hi}")
    print()
    print("best k per batch (k = 0: speculation off)")
    rows = []
    for r in adv.schedule:
        if r.speedup_min != r.speedup_min:
            sp = "does not fit"
        else:
            sp = (f"{r.speedup_min:.2f}" if abs(r.speedup_max - r.speedup_min) < 5e-3
                  else f"{r.speedup_min:.2f}-{r.speedup_max:.2f}") + ("" if r.k else " if on")
        rows.append([f"{r.start}" if r.start == r.end else f"{r.start}-{r.end}", r.k, r.tree_tokens or "-", sp])
    print(_table(["batches", "k", "verify_tok", "speedup"], rows))
    print()
    if not adv.pays:
        print(f"switch speculation off: everywhere (it does not pay at any batch in {lo}..{hi})")
    elif adv.off_above is None:
        print(f"switch speculation off above batch: not within {lo}..{hi} (it pays up to {hi})")
    else:
        print(f"switch speculation off above batch: {adv.off_above}")
    if adv.pays:
        print(f"one k for engines without a per-batch table: {adv.fixed_k}"
              + (f" (tree of {adv.fixed_tree_tokens})" if adv.fixed_tree_tokens > adv.fixed_k + 1 else "")
              + f", worst case {adv.fixed_worst_ratio:.0%} of the per-batch best")
    for c in adv.configs:
        print()
        print(f"{c.engine}:" + ("" if c.supported else " no configuration"))
        if c.text:
            for ln in c.text.splitlines():
                print(f"  {ln}")
        for n in c.notes:
            print(f"  note: {n}")
    print()
    print("assumptions:")
    for x in adv.assumptions:
        print(f"  - {x}")
    print_hazards(list(adv.hazards))
    return 0


def add_advise(sub: Any, add_common: Callable[[argparse.ArgumentParser, str], None]) -> None:
    c = sub.add_parser("advise", help="best k per batch, the batch above which to switch speculation off, and the "
                                      "vLLM / SGLang / TensorRT-LLM configuration for it (a prediction)")
    add_common(c, "1,256")
    add_scenario_args(c)
    c.add_argument("--max-batch", type=_pos("max-batch"), default=None,
                   help="largest batch (concurrent sequences) the deployment sees; the range runs from the "
                        "smallest --batch (default 1) to this (default: the largest --batch, 256)")
    c.add_argument("--max-points", type=_pos("max-points"), default=1024,
                   help="evaluate every integer batch when the range has at most this many, else powers of two")
    c.add_argument("--emit", type=_engines, default=None,
                   help="engines to write configs for: all or a subset of vllm,sglang,trtllm,hf "
                        "(default: the --engine when it is one of them)")
    c.add_argument("--plot", default=None, help="write a PNG of speedup and k per batch")
    add_deployment_args(c)
    c.set_defaults(func=cmd_advise, k="auto")
