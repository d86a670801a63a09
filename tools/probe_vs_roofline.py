"""Set specroof's price of one layer beside tools/gpu_probe.py's timing of it, and the verify / decode ratio over batch:

    python tools/probe_vs_roofline.py validation/device/h200_probe.csv [--gpu h200-sxm] [--uncalibrated]

For every `layer` row (one GPU's share of a DeepSeek-V3 MoE layer at TP8) and every packed-attention `gqa` row (one
layer of Llama-3.1-8B, Qwen3-30B-A3B or gpt-oss-120b at TP1) it prices the same layer as specroof prices a pass: the
model's shape cut to one layer (a MoE layer where the model has experts), bf16 throughout, `workload.forward_pass`
without its LM head, embedding, sampler and collectives (the probe runs none of them), through `roofline.step_times`
on the named bundled device, graph-replayed (the per-kernel floor applies), at the row's batch, query tokens and
context. It prints each row's measured and priced time and, per batch, measured and priced pass time at q tokens over
the decode (q = 1): the shape of the speculation cost over batch that decides where a speedup curve falls.

What the probe times is PyTorch (cuBLAS GEMMs, torch._grouped_mm experts, matmul attention with a float softmax),
not an engine's fused kernels: its absolute times carry PyTorch's extra kernels (norms, gathers, the softmax's
float copy), so the ratios over batch and q are the comparison, absolute times a check of the order.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from simulator.errors import SpecError  # noqa: E402
from simulator.hardware import load_hardware  # noqa: E402
from simulator.model import load_model  # noqa: E402
from simulator.pipeline import HEAD_OPS  # noqa: E402
from simulator.prompts import ops_where  # noqa: E402
from simulator.roofline import rates, step_times  # noqa: E402
from simulator.workload import OpSet, Parallelism, Precision, forward_pass  # noqa: E402

# The probe's case names -> (model file, tensor-parallel GPUs it stands for)
LAYERS = {"deepseek-v3-tp8 moe layer": ("deepseek-ai__DeepSeek-V3", 8)}


@dataclass(frozen=True)
class Row:
    model: str       # a models/*.json stem
    tp: int
    batch: int
    q: int
    context: int
    measured_s: float


def load(path: Path) -> list[Row]:
    """The layer rows of a probe.csv: DeepSeek's `layer` rows and the packed-attention `gqa` rows (the SDPA ones time
    PyTorch's GQA path, which reads a KV head once per query head at q > 1, unlike engines' kernels)."""
    out = []
    with open(path, newline="") as fh:
        for i, r in enumerate(csv.DictReader(fh), start=2):
            case = r.get("case", "")
            if r.get("probe") == "layer" and case in LAYERS:
                model, tp = LAYERS[case]
            elif r.get("probe") == "gqa" and case.endswith(" layer, packed"):
                model, tp = case.removesuffix(" layer, packed"), 1
            else:
                continue
            try:
                t = float(r["time_us"]) * 1e-6
                row = Row(model, tp, int(r["batch"]), int(r["q"]), int(r["context"]), t)
            except (KeyError, ValueError) as e:
                raise ValueError(f"{path}:{i}: a layer row needs integer batch, q, context and numeric time_us "
                                 f"({e})") from None
            if t > 0:                          # 0: a row the probe could not time (its note says why)
                out.append(row)
    if not out:
        raise ValueError(f"{path}: no layer or packed gqa rows (is it a tools/gpu_probe.py probe.csv?)")
    return out


def layer_ops(model: str, tp: int, experts: str = "bf16", weights: str = "bf16") -> OpSet:
    """One layer of `model` on one of tp GPUs, its projections in `weights` and its routed and shared experts in
    `experts` (a MoE layer where it has them), without the LM head, embedding, sampler and collectives. The probes route
    every token at random (tools/gpu_probe.py), so the q tokens of a sequence route independently: the op table's
    routing locality (experts.routed_tokens) is set to none, moe_rho 1."""
    m = load_model(ROOT / "models" / f"{model}.json")
    m = replace(m, n_layers=1, n_moe_layers=1 if m.is_moe else 0, n_window_layers=0, n_linear_layers=0, n_mtp_layers=0)
    ops = forward_pass(m, Precision(weights=weights, experts=experts), Parallelism(tp=tp), sampler=False)
    ops = replace(ops, moe_rho=np.ones_like(ops.moe_rho))
    return ops_where(ops, np.array([n not in HEAD_OPS and c == 0 for n, c in zip(ops.names, ops.coll)]))


def price(rows: list[Row], gpu: str, uncalibrated: bool) -> np.ndarray:
    """specroof's time of each row's layer pass (seconds)."""
    hw = load_hardware(gpu)
    hw = hw.uncalibrated() if uncalibrated else hw
    out = np.empty(len(rows))
    groups: dict[tuple[str, int], list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        groups[(r.model, r.tp)].append(i)
    for (model, tp), idx in groups.items():
        ops = layer_ops(model, tp)
        B, q, L = (np.array([getattr(rows[i], a) for i in idx], dtype=np.float64) for a in ("batch", "q", "context"))
        out[idx] = step_times(ops, rates(hw, ops), B, q, L).total_s
    return out


# The probes' routed-expert cases -> (model file, tensor-parallel GPUs): one GPU's experts (all E, width f / tp)
EXPERTS = {"deepseek-v3-tp8": ("deepseek-ai__DeepSeek-V3", 8), "qwen3-30b-a3b-tp1": ("Qwen__Qwen3-30B-A3B", 1),
           "qwen3-30b-a3b-tp2": ("Qwen__Qwen3-30B-A3B", 2), "qwen3-30b-a3b-tp4": ("Qwen__Qwen3-30B-A3B", 4)}
# (the fp8 call's activation quantisation is PyTorch's, unfused, where vLLM runs one kernel: its GEMMs alone too)
EXPERT_PROBES = {"moe": "torch._grouped_mm", "fused_moe": "vLLM fused_moe", "fused_moe_fp8": "vLLM fused_moe fp8",
                 "fused_moe_fp8_gemms": "vLLM fp8 GEMMs alone"}
EXPERT_DTYPE = {"torch._grouped_mm": "bf16", "vLLM fused_moe": "bf16", "vLLM fused_moe fp8": "fp8",
                "vLLM fp8 GEMMs alone": "fp8"}


def timed_rows(path: Path, key, what: str) -> dict[tuple, float]:
    """key(row) -> seconds over the rows of a probe CSV that `key` takes (it returns None for the others and raises
    KeyError / ValueError on a malformed one, reported as `path:line: what`)."""
    out = {}
    with open(path, newline="") as fh:
        for i, r in enumerate(csv.DictReader(fh), start=2):
            try:
                k = key(r)
                if k is not None:
                    out[k] = float(r["time_us"]) * 1e-6
            except (KeyError, ValueError) as e:
                raise ValueError(f"{path}:{i}: {what} ({e})") from None
    return out


def _expert_key(r: dict) -> tuple | None:
    case = r.get("case", "").split(" ")[0]
    if r.get("probe") not in EXPERT_PROBES or case not in EXPERTS:
        return None
    return case, int(r["m"]), EXPERT_PROBES[r["probe"]]


def load_experts(paths: list[Path]) -> dict[tuple[str, int, str], float]:
    """(case, tokens M, kernel) -> seconds, from the routed-expert rows of probe CSVs (tools/gpu_probe.py's `moe`,
    tools/moe_kernel_probe.py's `fused_moe`)."""
    return {k: v for path in paths
            for k, v in timed_rows(path, _expert_key, "an expert row needs integer m and numeric time_us").items()}


def price_experts(case: str, m: np.ndarray, gpu: str, dtype: str = "bf16") -> np.ndarray:
    """specroof's time of one GPU's routed experts (the `experts` op of one MoE layer, weights in `dtype`) for m
    tokens."""
    model, tp = EXPERTS[case]
    return price_op(model, tp, "experts", gpu, m, 1.0, 0.0, dtype)


def experts_report(timed: dict[tuple[str, int, str], float], gpu: str) -> str:
    lines = ["\nrouted experts alone (uniform routing): us measured, and priced / measured - 1"]
    for case in dict.fromkeys(c for (c, _, _) in timed):
        for dt in dict.fromkeys(EXPERT_DTYPE[k] for (c, _, k) in timed if c == case):
            kinds = [k for k in dict.fromkeys(k for (c, _, k) in timed if c == case) if EXPERT_DTYPE[k] == dt]
            ms = sorted({m for (c, m, k) in timed if c == case and k in kinds})
            priced = price_experts(case, np.array(ms, dtype=np.float64), gpu, dt)
            lines.append(f"  {case} {dt}: M  priced us  " + "  ".join(f"{k:>26s}" for k in kinds))
            for m, p in zip(ms, priced):
                cells = "  ".join(f"{timed[(case, m, k)] * 1e6:12.1f} ({p / timed[(case, m, k)] - 1:+6.1%})"
                                  if (case, m, k) in timed else f"{'':>26s}" for k in kinds)
                lines.append(f"  {m:>{len(case) + len(dt) + 5}d}  {p * 1e6:9.1f}  {cells}")
    return "\n".join(lines)


def load_attention(path: Path) -> dict[tuple[str, int, int, int], float]:
    """(model, batch, q, context) -> seconds, from tools/attention_kernel_probe.py's rows."""
    return timed_rows(path, lambda r: (r["case"].split(" ")[0], int(r["batch"]), int(r["q"]), int(r["context"]))
                      if r.get("probe") == "unified_attention" else None,
                      "an attention row needs integer batch, q, context and numeric time_us")


def price_attention(model: str, B, q, L, gpu: str) -> np.ndarray:
    """specroof's time of one layer's attention op (KV-cache write and attention kernel, bf16) at TP1."""
    return price_op(model, 1, "attention", gpu, B, q, L)


def price_op(model: str, tp: int, name: str, gpu: str, B, q, L, experts: str = "bf16",
             weights: str = "bf16") -> np.ndarray:
    """specroof's time of the op `name` of one layer of `model` on one of tp GPUs (layer_ops), alone."""
    ops = layer_ops(model, tp, experts, weights)
    ops = ops_where(ops, np.array([n == name for n in ops.names]))
    return step_times(ops, rates(load_hardware(gpu), ops), B, q, L).total_s


def attention_report(timed: dict[tuple[str, int, int, int], float], gpu: str) -> str:
    lines = ["\nattention alone (vLLM's Triton unified_attention, bf16): us measured / priced, per batch and q"]
    keys = sorted(timed)
    for model in dict.fromkeys(k[0] for k in keys):
        for ctx in sorted({k[3] for k in keys if k[0] == model}):
            mine = [k for k in keys if k[0] == model and k[3] == ctx]
            p = price_attention(model, *(np.array([k[i] for k in mine], dtype=np.float64) for i in (1, 2, 3)), gpu)
            at = {k: v for k, v in zip(mine, p)}
            qs = sorted({k[2] for k in mine})
            lines.append(f"  {model}, {ctx} cached: batch  " + "  ".join(f"{'q' + str(q):>15s}" for q in qs))
            for b in sorted({k[1] for k in mine}):
                cells = "  ".join(f"{timed[(model, b, q, ctx)] * 1e6:7.1f}/{at[(model, b, q, ctx)] * 1e6:6.1f}"
                                  for q in qs)
                lines.append(f"  {b:>{len(model) + len(str(ctx)) + 18}d}  {cells}")
    return "\n".join(lines)


# tools/fp8_linear_probe.py's DeepSeek-V3 TP8 projections that are one op of the layer with no neighbour kernel
# (o_proj; the shared expert's down projection) -> op name; probes -> weight format
LINEARS = {"o_proj": "o_proj", "shared_down": "shared_down"}
LINEAR_PROBES = {"fp8_linear": "fp8", "bf16_gemm": "bf16"}


def _linear_key(r: dict) -> tuple | None:
    parts = r.get("case", "").split(" ")
    if r.get("probe") not in LINEAR_PROBES or len(parts) < 3 or parts[1] not in LINEARS:
        return None
    return parts[1], int(r["m"]), LINEAR_PROBES[r["probe"]]


def load_linears(path: Path) -> dict[tuple[str, int, str], float]:
    """(projection, tokens M, weight format) -> seconds, from tools/fp8_linear_probe.py's rows."""
    return timed_rows(path, _linear_key, "a linear row needs integer m and numeric time_us")


def linears_report(timed: dict[tuple[str, int, str], float], gpu: str) -> str:
    """Measured and priced fp8 linear (activation quantisation + block-fp8 GEMM) and bf16 GEMM, per M."""
    lines = ["\nDeepSeek-V3 TP8 projections (vLLM fp8 linear: quantisation + GEMM; PyTorch bf16 GEMM): us measured / "
             "priced"]
    for name in dict.fromkeys(k[0] for k in timed):
        ms = sorted({m for (n, m, _) in timed if n == name})
        mm = np.array(ms, dtype=np.float64)
        at = {dt: price_op("deepseek-ai__DeepSeek-V3", 8, LINEARS[name], gpu, mm, 1.0, 0.0, dt, dt)
              for dt in ("fp8", "bf16")}
        lines.append(f"  {name}: M  {'fp8':>15s}  {'bf16':>15s}")
        for j, m in enumerate(ms):
            cells = "  ".join(f"{timed[(name, m, dt)] * 1e6:7.1f}/{at[dt][j] * 1e6:6.1f}" if (name, m, dt) in timed
                              else f"{'':>14s}" for dt in ("fp8", "bf16"))
            lines.append(f"  {m:>{len(name) + 3}d}  {cells}")
    return "\n".join(lines)


def ratios(rows: list[Row], t: np.ndarray) -> dict[tuple[str, int, int], float]:
    """(model, batch, q) -> time at q over the time at q = 1, same batch."""
    one = {(r.model, r.batch): t[i] for i, r in enumerate(rows) if r.q == 1}
    return {(r.model, r.batch, r.q): t[i] / one[(r.model, r.batch)] for i, r in enumerate(rows)
            if r.q > 1 and (r.model, r.batch) in one}


def report(rows: list[Row], priced: np.ndarray) -> str:
    meas = np.array([r.measured_s for r in rows])
    rm, rp = ratios(rows, meas), ratios(rows, priced)
    lines = []
    for model in dict.fromkeys(r.model for r in rows):
        mine = [i for i, r in enumerate(rows) if r.model == model]
        err = priced[mine] / meas[mine] - 1.0
        lines.append(f"\n{model}: priced / measured - 1 over {len(mine)} rows: median {np.median(err):+.1%}, "
                     f"from {err.min():+.1%} to {err.max():+.1%}")
        qs = sorted({rows[i].q for i in mine if rows[i].q > 1})
        lines.append("  batch  decode us (meas / priced)  " + "  ".join(f"q{q}/q1 meas priced" for q in qs))
        for b in sorted({rows[i].batch for i in mine}):
            d = [i for i in mine if rows[i].batch == b and rows[i].q == 1]
            if not d:
                continue
            cells = "  ".join(f"{rm.get((model, b, q), np.nan):12.2f} {rp.get((model, b, q), np.nan):6.2f}"
                              for q in qs)
            lines.append(f"  {b:5d}  {meas[d[0]] * 1e6:9.1f} / {priced[d[0]] * 1e6:9.1f}        {cells}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("probe", type=Path, help="a tools/gpu_probe.py probe.csv")
    ap.add_argument("more", type=Path, nargs="*", help="more probe CSVs: routed-expert rows "
                    "(tools/moe_kernel_probe.py), attention rows (tools/attention_kernel_probe.py) and projection "
                    "rows (tools/fp8_linear_probe.py)")
    ap.add_argument("--gpu", default="h200-sxm", help="the bundled device the probe ran on (default h200-sxm)")
    ap.add_argument("--uncalibrated", action="store_true", help="the device's sourced kernel floor, not the fitted one")
    a = ap.parse_args(argv)
    try:
        rows = load(a.probe)
        priced = price(rows, a.gpu, a.uncalibrated)
        timed = load_experts([a.probe, *a.more])
        experts = experts_report(timed, a.gpu) if timed else ""
        att = {k: v for path in a.more for k, v in load_attention(path).items()}
        experts += attention_report(att, a.gpu) if att else ""
        lin = {k: v for path in a.more for k, v in load_linears(path).items()}
        experts += linears_report(lin, a.gpu) if lin else ""
    except (OSError, ValueError, SpecError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"{a.probe}: {len(rows)} layer rows priced on {a.gpu}" + (" (sourced floor)" if a.uncalibrated else ""))
    print(report(rows, priced))
    print(experts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
