"""`specroof advise`: best k per batch, where to switch speculation off, and each engine's configuration."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..config_plan import ranges_text
from ..files import check_output
from . import fmt
from .args import add_acceptance_args, add_format, add_option_args, add_scenario_args, int_arg, scenario_from

EMIT = ("vllm", "sglang", "trtllm", "hf")


def _engines(s: str) -> list[str]:
    if s == "all":
        return list(EMIT)
    out = [t.strip().lower() for t in s.split(",") if t.strip()]
    if not out or any(t not in EMIT for t in out):
        raise argparse.ArgumentTypeError(f"--emit {s!r}: expected 'all' or a comma-separated subset of "
                                         f"{','.join(EMIT)}")
    return out


def add(sub: Any, name: str) -> None:
    p = sub.add_parser("advise", help="best k per batch, the batch above which to switch speculation off, and the "
                                      "vLLM / SGLang / TensorRT-LLM configuration for it (a prediction)")
    add_scenario_args(p, skip=("k", "dp_balance"), batch=(1, 256))     # decode steps only: no prompts
    add_acceptance_args(p)
    p.add_argument("--max-batch", type=int_arg("max-batch", 1), default=None,
                   help="largest batch (concurrent sequences) the deployment sees; the range runs from the smallest "
                        "--batch to this (default: the largest --batch)")
    p.add_argument("--max-points", type=int_arg("max-points", 2), default=1024,
                   help="evaluate every integer batch when the range has at most this many, else powers of two")
    p.add_argument("--emit", type=_engines, default=None,
                   help="engines to write configs for: all or a subset of vllm,sglang,trtllm,hf (default: the "
                        "--engine when it is one of them)")
    p.add_argument("--plot", default=None, metavar="FILE.png", help="write a PNG of speedup and k per batch")
    add_format(p)
    add_option_args(p)
    p.set_defaults(func=run, k="auto")


def _schedule_rows(adv: Any) -> list[list[Any]]:
    rows = []
    for r in adv.schedule:
        if r.speedup_min != r.speedup_min:
            sp = "infeasible with speculation" if r.fits == "without speculation" else "infeasible"
        else:
            sp = (f"{r.speedup_min:.2f}" if abs(r.speedup_max - r.speedup_min) < 5e-3
                  else f"{r.speedup_min:.2f}-{r.speedup_max:.2f}") + ("" if r.k else " if on")
        rows.append([f"{r.start}" if r.start == r.end else f"{r.start}-{r.end}", r.k, r.tree_tokens or "-", sp])
    return rows


def _print(adv: Any, lo: int, hi: int) -> None:
    d = adv.to_dict()
    s = d["scenario"]
    print("specroof advise: a PREDICTION from datasheet rooflines and an engine profile, not a measurement")
    hw, eng = fmt.named(s, "hardware"), fmt.named(s, "engine")
    print(f"{s['model']} on {s['n_gpus']}x {hw} ({fmt.layout(s)}; {fmt.formats(s)}), {s['method']} "
          f"[{s['drafter']}], engine {eng}, acceptance {s['acceptance']} "
          f"(alpha {s['acceptance_alpha']:.3f}), context {s['context']}, batches {lo}..{hi}\n")
    print("best k per batch (k = 0: speculation off)")
    print(fmt.table(["batches", "k", "verify_tok", "speedup"], _schedule_rows(adv)) + "\n")
    if not adv.result.feasible.any():
        print(f"switch speculation off: everywhere (no batch in {lo}..{hi} is feasible with it; reasons below)")
    elif not adv.pays:
        print(f"switch speculation off: everywhere (it does not pay at any feasible batch in {lo}..{hi})")
    elif adv.off_above is None:
        print(f"switch speculation off above batch: not within {lo}..{hi} (it pays up to {hi}, the end of the range)")
    elif adv.off_fits:
        print(f"switch speculation off above batch: {adv.off_above} (above it speculation does not fit in memory; "
              f"it still pays at {adv.off_above})")
    else:
        print(f"switch speculation off above batch: {adv.off_above}")
    if adv.pays:
        tree = f" (tree of {adv.fixed_tree_tokens})" if adv.fixed_tree_tokens > adv.fixed_k + 1 else ""
        lose = adv.interior_off                 # found by review: the worst case hid the batches it loses at
        print(f"one k for engines without a per-batch table: {adv.fixed_k}{tree}, worst case "
              f"{adv.fixed_worst_ratio:.0%} of the per-batch best where speculation is on" +
              (f"; speculation is predicted to lose at batch(es) {ranges_text(lose)}, which the table switches off "
               "and one k does not" if lose else ""))
    for c in adv.configs:
        print(f"\n{c.engine}:" + ("" if c.supported else " no configuration"))
        for ln in c.text.splitlines():
            print(f"  {ln}")
        for n in c.notes:
            print(f"  note: {n}")
    print("\nassumptions:")
    for x in adv.assumptions:
        print(f"  - {x}")
    fmt.print_hazards(list(adv.hazards))


def run(a: argparse.Namespace) -> int:
    from ..advise import advise  # lazy: keeps --help free of numba
    lo = min(a.batch)
    hi = a.max_batch if a.max_batch is not None else max(a.batch)
    if a.plot:
        check_output(a.plot, "--plot")
    adv = advise(scenario_from(a, batch=(lo,)), batch_range=(lo, hi), hazard_files=a.hazards, emit=a.emit,
                 max_points=a.max_points)
    if a.plot:
        from ..plots import advice as advice_plot  # lazy: matplotlib is an optional extra
        from ..plots import save  # lazy: matplotlib is an optional extra
        print(f"wrote {save(advice_plot(adv), a.plot, close=True)}", file=sys.stderr)
    if a.format == "json":
        print(fmt.dumps(adv.to_dict()))
    elif a.format == "csv":
        d = adv.to_dict()
        hdr = ["batch", "best_k", "tree_tokens", "speedup", "scheduled_k", "scheduled_speedup", "fixed_k_speedup",
               "feasible"]
        f4 = lambda x: "" if x is None else f"{x:.4f}"  # noqa: E731
        rows = [[p["batch"], "" if p["best_k"] is None else p["best_k"], "" if p["tree_tokens"] is None
                 else p["tree_tokens"], f4(p["speedup"]), p["scheduled_k"], f4(p["scheduled_speedup"]),
                 f4(p["fixed_k_speedup"]), "yes" if p["feasible"] else "no"] for p in d["points"]]
        print(fmt.csv_text(hdr, rows))
        fmt.file_note(d["scenario"])
        fmt.hazard_lines(list(adv.hazards))
    else:
        _print(adv, lo, hi)
    return 0
