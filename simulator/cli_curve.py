"""`specroof curve`: the speedup curve over batch size (the main job)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable

from .cli import float_arg, int_arg
from .methods import METHODS


def _acc_list(s: str) -> list[float]:
    try:
        out = [float(t) for t in s.split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s!r} is not a comma-separated list of rates") from None
    if not out:
        raise argparse.ArgumentTypeError("empty list of rates")
    return out


def _k(s: str):
    if s == "auto":
        return "auto"
    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"k {s!r} is not an integer or 'auto'") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"k {v} must be >= 0")
    return v


def build_acceptance(a: argparse.Namespace):
    """The Acceptance the flags describe, or None for the method's published default."""
    from .acceptance import Acceptance, tree_widths
    from .errors import ScenarioError
    from .methods import default_tree_branching
    if a.acceptance_rate is not None:
        return Acceptance.from_rate(a.acceptance_rate)
    if a.acceptance_rates is not None:
        return Acceptance.from_rates(a.acceptance_rates)
    if a.acceptance_length is not None:
        k0 = a.acceptance_k if a.acceptance_k is not None else (a.k if a.k != "auto" else None)
        if k0 is None:
            raise ScenarioError("--acceptance-length needs the k it was measured at: pass --acceptance-k K "
                                "(or a numeric --k)")
        if a.tree_tokens:
            w = tree_widths(a.tree_tokens, k0, a.tree_branching or default_tree_branching(a.tree_tokens, k0))
            return Acceptance.from_tree_length(a.acceptance_length, w)
        return Acceptance.from_length(a.acceptance_length, k0)
    return None


def cmd_curve(a: argparse.Namespace) -> int:
    from .cli import _csv, _ms, _table
    from .speedup import speedup_curve
    r = speedup_curve(a.hardware, a.model, a.method, a.draft, build_acceptance(a), a.k, a.tree_tokens,
                      a.tree_branching, a.batch, a.context, a.tp, a.ep, a.precision, a.draft_precision,
                      a.kv_precision, a.engine, a.draft_kv_window, a.k_max, a.overlap)
    hz = curve_hazards(a, r)
    d = r.to_dict()
    if a.plot:
        from .plots import save, speedup_vs_batch
        save(speedup_vs_batch([r]), a.plot, close=True)
    if a.format == "json":
        d["hazards"] = [h.to_dict() for h in hz]
        print(json.dumps(d, indent=2))
        return 0
    hdr = ["batch", "k", "verify_tok", "speedup", "tok/step", "base_ms", "spec_ms", "draft_ms", "verify_ms",
           "overhead_ms", "verify_bound", "tok/s/gpu", "tok/s/user", "break_even_alpha", "feasible"]
    rows = []
    for i, p in enumerate(d["points"]):
        be = d["break_even_acceptance"][i]
        f = p["feasible"]
        rows.append([p["batch"], p["k"] if f else "-", p["tree_tokens"] if f else "-",
                     f"{p['speedup']:.3f}" if f else "-", f"{p['tokens_per_step']:.3f}" if f else "-",
                     _ms(p["base_step_s"]), _ms(p["spec_step_s"]), _ms(p["draft_s"]), _ms(p["verify_s"]),
                     _ms(p["overhead_s"]), p["verify_bound"] or "-",
                     f"{p['tokens_per_s_per_gpu']:.1f}" if f else "-", f"{p['tokens_per_s_per_user']:.1f}" if f else "-",
                     "never" if be is None else f"{be:.3f}", "yes" if f else "no"])
    if a.format == "csv":
        print(_csv(hdr, rows))
        for h in hz:
            print(f"warning: [{h.severity}] {h.title} ({h.id}): {' '.join(h.links)}", file=sys.stderr)
        return 0
    s = d["scenario"]
    print(f"{s['model']} on {s['n_gpus']}x {s['hardware']} (tp={s['tp']}), {s['method']} [{s['drafter']}], "
          f"engine {s['engine']}, weights {s['precision']}, context {s['context']}, acceptance {s['acceptance']} "
          f"(alpha {s['acceptance_alpha']:.3f}), k {s['k']}")
    print(_table(hdr, rows))
    cb = d["crossover_batch"]
    print(f"crossover: speculation pays up to batch {cb}" if cb is not None
          else "crossover: speculation never pays at these batch sizes")
    print(f"largest batch that fits: {d['max_batch_base']} without speculation, {d['max_batch_spec']} with")
    for i, p in enumerate(d["points"]):
        if not p["feasible"]:
            print(f"batch {p['batch']}: infeasible: {p['message']}")
    print("prediction from datasheet rooflines and the engine profile; speedup at a fixed batch is both the "
          "latency and the throughput ratio")
    print_hazards(hz)
    return 0


