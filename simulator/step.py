"""Price one forward pass (prefill, decode or verify) of a model on a device, over a list of batch sizes."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .engine import IDEAL, EngineProfile, load_engine
from .errors import ScenarioError
from .hardware import Hardware, load_hardware
from .model import ModelShape, load_model
from .roofline import BOUNDS, overlap_eta, rates, step_times
from .workload import (FAMILIES, OpSet, Parallelism, Precision, activation_bytes_per_rank, forward_pass,
                       kv_bytes_per_rank, weight_bytes_per_rank)


def as_hardware(h: Hardware | str) -> Hardware:
    return h if isinstance(h, Hardware) else load_hardware(h)


def as_model(m: ModelShape | str) -> ModelShape:
    return m if isinstance(m, ModelShape) else load_model(m)


def as_engine(e: EngineProfile | str | None) -> EngineProfile:
    if e is None:
        return IDEAL
    return e if isinstance(e, EngineProfile) else load_engine(e)


def engine_hardware(hw: Hardware, eng: EngineProfile) -> Hardware:
    """The device as the engine drives it: the engine's all-reduce latency when its profile has one."""
    return hw if eng.allreduce_latency_s is None else replace(hw, allreduce_latency_s=eng.allreduce_latency_s)


def check_batches(batch: Any) -> np.ndarray:
    """Batch sizes as a float array; each must be a positive integer."""
    vals = np.atleast_1d(np.asarray(batch, dtype=object))
    if vals.size == 0:
        raise ScenarioError("batch list is empty")
    for b in vals.ravel():
        if isinstance(b, bool) or not isinstance(b, (int, np.integer)) and not (
                isinstance(b, (float, np.floating)) and float(b).is_integer()):
            raise ScenarioError(f"batch = {b!r}; expected a positive integer")
        if int(b) <= 0:
            raise ScenarioError(f"batch = {b!r}; expected a positive integer")
    return vals.astype(np.float64)


