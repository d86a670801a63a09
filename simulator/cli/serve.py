"""`specroof serve`: a serving workload at each concurrency (TTFT, TPOT, ITL, E2E, throughput), speculation on and
off."""

from __future__ import annotations

import argparse
from typing import Any

from . import fmt
from .args import add_acceptance_args, add_format, add_scenario_args, batch_arg, float_arg, int_arg, scenario_from


def add_workload_args(p: argparse.ArgumentParser, concurrency: bool = True) -> None:
    """The workload flags shared by `serve` and `frontier`."""
    g = p.add_argument_group("workload")
    g.add_argument("--isl", type=int_arg("isl", 1), default=1024, help="prompt tokens per request")
    g.add_argument("--osl", type=int_arg("osl", 1), default=1024, help="output tokens per request")
    if concurrency:
        g.add_argument("--concurrency", type=batch_arg, default=(1, 4, 16, 64),
                       help="requests in flight: a list 1,4,16 or a range 1..256 (powers of two and both ends)")
    g.add_argument("--chunk", type=int_arg("chunk", 1), default=8192,
                   help="chunked-prefill size: prompt tokens per step (SGLang / vLLM default)")
    g.add_argument("--prefix-hit", type=float_arg("prefix-hit", 0.0, 1.0, hi_open=True), default=0.0,
                   help="share of prompt tokens served from the prefix cache")
    g.add_argument("--pd", action=argparse.BooleanOptionalAction, default=False,
                   help="prefill/decode disaggregation: the decode instance carries no prefill; TTFT is the prefill "
                        "instance's pass plus the KV transfer")
    g.add_argument("--prefill-gpus", type=int_arg("prefill-gpus", 1), default=None,
                   help="GPUs of the prefill instance under --pd (default: as many as the decode instance)")


def workload_from(a: argparse.Namespace, concurrency: tuple[int, ...] | None = None) -> Any:
    from ..serving import Workload  # lazy: keeps --help free of numba
    return Workload(isl=a.isl, osl=a.osl, concurrency=concurrency or a.concurrency, chunk=a.chunk,
                    prefix_hit=a.prefix_hit, pd=a.pd, prefill_gpus=a.prefill_gpus)


def add(sub: Any, name: str) -> None:
    p = sub.add_parser("serve", help="TTFT, TPOT, E2E and throughput of a serving workload, speculation on and off")
    add_scenario_args(p, skip=("batch",))
    add_acceptance_args(p)
    add_workload_args(p)
    add_format(p)
    p.set_defaults(func=run)


HEADERS = ["concurrency", "mode", "k", "decode_batch", "ttft_ms", "tpot_ms", "tpot_first..last_ms", "e2e_s",
           "tok/s/gpu", "tok/s/user", "prefill_share", "decode_bound"]


def _rows(d: dict[str, Any]) -> list[list[Any]]:
    rows = []
    for p in d["points"]:
        for mode in ("spec", "base"):
            ph = p[mode]
            if ph is None:
                rows.append([p["concurrency"], mode] + ["-"] * (len(HEADERS) - 2))
                continue
            rows.append([p["concurrency"], "on" if mode == "spec" else "off", ph["k"],
                         fmt.num(ph["decode_batch"], ".1f"), fmt.ms(ph["ttft_s"]), fmt.ms(ph["tpot_s"]),
                         f"{fmt.ms(ph['tpot_first_s'])}..{fmt.ms(ph['tpot_last_s'])}", fmt.num(ph["e2e_s"], ".2f"),
                         fmt.num(ph["tokens_per_s_per_gpu"], ".1f"), fmt.num(ph["tokens_per_s_per_user"], ".1f"),
                         fmt.num(ph["prefill_share"], ".2f"), ph["decode_bound"]])
    return rows


def run(a: argparse.Namespace) -> int:
    from ..serving import serve  # lazy: keeps --help free of numba
    s = scenario_from(a)
    res = serve(s, workload_from(a))
    d = res.to_dict()
    if a.format == "json":
        print(fmt.dumps(d))
        return 0
    if a.format == "csv":
        print(fmt.csv_text(HEADERS + ["e2e_speedup", "tpot_speedup", "throughput_ratio"],
                           [r + _ratios(d, r) for r in _rows(d)]))
        return 0
    sc, w = d["scenario"], d["workload"]
    print(f"{sc['model']} on {d['gpus']}x {sc['hardware']} (tp={sc['tp']}, dp={sc['dp']}, ep={sc['ep']}), "
          f"{sc['method']} (acceptance {sc['acceptance']}), engine {sc['engine']}; isl {w['isl']}, osl {w['osl']}, "
          f"chunk {w['chunk']}, prefix hit {w['prefix_hit']:g}{', PD-disaggregated' if w['pd'] else ''}")
    print(fmt.table(HEADERS, _rows(d)))
    print()
    print(fmt.table(["concurrency", "e2e_speedup", "tpot_speedup", "throughput_ratio", "feasible"],
                    [[p["concurrency"], fmt.num(p["e2e_speedup"]), fmt.num(p["tpot_speedup"]),
                      fmt.num(p["throughput_ratio"]), "yes" if p["feasible"] else f"no: {p['message']}"]
                     for p in d["points"]]))
    print(f"prefill chunks are bound by {d['prefill_bound']}; " + "; ".join(d["notes"]))
    print("a prediction (steady-state closed loop from datasheet rooflines and the engine profile), not a measurement")
    return 0


def _ratios(d: dict[str, Any], row: list[Any]) -> list[Any]:
    p = next(p for p in d["points"] if p["concurrency"] == row[0])
    if row[1] != "on":
        return ["", "", ""]
    return [fmt.num(p["e2e_speedup"]), fmt.num(p["tpot_speedup"]), fmt.num(p["throughput_ratio"])]