def add_scenario_args(c: argparse.ArgumentParser, engine_default: str = "sglang") -> None:
    """Model, drafter, acceptance, depth and engine flags shared by `curve` and `advise`."""
    c.add_argument("--model", default="llama-3.1-8b", help="target model id or path to an HF config.json")
    c.add_argument("--method", choices=METHODS, default="eagle3")
    c.add_argument("--draft", default=None, help="draft model / head id or config path (method dependent)")
    c.add_argument("--draft-precision", default=None, help="drafter weight format (default: --precision)")
    g = c.add_mutually_exclusive_group()
    g.add_argument("--acceptance-rate", type=float, default=None, help="i.i.d. per-token acceptance alpha in [0,1)")
    g.add_argument("--acceptance-length", type=float, default=None,
                   help="mean acceptance length tau (tokens per step, bonus included) measured at --acceptance-k")
    g.add_argument("--acceptance-rates", type=_acc_list, default=None,
                   help="per-position conditional rates a1,a2,...")
    c.add_argument("--acceptance-k", type=int, default=None, help="the k at which --acceptance-length was measured")
    c.add_argument("--k-max", type=int, default=8, help="largest k tried by --k auto")
    c.add_argument("--tree-tokens", type=int, default=None, help="verify a draft tree of T tokens per sequence")
    c.add_argument("--tree-branching", type=int, default=None, help="tree frontier width (top-k per depth)")
    c.add_argument("--draft-kv-window", type=int, default=None, help="drafter KV window W tokens (long context)")
    c.add_argument("--engine", default=engine_default,
                   help="engine profile: ideal, vllm, sglang, trtllm, hf, or a path")


def add_deployment_args(c: argparse.ArgumentParser) -> None:
    """Deployment options the known-hazards check depends on (hazards/known_hazards.toml)."""
    d = c.add_argument_group("deployment options (checked against known hazards)")
    d.add_argument("--prefix-caching", action=argparse.BooleanOptionalAction, default=False,
                   help="prefix / radix KV caching on (vLLM V1 and SGLang default to on; default here: off)")
    d.add_argument("--hybrid-model", action="store_true",
                   help="the target has Mamba / GDN (linear-attention) layers")
    d.add_argument("--pd-disaggregation", action="store_true", help="prefill and decode on separate instances")
    d.add_argument("--overlap-scheduler", action="store_true",
                   help="overlap host work with speculative steps (SGLang SGLANG_ENABLE_SPEC_V2)")
    d.add_argument("--relaxed-acceptance", action="store_true", help="TensorRT-LLM MTP relaxed acceptance")
    d.add_argument("--temperature", type=float_arg("temperature", 0.0), default=None, help="sampling temperature")
    d.add_argument("--accept-threshold", type=float_arg("accept threshold", 0.0, 1.0, lo_open=True), default=None,
                   help="SGLang --speculative-accept-threshold-single (1.0 = lossless)")
    d.add_argument("--dp", type=int_arg("dp", 1), default=None, help="data-parallel ranks")
    d.add_argument("--hazards", action="append", default=[], metavar="FILE.toml",
                   help="extra known-hazards file (repeatable); same schema as hazards/known_hazards.toml")


def deployment_options(a: argparse.Namespace) -> dict[str, Any]:
    """The hazard-check options the flags give (see simulator.hazards.OPTIONS)."""
    out: dict[str, Any] = {"prefix_caching": a.prefix_caching, "hybrid_model": a.hybrid_model,
                           "pd_disaggregation": a.pd_disaggregation, "overlap_scheduler": a.overlap_scheduler,
                           "relaxed_acceptance": a.relaxed_acceptance}
    for k in ("temperature", "accept_threshold", "dp"):
        if getattr(a, k) is not None:
            out[k] = getattr(a, k)
    return out


def curve_hazards(a: argparse.Namespace, r: Any) -> list[Any]:
    """Known hazards for a curve: the flags' options plus what the result used (tp, ep, batch, k, tree)."""
    import numpy as np
    from .hazards import check
    from .methods import default_tree_branching
    ok = r.feasible
    topk = 1
    for kk, T in zip(r.k[ok], r.tree_tokens[ok]):
        if T > kk + 1:
            topk = max(topk, a.tree_branching or default_tree_branching(int(T), int(kk)))
    opts = {"tp": a.tp, "ep": a.ep, "max_batch": int(np.max(r.batch)), "context": a.context, "topk": topk,
            "max_k": int(r.k[ok].max()) if ok.any() else 0,
            "verify_tokens": int(r.tree_tokens[ok].max()) if ok.any() else 0, **deployment_options(a)}
    return check(r.scenario["engine"], a.method, opts, files=a.hazards)


def print_hazards(hazards: list[Any], file: Any = None) -> None:
    """'warnings:' and one block per hazard with its links (nothing when the list is empty)."""
    f = file or sys.stdout
    if not hazards:
        return
    print("warnings:", file=f)
    for h in hazards:
        print(f"  [{h.severity}] {h.title} ({h.id})", file=f)
        print(f"    {h.detail}", file=f)
        for u in h.links:
            print(f"    {u}", file=f)


def add_curve(sub: Any, add_common: Callable[[argparse.ArgumentParser, str], None]) -> None:
    c = sub.add_parser("curve", help="speedup of speculative decoding over batch size (default: h100-sxm, "
                                     "llama-3.1-8b, eagle3, sglang)")
    add_common(c, "1,2,4,8,16,32,64,128,256")
    add_scenario_args(c)
    c.add_argument("--k", type=_k, default="auto", help="draft depth, or auto for the best per batch")
    c.add_argument("--plot", default=None, help="write a PNG of speedup vs batch")
    add_deployment_args(c)
    c.set_defaults(func=cmd_curve)
