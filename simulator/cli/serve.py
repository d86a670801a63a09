"""`specroof serve`: a serving workload at each concurrency (TTFT, TPOT, ITL, E2E, throughput), speculation on and
off."""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import ScenarioError
from . import fmt
from .args import (
    CONTEXT_FROM_LENGTHS,
    add_acceptance_args,
    add_format,
    add_scenario_args,
    counts_arg,
    float_arg,
    int_arg,
    refuse_arg,
    scenario_from,
)


def _lengths_arg(name: str) -> Any:
    """argparse type: one token count, or a list `512,1024,4096` of samples (paired with the other length)."""
    one = int_arg(name, 1)

    def f(s: str) -> tuple[int, ...]:
        parts = [t.strip() for t in s.split(",")]
        if not all(parts):
            raise argparse.ArgumentTypeError(f"{name} {s!r}: expected a number of tokens or a list 512,1024")
        return tuple(one(t) for t in parts)
    return f


def _rate_arg(s: str) -> tuple[float, ...]:
    rate = float_arg("rate", 0.0, lo_open=True)
    if not s.strip():
        raise argparse.ArgumentTypeError("empty rate list (expected e.g. 0.5,2,8 requests/s)")
    return tuple(rate(t.strip()) for t in s.split(","))


def add_workload_args(p: argparse.ArgumentParser, concurrency: bool = True) -> None:
    """The workload flags shared by `serve` and `frontier` (the load flags only for `serve`)."""
    g = p.add_argument_group("workload")
    g.add_argument("--isl", type=_lengths_arg("isl"), default=None,
                   help="prompt tokens per request (default 1024), or a list of samples (paired with --osl) for a "
                        "distribution")
    g.add_argument("--osl", type=_lengths_arg("osl"), default=None,
                   help="output tokens per request (default 1024), or a list of samples (paired with --isl)")
    g.add_argument("--lengths", metavar="CSV", default=None,
                   help="length distribution: a CSV with isl and osl columns, one request per row (instead of "
                        "--isl/--osl)")
    g.add_argument("--length-ratio", type=float_arg("length-ratio", 0.0, 1.0), default=None, metavar="R",
                   help="each request's lengths drawn uniformly from [R x isl, isl] and [R x osl, osl], as SGLang "
                        "bench_serving's and InferenceX's --random-range-ratio R do (vLLM bench serve's symmetric "
                        "range keeps the mean at --isl/--osl: leave this out)")
    if concurrency:
        load = g.add_mutually_exclusive_group()
        load.add_argument("--concurrency", type=counts_arg("concurrency"), default=None,
                          help="requests in flight: a list 1,4,16 or a range 1..256 (powers of two and both ends); "
                               "default 1,4,16,64")
        load.add_argument("--rate", type=_rate_arg, default=None,
                          help="arrival rates in requests/s (a list 0.5,2,8): each mode's requests in flight are "
                               "solved from Little's law")
        g.add_argument("--max-concurrency", type=int_arg("max-concurrency", 1), default=None, metavar="M",
                       help="with --rate: the benchmark client's cap on requests in flight (vLLM bench serve's and "
                            "SGLang bench_serving's --max-concurrency beside --request-rate); a rate M requests "
                            "cannot complete is served closed-loop at M, the rest waiting at the client")
        g.add_argument("--num-prompts", type=_num_prompts_arg, default=None, metavar="N|Mx",
                       help="with --concurrency: the prompts of one benchmark run (vLLM bench serve's and SGLang "
                            "bench_serving's --num-prompts at --request-rate inf), N, or M x each concurrency, Mx "
                            "(InferenceX runs 10x): the first C start at once, and TTFT and E2E are the means over "
                            "the run, its start-up burst included; default: the steady state alone")
    g.add_argument("--chunk", type=int_arg("chunk", 1), default=8192,
                   help="chunked-prefill size: prompt tokens per step on each attention-DP rank (SGLang / vLLM "
                        "default; SGLang divides its --chunked-prefill-size by the DP size under DP attention)")
    g.add_argument("--prefix-hit", type=float_arg("prefix-hit", 0.0, 1.0, hi_open=True), default=0.0,
                   help="share of prompt tokens served from the prefix cache")
    g.add_argument("--pd", action=argparse.BooleanOptionalAction, default=False,
                   help="prefill/decode disaggregation: the decode instance carries no prefill; TTFT is the prefill "
                        "instance's pass plus the KV transfer")
    g.add_argument("--prefill-gpus", type=float_arg("prefill-gpus", 0.0, lo_open=True), default=None,
                   help="GPUs that prefill for this decode instance under --pd: a prefill instance's GPUs, or, where m "
                        "decode instances share P prefill GPUs, P / m (default: as many as the decode instance)")
    for k, what in (("tp", "tensor-parallel GPUs per attention group, as --tp (SGLang --tp-size 8 --dp-size 8 "
                            "--enable-dp-attention is --prefill-tp 1 --prefill-dp 8)"),
                    ("dp", "attention data-parallel groups, as --dp"), ("ep", "expert-parallel GPUs, as --ep")):
        g.add_argument(f"--prefill-{k}", type=int_arg(f"prefill-{k}", 1), default=None,
                       help=f"under --pd, one prefill instance's {what} (give --prefill-tp, --prefill-dp and "
                            "--prefill-ep together; default: the decode instance's layout)")


