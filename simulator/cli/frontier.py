"""`specroof frontier`: the throughput-per-GPU vs tokens/s-per-user frontier with speculation on and off, searched over
layouts and concurrencies, and the ratio at interactivity targets (or a TPOT SLO)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..files import check_output
from . import fmt
from .args import (
    CONTEXT_FROM_LENGTHS,
    add_acceptance_args,
    add_format,
    add_scenario_args,
    float_arg,
    int_arg,
    refuse_arg,
    scenario_from,
)
from .serve import add_workload_args, workload_from


def _list(name: str, conv: Any) -> Any:
    def f(s: str) -> tuple[Any, ...]:
        out = tuple(conv(t.strip()) for t in s.split(",") if t.strip())
        if not out:
            raise argparse.ArgumentTypeError(f"{name}: empty list")
        return out
    return f


def add(sub: Any, name: str) -> None:
    p = sub.add_parser("frontier", help="throughput per GPU vs tokens/s per user, speculation on and off, over "
                                        "layouts and concurrencies")
    add_scenario_args(p, skip=("batch", "tp", "dp", "ep", "context"))
    refuse_arg(p, "--context", CONTEXT_FROM_LENGTHS)
    add_acceptance_args(p)
    add_workload_args(p, concurrency=False)
    g = p.add_argument_group("search")
    g.add_argument("--gpus", type=_list("gpus", int_arg("gpus", 1)), default=(8,),
                   help="GPUs per instance to search, e.g. 8 or 8,16,32,72 (tp x attention-dp; experts over all of "
                        "them for MoE)")
    g.add_argument("--max-tp", type=int_arg("max-tp", 1), default=8, help="largest tensor-parallel degree searched")
    g.add_argument("--targets", type=_list("targets", float_arg("target", 0.0, lo_open=True)),
                   default=(20.0, 50.0, 100.0), help="interactivity targets, tokens/s per user")
    g.add_argument("--tpot-slo-ms", type=float_arg("tpot-slo-ms", 0.0, lo_open=True), default=None,
                   help="also report the best throughput per GPU with TPOT <= this many ms")
    p.add_argument("--plot", default=None, metavar="FILE.png", help="write a PNG of both frontiers")
    add_format(p)
    p.set_defaults(func=run)


HEADERS = ["target_tok/s/user", "tpot_slo_ms", "on_tok/s/gpu", "on_layout", "on_conc", "on_k", "off_tok/s/gpu",
           "off_layout", "off_conc", "ratio_on/off"]


def _target_rows(d: dict[str, Any]) -> list[list[Any]]:
    rows = []
    for t in d["targets"]:
        on, off = t["on"], t["off"]
        rows.append([fmt.num(t["tokens_per_s_per_user"], ".1f"), fmt.num(t["tpot_slo_s"] * 1e3, ".4g"),
                     fmt.num(on and on["tokens_per_s_per_gpu"], ".1f"), on["layout"] if on else "none",
                     on["concurrency"] if on else "-", on["k"] if on else "-",
                     fmt.num(off and off["tokens_per_s_per_gpu"], ".1f"), off["layout"] if off else "none",
                     off["concurrency"] if off else "-",
                     fmt.num(t["throughput_ratio"], ".2f") + ("*" if t["edge"] and t["throughput_ratio"] else "")])
    return rows


def _target_notes(d: dict[str, Any]) -> list[str]:
    """The targets' rows as the CSV mode's notes (stdout holds the frontier), and the footnote to ratios marked *."""
    return ["target " + ", ".join(f"{h} {v}" for h, v in zip(HEADERS, r)) for r in _target_rows(d)] + _edge_note(d)


def _edge_note(d: dict[str, Any]) -> list[str]:
    """[] or the footnote to the ratios marked *: a mode whose fastest point beats the target by less than EDGE."""
    from ..frontier import EDGE  # lazy: keeps --help free of numba
    if not any(t["edge"] and t["throughput_ratio"] for t in d["targets"]):
        return []
    return [f"* {' and '.join(sorted({m for t in d['targets'] for m in t['edge']}))} meets that target near its "
            f"ceiling: its fastest point beats it by less than {EDGE:.0%} (about the held-out error of a priced step), "
            "and a target that much faster leaves it no point, so the ratio hangs on the price of its fastest points"]


FRONT = ["mode", "tok/s/user", "tok/s/gpu", "layout", "concurrency", "k", "ttft_ms", "e2e_s"]


def _front_rows(d: dict[str, Any]) -> list[list[Any]]:
    return [[p["mode"], fmt.num(p["tokens_per_s_per_user"], ".1f"), fmt.num(p["tokens_per_s_per_gpu"], ".1f"),
             p["layout"], p["concurrency"], p["k"], fmt.ms(p["ttft_s"]), fmt.num(p["e2e_s"], ".2f")]
            for key in ("frontier_on", "frontier_off") for p in d[key]]


def run(a: argparse.Namespace) -> int:
    from ..frontier import frontier  # lazy: keeps --help free of numba
    from ..result_hazards import known_hazards  # lazy, as frontier is
    if a.plot:
        check_output(a.plot, "--plot")
    targets = tuple(a.targets) + ((1000.0 / a.tpot_slo_ms,) if a.tpot_slo_ms else ())
    s = scenario_from(a, batch=(1,))
    res = frontier(s, workload_from(a, concurrency=(1,)), gpus=a.gpus, targets=targets, max_tp=a.max_tp)
    d, hz = res.to_dict(), known_hazards(res)
    if a.plot:
        from .. import plots  # lazy: matplotlib is an optional extra
        print(f"wrote {plots.save(plots.frontier(res), a.plot, close=True)}", file=sys.stderr)
    if a.format == "json":
        d["hazards"] = [h.to_dict() for h in hz]
        print(fmt.dumps(d))
        return 0
    if a.format == "csv":            # stdout is the frontier; the best point per target goes to stderr
        print(fmt.csv_text(FRONT, _front_rows(d)))
        fmt.file_note(d["scenario"])
        for line in _target_notes(d):
            print("note: " + line, file=sys.stderr)
        if not d["feasible"]:
            print(f"note: infeasible: {d['message']}", file=sys.stderr)
        fmt.rejected_note(d["workload"])      # review: CSV had no trace of the requests left out
        fmt.hazard_lines(hz)
        return 0
    sc, w = d["scenario"], d["workload"]
    hw, eng = fmt.named(sc, "hardware"), fmt.named(sc, "engine")
    spec = "speculation off (k = 0)" if s.k == 0 else f"{sc['method']} vs off"     # review, 2026-12-06: --k 0
    print(f"{sc['model']} on {hw} ({', '.join(map(str, sc['gpus']))} GPUs per instance), {spec}, "
          f"engine {eng}, {fmt.formats(sc)}; isl "    # experts only apart (review: a dense model's 'experts')
          f"{w['isl']}, osl {w['osl']}{', PD-disaggregated' if w['pd'] else ''}; {d['points']} feasible points")
    if not d["feasible"]:
        print(f"infeasible: {d['message']}")
    print("\n".join([fmt.table(HEADERS, _target_rows(d)), *_edge_note(d)]))
    print()
    print(fmt.table(FRONT, _front_rows(d)))
    for s in d["skipped"]:
        print(f"skipped {s['layout']}: {s['reason']}")
    print("; ".join(d["notes"]))
    fmt.print_hazards(hz)
    return 0