def check_count(v: Any, name: str, lo: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or int(v) < lo:
        raise ScenarioError(f"{name} = {v!r}; expected an integer >= {lo}")
    return int(v)


def make_precision(precision: str | Precision = "bf16", kv_precision: str | None = None,
                   expert_precision: str | None = None) -> Precision:
    """`--precision` sets attention/FFN/expert weights; the embedding and LM head stay bf16 (FP8 and NVFP4
    checkpoints keep them in bf16, e.g. DeepSeek-R1 on TensorRT-LLM, tech blog 1 precision table)."""
    if isinstance(precision, Precision):
        p = precision
    else:
        p = Precision(weights=precision, experts=expert_precision)
    if kv_precision:
        p = replace(p, kv=kv_precision)
    p.check()
    return p


@dataclass(frozen=True)
class MemoryUse:
    """Per-GPU memory in bytes at each batch: weights, KV cache, activations, and the engine's capacity."""

    weights_bytes: float
    kv_bytes: np.ndarray
    activation_bytes: np.ndarray
    capacity_bytes: float

    @property
    def total_bytes(self) -> np.ndarray:
        return self.weights_bytes + self.kv_bytes + self.activation_bytes

    def messages(self, hw_name: str, extra: str = "") -> tuple[np.ndarray, list[str]]:
        ok = self.total_bytes <= self.capacity_bytes
        msgs = []
        for i, t in enumerate(np.atleast_1d(self.total_bytes)):
            if ok.flat[i]:
                msgs.append("")
            else:
                msgs.append(f"does not fit: needs {t / 1e9:.1f} GB per GPU (weights {self.weights_bytes / 1e9:.1f}"
                            f" + KV {self.kv_bytes.flat[i] / 1e9:.1f} + activations "
                            f"{self.activation_bytes.flat[i] / 1e9:.1f}{extra}), {hw_name} gives "
                            f"{self.capacity_bytes / 1e9:.1f} GB")
        return np.atleast_1d(ok), msgs


def memory_use(m: ModelShape, hw: Hardware, eng: EngineProfile, p: Precision, par: Parallelism,
               B: np.ndarray, q: float, L: float, logits: str = "all") -> MemoryUse:
    return MemoryUse(
        weights_bytes=weight_bytes_per_rank(m, p, par),
        kv_bytes=kv_bytes_per_rank(m, B, q, L, p, par),
        activation_bytes=activation_bytes_per_rank(m, B, q, p, par, logits),
        capacity_bytes=hw.hbm_capacity_bytes * eng.gpu_memory_fraction)


@dataclass(frozen=True)
class StepResult:
    """Result of `simulate_step`: one forward pass priced at each batch size.

    Attributes
    ----------
    scenario : dict              resolved inputs (names, tp, ep, precisions, query tokens, context, engine)
    batch : (P,) float           sequences per step
    step_s : (P,) float          step time, s (GPU roofline + engine overheads). Valid only where `feasible`.
    breakdown_s : dict[str, (P,)]  time per op family (dense, attention, moe, lm_head, collective, overhead), s
    bound : tuple[str]           memory, compute or communication: the class of ops that takes longest
    memory_bytes : (P,) float    per-GPU weights + KV + activations, bytes
    feasible : (P,) bool         fits in the engine's share of usable HBM (and the model's context limit)
    message : tuple[str]         why a point is infeasible ('' when feasible)
    """

    scenario: dict[str, Any]
    batch: np.ndarray
    step_s: np.ndarray
    breakdown_s: dict[str, np.ndarray]
    bound: tuple[str, ...]
    memory_bytes: np.ndarray
    feasible: np.ndarray
    message: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: infeasible points carry null times."""
        pts = []
        for i, b in enumerate(self.batch):
            ok = bool(self.feasible[i])
            pts.append({
                "batch": int(b), "step_s": float(self.step_s[i]) if ok else None,
                "bound": self.bound[i] if ok else None,
                "breakdown_s": {k: float(v[i]) for k, v in self.breakdown_s.items()} if ok else None,
                "memory_bytes": float(self.memory_bytes[i]), "feasible": ok, "message": self.message[i]})
        return {"scenario": self.scenario, "points": pts}


def resolve_overlap(overlap: str | float | None, eng: EngineProfile) -> str | float:
    """The overlap mode to price with: the caller's, else the engine's calibrated efficiency, else "max"."""
    if overlap is not None:
        overlap_eta(overlap)   # validates
        return overlap
    return eng.overlap_efficiency if eng.overlap_efficiency is not None else "max"


def price_pass(ops: OpSet, hw: Hardware, eng: EngineProfile, B, q, L, pass_kind: str,
               overlap: str | float | None = None):
    """GPU time of one pass (with eager-launch overhead where the engine has no graph at this batch)."""
    r = rates(hw, ops, eng.hbm_fraction, eng.gemm_fraction)
    return step_times(ops, r, B, q, L, eng.launch_s(pass_kind, B), resolve_overlap(overlap, eng))


def simulate_step(hardware: Hardware | str, model: ModelShape | str, batch: Any = (1, 8, 32, 128),
                  query_tokens: int = 1, context: int = 1024, tp: int = 1, ep: int = 1,
                  precision: str | Precision = "bf16", kv_precision: str | None = None,
                  engine: EngineProfile | str | None = None, overlap: str | float | None = None,
                  logits: str = "all") -> StepResult:
    """Price one forward pass of `query_tokens` new tokens per sequence over `context` cached tokens.

    q = 1 is a decode step, q = k + 1 (or a tree of T tokens) a verify step, q = prompt length with
    logits="last" a prefill. The step adds the engine's host overhead (hidden behind the GPU when it overlaps).
    """
    hw0, m, eng = as_hardware(hardware), as_model(model), as_engine(engine)
    hw = engine_hardware(hw0, eng)
    B = check_batches(batch)
    q = check_count(query_tokens, "query_tokens", 1)
    L = check_count(context, "context", 0)
    par = Parallelism(tp=tp, ep=ep)
    p = make_precision(precision, kv_precision)
    for dt in {p.weights, p.expert_dtype, p.lm_head}:
        hw.peak_flops_per_s(dt)   # raises for a precision the chip lacks
    overlap = resolve_overlap(overlap, eng)
    ops = forward_pass(m, p, par, logits)
    st = price_pass(ops, hw, eng, B, float(q), float(L), "target", overlap)
    gpu = st.total_s
    host = eng.host_step_s
    total = np.maximum(gpu, host) if eng.overlap else gpu + host
    fam = {name: st.by_family_s[:, i].copy() for i, name in enumerate(FAMILIES)}
    fam["overhead"] = fam["overhead"] + (total - gpu)
    mem = memory_use(m, hw, eng, p, par, B, q, L, logits)
    ok, msgs = mem.messages(hw.name)
    if m.max_position and L + q > m.max_position:
        ok[:] = False
        msgs = [f"context {L} + {q} new tokens exceeds {m.name}'s max_position_embeddings {m.max_position}"] * len(B)
    scen = {"hardware": hw.name, "model": m.name, "tp": tp, "ep": ep, "precision": p.weights,
            "expert_precision": p.expert_dtype, "lm_head_precision": p.lm_head, "kv_precision": p.kv,
            "query_tokens": q, "context": L, "engine": eng.name, "overlap": overlap, "logits": logits,
            "n_gpus": tp}
    bound = tuple(BOUNDS[i] for i in st.bound)
    return StepResult(scen, B, total, fam, bound, mem.total_bytes, ok, tuple(msgs))