def _drawn(i: tuple[int, ...], o: tuple[int, ...], ratio: float) -> dict[str, Any]:
    """The --length-ratio draw below one isl and one osl (`Workload.length_ratio`)."""
    if len(i) > 1 or len(o) > 1:
        raise ScenarioError(f"--length-ratio {ratio:g} draws lengths around one --isl and one --osl; got lists of "
                            "samples")
    return {"isl": i[0], "osl": o[0], "length_ratio": ratio}


def _length_samples(a: argparse.Namespace) -> dict[str, Any]:
    """isl/osl, or the paired samples (a list broadcasts a single value of the other), or the --lengths file, or the
    draw of --length-ratio around one isl and osl."""
    from ..serving import read_lengths  # lazy: keeps --help free of numba
    if a.lengths is not None:
        if a.isl is not None or a.osl is not None or a.length_ratio is not None:
            raise ScenarioError("--lengths: give the length distribution or --isl/--osl (and --length-ratio), not "
                                "both")
        return {"lengths": read_lengths(a.lengths)}
    i, o = a.isl or (1024,), a.osl or (1024,)
    if a.length_ratio is not None:
        return _drawn(i, o, a.length_ratio)
    if len(i) == 1 and len(o) == 1:
        return {"isl": i[0], "osl": o[0]}
    if len(i) > 1 and len(o) > 1 and len(i) != len(o):
        raise ScenarioError(f"--isl has {len(i)} samples and --osl {len(o)}: give lists of one length (paired) or a "
                            "single value for one of them")
    n = max(len(i), len(o))
    return {"lengths": tuple(zip(i * n if len(i) == 1 else i, o * n if len(o) == 1 else o))}


def workload_from(a: argparse.Namespace, concurrency: tuple[int, ...] | None = None) -> Any:
    from ..serving import Workload  # lazy: keeps --help free of numba
    load: dict[str, Any] = {"concurrency": concurrency or getattr(a, "concurrency", None) or (1, 4, 16, 64)}
    if getattr(a, "rate", None):
        load = {"rate": a.rate, "max_concurrency": a.max_concurrency}
    elif getattr(a, "max_concurrency", None) is not None:
        raise ScenarioError(f"--max-concurrency {a.max_concurrency}: it caps the requests in flight at an arrival "
                            "rate; give --rate too (without one, --concurrency is the requests in flight)")
    kind, n = getattr(a, "num_prompts", None) or (None, None)
    return Workload(**_length_samples(a), **load, chunk=a.chunk, prefix_hit=a.prefix_hit, pd=a.pd,
                    prefill_gpus=a.prefill_gpus, prefill_layout=_prefill_layout(a),
                    num_prompts=n if kind == "n" else None, prompts_per_slot=n if kind == "x" else None)


