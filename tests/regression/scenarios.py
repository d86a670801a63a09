"""A fixed set of scenarios whose numbers a refactor must not change (to 1e-12).

`python -m tests.regression.scenarios` writes golden.json from the current code; test_regression.py compares.
Each entry is (name, function name, keyword arguments) over the public API; results are flattened to plain numbers.
When a physics change moves these numbers on purpose, regenerate golden.json in the same commit and say why.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden.json"

CURVES: list[tuple[str, dict[str, Any]]] = [
    ("default", dict(k=3)),          # k was speedup_curve's default before the Scenario made it "auto"
    ("eagle3_tau_auto", dict(acceptance=("length", 3.2, 4), k="auto")),
    ("dsr1_mtp_b200", dict(hardware="b200", model="deepseek-r1", method="mtp", tp=8, precision="bf16",
                           expert_precision="fp4", engine="trtllm", k="auto", context=2048,
                           batch=[1, 4, 16, 64, 256])),
    ("medusa_tree_hf", dict(hardware="a100-sxm-80gb", model="vicuna-7b", method="medusa", engine="hf",
                            precision="fp16", k=5, tree_tokens=64, tree_branching=13, batch=[1, 2, 8])),
    ("ngram_vllm", dict(method="ngram", acceptance=("rate", 0.6), k=4, engine="vllm")),
    ("draft_70b_tp8", dict(model="llama-3.1-70b", tp=8, method="draft", engine="vllm", k="auto",
                           acceptance=("rate", 0.75), batch=[1, 8, 64, 512])),
    ("moe_ep2_eagle3", dict(model="qwen3-30b-a3b", tp=2, ep=2, acceptance=("rate", 0.7), k=3)),
    ("gptoss_b200_fp4", dict(hardware="b200", model="gpt-oss-120b", tp=2, precision="fp4",
                             acceptance=("rate", 0.7), k="auto", engine="ideal")),
    ("self_sparse_long", dict(model="llama-2-7b-32k", method="self-sparse", acceptance=("rate", 0.8), engine="ideal",
                              context=30000, draft_kv_window=512, k=4, batch=[1, 4, 16])),
    ("dflash_qwen", dict(model="qwen3-8b", method="dflash", acceptance=("rate", 0.7), k=7, context=4096)),
    ("eagle_tree_hf", dict(hardware="a100-sxm-80gb", model="vicuna-7b", method="eagle", engine="hf",
                           precision="fp16", acceptance=("tree", 3.61, 26, 5, 5), k=5, tree_tokens=26,
                           tree_branching=5, batch=[1])),
    ("mi300x_70b_fp8_sum", dict(hardware="mi300x", model="llama-3.1-70b", tp=8, precision="fp8",
                                kv_precision="fp8", engine="ideal", overlap="sum", acceptance=("rate", 0.8),
                                k="auto")),
    ("positional_eagle", dict(method="eagle", acceptance=("rates", [0.8, 0.7, 0.6]), k="auto", engine="sglang")),
    ("infeasible_large", dict(model="llama-3.1-70b", tp=2, batch=[1, 64, 1024], context=131000,
                              acceptance=("rate", 0.7), k=3)),
    ("gb200_dsv3_tp16", dict(hardware="gb200-nvl72", model="deepseek-v3", method="mtp", tp=16, precision="fp8",
                             engine="trtllm", k=2, batch=[1, 32, 256])),
    ("h100_405b_tp16", dict(model="llama-3.1-405b", tp=16, precision="fp8", acceptance=("rate", 0.7), k=3,
                            engine="vllm", batch=[1, 16])),
    ("k0", dict(k=0, batch=[1, 64])),
    # context 2046 of vicuna-7b's 2048 positions: plain decoding fits, a k = 3 verify does not (an infeasible point
    # with its reason); it was 3000, a context that cannot exist, now refused before any row
    ("max_position", dict(model="vicuna-7b", method="draft", draft="llama-68m", context=2046, engine="hf",
                          acceptance=("rate", 0.5), k=3, batch=[1])),
    ("auto_tree_budget", dict(method="eagle3", tree_tokens=16, k="auto", k_max=5, batch=[1, 8, 64])),
    ("overlap_eta", dict(overlap=0.4, engine="vllm", k=2, batch=[1, 32])),
]

STEPS: list[tuple[str, dict[str, Any]]] = [
    ("step_70b_tp8", dict(hardware="h100-sxm", model="llama-3.1-70b", batch=[1, 8, 32, 128], tp=8, context=1024,
                          engine="ideal")),   # ideal was simulate_step's default engine
    ("step_prefill", dict(hardware="h200-sxm", model="llama-3.1-8b", batch=[1, 4], query_tokens=2048, context=0,
                          logits="last", engine="vllm")),
    ("step_dsr1_verify", dict(hardware="b200", model="deepseek-r1", batch=[1, 64], query_tokens=4, tp=8,
                              precision="fp8", engine="sglang")),
    ("step_gptoss_window", dict(hardware="b300", model="gpt-oss-20b", batch=[1, 256], context=65536,
                                precision="fp4", engine="trtllm")),
]

SWEEPS: list[tuple[str, dict[str, Any]]] = [
    ("sweep_fixed", {"model": "llama-3.1-70b", "tp": 8, "k": {"start": 1, "stop": 3},
                     "acceptance_rate": [0.6, 0.8], "context": [1024, 8192], "batch": [1, 16, 256]}),
    ("sweep_auto_zip", {"k": "auto", "k_max": 4, "batch": [1, 32, 512],
                        "zip": [{"name": "drafter", "method": ["eagle3", "ngram"], "acceptance_rate": [0.76, 0.55]}],
                        "engine": ["sglang", "vllm"]}),
    ("sweep_default_acc", {"model": "deepseek-r1", "hardware": "b200", "tp": 8, "method": "mtp", "k": [1, 3],
                           "precision": "fp8", "batch": [1, 64]}),
]

ADVICE: list[tuple[str, dict[str, Any]]] = [
    ("advise_default", dict(batch_range=(1, 64), emit=["vllm", "sglang", "trtllm"])),
    ("advise_dsr1", dict(hardware="b200", model="deepseek-r1", method="mtp", engine="trtllm", tp=8,
                         precision="fp8", batch_range=(1, 512), max_points=16)),
]


def _acceptance(spec: Any) -> Any:
    from simulator.acceptance import Acceptance, tree_widths
    if spec is None:
        return None
    kind = spec[0]
    if kind == "rate":
        return Acceptance.from_rate(spec[1])
    if kind == "rates":
        return Acceptance.from_rates(spec[1])
    if kind == "length":
        return Acceptance.from_length(spec[1], spec[2])
    return Acceptance.from_tree_length(spec[1], tree_widths(spec[2], spec[3], spec[4]))


def _plain(x: Any) -> Any:
    """JSON-ready numbers: arrays to lists, NaN/inf to strings (so they compare exactly)."""
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, np.ndarray):
        return _plain(x.tolist())
    if isinstance(x, (np.floating, float)):
        f = float(x)
        return f if math.isfinite(f) else repr(f)
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.bool_,)):
        return bool(x)
    return x


def curve(kw: dict[str, Any]) -> dict[str, Any]:
    from simulator import speedup_curve
    kw = dict(kw)
    kw["acceptance"] = _acceptance(kw.get("acceptance"))
    r = speedup_curve(**kw)
    d = r.to_dict()
    out = {k: d[k] for k in ("points", "crossover_batch", "break_even_acceptance", "max_batch_base",
                             "max_batch_spec")}
    out["raw"] = {f: getattr(r, f) for f in ("speedup", "base_step_s", "spec_step_s", "draft_s", "verify_s",
                                            "overhead_s", "memory_bytes", "k", "tree_tokens", "feasible",
                                            "base_feasible")}
    out["message"] = list(r.message)
    return _plain(out)


def step(kw: dict[str, Any]) -> dict[str, Any]:
    from simulator import simulate_step
    r = simulate_step(**kw)
    return _plain({"step_s": r.step_s, "breakdown_s": r.breakdown_s, "memory_bytes": r.memory_bytes,
                   "feasible": r.feasible, "bound": list(r.bound), "message": list(r.message)})


def sweep(spec: dict[str, Any]) -> dict[str, Any]:
    from simulator.sweep import evaluate, load_spec
    res = evaluate(load_spec(spec))
    out = {}
    for name, (_level, arr) in sorted(res.fields.items()):
        a = np.asarray(arr)
        if name == "message":
            a = np.array([res.messages[int(i)] for i in a.ravel()]).reshape(a.shape)
        out[name] = a
    return _plain(out)


def advice(kw: dict[str, Any]) -> dict[str, Any]:
    from simulator.advise import advise
    d = advise(**kw).to_dict()
    d.pop("assumptions", None)
    d.pop("hazards", None)
    return _plain(d)


def validation(rep=None) -> dict[str, Any]:
    """Every shipped row's prediction, from `rep` (a validate() report) or a fresh validate()."""
    if rep is None:
        from simulator import validate
        rep = validate()
    return _plain({r["row_id"]: r["predicted"] for r in rep.rows})


def compute_all() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, kw in CURVES:
        out[f"curve/{name}"] = curve(kw)
    for name, kw in STEPS:
        out[f"step/{name}"] = step(kw)
    for name, spec in SWEEPS:
        out[f"sweep/{name}"] = sweep(spec)
    for name, kw in ADVICE:
        out[f"advise/{name}"] = advice(kw)
    out["validate/shipped"] = validation()
    return out


if __name__ == "__main__":
    GOLDEN.write_text(json.dumps(compute_all(), indent=0, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN}")
