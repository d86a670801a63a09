"""`specroof curve`: the speedup curve over batch size (the main job)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..files import check_output
from . import fmt
from .args import (
    add_acceptance_args,
    add_format,
    add_option_args,
    add_scenario_args,
    int_arg,
    options_from,
    scenario_from,
)


def add(sub: Any, name: str) -> None:
    p = sub.add_parser("curve", help="speedup of speculative decoding over batch size (a prediction)")
    add_scenario_args(p, skip=("dp_balance",))      # decode steps only: no prompts to schedule
    add_acceptance_args(p)
    p.add_argument("--plot", default=None, metavar="FILE.png", help="write a PNG of speedup vs batch")
    p.add_argument("--num-prompts", type=int_arg("num-prompts", 1), default=None, metavar="N",
                   help="also price a benchmark run of N prompts at each batch as its concurrency, as such a run "
                        "measures it (bench_serving --num-prompts N --max-concurrency B; SpecForge's bench_eagle3): "
                        "N // B waves at the batch and one of the rest, of equal requests")
    add_format(p)
    add_option_args(p)
    p.set_defaults(func=run)


def hazards_for(a: argparse.Namespace, r: Any) -> list[Any]:
    """Known hazards for a result (result_hazards.known_hazards) with the option flags and --hazards files."""
    from ..result_hazards import known_hazards  # lazy: keeps --help free of numba
    return known_hazards(r, options_from(a), a.hazards)


def _rows(d: dict[str, Any]) -> list[list[Any]]:
    rows = []
    for i, p in enumerate(d["points"]):
        be, f = d["break_even_acceptance"][i], p["feasible"]
        rows.append([p["batch"], p["k"] if f else "-", p["tree_tokens"] if f else "-", fmt.num(p["speedup"]),
                     fmt.num(p["tokens_per_step"]), fmt.ms(p["base_step_s"]), fmt.ms(p["spec_step_s"]),
                     fmt.ms(p["draft_s"]), fmt.ms(p["verify_s"]), fmt.ms(p["overhead_s"]), p["verify_bound"] or "-",
                     fmt.num(p["tokens_per_s_per_gpu"], ".1f"), fmt.num(p["tokens_per_s_per_user"], ".1f"),
                     "-" if not f or not p["k"] else ("never" if be is None else f"{be:.3f}"),
                     "yes" if f else "no"])
    return rows


HEADERS = ["batch", "k", "verify_tok", "speedup", "tok/step", "base_ms", "spec_ms", "draft_ms", "verify_ms",
           "overhead_ms", "verify_bound", "tok/s/gpu", "tok/s/user", "break_even_alpha", "feasible"]


def crossover_text(d: dict[str, Any]) -> str:
    """Where speculation stops paying, saying when that is only the end of the evaluated batches, and never drawing
    the conclusion from a batch that could not be priced (infeasible points are listed apart)."""
    cb, pts = d["crossover_batch"], d["points"]
    fit = [p for p in pts if p["feasible"]]
    if not fit:
        return "crossover: none; no evaluated batch is feasible with speculation (reasons below)"
    if all(p["k"] == 0 for p in fit):
        return "crossover: none; k = 0 is plain decoding (speculation off) at every feasible batch"
    if cb is None:
        return "crossover: speculation does not pay at any feasible evaluated batch" + \
            (" (the infeasible ones are listed below)" if len(fit) < len(pts) else "")
    lose = _losses_below(cb, fit)
    return _crossover_after(cb, pts, every=not lose) + lose


def _losses_below(cb: int, fit: list[dict[str, Any]]) -> str:
    """The feasible batches at or below the crossover where speculation loses ('' when none): the crossover is the
    largest batch that pays, not the end of one paying range (found by review: 'pays at every evaluated batch up to
    64' beside 0.95x at batches 2-8)."""
    lose = [int(p["batch"]) for p in fit if p["batch"] <= cb and p["k"] and p["speedup"] < 1.0]
    return f"; below it, speculation loses at batch {', '.join(map(str, lose))} (speedup < 1)" if lose else ""


def _crossover_after(cb: int, pts: list[dict[str, Any]], every: bool) -> str:
    """What the batches above the crossover say; `every`: each feasible batch up to it pays."""
    upto = "at every evaluated batch up to" if every else "at batch"
    after = [p for p in pts if p["batch"] > cb]
    if not after:
        return f"crossover: speculation pays {upto} {cb}, the last one evaluated (larger batches were not " \
               "evaluated)"
    if after[0]["feasible"]:
        return f"crossover: speculation pays up to batch {cb} and not at the next evaluated batch"
    nxt = next((p["batch"] for p in after if p["feasible"]), None)
    if nxt is None:
        return f"crossover: speculation pays {'at every feasible evaluated batch, up to' if every else 'at batch'} " \
               f"{cb}; the larger ones are infeasible with speculation (below)"
    return f"crossover: speculation pays up to batch {cb}; batch {after[0]['batch']} is infeasible with " \
           f"speculation (below) and it does not pay at the next feasible one, {nxt}"


def run_speedups(s: Any, n: int) -> list[float | None]:
    """The speedup of a run of n prompts at each batch of the curve (speedup.run_points); None where a wave the run
    reaches is infeasible (a batch above n is never reached: its run is one wave of n)."""
    from ..speedup import run_points  # lazy: keeps --help free of numba
    sp, ok, _ = run_points(s, n)
    return [float(v) if f else None for v, f in zip(sp, ok)]


def _run_line(n: int, batch: Any, runs: list[float | None]) -> str:
    pts = ", ".join(f"{fmt.num(v)} at {int(b)}" for b, v in zip(batch, runs))
    return (f"a run of {n} prompts at each batch as its concurrency ({n} // batch waves at the batch, then one of the "
            f"rest; equal requests; - where a wave is infeasible): speedup {pts}")


def heldout(s: Any, d: dict[str, Any]) -> list[str]:
    """Put in each point the held-out band of its regime (simulator/heldout.py): how far published speedups like it
    measured from their predictions under leave-one-source-out; None where no band holds it or the point does not
    speculate. Without a bands file the points get no such key. Returns the lines that say so (heldout.range_text)."""
    from ..heldout import band_for, load_bands, range_text, speedup_ceiling  # lazy: one file read, only for curve
    bands, moe, given = load_bands(), bool(d["scenario"]["moe"]), s.acceptance is not None
    if not bands:          # no bands file (a data folder without one): say nothing rather than "unchecked"
        return []
    for p in d["points"]:
        b = band_for(bands, moe, p["batch"], given) if p["feasible"] and p["k"] else None
        if b is None:
            p["heldout"] = None
            continue
        cap = speedup_ceiling(p["tokens_per_step"] if given else None, p["k"])
        p["heldout"] = {**b.to_dict(), **dict(zip(("speedup_lo", "speedup_hi"), b.speedup_range(p["speedup"], cap)))}
    return range_text(bands, moe, given, [p["batch"] for p in d["points"] if p["feasible"] and p["k"]])


def _band_cell(p: dict[str, Any]) -> str:
    h = p.get("heldout")
    return "-" if h is None else f"{h['speedup_lo']:.2f}-{h['speedup_hi']:.2f}"


def _print_csv(d: dict[str, Any], hz: list[Any]) -> None:
    runs = d.get("run_speedup")
    col = ["heldout_lo_speedup", "heldout_hi_speedup"] + ([] if runs is None else [f"run{d['num_prompts']}_speedup"])
    cells = [[fmt.num(p["heldout"]["speedup_lo"]) if p.get("heldout") else "",
              fmt.num(p["heldout"]["speedup_hi"]) if p.get("heldout") else ""]
             + ([] if runs is None else [fmt.num(v)]) for p, v in zip(d["points"], runs or [None] * len(d["points"]))]
    print(fmt.csv_text(HEADERS + col + ["reason"], [r + c + [p["message"] if not p["feasible"] else ""]
                                                     for p, r, c in zip(d["points"], _rows(d), cells)]))
    fmt.file_note(d["scenario"])
    for n in d["notes"][1:]:       # notes[0] is the fixed-batch ratio; the rest qualify these numbers
        print(f"note: {n}", file=sys.stderr)
    fmt.hazard_lines(hz)


def _print_table(r: Any, d: dict[str, Any], hz: list[Any], held: list[str]) -> None:
    sc = d["scenario"]
    hw, eng = fmt.named(sc, "hardware"), fmt.named(sc, "engine")
    print(f"{sc['model']} on {sc['n_gpus']}x {hw} ({fmt.layout(sc)}), {sc['method']} [{sc['drafter']}], "
          f"engine {eng}, {fmt.formats(sc)}, context {sc['context']}, acceptance "
          f"{sc['acceptance']} (alpha {sc['acceptance_alpha']:.3f}), k {sc['k']}"
          + (f" (chains and trees of up to {sc['tree_tokens']} tokens tried)"
             if sc["k"] == "auto" and sc["tree_tokens"] and not sc["tree_fixed"] else ""))
    band = any("heldout" in p for p in d["points"])         # no bands file: no column
    print(fmt.table(HEADERS + ["heldout_80%"] * band, [r + [_band_cell(p)] * band for r, p in zip(_rows(d),
                                                                                                 d["points"])]))
    print(crossover_text(d))
    for line in held:
        print(line)
    if "run_speedup" in d:
        print(_run_line(d["num_prompts"], r.batch, d["run_speedup"]))
    print(r.fits_text())
    for n in d["notes"][1:]:       # notes[0] is the fixed-batch ratio said below; the rest qualify these numbers
        print(n)
    for p in d["points"]:
        if not p["feasible"]:
            print(f"batch {p['batch']}: infeasible: {p['message']}")
    print("a prediction from datasheet rooflines and the engine profile; speedup at a fixed batch is both the "
          "latency and the throughput ratio")
    fmt.print_hazards(hz)


def run(a: argparse.Namespace) -> int:
    from ..speedup import predict  # lazy: keeps --help free of numba
    s = scenario_from(a)
    if a.plot:
        check_output(a.plot, "--plot")     # fail before the work, not after it
    r = predict(s)
    hz = hazards_for(a, r)
    d = r.to_dict()
    held = heldout(s, d)
    if a.num_prompts:
        d["num_prompts"], d["run_speedup"] = a.num_prompts, run_speedups(s, a.num_prompts)
    if a.plot:
        from ..plots import save, speedup_vs_batch  # lazy: matplotlib is an optional extra
        print(f"wrote {save(speedup_vs_batch([r]), a.plot, close=True)}", file=sys.stderr)
    if a.format == "json":
        d["hazards"] = [h.to_dict() for h in hz]
        print(fmt.dumps(d))
    elif a.format == "csv":
        _print_csv(d, hz)
    else:
        _print_table(r, d, hz, held)
    return 0