def _prefill_layout(a: argparse.Namespace) -> tuple[int, int, int] | None:
    """--prefill-tp/--prefill-dp/--prefill-ep as Workload.prefill_layout: all three or none."""
    from ..traffic import prefill_layout_of  # lazy, as Workload is
    return prefill_layout_of(tuple(getattr(a, f"prefill_{k}", None) for k in ("tp", "dp", "ep")),
                             ("--prefill-tp", "--prefill-dp", "--prefill-ep"))


def _pd_text(w: dict[str, Any]) -> str:
    """The header's disaggregation clause: the prefill instance's layout and GPUs where given (review, 2026-12-06:
    the output did not say which prefill instance it priced)."""
    if not w["pd"]:
        return ""
    lay = w.get("prefill_layout")
    inst = "" if lay is None else f"prefill instance tp {lay[0]} dp {lay[1]} ep {lay[2]}"
    gpus = "" if w.get("prefill_gpus") is None else f"{w['prefill_gpus']:g} prefill GPUs per decode instance"
    more = "; ".join(x for x in (inst, gpus) if x)
    return f", PD-disaggregated ({more})" if more else ", PD-disaggregated"


def _num_prompts_arg(s: str) -> tuple[str, int]:
    """argparse type of --num-prompts: ("n", N) for N prompts a run, ("x", M) for Mx, M prompts per concurrency."""
    if len(s.strip()) > 1 and s.strip().lower().endswith("x"):
        return "x", int_arg("num-prompts multiple (Mx)", 1)(s.strip()[:-1])
    return "n", int_arg("num-prompts", 1)(s)


def add(sub: Any, name: str) -> None:
    p = sub.add_parser("serve", help="TTFT, TPOT, E2E and throughput of a serving workload, speculation on and off")
    add_scenario_args(p, skip=("batch", "context"))
    refuse_arg(p, "--context", CONTEXT_FROM_LENGTHS)
    add_acceptance_args(p)
    add_workload_args(p)
    add_format(p)
    p.set_defaults(func=run)


HEADERS = ["mode", "k", "verify_tok", "in_flight", "running", "decode_batch", "ttft_ms", "tpot_ms",
           "tpot_first..last_ms", "e2e_s", "tok/s/gpu", "tok/s/user", "prefill_share", "decode_bound"]


def _key(d: dict[str, Any]) -> str:
    """What each point is: an arrival rate or a concurrency."""
    return "rate" if d["workload"]["rate"] else "concurrency"


def _rows(d: dict[str, Any]) -> list[list[Any]]:
    rows = []
    for p in d["points"]:
        for mode in ("spec", "base"):
            ph = p[mode]
            if ph is None:
                rows.append([p[_key(d)], "on" if mode == "spec" else "off"] + ["-"] * (len(HEADERS) - 1))
                continue
            rows.append([p[_key(d)], "on" if mode == "spec" else "off", ph["k"], ph["verify_tokens"],
                         fmt.num(ph["in_flight"], ".1f"), fmt.num(ph["running"], ".1f"),
                         fmt.num(ph["decode_batch"], ".1f"), fmt.ms(ph["ttft_s"]), fmt.ms(ph["tpot_s"]),
                         f"{fmt.ms(ph['tpot_first_s'])}..{fmt.ms(ph['tpot_last_s'])}", fmt.num(ph["e2e_s"], ".2f"),
                         fmt.rate(ph["tokens_per_s_per_gpu"]), fmt.rate(ph["tokens_per_s_per_user"]),
                         fmt.num(ph["prefill_share"], ".2f"), ph["decode_bound"]])
    return rows


def _speculation(sc: dict[str, Any]) -> str:
    """The header's speculation: the method and its acceptance, or off where k = 0 is asked."""
    return "speculation off (k = 0)" if sc["k"] == 0 else f"{sc['method']} (acceptance {sc['acceptance']})"


def run(a: argparse.Namespace) -> int:
    from ..result_hazards import known_hazards  # lazy: keeps --help free of numba
    from ..serving import serve  # lazy, as the hazards are
    s = scenario_from(a)
    res = serve(s, workload_from(a))
    d = res.to_dict()
    hz = known_hazards(res)
    if a.format == "json":
        d["hazards"] = [h.to_dict() for h in hz]
        print(fmt.dumps(d))
        return 0
    key = _key(d)
    if a.format == "csv":
        print(fmt.csv_text([key] + HEADERS + ["e2e_speedup", "tpot_speedup", "throughput_ratio", "feasible", "reason"],
                           [r + _ratios(p, r) + _mode_fit(p, r) for p, r in zip(_each_twice(d["points"]), _rows(d))]))
        fmt.file_note(d["scenario"])
        fmt.rejected_note(d["workload"])
        fmt.hazard_lines(hz)
        return 0
    sc, w = d["scenario"], d["workload"]
    lengths = (f"isl {w['isl']}, osl {w['osl']}{_rejected(w)}" if w["samples"] == 1 else
               f"{w['samples']} length samples (mean isl {w['isl']}, osl {w['osl']}, decode context "
               f"{w['mean_context']:.0f}{_rejected(w)})")
    hw, eng = fmt.named(sc, "hardware"), fmt.named(sc, "engine")
    print(f"{sc['model']} on {d['gpus']:g}x {hw} ({fmt.layout(sc)}; {fmt.formats(sc)}), "
          f"{_speculation(sc)}, engine {eng}; {lengths}, "
          f"chunk {w['chunk']}, prefix hit {w['prefix_hit']:g}{_pd_text(w)}")
    print(fmt.table([key] + HEADERS, _rows(d)))
    print()
    print(fmt.table([key, "e2e_speedup", "tpot_speedup", "throughput_ratio", "feasible"],
                    [[p[key], fmt.num(p["e2e_speedup"]), fmt.num(p["tpot_speedup"]),
                      fmt.num(p["throughput_ratio"]), _fits(p)]
                     for p in d["points"]]))
    print(f"prefill chunks are bound by {d['prefill_bound']}; " + "; ".join(d["notes"]))
    burst = ", with a run's start-up burst in TTFT and E2E" if w["num_prompts"] or w["prompts_per_slot"] else ""
    print(f"a prediction (steady state{burst} from datasheet rooflines and the engine profile), not a measurement")
    fmt.print_hazards(hz)
    return 0


def _rejected(w: dict[str, Any]) -> str:
    """', N more rejected' for the samples the model's positions leave out (serving.ServeResult.rejected)."""
    return f"; {w['rejected']} more rejected: too long for the model" if w.get("rejected") else ""


def _fits(p: dict[str, Any]) -> str:
    """Both modes fit (and sustain the rate), only plain decoding does (the drafter's memory, or a rate only it
    sustains), only speculation does (a rate plain decoding cannot sustain), or neither."""
    if p["feasible"] and p["base_feasible"]:
        return "yes"
    if p["base_feasible"]:
        return f"off only: {p['message']}"
    if p["feasible"]:
        return f"on only: {p['base_message']}"
    return f"no: {p['base_message'] or p['message']}"


def _each_twice(points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each point once per mode row (on, off)."""
    return [p for p in points for _ in (0, 1)]


def _mode_fit(p: dict[str, Any], row: list[Any]) -> list[Any]:
    """Whether a CSV row's mode (on, off) fits at its point, and why not (the table's feasible column, per mode)."""
    ok, why = (p["feasible"], p["message"]) if row[1] == "on" else (p["base_feasible"], p["base_message"])
    return ["yes" if ok else "no", "" if ok else why]


def _ratios(p: dict[str, Any], row: list[Any]) -> list[Any]:
    if row[1] != "on":
        return ["", "", ""]
    return [fmt.num(p["e2e_speedup"]), fmt.num(p["tpot_speedup"]), fmt.num(p["throughput_ratio"])]
